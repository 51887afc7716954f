/* threshold.h - the offset of f from a quantile of f on the training rows */
#ifndef SVC_THRESHOLD_H
#define SVC_THRESHOLD_H

#include "svc_core.h"
#include "model.h"

/*
 * Set m->offset so that the share m->opt.nu of the n scaled rows has
 * f < 0: the nu-quantile of the kernel sums sum_i alpha_i K(x, s_i) over
 * the rows (never below 1e-12 of the largest, so that f stays negative
 * where every kernel term underflows).  A sphere cold-trained on a sample
 * of more rows (m->rows_seen > n) takes the quantile of a mixture that
 * stands for the rows it did not see (threshold.c).  Errors:
 * SVC_ERR_NOMEM, SVC_ERR_INTERRUPTED.
 */
SvcStatus	svc_threshold_set(const SvcEnv *env, SvcModel *m, const double *rows,
							  int64_t n, SvcError *err);

#endif							/* SVC_THRESHOLD_H */
