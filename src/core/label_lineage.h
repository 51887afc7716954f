/*
 * label_lineage.h - cluster ids that survive a refresh
 *
 * Inside a model the clusters are numbered 1..K by decreasing size (the
 * cut and its decode check rely on that order).  A model made from
 * another one (a warm start from init, or a recut) also carries the ids
 * users see: each of its clusters that continues one of the other model's
 * clusters keeps that cluster's id, and a cluster with no predecessor
 * gets an id the other model never used.  A plain svc_train has no ids:
 * its clusters are 1..K, as they always were.
 *
 * The match.  shared[i][j] counts what old cluster i and new cluster j
 * have in common: for a warm start, the rows the labelling ran that lie
 * in the init model's domain (f >= 0 there) and climb to i in it and to
 * j in the new model; for a recut, the labelled rows of the equilibria
 * that i and j share.  Then
 *   - each new cluster's parent is the old cluster it shares most with
 *     (ties: the lower old index, i.e. the larger old cluster);
 *   - of an old cluster's children, the one sharing most with it (ties:
 *     the larger new cluster) keeps its id: a cluster that splits keeps
 *     its id on its larger part;
 *   - an old cluster that is nobody's parent but shares rows with some
 *     new cluster merged into the one it shares most with (whose id is
 *     its parent's, the larger share);
 *   - an old cluster that shares nothing ended;
 *   - a new cluster without an id gets the next unused one, in the
 *     model's order (by size).
 * The links (parent, merged, ended) are stored with the ids (section 7
 * of the model format) and reported by svc_model_info.
 */
#ifndef SVC_LABEL_LINEAGE_H
#define SVC_LABEL_LINEAGE_H

#include "svc_core.h"
#include "model.h"

/*
 * The id users see of the model's cluster k (1..n_clusters); 0 stays 0
 * (no cluster).
 */
static inline int32_t
svc_cluster_id(const SvcModel *m, int32_t k)
{
	return (m->cluster_id != NULL && k >= 1 && k <= m->n_clusters) ? m->cluster_id[k - 1] : k;
}

/* The highest id a model's clusters have had, plus one. */
int32_t		svc_lineage_next_id(const SvcModel *m);

/*
 * Give m (labelled, n_clusters K_new) ids and links from the old model's
 * clusters: old_id[K_old] their ids, old_next one past the highest id
 * the old model has used, shared[K_old * K_new] (row-major by old
 * cluster) what they share.  Replaces m's ids and links.
 */
SvcStatus	svc_lineage_match(const SvcEnv *env, SvcModel *m, const int32_t *old_id,
							  int32_t K_old, int32_t old_next, const int64_t *shared,
							  SvcError *err);

/*
 * After a warm start: xs[n] (scaled, row-major) are the rows the new
 * labelling ran and labels[n] their clusters in m (1..K).  Each row in
 * init's domain (f >= 0) climbs in init to an old cluster; the counts
 * match m's clusters to init's.
 */
SvcStatus	svc_lineage_from_rows(const SvcEnv *env, SvcModel *m, const SvcModel *init,
								  const double *xs, const int32_t *labels, int64_t n,
								  SvcError *err);

/*
 * After a recut: old_eq_cluster[n_eq] is each equilibrium's cluster in
 * the model before it (whose ids are old_id[K_old], NULL for 1..K_old,
 * and next id old_next); m's eq_cluster the one after.
 */
SvcStatus	svc_lineage_from_recut(const SvcEnv *env, SvcModel *m,
								   const int32_t *old_eq_cluster, const int32_t *old_id,
								   int32_t K_old, int32_t old_next, SvcError *err);

/* Free m's ids and links (NULLs them; next_id 0). */
void		svc_lineage_free(const SvcEnv *env, SvcModel *m);

/* What happened to one of the model's clusters. */
typedef enum SvcLineageStatus
{
	SVC_LINEAGE_CONTINUED,		/* the heir of one old cluster, alone */
	SVC_LINEAGE_SPLIT,			/* one of two or more parts of an old cluster */
	SVC_LINEAGE_MERGED,			/* other old clusters merged into it */
	SVC_LINEAGE_NEW				/* shares nothing with an old cluster */
} SvcLineageStatus;

/* Each cluster's status (status[n_clusters]), for a model with ids. */
SvcStatus	svc_lineage_statuses(const SvcEnv *env, const SvcModel *m,
								 SvcLineageStatus *status, SvcError *err);

/* "continued", "split", "merged", "new". */
const char *svc_lineage_status_name(SvcLineageStatus s);

/*
 * Check decoded ids and links (SVC_ERR_CORRUPT): ids distinct in [1,
 * next_id); links in range and in canonical order, at most one parent a
 * cluster; each old id a parent of one or more clusters, exactly one of
 * which (sharing most, ties the first) has its id, or merged into a
 * cluster that has a parent, or ended; no other cluster has an old id;
 * no cluster shares more than its size.  O((K + links) log).
 */
SvcStatus	svc_lineage_check(const SvcEnv *env, const SvcModel *m, SvcError *err);

#endif							/* SVC_LABEL_LINEAGE_H */
