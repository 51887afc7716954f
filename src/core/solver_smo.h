/* solver_smo.h - the solver "smo": the exact hypersphere (smo.h) behind the fit's seam */
#ifndef SVC_SOLVER_SMO_H
#define SVC_SOLVER_SMO_H

#include "svc_core.h"
#include "options.h"
#include "model.h"

/*
 * The solver "smo" (solver.h): the smallest enclosing sphere of the n
 * scaled rows, solved exactly with C = 1 / (nu n) (nu = outlier_fraction;
 * no bound when nu n <= 1).  Fills what solver.h asks, with the rows of
 * alpha > 0 as support vectors, the offset from the free ones, and the
 * report (objective, gap in tol's scale, cache counts).
 *
 * Refused up front (SVC_ERR_LIMIT, with a hint) when the solver's O(n)
 * vectors and two kernel columns exceed svc_smo_budget; what the budget
 * leaves over is its kernel cache.
 */
SvcStatus	svc_train_smo(const SvcEnv *env, const double *x, int64_t n,
						  int32_t d, const SvcOptions *opt, double gamma,
						  const double *weight, SvcModel *m, SvcError *err);

/* The solver's memory budget in bytes: cache_mb, else the env's, else
 * SVC_SOLVER_MEMORY_DEFAULT. */
size_t		svc_smo_budget(const SvcEnv *env, const SvcOptions *opt);

/* smo.h's eps for tol (libsvm's -e) on n rows; see solver_smo.c. */
double		svc_smo_eps(double tol, double nu, int64_t n);

/*
 * What every exact solver of smo's problem (smo, aid, incremental) shares:
 * the bound C = 1 / (nu n), 1 (no bound) when nu n <= 1; a gap in the
 * units of G = 2 K alpha - 1 reported in tol's (libsvm's) scale.
 */
double		svc_smo_c(double nu, int64_t n);
double		svc_smo_gap_in_tol(double gap, double nu, int64_t n);

/*
 * The refusal (SVC_ERR_LIMIT, with detail and hint) of n rows whose need
 * bytes (SIZE_MAX: past counting) exceed the budget, before any
 * allocation.  who names the solver in the message ("the exact solver"),
 * name in the detail; per_row says what a row costs, cached what the rest
 * of the budget caches.
 */
SvcStatus	svc_smo_refuse_memory(SvcError *err, const char *who, const char *name,
								  const char *per_row, const char *cached,
								  int64_t n, size_t need, size_t budget);

/*
 * The model's support vectors: the rows of x (n * d) whose alpha_rows is
 * not 0 (negative ones included), with their alphas, allocated from env
 * into m->sv, m->alpha and m->n_sv.  An internal error naming who when
 * none (or more than INT32_MAX) remain.
 */
SvcStatus	svc_smo_take_support(const SvcEnv *env, const double *x,
								 const double *alpha_rows, int64_t n, int32_t d,
								 const char *who, SvcModel *m, SvcError *err);

#endif							/* SVC_SOLVER_SMO_H */
