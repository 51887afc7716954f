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

#endif							/* SVC_SOLVER_SMO_H */
