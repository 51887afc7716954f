/*
 * test_keep.c - models that keep their rows: loading a solution into the
 * incremental solver, changing bounds, the exact warm start (smo's optimum
 * on the union, and on a sliding window), the window's reservoir, and the
 * kept rows' section refused when damaged
 */
#include "bytes.h"
#include "fit.h"
#include "incremental.h"
#include "kernel.h"
#include "model.h"
#include "model_codec.h"
#include "model_report.h"
#include "options.h"
#include "smo.h"
#include "solver_smo.h"
#include "unit.h"
#include "unit_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const SvcEnv *env = &svc_env_malloc;

/* smo on n rows x (d = 2) at gamma and bound c; alpha (n) and offset out. */
static bool
smo_solve(const double *x, int64_t n, double gamma, double c, double *alpha, double *offset)
{
	SvcSmoParams p;
	SvcSmoResult r;
	SvcError	err;

	svc_smo_params_default(&p);
	p.gamma = gamma;
	p.c_all = c;
	p.eps = 1e-12;
	p.shrinking = false;
	if (svc_smo_solve(env, x, n, 2, &p, &r, &err) != SVC_OK)
	{
		printf("smo: %s\n", err.message);
		return false;
	}
	memcpy(alpha, r.alpha, sizeof(double) * (size_t) n);
	*offset = r.offset;
	svc_smo_result_free(env, &r);
	return true;
}

static double
f_of(const double *x, const double *alpha, int64_t n, double gamma, double offset,
	 const double *y)
{
	double		s = 0.0;

	for (int64_t j = 0; j < n; j++)
		if (alpha[j] > 0)
			s += alpha[j] * exp(-gamma * svc_sqdist(y, x + 2 * j, 2));
	return s - offset;
}

static SvcIncr *
new_incr(int64_t cap, double gamma)
{
	SvcIncrParams p = {.d = 2, .gamma = gamma, .capacity = cap, .memory = 0};
	SvcIncr    *s = NULL;
	SvcError	err;

	if (svc_incr_create(env, &p, &s, &err) != SVC_OK)
		printf("create: %s\n", err.message);
	return s;
}

/* The load of smo's own solution is smo's f; a perturbed alpha is refused. */
static void
test_load_and_bounds(void)
{
	int64_t		n = 240;
	double		gamma = 0.8,
				c = svc_smo_c(0.1, n),
				c2 = svc_smo_c(0.1, 2 * n),
				offset,
				offset2,
				viol,
				worst = 0.0;
	double	   *x = blobs(n, 7);
	double	   *alpha = malloc(sizeof(double) * n),
			   *alpha2 = malloc(sizeof(double) * n),
			   *bound = malloc(sizeof(double) * n);
	int64_t    *slot = malloc(sizeof(int64_t) * n);
	SvcIncr    *s;
	SvcError	err;
	SvcStatus	st;

	CHECK(smo_solve(x, n, gamma, c, alpha, &offset), "smo solves");
	for (int64_t i = 0; i < n; i++)
		bound[i] = c;
	s = new_incr(n, gamma);
	st = svc_incr_load(s, x, alpha, bound, n, 1e-8, slot, &viol, &err);
	CHECK(st == SVC_OK, "the load of smo's solution is accepted (%s)", st ? err.message : "");
	CHECK(viol < 1e-9, "KKT after the load: %g", viol);
	for (int64_t i = 0; i < n; i++)
		worst = fmax(worst, fabs(svc_incr_decision(s, x + 2 * i) -
								 f_of(x, alpha, n, gamma, offset, x + 2 * i)));
	CHECK(worst < 1e-9, "the loaded f is smo's (%g)", worst);

	/* the bound lowered to C of twice the rows: smo's solution at c2 */
	for (int64_t i = 0; i < n && st == SVC_OK; i++)
		st = svc_incr_set_bound(s, slot[i], c2, &slot[i], &err);
	CHECK(st == SVC_OK, "set_bound on every row");
	viol = svc_incr_kkt_violation(s, &err);
	CHECK(viol < 1e-9, "KKT after the bounds moved: %g", viol);
	CHECK(smo_solve(x, n, gamma, c2, alpha2, &offset2), "smo solves at c2");
	worst = 0.0;
	for (int64_t i = 0; i < n; i++)
		worst = fmax(worst, fabs(svc_incr_decision(s, x + 2 * i) -
								 f_of(x, alpha2, n, gamma, offset2, x + 2 * i)));
	CHECK(worst < 1e-8, "after set_bound f is smo's at the new C (%g)", worst);
	/* ... and raised back */
	for (int64_t i = 0; i < n && st == SVC_OK; i++)
		st = svc_incr_set_bound(s, svc_incr_rows(s) > 0 ? slot[i] : 0, c, &slot[i], &err);
	worst = 0.0;
	for (int64_t i = 0; i < n; i++)
		worst = fmax(worst, fabs(svc_incr_decision(s, x + 2 * i) -
								 f_of(x, alpha, n, gamma, offset, x + 2 * i)));
	CHECK(st == SVC_OK && worst < 1e-8, "raised again, f is smo's at the old C (%g)", worst);
	svc_incr_free(s);

	/* a perturbed solution: refused as not optimal */
	for (int64_t i = 0; i < n; i++)
		if (alpha[i] > 0 && alpha[i] < c)
		{
			alpha[i] *= 0.9;
			break;
		}
	s = new_incr(n, gamma);
	st = svc_incr_load(s, x, alpha, bound, n, 1e-8, slot, &viol, &err);
	CHECK(st == SVC_ERR_INVALID_INPUT && strstr(err.message, "not optimal") != NULL,
		  "a perturbed alpha is refused (%s)", err.message);
	svc_incr_free(s);
	/* an alpha above its bound: refused */
	alpha[0] = 2 * c;
	s = new_incr(n, gamma);
	st = svc_incr_load(s, x, alpha, bound, n, 1e-8, slot, &viol, &err);
	CHECK(st == SVC_ERR_INVALID_INPUT, "an alpha above its bound is refused");
	svc_incr_free(s);
	free(x);
	free(alpha);
	free(alpha2);
	free(bound);
	free(slot);
}

static SvcModel
warm(const SvcModel *init, const double *x, int64_t n)
{
	SvcModel	m;
	SvcError	err;

	if (svc_fit_rows_warm(env, x, n, 2, &init->opt, init, &m, &err) != SVC_OK)
	{
		fprintf(stderr, "warm: %s\n", err.message);
		exit(1);
	}
	return m;
}

/* f of the model against smo on its own kept rows (the window), scaled. */
static double
against_smo(const SvcModel *m)
{
	int64_t		n = m->keep_n;
	double	   *alpha = malloc(sizeof(double) * n);
	double		offset,
				worst = -1.0;

	if (smo_solve(m->keep_x, n, m->gamma, svc_smo_c(m->opt.nu, n), alpha, &offset))
	{
		worst = 0.0;
		for (int64_t i = 0; i < n; i++)
			worst = fmax(worst, fabs(svc_model_decision_scaled(m, m->keep_x + 2 * i) -
									 f_of(m->keep_x, alpha, n, m->gamma, offset,
										  m->keep_x + 2 * i)));
	}
	free(alpha);
	return worst;
}

static SvcModel
roundtrip(const SvcModel *m)
{
	size_t		len;
	uint8_t    *buf = encode(m, &len);
	SvcModel	back;
	SvcError	err;
	SvcStatus	st = svc_model_decode(env, buf, len, &back, &err);

	CHECK(st == SVC_OK, "the model decodes (%s)", st ? err.message : "");
	free(buf);
	return back;
}

/* Damage one f64 or u64 of the kept rows' section (at the end) and decode. */
static bool
refused_when(const SvcModel *m, size_t from_end, uint64_t bits, const char *what)
{
	size_t		len;
	uint8_t    *buf = encode(m, &len);
	SvcModel	back;
	SvcError	err;
	SvcStatus	st;

	/* a warm-started model's cluster ids (section 7) follow the kept rows */
	if (m->cluster_id != NULL)
		from_end += 8 + 8 + 4 * (size_t) m->n_clusters + 24 * (size_t) m->n_links;
	svc_store_u64(buf + len - 4 - from_end, bits);
	svc_store_u32(buf + len - 4, svc_crc32c(buf, len - 4));
	st = svc_model_decode(env, buf, len, &back, &err);
	svc_model_free(env, &back);
	if (st != SVC_OK && strstr(err.detail, "kept") == NULL)
		printf("  %s: %s\n", what, err.detail);
	free(buf);
	return st == SVC_ERR_CORRUPT;
}

static void
test_warm_union_and_window(void)
{
	double	   *a = blobs(300, 11),
			   *b = blobs(200, 12),
			   *stream = blobs(700, 13);
	SvcModel	init = train("{\"solver\": \"incremental\", \"keep_rows\": true, "
							 "\"outlier_fraction\": 0.1, \"gamma\": 1.2, \"sample\": 1000}", a, 300);
	SvcModel	smo_init = train("{\"solver\": \"smo\", \"keep_rows\": true, \"tol\": 1e-9, "
								 "\"outlier_fraction\": 0.1, \"gamma\": 1.2, \"sample\": 1000}", a, 300);
	SvcModel	back,
				w,
				w2;
	double		diff;
	char	   *info;

	CHECK(init.keep_n == 300 && init.keep_counter[0] == 1 && init.keep_counter[299] == 300 &&
		  init.keep_next == 301, "the fit keeps all its rows, counters 1..300");
	CHECK(against_smo(&init) < 1e-8, "the kept solution is smo's");
	back = roundtrip(&init);
	CHECK(back.keep_n == 300 && memcmp(back.keep_alpha, init.keep_alpha, 300 * 8) == 0 &&
		  memcmp(back.keep_x, init.keep_x, 600 * 8) == 0, "the kept rows round-trip");
	svc_model_free(env, &back);

	/* the union: C from 1/(0.1 * 300) to 1/(0.1 * 500) */
	w = warm(&init, b, 200);
	diff = against_smo(&w);
	CHECK(w.keep_n == 500 && w.keep_added == 200 && w.keep_removed == 0 &&
		  diff >= 0 && diff < 1e-6, "the warm start is smo on the union (%g)", diff);
	CHECK(w.rows_used == 500 && w.rows_seen == 500, "rows used and seen: %lld %lld",
		  (long long) w.rows_used, (long long) w.rows_seen);
	back = roundtrip(&w);
	svc_model_free(env, &back);
	/* from smo's own solution the same */
	w2 = warm(&smo_init, b, 200);
	diff = 0.0;
	for (int64_t i = 0; i < 500; i++)
		diff = fmax(diff, fabs(svc_model_decision_scaled(&w, w.keep_x + 2 * i) -
							   svc_model_decision_scaled(&w2, w.keep_x + 2 * i)));
	CHECK(diff < 1e-6, "from an smo init the same f (%g)", diff);
	svc_model_free(env, &w2);
	svc_model_free(env, &w);

	/* oldest first: a window of 250 over 300 + 7 x 100 rows is smo on the last 250 */
	{
		SvcModel	cur = train("{\"solver\": \"incremental\", \"keep_rows\": true, "
								"\"outlier_fraction\": 0.1, \"gamma\": 1.2, \"sample\": 250}",
								a, 250);
		bool		same_rows = true;
		SvcError	info_err;

		for (int k = 0; k < 7; k++)
		{
			SvcModel	next = warm(&cur, stream + 200 * k, 100);

			svc_model_free(env, &cur);
			cur = next;
		}
		diff = against_smo(&cur);
		CHECK(cur.keep_n == 250 && cur.keep_counter[0] == 250 + 700 - 250 + 1 &&
			  cur.keep_next == 951 && cur.keep_removed == 100 && cur.keep_added == 100,
			  "the window holds the last 250 rows (counters %lld..%lld)",
			  (long long) cur.keep_counter[0], (long long) cur.keep_counter[cur.keep_n - 1]);
		for (int64_t i = 0; i < 250; i++)
		{
			double		xs[2];

			svc_model_scale_row(&cur, stream + 2 * (450 + i), xs);
			same_rows &= memcmp(xs, cur.keep_x + 2 * i, sizeof(xs)) == 0;
		}
		CHECK(same_rows, "the window's rows are the last 250, in order");
		CHECK(diff >= 0 && diff < 1e-6, "the window is smo on its rows (%g)", diff);
		info = svc_model_info_json(env, &cur, &info_err);
		CHECK(info != NULL && strstr(info, "\"kept_rows\": {\"rows\": 250, \"window\": \"oldest\"") != NULL &&
			  strstr(info, "\"oldest\": 701, \"newest\": 950") != NULL,
			  "svc_model_info reports the window: %s", info ? strstr(info, "kept_rows") : "");
		free(info);

		/* damage: alpha above its bound, a counter out of order, a NaN row */
		CHECK(refused_when(&cur, 8 * 250 + 8 * 250 + 8 * 3, UINT64_C(0x3ff0000000000000), "alpha"),
			  "an alpha of 1 above its bound is refused");
		CHECK(refused_when(&cur, 8 * 3, 5, "counter"), "a counter out of order is refused");
		CHECK(refused_when(&cur, 8 * 250 * 3 + 16, UINT64_C(0x7ff8000000000000), "nan"),
			  "a NaN kept row is refused");
		CHECK(refused_when(&cur, 8 * 250 * 3 + 8 * 500 + 32, 0, "count"),
			  "a kept count of 0 is refused");
		svc_model_free(env, &cur);
	}

	/* the reservoir: reproducible, and smo on its rows */
	{
		SvcModel	r[2];

		for (int t = 0; t < 2; t++)
		{
			SvcModel	cur = train("{\"solver\": \"smo\", \"tol\": 1e-9, \"keep_rows\": true, "
									"\"window\": \"reservoir\", \"seed\": 5, "
									"\"outlier_fraction\": 0.1, \"gamma\": 1.2, \"sample\": 200}",
									a, 200);

			for (int k = 0; k < 3; k++)
			{
				SvcModel	next = warm(&cur, stream + 200 * k, 150);

				svc_model_free(env, &cur);
				cur = next;
			}
			r[t] = cur;
		}
		CHECK(r[0].keep_n == 200 && r[0].keep_next == 651 &&
			  memcmp(r[0].keep_counter, r[1].keep_counter, 200 * 8) == 0 &&
			  memcmp(r[0].keep_alpha, r[1].keep_alpha, 200 * 8) == 0,
			  "the reservoir is the same from the same seed");
		CHECK(r[0].keep_counter[0] < 201 && r[0].keep_counter[199] > 500,
			  "the reservoir mixes old and new rows (%lld..%lld)",
			  (long long) r[0].keep_counter[0], (long long) r[0].keep_counter[199]);
		diff = against_smo(&r[0]);
		CHECK(diff >= 0 && diff < 1e-6, "the reservoir's model is smo on its rows (%g)", diff);
		svc_model_free(env, &r[0]);
		svc_model_free(env, &r[1]);
	}

	/* refusals: bsgd and aid with keep_rows, an exact model without kept rows */
	{
		SvcOptions	opt;
		SvcError	err;
		SvcModel	plain = train("{\"solver\": \"smo\"}", a, 100);

		CHECK(parse("{\"keep_rows\": true}", &opt, &err) == SVC_ERR_INVALID_PARAMETER &&
			  strstr(err.hint, "warm-started") != NULL, "bsgd refuses keep_rows with a hint");
		CHECK(parse("{\"keep_rows\": true, \"solver\": \"aid\"}", &opt, &err) ==
			  SVC_ERR_INVALID_PARAMETER, "aid refuses keep_rows");
		CHECK(parse("{\"keep_rows\": 1, \"solver\": \"smo\"}", &opt, &err) ==
			  SVC_ERR_INVALID_PARAMETER, "keep_rows takes a boolean");
		CHECK(parse("{\"window\": \"reservoir\", \"solver\": \"smo\"}", &opt, &err) ==
			  SVC_ERR_INVALID_PARAMETER, "window needs keep_rows");
		CHECK(svc_fit_warm_check(&plain, 2, &plain.opt, &err) == SVC_ERR_INVALID_PARAMETER &&
			  strstr(err.hint, "keep_rows") != NULL, "an smo model without kept rows is refused");
		svc_model_free(env, &plain);
	}
	svc_model_free(env, &init);
	svc_model_free(env, &smo_init);
	free(a);
	free(b);
	free(stream);
}

/*
 * An smo init trained to a loose tol is not the optimum of its rows to the
 * load's tolerance: the warm start solves the window again by increments,
 * and ends on the same model.  Then allocation failures and interrupts of
 * a warm start whose window overflows leave nothing behind.
 */
static void
test_fallback_and_failures(void)
{
	double	   *a = blobs(200, 21),
			   *b = blobs(150, 22);
	SvcModel	loose = train("{\"solver\": \"smo\", \"tol\": 0.1, \"keep_rows\": true, "
							  "\"outlier_fraction\": 0.1, \"gamma\": 1.2, \"sample\": 300}", a, 200);
	SvcModel	w = warm(&loose, b, 150);
	double		diff = against_smo(&w);

	CHECK(w.keep_n == 300 && w.keep_removed == 50 && diff >= 0 && diff < 1e-6,
		  "a loose smo init is solved again: smo on the window (%g)", diff);
	svc_model_free(env, &w);

	for (int kind = 0; kind < 2; kind++)
	{
		long		fails = 0;

		for (long k = 0;; k++)
		{
			UnitBudget	bud = {.left = k};
			SvcEnv		e = {.alloc = kind == 0 ? unit_fail_after_alloc : unit_counted_alloc,
				.release = unit_counted_free,
				.realloc = kind == 0 ? unit_fail_after_realloc : unit_counted_realloc,
				.interrupt = kind == 1 ? unit_stop_after : NULL, .ctx = &bud};
			SvcModel	m;
			SvcError	err;
			SvcStatus	st = svc_fit_rows_warm(&e, b, 150, 2, &loose.opt, &loose, &m, &err);

			svc_model_free(&e, &m);
			if (st == SVC_OK)
			{
				CHECK(bud.live == 0, "no leak after success");
				break;
			}
			fails++;
			CHECK(st == (kind == 0 ? SVC_ERR_NOMEM : SVC_ERR_INTERRUPTED) && bud.live == 0,
				  "failure %ld of kind %d is clean (%d: %s, %ld live)", k, kind, (int) st,
				  err.message, bud.live);
			if (under_valgrind() && k > 40)
				break;
		}
		printf("  keep warm start: %s cleanly at each of %ld %s\n", kind ? "stops" : "fails",
			   fails, kind ? "checks" : "allocations");
	}
	svc_model_free(env, &loose);
	free(a);
	free(b);
}

int
main(void)
{
	test_load_and_bounds();
	test_warm_union_and_window();
	test_fallback_and_failures();
	return unit_summary("test_keep");
}
