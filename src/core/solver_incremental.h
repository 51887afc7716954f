/* solver_incremental.h - the solver "incremental": smo's sphere row by row (incremental.h) behind the fit's seam */
#ifndef SVC_SOLVER_INCREMENTAL_H
#define SVC_SOLVER_INCREMENTAL_H

#include "svc_core.h"
#include "options.h"
#include "model.h"
#include "incremental.h"

/*
 * The solver "incremental" (solver.h): the problem of the solver "smo",
 * with C = 1 / (nu n) fixed from the n rows of the fit before the first
 * row goes in, solved exactly by adding the rows one at a time in their
 * order (incremental.h).  Each step keeps every row added so far optimal,
 * so the result is smo's optimum up to rounding, whatever the order.
 * Fills what solver.h asks as smo does: support vectors, offset (as smo
 * takes it), iterations = path steps, objective, and gap = the largest KKT
 * violation of the final state, in tol's scale (0 cache counts: it keeps
 * the kernel columns of its margin rows).
 *
 * It takes no per-row weights (the solver table says so, and the fit
 * refuses labelled rows for it): weight must be NULL.  smo takes labelled
 * rows as a signed problem (negative bounds for anomalies, margins at the
 * boundary) that the engine's path does not follow.
 *
 * Refused up front (SVC_ERR_LIMIT, with a hint) when its O(n) vectors
 * exceed svc_smo_budget; a margin set whose columns outgrow the budget
 * fails with SVC_ERR_LIMIT during the run.
 */
SvcStatus	svc_train_incremental(const SvcEnv *env, const double *x, int64_t n,
								  int32_t d, const SvcOptions *opt, double gamma,
								  const double *weight, SvcModel *m, SvcError *err);

/*
 * The report of the engine's final state on n rows, as smo's: the offset,
 * the objective and the gap (the KKT violation recomputed from the rows,
 * in tol's scale), iterations = the path's steps, converged, 0 cache
 * counts.  The fresh fit and the warm start of a model with kept rows
 * (keep.h) both end with it.  Errors: those of svc_incr_kkt_violation.
 */
SvcStatus	svc_incr_report(SvcIncr *s, const SvcOptions *opt, int64_t n, SvcModel *m,
							SvcError *err);

#endif							/* SVC_SOLVER_INCREMENTAL_H */
