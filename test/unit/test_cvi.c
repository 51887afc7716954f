/*
 * test_cvi.c - unit tests of the clustering validity indices
 *
 * Values are checked on examples small enough to work out by hand (the
 * 17-point example of Manning, Raghavan and Schuetze's Introduction to
 * Information Retrieval, ch. 16.3, and four points on a line); the
 * comparison with scikit-learn on larger data is test/crosscheck/cvi_sklearn_test.py.
 */
#include "cvi.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-12 * fmax(1.0, fabs(b)))

/* An allocator that fails after a set number of allocations and counts
 * the blocks still live, so that every failure path is checked for leaks. */
typedef struct CountingAlloc
{
	int			allowed;		/* allocations left before failing; -1 = all */
	int			live;
	bool		interrupt_now;
} CountingAlloc;

/* alloc hook of the counting allocator. */
static void *
counting_alloc(void *ctx, size_t size)
{
	CountingAlloc *c = ctx;
	void	   *p;

	if (c->allowed == 0)
		return NULL;
	if (c->allowed > 0)
		c->allowed--;
	p = malloc(size);
	if (p != NULL)
		c->live++;
	return p;
}

/* release hook of the counting allocator. */
static void
counting_release(void *ctx, void *ptr)
{
	CountingAlloc *c = ctx;

	c->live--;
	free(ptr);
}

/* interrupt hook: asks to stop when interrupt_now is set. */
static bool
counting_interrupt(void *ctx)
{
	return ((CountingAlloc *) ctx)->interrupt_now;
}

/* An environment over the counting allocator c. */
static SvcEnv
counting_env(CountingAlloc *c)
{
	SvcEnv		env = {.alloc = counting_alloc, .release = counting_release, .interrupt = counting_interrupt, .ctx = c};

	return env;
}

/* Compute every index with the malloc environment; fails the test on error. */
static SvcCviResult
compute(const SvcCviInput *in)
{
	SvcCviResult r;
	SvcError	err;
	SvcStatus	s = svc_cvi_compute(&svc_env_malloc, in, &r, &err);

	CHECK(s == SVC_OK, "svc_cvi_compute failed: %s", s == SVC_OK ? "" : err.message);
	return r;
}

/* Input with the given rows and, when klass is not NULL, classes for all. */
static SvcCviInput
input(int64_t n, int32_t dims, const double *x, const int32_t *cluster,
	  const int32_t *klass)
{
	SvcCviInput in;

	memset(&in, 0, sizeof(in));
	in.n = n;
	in.dims = dims;
	in.x = x;
	in.cluster = cluster;
	in.has_class = klass != NULL;
	in.n_labelled = klass != NULL ? n : 0;
	in.lab_cluster = cluster;
	in.lab_class = klass;
	return in;
}

/* The IR book's 17 points: clusters of 6, 6 and 5; classes x, o, d. */
static void
test_textbook_example_gives_known_purity_rand_ari_nmi(void)
{
	int32_t		cl[17] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3};
	int32_t		cls[17] = {0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 2, 0, 0, 2, 2, 2};
	double		x[17];
	SvcCviInput in;
	SvcCviResult r;
	double		mi,
				hc,
				hk;

	for (int i = 0; i < 17; i++)
		x[i] = i;
	in = input(17, 1, x, cl, cls);
	r = compute(&in);

	/* purity (5 + 4 + 3) / 17; Rand (TP 20 + TN 72) / 136 pairs */
	CHECK(NEAR(r.value[SVC_CVI_PURITY], 12.0 / 17.0), "purity %g", r.value[SVC_CVI_PURITY]);
	CHECK(NEAR(r.value[SVC_CVI_RAND], 92.0 / 136.0), "rand %g", r.value[SVC_CVI_RAND]);
	/* ARI: (20 - 40*44/136) / (42 - 40*44/136) = 960 / 3952 */
	CHECK(NEAR(r.value[SVC_CVI_ADJUSTED_RAND], 960.0 / 3952.0), "ari %.17g",
		  r.value[SVC_CVI_ADJUSTED_RAND]);
	/* NMI from the cells: cluster sizes 6, 6, 5; class sizes 8, 5, 4 */
	mi = (5 * log(17.0 * 5 / (6 * 8)) + 1 * log(17.0 * 1 / (6 * 5)) +
		  1 * log(17.0 * 1 / (6 * 8)) + 4 * log(17.0 * 4 / (6 * 5)) +
		  1 * log(17.0 * 1 / (6 * 4)) + 2 * log(17.0 * 2 / (5 * 8)) +
		  3 * log(17.0 * 3 / (5 * 4))) / 17.0;
	hc = -(2 * (6 / 17.0) * log(6 / 17.0) + (5 / 17.0) * log(5 / 17.0));
	hk = -((8 / 17.0) * log(8 / 17.0) + (5 / 17.0) * log(5 / 17.0) +
		   (4 / 17.0) * log(4 / 17.0));
	CHECK(NEAR(r.value[SVC_CVI_NMI], mi / ((hc + hk) / 2)), "nmi %.17g", r.value[SVC_CVI_NMI]);
	CHECK(fabs(r.value[SVC_CVI_NMI] - 0.36456177185718996) < 1e-12,
		  "nmi %.17g differs from scikit-learn's", r.value[SVC_CVI_NMI]);
	CHECK(r.value[SVC_CVI_N_CLASSES] == 3 && r.value[SVC_CVI_N_CLUSTERS] == 3,
		  "counts %g %g", r.value[SVC_CVI_N_CLASSES], r.value[SVC_CVI_N_CLUSTERS]);
}

/* Points 0, 1, 3 | 10 on a line, and one row without a cluster. */
static void
test_line_example_gives_hand_computed_geometry(void)
{
	double		x[4] = {0, 1, 3, 10};
	int32_t		cl[4] = {7, 7, 7, -3};
	SvcCviInput in = input(4, 1, x, cl, NULL);
	SvcCviResult r;

	in.n_unassigned = 1;
	r = compute(&in);
	CHECK(r.value[SVC_CVI_N_ROWS] == 5, "n_rows %g", r.value[SVC_CVI_N_ROWS]);
	CHECK(r.value[SVC_CVI_N_CLUSTERS] == 2, "n_clusters %g", r.value[SVC_CVI_N_CLUSTERS]);
	CHECK(NEAR(r.value[SVC_CVI_OUTLIER_SHARE], 0.2), "outlier_share %g",
		  r.value[SVC_CVI_OUTLIER_SHARE]);
	/* pairs 1, 3, 2: mean 2, weight 3; the singleton adds 0 */
	CHECK(NEAR(r.value[SVC_CVI_COMPACTNESS], 6.0 / 4.0), "compactness %g",
		  r.value[SVC_CVI_COMPACTNESS]);
	/* S = 10/9 and 0, centroids 26/3 apart: (10/9) / (26/3) = 5/39 */
	CHECK(NEAR(r.value[SVC_CVI_DAVIES_BOULDIN], 5.0 / 39.0), "dbi %.17g",
		  r.value[SVC_CVI_DAVIES_BOULDIN]);
	/* rows 0, 1, 3: (b - a) / b = 8/10, 7.5/9, 4.5/7; singleton 0 */
	CHECK(NEAR(r.value[SVC_CVI_SILHOUETTE], (0.8 + 7.5 / 9 + 4.5 / 7) / 4),
		  "silhouette %.17g", r.value[SVC_CVI_SILHOUETTE]);
	CHECK(!r.defined[SVC_CVI_PURITY] && !r.defined[SVC_CVI_N_CLASSES],
		  "class indices without a class");
}

/* The scikit-learn documentation's small examples. */
static void
test_sklearn_doc_examples_give_its_values(void)
{
	double		x[4] = {0, 1, 2, 3};
	int32_t		t1[4] = {0, 0, 1, 2},
				p1[4] = {0, 0, 1, 1};
	int32_t		t2[4] = {0, 0, 1, 1},
				p2[4] = {1, 1, 0, 0};
	int32_t		t3[4] = {0, 0, 0, 0},
				p3[4] = {0, 1, 2, 3};
	SvcCviInput in = input(4, 1, x, p1, t1);
	SvcCviResult r = compute(&in);

	CHECK(NEAR(r.value[SVC_CVI_RAND], 5.0 / 6.0), "rand %g", r.value[SVC_CVI_RAND]);
	CHECK(NEAR(r.value[SVC_CVI_ADJUSTED_RAND], 4.0 / 7.0), "ari %g",
		  r.value[SVC_CVI_ADJUSTED_RAND]);

	in = input(4, 1, x, p2, t2);
	r = compute(&in);
	CHECK(r.value[SVC_CVI_RAND] == 1.0 && r.value[SVC_CVI_ADJUSTED_RAND] == 1.0 &&
		  r.value[SVC_CVI_NMI] == 1.0 && r.value[SVC_CVI_PURITY] == 1.0,
		  "a relabelled perfect match scores 1");

	in = input(4, 1, x, p3, t3);
	r = compute(&in);
	CHECK(r.value[SVC_CVI_NMI] == 0.0, "nmi %g", r.value[SVC_CVI_NMI]);
	CHECK(r.value[SVC_CVI_ADJUSTED_RAND] == 0.0, "ari %g", r.value[SVC_CVI_ADJUSTED_RAND]);
}

/* Zero rows: counts are 0, every other index undefined. */
static void
test_empty_input_has_counts_and_nothing_else(void)
{
	SvcCviInput in = input(0, 0, NULL, NULL, NULL);
	SvcCviResult r;

	in.has_class = true;
	r = compute(&in);
	CHECK(r.defined[SVC_CVI_N_ROWS] && r.value[SVC_CVI_N_ROWS] == 0, "n_rows");
	CHECK(r.defined[SVC_CVI_N_CLUSTERS] && r.value[SVC_CVI_N_CLUSTERS] == 0, "n_clusters");
	CHECK(r.defined[SVC_CVI_N_CLASSES] && r.value[SVC_CVI_N_CLASSES] == 0, "n_classes");
	for (int i = 0; i < SVC_CVI_COUNT; i++)
		if (i != SVC_CVI_N_ROWS && i != SVC_CVI_N_CLUSTERS && i != SVC_CVI_N_CLASSES)
			CHECK(!r.defined[i], "%s defined on empty input", svc_cvi_name(i));
}

/* Only unassigned rows: outlier share 1, no geometry. */
static void
test_all_unassigned_gives_outlier_share_one(void)
{
	SvcCviInput in = input(0, 0, NULL, NULL, NULL);
	SvcCviResult r;

	in.n_unassigned = 4;
	r = compute(&in);
	CHECK(r.value[SVC_CVI_N_ROWS] == 4 && r.value[SVC_CVI_OUTLIER_SHARE] == 1.0,
		  "n_rows %g, share %g", r.value[SVC_CVI_N_ROWS], r.value[SVC_CVI_OUTLIER_SHARE]);
	CHECK(!r.defined[SVC_CVI_COMPACTNESS] && !r.defined[SVC_CVI_SILHOUETTE],
		  "geometry without rows");
}

/* One row: compactness 0, DBI and silhouette undefined, agreement 1. */
static void
test_single_row_has_no_dbi_or_silhouette_and_full_agreement(void)
{
	double		x[2] = {1, 2};
	int32_t		cl[1] = {4},
				cls[1] = {9};
	SvcCviInput in = input(1, 2, x, cl, cls);
	SvcCviResult r = compute(&in);

	CHECK(r.defined[SVC_CVI_COMPACTNESS] && r.value[SVC_CVI_COMPACTNESS] == 0.0, "compactness");
	CHECK(!r.defined[SVC_CVI_DAVIES_BOULDIN] && !r.defined[SVC_CVI_SILHOUETTE],
		  "dbi and silhouette need two clusters");
	CHECK(r.value[SVC_CVI_PURITY] == 1.0 && r.value[SVC_CVI_RAND] == 1.0 &&
		  r.value[SVC_CVI_ADJUSTED_RAND] == 1.0 && r.value[SVC_CVI_NMI] == 1.0,
		  "single row agrees with itself");
	CHECK(r.value[SVC_CVI_OUTLIER_SHARE] == 0.0, "no outliers");
}

/* One cluster over several classes: DBI, silhouette undefined; NMI 0. */
static void
test_single_cluster_has_no_dbi_or_silhouette_and_zero_nmi(void)
{
	double		x[6] = {0, 1, 2, 3, 4, 5};
	int32_t		cl[6] = {1, 1, 1, 1, 1, 1},
				cls[6] = {1, 1, 1, 2, 2, 2};
	SvcCviInput in = input(6, 1, x, cl, cls);
	SvcCviResult r = compute(&in);

	CHECK(!r.defined[SVC_CVI_DAVIES_BOULDIN] && !r.defined[SVC_CVI_SILHOUETTE],
		  "one cluster");
	CHECK(r.value[SVC_CVI_NMI] == 0.0, "nmi %g", r.value[SVC_CVI_NMI]);
	CHECK(r.value[SVC_CVI_PURITY] == 0.5, "purity %g", r.value[SVC_CVI_PURITY]);
	/* the 15 pairwise distances of 0..5 sum to 35 */
	CHECK(NEAR(r.value[SVC_CVI_COMPACTNESS], 35.0 / 15.0), "compactness %g",
		  r.value[SVC_CVI_COMPACTNESS]);
}

/* Every row its own cluster: compactness 0, DBI and silhouette undefined. */
static void
test_all_singletons_have_zero_compactness_and_no_dbi(void)
{
	double		x[5] = {0, 1, 2, 3, 4};
	int32_t		cl[5] = {5, 4, 3, 2, 1};
	SvcCviInput in = input(5, 1, x, cl, NULL);
	SvcCviResult r = compute(&in);

	CHECK(r.value[SVC_CVI_COMPACTNESS] == 0.0, "compactness %g", r.value[SVC_CVI_COMPACTNESS]);
	CHECK(!r.defined[SVC_CVI_DAVIES_BOULDIN] && !r.defined[SVC_CVI_SILHOUETTE],
		  "all singletons");
	CHECK(r.value[SVC_CVI_N_CLUSTERS] == 5, "n_clusters %g", r.value[SVC_CVI_N_CLUSTERS]);
}

/* Renaming ids (including the int32 extremes) changes no index. */
static void
test_ids_are_arbitrary_integers(void)
{
	double		x[8] = {0, 1, 5, 6, 7, 20, 21, 3};
	int32_t		a[8] = {0, 0, 1, 1, 1, 2, 2, 0};
	int32_t		b[8] = {INT32_MAX, INT32_MAX, INT32_MIN, INT32_MIN, INT32_MIN, 0, 0, INT32_MAX};
	int32_t		ka[8] = {1, 1, 1, 2, 2, 3, 3, 3};
	int32_t		kb[8] = {-9, -9, -9, 40000, 40000, INT32_MIN, INT32_MIN, INT32_MIN};
	SvcCviInput in = input(8, 1, x, a, ka);
	SvcCviResult ra = compute(&in);
	SvcCviResult rb;

	in = input(8, 1, x, b, kb);
	rb = compute(&in);
	for (int i = 0; i < SVC_CVI_COUNT; i++)
		CHECK(ra.defined[i] == rb.defined[i] && NEAR(ra.value[i], rb.value[i]),
			  "%s: %g vs %g", svc_cvi_name(i), ra.value[i], rb.value[i]);
}

/* Only the pairs with a class count: swapping roles keeps Rand and NMI. */
static void
test_rand_and_nmi_are_symmetric(void)
{
	int32_t		u[10] = {1, 1, 2, 2, 2, 3, 3, 3, 3, 1};
	int32_t		v[10] = {5, 6, 6, 6, 7, 7, 7, 5, 5, 5};
	SvcCviResult r1,
				r2;
	SvcError	err;

	svc_cvi_result_init(&r1);
	svc_cvi_result_init(&r2);
	CHECK(svc_cvi_external(&svc_env_malloc, 10, u, v, &r1, &err) == SVC_OK, "external");
	CHECK(svc_cvi_external(&svc_env_malloc, 10, v, u, &r2, &err) == SVC_OK, "external");
	CHECK(NEAR(r1.value[SVC_CVI_RAND], r2.value[SVC_CVI_RAND]), "rand");
	CHECK(NEAR(r1.value[SVC_CVI_ADJUSTED_RAND], r2.value[SVC_CVI_ADJUSTED_RAND]), "ari");
	CHECK(NEAR(r1.value[SVC_CVI_NMI], r2.value[SVC_CVI_NMI]), "nmi");
	CHECK(!r1.defined[SVC_CVI_SILHOUETTE], "external sets only its own indices");
}

/* Two clusters with one centroid: the pair is skipped, as in scikit-learn. */
static void
test_dbi_skips_coinciding_centroids(void)
{
	double		x[8] = {1, 0, -1, 0, 0, 2, 0, -2};
	int32_t		cl[4] = {1, 1, 2, 2};
	SvcCviInput in = input(4, 2, x, cl, NULL);
	SvcCviResult r = compute(&in);

	CHECK(r.defined[SVC_CVI_DAVIES_BOULDIN] && r.value[SVC_CVI_DAVIES_BOULDIN] == 0.0,
		  "dbi %g", r.value[SVC_CVI_DAVIES_BOULDIN]);
}

/* Fill n rows of 2-D data in k clusters, deterministically. */
static void
grid_data(int n, int k, double *x, int32_t *cl)
{
	for (int i = 0; i < n; i++)
	{
		cl[i] = i % k;
		x[2 * i] = 10.0 * (i % k) + (i * 37 % 11) / 10.0;
		x[2 * i + 1] = (i * 53 % 13) / 10.0;
	}
}

/* Past the limit: the sample is repeatable and near the exact value. */
static void
test_sampling_past_the_limit_is_repeatable(void)
{
	enum
	{
		N = 300
	};
	double		x[2 * N];
	int32_t		cl[N];
	SvcCviInput in;
	SvcCviResult exact,
				s1,
				s2;

	grid_data(N, 3, x, cl);
	in = input(N, 2, x, cl, NULL);
	exact = compute(&in);
	in.limit = 40;
	s1 = compute(&in);
	s2 = compute(&in);
	CHECK(s1.value[SVC_CVI_SILHOUETTE] == s2.value[SVC_CVI_SILHOUETTE] &&
		  s1.value[SVC_CVI_COMPACTNESS] == s2.value[SVC_CVI_COMPACTNESS],
		  "a sample repeats");
	CHECK(s1.value[SVC_CVI_SILHOUETTE] != exact.value[SVC_CVI_SILHOUETTE],
		  "a sample was taken");
	CHECK(fabs(s1.value[SVC_CVI_SILHOUETTE] - exact.value[SVC_CVI_SILHOUETTE]) < 0.05,
		  "silhouette %g vs %g", s1.value[SVC_CVI_SILHOUETTE], exact.value[SVC_CVI_SILHOUETTE]);
	CHECK(fabs(s1.value[SVC_CVI_COMPACTNESS] / exact.value[SVC_CVI_COMPACTNESS] - 1) < 0.1,
		  "compactness %g vs %g", s1.value[SVC_CVI_COMPACTNESS], exact.value[SVC_CVI_COMPACTNESS]);
	CHECK(s1.value[SVC_CVI_DAVIES_BOULDIN] == exact.value[SVC_CVI_DAVIES_BOULDIN],
		  "dbi is always exact");
	in.limit = N;
	s1 = compute(&in);
	CHECK(s1.value[SVC_CVI_SILHOUETTE] == exact.value[SVC_CVI_SILHOUETTE] &&
		  s1.value[SVC_CVI_COMPACTNESS] == exact.value[SVC_CVI_COMPACTNESS],
		  "a limit of N is exact");
}

/* Bad arguments are errors with the right status, not crashes. */
static void
test_bad_input_is_rejected_with_its_status(void)
{
	double		x[4] = {0, 1, NAN, 3};
	int32_t		cl[4] = {1, 1, 2, 2};
	SvcCviInput in = input(4, 1, x, cl, NULL);
	SvcCviResult r;
	SvcError	err;

	CHECK(svc_cvi_compute(&svc_env_malloc, &in, &r, &err) == SVC_ERR_INVALID_INPUT,
		  "NaN feature");
	CHECK(strstr(err.detail, "Row 3") != NULL, "detail names the row: %s", err.detail);
	x[2] = INFINITY;
	CHECK(svc_cvi_compute(&svc_env_malloc, &in, &r, &err) == SVC_ERR_INVALID_INPUT,
		  "infinite feature");
	x[2] = 2;
	in.dims = 0;
	CHECK(svc_cvi_compute(&svc_env_malloc, &in, &r, &err) == SVC_ERR_INVALID_PARAMETER,
		  "zero dims");
	in.dims = 1;
	in.n = -1;
	CHECK(svc_cvi_compute(&svc_env_malloc, &in, &r, &err) == SVC_ERR_INVALID_PARAMETER,
		  "negative n");
	in.n = 4;
	in.limit = 1;
	CHECK(svc_cvi_compute(&svc_env_malloc, &in, &r, &err) == SVC_ERR_INVALID_PARAMETER,
		  "limit 1");
	in.limit = 0;
	in.cluster = NULL;
	CHECK(svc_cvi_compute(&svc_env_malloc, &in, &r, &err) == SVC_ERR_INVALID_PARAMETER,
		  "missing clusters");
	svc_cvi_result_init(&r);
	CHECK(svc_cvi_external(&svc_env_malloc, 3, cl, NULL, &r, &err) == SVC_ERR_INVALID_PARAMETER,
		  "missing classes");
}

/* Every allocation failure is SVC_ERR_NOMEM and leaks nothing. */
static void
test_allocation_failures_are_clean(void)
{
	enum
	{
		N = 60
	};
	double		x[2 * N];
	int32_t		cl[N],
				cls[N];
	SvcCviInput in;
	int			failures = 0;

	grid_data(N, 4, x, cl);
	for (int i = 0; i < N; i++)
		cls[i] = i % 3;
	in = input(N, 2, x, cl, cls);
	in.limit = 10;				/* take the sampling paths too */
	for (int allowed = 0; allowed < 200; allowed++)
	{
		CountingAlloc c = {allowed, 0, false};
		SvcEnv		env = counting_env(&c);
		SvcCviResult r;
		SvcError	err;
		SvcStatus	s = svc_cvi_compute(&env, &in, &r, &err);

		CHECK(c.live == 0, "%d blocks leaked after %d allocations", c.live, allowed);
		if (s == SVC_OK)
			break;
		CHECK(s == SVC_ERR_NOMEM, "status %d after %d allocations", (int) s, allowed);
		failures++;
	}
	CHECK(failures > 10, "only %d failure points", failures);
}

/* The interrupt hook stops the quadratic loops and leaks nothing. */
static void
test_interrupt_stops_and_cleans_up(void)
{
	enum
	{
		N = 40
	};
	double		x[2 * N];
	int32_t		cl[N];
	CountingAlloc c = {-1, 0, true};
	SvcEnv		env = counting_env(&c);
	SvcCviInput in;
	SvcCviResult r;
	SvcError	err;

	grid_data(N, 2, x, cl);
	in = input(N, 2, x, cl, cl);
	CHECK(svc_cvi_compute(&env, &in, &r, &err) == SVC_ERR_INTERRUPTED, "interrupted");
	CHECK(c.live == 0, "%d blocks leaked", c.live);
}

/* Names and counts as svc_cvi reports them. */
static void
test_names_follow_the_svc_cvi_order(void)
{
	CHECK(strcmp(svc_cvi_name(SVC_CVI_N_ROWS), "n_rows") == 0, "first name");
	CHECK(strcmp(svc_cvi_name(SVC_CVI_DAVIES_BOULDIN), "davies_bouldin") == 0, "dbi name");
	CHECK(strcmp(svc_cvi_name(SVC_CVI_N_CLASSES), "n_classes") == 0, "last name");
	CHECK(strcmp(svc_cvi_name(SVC_CVI_COUNT), "unknown") == 0, "out of range");
	CHECK(svc_cvi_count(false) == 6 && svc_cvi_count(true) == 11, "counts");
}

/*
 * Rows of any finite magnitude: the same rows times 2^600 (whose squared
 * distances would overflow) and times 2^-600 (whose would underflow) give
 * the same indices, compactness scaled by the same power of two, bit for
 * bit (scaling by a power of two is exact).
 */
static void
test_extreme_magnitudes_give_scaled_indices(void)
{
	enum
	{
		N = 60, D = 3
	};
	double		x[N * D],
				big[N * D],
				tiny[N * D];
	int32_t		cl[N];
	SvcCviInput in;
	SvcCviResult r0,
				rb,
				rt;

	for (int i = 0; i < N; i++)
	{
		cl[i] = i % 3;
		for (int j = 0; j < D; j++)
		{
			x[i * D + j] = (i % 3) * 5.0 + sin(i * 1.7 + j) * (1 + j);
			big[i * D + j] = ldexp(x[i * D + j], 600);
			tiny[i * D + j] = ldexp(x[i * D + j], -600);
		}
	}
	in = input(N, D, x, cl, NULL);
	r0 = compute(&in);
	in = input(N, D, big, cl, NULL);
	rb = compute(&in);
	in = input(N, D, tiny, cl, NULL);
	rt = compute(&in);
	for (int i = SVC_CVI_DAVIES_BOULDIN; i <= SVC_CVI_SILHOUETTE; i++)
		CHECK(r0.defined[i] && rb.defined[i] && rt.defined[i] &&
			  r0.value[i] == rb.value[i] && r0.value[i] == rt.value[i],
			  "%s: %g, x 2^600 %g, x 2^-600 %g", svc_cvi_name(i), r0.value[i],
			  rb.value[i], rt.value[i]);
	CHECK(rb.defined[SVC_CVI_COMPACTNESS] &&
		  rb.value[SVC_CVI_COMPACTNESS] == ldexp(r0.value[SVC_CVI_COMPACTNESS], 600) &&
		  rt.value[SVC_CVI_COMPACTNESS] == ldexp(r0.value[SVC_CVI_COMPACTNESS], -600),
		  "compactness scales with the rows: %g, %g, %g", r0.value[SVC_CVI_COMPACTNESS],
		  rb.value[SVC_CVI_COMPACTNESS], rt.value[SVC_CVI_COMPACTNESS]);
	/* rows near the largest double: compactness past it is undefined */
	for (int i = 0; i < N * D; i++)
		big[i] = x[i] > 0 ? 1.7e308 : -1.7e308;
	in = input(N, D, big, cl, NULL);
	rb = compute(&in);
	CHECK(!rb.defined[SVC_CVI_COMPACTNESS] || isfinite(rb.value[SVC_CVI_COMPACTNESS]),
		  "compactness is finite or undefined");
	for (int i = 0; i < SVC_CVI_COUNT; i++)
		CHECK(!rb.defined[i] || isfinite(rb.value[i]), "%s finite or undefined",
			  svc_cvi_name(i));
}

int
main(void)
{
	test_extreme_magnitudes_give_scaled_indices();
	test_textbook_example_gives_known_purity_rand_ari_nmi();
	test_line_example_gives_hand_computed_geometry();
	test_sklearn_doc_examples_give_its_values();
	test_empty_input_has_counts_and_nothing_else();
	test_all_unassigned_gives_outlier_share_one();
	test_single_row_has_no_dbi_or_silhouette_and_full_agreement();
	test_single_cluster_has_no_dbi_or_silhouette_and_zero_nmi();
	test_all_singletons_have_zero_compactness_and_no_dbi();
	test_ids_are_arbitrary_integers();
	test_rand_and_nmi_are_symmetric();
	test_dbi_skips_coinciding_centroids();
	test_sampling_past_the_limit_is_repeatable();
	test_bad_input_is_rejected_with_its_status();
	test_allocation_failures_are_clean();
	test_interrupt_stops_and_cleans_up();
	test_names_follow_the_svc_cvi_order();
	return unit_summary("test_cvi");
}
