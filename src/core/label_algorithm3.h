/* label_algorithm3.h - Algorithm 3 of the budgeted SVC paper: the B_eps strip, segment test, components, fill */
#ifndef SVC_LABEL_ALGORITHM3_H
#define SVC_LABEL_ALGORITHM3_H

#include "svc_core.h"
#include "model.h"
#include "label_trajectory.h"

/* Share of the rows the "auto" epsilon puts in B_eps. */
#define SVC_EPS_AUTO_SHARE	0.30

/* Whether a row with decision value f lies in B_eps = {|f| <= epsilon}. */
bool		svc_alg3_in_strip(double f, double epsilon);

/*
 * The "auto" epsilon: the SVC_EPS_AUTO_SHARE quantile of |f| over the n
 * values absf, which is sorted in place.
 */
double		svc_alg3_auto_epsilon(double *absf, int64_t n);

/*
 * Where training starts trajectories: rowlam[i] receives the kernel sum
 * f + offset at each of the n scaled rows xs, absf[i] its |f| (scratch),
 * *epsilon the strip's half width (m->opt.epsilon, or "auto"), and
 * *all_rows whether every row runs (when the strip is empty).
 */
SvcStatus	svc_alg3_strip(const SvcEnv *env, const SvcModel *m, const double *xs,
						   int64_t n, double *rowlam, double *absf,
						   double *epsilon, bool *all_rows, SvcError *err);

/*
 * Steps 5-9: two equilibria are connected when all the sample points of
 * the segment between them have f >= 0; comp[i] (M = eqs->n entries)
 * receives the root equilibrium of i's connected component.
 */
SvcStatus	svc_alg3_components(const SvcEnv *env, const SvcModel *m,
								const SvcEqList *eqs, int32_t *comp,
								SvcError *err);

/*
 * Step 10: every row whose label equals pending takes the label of its
 * nearest row (k-d tree, ties to the lowest index) among the rows
 * labelled above pending; rows labelled below pending are neither sources
 * nor filled.  xs holds n rows of d values (the filled and source rows
 * must be finite).  *n_sources, unless NULL, receives the number of
 * source rows; with none, nothing is filled.
 */
SvcStatus	svc_label_fill_nearest(const SvcEnv *env, const double *xs, int64_t n,
								   int32_t d, int32_t *label, int32_t pending,
								   int64_t *n_sources, SvcError *err);

/*
 * Algorithm 3 on new rows (svc_assign): each row's code is a cluster id
 * (> 0), SVC_ALG3_PENDING for a row outside B_eps waiting for the fill,
 * or SVC_ALG3_NO_ROW for a row without features, which is left alone.
 */
#define SVC_ALG3_PENDING	0
#define SVC_ALG3_NO_ROW		(-1)

/*
 * The code of one scaled row xs with decision value f: its trajectory's
 * cluster in B_eps (m->epsilon), else SVC_ALG3_PENDING.
 */
int32_t		svc_alg3_assign_row(const SvcModel *m, const double *xs, double f,
								SvcLabelWork *w);

/*
 * Step 10 for n rows xs (scaled, row-major) and their codes: every
 * pending row takes the cluster of its nearest B_eps row; with no row in
 * B_eps, the pending rows run their own trajectories instead.
 */
SvcStatus	svc_alg3_assign_finish(const SvcEnv *env, const SvcModel *m,
								   const double *xs, int64_t n, int32_t *code,
								   SvcLabelWork *w, SvcError *err);

#endif							/* SVC_LABEL_ALGORITHM3_H */
