/*
 * score_internal.h - what the scorer's two files share: score.c (the
 * blocks and groups, one pass of pruned kernel sums, the decision) and
 * score_trajectory.c (the fixed-point step, prediction, the basin
 * certificates and the labelling trajectories)
 *
 * Both files are built with the kernel's flags (the Makefile), and the
 * functions here are inline in each, as when they were one file.
 */
#ifndef SVC_SCORE_INTERNAL_H
#define SVC_SCORE_INTERNAL_H

#include "score.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define BLK		SVC_SCORE_BLOCK
_Static_assert(SVC_SCORE_BLOCK == 8, "a block is one v8 (vec8.h)");
#define U			DBL_EPSILON
/*
 * wide models' float copy of the slots: one group's 32 by halves of 16,
 * [group][half][dims][16], so that a half alone reads one run of memory
 */
#define SVC_WIDE_SLOTS 32
#define SVC_WIDE_HALF 16
typedef float SvcF8 __attribute__((vector_size(32)));

/* What one pass over the support vectors at x gives. */
typedef struct SvcScorePass
{
	double		lam;			/* sum alpha_i K_i */
	double		lam_err;		/* bound on |lam - the real sum| */
	double		abs;			/* sum |alpha_i| K_i (kept terms) */
	double		p_err;			/* bound on ||p - P(x)|| */
	double		q;				/* sum w_i d_i^2 / sum w_i (kept terms) */
	double		rnd;			/* rounding allowance of P, either code */
	int32_t		n_drop;			/* skipped groups and blocks */
	int32_t		n_kept;			/* blocks summed */
	double		dsum;			/* sum of the skipped groups' far ends */
	double		drop;			/* bound on the skipped weight / the kept */
	double		d2_err;			/* bound on each squared distance's error
								 * (wide rows' float distances; else 0) */
	double		eta;			/* bound on each exponent's error: the
								 * widest gamma_i times d2_err */
	double		prune;			/* a skipped group's or dropped block's
								 * terms: at most this share of a term */
	bool		p_ok;			/* p holds P(x) */
} SvcScorePass;

/*
 * The kernel sum at x, with what pass_step (score_trajectory.c)
 * needs for the fixed-point step P(x) (svc_scorer_pass), or f alone
 * (svc_scorer_pass_sum); see score.c.
 */
void		svc_scorer_pass(SvcScorer *s, const double *x, SvcScorePass *out);
void		svc_scorer_pass_sum(SvcScorer *s, const double *x, SvcScorePass *out);

/*
 * Lower bounds on the distances from the row of the last pass to the
 * model's equilibria into lb[n_eq], from the projection (score.c); false
 * where that pass has none.
 */
bool		svc_scorer_eq_bounds(const SvcScorer *s, double *lb);

/*
 * Rows with a coordinate past 2^332 (about 1e100), infinite or NaN take
 * the full computation, so no square here overflows.  Tested on the bits:
 * both files are built with -ffast-math, which may drop isfinite().
 */
static inline bool
svc_scorer_row_in_range(const SvcScorer *s, const double *x)
{
	int32_t		d = s->dims;
	uint64_t	top = 0;

	if (s->n_blk == 0)
		return false;
	/* the largest exponent, without an exit: the loop vectorises */
	for (int32_t j = 0; j < d; j++)
	{
		uint64_t	bits,
					e;

		memcpy(&bits, &x[j], sizeof(bits));
		e = (bits >> 52) & 0x7ff;
		top = e > top ? e : top;
	}
	return top <= 1023 + 332;
}

/* f from a pass, or from the full sum where the bound allows either sign. */
static inline double
svc_scorer_decide(SvcScorer *s, const double *x, const SvcScorePass *ps)
{
	double		f = ps->lam - s->m->offset;

	if (fabs(f) <= ps->lam_err)
	{
		s->n_full_sum++;
		return svc_model_decision_scaled(s->m, x);
	}
	return f;
}

#endif							/* SVC_SCORE_INTERNAL_H */
