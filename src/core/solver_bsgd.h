/* solver_bsgd.h - the solver "bsgd": budgeted SGD (bsgd.h) behind the fit's seam */
#ifndef SVC_SOLVER_BSGD_H
#define SVC_SOLVER_BSGD_H

#include "svc_core.h"
#include "options.h"
#include "model.h"

/*
 * The solver "bsgd" (solver.h), the default: the large-margin one-class
 * SVM by budgeted SGD on the n scaled rows with width gamma.  Fills
 * m->n_sv, m->sv, m->alpha (allocated from env), m->iterations,
 * m->converged, m->offset = 1, m->gamma = gamma.  The other fields of m
 * are left alone.
 */
SvcStatus	svc_train_bsgd(const SvcEnv *env, const double *x, int64_t n,
						   int32_t d, const SvcOptions *opt, double gamma,
						   const double *weight, SvcModel *m, SvcError *err);

/*
 * The warm start of bsgd (solver.h's warm_fit): the SGD goes on from
 * init's support vectors, alphas and step count T0, so step t > T0 has
 * rate 1/t and the new rows refine w rather than overwrite it:
 * w_T = (T0 / T) w_T0 + (C / T) sum of the new violating draws.  It runs
 * one pass over the n new rows and on until the stopping rule holds, at
 * most opt->max_iter steps more.  m->iterations is the total, T0 included.
 */
SvcStatus	svc_train_bsgd_warm(const SvcEnv *env, const double *x, int64_t n, int32_t d,
								const SvcOptions *opt, const SvcModel *init, SvcModel *m,
								SvcError *err);

#endif							/* SVC_SOLVER_BSGD_H */
