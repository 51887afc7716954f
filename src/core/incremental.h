/*
 * incremental.h - exact incremental and decremental learning of smo.h's sphere
 *
 * The problem is smo.h's: on the rows kept,
 *   min_alpha  alpha' K alpha - sum_i alpha_i
 *   subject to sum_i alpha_i = t,  0 <= alpha_i <= C_i
 * with t = min(1, sum_i C_i), so t = 1 as soon as the bounds allow it (smo
 * refuses rows whose bounds sum to less; before that the only feasible
 * point has every alpha at its bound).  A row is added or removed exactly:
 * the multipliers move along the path that keeps every other row optimal
 * (Cauwenberghs and Poggio 2001, with the sum of alpha in the role of
 * sum y alpha and -offset in the role of the bias), so after each call the
 * state is the optimum of the rows then kept, up to rounding.  See
 * doc/incremental.md for the derivation, the step rule and the sets.
 *
 * h_i = (K alpha)_i - offset = f(x_i) is kept for every row: the margin
 * set S has 0 < alpha < C and h = 0, the error set E alpha = C and h <= 0,
 * the rest R alpha = 0 and h >= 0.  The solver keeps the rows (a copy),
 * alpha, h, the kernel column of each margin row over the kept rows, and
 * the inverse of the bordered margin matrix [[0, 1'], [1, K_SS]], updated
 * by rank one on each set change and refactored every so often.
 *
 * Memory: svc_incr_memory(capacity, d) bytes up front (refused beyond
 * params.memory), then 8 (capacity + |S| + 1) bytes per margin row for its
 * column and the inverse; a margin set that outgrows params.memory fails
 * with SVC_ERR_LIMIT.  The hook is called every SVC_INCR_INTERRUPT_EVERY
 * steps and during long kernel sweeps.
 */
#ifndef SVC_INCREMENTAL_H
#define SVC_INCREMENTAL_H

#include "svc_core.h"

typedef struct SvcIncr SvcIncr;

typedef struct SvcIncrParams
{
	int32_t		d;				/* values per row, 1 .. SVC_MAX_DIMS */
	double		gamma;			/* RBF width, finite and > 0 */
	int64_t		capacity;		/* most rows kept at once (>= 1) */
	size_t		memory;			/* byte budget, 0: no limit */
} SvcIncrParams;

/* The counts a run reports. */
typedef struct SvcIncrStats
{
	int64_t		added;			/* rows added */
	int64_t		removed;		/* rows removed */
	int64_t		steps;			/* path steps (set changes) over all calls */
	int64_t		refactors;		/* inverses computed afresh */
	int64_t		cycles;			/* rows kept out of S for a drive: they
								 * joined and left it without a move */
	int64_t		twins;			/* candidates on the margin that gave their
								 * alpha to a margin row they duplicate */
	int64_t		n_margin;		/* |S| now */
	int64_t		n_error;		/* |E| now (alpha = C > 0) */
} SvcIncrStats;

#define SVC_INCR_INTERRUPT_EVERY 256

/* Bytes allocated up front for capacity rows of d values; SIZE_MAX on overflow. */
size_t		svc_incr_memory(int64_t capacity, int32_t d);

/*
 * A solver with no row.  Errors: SVC_ERR_INVALID_PARAMETER (d, gamma,
 * capacity), SVC_ERR_LIMIT (svc_incr_memory beyond params.memory, with a
 * detail and hint), SVC_ERR_NOMEM.
 */
SvcStatus	svc_incr_create(const SvcEnv *env, const SvcIncrParams *p, SvcIncr **out,
							SvcError *err);
void		svc_incr_free(SvcIncr *s);

/*
 * Add a row (d values, copied) with bound c (>= 0, finite) and re-solve
 * exactly; *slot receives its slot, by which svc_incr_remove names it.
 * Errors: SVC_ERR_INVALID_INPUT (a non-finite value), SVC_ERR_INVALID_PARAMETER
 * (c), SVC_ERR_LIMIT (no free slot, or the budget), SVC_ERR_NOMEM,
 * SVC_ERR_INTERRUPTED, SVC_ERR_INTERNAL (the path did not end: rounding
 * beyond repair).  After a failure the solver is unusable (free it).
 */
SvcStatus	svc_incr_add(SvcIncr *s, const double *x, double c, int64_t *slot,
						 SvcError *err);

/* Remove the row in slot and re-solve exactly; errors as svc_incr_add. */
SvcStatus	svc_incr_remove(SvcIncr *s, int64_t slot, SvcError *err);

/*
 * Load a solution: n rows (row-major, copied) with their alphas and bounds
 * into an empty solver, slots[i] receiving row i's slot.  The sets follow
 * from alpha (0: R, the bound: E, between: S); h, the offset and the
 * margin set's bordered inverse are computed directly (one kernel column
 * per margin row and one Cholesky, not a path per row).  *viol receives
 * the state's KKT violation (svc_incr_kkt_violation's); above tol the load
 * fails with SVC_ERR_INVALID_INPUT ("not optimal"), as it does for an
 * alpha outside [0, c] or a margin row that duplicates the margin set:
 * the caller then frees the solver and adds the rows afresh.
 */
SvcStatus	svc_incr_load(SvcIncr *s, const double *x, const double *alpha, const double *c,
						  int64_t n, double tol, int64_t *slots, double *viol,
						  SvcError *err);

/*
 * Change the bound of the row in slot to c, keeping the state optimal.  A
 * margin or inside row whose alpha is below c only has its bound changed
 * (every KKT condition holds as it was); any other (at its bound, or cut
 * by c) is removed by an exact decrement and added again with c, and
 * *slot_out receives its new slot.  Errors as svc_incr_add.
 */
SvcStatus	svc_incr_set_bound(SvcIncr *s, int64_t slot, double c, int64_t *slot_out,
							   SvcError *err);

/* The bound of a slot's row (0 when empty). */
double		svc_incr_bound(const SvcIncr *s, int64_t slot);

/* Rows kept now. */
int64_t		svc_incr_rows(const SvcIncr *s);

/*
 * The largest KKT violation of the state, recomputed from the rows (h
 * afresh, not the kept h): over S |h|, over E max(h, 0), over R max(-h, 0),
 * the distance of each alpha outside [0, C] and |sum alpha - t|.  NaN when
 * it cannot allocate its scratch (or is interrupted; err then says why).
 */
double		svc_incr_kkt_violation(SvcIncr *s, SvcError *err);

/* f(x) = sum_i alpha_i K(x_i, x) - offset for a row x of d values. */
double		svc_incr_decision(const SvcIncr *s, const double *x);

/* The multiplier and the kept row of a slot (NULL when empty). */
double		svc_incr_alpha(const SvcIncr *s, int64_t slot);
const double *svc_incr_row(const SvcIncr *s, int64_t slot);

/* The offset of f, as smo.h's: the mean (K alpha)_s over S, else the
 * midpoint of the bracket the bound rows leave. */
double		svc_incr_offset(const SvcIncr *s);

/* F(alpha) = alpha' K alpha - sum alpha, recomputed; NaN as the violation. */
double		svc_incr_objective(SvcIncr *s, SvcError *err);

/* Slots in use are 0 .. svc_incr_slots() - 1 (some may be empty). */
int64_t		svc_incr_slots(const SvcIncr *s);

void		svc_incr_stats(const SvcIncr *s, SvcIncrStats *out);

#endif							/* SVC_INCREMENTAL_H */
