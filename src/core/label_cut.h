/*
 * label_cut.h - clusters from the saddle tree of a model
 *
 * The tree's leaves are the equilibria (each with the labelled rows that
 * climb to it and its height, the kernel sum lambda = f + offset at it);
 * its n_eq - 1 edges join equilibria through passes, by decreasing height.
 * A cut keeps some edges and removes the others; the clusters are the
 * parts left.  Every rule walks the edges from the highest pass down and
 * always keeps an edge that touches a part smaller than the minimum
 * cluster size, so no cluster is smaller (unless all rows are fewer).
 * The rules, from the model's options:
 *   n_clusters > 0  remove the n_clusters - 1 lowest edges between parts
 *                   of at least the minimum size (fewer if there are not
 *                   that many);
 *   level           remove the edges whose pass is below f = level;
 *   persistence     remove an edge when its pass is below merge_ratio
 *                   times the lower of the two parts' peaks (a part must
 *                   stand 1 / merge_ratio times above the pass that joins
 *                   it to another), as ToMATo does for densities;
 *   eom             HDBSCAN's excess of mass: of the parts that appear in
 *                   the tree, keep those of greatest total stability,
 *                   sum over rows of (height it leaves - height it came).
 * The cut is cheap (O(M log M) in the M equilibria, and with
 * min_cluster_size_rows "separated" one pass of support vectors against
 * equilibria), so a trained model can be cut again at another setting
 * without training.
 */
#ifndef SVC_LABEL_CUT_H
#define SVC_LABEL_CUT_H

#include "svc_core.h"
#include "model.h"

/*
 * The minimum cluster size in rows, of rows labelled rows out of a sample
 * of sample_rows: min_cluster_size when set (scaled by rows / sample_rows
 * when it counts rows of the sample), else min_cluster_share of the rows
 * but at least 5.  The tree's cuts and the complete graph's components
 * share it.  "separated" counts labelled rows here; the floor for a part
 * apart from its neighbour (persistence and level cuts) is
 * svc_cut_min_rows_apart's, in rows of the sample (under it, a part of a
 * labelled row or more stands when apart by the pooled spread).
 */
double		svc_cut_min_rows(const SvcOptions *opt, int64_t rows, int64_t sample_rows);
double		svc_cut_min_rows_apart(const SvcOptions *opt, int64_t rows, int64_t sample_rows);

/* The rule a model's options choose: n_clusters, then level, then cut. */
typedef enum SvcCutBy
{
	SVC_CUT_BY_COUNT,
	SVC_CUT_BY_LEVEL,
	SVC_CUT_BY_PERSISTENCE,
	SVC_CUT_BY_EOM
} SvcCutBy;

SvcCutBy	svc_cut_by(const SvcOptions *opt);

/* Its name, as svc_model_info reports it. */
const char *svc_cut_by_name(SvcCutBy by);

/*
 * Label the equilibria from the tree and m->opt: replaces eq_cluster,
 * n_clusters and cluster_size (1..K by decreasing rows; ties by the
 * lowest equilibrium), and leaves the ids users see (label_lineage.h)
 * alone: for a fresh labelling, which has none.  On failure the model is
 * unchanged.
 */
SvcStatus	svc_cut_apply(const SvcEnv *env, SvcModel *m, SvcError *err);

/*
 * A recut: the model's clusters under the options wanted (its own with
 * the cut options changed).  Options that give the cut the model has
 * leave it alone, whatever its labelling (only a real change needs a tree
 * to cut); otherwise they become the model's, the tree is cut again, and
 * the new clusters get ids from the model's (label_lineage.h: a cluster
 * the cut keeps keeps its id).  On failure the model is unchanged,
 * options included.
 */
SvcStatus	svc_model_recut(const SvcEnv *env, SvcModel *m, const SvcOptions *wanted,
							SvcError *err);

/*
 * A model's cut as it stands (options, clusters, ids and links): a caller
 * that cuts one model at one setting after another (svc_recut per row)
 * restores the stored cut before each, so that every cut is the stored
 * model's and its ids come from the stored clusters, not from the last cut.
 */
typedef struct SvcCutSaved
{
	SvcOptions	opt;
	int32_t		n_eq;
	int32_t		n_clusters;
	int32_t    *eq_cluster;
	int64_t    *cluster_size;
	int32_t    *cluster_id;
	int32_t		next_id;
	int32_t		n_links;
	SvcClusterLink *links;
} SvcCutSaved;

/* Copy m's cut into s (arrays from env). */
SvcStatus	svc_cut_save(const SvcEnv *env, const SvcModel *m, SvcCutSaved *s, SvcError *err);

/* Give m (the model s was saved from) the saved cut again; on failure m is unchanged. */
SvcStatus	svc_cut_restore(const SvcEnv *env, SvcModel *m, const SvcCutSaved *s, SvcError *err);

/*
 * Check a decoded model's tree: endpoints in range, a spanning tree,
 * heights not increasing, and a labelling equal to the cut its options
 * give.  SVC_ERR_CORRUPT otherwise.
 */
SvcStatus	svc_cut_check(const SvcEnv *env, const SvcModel *m, SvcError *err);

/*
 * Number parts 1..K by decreasing rows (ties: the part holding the lowest
 * equilibrium first): part[i] names the part of equilibrium i by any index
 * in [0, M), eq_rows[i] its rows.  Fills eq_cluster[M], *n_clusters and a
 * new *cluster_size array from env.  Used by every cut and by the paper's
 * labelling.
 */
SvcStatus	svc_cut_number(const SvcEnv *env, int32_t M, const int32_t *part,
						   const int64_t *eq_rows, int32_t *eq_cluster,
						   int32_t *n_clusters, int64_t **cluster_size,
						   SvcError *err);

/*
 * What the cut separates: *level receives the highest pass (in f) among
 * the removed edges (false is returned when none is removed), and
 * stability[k] for cluster k + 1 the share of its peak it stands above
 * the highest removed edge that touches it: 1 - pass / peak in lambda,
 * 1 for a cluster alone.  peak[] (n_clusters) is scratch: each cluster's
 * peak lambda.
 */
bool		svc_cut_summary(const SvcModel *m, double *level, double *stability,
							double *peak);

#endif							/* SVC_LABEL_CUT_H */
