/*
 * test_complete_graph.c - unit tests of Ben-Hur's complete-graph labelling
 *
 * Trained models (svc_fit_rows) on blobs and a ring around a blob, and
 * hand-made 1-D models whose domain f >= 0 is known exactly, for the
 * segment test, the fill of rows outside the domain and the row cap.
 */
#include "unit.h"
#include "label_complete_graph.h"
#include "label_cut.h"
#include "fit.h"
#include "label.h"
#include "model_codec.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double
gauss(SvcRng *r)
{
	double		u = svc_rng_unit(r);
	double		v = svc_rng_unit(r);

	return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * M_PI * v);
}

/* Rows (2-D) and their classes 1..k. */
typedef struct Data
{
	int64_t		n;
	double	   *x;
	int32_t    *truth;
} Data;

static void
data_alloc(Data *D, int64_t n)
{
	D->n = n;
	D->x = calloc((size_t) n * 2, sizeof(double));
	D->truth = calloc((size_t) n, sizeof(int32_t));
}

static void
data_free(Data *D)
{
	free(D->x);
	free(D->truth);
}

/* Two blobs of per rows, sd 0.5, centres 8 apart, interleaved. */
static void
make_two_blobs(Data *D, uint64_t seed, int per)
{
	SvcRng		r;

	svc_rng_seed(&r, seed);
	data_alloc(D, 2 * (int64_t) per);
	for (int64_t i = 0; i < D->n; i++)
	{
		int			c = (int) (i % 2);

		D->x[2 * i] = 8.0 * c + 0.5 * gauss(&r);
		D->x[2 * i + 1] = 0.5 * gauss(&r);
		D->truth[i] = c + 1;
	}
}

/* A ring of radius 4 (noise 0.15) around a blob (sd 0.4) at its centre. */
static void
make_ring_blob(Data *D, uint64_t seed, int n_ring, int n_blob)
{
	SvcRng		r;

	svc_rng_seed(&r, seed);
	data_alloc(D, n_ring + n_blob);
	for (int64_t i = 0; i < D->n; i++)
	{
		if (i < n_ring)
		{
			double		t = 2.0 * M_PI * svc_rng_unit(&r);

			D->x[2 * i] = 4.0 * cos(t) + 0.15 * gauss(&r);
			D->x[2 * i + 1] = 4.0 * sin(t) + 0.15 * gauss(&r);
			D->truth[i] = 1;
		}
		else
		{
			D->x[2 * i] = 0.4 * gauss(&r);
			D->x[2 * i + 1] = 0.4 * gauss(&r);
			D->truth[i] = 2;
		}
	}
}

/* Each row's predicted cluster (svc_label_predict on the scaled row). */
static void
predict_all(const SvcModel *m, const Data *D, int32_t *lab)
{
	SvcLabelWork w;
	SvcError	err;
	double		xs[2];

	CHECK(svc_label_work_init(&svc_env_malloc, m, &w, &err) == SVC_OK, "work");
	for (int64_t i = 0; i < D->n; i++)
	{
		svc_model_scale_row(m, D->x + 2 * i, xs);
		lab[i] = svc_label_predict(m, xs, &w, NULL);
	}
	svc_label_work_free(&svc_env_malloc, &w);
}

/* Share of rows whose cluster's majority class is their own. */
static double
purity(const int32_t *lab, const int32_t *truth, int64_t n, int ka, int kb)
{
	int64_t    *t = calloc((size_t) (ka * kb), sizeof(int64_t));
	int64_t		s = 0;

	for (int64_t i = 0; i < n; i++)
		t[(lab[i] - 1) * kb + truth[i] - 1]++;
	for (int a = 0; a < ka; a++)
	{
		int64_t		mx = 0;

		for (int b = 0; b < kb; b++)
			mx = t[a * kb + b] > mx ? t[a * kb + b] : mx;
		s += mx;
	}
	free(t);
	return (double) s / (double) n;
}

/*
 * A width at the scale of the blobs (in standard scores): the default
 * "auto" gamma is narrower, and at it the domain breaks into small islands
 * that the graph faithfully reports as clusters.
 */
#define FIT_GAMMA 4.0

static SvcStatus
fit_graph(const Data *D, int32_t segment_points, SvcModel *m, SvcError *err)
{
	SvcOptions	opt;

	svc_options_default(&opt);
	opt.gamma = FIT_GAMMA;
	opt.labeling = SVC_LABELING_COMPLETE_GRAPH;
	opt.segment_points = segment_points;
	svc_error_clear(err);
	return svc_fit_rows(&svc_env_malloc, D->x, D->n, 2, &opt, m, err);
}

/* A trained model finds the classes; prediction gives every row one. */
static void
expect_fit(const char *name, const Data *D, int k_true)
{
	SvcModel	m;
	SvcError	err;
	int32_t    *lab = malloc(sizeof(int32_t) * (size_t) D->n);
	int64_t		total = 0;
	SvcStatus	st = fit_graph(D, 20, &m, &err);

	CHECK(st == SVC_OK, "%s: fit failed: %s", name, err.message);
	if (st == SVC_OK)
	{
		predict_all(&m, D, lab);
		CHECK(m.n_clusters == k_true, "%s: %d clusters, expected %d", name, m.n_clusters, k_true);
		CHECK(m.n_edges == 0 && m.n_eq >= m.n_clusters, "%s: %d edges, %d equilibria", name,
			  m.n_edges, m.n_eq);
		for (int32_t k = 0; k < m.n_clusters; k++)
		{
			total += m.cluster_size[k];
			CHECK(k == 0 || m.cluster_size[k] <= m.cluster_size[k - 1],
				  "%s: sizes by decreasing size", name);
		}
		CHECK(total == D->n, "%s: sizes add up to %lld", name, (long long) total);
		if (m.n_clusters >= 1)
		{
			double		p = purity(lab, D->truth, D->n, m.n_clusters, k_true);

			CHECK(p >= 0.99, "%s: purity %.3f", name, p);
			printf("  %-16s n=%-5lld eq=%-3d clusters=%d purity=%.3f gamma=%g sizes", name,
				   (long long) D->n, m.n_eq, m.n_clusters, p, m.gamma);
			for (int32_t k = 0; k < m.n_clusters; k++)
				printf(" %lld", (long long) m.cluster_size[k]);
			printf("\n");
		}
	}
	svc_model_free(&svc_env_malloc, &m);
	free(lab);
}

static void
test_trained_models(void)
{
	Data		D;

	make_two_blobs(&D, 3, 200);
	expect_fit("two blobs", &D, 2);
	data_free(&D);

	make_ring_blob(&D, 4, 400, 150);
	expect_fit("ring and blob", &D, 2);
	data_free(&D);
}

/*
 * A 1-D model with three bumps at -1, 0 and 1: alpha 1, gamma 50, offset
 * 0.5, so f >= 0 within sqrt(ln 2 / 50) = 0.118 of each (the bumps barely
 * overlap).  Rows at -1 and 1 are inside, 2 apart: their segment's
 * midpoint 0 is inside, its points 0.19 from an end are not.
 */
static void
bumps_model(SvcModel *m, int32_t segment_points)
{
	SvcError	err;

	memset(m, 0, sizeof(*m));
	svc_options_default(&m->opt);
	m->opt.labeling = SVC_LABELING_COMPLETE_GRAPH;
	m->opt.segment_points = segment_points;
	/* every component counts, however few its rows (the smallest cluster: below) */
	m->opt.min_cluster_size = 1;
	CHECK(svc_model_alloc(&svc_env_malloc, m, 1, 3, 0, 0, 0, &err) == SVC_OK, "alloc");
	m->gamma = 50.0;
	m->offset = 0.5;
	m->mul[0] = 1.0;
	for (int i = 0; i < 3; i++)
	{
		m->sv[i] = (double) (i - 1);
		m->alpha[i] = 1.0;
	}
}

/* rows: -1 and 1 inside, -3 and 5 outside, then 0.9 inside */
static const double bump_rows[] = {-1.0, 1.0, -3.0, 5.0, 0.9};

static void
graph_rows(const SvcModel *m, int64_t n, int32_t *lab, int64_t *nodes, SvcStatus *st)
{
	double		lam[8];
	SvcError	err;

	for (int64_t i = 0; i < n; i++)
		lam[i] = svc_model_decision_scaled(m, bump_rows + i) + m->offset;
	svc_error_clear(&err);
	*st = svc_graph_label_rows(&svc_env_malloc, m, bump_rows, n, lam, lab, nodes, &err);
}

static void
test_segment_points_and_fill(void)
{
	SvcModel	m;
	int32_t		lab[5];
	int64_t		nodes = -1;
	SvcStatus	st;

	/* m = 20: the points near the ends fall in the gaps, no link */
	bumps_model(&m, 20);
	graph_rows(&m, 5, lab, &nodes, &st);
	CHECK(st == SVC_OK && nodes == 3, "m=20: %d, %lld nodes", st, (long long) nodes);
	CHECK(lab[0] == 0 && lab[1] == 1 && lab[4] == 1,
		  "m=20: -1 and 1 apart (labels %d %d), 0.9 with 1 (%d)", lab[0], lab[1], lab[4]);
	CHECK(lab[2] == 0 && lab[3] == 1,
		  "outside rows take their nearest node's label: -3 -> %d, 5 -> %d", lab[2], lab[3]);
	svc_model_free(&svc_env_malloc, &m);

	/* m = 3: 0.25 and 0.75 are tested too, and fail */
	bumps_model(&m, 3);
	graph_rows(&m, 5, lab, &nodes, &st);
	CHECK(st == SVC_OK && lab[0] == 0 && lab[1] == 1, "m=3: apart (%d %d)", lab[0], lab[1]);
	svc_model_free(&svc_env_malloc, &m);

	/* m = 1: only the midpoint 0, inside: one component, lowest row names it */
	bumps_model(&m, 1);
	graph_rows(&m, 5, lab, &nodes, &st);
	CHECK(st == SVC_OK && lab[0] == 0 && lab[1] == 0 && lab[2] == 0 && lab[3] == 0 &&
		  lab[4] == 0, "m=1: the midpoint links -1 and 1 (%d %d %d %d %d)",
		  lab[0], lab[1], lab[2], lab[3], lab[4]);
	svc_model_free(&svc_env_malloc, &m);
}

/*
 * A 1-D model whose domain is [-1.5, 1.5] but for a gap |x| < 0.044: 30
 * support vectors 0.1 apart with none at 0, alpha 1, gamma 50 (a kernel
 * width 1 / sqrt(2 gamma) of 0.1), offset 1.6.  Rows at -1 and 1: 20
 * points on their segment are 2/21 apart, the nearest to 0 at +-0.048,
 * and step over the gap; "auto" spaces them a quarter of a width apart
 * (79 points, 0 among them) and finds it.
 */
static void
test_segment_points_auto(void)
{
	static const double rows[] = {-1.0, 1.0};
	SvcModel	m;
	SvcError	err;
	double		lam[2];
	int32_t		lab[2];
	int64_t		nodes = -1;

	for (int pass = 0; pass < 2; pass++)
	{
		memset(&m, 0, sizeof(m));
		svc_options_default(&m.opt);
		m.opt.labeling = SVC_LABELING_COMPLETE_GRAPH;
		m.opt.segment_points = pass == 0 ? SVC_SEGMENT_POINTS_AUTO : 20;
		m.opt.min_cluster_size = 1;
		CHECK(svc_model_alloc(&svc_env_malloc, &m, 1, 30, 0, 0, 0, &err) == SVC_OK, "alloc");
		m.gamma = 50.0;
		m.offset = 1.6;
		m.mul[0] = 1.0;
		for (int i = 0, k = -15; k <= 15; k++)
		{
			if (k == 0)
				continue;
			m.sv[i] = 0.1 * k;
			m.alpha[i++] = 1.0;
		}
		CHECK(svc_model_decision_scaled(&m, (const double[]) {0.0}) < 0.0 &&
			  svc_model_decision_scaled(&m, (const double[]) {0.048}) > 0.0,
			  "the gap is |x| < 0.048");
		for (int i = 0; i < 2; i++)
			lam[i] = svc_model_decision_scaled(&m, rows + i) + m.offset;
		svc_error_clear(&err);
		CHECK(svc_graph_label_rows(&svc_env_malloc, &m, rows, 2, lam, lab, &nodes, &err) ==
			  SVC_OK && nodes == 2, "segment_points %d: %s", m.opt.segment_points, err.message);
		if (pass == 0)
			CHECK(lab[0] == 0 && lab[1] == 1, "auto: -1 and 1 apart (%d %d)", lab[0], lab[1]);
		else
			CHECK(lab[0] == 0 && lab[1] == 0, "20 points: the gap is stepped over (%d %d)",
				  lab[0], lab[1]);
		svc_model_free(&svc_env_malloc, &m);
	}
}

/* The pair scan calls the interrupt hook before its first test. */
static void
test_interrupt(void)
{
	SvcModel	m;
	SvcError	err;
	int32_t		lab[5];
	double		lam[5];
	UnitBudget	b = {0, 0};
	SvcEnv		env = {.alloc = unit_counted_alloc, .release = unit_counted_free,
		.interrupt = unit_stop_after, .realloc = unit_counted_realloc, .ctx = &b};

	bumps_model(&m, 20);
	for (int i = 0; i < 5; i++)
		lam[i] = svc_model_decision_scaled(&m, bump_rows + i) + m.offset;
	CHECK(svc_graph_label_rows(&env, &m, bump_rows, 5, lam, lab, NULL, &err) ==
		  SVC_ERR_INTERRUPTED && b.live == 0, "interrupted pair scan: %ld blocks live", b.live);
	b.left = 2;					/* one check in the scan (5 rows need no second), one in the fill */
	CHECK(svc_graph_label_rows(&env, &m, bump_rows, 5, lam, lab, NULL, &err) == SVC_OK &&
		  b.live == 0, "one check: %s", err.message);
	svc_model_free(&svc_env_malloc, &m);
}

/* No row inside the domain: every row in one cluster. */
static void
test_no_node(void)
{
	SvcModel	m;
	SvcError	err;
	int32_t		lab[5];
	int64_t		nodes = -1;
	SvcStatus	st;

	bumps_model(&m, 20);
	m.offset = 5.0;				/* f < 0 everywhere */
	graph_rows(&m, 5, lab, &nodes, &st);
	CHECK(st == SVC_OK && nodes == 0, "no node: %d, %lld nodes", st, (long long) nodes);
	CHECK(lab[0] == 0 && lab[1] == 0 && lab[2] == 0 && lab[3] == 0 && lab[4] == 0,
		  "no node: every row labelled 0");

	/* through svc_label_train: one cluster, every equilibrium in it */
	m.rows_used = m.rows_seen = 5;
	CHECK(svc_label_train(&svc_env_malloc, &m, bump_rows, 5, lab, &err) == SVC_OK,
		  "label_train with no node: %s", err.message);
	CHECK(m.n_clusters == 1 && m.cluster_size[0] == 5 && lab[0] == 1 && lab[3] == 1,
		  "no node: %d clusters", m.n_clusters);
	CHECK(m.n_eq >= 2, "no node: %d equilibria, all in cluster 1", m.n_eq);
	svc_model_free(&svc_env_malloc, &m);

	/* with the domain back, the same rows make two clusters */
	bumps_model(&m, 20);
	m.rows_used = m.rows_seen = 5;
	CHECK(svc_label_train(&svc_env_malloc, &m, bump_rows, 5, lab, &err) == SVC_OK,
		  "label_train: %s", err.message);
	CHECK(m.n_clusters == 2 && lab[0] == lab[2] && lab[1] == lab[3] && lab[1] == lab[4] &&
		  lab[0] != lab[1] && m.cluster_size[0] == 3 && m.n_edges == 0,
		  "bumps: %d clusters, labels %d %d %d %d %d", m.n_clusters, lab[0], lab[1],
		  lab[2], lab[3], lab[4]);
	svc_model_free(&svc_env_malloc, &m);
}

/*
 * The smallest cluster: rows near the bumps at -1 and 1 (six each) and two
 * near the middle one, whose component is under the minimum size and gives
 * its rows to the nearest node of a larger one: 0.05 to the bump at 1
 * (0.92 away against 1.02), 0 to the lowest row of the two 0.97 away.
 * With every component under the size, the largest stays.
 */
static void
test_smallest_cluster(void)
{
	static const double rows[] = {-1.02, -1.01, -1.0, -0.99, -0.98, -0.97,
		0.97, 0.98, 0.99, 1.0, 1.01, 1.02, 0.0, 0.05, -5.0};
	int64_t		n = 15;
	double		lam[15];
	int32_t		lab[15];
	SvcModel	m;
	SvcError	err;

	bumps_model(&m, 20);
	for (int64_t i = 0; i < n; i++)
		lam[i] = svc_model_decision_scaled(&m, rows + i) + m.offset;
	/* every component a cluster: three, and -5 (outside) with -1's */
	CHECK(svc_graph_label_rows(&svc_env_malloc, &m, rows, n, lam, lab, NULL, &err) == SVC_OK,
		  "graph: %s", err.message);
	CHECK(lab[0] == 0 && lab[5] == 0 && lab[6] == 6 && lab[11] == 6 && lab[12] == 12 &&
		  lab[13] == 12 && lab[14] == 0, "size 1: three components (%d %d %d %d %d)",
		  lab[0], lab[6], lab[12], lab[13], lab[14]);
	/* at least 5 rows: the middle two join 1's component */
	m.opt.min_cluster_size = 5;
	CHECK(svc_graph_label_rows(&svc_env_malloc, &m, rows, n, lam, lab, NULL, &err) == SVC_OK,
		  "graph: %s", err.message);
	CHECK(lab[0] == 0 && lab[6] == 6 && lab[12] == 0 && lab[13] == 6 && lab[14] == 0,
		  "size 5: the small component's rows join their nearest large one (%d %d %d)",
		  lab[12], lab[13], lab[14]);
	/* at least 10: none is that large; the largest (ties: the lowest row) stays */
	m.opt.min_cluster_size = 10;
	CHECK(svc_graph_label_rows(&svc_env_malloc, &m, rows, n, lam, lab, NULL, &err) == SVC_OK,
		  "graph: %s", err.message);
	for (int64_t i = 0; i < n; i++)
		CHECK(lab[i] == 0, "size 10: every row with the largest component (row %lld: %d)",
			  (long long) i, lab[i]);
	/* the share: 3% of 15 rows is under the floor of 5 rows, as the tree's cut */
	m.opt.min_cluster_size = 0;
	m.opt.min_cluster_share = 0.03;
	CHECK(svc_graph_label_rows(&svc_env_malloc, &m, rows, n, lam, lab, NULL, &err) == SVC_OK &&
		  lab[12] == 0 && lab[13] == 6, "share 0.03: at least 5 rows (%d %d)", lab[12], lab[13]);
	CHECK(svc_cut_min_rows(&m.opt, 1000, 1000) == 30.0 && svc_cut_min_rows(&m.opt, 15, 15) == 5.0,
		  "min rows: 3%% of 1000 is 30, of 15 the floor 5");
	svc_model_free(&svc_env_malloc, &m);
}

/*
 * With the default options (the exact solver's automatic width), four
 * well-separated blobs of 100 rows are four clusters: the islands the
 * domain has at that width join their blob.
 */
static void
test_defaults_blobs(void)
{
	SvcRng		r;
	Data		D;
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	int32_t    *lab;
	static const double cx[4] = {0, 10, 0, 10},
				cy[4] = {0, 0, 10, 10};

	svc_rng_seed(&r, 11);
	data_alloc(&D, 400);
	for (int64_t i = 0; i < D.n; i++)
	{
		int			c = (int) (i % 4);

		D.x[2 * i] = cx[c] + gauss(&r);
		D.x[2 * i + 1] = cy[c] + gauss(&r);
		D.truth[i] = c + 1;
	}
	svc_options_default(&opt);
	opt.solver = SVC_SOLVER_SMO;
	opt.keep_isolated = 0;	/* bsgd's: the parser leaves it off for the others */
	opt.tol = SVC_SMO_DEFAULT_TOL;
	opt.max_iter = 0;
	opt.labeling = SVC_LABELING_COMPLETE_GRAPH;
	lab = malloc(sizeof(int32_t) * (size_t) D.n);
	CHECK(svc_fit_rows(&svc_env_malloc, D.x, D.n, 2, &opt, &m, &err) == SVC_OK,
		  "four blobs: %s", err.message);
	predict_all(&m, &D, lab);
	CHECK(m.n_clusters == 4, "four blobs, defaults: %d clusters", m.n_clusters);
	if (m.n_clusters == 4)
		CHECK(purity(lab, D.truth, D.n, 4, 4) >= 0.99, "four blobs: purity %.3f",
			  purity(lab, D.truth, D.n, 4, 4));
	svc_model_free(&svc_env_malloc, &m);
	free(lab);
	data_free(&D);
}

/* The majority of each equilibrium's rows, ties to the lowest label. */
static void
test_eq_parts(void)
{
	/* eq 0: labels 4,4,2 -> 4; eq 1: 2,4 -> tie, 2; eq 2: 4 -> 4; eq 3: 6 */
	const int32_t roweq[] = {0, 0, 1, 2, 0, 1, 3};
	const int32_t label[] = {4, 4, 2, 4, 2, 4, 6};
	int32_t		part[4];
	SvcError	err;

	CHECK(svc_graph_eq_parts(&svc_env_malloc, label, roweq, 7, 4, part, &err) == SVC_OK,
		  "eq_parts: %s", err.message);
	CHECK(part[0] == 0 && part[1] == 1 && part[2] == 0 && part[3] == 3,
		  "eq_parts: %d %d %d %d", part[0], part[1], part[2], part[3]);
	/* an equilibrium no row reached is an internal error, not a crash */
	CHECK(svc_graph_eq_parts(&svc_env_malloc, label, roweq, 7, 5, part, &err) == SVC_ERR_INTERNAL,
		  "an equilibrium without rows");
}

/* Past SVC_GRAPH_MAX_ROWS rows: refused, before any solver work. */
static void
test_row_cap(void)
{
	SvcError	err;
	SvcModel	m;
	Data		D;
	int32_t    *lab;
	double	   *lam;
	int64_t		nodes;

	CHECK(svc_graph_check_rows(SVC_GRAPH_MAX_ROWS, &err) == SVC_OK, "the cap itself is fine");
	svc_error_clear(&err);
	CHECK(svc_graph_check_rows(SVC_GRAPH_MAX_ROWS + 1, &err) == SVC_ERR_LIMIT &&
		  strstr(err.message, "too many rows for \"labeling\": \"complete-graph\": 3001") &&
		  strstr(err.detail, "at most 3000 rows") &&
		  strstr(err.hint, "Set \"sample\" to 3000 or less") &&
		  strstr(err.hint, "\"labeling\": \"tree\""),
		  "cap: %s / %s / %s", err.message, err.detail, err.hint);

	make_two_blobs(&D, 5, (SVC_GRAPH_MAX_ROWS + 2) / 2);
	CHECK(fit_graph(&D, 20, &m, &err) == SVC_ERR_LIMIT && m.n_sv == 0,
		  "fit past the cap refused before training: %s", err.message);
	svc_model_free(&svc_env_malloc, &m);

	/* the core function refuses too, before reading a row */
	bumps_model(&m, 20);
	lab = malloc(sizeof(int32_t) * (size_t) D.n);
	lam = calloc((size_t) D.n, sizeof(double));
	CHECK(svc_graph_label_rows(&svc_env_malloc, &m, D.x, D.n, lam, lab, &nodes, &err) ==
		  SVC_ERR_LIMIT, "label_rows past the cap");
	free(lab);
	free(lam);
	svc_model_free(&svc_env_malloc, &m);
	data_free(&D);
}

/*
 * The same rows give the same bytes; the bytes decode; the model has no
 * tree to recut; and an interrupt or a failed allocation at any point
 * stops cleanly.
 */
static void
test_model_and_failures(void)
{
	Data		D;
	SvcModel	a,
				b,
				c;
	SvcError	err;
	uint8_t    *ba,
			   *bb;
	size_t		na,
				nb;
	double	   *xs;

	make_two_blobs(&D, 6, 150);
	CHECK(fit_graph(&D, 20, &a, &err) == SVC_OK, "fit a: %s", err.message);
	CHECK(fit_graph(&D, 20, &b, &err) == SVC_OK, "fit b: %s", err.message);
	na = svc_model_encoded_size(&a);
	nb = svc_model_encoded_size(&b);
	ba = malloc(na);
	bb = malloc(nb);
	svc_model_encode(&a, ba);
	svc_model_encode(&b, bb);
	CHECK(na == nb && memcmp(ba, bb, na) == 0, "deterministic: same rows, same bytes");
	CHECK(svc_model_decode(&svc_env_malloc, ba, na, &c, &err) == SVC_OK &&
		  c.opt.labeling == SVC_LABELING_COMPLETE_GRAPH && c.opt.segment_points == 20 &&
		  c.n_clusters == a.n_clusters, "decode: %s", err.message);
	svc_model_free(&svc_env_malloc, &c);
	svc_error_clear(&err);
	CHECK(svc_cut_apply(&svc_env_malloc, &a, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strcmp(err.message, "the model has no saddle tree to cut") == 0 &&
		  strstr(err.detail, "\"complete-graph\"") != NULL,
		  "no recut: %s / %s", err.message, err.detail);

	/* segment_points is in the bytes */
	svc_model_free(&svc_env_malloc, &b);
	CHECK(fit_graph(&D, 7, &b, &err) == SVC_OK, "fit m=7: %s", err.message);
	free(bb);
	nb = svc_model_encoded_size(&b);
	bb = malloc(nb);
	svc_model_encode(&b, bb);
	CHECK(svc_model_decode(&svc_env_malloc, bb, nb, &c, &err) == SVC_OK &&
		  c.opt.segment_points == 7, "segment_points 7 survives: %s", err.message);
	svc_model_free(&svc_env_malloc, &c);
	/* "auto" too, apart from 20 (the default before it, stored as 0) */
	svc_model_free(&svc_env_malloc, &b);
	CHECK(fit_graph(&D, SVC_SEGMENT_POINTS_AUTO, &b, &err) == SVC_OK, "fit auto: %s", err.message);
	free(bb);
	nb = svc_model_encoded_size(&b);
	bb = malloc(nb);
	svc_model_encode(&b, bb);
	CHECK(svc_model_decode(&svc_env_malloc, bb, nb, &c, &err) == SVC_OK &&
		  c.opt.segment_points == SVC_SEGMENT_POINTS_AUTO && b.n_clusters == a.n_clusters,
		  "segment_points auto survives: %s", err.message);
	svc_model_free(&svc_env_malloc, &c);

	/* interrupts and allocation failures in labelling: no leak, model intact */
	xs = malloc(sizeof(double) * 2 * (size_t) D.n);
	for (int64_t i = 0; i < D.n; i++)
		svc_model_scale_row(&b, D.x + 2 * i, xs + 2 * i);
	for (int kind = 0; kind < 2; kind++)
		for (long left = 0; left < (under_valgrind() ? 4 : 40); left++)
		{
			UnitBudget	bud = {left, 0};
			SvcEnv		env = {.alloc = kind ? unit_fail_after_alloc : unit_counted_alloc,
				.release = unit_counted_free,
				.interrupt = kind ? NULL : unit_stop_after,
			.realloc = kind ? unit_fail_after_realloc : unit_counted_realloc, .ctx = &bud};
			SvcStatus	st;
			int32_t		k = b.n_clusters;

			st = svc_label_train(&env, &b, xs, D.n, NULL, &err);
			CHECK(st == SVC_OK || st == (kind ? SVC_ERR_NOMEM : SVC_ERR_INTERRUPTED),
				  "failure %d after %ld: status %d", kind, left, st);
			CHECK(bud.live == 0 || st == SVC_OK, "failure %d after %ld: %ld blocks leaked",
				  kind, left, bud.live);
			CHECK(b.n_clusters == k, "failure %d after %ld: model changed", kind, left);
			if (st == SVC_OK)
				break;
		}
	svc_model_free(&svc_env_malloc, &a);
	svc_model_free(&svc_env_malloc, &b);
	free(ba);
	free(bb);
	free(xs);
	data_free(&D);
}

int
main(void)
{
	test_segment_points_and_fill();
	test_segment_points_auto();
	test_smallest_cluster();
	test_defaults_blobs();
	test_no_node();
	test_interrupt();
	test_eq_parts();
	test_row_cap();
	test_trained_models();
	test_model_and_failures();
	return unit_summary("test_complete_graph");
}
