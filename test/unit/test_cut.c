/*
 * test_cut.c - every cut rule on a small tree worked out by hand, and the
 * decoder's check of a stored tree
 *
 * Five equilibria, offset 0.5 (lambda = f + 0.5):
 *   eq      0    1    2    3    4
 *   peak  1.0  0.9  1.0  0.5  0.8
 *   rows   40   40   40    2   40
 * tree edges by decreasing pass: 0-1 at 0.8, 3-4 at 0.45, 1-2 at 0.2,
 * 2-3 at 0.1.  The minimum size is max(5, 3% of 162) = 5, so eq 3 is too
 * small to stand alone.
 */
#include "bytes.h"
#include "label_cut.h"
#include "model_codec.h"
#include "model_report.h"
#include "options_text.h"
#include "unit.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double peak[5] = {1.0, 0.9, 1.0, 0.5, 0.8};
static const int64_t rows[5] = {40, 40, 40, 2, 40};
static const int32_t ea[4] = {0, 3, 1, 2};
static const int32_t eb[4] = {1, 4, 2, 3};
static const double pass[4] = {0.8, 0.45, 0.2, 0.1};

static void
make_tree(SvcModel *m)
{
	SvcError	err;

	memset(m, 0, sizeof(*m));
	svc_options_default(&m->opt);
	CHECK(svc_model_alloc(&svc_env_malloc, m, 1, 1, 5, 1, 4, &err) == SVC_OK, "alloc");
	m->offset = 0.5;
	m->gamma = 1.0;
	m->mul[0] = 1.0;
	m->solver = SVC_SOLVER_BSGD;
	m->boundary = SVC_BOUNDARY_HYPERPLANE;
	m->rows_used = m->rows_seen = 162;
	for (int i = 0; i < 5; i++)
	{
		m->eq_f[i] = peak[i] - 0.5;
		m->eq_rows[i] = rows[i];
		m->eq[i] = i;
	}
	for (int k = 0; k < 4; k++)
	{
		m->edge_a[k] = ea[k];
		m->edge_b[k] = eb[k];
		m->edge_f[k] = pass[k] - 0.5;
	}
}

/* Cut with the options a JSON object gives; compare ids and sizes. */
static void
expect_cut(const char *opts, int K, const int32_t *ids, const int64_t *sizes)
{
	SvcModel	m;
	SvcError	err;
	bool		same;

	make_tree(&m);
	CHECK(svc_options_parse_cut(opts, strlen(opts), &m.opt, &err) == SVC_OK, "%s parses", opts);
	CHECK(svc_cut_apply(&svc_env_malloc, &m, &err) == SVC_OK, "%s cuts", opts);
	same = m.n_clusters == K && memcmp(m.eq_cluster, ids, sizeof(int32_t) * 5) == 0 &&
		memcmp(m.cluster_size, sizes, sizeof(int64_t) * (size_t) K) == 0;
	CHECK(same, "%s: %d clusters, ids %d %d %d %d %d", opts, m.n_clusters,
		  m.eq_cluster[0], m.eq_cluster[1], m.eq_cluster[2], m.eq_cluster[3], m.eq_cluster[4]);
	/* what was cut is what the decoder accepts */
	CHECK(svc_cut_check(&svc_env_malloc, &m, &err) == SVC_OK, "%s: the check accepts it", opts);
	svc_model_free(&svc_env_malloc, &m);
}

static void
test_rules(void)
{
	const int32_t three[5] = {1, 1, 3, 2, 2};
	const int64_t three_sizes[3] = {80, 42, 40};
	const int32_t two[5] = {1, 1, 1, 2, 2};
	const int64_t two_sizes[2] = {120, 42};
	const int32_t one[5] = {1, 1, 1, 1, 1};
	const int64_t one_sizes[1] = {162};
	const int32_t four[5] = {2, 3, 4, 1, 1};
	const int64_t four_sizes[4] = {42, 40, 40, 40};

	/* persistence 0.3: 0-1 passes at 0.8 >= 0.27 and joins; 1-2 (0.2 < 0.3)
	 * and 2-3 (0.1 < 0.24) stay cut; eq 3 joins 4 for its size */
	expect_cut("{}", 3, three, three_sizes);
	/* ratio 0.15: 1-2 at 0.2 >= 0.15 joins too, 2-3 at 0.1 < 0.12 not */
	expect_cut("{\"merge_ratio\": 0.15}", 2, two, two_sizes);
	/* n_clusters removes the lowest passes between parts of 5 rows or more */
	expect_cut("{\"n_clusters\": 1}", 1, one, one_sizes);
	expect_cut("{\"n_clusters\": 2}", 2, two, two_sizes);
	expect_cut("{\"n_clusters\": 3}", 3, three, three_sizes);
	/* only 4 parts of at least 5 rows exist */
	expect_cut("{\"n_clusters\": 9}", 4, four, four_sizes);
	/* level f = 0 is lambda 0.5: 0-1 stays, 1-2 and 2-3 go */
	expect_cut("{\"level\": 0}", 3, three, three_sizes);
	/* level f = 0.35 is lambda 0.85: 0-1 goes too; ties in size by lowest eq */
	expect_cut("{\"level\": 0.35}", 4, four, four_sizes);
	/* excess of mass (worked in the header of label_cut.c's terms): {0,1} is
	 * worth 48 against 12 for its leaves, the root and {0,1,2} less than
	 * their parts */
	expect_cut("{\"cut\": \"eom\"}", 3, three, three_sizes);
	/* a large minimum size leaves one cluster */
	expect_cut("{\"min_cluster_size\": 50}", 1, one, one_sizes);
	expect_cut("{\"min_cluster_share\": 0.3}", 1, one, one_sizes);
}

/*
 * A recut with the model's own options leaves it alone, even without a
 * tree; other options cut it again; a failed one changes nothing.
 */
static void
test_recut(void)
{
	SvcModel	m;
	SvcOptions	opt;
	SvcError	err;
	int32_t    *ids;

	make_tree(&m);
	CHECK(svc_cut_apply(&svc_env_malloc, &m, &err) == SVC_OK && m.n_clusters == 3, "cut");
	ids = m.eq_cluster;
	opt = m.opt;
	CHECK(svc_model_recut(&svc_env_malloc, &m, &opt, &err) == SVC_OK &&
		  m.eq_cluster == ids && m.n_clusters == 3, "its own options leave the model alone");
	CHECK(svc_options_parse_cut("{\"merge_ratio\": 0.15}", 21, &opt, &err) == SVC_OK, "parses");
	CHECK(svc_model_recut(&svc_env_malloc, &m, &opt, &err) == SVC_OK &&
		  m.n_clusters == 2 && m.opt.merge_ratio == 0.15, "other options cut again");
	opt = m.opt;
	m.opt.labeling = SVC_LABELING_PAPER;
	opt.labeling = SVC_LABELING_PAPER;
	CHECK(svc_model_recut(&svc_env_malloc, &m, &opt, &err) == SVC_OK,
		  "a model without a tree and its own options is left alone");
	opt.merge_ratio = 0.3;
	CHECK(svc_model_recut(&svc_env_malloc, &m, &opt, &err) == SVC_ERR_INVALID_PARAMETER &&
		  m.opt.merge_ratio == 0.15 && m.n_clusters == 2,
		  "a failed recut leaves the model and its options as they were");
	svc_model_free(&svc_env_malloc, &m);
}

/*
 * A model whose min_cluster_size counts labelled rows (every model from
 * before 0.5.0: byte 121's bit 2 is 0) keeps its clusters through a recut
 * with its own options; naming rows of the sample cuts it again.  The
 * tree's 162 labelled rows stand for a sample of 1,620: 50 rows of the
 * sample are 5 labelled rows.
 */
static void
test_recut_size_rows(void)
{
	SvcModel	m;
	SvcOptions	opt;
	SvcError	err;
	const char *old = "{\"min_cluster_size\": 50, \"min_cluster_size_rows\": \"labelled\"}";
	const char *sample = "{\"min_cluster_size_rows\": \"sample\"}";

	make_tree(&m);
	m.rows_used = m.rows_seen = 1620;
	CHECK(svc_options_parse_cut(old, strlen(old), &m.opt, &err) == SVC_OK, "%s", err.message);
	CHECK(svc_cut_apply(&svc_env_malloc, &m, &err) == SVC_OK && m.n_clusters == 1,
		  "50 labelled rows: one cluster (%d)", m.n_clusters);
	opt = m.opt;
	CHECK(svc_model_recut(&svc_env_malloc, &m, &opt, &err) == SVC_OK && m.n_clusters == 1 &&
		  m.opt.min_size_rows == SVC_SIZE_ROWS_LABELLED, "its own options keep its cluster");
	CHECK(svc_options_parse_cut(sample, strlen(sample), &opt, &err) == SVC_OK, "%s", err.message);
	CHECK(svc_model_recut(&svc_env_malloc, &m, &opt, &err) == SVC_OK && m.n_clusters == 3 &&
		  m.opt.min_size_rows == SVC_SIZE_ROWS_SAMPLE,
		  "50 rows of the sample (5 labelled rows): 3 clusters (%d)", m.n_clusters);
	svc_model_free(&svc_env_malloc, &m);
}

/*
 * Cut m (built by hand) with the cut options opts and check that it gives
 * K clusters (and, when first_size >= 0, that the largest holds first_size
 * rows) and that svc_cut_check accepts the result; frees m.  what says
 * which case it is.
 */
static void
cut_expect(SvcModel *m, const char *opts, int K, int64_t first_size, const char *what)
{
	SvcError	err;

	CHECK(svc_options_parse_cut(opts, strlen(opts), &m->opt, &err) == SVC_OK, "%s", err.message);
	CHECK(svc_cut_apply(&svc_env_malloc, m, &err) == SVC_OK && m->n_clusters == K &&
		  (first_size < 0 || m->cluster_size[0] == first_size),
		  "%s, %s: %d clusters (%d), the largest %lld rows (%lld)", what, opts, K,
		  m->n_clusters, (long long) first_size,
		  (long long) (m->n_clusters > 0 ? m->cluster_size[0] : 0));
	CHECK(svc_cut_check(&svc_env_malloc, m, &err) == SVC_OK, "the check accepts it: %s",
		  err.message);
	svc_model_free(&svc_env_malloc, m);
}

/*
 * The model of the band cases below: three equilibria of f = 0.5 in dims
 * columns (coordinates zero), a chain of passes 0-1 and 1-2, n_sv support
 * vectors (zero), gamma 1, rows_seen rows.
 */
static void
band_model(SvcModel *m, int dims, int n_sv, int64_t rows_seen)
{
	SvcError	err;

	memset(m, 0, sizeof(*m));
	svc_options_default(&m->opt);
	CHECK(svc_model_alloc(&svc_env_malloc, m, dims, n_sv, 3, 1, 2, &err) == SVC_OK, "alloc");
	m->offset = 0.5;
	m->gamma = 1.0;
	m->mul[0] = 1.0;
	m->solver = SVC_SOLVER_BSGD;
	m->boundary = SVC_BOUNDARY_HYPERPLANE;
	m->rows_used = m->rows_seen = rows_seen;
	memset(m->eq, 0, sizeof(double) * 3 * (size_t) dims);
	memset(m->sv, 0, sizeof(double) * (size_t) n_sv * (size_t) dims);
	for (int i = 0; i < 3; i++)
		m->eq_f[i] = 0.5;
	m->edge_a[0] = 0;
	m->edge_b[0] = 1;
	m->edge_f[0] = 0.01 - 0.5;
	m->edge_a[1] = 1;
	m->edge_b[1] = 2;
	m->edge_f[1] = 0.005 - 0.5;
}

/*
 * "separated" (the default): the hand tree of 162 labelled rows for a
 * sample of 1,620, min_cluster_size 50 (5 labelled rows apart, 50 not).
 * Its parts {0, 1} (80 rows), {2} (40) and {3, 4} (42) are all under 50:
 * one cluster in labelled rows, three in rows of the sample.  Four support
 * vectors give {0, 1} and {3, 4} a spread of 0.5 around their peaks (eqs
 * 0 and 4).  With eq 2 ten or more from both, it lies apart and stands;
 * moved to 1.5 from eq 0 (3 spreads) it is a fragment of {0, 1} and joins
 * it, while {3, 4}, 19.5 away, still stands.
 */
static void
cut_separated(double eq2_at, const char *opts, int K, int64_t first_size)
{
	static const double eq_at[5] = {0.0, 1.0, 0.0, 20.0, 21.0};
	static const double sv_at[4] = {0.5, -0.5, 21.5, 20.5};
	SvcModel	m;
	SvcModel	t;
	SvcError	err;
	char		what[64];

	make_tree(&t);
	memset(&m, 0, sizeof(m));
	CHECK(svc_model_alloc(&svc_env_malloc, &m, 1, 4, 5, 1, 4, &err) == SVC_OK, "alloc");
	m.opt = t.opt;
	m.offset = t.offset;
	m.gamma = t.gamma;
	m.mul[0] = 1.0;
	m.solver = t.solver;
	m.boundary = t.boundary;
	m.rows_used = m.rows_seen = 1620;
	memcpy(m.eq_f, t.eq_f, sizeof(double) * 5);
	memcpy(m.eq_rows, t.eq_rows, sizeof(int64_t) * 5);
	memcpy(m.edge_a, t.edge_a, sizeof(int32_t) * 4);
	memcpy(m.edge_b, t.edge_b, sizeof(int32_t) * 4);
	memcpy(m.edge_f, t.edge_f, sizeof(double) * 4);
	svc_model_free(&svc_env_malloc, &t);
	for (int i = 0; i < 5; i++)
		m.eq[i] = i == 2 ? eq2_at : eq_at[i];
	for (int i = 0; i < 4; i++)
	{
		m.sv[i] = sv_at[i];
		m.alpha[i] = 0.25;
	}
	snprintf(what, sizeof(what), "eq 2 at %g", eq2_at);
	cut_expect(&m, opts, K, first_size, what);
}

/*
 * "separated" under the floor in sample rows: eq 1 (3 labelled rows, under
 * the 5 that 50 rows of the 2,030-row sample make) between eq 0 (100 rows,
 * one support vector on it: no spread of its own) and eq 2 (100 rows, at
 * 100, support vectors 2 either side).  The cut in labelled rows keeps
 * {0, 1} and {2}: pooled spread sqrt(0.9 * 4) = 1.9, so eq 1 stands only
 * beyond 4 x 1.9 from eq 0, though eq 0's own spread is 0.
 */
static void
cut_below_sample_floor(double eq1_at, const char *opts, int K)
{
	static const double sv_at[3] = {0.0, 98.0, 102.0};
	static const double sv_alpha[3] = {0.1, 0.45, 0.45};
	SvcModel	m;
	char		what[64];

	band_model(&m, 1, 3, 2030);
	m.eq[1] = eq1_at;
	m.eq[2] = 100.0;
	m.eq_rows[0] = 100;
	m.eq_rows[1] = 3;
	m.eq_rows[2] = 100;
	for (int i = 0; i < 3; i++)
	{
		m.sv[i] = sv_at[i];
		m.alpha[i] = sv_alpha[i];
	}
	snprintf(what, sizeof(what), "eq 1 (3 rows) at %g", eq1_at);
	cut_expect(&m, opts, K, -1, what);
}

/*
 * "separated" above two columns: eq 1 (20 labelled rows, in the band)
 * on the x axis beside eq 0, whose support vectors lie at (+-1, +-6): a
 * spread of sqrt(37) = 6.1 from its peak but 1 along the line to eq 1.
 * In 3 columns eq 1 stands beyond 10 x 1 from eq 0; in 2 columns only
 * beyond 4 x 6.1 = 24.3.  eq 2 (100 rows) lies 100 along x.  With the
 * support vectors at (+-6, +-1) instead (across: false), the spread along
 * the line is 6 too, and in 3 columns eq 1 stands beyond 3.5 x 6.1 = 21.3.
 */
static void
cut_along_line(int dims, double eq1_at, int K, bool across)
{
	static const double sv_xy[6][2] = {{1, 6}, {1, -6}, {-1, 6}, {-1, -6}, {98, 0}, {102, 0}};
	SvcModel	m;
	char		what[80];

	band_model(&m, dims, 6, 2200);
	m.eq[1 * dims] = eq1_at;
	m.eq[2 * dims] = 100.0;
	m.eq_rows[0] = 100;
	m.eq_rows[1] = 20;
	m.eq_rows[2] = 100;
	for (int i = 0; i < 6; i++)
	{
		bool		swap = !across && i < 4;

		m.sv[i * dims] = sv_xy[i][swap ? 1 : 0];
		m.sv[i * dims + 1] = sv_xy[i][swap ? 0 : 1];
		m.alpha[i] = i < 4 ? 0.2 : 0.1;
	}
	snprintf(what, sizeof(what), "%d columns, eq 1 (20 rows) at %g, spread %s the line",
			 dims, eq1_at, across ? "across" : "along");
	cut_expect(&m, "{\"min_cluster_size\": 50}", K, -1, what);
}

/*
 * "separated" beside a neighbour of one support vector, above two columns:
 * eq 1 (3 labelled rows, under the 4.6 that 50 rows of the 2,200-row
 * sample make) lies on the x axis at eq1_at from eq 0 (100 rows), whose
 * only support vector sits on its peak (spread 0), with two support
 * vectors of its own at +-6 along x; eq 2 (100 rows) at 100 has two at
 * +-5.  Along the line eq 0's spread counts at least eq 1's 6, not the
 * pooled floor alone (pool / sqrt(32), 0.89 at 15): at 15 eq 1 joins eq 0,
 * at 60 it lies beyond 3.5 pooled spreads (9.6) and stands.
 */
static void
cut_beside_one_sv(double eq1_at, int K)
{
	static const double sv_x[5] = {0.0, -6.0, 6.0, 95.0, 105.0};
	static const double sv_alpha[5] = {0.18, 0.01, 0.01, 0.4, 0.4};
	const int	dims = 32;
	SvcModel	m;
	char		what[80];

	band_model(&m, dims, 5, 2200);
	m.eq[1 * dims] = eq1_at;
	m.eq[2 * dims] = 100.0;
	m.eq_rows[0] = 100;
	m.eq_rows[1] = 3;
	m.eq_rows[2] = 100;
	for (int i = 0; i < 5; i++)
	{
		m.sv[i * dims] = sv_x[i] + (i == 1 || i == 2 ? eq1_at : 0.0);
		m.alpha[i] = sv_alpha[i];
	}
	snprintf(what, sizeof(what), "eq 1 (3 rows) at %g beside one support vector", eq1_at);
	cut_expect(&m, "{\"min_cluster_size\": 50}", K, -1, what);
}

/*
 * "separated" beside a neighbour of one support vector, in kernel widths:
 * eq 1 (6 labelled rows, above the 4.7 that 50 rows of the 2,200-row
 * sample make, so no pooled floor) and eq 0 (100 rows) each have one
 * support vector on its peak, a spread of 0 along any line; eq 2 (100
 * rows) at 100 has two at +-2.  At gamma 1 a kernel width sigma is 0.71:
 * above two columns eq 1 joins eq 0 within 4.06 sigma (2.87), at 2.5, and
 * stands at 3.5; in two columns the 2-D test keeps it apart at 2.5.
 */
static void
cut_beside_one_sv_width(int dims, double eq1_at, int K)
{
	static const double sv_x[4] = {0.0, 0.0, 98.0, 102.0};
	SvcModel	m;
	char		what[80];

	band_model(&m, dims, 4, 2200);
	m.eq[1 * dims] = eq1_at;
	m.eq[2 * dims] = 100.0;
	m.eq_rows[0] = 100;
	m.eq_rows[1] = 6;
	m.eq_rows[2] = 100;
	for (int i = 0; i < 4; i++)
	{
		m.sv[i * dims] = sv_x[i] + (i == 1 ? eq1_at : 0.0);
		m.alpha[i] = 0.25;
	}
	snprintf(what, sizeof(what), "%d columns, eq 1 (6 rows) at %g beside one support vector",
			 dims, eq1_at);
	cut_expect(&m, "{\"min_cluster_size\": 50}", K, -1, what);
}

/*
 * "separated", persistence, a part of at least the minimum size that the
 * pass keeps joined: eq 1 (60 labelled rows, above the 50 of
 * min_cluster_size) has a low peak (lambda 0.02) and one support vector on
 * it, and its pass to eq 0 (lambda 1, two support vectors at +-1 along the
 * line: spread 1) lies at 0.015, above 0.4 of its peak.  Above two columns
 * it stands beyond 4.06 kernel widths (2.87 at gamma 1) when it also lies
 * apart (3.5 spreads); at 2.5 or at 3.2 it stays joined, and in two
 * columns persistence alone decides.  Under the minimum size the same: a
 * small blob of one support vector beside a big one (6 rows, above the
 * 5.9 that 50 rows of the 2,200-row sample make) stands at 5; under that
 * floor (3 rows) the pooled spread counts (2.6 with eq 1 at 5, which
 * keeps it joined; 6.0 at 12, where 10 spreads along the line, 10.7, do
 * not reach it).
 */
static void
cut_far_apart_rows(int dims, double eq1_at, int64_t eq1_rows, int K)
{
	static const double sv_x[4] = {-1.0, 1.0, 0.0, 100.0};
	SvcModel	m;
	char		what[80];

	band_model(&m, dims, 4, 2200);
	m.eq[1 * dims] = eq1_at;
	m.eq[2 * dims] = 100.0;
	m.eq_f[1] = 0.02 - 0.5;
	m.edge_f[0] = 0.015 - 0.5;
	m.eq_rows[0] = 100;
	m.eq_rows[1] = eq1_rows;
	m.eq_rows[2] = 100;
	for (int i = 0; i < 4; i++)
	{
		m.sv[i * dims] = sv_x[i] + (i == 2 ? eq1_at : 0.0);
		m.alpha[i] = 0.25;
	}
	snprintf(what, sizeof(what), "%d columns, eq 1 (%lld rows, a low peak) at %g", dims,
			 (long long) eq1_rows, eq1_at);
	cut_expect(&m, "{\"min_cluster_size\": 50}", K, -1, what);
}

static void
cut_far_apart(int dims, double eq1_at, int K)
{
	cut_far_apart_rows(dims, eq1_at, 60, K);
}

/*
 * "separated", two ripples above two columns: eq 0 (10 labelled rows) and
 * eq 1 (6, above the 2.6 that 50 rows of the 2,200-row sample make) each
 * have one support vector of |alpha| 0.01 on its peak (lambda `peak`) and
 * lie 3.8 apart (5.4 kernel widths at gamma 1, beyond the 5 within which
 * ripple clusters join after the cut); eq 2 (100 rows, lambda 1)
 * at 100 has four of 0.5 at +-2.  Mean |alpha| 0.34: peaks under 0.2 of it
 * (0.067) are ripples, and a pass of at least 0.1 of the lower one keeps
 * them joined though it lies under merge_ratio 0.4 of it (2 clusters).  In
 * two columns, over a deep pass or with peaks of 0.1, eq 1 stands apart as
 * before (3).  {0, 1} itself stands apart from eq 2 either way.
 */
static void
cut_ripples(int dims, double peak, double pass, int K)
{
	static const double sv_x[6] = {0.0, 3.8, 98.0, 98.0, 102.0, 102.0};
	SvcModel	m;
	char		what[96];

	band_model(&m, dims, 6, 2200);
	m.eq[1 * dims] = 3.8;
	m.eq[2 * dims] = 100.0;
	m.eq_f[0] = m.eq_f[1] = peak - 0.5;
	m.edge_f[0] = pass - 0.5;
	m.edge_f[1] = 0.0002 - 0.5;
	m.eq_rows[0] = 10;
	m.eq_rows[1] = 6;
	m.eq_rows[2] = 100;
	for (int i = 0; i < 6; i++)
	{
		m.sv[i * dims] = sv_x[i];
		m.alpha[i] = i < 2 ? 0.01 : 0.5;
	}
	snprintf(what, sizeof(what), "%d columns, two peaks of %g, the pass between them at %g",
			 dims, peak, pass);
	cut_expect(&m, "{\"min_cluster_size\": 50}", K, -1, what);
}

/*
 * "separated", two ripples on either side of a big cluster, above two
 * columns: eq 1 (100 labelled rows, lambda 1) at the origin has four
 * support vectors of |alpha| 0.5 at 0.5 from it; eq 0 (10 rows) at
 * (5, y) and eq 2 (6 rows) at (5, -y) are ripples (lambda 0.01, one
 * support vector of 0.01 on each; mean |alpha| 0.34).  The tree hangs
 * each on eq 1 (passes 0.003 and 0.002, under 0.4 of 0.01) and the cut
 * parts each from it (7.4 kernel widths away, apart along the line); no
 * edge links them, yet within 5 widths (3.54 at gamma 1) of each other
 * they join: at y = 1.5 (4.2 widths) 2 clusters, the ripples 16 rows;
 * at y = 2 (5.7 widths) or in two columns, 3.
 */
static void
cut_ripples_apart(int dims, double y, int K)
{
	static const double sv_xy[6][2] = {{5, 1}, {0.5, 0}, {-0.5, 0}, {0, 0.5}, {0, -0.5}, {5, -1}};
	SvcModel	m;
	char		what[96];

	band_model(&m, dims, 6, 2200);
	m.eq[0] = 5.0;
	m.eq[1] = y;
	m.eq[2 * dims] = 5.0;
	m.eq[2 * dims + 1] = -y;
	m.eq_f[0] = m.eq_f[2] = 0.01 - 0.5;
	m.edge_f[0] = 0.003 - 0.5;
	m.edge_f[1] = 0.002 - 0.5;
	m.eq_rows[0] = 10;
	m.eq_rows[1] = 100;
	m.eq_rows[2] = 6;
	for (int i = 0; i < 6; i++)
	{
		m.sv[i * dims] = sv_xy[i][0];
		m.sv[i * dims + 1] = sv_xy[i][1] * (i == 0 || i == 5 ? y : 1.0);
		m.alpha[i] = i == 0 || i == 5 ? 0.01 : 0.5;
	}
	snprintf(what, sizeof(what), "%d columns, two ripples at (5, +-%g) beside a big cluster",
			 dims, y);
	cut_expect(&m, "{\"min_cluster_size\": 50}", K, 100, what);
}

static void
test_separated(void)
{
	const char *dflt = "{\"min_cluster_size\": 50}";

	cut_separated(10.0, dflt, 3, 80);
	cut_separated(1.5, dflt, 2, 120);
	cut_separated(1.5, "{\"min_cluster_size\": 50, \"min_cluster_size_rows\": \"sample\"}", 3, 80);
	cut_separated(10.0, "{\"min_cluster_size\": 50, \"min_cluster_size_rows\": \"labelled\"}", 1, 162);
	/* level cuts decide the same way; eom and n_clusters count labelled rows */
	cut_separated(1.5, "{\"min_cluster_size\": 50, \"level\": 0.3}", 2, 120);
	cut_separated(10.0, "{\"min_cluster_size\": 50, \"cut\": \"eom\"}", 1, 162);
	/* under the floor in sample rows: apart by the pooled spread */
	cut_below_sample_floor(30.0, dflt, 3);
	cut_below_sample_floor(5.0, dflt, 2);
	cut_below_sample_floor(30.0, "{\"min_cluster_size\": 50, \"min_cluster_size_rows\": \"sample\"}", 2);
	cut_below_sample_floor(30.0, "{\"min_cluster_size\": 50, \"min_cluster_size_rows\": \"labelled\"}", 2);
	cut_below_sample_floor(30.0, "{\"min_cluster_size\": 50, \"level\": 0.3}", 3);
	/* above two columns the spread counts along the line between the peaks */
	cut_along_line(3, 15.0, 3, true);
	cut_along_line(3, 5.0, 2, true);
	cut_along_line(2, 15.0, 2, true);
	cut_along_line(2, 30.0, 3, true);
	/* a spread inflated along the line: 3.5 spreads still set a part apart */
	cut_along_line(3, 30.0, 3, false);
	cut_along_line(3, 20.0, 2, false);
	cut_along_line(2, 23.0, 2, false);
	/* a neighbour of one support vector: its spread at least the part's own */
	cut_beside_one_sv(15.0, 2);
	cut_beside_one_sv(60.0, 3);
	/* two parts of one support vector each: apart only beyond 4.06 kernel widths */
	cut_beside_one_sv_width(32, 2.5, 2);
	cut_beside_one_sv_width(32, 3.5, 3);
	cut_beside_one_sv_width(3, 2.5, 2);
	cut_beside_one_sv_width(2, 2.5, 3);
	/* a part of the minimum size that persistence keeps: far apart, it stands */
	cut_far_apart(32, 5.0, 3);
	cut_far_apart(3, 5.0, 3);
	cut_far_apart(32, 3.2, 2);
	cut_far_apart(32, 2.5, 2);
	cut_far_apart(2, 5.0, 2);
	/* under the minimum size too; under the floor in sample rows, by the pool */
	cut_far_apart_rows(32, 5.0, 6, 3);
	cut_far_apart_rows(3, 5.0, 6, 3);
	cut_far_apart_rows(32, 2.5, 6, 2);
	cut_far_apart_rows(2, 5.0, 6, 2);
	cut_far_apart_rows(32, 5.0, 3, 2);
	cut_far_apart_rows(32, 12.0, 3, 3);
	/* two ripples (peaks under 0.2 of the mean |alpha|) join over a pass of 0.1 */
	cut_ripples(32, 0.01, 0.003, 2);
	cut_ripples(3, 0.01, 0.003, 2);
	cut_ripples(2, 0.01, 0.003, 3);
	cut_ripples(32, 0.01, 0.0005, 3);
	cut_ripples(32, 0.1, 0.03, 3);
	/* two ripples that the tree hangs on another cluster join within 5 widths */
	cut_ripples_apart(32, 1.5, 2);
	cut_ripples_apart(3, 1.5, 2);
	cut_ripples_apart(32, 2.0, 3);
	cut_ripples_apart(2, 1.5, 3);
}

/* Shortest exact text of a double, and a report that grows as it needs. */
static void
test_report_numbers(void)
{
	const double vals[] = {0.4, 1.0 / 3.0, 1e-300, 5e-324, DBL_MAX, -0.1, 100, 0};
	char		buf[SVC_DOUBLE_TEXT_LEN];
	SvcModel	m;
	SvcError	err;
	char	   *json;
	char		tail[64];
	const int32_t K = 5000;

	CHECK(strcmp(svc_double_text(buf, 0.4), "0.4") == 0, "0.4 prints %s", buf);
	CHECK(strcmp(svc_double_text(buf, 100), "100") == 0, "100 prints %s", buf);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		CHECK(strtod(svc_double_text(buf, vals[i]), NULL) == vals[i] && strlen(buf) <= 24,
			  "%.17g reads back from %s", vals[i], buf);
	CHECK(strcmp(svc_double_text(buf, 1.0 / 3.0), "0.3333333333333333") == 0,
		  "1/3 prints 16 digits: %s", buf);

	/* more clusters of longer sizes than a fixed buffer would hold */
	memset(&m, 0, sizeof(m));
	svc_options_default(&m.opt);
	m.opt.labeling = SVC_LABELING_PAPER;
	m.opt.c = 0.4;
	CHECK(svc_model_alloc(&svc_env_malloc, &m, 1, 1, K, K, 0, &err) == SVC_OK, "alloc");
	m.gamma = 1.0 / 3.0;
	m.offset = DBL_MAX;
	m.solver = SVC_SOLVER_BSGD;
	m.boundary = SVC_BOUNDARY_HYPERPLANE;
	for (int32_t i = 0; i < K; i++)
	{
		m.eq_cluster[i] = i + 1;
		m.cluster_size[i] = INT64_C(1000000000000000000) + i;
	}
	json = svc_model_info_json(&svc_env_malloc, &m, &err);
	CHECK(json != NULL, "the report is made");
	if (json)
	{
		size_t		len = strlen(json);

		snprintf(tail, sizeof(tail), "%lld], \"stability\": null",
				 (long long) INT64_C(1000000000000000000) + K - 1);
		CHECK(len > 21 * (size_t) K && strstr(json, tail) != NULL &&
			  json[len - 1] == '}', "the report of %d clusters is whole (%zu bytes)", K, len);
		CHECK(strstr(json, "\"c\": 0.4,") != NULL && strstr(json, "\"gamma\": 0.3333333333333333,") != NULL &&
			  strstr(json, "\"offset\": 1.7976931348623157e+308,") != NULL,
			  "the report's numbers are the shortest exact ones");
		free(json);
	}
	svc_model_free(&svc_env_malloc, &m);
}

static void
expect_corrupt(SvcModel *m, const char *what)
{
	SvcError	err;

	CHECK(svc_cut_check(&svc_env_malloc, m, &err) == SVC_ERR_CORRUPT, "%s is refused", what);
	svc_model_free(&svc_env_malloc, m);
}

static void
test_check(void)
{
	SvcModel	m;
	SvcError	err;
	double		level,
				stab[3],
				peaks[3];

	make_tree(&m);
	CHECK(svc_cut_apply(&svc_env_malloc, &m, &err) == SVC_OK, "cut");
	CHECK(svc_cut_summary(&m, &level, stab, peaks), "something is cut");
	CHECK(level == 0.2 - 0.5, "cut level is the highest removed pass (%g)", level);
	/* cluster 1 = {0,1}: peak 1, highest removed pass 0.2; cluster 3 = {2}: 0.2 / 1 */
	CHECK(stab[0] > 0.799 && stab[0] < 0.801 && stab[2] > 0.799 && stab[2] < 0.801,
		  "stability 1 - pass / peak (%g, %g)", stab[0], stab[2]);
	/* cluster 2 = {3,4}: peak 0.8, removed pass 0.1 */
	CHECK(stab[1] > 0.874 && stab[1] < 0.876, "stability of {3,4} (%g)", stab[1]);

	m.eq_cluster[2] = 1;
	expect_corrupt(&m, "a labelling that is not the cut");

	make_tree(&m);
	CHECK(svc_cut_apply(&svc_env_malloc, &m, &err) == SVC_OK, "cut");
	m.edge_f[3] = m.edge_f[0] + 1;
	expect_corrupt(&m, "edges out of order");

	make_tree(&m);
	CHECK(svc_cut_apply(&svc_env_malloc, &m, &err) == SVC_OK, "cut");
	m.edge_b[2] = 0;			/* 1-0 again: a cycle, eq 2 left out */
	expect_corrupt(&m, "a cycle");

	make_tree(&m);
	CHECK(svc_cut_apply(&svc_env_malloc, &m, &err) == SVC_OK, "cut");
	m.edge_a[1] = 5;
	expect_corrupt(&m, "an endpoint out of range");

	make_tree(&m);
	CHECK(svc_cut_apply(&svc_env_malloc, &m, &err) == SVC_OK, "cut");
	m.cluster_size[0]++;
	expect_corrupt(&m, "cluster sizes that do not add up");
}

/*
 * Offsets in the encoding of make_tree's model (1 dim, 1 support vector,
 * 5 equilibria, 3 clusters once cut, 4 edges): see model.c's layout.
 */
#define HEADER		(16 + SVC_OPTIONS_WIRE_SIZE + 48 + 24)
#define OFF_N_EDGES	(16 + SVC_OPTIONS_WIRE_SIZE + 48 + 16)
#define OFF_EQ_ROWS	(HEADER + 16 + 16 + 5 * 8 + 5 * 4 + 5 * 8)
#define OFF_EDGE_A	(OFF_EQ_ROWS + 5 * 8 + 3 * 8)
#define OFF_EDGE_F	(OFF_EDGE_A + 4 * 4 + 4 * 4)
#define OFF_PARAMS	(16 + SVC_OPTIONS_WIRE_SIZE)	/* gamma, epsilon, offset */
#define OFF_COUNTS	(OFF_PARAMS + 24)	/* rows_seen, rows_used, iterations */
#define OFF_N_SV	(OFF_PARAMS + 52)
#define OFF_EQ		(HEADER + 32)
#define OFF_EQ_CL	(OFF_EQ + 5 * 8)
#define OFF_EQ_F	(OFF_EQ_CL + 5 * 4)

/* Decode bytes after a change behind a fresh checksum; expect the detail. */
static void
expect_decode_error(const uint8_t *good, size_t len, size_t off, const uint8_t *bytes,
					size_t n, const char *detail)
{
	uint8_t    *b = malloc(len);
	SvcModel	m;
	SvcError	err;
	SvcStatus	st;

	memcpy(b, good, len);
	memcpy(b + off, bytes, n);
	svc_store_u32(b + len - 4, svc_crc32c(b, len - 4));
	st = svc_model_decode(&svc_env_malloc, b, len, &m, &err);
	CHECK(st == SVC_ERR_CORRUPT && strstr(err.detail, detail) != NULL,
		  "damage at %zu: \"%s\", got \"%s\"", off, detail, st == SVC_OK ? "ok" : err.detail);
	svc_model_free(&svc_env_malloc, &m);
	free(b);
}

static void
test_model_bytes(void)
{
	SvcModel	m,
				back;
	SvcError	err;
	size_t		len;
	uint8_t    *bytes;
	uint8_t		v[8];

	make_tree(&m);
	m.opt.cut = SVC_CUT_EOM;
	CHECK(svc_cut_apply(&svc_env_malloc, &m, &err) == SVC_OK, "cut");
	len = svc_model_encoded_size(&m);
	CHECK(len == OFF_EDGE_F + 4 * 8 + 4, "layout as the test expects (%zu)", len);
	bytes = malloc(len);
	svc_model_encode(&m, bytes);
	CHECK(svc_model_decode(&svc_env_malloc, bytes, len, &back, &err) == SVC_OK,
		  "the tree round-trips: %s", err.detail);
	CHECK(back.n_edges == 4 && back.opt.cut == SVC_CUT_EOM && back.edge_b[2] == 2 &&
		  back.edge_f[1] == m.edge_f[1] && back.eq_rows[3] == 2,
		  "edges, heights, rows and the cut option survive");
	svc_model_free(&svc_env_malloc, &back);

	svc_store_u32(v, 3);
	expect_decode_error(bytes, len, OFF_N_EDGES, v, 4, "number of tree edges");
	svc_store_u64(v, 163);
	expect_decode_error(bytes, len, OFF_EQ_ROWS, v, 8, "add up to more than the rows used");
	svc_store_u64(v, 100);		/* within 162 alone, 222 with the others */
	expect_decode_error(bytes, len, OFF_EQ_ROWS, v, 8, "add up to more than the rows used");
	svc_store_f64(v, NAN);
	expect_decode_error(bytes, len, OFF_EDGE_F, v, 8, "saddle height is not finite");
	svc_store_f64(v, 5.0);
	expect_decode_error(bytes, len, OFF_EDGE_F + 8, v, 8, "not ordered by height");
	svc_store_u32(v, 7);
	expect_decode_error(bytes, len, OFF_EDGE_A, v, 4, "out of range");
	svc_store_u32(v, 1);		/* edge 3-4 becomes 1-4: still a tree, but
								 * the stored clusters are not its cut */
	expect_decode_error(bytes, len, OFF_EDGE_A + 4, v, 4, "do not match the cut");

	/* every other check of the decoder, each with its own detail */
	expect_decode_error(bytes, len, 0, (const uint8_t *) "XSVC", 4, "svclust model signature");
	svc_store_u32(v, 1);		/* version 1, flags 0 */
	expect_decode_error(bytes, len, 4, v, 4, "reads model format version");
	svc_store_u32(v, 0);
	expect_decode_error(bytes, len, 8, v, 4, "dimension is out of range");
	v[0] = 9;
	expect_decode_error(bytes, len, 12, v, 1, "solver or boundary kind");
	svc_store_u32(v, 0);		/* budget, the first option */
	expect_decode_error(bytes, len, 16, v, 4, "stored options are invalid");
	svc_store_f64(v, NAN);
	expect_decode_error(bytes, len, OFF_PARAMS, v, 8, "kernel parameters");
	svc_store_f64(v, -1.0);
	expect_decode_error(bytes, len, OFF_PARAMS + 8, v, 8, "kernel parameters");
	svc_store_u64(v, 163);		/* rows used above rows seen */
	expect_decode_error(bytes, len, OFF_COUNTS + 8, v, 8, "training counts");
	svc_store_u32(v, 2);
	expect_decode_error(bytes, len, OFF_COUNTS + 24, v, 4, "training counts");
	svc_store_u32(v, 0);
	expect_decode_error(bytes, len, OFF_N_SV, v, 4, "numbers of support vectors");
	svc_store_u32(v, 6);		/* more clusters than equilibria */
	expect_decode_error(bytes, len, OFF_N_SV + 8, v, 4, "numbers of support vectors");
	svc_store_u32(v, 1);
	expect_decode_error(bytes, len, OFF_N_SV + 16, v, 4, "numbers of support vectors");
	svc_store_u32(v, 2);		/* a second support vector the bytes lack */
	expect_decode_error(bytes, len, OFF_N_SV, v, 4, "length does not match");
	svc_store_f64(v, INFINITY);
	expect_decode_error(bytes, len, HEADER, v, 8, "scaling is not finite");
	svc_store_f64(v, 0.0);
	expect_decode_error(bytes, len, HEADER + 8, v, 8, "scaling factor is not positive");
	svc_store_f64(v, NAN);
	expect_decode_error(bytes, len, HEADER + 24, v, 8, "support vector or coefficient");
	expect_decode_error(bytes, len, OFF_EQ + 8, v, 8, "equilibrium is not finite");
	expect_decode_error(bytes, len, OFF_EQ_F, v, 8, "decision value is not finite");
	svc_store_u32(v, 0);
	expect_decode_error(bytes, len, OFF_EQ_CL, v, 4, "cluster id out of range");
	svc_store_u64(v, 1000);
	expect_decode_error(bytes, len, OFF_EQ_ROWS + 5 * 8, v, 8, "cluster size is out of range");
	{
		/* a changed byte behind the old checksum, and a cut-short value */
		uint8_t    *b = malloc(len);

		memcpy(b, bytes, len);
		b[HEADER + 1] ^= 1;
		CHECK(svc_model_decode(&svc_env_malloc, b, len, &back, &err) == SVC_ERR_CORRUPT &&
			  strstr(err.detail, "checksum does not match") != NULL, "checksum: %s", err.detail);
		svc_model_free(&svc_env_malloc, &back);
		CHECK(svc_model_decode(&svc_env_malloc, bytes, 40, &back, &err) == SVC_ERR_CORRUPT &&
			  strstr(err.detail, "too short") != NULL, "too short: %s", err.detail);
		svc_model_free(&svc_env_malloc, &back);
		free(b);
	}
	free(bytes);

	/* the widths of version 3, after alpha; the version says whether they are there */
	m.opt.bandwidth_k = 3;
	m.sv_gamma = malloc(sizeof(double));
	m.sv_gamma[0] = 0.25;
	len = svc_model_encoded_size(&m);
	bytes = malloc(len);
	svc_model_encode(&m, bytes);
	CHECK(bytes[4] == 3 && svc_model_decode(&svc_env_malloc, bytes, len, &back, &err) == SVC_OK &&
		  back.sv_gamma != NULL && back.sv_gamma[0] == 0.25 && back.opt.bandwidth_k == 3,
		  "widths round-trip in version 3: %s", err.detail);
	svc_model_free(&svc_env_malloc, &back);
	svc_store_f64(v, 1.5);		/* above gamma (1): widths only widen */
	expect_decode_error(bytes, len, HEADER + 32, v, 8, "width is not in (0, gamma]");
	svc_store_f64(v, 0.0);
	expect_decode_error(bytes, len, HEADER + 32, v, 8, "width is not in (0, gamma]");
	svc_store_f64(v, NAN);
	expect_decode_error(bytes, len, HEADER + 32, v, 8, "width is not in (0, gamma]");
	svc_store_u32(v, 2);		/* version 2, flags 0: widths under a version that has none */
	expect_decode_error(bytes, len, 4, v, 4, "does not match the bandwidth_k option");
	svc_store_u32(v, 0);		/* bandwidth_k 0 in a version 3 model */
	expect_decode_error(bytes, len, 16 + 116, v, 4, "does not match the bandwidth_k option");
	free(bytes);
	free(m.sv_gamma);
	m.sv_gamma = NULL;
	m.opt.bandwidth_k = 0;

	/* a model without a tree cannot be cut */
	m.opt.labeling = SVC_LABELING_PAPER;
	CHECK(svc_cut_apply(&svc_env_malloc, &m, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strstr(err.detail, "\"paper\"") != NULL, "a paper model is refused: %s", err.message);
	svc_model_free(&svc_env_malloc, &m);
}

/*
 * min_cluster_size counts labelled rows by default (the rule before
 * 0.5.0, which old options read): the count itself; in rows of the
 * sample it is scaled to the rows that label (15 of 10,000 is 4.5 of
 * 3,000).  The share is a share of the labelled rows either way.
 */
static void
test_size_rows(void)
{
	SvcOptions	o;

	svc_options_default(&o);
	CHECK(o.min_cluster_size == 15 && o.min_size_rows == SVC_SIZE_ROWS_SEPARATED,
		  "default: 15 rows, \"separated\"");
	CHECK(svc_cut_min_rows(&o, 3000, 10000) == 15.0 &&
		  fabs(svc_cut_min_rows_apart(&o, 3000, 10000) - 4.5) < 1e-12,
		  "default: 15 of 3,000 labelled rows, 4.5 for a part apart");
	o.min_size_rows = SVC_SIZE_ROWS_SAMPLE;
	CHECK(fabs(svc_cut_min_rows(&o, 3000, 10000) - 4.5) < 1e-12, "15 of 10,000 is 4.5 of 3,000");
	CHECK(svc_cut_min_rows(&o, 3000, 3000) == 15.0, "every row labels: 15");
	CHECK(svc_cut_min_rows(&o, 0, 10000) == 15.0, "no labelled rows: no division");
	CHECK(fabs(svc_cut_min_rows_apart(&o, 3000, 10000) - 4.5) < 1e-12, "sample: apart or not");
	o.min_size_rows = SVC_SIZE_ROWS_LABELLED;
	CHECK(svc_cut_min_rows(&o, 3000, 10000) == 15.0 &&
		  svc_cut_min_rows_apart(&o, 3000, 10000) == 15.0, "labelled rows: 15 of 3,000");
	o.min_cluster_size = 0;
	o.min_cluster_share = 0.03;
	CHECK(svc_cut_min_rows(&o, 3000, 10000) == 90.0, "a share of the labelled rows");
	o.min_size_rows = SVC_SIZE_ROWS_SAMPLE;
	CHECK(svc_cut_min_rows(&o, 3000, 10000) == 90.0, "whatever the size counts");
}

int
main(void)
{
	test_size_rows();
	test_rules();
	test_recut();
	test_recut_size_rows();
	test_separated();
	test_report_numbers();
	test_check();
	test_model_bytes();
	return unit_summary("test_cut");
}
