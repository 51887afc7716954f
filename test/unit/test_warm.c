/*
 * test_warm.c - the warm start: bsgd continued from a stored model, the
 * state that carries the init model, and the model's report of it
 */
#include "bytes.h"
#include "fit.h"
#include "model.h"
#include "model_codec.h"
#include "model_report.h"
#include "options.h"
#include "state.h"
#include "unit.h"
#include "unit_data.h"

#include <stdlib.h>
#include <string.h>

static const SvcEnv *env = &svc_env_malloc;

/* A state of rows x (n of them) continuing init (NULL: none), grown as the aggregate grows it. */
static uint8_t *
make_state(const SvcOptions *opt, const uint8_t *init, size_t init_len, const double *x,
		   int64_t n, uint64_t stream, size_t *len)
{
	uint8_t    *buf = unit_state_new(2, 4, opt, init, init_len);

	if (stream > 0)
		svc_state_set_stream(buf, stream);
	/* a grown state takes every row (test_state checks it) */
	(void) unit_state_add_rows(&buf, x, n, NULL);
	*len = unit_state_len(buf);
	return buf;
}

/* Merge b into a copy of a grown to hold both; returns the copy. */
static uint8_t *
merge(const uint8_t *a, const uint8_t *b, SvcStatus *st, SvcError *err)
{
	int64_t		need = svc_state_merged_kept(a, b);
	int64_t		cap = need > svc_state_capacity(a) ? need : svc_state_capacity(a);
	uint8_t    *m = calloc(1, svc_state_size_warm(2, cap, 0, svc_state_init_len(a)));

	svc_state_copy(a, m, cap);
	*st = svc_state_merge(m, b, err);
	return m;
}

static bool
same_bytes(const SvcModel *a, const SvcModel *b)
{
	size_t		la,
				lb;
	uint8_t    *ba = encode(a, &la),
			   *bb = encode(b, &lb);
	bool		same = la == lb && memcmp(ba, bb, la) == 0;

	free(ba);
	free(bb);
	return same;
}

int
main(void)
{
	double	   *a = blobs(900, 1);
	double	   *b = blobs(300, 2);
	SvcModel	init = train("{\"budget\": 60}", a, 900);
	SvcOptions	opt = init.opt;
	SvcModel	warm,
				back;
	SvcError	err;
	SvcStatus	st;
	size_t		init_len,
				len;
	uint8_t    *init_bytes = encode(&init, &init_len);

	/* the SGD continues: the step count, the scaling and gamma */
	st = svc_fit_rows_warm(env, b, 300, 2, &opt, &init, &warm, &err);
	CHECK(st == SVC_OK, "warm start: %s", err.message);
	CHECK(warm.warm_starts == 1 && warm.warm_steps_before == init.iterations &&
		  warm.warm_rows_before == 900 && warm.warm_rows_new == 300,
		  "the report: %lld starts, %lld steps before, %lld rows before",
		  (long long) warm.warm_starts, (long long) warm.warm_steps_before,
		  (long long) warm.warm_rows_before);
	CHECK(warm.iterations >= init.iterations + 300,
		  "the steps go on from the init's (%lld, then %lld)",
		  (long long) init.iterations, (long long) warm.iterations);
	CHECK(warm.rows_seen == 1200 && warm.rows_used == 300 + init.n_sv,
		  "rows seen %lld, used %lld", (long long) warm.rows_seen, (long long) warm.rows_used);
	CHECK(warm.gamma == init.gamma && memcmp(warm.shift, init.shift, 16) == 0 &&
		  memcmp(warm.mul, init.mul, 16) == 0, "the init's gamma and scaling stay");
	CHECK(warm.n_sv <= opt.budget, "the budget holds: %d", warm.n_sv);
	CHECK(warm.n_clusters == 3, "the same data: %d clusters", warm.n_clusters);
	CHECK(warm.warm_rows_outside < 30, "blobs of the same law: %lld rows outside",
		  (long long) warm.warm_rows_outside);
	CHECK(svc_model_format_version(&warm) == SVC_MODEL_FORMAT_SECTIONS &&
		  !svc_model_has_sections(&init), "only the warm model has a section");

	/* its bytes keep the report (section 5), and svc_model_info shows it */
	{
		uint8_t    *bytes = encode(&warm, &len);
		char	   *json;

		st = svc_model_decode(env, bytes, len, &back, &err);
		CHECK(st == SVC_OK, "the warm model decodes: %s", err.message);
		CHECK(back.warm_starts == 1 && back.warm_steps_before == init.iterations &&
			  back.warm_rows_before == 900 && back.warm_rows_new == 300 &&
			  back.warm_rows_outside == warm.warm_rows_outside, "the report round-trips");
		CHECK(same_bytes(&warm, &back), "and so do the bytes");
		json = svc_model_info_json(env, &back, &err);
		CHECK(json && strstr(json, "\"warm_start\": {\"count\": 1, \"rows_before\": 900, "),
			  "info: %s", json ? strstr(json, "warm") : "NULL");
		free(json);
		/* a report whose counts cannot hold is refused */
		for (size_t off = len - 4 - 40; off < len - 4; off += 8)
		{
			uint8_t    *bad = malloc(len);
			SvcModel	m;

			memcpy(bad, bytes, len);
			svc_store_u64(bad + off, UINT64_C(1) << 40);
			svc_store_u32(bad + len - 4, svc_crc32c(bad, len - 4));
			CHECK(svc_model_decode(env, bad, len, &m, &err) == SVC_ERR_CORRUPT,
				  "warm report field at %zu out of range refused", off);
			svc_model_free(env, &m);
			free(bad);
		}
		svc_model_free(env, &back);
		free(bytes);
	}

	/* a second warm start counts two and continues from the first's steps */
	{
		SvcModel	w2;

		st = svc_fit_rows_warm(env, a, 300, 2, &opt, &warm, &w2, &err);
		CHECK(st == SVC_OK && w2.warm_starts == 2 && w2.warm_steps_before == warm.iterations &&
			  w2.rows_seen == 1500, "second warm start: %s", err.message);
		svc_model_free(env, &w2);
	}

	/* every strategy, and widths (bandwidth_k), continue */
	{
		static const char *const configs[] = {
			"{\"budget\": 40, \"strategy\": \"removal\"}",
			"{\"budget\": 40, \"strategy\": \"project-random\"}",
			"{\"strategy\": \"unbudgeted\", \"max_iter\": 3000}",
			"{\"budget\": 40, \"bandwidth_k\": 5}",
			"{\"budget\": 40, \"labeling\": \"paper\"}",
		};

		for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
		{
			SvcModel	i0 = train(configs[i], a, 600);
			SvcModel	w;

			st = svc_fit_rows_warm(env, b, 300, 2, &i0.opt, &i0, &w, &err);
			CHECK(st == SVC_OK && w.iterations > i0.iterations &&
				  (i0.opt.strategy == SVC_STRATEGY_UNBUDGETED || w.n_sv <= i0.opt.budget) &&
				  (i0.opt.bandwidth_k == 0) == (w.sv_gamma == NULL) && w.n_clusters >= 1,
				  "%s: %s (%d support vectors, %d clusters)", configs[i],
				  st == SVC_OK ? "ok" : err.message, w.n_sv, w.n_clusters);
			svc_model_free(env, &w);
			svc_model_free(env, &i0);
		}
	}

	/* the options: another non-cut value is refused with both values, a cut one applies */
	{
		SvcOptions	o = init.opt;
		SvcModel	m;

		o.budget = 300;
		st = svc_fit_rows_warm(env, b, 300, 2, &o, &init, &m, &err);
		CHECK(st == SVC_ERR_INVALID_PARAMETER &&
			  strcmp(err.message, "option \"budget\" differs from the init model's (60 vs 300)") == 0,
			  "budget conflict: %s", err.message);
		CHECK(strstr(err.hint, "Leave \"budget\" out") != NULL, "hint: %s", err.hint);
		svc_model_free(env, &m);
		o = init.opt;
		o.n_clusters = 1;
		st = svc_fit_rows_warm(env, b, 300, 2, &o, &init, &m, &err);
		CHECK(st == SVC_OK && m.n_clusters == 1, "a cut option applies: %d", m.n_clusters);
		svc_model_free(env, &m);
		o = init.opt;
		st = svc_fit_rows_warm(env, b, 200, 3, &o, &init, &m, &err);
		CHECK(st == SVC_ERR_DIMENSION, "other dimensions: %s", err.message);
		svc_model_free(env, &m);
	}

	/* an exact solver's model is refused with a hint */
	{
		SvcModel	smo = train("{\"solver\": \"smo\"}", a, 200);
		SvcOptions	o = smo.opt;
		SvcModel	m;

		st = svc_fit_rows_warm(env, b, 300, 2, &o, &smo, &m, &err);
		CHECK(st == SVC_ERR_INVALID_PARAMETER &&
			  strstr(err.message, "\"smo\" without kept rows cannot be warm-started") != NULL &&
			  strstr(err.hint, "keep_rows") != NULL, "smo refused: %s", err.message);
		svc_model_free(env, &m);
		svc_model_free(env, &smo);
	}

	/* drift: rows far from the init's range are counted */
	{
		double	   *far = malloc(sizeof(double) * 600);
		SvcModel	m;

		for (int i = 0; i < 600; i++)
			far[i] = b[i] + (i % 2 == 0 ? 40.0 : 0.0);
		st = svc_fit_rows_warm(env, far, 300, 2, &opt, &init, &m, &err);
		CHECK(st == SVC_OK && m.warm_rows_outside == 300, "moved rows: %lld outside",
			  (long long) m.warm_rows_outside);
		svc_model_free(env, &m);
		free(far);
	}

	/* the state: without an init it is the plain state, to the byte */
	{
		size_t		l1,
					l2;
		uint8_t    *s1 = make_state(&opt, NULL, 0, b, 300, 0, &l1);
		uint8_t    *s2;
		int64_t		cap = 4;

		s2 = calloc(1, svc_state_size(2, cap));
		svc_state_init(s2, 2, cap, &opt);
		for (int64_t i = 0; i < 300; i++)
			if (!svc_state_add(s2, b + 2 * i))
			{
				int64_t		next = svc_state_next_capacity(s2);
				uint8_t    *g = calloc(1, svc_state_size(2, next));

				svc_state_copy(s2, g, next);
				free(s2);
				s2 = g;
				svc_state_add(s2, b + 2 * i);
			}
		l2 = svc_state_size(2, svc_state_capacity(s2));
		CHECK(l1 == l2 && memcmp(s1, s2, l1) == 0 && svc_state_init_len(s1) == 0,
			  "no init: the plain state");
		free(s1);
		free(s2);
	}

	/* a state with an init: checks, keeps the init through growth, fits warm */
	{
		uint8_t    *s = make_state(&opt, init_bytes, init_len, b, 300, 0, &len);
		SvcModel	m;

		CHECK(svc_state_check(s, len, &err) == SVC_OK, "warm state checks: %s", err.message);
		CHECK(svc_state_init_equal(s, init_bytes, init_len), "the init survives growth");
		st = svc_fit_state(env, s, &m, &err);
		CHECK(st == SVC_OK && m.warm_starts == 1 && m.warm_steps_before == init.iterations &&
			  m.iterations > init.iterations, "fit of a warm state: %s", err.message);
		svc_model_free(env, &m);

		/* damaged tails and lengths are refused */
		{
			uint8_t    *bad = malloc(len);

			memcpy(bad, s, len);
			bad[len - init_len] ^= 0x55;
			CHECK(svc_state_check(bad, len, &err) == SVC_ERR_CORRUPT, "init magic damaged");
			CHECK(svc_state_check(s, len - 1, &err) == SVC_ERR_CORRUPT, "truncated tail");
			memcpy(bad, s, len);
			bad[len - 10] ^= 0x55;
			CHECK(svc_state_check(bad, len, &err) == SVC_OK &&
				  svc_fit_state(env, bad, &m, &err) == SVC_ERR_CORRUPT,
				  "an init model damaged inside is refused by the fit: %s", err.message);
			svc_model_free(env, &m);
			free(bad);
		}

		/* an older version is refused with a hint, never misread */
		s[4] = 4;
		CHECK(svc_state_check(s, len, &err) == SVC_ERR_CORRUPT &&
			  strstr(err.detail, "older version") != NULL && err.hint[0] != '\0',
			  "version 4 refused: %s", err.detail);
		free(s);
	}

	/* combine: two halves of the rows in two streams give the one-state model */
	{
		size_t		la,
					lb,
					lw;
		uint8_t    *sa = make_state(&opt, init_bytes, init_len, b, 150, 1, &la);
		uint8_t    *sb = make_state(&opt, init_bytes, init_len, b + 300, 150, 2, &lb);
		uint8_t    *whole = make_state(&opt, init_bytes, init_len, b, 300, 0, &lw);
		uint8_t    *merged = merge(sa, sb, &st, &err);
		SvcModel	m1,
					m2;

		CHECK(st == SVC_OK, "merge of one init: %s", err.message);
		CHECK(svc_state_init_equal(merged, init_bytes, init_len), "the merge keeps the init");
		CHECK(svc_fit_state(env, merged, &m1, &err) == SVC_OK &&
			  svc_fit_state(env, whole, &m2, &err) == SVC_OK, "both fit");
		CHECK(same_bytes(&m1, &m2), "merged halves = one state (every row kept)");
		svc_model_free(env, &m1);
		svc_model_free(env, &m2);
		free(merged);

		/* another init (or none) on one side: refused */
		{
			size_t		lw2,
						lp;
			uint8_t    *w2 = encode(&warm, &lw2);
			uint8_t    *sc = make_state(&opt, w2, lw2, b + 300, 150, 2, &lp);
			uint8_t    *plain = make_state(&opt, NULL, 0, b + 300, 150, 2, &lp);

			merged = merge(sa, sc, &st, &err);
			CHECK(st == SVC_ERR_INVALID_PARAMETER &&
				  strstr(err.message, "different init models") != NULL,
				  "different inits refused: %s", err.message);
			free(merged);
			merged = merge(sa, plain, &st, &err);
			CHECK(st == SVC_ERR_INVALID_PARAMETER, "init and none refused: %s", err.message);
			free(merged);
			merged = merge(plain, sa, &st, &err);
			CHECK(st == SVC_ERR_INVALID_PARAMETER, "none and init refused: %s", err.message);
			free(merged);
			free(w2);
			free(sc);
			free(plain);
		}
		free(sa);
		free(sb);
		free(whole);
	}

	/* allocation failures and interrupts leave nothing behind */
	{
		long		fails = 0;

		for (long k = 0;; k++)
		{
			UnitBudget	bud = {.left = k};
			SvcEnv		e = svc_env_malloc;
			SvcModel	m;

			e.ctx = &bud;
			e.alloc = unit_fail_after_alloc;
			e.release = unit_counted_free;
			e.realloc = unit_fail_after_realloc;
			/* the model is freed whether the fit failed or not, as the fit's tests do */
			st = svc_fit_rows_warm(&e, b, 300, 2, &opt, &init, &m, &err);
			svc_model_free(&e, &m);
			if (st == SVC_OK)
			{
				CHECK(bud.live == 0, "no leak after success");
				break;
			}
			fails++;
			CHECK(st == SVC_ERR_NOMEM && bud.live == 0,
				  "allocation %ld fails cleanly (%d, %ld live)", k, (int) st, bud.live);
		}
		printf("  warm fit: fails cleanly at each of %ld allocations\n", fails);
	}

	svc_model_free(env, &warm);
	svc_model_free(env, &init);
	free(init_bytes);
	free(a);
	free(b);
	return unit_summary("test_warm");
}
