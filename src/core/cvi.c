/*
 * cvi.c - clustering validity indices (definitions in cvi.h)
 *
 * Ids are mapped to dense indices by sorting, rows are grouped by cluster
 * with a counting sort, and the contingency table of clusters and classes
 * is built sparse by sorting (cluster, class) keys, so memory stays O(N)
 * whatever the number of distinct ids.  Sums of many distances accumulate
 * in long double, so the results agree with scikit-learn to about 1e-12.
 */
#include "cvi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How often (in rows) the quadratic loops call the interrupt hook. */
#define CVI_INTERRUPT_EVERY 256

static const char *const cvi_names[SVC_CVI_COUNT] = {
	"n_rows", "n_clusters", "outlier_share", "compactness",
	"davies_bouldin", "silhouette", "purity", "rand", "adjusted_rand",
	"nmi", "n_classes"
};

/* Rows of the features grouped by cluster (dense cluster indices). */
typedef struct CviGroups
{
	int64_t		k;				/* distinct clusters */
	int32_t    *index;			/* [n] dense cluster index of each row */
	int64_t    *count;			/* [k] rows per cluster */
	int64_t    *start;			/* [k + 1] offsets into member */
	int64_t    *member;			/* [n] row numbers, cluster by cluster */
} CviGroups;

const char *
svc_cvi_name(SvcCviIndex i)
{
	if ((int) i < 0 || i >= SVC_CVI_COUNT)
		return "unknown";
	return cvi_names[i];
}

int
svc_cvi_count(bool has_class)
{
	return has_class ? SVC_CVI_COUNT : SVC_CVI_FIRST_CLASS_INDEX;
}

void
svc_cvi_result_init(SvcCviResult *r)
{
	for (int i = 0; i < SVC_CVI_COUNT; i++)
	{
		r->value[i] = 0.0;
		r->defined[i] = false;
	}
}

/* Record a defined value. */
static void
set_value(SvcCviResult *r, SvcCviIndex i, double v)
{
	r->value[i] = v;
	r->defined[i] = true;
}

/* qsort comparator of int32 values. */
static int
cmp_int32(const void *a, const void *b)
{
	int32_t		x = *(const int32_t *) a;
	int32_t		y = *(const int32_t *) b;

	return (x > y) - (x < y);
}

/* qsort comparator of uint64 values. */
static int
cmp_uint64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return (x > y) - (x < y);
}

/* Allocate n elements of size bytes each, failing on overflow. */
static void *
alloc_array(const SvcEnv *env, size_t n, size_t size, SvcError *err)
{
	size_t		bytes;

	if (!svc_size_mul(n, size, &bytes))
	{
		svc_fail(err, SVC_ERR_LIMIT, "too many rows for the validity indices");
		return NULL;
	}
	return svc_alloc(env, bytes, err);
}

/*
 * Map n arbitrary ids to dense indices 0..k-1 in increasing id order:
 * index[i] receives the dense index of ids[i], *k the number of distinct
 * ids.  O(n log n) by sorting a copy.
 */
static SvcStatus
dense_ids(const SvcEnv *env, const int32_t *ids, int64_t n, int32_t *index,
		  int64_t *k, SvcError *err)
{
	int32_t    *sorted;
	int64_t		distinct = 0;

	*k = 0;
	if (n == 0)
		return SVC_OK;
	sorted = alloc_array(env, (size_t) n, sizeof(int32_t), err);
	if (sorted == NULL)
		return err->status;
	memcpy(sorted, ids, (size_t) n * sizeof(int32_t));
	qsort(sorted, (size_t) n, sizeof(int32_t), cmp_int32);
	for (int64_t i = 0; i < n; i++)
		if (i == 0 || sorted[i] != sorted[distinct - 1])
			sorted[distinct++] = sorted[i];
	if (distinct > INT32_MAX)
	{
		svc_free(env, sorted);
		return svc_fail(err, SVC_ERR_LIMIT, "too many distinct ids for the validity indices");
	}
	for (int64_t i = 0; i < n; i++)
	{
		int32_t    *hit = bsearch(&ids[i], sorted, (size_t) distinct,
								  sizeof(int32_t), cmp_int32);

		index[i] = (int32_t) (hit - sorted);
	}
	svc_free(env, sorted);
	*k = distinct;
	return SVC_OK;
}

/* Release what groups_build allocated. */
static void
groups_free(const SvcEnv *env, CviGroups *g)
{
	svc_free(env, g->index);
	svc_free(env, g->count);
	svc_free(env, g->start);
	svc_free(env, g->member);
	memset(g, 0, sizeof(*g));
}

/* Dense cluster indices and the rows of each cluster (counting sort). */
static SvcStatus
groups_build(const SvcEnv *env, const int32_t *cluster, int64_t n,
			 CviGroups *g, SvcError *err)
{
	int64_t    *fill;

	memset(g, 0, sizeof(*g));
	g->index = alloc_array(env, (size_t) n, sizeof(int32_t), err);
	if (g->index == NULL ||
		dense_ids(env, cluster, n, g->index, &g->k, err) != SVC_OK)
		goto fail;
	g->count = alloc_array(env, (size_t) g->k + 1, sizeof(int64_t), err);
	g->start = alloc_array(env, (size_t) g->k + 1, sizeof(int64_t), err);
	g->member = alloc_array(env, (size_t) n, sizeof(int64_t), err);
	if (g->count == NULL || g->start == NULL || g->member == NULL)
		goto fail;
	memset(g->count, 0, ((size_t) g->k + 1) * sizeof(int64_t));
	for (int64_t i = 0; i < n; i++)
		g->count[g->index[i]]++;
	g->start[0] = 0;
	for (int64_t c = 0; c < g->k; c++)
		g->start[c + 1] = g->start[c] + g->count[c];
	/* a copy of the offsets serves as the fill cursors */
	fill = alloc_array(env, (size_t) g->k + 1, sizeof(int64_t), err);
	if (fill == NULL)
		goto fail;
	memcpy(fill, g->start, ((size_t) g->k + 1) * sizeof(int64_t));
	for (int64_t i = 0; i < n; i++)
		g->member[fill[g->index[i]]++] = i;
	svc_free(env, fill);
	return SVC_OK;

fail:
	groups_free(env, g);
	return err->status;
}

/* Euclidean distance of two d-vectors. */
static inline double
distance(const double *a, const double *b, int32_t d)
{
	double		s = 0.0;

	for (int32_t t = 0; t < d; t++)
	{
		double		diff = a[t] - b[t];

		s += diff * diff;
	}
	return sqrt(s);
}

/*
 * Mean distance over the unordered pairs of the m rows rows[0..m-1] of x;
 * 0 when m < 2.
 */
static SvcStatus
mean_pair_distance(const SvcEnv *env, const double *x, int32_t d,
				   const int64_t *rows, int64_t m, double *mean,
				   SvcError *err)
{
	long double total = 0.0L;

	*mean = 0.0;
	if (m < 2)
		return SVC_OK;
	for (int64_t i = 0; i < m - 1; i++)
	{
		const double *xi = x + (size_t) rows[i] * (size_t) d;
		double		part = 0.0;

		if (i % CVI_INTERRUPT_EVERY == 0 && svc_interrupted(env, err))
			return err->status;
		for (int64_t j = i + 1; j < m; j++)
			part += distance(xi, x + (size_t) rows[j] * (size_t) d, d);
		total += part;
	}
	*mean = (double) (total / ((long double) m * (long double) (m - 1) / 2.0L));
	return SVC_OK;
}

/*
 * How many of a cluster's nk rows compactness averages the pairwise
 * distances over: all of them when scale >= 1 (the pairs of all clusters
 * fit the budget), otherwise the share scale of them, at least 2 (one
 * pair); scale is chosen so that about the budget of pairs is evaluated.
 */
static int64_t
compactness_sample_size(int64_t nk, long double scale)
{
	int64_t		m;

	if (scale >= 1.0L)
		return nk;
	m = (int64_t) floorl((long double) nk * scale);
	if (m < 2)
		m = 2;
	return m < nk ? m : nk;
}

/*
 * Compactness: (1/N) sum_k N_k * mean pairwise distance in C_k.  Exact when
 * sum_k N_k (N_k - 1) / 2 <= limit (limit - 1) / 2; past that each mean is
 * taken over a uniform sample of the cluster, about that many pairs in all.
 */
static SvcStatus
compactness(const SvcEnv *env, const double *x, int32_t d, int64_t n,
			const CviGroups *g, int64_t limit, double *result,
			SvcError *err)
{
	long double total = 0.0L;
	long double all_pairs = 0.0L;
	long double scale = 1.0L;
	long double budget = (long double) limit * (long double) (limit - 1) / 2.0L;
	int64_t    *scratch = NULL;
	SvcRng		rng;

	for (int64_t c = 0; c < g->k; c++)
		all_pairs += (long double) g->count[c] * (long double) (g->count[c] - 1) / 2.0L;
	if (all_pairs > budget)
		scale = sqrtl(budget / all_pairs);
	svc_rng_seed(&rng, SVC_CVI_SAMPLE_SEED);
	for (int64_t c = 0; c < g->k; c++)
	{
		const int64_t *rows = g->member + g->start[c];
		int64_t		nk = g->count[c];
		int64_t		m = compactness_sample_size(nk, scale);
		double		mean;

		if (m < nk)
		{
			/* sample from a copy: the grouping stays intact */
			if (scratch == NULL)
				scratch = alloc_array(env, (size_t) n, sizeof(int64_t), err);
			if (scratch == NULL)
				return err->status;
			memcpy(scratch, rows, (size_t) nk * sizeof(int64_t));
			svc_rng_sample(&rng, scratch, nk, m);
			rows = scratch;
		}
		if (mean_pair_distance(env, x, d, rows, m, &mean, err) != SVC_OK)
		{
			svc_free(env, scratch);
			return err->status;
		}
		total += (long double) nk * mean;
	}
	svc_free(env, scratch);
	*result = (double) (total / (long double) n);
	return SVC_OK;
}

/* Centroid of each cluster, into cent[k * d]. */
static void
centroids(const double *x, int32_t d, const CviGroups *g, double *cent,
		  long double *acc)
{
	for (int64_t c = 0; c < g->k; c++)
	{
		for (int32_t t = 0; t < d; t++)
			acc[t] = 0.0L;
		for (int64_t p = g->start[c]; p < g->start[c + 1]; p++)
		{
			const double *xi = x + (size_t) g->member[p] * (size_t) d;

			for (int32_t t = 0; t < d; t++)
				acc[t] += xi[t];
		}
		for (int32_t t = 0; t < d; t++)
			cent[(size_t) c * d + t] = (double) (acc[t] / (long double) g->count[c]);
	}
}

/* Davies-Bouldin index, as sklearn.metrics.davies_bouldin_score. */
static SvcStatus
davies_bouldin(const SvcEnv *env, const double *x, int32_t d,
			   const CviGroups *g, double *result, SvcError *err)
{
	int64_t		k = g->k;
	double	   *cent = alloc_array(env, (size_t) k, (size_t) d * sizeof(double), err);
	double	   *spread = alloc_array(env, (size_t) k, sizeof(double), err);
	long double *acc = alloc_array(env, (size_t) d, sizeof(long double), err);
	long double total = 0.0L;
	SvcStatus	status = SVC_OK;

	if (cent == NULL || spread == NULL || acc == NULL)
	{
		status = err->status;
		goto done;
	}
	centroids(x, d, g, cent, acc);
	/* S_c: mean distance of the cluster's rows to its centroid */
	for (int64_t c = 0; c < k; c++)
	{
		long double s = 0.0L;

		for (int64_t p = g->start[c]; p < g->start[c + 1]; p++)
			s += distance(x + (size_t) g->member[p] * (size_t) d,
						  cent + (size_t) c * d, d);
		spread[c] = (double) (s / (long double) g->count[c]);
	}
	for (int64_t i = 0; i < k; i++)
	{
		double		worst = 0.0;

		if (i % CVI_INTERRUPT_EVERY == 0 && svc_interrupted(env, err))
		{
			status = err->status;
			goto done;
		}
		for (int64_t j = 0; j < k; j++)
		{
			double		dc;

			if (j == i)
				continue;
			dc = distance(cent + (size_t) i * d, cent + (size_t) j * d, d);
			/* coinciding centroids: skipped, as scikit-learn does */
			if (dc > 0.0 && (spread[i] + spread[j]) / dc > worst)
				worst = (spread[i] + spread[j]) / dc;
		}
		total += worst;
	}
	*result = (double) (total / (long double) k);

done:
	svc_free(env, cent);
	svc_free(env, spread);
	svc_free(env, acc);
	return status;
}

/*
 * Mean silhouette of the m rows rows[0..m-1], which have dense cluster
 * indices lab[0..m-1] < k; *defined is false unless 2 <= clusters <= m-1.
 * The rows are copied cluster by cluster, so that the distances from one
 * row to a whole cluster are one contiguous loop.
 */
static SvcStatus
silhouette_rows(const SvcEnv *env, const double *x, int32_t d,
				const int64_t *rows, const int32_t *lab, int64_t m, int64_t k,
				double *result, bool *defined, SvcError *err)
{
	int64_t    *count = alloc_array(env, (size_t) k + 1, sizeof(int64_t), err);
	int64_t    *start = alloc_array(env, (size_t) k + 1, sizeof(int64_t), err);
	int32_t    *glab = alloc_array(env, (size_t) m, sizeof(int32_t), err);
	double	   *xs = alloc_array(env, (size_t) m, (size_t) d * sizeof(double), err);
	long double total = 0.0L;
	int64_t		present = 0;
	SvcStatus	status = SVC_OK;

	*defined = false;
	if (count == NULL || start == NULL || glab == NULL || xs == NULL)
	{
		status = err->status;
		goto done;
	}
	memset(count, 0, ((size_t) k + 1) * sizeof(int64_t));
	for (int64_t i = 0; i < m; i++)
		count[lab[i]]++;
	start[0] = 0;
	for (int64_t c = 0; c < k; c++)
	{
		start[c + 1] = start[c] + count[c];
		present += count[c] > 0;
	}
	if (present < 2 || present > m - 1)
		goto done;
	/* copy rows grouped by cluster; start[] serves as fill cursors */
	for (int64_t i = 0; i < m; i++)
	{
		int64_t		p = start[lab[i]]++;

		memcpy(xs + (size_t) p * d, x + (size_t) rows[i] * (size_t) d,
			   (size_t) d * sizeof(double));
		glab[p] = lab[i];
	}
	for (int64_t c = k; c > 0; c--)
		start[c] = start[c - 1];
	start[0] = 0;

	for (int64_t i = 0; i < m; i++)
	{
		const double *xi = xs + (size_t) i * d;
		int32_t		own = glab[i];
		double		a = 0.0;
		double		b = INFINITY;

		if (i % CVI_INTERRUPT_EVERY == 0 && svc_interrupted(env, err))
		{
			status = err->status;
			goto done;
		}
		if (count[own] < 2)
			continue;			/* a singleton's silhouette is 0 */
		for (int64_t c = 0; c < k; c++)
		{
			double		s = 0.0;

			if (count[c] == 0)
				continue;
			for (int64_t j = start[c]; j < start[c + 1]; j++)
				s += distance(xi, xs + (size_t) j * d, d);
			if (c == own)
				a = s / (double) (count[c] - 1);
			else if (s / (double) count[c] < b)
				b = s / (double) count[c];
		}
		if (fmax(a, b) > 0.0)
			total += (b - a) / fmax(a, b);
	}
	*result = (double) (total / (long double) m);
	*defined = true;

done:
	svc_free(env, count);
	svc_free(env, start);
	svc_free(env, glab);
	svc_free(env, xs);
	return status;
}

/* Silhouette over all rows, or over a sample of `limit` rows past it. */
static SvcStatus
silhouette(const SvcEnv *env, const double *x, int32_t d, int64_t n,
		   const CviGroups *g, int64_t limit, double *result, bool *defined,
		   SvcError *err)
{
	int64_t		m = n < limit ? n : limit;
	int64_t    *rows = alloc_array(env, (size_t) n, sizeof(int64_t), err);
	int32_t    *lab = alloc_array(env, (size_t) m, sizeof(int32_t), err);
	SvcStatus	status;
	SvcRng		rng;

	*defined = false;
	if (rows == NULL || lab == NULL)
	{
		svc_free(env, rows);
		svc_free(env, lab);
		return err->status;
	}
	for (int64_t i = 0; i < n; i++)
		rows[i] = i;
	if (m < n)
	{
		svc_rng_seed(&rng, SVC_CVI_SAMPLE_SEED);
		svc_rng_sample(&rng, rows, n, m);
	}
	for (int64_t i = 0; i < m; i++)
		lab[i] = g->index[rows[i]];
	status = silhouette_rows(env, x, d, rows, lab, m, g->k, result, defined,
							 err);
	svc_free(env, rows);
	svc_free(env, lab);
	return status;
}

SvcStatus
svc_cvi_internal(const SvcEnv *env, int64_t n, int32_t dims, const double *x,
				 const int32_t *cluster, int64_t n_unassigned, int64_t limit,
				 SvcCviResult *r, SvcError *err)
{
	CviGroups	g;
	size_t		cells = 0;
	int64_t		rows;
	double		v = 0.0;
	bool		ok;
	int			scale_exp;
	double	   *scaled = NULL;

	if (n < 0 || n_unassigned < 0 || limit < 0)
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
						"row counts must not be negative");
	if (limit == 0)
		limit = SVC_CVI_EXACT_LIMIT;
	if (limit < 2)
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
						"the exact limit of the validity indices must be at least 2");
	if (n > 0 && (dims < 1 || dims > SVC_MAX_DIMS))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
						"features must have between 1 and %d elements, not %d",
						SVC_MAX_DIMS, (int) dims);
	if (n > 0 && (x == NULL || cluster == NULL))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
						"features and clusters must be given");
	if (n > 0 && !svc_size_mul((size_t) n, (size_t) dims, &cells))
		return svc_fail(err, SVC_ERR_LIMIT, "too many rows for the validity indices");
	for (int64_t i = 0; i < n; i++)
		if (svc_first_nonfinite(x + (size_t) i * (size_t) dims, (size_t) dims) >= 0)
		{
			svc_fail(err, SVC_ERR_INVALID_INPUT,
					 "features must not contain NaN or infinity");
			svc_error_detail(err, "Row %lld of the rows with a cluster has one.",
							 (long long) i + 1);
			return err->status;
		}

	/*
	 * Distances between values past 2^400 would overflow (and below
	 * 2^-400 underflow): compute on the rows divided by a power of two,
	 * exactly, and scale compactness, the one index with a unit, back.
	 */
	{
		double		maxabs = 0.0;

		for (size_t i = 0; i < (size_t) n * (size_t) dims; i++)
			maxabs = fmax(maxabs, fabs(x[i]));
		scale_exp = svc_scale_exponent(maxabs);
		if (scale_exp != 0)
		{
			scaled = svc_alloc(env, sizeof(double) * cells, err);
			if (scaled == NULL)
				return SVC_ERR_NOMEM;
			for (size_t i = 0; i < cells; i++)
				scaled[i] = ldexp(x[i], -scale_exp);
			x = scaled;
		}
	}

	rows = n + n_unassigned;
	set_value(r, SVC_CVI_N_ROWS, (double) rows);
	if (rows > 0)
		set_value(r, SVC_CVI_OUTLIER_SHARE, (double) n_unassigned / (double) rows);
	set_value(r, SVC_CVI_N_CLUSTERS, 0.0);
	if (n == 0)
		return SVC_OK;

	if (groups_build(env, cluster, n, &g, err) != SVC_OK)
	{
		svc_free(env, scaled);
		return err->status;
	}
	set_value(r, SVC_CVI_N_CLUSTERS, (double) g.k);

	if (compactness(env, x, dims, n, &g, limit, &v, err) != SVC_OK)
		goto fail;
	/* undefined only if the true value is past the largest double */
	v = ldexp(v, scale_exp);
	if (isfinite(v))
		set_value(r, SVC_CVI_COMPACTNESS, v);

	if (g.k >= 2 && g.k <= n - 1)
	{
		if (davies_bouldin(env, x, dims, &g, &v, err) != SVC_OK)
			goto fail;
		set_value(r, SVC_CVI_DAVIES_BOULDIN, v);
	}

	if (silhouette(env, x, dims, n, &g, limit, &v, &ok, err) != SVC_OK)
		goto fail;
	if (ok)
		set_value(r, SVC_CVI_SILHOUETTE, v);

	groups_free(env, &g);
	svc_free(env, scaled);
	return SVC_OK;

fail:
	groups_free(env, &g);
	svc_free(env, scaled);
	return err->status;
}

/* n choose 2, exact. */
static inline uint64_t
pairs(int64_t n)
{
	return n < 2 ? 0 : (uint64_t) n * (uint64_t) (n - 1) / 2;
}

/*
 * Adjusted Rand index from exact pair counts, as scikit-learn's
 * 2 (tp tn - fn fp) / ((tp + fn)(fn + tn) + (tp + fp)(fp + tn)).  The
 * products need up to four times the bits of N: 128-bit integers where
 * the compiler has them, long double otherwise.
 */
static double
adjusted_rand(uint64_t tp, uint64_t fp, uint64_t fn, uint64_t tn)
{
	if (fn == 0 && fp == 0)
		return 1.0;
#ifdef __SIZEOF_INT128__
	{
		__int128	num = (__int128) tp * tn - (__int128) fn * fp;
		__int128	den = (__int128) (tp + fn) * (fn + tn) +
			(__int128) (tp + fp) * (fp + tn);

		return (double) (2.0L * (long double) num / (long double) den);
	}
#else
	{
		long double num = (long double) tp * tn - (long double) fn * fp;
		long double den = (long double) (tp + fn) * (fn + tn) +
			(long double) (tp + fp) * (fp + tn);

		return (double) (2.0L * num / den);
	}
#endif
}

/* -sum p log p over the n counts c[], p = c / total. */
static double
entropy(const int64_t *c, int64_t n, int64_t total)
{
	long double h = 0.0L;

	for (int64_t i = 0; i < n; i++)
		if (c[i] > 0)
		{
			double		p = (double) c[i] / (double) total;

			h -= (long double) p * log(p);
		}
	return (double) h;
}

/* The class-based indices from the sorted keys cluster * J + class. */
static void
external_from_table(const uint64_t *keys, int64_t n, int64_t k, int64_t j,
					const int64_t *a, const int64_t *b, SvcCviResult *r)
{
	uint64_t	same_cell = 0,
				same_cluster = 0,
				same_class = 0,
				all = pairs(n);
	uint64_t	tp,
				fp,
				fn,
				tn;
	int64_t		best_sum = 0,
				best = 0;
	long double mi = 0.0L;
	int64_t		run_start = 0;

	for (int64_t i = 1; i <= n; i++)
	{
		int64_t		nkj;
		uint64_t	ci,
					cj;

		if (i < n && keys[i] == keys[run_start])
			continue;
		/* cell keys[run_start] holds nkj rows */
		nkj = i - run_start;
		ci = keys[run_start] / (uint64_t) j;
		cj = keys[run_start] % (uint64_t) j;
		same_cell += pairs(nkj);
		if (nkj > best)
			best = nkj;
		/* the last cell of a cluster closes its purity maximum */
		if (i == n || keys[i] / (uint64_t) j != ci)
		{
			best_sum += best;
			best = 0;
		}
		/* exact ratio of integers, so independent cells give log(1) = 0 */
		mi += (long double) ((double) nkj / (double) n) *
			log(((double) n * (double) nkj) /
				((double) a[ci] * (double) b[cj]));
		run_start = i;
	}
	for (int64_t c = 0; c < k; c++)
		same_cluster += pairs(a[c]);
	for (int64_t c = 0; c < j; c++)
		same_class += pairs(b[c]);

	set_value(r, SVC_CVI_PURITY, (double) best_sum / (double) n);

	tp = same_cell;
	fp = same_cluster - same_cell;
	fn = same_class - same_cell;
	tn = all - same_cluster - same_class + same_cell;
	/* scikit-learn: no pairs, or full agreement, is a Rand index of 1 */
	set_value(r, SVC_CVI_RAND,
			  all == 0 || tp + tn == all ? 1.0 : (double) (tp + tn) / (double) all);
	set_value(r, SVC_CVI_ADJUSTED_RAND, adjusted_rand(tp, fp, fn, tn));

	if (k == 1 && j == 1)
		set_value(r, SVC_CVI_NMI, 1.0);
	else if (k == 1 || j == 1 || mi <= 0.0L)
		set_value(r, SVC_CVI_NMI, 0.0);
	else
	{
		double		h = (entropy(a, k, n) + entropy(b, j, n)) / 2.0;
		double		nmi = (double) mi / h;

		set_value(r, SVC_CVI_NMI, nmi > 1.0 ? 1.0 : nmi);
	}
}

SvcStatus
svc_cvi_external(const SvcEnv *env, int64_t n, const int32_t *cluster,
				 const int32_t *klass, SvcCviResult *r, SvcError *err)
{
	int32_t    *ci = NULL,
			   *cj = NULL;
	int64_t    *a = NULL,
			   *b = NULL;
	uint64_t   *keys = NULL;
	int64_t		k = 0,
				j = 0;
	SvcStatus	status = SVC_OK;

	if (n < 0)
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
						"row counts must not be negative");
	if (n > 0 && (cluster == NULL || klass == NULL))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
						"clusters and classes must be given");
	set_value(r, SVC_CVI_N_CLASSES, 0.0);
	if (n == 0)
		return SVC_OK;

	ci = alloc_array(env, (size_t) n, sizeof(int32_t), err);
	cj = alloc_array(env, (size_t) n, sizeof(int32_t), err);
	keys = alloc_array(env, (size_t) n, sizeof(uint64_t), err);
	if (ci == NULL || cj == NULL || keys == NULL ||
		dense_ids(env, cluster, n, ci, &k, err) != SVC_OK ||
		dense_ids(env, klass, n, cj, &j, err) != SVC_OK)
		goto fail;
	a = alloc_array(env, (size_t) k, sizeof(int64_t), err);
	b = alloc_array(env, (size_t) j, sizeof(int64_t), err);
	if (a == NULL || b == NULL)
		goto fail;
	memset(a, 0, (size_t) k * sizeof(int64_t));
	memset(b, 0, (size_t) j * sizeof(int64_t));
	for (int64_t i = 0; i < n; i++)
	{
		a[ci[i]]++;
		b[cj[i]]++;
		/* k, j <= 2^32, so the key fits in 64 bits */
		keys[i] = (uint64_t) ci[i] * (uint64_t) j + (uint64_t) cj[i];
	}
	if (svc_interrupted(env, err))
		goto fail;
	qsort(keys, (size_t) n, sizeof(uint64_t), cmp_uint64);
	external_from_table(keys, n, k, j, a, b, r);
	set_value(r, SVC_CVI_N_CLASSES, (double) j);
	goto done;

fail:
	status = err->status;
done:
	svc_free(env, ci);
	svc_free(env, cj);
	svc_free(env, a);
	svc_free(env, b);
	svc_free(env, keys);
	return status;
}

SvcStatus
svc_cvi_compute(const SvcEnv *env, const SvcCviInput *in, SvcCviResult *r,
				SvcError *err)
{
	svc_cvi_result_init(r);
	if (svc_cvi_internal(env, in->n, in->dims, in->x, in->cluster,
						 in->n_unassigned, in->limit, r, err) != SVC_OK)
		return err->status;
	if (!in->has_class)
		return SVC_OK;
	return svc_cvi_external(env, in->n_labelled, in->lab_cluster,
							in->lab_class, r, err);
}
