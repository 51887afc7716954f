/*
 * test_cvi_state.c - svc_cvi_agg's state: growth, merge, checks, and the
 * indices independent of row order and of how the rows were split
 */
#include "bytes.h"
#include "cvi.h"
#include "cvi_state.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BYTES ((size_t) 1 << 30)

/* Counts live allocations, so a leak of the input arrays fails the test. */
static UnitBudget budget;
static const SvcEnv env = {.alloc = unit_counted_alloc, .release = unit_counted_free,
.ctx = &budget};

typedef struct Grown
{
	uint8_t    *buf;
	size_t		len;
} Grown;

static void
grown_init(Grown *g, bool has_class)
{
	g->len = SVC_CVI_STATE_HEADER_SIZE;
	g->buf = malloc(g->len);
	svc_cvi_state_init(g->buf, has_class);
}

/* Add a row, growing the state as the glue does. */
static void
grown_add(Grown *g, const double *x, int32_t dims, bool has_cluster,
		  int32_t cluster, bool has_class, int32_t klass)
{
	if (!svc_cvi_state_add(g->buf, x, dims, has_cluster, cluster, has_class, klass))
	{
		int64_t		cap = svc_cvi_state_next_capacity(svc_cvi_state_capacity(g->buf),
													  svc_cvi_state_rows(g->buf) + 1);
		size_t		len = svc_cvi_state_size(dims, cap, svc_cvi_state_has_class(g->buf),
											 MAX_BYTES);
		uint8_t    *next = malloc(len);

		svc_cvi_state_copy(g->buf, next, dims, cap);
		free(g->buf);
		g->buf = next;
		g->len = len;
		CHECK(svc_cvi_state_add(g->buf, x, dims, has_cluster, cluster, has_class, klass),
			  "a row fits after growing");
	}
}

/* Row i of a deterministic three-blob set; every 11th has no cluster,
 * every 5th no class. */
static void
row_of(int64_t i, double *x, bool *has_cluster, int32_t *cluster, bool *has_class,
	   int32_t *klass)
{
	int32_t		k = (int32_t) (i % 3);

	x[0] = k * 4.0 + cos((double) i * 2.399) * sqrt((double) (i % 17) / 17.0);
	x[1] = k * 1.5 + sin((double) i * 2.399) * sqrt((double) (i % 17) / 17.0);
	*has_cluster = i % 11 != 0;
	*cluster = k == 2 ? 1 : k + 10;
	*has_class = i % 5 != 0;
	*klass = k;
}

static void
fill(Grown *g, int64_t first, int64_t last, int64_t step)
{
	for (int64_t i = first; i < last; i += step)
	{
		double		x[2];
		bool		hc,
					hk;
		int32_t		c,
					k;

		row_of(i, x, &hc, &c, &hk, &k);
		grown_add(g, x, 2, hc, c, hk, k);
	}
}

static void
compute(const uint8_t *buf, int64_t limit, SvcCviResult *r)
{
	SvcCviInput in;
	SvcError	err;

	CHECK(svc_cvi_state_input(&env, buf, &in, &err) == SVC_OK, "input: %s", err.message);
	in.limit = limit;
	CHECK(svc_cvi_compute(&env, &in, r, &err) == SVC_OK, "compute: %s", err.message);
	svc_cvi_state_input_free(&env, &in);
	CHECK(budget.live == 0, "input arrays freed (%lld live)", (long long) budget.live);
}

static bool
same_result(const SvcCviResult *a, const SvcCviResult *b)
{
	for (int i = 0; i < SVC_CVI_COUNT; i++)
		if (a->defined[i] != b->defined[i] ||
			(a->defined[i] && memcmp(&a->value[i], &b->value[i], sizeof(double)) != 0))
			return false;
	return true;
}

static void
test_empty_and_growth(void)
{
	Grown		g;
	SvcError	err;
	SvcCviResult r;

	grown_init(&g, true);
	CHECK(svc_cvi_state_check(g.buf, g.len, &err) == SVC_OK, "an empty state checks");
	CHECK(svc_cvi_state_dims(g.buf) == 0 && svc_cvi_state_capacity(g.buf) == 0,
		  "an empty state has no dims and no room");
	compute(g.buf, 0, &r);
	CHECK(r.defined[SVC_CVI_N_ROWS] && r.value[SVC_CVI_N_ROWS] == 0, "no rows: n_rows 0");

	fill(&g, 0, 1000, 1);
	CHECK(svc_cvi_state_check(g.buf, g.len, &err) == SVC_OK, "a grown state checks: %s", err.message);
	CHECK(svc_cvi_state_rows(g.buf) == 1000 - 91, "rows with a cluster kept: %lld",
		  (long long) svc_cvi_state_rows(g.buf));
	CHECK(svc_cvi_state_capacity(g.buf) == 1024, "capacity doubled from 16: %lld",
		  (long long) svc_cvi_state_capacity(g.buf));
	compute(g.buf, 0, &r);
	CHECK(r.value[SVC_CVI_N_ROWS] == 1000, "n_rows counts unassigned rows");
	CHECK(fabs(r.value[SVC_CVI_OUTLIER_SHARE] - 91.0 / 1000) < 1e-15, "outlier share");
	CHECK(r.value[SVC_CVI_N_CLUSTERS] == 3 && r.value[SVC_CVI_N_CLASSES] == 3, "three and three");
	CHECK(r.value[SVC_CVI_NMI] == 1.0, "clusters are the classes: nmi 1, got %g",
		  r.value[SVC_CVI_NMI]);
	free(g.buf);

	/* a state of only unassigned rows takes their dims without room */
	grown_init(&g, false);
	{
		double		x[3] = {1, 2, 3};

		grown_add(&g, x, 3, false, 0, false, 0);
	}
	CHECK(svc_cvi_state_dims(g.buf) == 3 && svc_cvi_state_capacity(g.buf) == 0 &&
		  svc_cvi_state_check(g.buf, g.len, &err) == SVC_OK,
		  "unassigned rows set dims only");
	free(g.buf);
}

/* Merging any split of the rows, in any order, gives the same indices. */
static void
test_split_and_order(void)
{
	Grown		serial,
				parts[3],
				reversed;
	SvcCviResult rs,
				rm,
				rr;
	SvcError	err;
	int64_t		n = 3000;

	grown_init(&serial, true);
	fill(&serial, 0, n, 1);
	/* three interleaved workers */
	for (int w = 0; w < 3; w++)
	{
		grown_init(&parts[w], true);
		fill(&parts[w], w, n, 3);
	}
	{
		int64_t		need = 0;
		size_t		len;
		uint8_t    *merged;

		for (int w = 0; w < 3; w++)
			need += svc_cvi_state_rows(parts[w].buf);
		len = svc_cvi_state_size(2, need, true, MAX_BYTES);
		merged = malloc(len);
		svc_cvi_state_copy(parts[2].buf, merged, 2, need);
		CHECK(svc_cvi_state_merge(merged, parts[0].buf, &err) == SVC_OK, "merge 0");
		CHECK(svc_cvi_state_merge(merged, parts[1].buf, &err) == SVC_OK, "merge 1");
		CHECK(svc_cvi_state_check(merged, len, &err) == SVC_OK, "merged checks: %s", err.message);
		CHECK(svc_cvi_state_rows(merged) == svc_cvi_state_rows(serial.buf), "merged keeps every row");
		/* a limit below the rows: silhouette and compactness sample */
		compute(serial.buf, 500, &rs);
		compute(merged, 500, &rm);
		CHECK(same_result(&rs, &rm), "merged states give the serial indices bit for bit (sampled)");
		compute(serial.buf, 0, &rs);
		compute(merged, 0, &rm);
		CHECK(same_result(&rs, &rm), "merged states give the serial indices bit for bit (exact)");
		free(merged);
	}
	grown_init(&reversed, true);
	for (int64_t i = n - 1; i >= 0; i--)
	{
		double		x[2];
		bool		hc,
					hk;
		int32_t		c,
					k;

		row_of(i, x, &hc, &c, &hk, &k);
		grown_add(&reversed, x, 2, hc, c, hk, k);
	}
	compute(reversed.buf, 500, &rr);
	compute(serial.buf, 500, &rs);
	CHECK(same_result(&rs, &rr), "rows in reverse order give the same indices");
	CHECK(rs.defined[SVC_CVI_SILHOUETTE] && rs.value[SVC_CVI_SILHOUETTE] > 0.5,
		  "silhouette of separated blobs is high: %g", rs.value[SVC_CVI_SILHOUETTE]);

	/* merging into an empty state and with an empty one */
	{
		Grown		empty;
		size_t		len = svc_cvi_state_size(2, svc_cvi_state_rows(serial.buf), true, MAX_BYTES);
		uint8_t    *m = malloc(len);

		grown_init(&empty, true);
		svc_cvi_state_copy(empty.buf, m, 2, svc_cvi_state_rows(serial.buf));
		CHECK(svc_cvi_state_merge(m, serial.buf, &err) == SVC_OK, "merge into empty");
		CHECK(svc_cvi_state_merge(m, empty.buf, &err) == SVC_OK, "merge an empty one");
		compute(m, 500, &rm);
		CHECK(same_result(&rs, &rm), "empty states change nothing");
		free(m);
		free(empty.buf);
	}
	/* forms with and without classes do not mix */
	{
		Grown		plain;

		grown_init(&plain, false);
		CHECK(svc_cvi_state_merge(serial.buf, plain.buf, &err) == SVC_ERR_INVALID_INPUT,
			  "a state without classes is refused");
		free(plain.buf);
	}
	free(serial.buf);
	free(reversed.buf);
	for (int w = 0; w < 3; w++)
		free(parts[w].buf);
}

static void
test_sizes(void)
{
	CHECK(svc_cvi_state_size(0, 0, true, MAX_BYTES) == SVC_CVI_STATE_HEADER_SIZE, "header only");
	CHECK(svc_cvi_state_size(0, 1, true, MAX_BYTES) == 0, "room without dims is refused");
	CHECK(svc_cvi_state_size(2, 10, false, MAX_BYTES) == SVC_CVI_STATE_HEADER_SIZE + 10 * 20,
		  "20 bytes a row of two without classes");
	CHECK(svc_cvi_state_size(2, 10, true, MAX_BYTES) == SVC_CVI_STATE_HEADER_SIZE + 10 * 28,
		  "28 bytes a row of two with classes");
	CHECK(svc_cvi_state_size(SVC_MAX_DIMS, INT64_MAX, true, SIZE_MAX) == 0, "overflow refused");
	CHECK(svc_cvi_state_size(2, MAX_BYTES / 20, false, MAX_BYTES) == 0, "past the bound refused");
	CHECK(svc_cvi_state_next_capacity(0, 1) == SVC_CVI_STATE_FIRST_CAPACITY, "first capacity");
	CHECK(svc_cvi_state_next_capacity(16, 17) == 32, "doubles");
	CHECK(svc_cvi_state_next_capacity(16, 100) == 128, "doubles to the need");
}

static void
test_check_rejects_damage(void)
{
	Grown		g;
	SvcError	err;
	uint8_t    *copy;
	int			accepted = 0;

	grown_init(&g, true);
	fill(&g, 0, 40, 1);
	copy = malloc(g.len);

	CHECK(svc_cvi_state_check(g.buf, g.len - 1, &err) == SVC_ERR_CORRUPT, "truncated refused");
	CHECK(svc_cvi_state_check(g.buf, 10, &err) == SVC_ERR_CORRUPT, "tiny refused");
	memcpy(copy, g.buf, g.len);
	copy[0] = 'X';
	CHECK(svc_cvi_state_check(copy, g.len, &err) == SVC_ERR_CORRUPT, "bad magic refused");
	memcpy(copy, g.buf, g.len);
	svc_store_u64(copy + 24, (uint64_t) svc_cvi_state_capacity(g.buf) + 1);
	CHECK(svc_cvi_state_check(copy, g.len, &err) == SVC_ERR_CORRUPT, "more rows than room refused");
	memcpy(copy, g.buf, g.len);
	svc_store_f64(copy + SVC_CVI_STATE_HEADER_SIZE + 8, NAN);
	CHECK(svc_cvi_state_check(copy, g.len, &err) == SVC_ERR_CORRUPT &&
		  strstr(err.detail, "not finite") != NULL, "a NaN in a row refused: %s", err.detail);

	/*
	 * Every single-byte change of the header is refused or leaves a state
	 * that reads within its bounds (ASan and valgrind check the reads).
	 */
	for (size_t at = 0; at < SVC_CVI_STATE_HEADER_SIZE; at++)
		for (int bit = 0; bit < 8; bit++)
		{
			memcpy(copy, g.buf, g.len);
			copy[at] ^= (uint8_t) (1 << bit);
			if (svc_cvi_state_check(copy, g.len, &err) == SVC_OK)
			{
				SvcCviResult r;

				accepted++;
				compute(copy, 0, &r);
			}
		}
	CHECK(accepted < 8 * SVC_CVI_STATE_HEADER_SIZE / 2, "most header damage refused (%d accepted)",
		  accepted);
	free(copy);
	free(g.buf);
}

/*
 * The count of rows without a cluster stays within SVC_MAX_SEEN: adding
 * at the bound keeps it there (2^62 rows are out of reach), and a merge
 * that would pass it is refused, leaving the state as it was.
 */
static void
test_unassigned_bound(void)
{
	enum
	{
		OFF_UNASSIGNED = 40
	};
	Grown		a,
				b;
	double		x[2] = {1, 2};
	SvcError	err;
	uint8_t    *before;

	grown_init(&a, false);
	grown_init(&b, false);
	grown_add(&a, x, 2, false, 0, false, 0);
	grown_add(&b, x, 2, false, 0, false, 0);
	svc_store_u64(a.buf + OFF_UNASSIGNED, (uint64_t) SVC_MAX_SEEN);
	CHECK(svc_cvi_state_check(a.buf, a.len, &err) == SVC_OK, "a state at the bound checks");
	grown_add(&a, x, 2, false, 0, false, 0);
	CHECK(svc_load_u64(a.buf + OFF_UNASSIGNED) == (uint64_t) SVC_MAX_SEEN &&
		  svc_cvi_state_check(a.buf, a.len, &err) == SVC_OK,
		  "adding at the bound keeps the count there");
	svc_store_u64(a.buf + OFF_UNASSIGNED, (uint64_t) SVC_MAX_SEEN - 1);
	before = malloc(a.len);
	memcpy(before, a.buf, a.len);
	CHECK(svc_cvi_state_merge(a.buf, b.buf, &err) == SVC_OK, "a merge up to the bound passes");
	memcpy(a.buf, before, a.len);
	svc_store_u64(b.buf + OFF_UNASSIGNED, 2);
	CHECK(svc_cvi_state_merge(a.buf, b.buf, &err) == SVC_ERR_LIMIT &&
		  strstr(err.message, "too many rows") != NULL,
		  "a merge past the bound is refused: %s", err.message);
	CHECK(memcmp(a.buf, before, a.len) == 0, "the refused merge changes nothing");
	/* the bound is what the check enforces */
	svc_store_u64(a.buf + OFF_UNASSIGNED, (uint64_t) SVC_MAX_SEEN + 1);
	CHECK(svc_cvi_state_check(a.buf, a.len, &err) == SVC_ERR_CORRUPT, "past the bound is corrupt");
	free(before);
	free(a.buf);
	free(b.buf);
}

/* Each allocation of the input fails cleanly in turn, leaking nothing. */
static void
test_input_allocation_failures(void)
{
	Grown		g;
	int			failed = 0;

	grown_init(&g, true);
	fill(&g, 0, 200, 1);
	for (long left = 0; left < 10; left++)
	{
		UnitBudget	b = {.left = left};
		SvcEnv		failing = {.alloc = unit_fail_after_alloc, .release = unit_counted_free,
		.ctx = &b};
		SvcCviInput in;
		SvcError	err;

		if (svc_cvi_state_input(&failing, g.buf, &in, &err) == SVC_OK)
			svc_cvi_state_input_free(&failing, &in);
		else
			failed++;
		CHECK(b.live == 0, "nothing leaks when allocation %ld fails", left);
	}
	CHECK(failed == 6, "six allocations, each can fail: %d", failed);
	free(g.buf);
}

int
main(void)
{
	test_input_allocation_failures();
	test_unassigned_bound();
	test_sizes();
	test_empty_and_growth();
	test_split_and_order();
	test_check_rejects_damage();
	return unit_summary("test_cvi_state");
}
