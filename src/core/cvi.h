/*
 * cvi.h - clustering validity indices
 *
 * Plain C, no PostgreSQL header.  Cluster and class ids are arbitrary
 * int32 values; the core maps them to dense indices itself.  Every index
 * is either defined (a finite double) or undefined (the glue returns SQL
 * NULL); result.defined[] says which.
 *
 * Indices, with N the rows that have a cluster, K the distinct clusters,
 * J the distinct classes, d the number of features and a "pair" an
 * unordered pair of distinct rows.  doc/cvi.md says the same for users.
 *
 *   n_rows         rows that have features (assigned or not).
 *   n_clusters     K.
 *   outlier_share  unassigned rows / n_rows, in [0, 1]; lower means more
 *                  rows were clustered.  Undefined when n_rows = 0.
 *   compactness    (1/N) sum_k N_k * mean_{unordered pairs {x,x'} in C_k}
 *                  ||x - x'||  (the budgeted SVC paper's formula); a
 *                  singleton cluster contributes 0.  >= 0, lower is
 *                  better.  Defined when N >= 1.  Cost O(sum_k N_k^2 d),
 *                  bounded: exact when the clusters hold at most
 *                  P = limit (limit - 1) / 2 pairs in all (so always when
 *                  N <= limit); past that, each cluster's mean pairwise
 *                  distance is taken over a deterministic uniform sample
 *                  of its rows (an unbiased estimate; every cluster sampled
 *                  at the same rate, at least 2 rows), about P pairs in
 *                  all.  So the cost never passes O(P d + N).
 *   davies_bouldin (1/K) sum_i max_{j != i} (S_i + S_j) / ||c_i - c_j||,
 *                  c_i the centroid, S_i the mean Euclidean distance of
 *                  C_i's rows to c_i, as sklearn.metrics.davies_bouldin_
 *                  score: a pair of clusters whose centroids coincide is
 *                  skipped.  >= 0, lower is better.  Defined when
 *                  2 <= K <= N - 1.  Cost O(N d + K^2 d).
 *   silhouette     mean over rows of (b - a) / max(a, b), a the mean
 *                  distance to the other rows of the row's cluster, b the
 *                  least mean distance to the rows of another cluster; 0
 *                  for a row of a singleton cluster (and where a = b = 0),
 *                  as sklearn.metrics.silhouette_score.  In [-1, 1],
 *                  higher is better.  Exact when N <= `limit`; otherwise
 *                  computed on a deterministic uniform sample of `limit`
 *                  rows (as silhouette_score's sample_size).  Defined when
 *                  2 <= K <= rows - 1 on the rows used.  Cost
 *                  O(min(N, limit)^2 d).
 *
 *   The class-based indices use the M rows that have both a cluster and a
 *   class, through their K x J contingency table N_kj (built sparse, by
 *   sorting: O(M log M) time, O(M) memory, never O(M^2) pairs).  All are
 *   undefined when M = 0; they match scikit-learn 1.2 otherwise.
 *   purity         (1/M) sum_k max_j N_kj, in (0, 1], higher is better.
 *   rand           (pairs on which clustering and classes agree, both same
 *                  or both different) / (M (M-1) / 2), in [0, 1], higher
 *                  is better; 1 when M = 1.  Pair counts are exact
 *                  integers.
 *   adjusted_rand  Hubert and Arabie's ARI, 2 (TP TN - FN FP) /
 *                  ((TP+FN)(FN+TN) + (TP+FP)(FP+TN)) with exact integer
 *                  pair counts; 1 when FN = FP = 0.  In [-0.5, 1], 0 is
 *                  chance level, higher is better.
 *   nmi            I(clusters; classes) / ((H(clusters) + H(classes)) / 2),
 *                  natural logarithms (the base cancels).  1 when both
 *                  have a single label, 0 when only one of them has.  In
 *                  [0, 1], higher is better.
 *   n_classes      J.
 */
#ifndef SVC_CVI_H
#define SVC_CVI_H

#include "svc_core.h"

/* Rows up to which silhouette and compactness are exact (see above);
 * past it they evaluate about LIMIT^2 / 2 distances, LIMIT^2 for silhouette. */
#define SVC_CVI_EXACT_LIMIT 20000

/* Seed of the samples taken past the limit; fixed, so results repeat. */
#define SVC_CVI_SAMPLE_SEED UINT64_C(20250101)

/* The indices, in the order in which svc_cvi reports them. */
typedef enum SvcCviIndex
{
	SVC_CVI_N_ROWS = 0,
	SVC_CVI_N_CLUSTERS,
	SVC_CVI_OUTLIER_SHARE,
	SVC_CVI_COMPACTNESS,
	SVC_CVI_DAVIES_BOULDIN,
	SVC_CVI_SILHOUETTE,
	SVC_CVI_PURITY,				/* first of the indices that need a class */
	SVC_CVI_RAND,
	SVC_CVI_ADJUSTED_RAND,
	SVC_CVI_NMI,
	SVC_CVI_N_CLASSES,
	SVC_CVI_COUNT
} SvcCviIndex;

#define SVC_CVI_FIRST_CLASS_INDEX SVC_CVI_PURITY

/* Values of the indices; defined[i] is false where index i is undefined. */
typedef struct SvcCviResult
{
	double		value[SVC_CVI_COUNT];
	bool		defined[SVC_CVI_COUNT];
} SvcCviResult;

/*
 * What the indices are computed from.  The rows with a cluster are
 * (x, cluster); n_unassigned more rows had features but no cluster.  The
 * class-based indices use the n_labelled (lab_cluster, lab_class) pairs of
 * the rows that have both, and are computed only when has_class is set.
 */
typedef struct SvcCviInput
{
	int64_t		n;				/* rows with a cluster */
	int32_t		dims;			/* features per row, >= 1 when n > 0 */
	const double *x;			/* [n * dims], row-major */
	const int32_t *cluster;		/* [n] */
	int64_t		n_unassigned;	/* rows with features but no cluster */
	bool		has_class;
	int64_t		n_labelled;
	const int32_t *lab_cluster; /* [n_labelled] */
	const int32_t *lab_class;	/* [n_labelled] */
	int64_t		limit;			/* exact limit; 0 means SVC_CVI_EXACT_LIMIT */
} SvcCviInput;

/* Name of index i as svc_cvi reports it ("n_rows", "davies_bouldin", ...). */
const char *svc_cvi_name(SvcCviIndex i);

/* How many indices are reported: the first svc_cvi_count(has_class). */
int			svc_cvi_count(bool has_class);

/* Mark every index undefined. */
void		svc_cvi_result_init(SvcCviResult *r);

/* Every index the input allows: svc_cvi_internal, then svc_cvi_external. */
SvcStatus	svc_cvi_compute(const SvcEnv *env, const SvcCviInput *in,
							SvcCviResult *r, SvcError *err);

/*
 * svc_cvi_internal and svc_cvi_external each set only their own indices
 * in r, which the caller initialises with svc_cvi_result_init.
 *
 * Indices from the features: n_rows, n_clusters, outlier_share,
 * compactness, davies_bouldin, silhouette.  Non-finite features are
 * SVC_ERR_INVALID_INPUT.
 */
SvcStatus	svc_cvi_internal(const SvcEnv *env, int64_t n, int32_t dims,
							 const double *x, const int32_t *cluster,
							 int64_t n_unassigned, int64_t limit,
							 SvcCviResult *r, SvcError *err);

/* Indices from the classes: purity, rand, adjusted_rand, nmi, n_classes. */
SvcStatus	svc_cvi_external(const SvcEnv *env, int64_t n,
							 const int32_t *cluster, const int32_t *klass,
							 SvcCviResult *r, SvcError *err);

#endif							/* SVC_CVI_H */
