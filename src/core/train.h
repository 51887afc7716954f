/*
 * train.h - budgeted SGD for the large-margin one-class SVM
 *
 * Algorithm 2 of the budgeted SVC paper (BSGD-LMOC) with the budget
 * maintenance strategies of its Sec. 3.3, and the unbudgeted SGD of the
 * fast SVC paper.
 */
#ifndef SVC_TRAIN_H
#define SVC_TRAIN_H

#include "svc_core.h"
#include "options.h"
#include "model.h"

/*
 * Train on n rows x (row-major, n * d, already scaled) with width gamma.
 * The solver "bsgd" (solver.h).  Fills m->n_sv, m->sv, m->alpha (allocated
 * from env), m->iterations,
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

/*
 * The "auto" gamma: SVC_GAMMA_AUTO_FACTOR / median squared distance
 * between pairs of rows, estimated on at most a few thousand pairs drawn
 * with rng, times 2/d above two dimensions.  When the median is zero
 * (mostly duplicates) the mean of the non-zero distances stands in; 1/d
 * when every row is equal.
 */
double		svc_gamma_auto(const double *x, int64_t n, int32_t d, SvcRng *rng);

/*
 * Budget maintenance's choice of the k nearest (bsgd_pick): idx[0..k) set
 * to the slots of the k smallest of dist[0..m) in the order a partial
 * selection sort of (dist, idx) leaves them, ties included, in about one
 * pass over dist.  False, with idx untouched, when k is out of 1..m, a
 * distance is NaN or ties at the k-th distance are too many to replay;
 * the caller then sorts.
 * Declared here for its unit test.
 */
bool		svc_select_nearest(const double *dist, int32_t *idx, int32_t m, int32_t k);

/*
 * The same choice for the list of every slot 0..b-1 but p, from the
 * slots' vectors by row (rows, as svc_sqdist_many reads them) and by
 * column (cols, stride apart), computing few of svc_sqdist_many's
 * distances.  work holds b doubles.  False, with idx untouched, where the
 * caller must take every distance (k > 8, b < 9, NaN, many ties).
 */
bool		svc_select_nearest_cols(const double *rows, const double *cols, size_t stride,
									int32_t b, int32_t d, int32_t p, const double *x,
									int32_t k, double *work, int32_t *idx);

#endif							/* SVC_TRAIN_H */
