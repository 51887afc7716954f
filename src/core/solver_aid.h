/* solver_aid.h - the solver "aid": smo's sphere by aggregation (aid.h) behind the fit's seam */
#ifndef SVC_SOLVER_AID_H
#define SVC_SOLVER_AID_H

#include "svc_core.h"
#include "options.h"
#include "model.h"

/*
 * The solver "aid" (solver.h): the problem of the solver "smo" (C =
 * 1 / (nu n), the same tol), solved by aggregation and iterative
 * disaggregation until the relative gap of its bounds is at most aid_gap
 * or every cluster passes.  Fills what solver.h asks as smo does, and
 * aid's report (rounds, clusters per round, final gap, share aggregated).
 *
 * It takes no per-row weights (the solver table says so, and the fit
 * refuses labelled rows for it): weight must be NULL.  Its clusters share
 * one bound per row; weighted rows would need multipliers proportional to
 * their bounds within a cluster, which aid.c does not do.
 *
 * Refused up front (SVC_ERR_LIMIT, with a hint) when its O(n) vectors
 * exceed svc_smo_budget; what the budget leaves over is its solves' cache.
 */
SvcStatus	svc_train_aid(const SvcEnv *env, const double *x, int64_t n,
						  int32_t d, const SvcOptions *opt, double gamma,
						  const double *weight, SvcModel *m, SvcError *err);

#endif							/* SVC_SOLVER_AID_H */
