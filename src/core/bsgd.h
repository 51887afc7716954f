/*
 * bsgd.h - budgeted SGD for the large-margin one-class SVM (bsgd.c)
 *
 * Algorithm 2 of the budgeted SVC paper (BSGD-LMOC) with the budget
 * maintenance strategies of its Sec. 3.3, and the unbudgeted SGD of the
 * fast SVC paper.  The fit reaches it as the solver "bsgd"
 * (solver_bsgd.h); budget maintenance's nearest slots are bsgd_select.h's.
 */
#ifndef SVC_BSGD_H
#define SVC_BSGD_H

#include "svc_core.h"
#include "options.h"
#include "model.h"

/*
 * The SGD on n rows x (row-major, n * d, already scaled) with width gamma,
 * from step t0 + 1 on: from the support vectors, alphas and step count of
 * init when given (a warm start; t0 = its steps), else from w = 0 (t0 =
 * 0).  weight is NULL or the rows' multipliers of C (solver.h).  Fills
 * m->n_sv, m->sv, m->alpha (allocated from env), m->iterations (t0
 * included), m->converged, m->offset = 1, m->gamma = gamma.  The other
 * fields of m are left alone.
 */
SvcStatus	svc_bsgd_run(const SvcEnv *env, const double *x, int64_t n, int32_t d,
						 const SvcOptions *opt, double gamma, const double *weight,
						 const SvcModel *init, SvcModel *m, SvcError *err);

#endif							/* SVC_BSGD_H */
