/*
 * label.h - clusters from the equilibria of the decision function
 *
 * Training runs every kept row to its equilibrium (a fixed point of the
 * weighted mean shift P(x)), merges equilibria closer than a tolerance,
 * and labels them: by default through a saddle tree cut by the merge
 * ratio rule (FINDINGS.md section 9); with labeling = paper, as Algorithm 3
 * of the budgeted SVC paper (trajectories from B_eps only, equilibria
 * connected when the m = 20 points of the segment between them have
 * f >= 0).  The labelled equilibria are stored in the model, so a new row
 * is clustered by running its own trajectory (svc_label_predict).
 */
#ifndef SVC_LABEL_H
#define SVC_LABEL_H

#include "svc_core.h"
#include "model.h"

/* Workspace for trajectories: sized for a model, reused across rows. */
typedef struct SvcLabelWork
{
	double	   *x;				/* [dims] current point */
	double	   *next;			/* [dims] */
	double	   *kbuf;			/* [n_sv] */
} SvcLabelWork;

SvcStatus	svc_label_work_init(const SvcEnv *env, const SvcModel *m,
								SvcLabelWork *w, SvcError *err);
void		svc_label_work_free(const SvcEnv *env, SvcLabelWork *w);

/*
 * Label the model from n training rows xs (scaled, row-major): fills
 * m->n_eq, m->eq, m->eq_cluster, m->eq_f, m->n_clusters, m->cluster_size
 * and m->epsilon (when options ask for "auto"), with cluster ids 1..K by
 * decreasing size on these rows.  If labels is not NULL it receives each
 * row's cluster id.
 *
 * The four arrays are allocated from env; arrays those fields already
 * hold (NULL or from env) are freed, and only on success: a failed call
 * leaves the model as it was.  n must be at least 1 and every value
 * finite (SVC_ERR_INVALID_INPUT otherwise).  The tree costs O(M^2 dims)
 * in the number M of equilibria, which is tens to hundreds in practice.
 */
SvcStatus	svc_label_train(const SvcEnv *env, SvcModel *m, const double *xs,
							int64_t n, int32_t *labels, SvcError *err);

/*
 * Cluster id (1..n_clusters) of one scaled row: its trajectory's
 * equilibrium, matched to the nearest labelled equilibrium.  Writes the
 * decision value f(xs) into *decision when not NULL.  Returns 0 only for
 * a model without labelled equilibria (or a row with a NaN): a row however
 * far from the equilibria gets the nearest one's cluster.
 * With the tree labelling a training row gets the id training gave it;
 * with the paper's, a row outside B_eps got its nearest B_eps row's id in
 * training and may get another one here (its own trajectory's).
 */
int32_t		svc_label_predict(const SvcModel *m, const double *xs,
							  SvcLabelWork *w, double *decision);

/*
 * Step 10 of Algorithm 3: every row whose label equals pending takes the
 * label of its nearest row (k-d tree, ties to the lowest index) among the
 * rows labelled above pending; rows labelled below pending are neither
 * sources nor filled.  xs holds n rows of d values (the filled and source
 * rows must be finite).  *n_sources, unless NULL, receives the number of
 * source rows; with none, nothing is filled.
 */
SvcStatus	svc_label_fill_nearest(const SvcEnv *env, const double *xs, int64_t n,
								   int32_t d, int32_t *label, int32_t pending,
								   int64_t *n_sources, SvcError *err);

#endif							/* SVC_LABEL_H */
