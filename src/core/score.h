/*
 * score.h - scoring many rows against one model: pruned kernel sums and
 * certified trajectories
 *
 * svc_decision, svc_predict and svc_assign score every row of a table
 * against one model.  A scorer, built once per model and query, holds the
 * support vectors grouped into small leaves (a k-d split), each with a
 * bounding ball, laid out coordinate by coordinate so that the distances
 * of a leaf vectorise.  A kernel sum skips a leaf whose largest possible
 * term is below 2^-50 of the largest term summed: f keeps a relative
 * error bound of the same order as the rounding of the full sum, and where
 * that bound could change f's sign the full sum decides.
 *
 * Prediction runs the row's trajectory with these sums while tracking a
 * proven bound on its distance from the trajectory svc_label_predict
 * computes; it answers as soon as the bound settles the cluster (a snap,
 * or a basin certificate of the equilibria, see doc/design-notes.md), and
 * otherwise runs the full trajectory.  Either way the cluster is the one
 * svc_label_predict gives.
 */
#ifndef SVC_SCORE_H
#define SVC_SCORE_H

#include "svc_core.h"
#include "model.h"
#include "label_trajectory.h"

/* Support vectors per block: one AVX-512 vector of doubles. */
#define SVC_SCORE_BLOCK 8

/*
 * From this many features the scorer takes its squared distances from
 * float dot products (wide rows: the sums are bound by memory, and no term
 * can be skipped on unit rows), with a bound on their error that the
 * bounds of f and of the steps carry.
 */
#define SVC_SCORE_WIDE_DIMS 64

/*
 * Wide models also project the support vectors on this many directions
 * where they spread most: a row's distances in that space bound its
 * distances from below, so the groups whose terms cannot matter are
 * skipped before their float distances are summed.
 */
#define SVC_SCORE_PROJ 16

/*
 * The basin certificate of one equilibrium e: every row x with
 * ||x - e|| < radius and lambda(x) > level runs a trajectory that stays in
 * that ball (lambda = f + offset never decreases along a trajectory when
 * every alpha is positive, and lambda < level on the sphere), so it ends
 * at an equilibrium of the ball.  radius 0: none.
 */
typedef struct SvcBasin
{
	double		radius;
	double		level;
} SvcBasin;

typedef struct SvcScorer
{
	const SvcModel *m;
	const SvcEnv *env;			/* for the certificates, computed lazily */
	int32_t		dims;
	int32_t		n_blk;			/* blocks of SVC_SCORE_BLOCK support vectors */
	double	   *st;				/* per block: dims rows of its vectors */
	double	   *alpha;			/* [slots] (0 in padding) */
	double	   *aabs;			/* [slots] |alpha_i| */
	double	   *width;			/* [slots] gamma_i */
	double	   *lnref;			/* [slots] log(|alpha_i| min(1, gamma_i)) */
	int32_t		n_grp;			/* groups of consecutive blocks */
	double	   *gcentre;		/* by eight groups: [ceil(n_grp / 8)][dims][8] */
	double	   *gradius;		/* [n_grp] ball around gcentre holding them
								 * (the group arrays padded to eights) */
	double	   *lnmass;			/* [n_blk] log(sum |alpha_i| max(1, gamma_i)) */
	double	   *glnmass;		/* [n_grp] log(sum |alpha_i| max(1, gamma_i)) */
	double	   *ggmin;			/* [n_grp] narrowest width in the group */
	double	   *gub;			/* [n_grp] workspace: bound on log terms */
	double	   *gdist;			/* [n_grp] workspace: distance to centre */
	double		gmax;			/* widest gamma_i */
	double		abs_alpha;		/* sum |alpha| */
	double		coord_max;		/* largest |coordinate| of a support vector */
	double		sv_norm;		/* largest ||s_i||, rounded up */
	bool		positive;		/* every alpha > 0: trajectories climb */
	/* wide models: distances from float dot products (score.c) */
	int32_t		n_wide;			/* groups of 32 slots in sf (one a group); 0: none */
	float	   *sf;				/* [n_wide][2][dims][16] the slots as floats */
	double	   *sfnorm;			/* [n_wide * 32] their squared norms */
	double		sf_norm;		/* largest ||float s_i||, rounded up */
	float	   *xf;				/* [dims] the row as floats */
	bool		wide_on;		/* this pass took the float distances */
	bool		exact_steps;	/* passes take double distances where they
								 * would take float ones (svc_predict's
								 * second try) */
	double		xf_xx;			/* this pass: ||float x||^2 */
	/* wide models: lower bounds on distances from a projection (score.c) */
	int32_t		n_proj;			/* rows of proj_q (0: none) */
	float	   *proj_q;			/* [dims][SVC_SCORE_PROJ] nearly orthonormal rows,
								 * as floats (the row's projection) */
	float	   *proj_s;			/* [half groups][SVC_SCORE_PROJ][16] the slots
								 * projected, as floats */
	double		proj_lam;		/* bound on the largest eigenvalue of Q Q' */
	double		proj_qn;		/* bound on the largest row norm of Q */
	float	   *proj_e;			/* [ceil(n_eq / 16)][SVC_SCORE_PROJ][16] the
								 * equilibria projected, as floats (NULL:
								 * none, or one is past sv_norm) */
	double	   *ghalf;			/* [2 n_grp] workspace: bound of each half of a group */
	float		proj_z[SVC_SCORE_PROJ];	/* this pass: the row projected */
	bool		proj_off;		/* this pass: too far out for the bound */
	bool		proj_one_width;	/* every gamma_i the same (the least lane's
								 * bound from the least distance) */
	float	   *proj_hm;		/* [2 n_grp] workspace: each half's least
								 * projected distance (one width) */
	float	   *proj_gm;		/* [n_grp] workspace: each group's */
	double	   *glnmass2;		/* [2 n_grp] glnmass, once for each half */
	double		proj_slack;		/* this pass: the bounds' rounding */
	double		proj_inv;		/* this pass: 1 / proj_lam, rounded down */
	/* prediction */
	SvcTrajTol	tol;
	SvcBasin   *basin;			/* [n_eq], NULL until svc_scorer_certify */
	bool		certified;		/* svc_scorer_certify ran (or was tried) */
	/* workspace */
	double	   *d2;				/* [slots] squared distances */
	double	   *bmax;			/* [n_blk] largest exponent in pass; DBL_MAX
								 * dropped, -DBL_MAX its group skipped */
	int32_t    *kept;			/* [n_blk] the blocks summed */
	double	   *kx;				/* [slots] their kernel values, packed (the
								 * step turns them into its weights) */
	double	   *eqd;			/* [eqd_cap] distances to the equilibria */
	int32_t		eqd_cap;
	double	   *eqc;			/* the model's equilibria by column, [dims][n_eq] */
	double	   *x;				/* [dims] */
	double	   *p;				/* [dims] */
	SvcLabelWork full;			/* the full trajectory, when needed */
	/* counts, for tests and the benchmark */
	int64_t		n_rows;
	int64_t		n_first;		/* rows settled at their first point */
	int64_t		n_fallback;		/* rows that ran the full trajectory */
	int64_t		n_retry;		/* wide rows tracked again in double */
	int64_t		n_full_sum;		/* decisions the full sum settled */
	int64_t		n_half_drop;	/* halves of taken groups skipped (wide) */
} SvcScorer;

/* Build a scorer for m (which must outlive it); allocations from env. */
SvcStatus	svc_scorer_init(const SvcEnv *env, const SvcModel *m, SvcScorer *s,
							SvcError *err);
void		svc_scorer_free(const SvcEnv *env, SvcScorer *s);

/*
 * Compute the basin certificates of the model's equilibria for the
 * current cut (call again after the clusters change).  Costs about
 * 24 * n_eq * n_sv kernel terms; without it prediction only stops at
 * snaps.  Models with a non-positive alpha get none.  svc_scorer_predict
 * calls it by itself once enough rows have come to pay for it.
 */
SvcStatus	svc_scorer_certify(const SvcEnv *env, SvcScorer *s, SvcError *err);

/* f(xs) for a scaled row: the full sum's value within its rounding. */
double		svc_scorer_decision(SvcScorer *s, const double *xs);

/*
 * svc_scorer_decision (which calls it), and in *bound the bound the scorer
 * keeps on its distance from the full sum's f (0 where the full sum
 * answered), which test_score checks.
 */
double		svc_scorer_decision_bound(SvcScorer *s, const double *xs, double *bound);

/*
 * The kernel sum sum_i alpha_i K_i(xs) (f without the offset) from the
 * scorer's pass, and in *bound the bound it keeps on the distance from
 * the full sum kernel.c computes (HUGE_VAL where the scorer cannot bound
 * it: take the full sum).  For order statistics of the sums, where only
 * the rows whose bounds overlap need the full one.
 */
double		svc_scorer_sum_bound(SvcScorer *s, const double *xs, double *bound);

/*
 * The cluster svc_label_assign(m, xs, ...) gives (svc_label_predict's
 * with the model's assign_rule), and f(xs) as
 * svc_scorer_decision gives it in *decision when not NULL.
 */
int32_t		svc_scorer_predict(SvcScorer *s, const double *xs, double *decision);

/*
 * svc_traj_run(s->m, eq, n_eq, x0, w, tt, out) for the labelling of a
 * model: the same end, near, snapped and lambda0, and w->x where the run
 * does not snap.  The first step is svc_traj_run's own; the rest are
 * tracked with the scorer's sums while the bound settles which
 * equilibrium the run snaps to, and run in full otherwise.
 */
void		svc_scorer_traj_run(SvcScorer *s, const double *eq, int32_t n_eq,
								const double *x0, SvcLabelWork *w,
								const SvcTrajTol *tt, SvcTrajEnd *out);

#endif							/* SVC_SCORE_H */
