/*
 * test_lineage.c - cluster ids that survive a refresh: the match of new
 * clusters to old ones, the warm start that keeps ids, and the model
 * section that stores them (every damage refused or decoded whole)
 */
#include "bytes.h"
#include "label_lineage.h"
#include "label_trajectory.h"
#include "model.h"
#include "model_codec.h"
#include "unit.h"
#include "unit_data.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const SvcEnv *env = &svc_env_malloc;

static double
unit_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* A labelled-looking model of K clusters of size rows each (enough for the match). */
static SvcModel
fake(int32_t K, int64_t size)
{
	SvcModel	m;

	memset(&m, 0, sizeof(m));
	m.n_clusters = K;
	m.rows_used = size * K;
	m.cluster_size = malloc(sizeof(int64_t) * (size_t) K);
	for (int32_t k = 0; k < K; k++)
		m.cluster_size[k] = size;
	return m;
}

static void
fake_free(SvcModel *m)
{
	svc_lineage_free(env, m);
	free(m->cluster_size);
}

/* Each cluster's status, as text joined by commas. */
static const char *
statuses(const SvcModel *m)
{
	static char buf[256];
	SvcLineageStatus st[16];
	SvcError	err;

	buf[0] = '\0';
	if (m->n_clusters > 16 || svc_lineage_statuses(env, m, st, &err) != SVC_OK)
		return "?";
	for (int32_t k = 0; k < m->n_clusters; k++)
	{
		strcat(buf, k ? "," : "");
		strcat(buf, svc_lineage_status_name(st[k]));
	}
	return buf;
}

static bool
ids_are(const SvcModel *m, const int32_t *want)
{
	for (int32_t k = 0; k < m->n_clusters; k++)
		if (svc_cluster_id(m, k + 1) != want[k])
			return false;
	return true;
}

static void
test_match(void)
{
	SvcError	err;

	/* the same clusters: the same ids, all continued */
	{
		SvcModel	m = fake(3, 100);
		int32_t		old[3] = {4, 2, 9};
		int64_t		shared[9] = {90, 0, 0, 0, 80, 0, 0, 0, 70};
		int32_t		want[3] = {4, 2, 9};

		CHECK(svc_lineage_match(env, &m, old, 3, 11, shared, &err) == SVC_OK, "match");
		CHECK(ids_are(&m, want) && m.next_id == 11, "continued clusters keep their ids");
		CHECK(strcmp(statuses(&m), "continued,continued,continued") == 0, "statuses %s", statuses(&m));
		CHECK(svc_lineage_check(env, &m, &err) == SVC_OK, "check: %s", err.detail);
		fake_free(&m);
	}
	/* a split: the id on the part sharing most, the other part a new id */
	{
		SvcModel	m = fake(3, 100);
		int32_t		old[2] = {7, 9};
		int64_t		shared[6] = {30, 50, 0, 0, 0, 40};
		int32_t		want[3] = {12, 7, 9};

		CHECK(svc_lineage_match(env, &m, old, 2, 12, shared, &err) == SVC_OK, "match");
		CHECK(ids_are(&m, want) && m.next_id == 13, "split: ids %d %d %d, next %d",
			  svc_cluster_id(&m, 1), svc_cluster_id(&m, 2), svc_cluster_id(&m, 3), m.next_id);
		CHECK(strcmp(statuses(&m), "split,split,continued") == 0, "statuses %s", statuses(&m));
		CHECK(svc_lineage_check(env, &m, &err) == SVC_OK, "check: %s", err.detail);
		fake_free(&m);
	}
	/* a tie between two parts: the id on the larger new cluster (the first) */
	{
		SvcModel	m = fake(2, 100);
		int32_t		old[1] = {3};
		int64_t		shared[2] = {40, 40};
		int32_t		want[2] = {3, 4};

		CHECK(svc_lineage_match(env, &m, old, 1, 4, shared, &err) == SVC_OK &&
			  ids_are(&m, want), "a tie keeps the id on the first");
		CHECK(svc_lineage_check(env, &m, &err) == SVC_OK, "check: %s", err.detail);
		fake_free(&m);
	}
	/* a merge: the id of the old cluster it shares most with */
	{
		SvcModel	m = fake(1, 100);
		int32_t		old[3] = {1, 2, 3};
		int64_t		shared[3] = {10, 30, 5};
		int32_t		want[1] = {2};

		CHECK(svc_lineage_match(env, &m, old, 3, 4, shared, &err) == SVC_OK &&
			  ids_are(&m, want) && m.n_links == 3, "merged under 2 (%d links)", m.n_links);
		CHECK(strcmp(statuses(&m), "merged") == 0, "statuses %s", statuses(&m));
		CHECK(svc_lineage_check(env, &m, &err) == SVC_OK, "check: %s", err.detail);
		fake_free(&m);
	}
	/* a new cluster and an old one that ended */
	{
		SvcModel	m = fake(2, 100);
		int32_t		old[2] = {1, 2};
		int64_t		shared[4] = {60, 0, 0, 0};
		int32_t		want[2] = {1, 3};

		CHECK(svc_lineage_match(env, &m, old, 2, 3, shared, &err) == SVC_OK &&
			  ids_are(&m, want) && m.next_id == 4, "new cluster gets 3");
		CHECK(strcmp(statuses(&m), "continued,new") == 0, "statuses %s", statuses(&m));
		CHECK(m.n_links == 2 && m.links[0].kind == SVC_LINK_ENDED && m.links[0].old_id == 2,
			  "old cluster 2 ended");
		CHECK(svc_lineage_check(env, &m, &err) == SVC_OK, "check: %s", err.detail);
		fake_free(&m);
	}
	/* ids past INT32_MAX - 1 are refused, not wrapped */
	{
		SvcModel	m = fake(2, 100);
		int32_t		old[1] = {5};
		int64_t		shared[2] = {60, 0};

		CHECK(svc_lineage_match(env, &m, old, 1, INT32_MAX, shared, &err) == SVC_ERR_LIMIT &&
			  m.cluster_id == NULL, "the last id: %s", err.message);
		fake_free(&m);
	}
}

/* Three blobs at (0,0), (6,0), (3,5); the cluster of each centre. */
static void
centre_ids(const SvcModel *m, const double centres[][2], int n, int32_t *out)
{
	SvcLabelWork w;
	SvcError	err;
	double		xs[2];

	if (svc_label_work_init(env, m, &w, &err) != SVC_OK)
		exit(1);
	for (int i = 0; i < n; i++)
	{
		svc_model_scale_row(m, centres[i], xs);
		out[i] = svc_cluster_id(m, svc_label_predict(m, xs, &w, NULL));
	}
	svc_label_work_free(env, &w);
}

/* Offset of section 7's header in an encoded model that has it last. */
static size_t
ids_section_at(const SvcModel *m, size_t len)
{
	return len - 4 - 8 - (8 + 4 * (size_t) m->n_clusters + 24 * (size_t) m->n_links);
}

/* Decode buf with its checksum made right: OK or CORRUPT, and an OK model re-encodes to buf. */
static bool
decodes_whole_or_refused(uint8_t *buf, size_t len, int *refused)
{
	SvcModel	back;
	SvcError	err;
	SvcStatus	st;
	bool		ok = true;

	svc_store_u32(buf + len - 4, svc_crc32c(buf, len - 4));
	st = svc_model_decode(env, buf, len, &back, &err);
	if (st == SVC_OK)
	{
		size_t		l2;
		uint8_t    *again = encode(&back, &l2);

		ok = l2 == len && memcmp(again, buf, len) == 0;
		free(again);
	}
	else
	{
		ok = st == SVC_ERR_CORRUPT;
		(*refused)++;
	}
	svc_model_free(env, &back);
	return ok;
}

static void
test_warm_and_section(void)
{
	static const double centres[3][2] = {{0, 0}, {6, 0}, {3, 5}};
	static const double moved[3][2] = {{0.6, 0.3}, {6, 0}, {3, 5}};
	double	   *a = blobs(600, 21),
			   *b = blobs(300, 22);
	SvcModel	init,
				warm,
				back;
	SvcError	err;
	int32_t		before[3],
				after[3];
	size_t		len,
				init_len;
	uint8_t    *buf,
			   *init_buf;

	/* the init model's clusters are numbered by size; reversed rows would too */
	init = train("{\"budget\": 60, \"min_cluster_size\": 5}", a, 600);
	CHECK(init.cluster_id == NULL, "a model trained from scratch has no ids section");
	init_buf = encode(&init, &init_len);
	CHECK(svc_model_format_version(&init) != SVC_MODEL_FORMAT_SECTIONS, "and keeps its format");
	centre_ids(&init, centres, 3, before);

	/* the first blob moves a little: every cluster keeps its id */
	for (int i = 0; i < 300; i += 3)
	{
		b[2 * i] += 0.6;
		b[2 * i + 1] += 0.3;
	}
	CHECK(svc_fit_rows_warm(env, b, 300, 2, &init.opt, &init, &warm, &err) == SVC_OK,
		  "warm: %s", err.message);
	centre_ids(&warm, moved, 3, after);
	CHECK(warm.n_clusters == 3 && warm.cluster_id != NULL &&
		  after[0] == before[0] && after[1] == before[1] && after[2] == before[2],
		  "ids at the centres %d %d %d before, %d %d %d after", before[0], before[1], before[2],
		  after[0], after[1], after[2]);
	CHECK(strcmp(statuses(&warm), "continued,continued,continued") == 0, "statuses %s",
		  statuses(&warm));
	CHECK(warm.next_id == 4, "next id %d", warm.next_id);

	/* the ids round-trip, in format 5's section 7 */
	buf = encode(&warm, &len);
	CHECK(svc_model_format_version(&warm) == SVC_MODEL_FORMAT_SECTIONS &&
		  svc_load_u16(buf + ids_section_at(&warm, len)) == 7, "section 7 is there, last");
	CHECK(svc_model_decode(env, buf, len, &back, &err) == SVC_OK &&
		  memcmp(back.cluster_id, warm.cluster_id, 3 * sizeof(int32_t)) == 0 &&
		  back.next_id == warm.next_id && back.n_links == warm.n_links,
		  "decoded: %s", err.message);
	svc_model_free(env, &back);

	/* every byte of the section damaged: refused, or a model that re-encodes to it */
	{
		size_t		from = ids_section_at(&warm, len);
		int			refused = 0,
					tried = 0;
		bool		all = true;
		uint8_t    *dam = malloc(len);

		for (size_t at = from; at < len - 4; at++)
		{
			const uint8_t values[4] = {0x00, 0xff, (uint8_t) (buf[at] ^ 1), (uint8_t) (buf[at] + 1)};

			for (int v = 0; v < 4; v++)
			{
				if (values[v] == buf[at])
					continue;
				memcpy(dam, buf, len);
				dam[at] = values[v];
				all &= decodes_whole_or_refused(dam, len, &refused);
				tried++;
			}
		}
		CHECK(all, "each damage refused or decoded whole");
		CHECK(refused * 10 >= tried * 9, "%d of %d damaged sections refused", refused, tried);
		printf("  section 7: %d of %d one-byte damages refused\n", refused, tried);

		/* cut short: the section and the model one link shorter */
		memcpy(dam, buf, len);
		svc_store_u32(dam + from + 4, svc_load_u32(dam + from + 4) - 24);
		memmove(dam + len - 4 - 24, dam + len - 4, 4);
		refused = 0;
		CHECK(decodes_whole_or_refused(dam, len - 24, &refused) && refused == 1,
			  "a section a link short is refused");
		/* two clusters with one id */
		memcpy(dam, buf, len);
		svc_store_u32(dam + from + 8 + 8 + 4, svc_load_u32(dam + from + 8 + 8));
		refused = 0;
		CHECK(decodes_whole_or_refused(dam, len, &refused) && refused == 1, "duplicate ids refused");
		/* the heir's id moved to another cluster: ids swapped */
		memcpy(dam, buf, len);
		svc_store_u32(dam + from + 8 + 8, svc_load_u32(buf + from + 8 + 8 + 4));
		svc_store_u32(dam + from + 8 + 8 + 4, svc_load_u32(buf + from + 8 + 8));
		refused = 0;
		CHECK(decodes_whole_or_refused(dam, len, &refused) && refused == 1, "swapped ids refused");
		free(dam);
	}

	/* a refresh of the refresh keeps them, and the next id */
	{
		SvcModel	w2;

		CHECK(svc_fit_rows_warm(env, b, 300, 2, &warm.opt, &warm, &w2, &err) == SVC_OK,
			  "warm again: %s", err.message);
		centre_ids(&w2, moved, 3, after);
		CHECK(after[0] == before[0] && after[1] == before[1] && after[2] == before[2] &&
			  w2.next_id == 4, "ids kept again");
		svc_model_free(env, &w2);
	}

	/* what the match costs next to the warm start (printed, not asserted) */
	{
		double	   *xs = malloc(sizeof(double) * 2 * 300);
		int32_t    *lab = malloc(sizeof(int32_t) * 300);
		SvcLabelWork w;
		SvcModel	w3;
		double		t0,
					t_fit,
					t_match;

		if (svc_label_work_init(env, &warm, &w, &err) != SVC_OK)
			exit(1);
		for (int i = 0; i < 300; i++)
		{
			svc_model_scale_row(&warm, b + 2 * i, xs + 2 * i);
			lab[i] = svc_label_predict(&warm, xs + 2 * i, &w, NULL);
		}
		svc_label_work_free(env, &w);
		t0 = unit_seconds();
		CHECK(svc_fit_rows_warm(env, b, 300, 2, &init.opt, &init, &w3, &err) == SVC_OK, "warm");
		t_fit = unit_seconds() - t0;
		t0 = unit_seconds();
		CHECK(svc_lineage_from_rows(env, &w3, &init, xs, lab, 300, &err) == SVC_OK &&
			  memcmp(w3.cluster_id, warm.cluster_id, 3 * sizeof(int32_t)) == 0,
			  "the match on the new rows alone gives the same ids");
		t_match = unit_seconds() - t0;
		printf("  warm start of 300 rows %.1f ms, of which matching 300 rows about %.1f ms\n",
			   1e3 * t_fit, 1e3 * t_match);
		svc_model_free(env, &w3);
		free(xs);
		free(lab);
	}

	/* the warm start fails cleanly at each allocation of the match too */
	{
		long		left;

		for (left = 0;; left++)
		{
			UnitBudget	bud = {left, 0};
			SvcEnv		e = {.alloc = unit_fail_after_alloc, .release = unit_counted_free,
			.realloc = unit_fail_after_realloc, .ctx = &bud};
			SvcModel	m;
			SvcStatus	st = svc_fit_rows_warm(&e, b, 300, 2, &init.opt, &init, &m, &err);

			svc_model_free(&e, &m);
			if (bud.live != 0 || (st != SVC_OK && st != SVC_ERR_NOMEM))
			{
				CHECK(false, "at %ld: status %d, %ld blocks left", left, (int) st, bud.live);
				break;
			}
			if (st == SVC_OK)
				break;
		}
		printf("  warm start with ids: fails cleanly at each of %ld allocations\n", left);
	}

	free(buf);
	free(init_buf);
	svc_model_free(env, &warm);
	svc_model_free(env, &init);
	free(a);
	free(b);
}

int
main(void)
{
	test_match();
	test_warm_and_section();
	return unit_summary("test_lineage");
}
