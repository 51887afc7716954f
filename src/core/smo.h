/*
 * smo.h - exact SVDD solver (smallest enclosing sphere in feature space) by SMO
 *
 * With the RBF kernel K(x, y) = exp(-gamma ||x - y||^2), so K(x, x) = 1,
 * svc_smo_solve solves the dual
 *
 *   min_alpha  F(alpha) = sum_ij alpha_i alpha_j K_ij - sum_i alpha_i K_ii
 *   subject to sum_i alpha_i = 1,  0 <= alpha_i <= C_i
 *
 * The linear term is constant on the simplex, so this is min alpha' K alpha,
 * libsvm's one-class SVM (min 1/2 a' K a, sum a = nu l, 0 <= a <= 1) up to
 * scale: alpha = a / (nu l) and C = 1 / (nu l).  The fraction nu of rows
 * then bounds the outliers from above and the support vectors from below.
 *
 * Rows with a lower bound L_i < 0 (params lo) take alpha_i in [L_i, 0]:
 * labelled anomalies, pushed out of the sphere (smo.c).
 *
 * The decision function is f(x) = sum_i alpha_i K(x_i, x) - offset, and
 * f(x) >= 0 exactly when phi(x) lies in the sphere (see smo.c for the
 * derivation): f > 0 inside, f = 0 on the free support vectors, f <= 0 on
 * the rows at their bound (the outliers).
 *
 * Memory: svc_smo_memory(n, d, p) bytes of O(n) vectors (including the two
 * kernel columns the solver needs at the least), plus at most
 * p->cache_bytes of cached kernel columns (8 n bytes each).  x is read, not
 * copied.
 */
#ifndef SVC_SMO_H
#define SVC_SMO_H

#include "svc_core.h"

/*
 * A kernel other than the RBF of the rows (the aggregates of aid.c): write
 * out[t] = K(j, t) for t = idx[k], k < m, or for t = k < m when idx is
 * NULL, touching no other entry of out.  It may fail (out of memory,
 * interrupted) with err set.
 */
typedef SvcStatus (*SvcSmoKernelFn) (void *ctx, int64_t j, const int64_t *idx,
									 int64_t m, double *out, SvcError *err);

typedef struct SvcSmoParams
{
	double		gamma;			/* kernel width, finite and > 0 (RBF only) */
	const double *c;			/* per-row upper bounds C_i, or NULL */
	double		c_all;			/* C_i for every row when c is NULL */
	double		eps;			/* stop when m(alpha) - M(alpha) < eps (> 0) */
	int64_t		max_iter;		/* <= 0: max(10^7, 100 n) */
	size_t		cache_bytes;	/* kernel-column cache budget (LRU) */
	bool		shrinking;		/* libsvm-style shrinking */

	/*
	 * A general kernel: with kernel set, x and gamma are not used (x may
	 * be NULL), K(t, t) = diag[t] (> 0) and the linear term of F stays
	 * sum_i alpha_i, as for rows whose K_ii is 1 (the aggregates' mean
	 * self-kernel is 1 though their K_tt is less).  NULL: the RBF.
	 */
	SvcSmoKernelFn kernel;
	void	   *kernel_ctx;
	const double *diag;
	/*
	 * Signed rows (SVDD with negative examples, see smo.c): lo[t] < 0
	 * makes row t's alpha range [lo[t], 0] (C_t must then be 0), a row to
	 * push out of the sphere.  NULL: every lower bound is 0, as before.
	 * margin[t] (in f's units, |m| <= 1) moves row t's side of the
	 * boundary: at its upper bound or free it ends with f <= -margin[t],
	 * at its lower bound or free with f >= -margin[t]; so m > 0 puts an
	 * anomaly at 0 strictly outside, m < 0 a row below C strictly inside.
	 * NULL: no margins.
	 */
	const double *lo;
	const double *margin;
	/* A feasible start (sum 1 within 1e-9, L_t <= alpha0_t <= C_t), or
	 * NULL: rows filled to their bound in order. */
	const double *alpha0;
	/* no progress reports: the refinement's solves (svc_smo_refine),
	 * which would start the count again after the solve's own */
	bool		quiet;
} SvcSmoParams;

typedef struct SvcSmoResult
{
	double	   *alpha;			/* n multipliers, allocated from env */
	double		offset;			/* f(x) = sum alpha_i K(x_i, x) - offset */
	double		r2;				/* squared radius in feature space */
	double		objective;		/* F(alpha), constant term included */
	/*
	 * m(alpha) - M(alpha) over all rows, with m the largest -G_t of rows
	 * below their bound and M the smallest -G_t of rows above zero
	 * (G = 2 K alpha - 1, the gradient of F); 0 when either set is empty.
	 * It is negative when the optimum has no free row.
	 */
	double		gap;
	int64_t		iterations;
	int64_t		cache_hits;
	int64_t		cache_misses;
	int64_t		n_free;			/* 0 < alpha_i < C_i */
	int64_t		n_bound;		/* alpha_i = C_i > 0 (signed rows not counted) */
	bool		converged;		/* false: max_iter reached first */
} SvcSmoResult;

/* Defaults: eps 1e-3 (as libsvm), max_iter 0 (automatic), 100 MB cache,
 * shrinking on, c NULL and c_all 1 (no bound); gamma must still be set. */
void		svc_smo_params_default(SvcSmoParams *p);

/*
 * Solve the dual for the n rows of d values in x (row-major).  On SVC_OK
 * out holds the solution, also when max_iter stopped the solver first
 * (out->converged is then false and alpha is the last feasible iterate).
 * On failure out->alpha is NULL and nothing is left allocated.  Errors:
 * SVC_ERR_INVALID_PARAMETER (gamma, eps, a C_i negative or NaN, or
 * sum C_i < 1 so that no alpha is feasible), SVC_ERR_INVALID_INPUT (a
 * non-finite value in x), SVC_ERR_LIMIT (sizes overflow), SVC_ERR_NOMEM,
 * SVC_ERR_INTERRUPTED (the hook is called every 1000 iterations).
 */
SvcStatus	svc_smo_solve(const SvcEnv *env, const double *x, int64_t n,
						  int32_t d, const SvcSmoParams *p,
						  SvcSmoResult *out, SvcError *err);

/*
 * Refine a solution alpha (n multipliers, feasible for p's bounds) to p->eps:
 * smo over the rows with alpha_t != 0 (and the signed rows), from alpha,
 * then the rows outside that violate the stopping rule at p->eps join and
 * smo runs again, until none does (smo.c).  out as svc_smo_solve's, over
 * every row; its iterations and cache counts are summed over the solves.
 * The RBF of x only (p->kernel NULL); p->alpha0 is not read.  The
 * exact solvers refine their solution at SVC_SMO_REFINE times their eps
 * (solver_smo.c), so that they stop at the same point within the slack
 * their tolerance leaves.
 */
#define SVC_SMO_REFINE 1e-2
SvcStatus	svc_smo_refine(const SvcEnv *env, const double *x, int64_t n,
						   int32_t d, const SvcSmoParams *p, const double *alpha,
						   SvcSmoResult *out, SvcError *err);

/*
 * Make n multipliers a feasible start for one bound c (0 <= alpha_t <= c,
 * sum 1) when they are not: clamped to [0, c], scaled to sum 1, clamped
 * again, and what is still missing given to the rows below c in order.
 * Multipliers within 1e-9 of the sum and inside the bounds are left as they
 * are (false); true when they were moved.  n c must be at least 1.
 */
bool		svc_smo_feasible_start(double *alpha, int64_t n, double c);

/*
 * Bytes svc_smo_refine takes besides its solves' svc_smo_memory and cache:
 * its n-vectors, the copy of the support vectors' rows (at most n) and the
 * caller's n multipliers, which stay alive through it; SIZE_MAX when that
 * overflows size_t.  A caller within a budget hands the refinement its
 * cache less these (svc_smo_refine_cache).
 */
size_t		svc_smo_refine_memory(int64_t n, int32_t d);
size_t		svc_smo_refine_cache(size_t cache_bytes, int64_t n, int32_t d);

void		svc_smo_result_free(const SvcEnv *env, SvcSmoResult *r);

/* Bytes besides the cache budget, SIZE_MAX when that overflows size_t. */
size_t		svc_smo_memory(int64_t n, int32_t d, const SvcSmoParams *p);

#endif							/* SVC_SMO_H */
