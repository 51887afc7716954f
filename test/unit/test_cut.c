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
#include "cut.h"
#include "unit.h"

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
	/* excess of mass (worked in the header of cut.c's terms): {0,1} is
	 * worth 48 against 12 for its leaves, the root and {0,1,2} less than
	 * their parts */
	expect_cut("{\"cut\": \"eom\"}", 3, three, three_sizes);
	/* a large minimum size leaves one cluster */
	expect_cut("{\"min_cluster_size\": 50}", 1, one, one_sizes);
	expect_cut("{\"min_cluster_share\": 0.3}", 1, one, one_sizes);
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
				stab[3];

	make_tree(&m);
	CHECK(svc_cut_apply(&svc_env_malloc, &m, &err) == SVC_OK, "cut");
	CHECK(svc_cut_summary(&m, &level, stab), "something is cut");
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

int
main(void)
{
	test_rules();
	test_check();
	return unit_summary("test_cut");
}
