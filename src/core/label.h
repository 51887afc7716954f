/*
 * label.h - clusters from the equilibria of the decision function
 *
 * Training runs every kept row to its equilibrium (a fixed point of the
 * weighted mean shift P(x)), merges equilibria closer than a tolerance,
 * and labels them: by default through a saddle tree (label_saddle.h) cut
 * by the model's cut rule (label_cut.h); with labeling = paper, as
 * Algorithm 3 of the budgeted SVC paper (label_algorithm3.h); with
 * labeling = complete-graph, by Ben-Hur's graph over the rows, each
 * equilibrium taking the cluster of most of its rows
 * (label_complete_graph.h).  The labelled equilibria are stored in the
 * model, so a new row is clustered by running its own trajectory
 * (svc_label_predict, label_trajectory.h).
 */
#ifndef SVC_LABEL_H
#define SVC_LABEL_H

#include "svc_core.h"
#include "model.h"
#include "label_trajectory.h"
#include "label_algorithm3.h"

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

#endif							/* SVC_LABEL_H */
