/*
 * test_solver_smo.c - the solver "smo" end to end: options, the fit, the
 * model's version 4 bytes and the memory budget
 */
#include "bytes.h"
#include "fit.h"
#include "kernel.h"
#include "model.h"
#include "model_codec.h"
#include "model_report.h"
#include "options.h"
#include "options_text.h"
#include "smo.h"
#include "solver.h"
#include "solver_smo.h"
#include "state.h"
#include "unit.h"
#include "unit_data.h"
#include "unit_state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */

static void
test_options(void)
{
	SvcOptions	o;
	SvcError	err;
	uint8_t		wire[SVC_OPTIONS_WIRE_SIZE];

	/* defaults: bsgd, and every byte from 120 on stays 0 but 121's bits (options.h) */
	svc_options_default(&o);
	CHECK(o.solver == SVC_SOLVER_BSGD && o.cache_mb == 0, "default solver bsgd, cache_mb 0");
	svc_options_encode(&o, wire);
	CHECK(wire[120] == 0 && wire[121] == (SVC_OPTIONS_BIT_GAMMA_AUTO | SVC_OPTIONS_BIT_KEEP_ISOLATED |
											 SVC_OPTIONS_BIT_SIZE_SEPARATED | SVC_OPTIONS_BIT_ASSIGN_AUTO) &&
		  svc_load_u32(wire + 124) == 0,
		  "the defaults keep bytes 120 and 122-127 zero");

	/* smo without tol or max_iter takes smo's, in either order */
	CHECK(parse("{\"solver\": \"smo\"}", &o, &err) == SVC_OK &&
		  o.solver == SVC_SOLVER_SMO && o.tol == SVC_SMO_DEFAULT_TOL && o.max_iter == 0,
		  "smo's defaults: tol %g max_iter %lld (%s)", o.tol, (long long) o.max_iter, err.detail);
	CHECK(parse("{\"tol\": 0.05, \"solver\": \"smo\", \"max_iter\": 500}", &o, &err) == SVC_OK &&
		  o.tol == 0.05 && o.max_iter == 500, "smo keeps a tol and max_iter given before or after");
	CHECK(parse("{\"solver\": \"smo\", \"solver\": \"bsgd\"}", &o, &err) == SVC_OK &&
		  o.solver == SVC_SOLVER_BSGD && o.tol == 0.01 && o.max_iter == 100000,
		  "bsgd named last takes bsgd's defaults back");
	CHECK(parse("{\"solver\": \"bsgd\"}", &o, &err) == SVC_OK && o.tol == 0.01 &&
		  o.max_iter == 100000, "bsgd named keeps its defaults");
	CHECK(parse("{\"solver\": \"smo\", \"budget\": 20, \"strategy\": \"removal\"}", &o, &err) ==
		  SVC_OK, "bsgd's options are taken (and ignored) with smo");

	/* the errors */
	CHECK(parse("{\"solver\": \"libsvm\"}", &o, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strcmp(err.message, "invalid value for svclust option \"solver\"") == 0 &&
		  strcmp(err.detail, "\"solver\" must be one of \"bsgd\", \"smo\", \"aid\", \"incremental\".") == 0,
		  "an unknown solver lists the valid ones: %s / %s", err.message, err.detail);
	CHECK(parse("{\"solver\": 2}", &o, &err) == SVC_ERR_INVALID_PARAMETER,
		  "a number is not a solver");
	CHECK(parse("{\"solver\": \"aid\"}", &o, &err) == SVC_OK && o.solver == SVC_SOLVER_AID &&
		  o.tol == SVC_SMO_DEFAULT_TOL && o.max_iter == 0,
		  "aid is a solver, with smo's tol and automatic cap");
	CHECK(parse("{\"cache_mb\": -1}", &o, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strcmp(err.detail, "\"cache_mb\" must be an integer between 0 and 1048576.") == 0,
		  "cache_mb -1: %s", err.detail);
	CHECK(parse("{\"cache_mb\": 1048577}", &o, &err) == SVC_ERR_INVALID_PARAMETER,
		  "cache_mb past 1 TB");
	CHECK(parse("{\"cache_mb\": 1.5}", &o, &err) == SVC_ERR_INVALID_PARAMETER,
		  "cache_mb is an integer");
	CHECK(parse("{\"solver\": \"smo\", \"tol\": 0}", &o, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strcmp(err.detail, "\"tol\" must be a number greater than 0 and at most 1e+06.") == 0,
		  "tol 0 with smo: %s", err.detail);
	CHECK(parse("{\"solver\": \"smo\", \"max_iter\": 0}", &o, &err) == SVC_ERR_INVALID_PARAMETER,
		  "max_iter 0 is not written: it is smo's by omission");
	CHECK(svc_options_parse_cut("{\"solver\": \"smo\"}", 17, &o, &err) ==
		  SVC_ERR_INVALID_PARAMETER &&
		  strcmp(err.message, "svclust option \"solver\" cannot change after training") == 0,
		  "a recut cannot change the solver: %s", err.message);
	svc_options_default(&o);
	o.max_iter = 0;
	CHECK(svc_options_validate(&o, &err) == SVC_ERR_INVALID_PARAMETER,
		  "max_iter 0 is not valid with bsgd");

	/*
	 * the wire: byte 120 solver, 121 bits (gamma "auto"; smo has no budget,
	 * so not keep_isolated; sizes "separated"), 124-127 cache_mb
	 */
	CHECK(parse("{\"solver\": \"smo\", \"cache_mb\": 300}", &o, &err) == SVC_OK, "smo options");
	svc_options_encode(&o, wire);
	CHECK(wire[120] == 2 && wire[121] == (SVC_OPTIONS_BIT_GAMMA_AUTO | SVC_OPTIONS_BIT_SIZE_SEPARATED |
										  SVC_OPTIONS_BIT_ASSIGN_AUTO) && wire[122] == 0 && wire[123] == 0 &&
		  svc_load_u32(wire + 124) == 300, "smo's wire bytes");
	{
		SvcOptions	b;
		uint8_t		again[SVC_OPTIONS_WIRE_SIZE];

		CHECK(svc_options_decode(wire, &b, &err) == SVC_OK && b.solver == SVC_SOLVER_SMO &&
			  b.cache_mb == 300 && b.max_iter == 0 && b.tol == SVC_SMO_DEFAULT_TOL,
			  "smo's options decode");
		svc_options_encode(&b, again);
		CHECK(memcmp(wire, again, sizeof(wire)) == 0, "and encode to the same bytes");
		wire[120] = 1;			/* bsgd is written as 0 only */
		CHECK(svc_options_decode(wire, &b, &err) == SVC_ERR_INVALID_PARAMETER &&
			  strstr(err.detail, "\"solver\"") != NULL, "solver byte 1 is refused: %s", err.detail);
		wire[120] = 3;
		CHECK(svc_options_decode(wire, &b, &err) == SVC_OK && b.solver == SVC_SOLVER_AID,
			  "solver byte 3 is aid");
		wire[120] = 4;
		CHECK(svc_options_decode(wire, &b, &err) == SVC_OK && b.solver == SVC_SOLVER_INCREMENTAL,
			  "solver byte 4 is incremental");
		wire[120] = 5;
		CHECK(svc_options_decode(wire, &b, &err) == SVC_ERR_INVALID_PARAMETER,
			  "solver byte 5 is refused");
		wire[120] = 2;
		wire[121] = SVC_OPTIONS_BIT_KEEP_ISOLATED;
		CHECK(svc_options_decode(wire, &b, &err) == SVC_ERR_INVALID_PARAMETER &&
			  strstr(err.message, "keep_isolated") != NULL, "smo with keep_isolated's bit is refused");
		wire[121] = 0x10;
		CHECK(svc_options_decode(wire, &b, &err) == SVC_ERR_INVALID_PARAMETER,
			  "an unknown bit of byte 121 is refused");
		wire[121] = 0;
		CHECK(svc_options_decode(wire, &b, &err) == SVC_OK && b.gamma == 0 &&
			  b.gamma_rule == SVC_GAMMA_RULE_DIM, "byte 121 0 with gamma auto: the rule before 0.5.0");
		wire[121] = SVC_OPTIONS_BIT_GAMMA_AUTO;
		svc_store_u32(wire + 124, UINT32_MAX);
		CHECK(svc_options_decode(wire, &b, &err) == SVC_ERR_INVALID_PARAMETER &&
			  strstr(err.detail, "\"cache_mb\"") != NULL, "cache_mb past its range: %s",
			  err.detail);
		/* bsgd's max_iter 0 is damage */
		svc_options_default(&b);
		svc_options_encode(&b, wire);
		memset(wire + 44, 0, 8);
		CHECK(svc_options_decode(wire, &b, &err) == SVC_ERR_INVALID_PARAMETER,
			  "max_iter 0 of bsgd is refused");
	}

	CHECK(fabs(svc_smo_eps(1e-3, 0.05, 1000) - 4e-5) < 1e-18 &&
		  svc_smo_eps(1e-3, 0.0, 1000) == 2e-3 && svc_smo_eps(1e-3, 0.5, 1) == 2e-3,
		  "tol to eps: 2 tol / max(nu n, 1)");
}

/* ------------------------------------------------------------------ */

/*
 * The model's alpha per training row (0 for rows that are not support
 * vectors), matched by their scaled coordinates; rows must be distinct.
 */
static void
row_alpha(const SvcModel *m, const double *scaled, int64_t n, double *alpha)
{
	for (int64_t t = 0; t < n; t++)
	{
		alpha[t] = 0.0;
		for (int32_t j = 0; j < m->n_sv; j++)
			if (memcmp(m->sv + (size_t) j * 2, scaled + t * 2, 2 * sizeof(double)) == 0)
				alpha[t] = m->alpha[j];
	}
}

/*
 * Σα = 1, 0 < α <= C on the support vectors, the KKT gap from a fresh
 * gradient below eps, the free support vectors' kernel sums within eps /
 * 2 of their mean, and the offset: at outlier_fraction nu > 0 the
 * nu-quantile of f on the rows, so that floor(nu n) rows are outside
 * (f < 0); at nu 0 the solver's own, every row inside to within the
 * tolerance.
 */
static void
check_fit(const char *name, const double *x, int64_t n, const char *json)
{
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	double	   *scaled = malloc(sizeof(double) * 2 * (size_t) n);
	double	   *alpha = malloc(sizeof(double) * (size_t) n);
	double		sum = 0,
				comp = 0,
				c,
				up = -INFINITY,
				low = INFINITY,
				eps;
	bool		box = true;
	int64_t		outside = 0,
				off_sphere = 0,
				n_free = 0;
	double		free_sum = 0.0;
	bool		smo;

	CHECK(parse(json, &opt, &err) == SVC_OK, "%s: options %s", name, err.detail);
	/* aid and incremental: the solution's checks (their reports: test_aid, test_incremental) */
	smo = opt.solver == SVC_SOLVER_SMO;
	if (svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &m, &err) != SVC_OK)
	{
		CHECK(false, "%s: smo fit fails: %s", name, err.message);
		free(scaled);
		free(alpha);
		return;
	}
	c = opt.nu * (double) n > 1 ? 1.0 / (opt.nu * (double) n) : 1.0;
	eps = svc_smo_eps(opt.tol, opt.nu, n);
	CHECK(m.solver == opt.solver && m.boundary == SVC_BOUNDARY_SPHERE &&
		  (!smo || svc_model_format_version(&m) == 4), "%s: the solver asked for, sphere", name);
	for (int32_t j = 0; j < m.n_sv; j++)
	{
		/* Neumaier: the test must not add its own rounding */
		double		a = m.alpha[j],
					t = sum + a;

		comp += fabs(sum) >= a ? (sum - t) + a : (a - t) + sum;
		sum = t;
		if (!(a > 0 && a <= c * (1 + 1e-15)))
			box = false;
	}
	CHECK(fabs(sum + comp - 1.0) <= 1e-12, "%s: sum alpha = 1 (off by %g)", name, sum + comp - 1.0);
	CHECK(box, "%s: 0 < alpha <= C = %g on the %d support vectors", name, c, m.n_sv);
	CHECK(m.converged && m.gap < opt.tol && m.iterations > 0,
		  "%s: converged, gap %g < tol %g after %lld iterations", name, m.gap, opt.tol,
		  (long long) m.iterations);
	CHECK(!smo || m.cache_hits + m.cache_misses > 0,
		  "%s: cache %lld/%lld", name, (long long) m.cache_hits, (long long) m.cache_misses);
	CHECK(m.objective >= -1 && m.objective < 0, "%s: objective %g", name, m.objective);

	for (int64_t t = 0; t < n; t++)
		svc_model_scale_row(&m, x + t * 2, scaled + t * 2);
	row_alpha(&m, scaled, n, alpha);
	for (int64_t t = 0; t < n; t++)
	{
		double		f = svc_model_decision_scaled(&m, scaled + t * 2);
		double		g = 2 * (f + m.offset) - 1;	/* G = 2 K alpha - 1 */

		if (alpha[t] < c && -g > up)
			up = -g;
		if (alpha[t] > 0 && -g < low)
			low = -g;
		if (opt.nu > 0 ? f < 0 : f < -eps / 2)
			outside++;
		if (alpha[t] > 0 && alpha[t] < c * (1 - 1e-12))
		{
			free_sum += f + m.offset;
			n_free++;
		}
	}
	/* the free ones lie on the sphere to within the gap, eps / 2 in s */
	for (int64_t t = 0; t < n; t++)
		if (alpha[t] > 0 && alpha[t] < c * (1 - 1e-12) &&
			fabs(svc_model_decision_scaled(&m, scaled + t * 2) + m.offset -
				 free_sum / (double) n_free) > eps / 2)
			off_sphere++;
	CHECK(off_sphere == 0, "%s: %lld free support vectors off the sphere", name,
		  (long long) off_sphere);
	/* refined past tol (svc_smo_refine), so that the exact solvers agree */
	CHECK(up - low < eps * SVC_SMO_REFINE * (1 + 1e-6),
		  "%s: KKT gap from a fresh gradient %g < eps %g times %g", name, up - low, eps,
		  SVC_SMO_REFINE);
	if (!smo)
		;
	else if (opt.nu > 0)
		CHECK(outside == (int64_t) floor(opt.nu * (double) n),
			  "%s: %lld rows outside, the quantile leaves floor(nu n) = %g", name,
			  (long long) outside, floor(opt.nu * (double) n));
	else
		CHECK(outside == 0, "%s: nu 0: the solver's offset, %lld rows outside", name,
			  (long long) outside);
	printf("  %s: %d support vectors, %d clusters, %lld iterations\n", name, m.n_sv,
		   m.n_clusters, (long long) m.iterations);
	svc_model_free(&svc_env_malloc, &m);
	free(scaled);
	free(alpha);
}

static void
test_fit(void)
{
	double	   *b = blobs(300, 5);
	double	   *r = unit_ring_blob(300, 6);

	check_fit("blobs", b, 300, "{\"solver\": \"smo\"}");
	check_fit("blobs nu 0.2", b, 300, "{\"solver\": \"smo\", \"outlier_fraction\": 0.2}");
	check_fit("blobs nu 0", b, 300, "{\"solver\": \"smo\", \"outlier_fraction\": 0}");
	check_fit("blobs tol 1e-6", b, 300, "{\"solver\": \"smo\", \"tol\": 1e-6}");
	check_fit("ring", r, 300, "{\"solver\": \"smo\"}");
	check_fit("ring paper", r, 300, "{\"solver\": \"smo\", \"labeling\": \"paper\"}");
	/* aid and incremental end refined to smo's point within tol */
	check_fit("blobs aid", b, 300, "{\"solver\": \"aid\"}");
	check_fit("blobs incremental", b, 300, "{\"solver\": \"incremental\"}");
	check_fit("ring aid", r, 300, "{\"solver\": \"aid\"}");
	check_fit("ring incremental", r, 300, "{\"solver\": \"incremental\"}");
	free(b);
	free(r);
}


/* Degenerate data: repeated rows, one row, and every row a support vector. */
static void
test_fit_edges(void)
{
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	SvcStatus	st;
	double		same[40 * 2],
				one[2] = {3.0, -1.0};
	double	   *b = blobs(50, 9);

	for (int i = 0; i < 40; i++)
	{
		/* 20 copies of two points, and 20 copies of one */
		same[2 * i] = i < 20 ? (i % 2) : 5.0;
		same[2 * i + 1] = i < 20 ? 0.0 : 5.0;
	}
	parse("{\"solver\": \"smo\"}", &opt, &err);
	st = svc_fit_rows(&svc_env_malloc, same, 40, 2, &opt, &m, &err);
	CHECK(st == SVC_OK, "duplicate rows train: %s", st == SVC_OK ? "" : err.message);
	if (st == SVC_OK)
	{
		double		sum = 0;

		for (int32_t j = 0; j < m.n_sv; j++)
			sum += m.alpha[j];
		CHECK(fabs(sum - 1) <= 1e-12 && m.converged && isfinite(m.offset) && m.n_clusters >= 1,
			  "duplicate rows: sum %.17g, %d clusters", sum, m.n_clusters);
	}
	svc_model_free(&svc_env_malloc, &m);

	st = svc_fit_rows(&svc_env_malloc, one, 1, 2, &opt, &m, &err);
	CHECK(st == SVC_OK && m.n_sv == 1 && m.alpha[0] == 1.0 && m.n_clusters == 1 &&
		  fabs(m.offset - 1) < 1e-12, "one row: alpha 1 on the sphere of radius 0 (%s)",
		  st == SVC_OK ? "" : err.message);
	svc_model_free(&svc_env_malloc, &m);

	/* nu 0.99 on 50 rows: C = 1 / 49.5, so every row holds alpha > 0 */
	parse("{\"solver\": \"smo\", \"outlier_fraction\": 0.99}", &opt, &err);
	CHECK(svc_fit_rows(&svc_env_malloc, b, 50, 2, &opt, &m, &err) == SVC_OK, "nu 0.99 trains");
	{
		double		c = 1 / (0.99 * 50),
					sum = 0;
		int			at_c = 0;
		bool		box = true;

		for (int32_t j = 0; j < m.n_sv; j++)
		{
			sum += m.alpha[j];
			box = box && m.alpha[j] > 0 && m.alpha[j] <= c * (1 + 1e-15);
			at_c += m.alpha[j] >= c * (1 - 1e-12);
		}
		CHECK(m.n_sv == 50 && box && fabs(sum - 1) <= 1e-12 && at_c >= 48,
			  "nu 0.99: %d support vectors, %d at C, sum %.17g", m.n_sv, at_c, sum);
	}
	svc_model_free(&svc_env_malloc, &m);

	/* widths change f, so the quantile offset replaces the solver's */
	parse("{\"solver\": \"smo\", \"bandwidth_k\": 5}", &opt, &err);
	CHECK(svc_fit_rows(&svc_env_malloc, b, 50, 2, &opt, &m, &err) == SVC_OK &&
		  m.sv_gamma != NULL && svc_model_format_version(&m) == 4,
		  "smo with bandwidth_k trains, format 4 with widths");
	svc_model_free(&svc_env_malloc, &m);
	free(b);
}

/* ------------------------------------------------------------------ */

/* Decode a copy of buf with byte off set to v and the checksum redone. */
static SvcStatus
decode_damaged(const uint8_t *buf, size_t len, size_t off, const void *v, size_t vlen,
			   SvcError *err)
{
	uint8_t    *copy = malloc(len);
	SvcModel	m;
	SvcStatus	st;

	memcpy(copy, buf, len);
	memcpy(copy + off, v, vlen);
	svc_store_u32(copy + len - 4, svc_crc32c(copy, len - 4));
	st = svc_model_decode(&svc_env_malloc, copy, len, &m, err);
	svc_model_free(&svc_env_malloc, &m);
	free(copy);
	return st;
}

/* Offsets in the bytes (model_codec.c): header, then the version 4 report. */
#define OFF_VERSION 4
#define OFF_SOLVER 12
#define OFF_BOUNDARY 13
#define OFF_OPT_SOLVER (16 + 120)
#define OFF_OBJECTIVE 216
#define OFF_GAP 224
#define OFF_HITS 232
#define OFF_MISSES 240

static void
test_model_v4(void)
{
	double	   *x = blobs(120, 21);
	SvcOptions	opt;
	SvcModel	m,
				back;
	SvcError	err;
	size_t		len,
				len2;
	uint8_t    *buf,
			   *buf2;
	char	   *json;

	for (int widths = 0; widths < 2; widths++)
	{
		parse(widths ? "{\"solver\": \"smo\", \"bandwidth_k\": 4, \"cache_mb\": 7}" :
			  "{\"solver\": \"smo\"}", &opt, &err);
		CHECK(svc_fit_rows(&svc_env_malloc, x, 120, 2, &opt, &m, &err) == SVC_OK,
			  "fit for the round trip: %s", err.message);
		buf = encode(&m, &len);
		CHECK(svc_load_u32(buf) == svc_load_u32((const uint8_t *) "SVCM") && buf[OFF_VERSION] == 4 &&
			  buf[OFF_SOLVER] == SVC_SOLVER_SMO && buf[OFF_BOUNDARY] == SVC_BOUNDARY_SPHERE &&
			  buf[OFF_OPT_SOLVER] == 2, "version 4, smo, sphere in the header");
		CHECK(svc_model_decode(&svc_env_malloc, buf, len, &back, &err) == SVC_OK,
			  "v4 decodes: %s", err.detail);
		CHECK(back.objective == m.objective && back.gap == m.gap &&
			  back.cache_hits == m.cache_hits && back.cache_misses == m.cache_misses &&
			  back.iterations == m.iterations && back.converged == m.converged &&
			  back.solver == SVC_SOLVER_SMO && back.boundary == SVC_BOUNDARY_SPHERE &&
			  back.opt.cache_mb == (widths ? 7 : 0) && (back.sv_gamma != NULL) == widths,
			  "v4 round trip keeps the report (widths %d)", widths);
		buf2 = encode(&back, &len2);
		CHECK(len2 == len && memcmp(buf, buf2, len) == 0, "v4 re-encodes to the same bytes");
		json = svc_model_info_json(&svc_env_malloc, &back, &err);
		CHECK(json != NULL && strstr(json, "\"solver\": \"smo\", \"boundary\": \"sphere\"") &&
			  strstr(json, "\"format_version\": 4") && strstr(json, "\"objective\": ") &&
			  strstr(json, "\"gap\": ") && strstr(json, "\"cache_hits\": ") &&
			  strstr(json, "\"cache_misses\": ") && strstr(json, "\"max_iter\": \"auto\"") &&
			  json[strlen(json) - 1] == '}', "the report: %s", json ? json : "(null)");
		free(json);
		free(buf2);
		svc_model_free(&svc_env_malloc, &back);

		/* every truncation refused, without reading past the end (ASan) */
		{
			bool		all = true;

			for (size_t cut = 0; cut < len; cut++)
			{
				uint8_t    *t = malloc(cut > 0 ? cut : 1);

				memcpy(t, buf, cut);
				if (svc_model_decode(&svc_env_malloc, t, cut, &back, &err) != SVC_ERR_CORRUPT)
					all = false;
				svc_model_free(&svc_env_malloc, &back);
				free(t);
			}
			CHECK(all, "every truncation of a v4 model is refused");
		}

		/* damage with the checksum redone: each refused with a reason */
		{
			uint16_t	v2 = 2,
						v3 = 3,
						v5 = 5,
						v6 = 6;
			uint8_t		bsgd = SVC_SOLVER_BSGD,
						hyper = SVC_BOUNDARY_HYPERPLANE,
						zero = 0;
			double		nan = NAN,
						inf = INFINITY;
			uint64_t	huge = UINT64_C(1) << 63;

			CHECK(decode_damaged(buf, len, OFF_VERSION, &v3, 2, &err) == SVC_ERR_CORRUPT &&
				  strstr(err.detail, "format version") != NULL, "v4 read as v3: %s", err.detail);
			CHECK(decode_damaged(buf, len, OFF_VERSION, &v2, 2, &err) == SVC_ERR_CORRUPT,
				  "v4 read as v2: %s", err.detail);
			CHECK(decode_damaged(buf, len, OFF_VERSION, &v5, 2, &err) == SVC_ERR_CORRUPT,
				  "v4 read as v5 (no section): %s", err.detail);
			CHECK(decode_damaged(buf, len, OFF_VERSION, &v6, 2, &err) == SVC_ERR_CORRUPT &&
				  strstr(err.message, "unsupported") != NULL, "version 6: %s", err.message);
			CHECK(decode_damaged(buf, len, OFF_SOLVER, &bsgd, 1, &err) == SVC_ERR_CORRUPT,
				  "v4 of solver bsgd: %s", err.detail);
			CHECK(decode_damaged(buf, len, OFF_BOUNDARY, &hyper, 1, &err) == SVC_ERR_CORRUPT,
				  "v4 with a hyperplane: %s", err.detail);
			CHECK(decode_damaged(buf, len, OFF_OPT_SOLVER, &zero, 1, &err) == SVC_ERR_CORRUPT,
				  "v4 whose options name bsgd: %s", err.detail);
			CHECK(decode_damaged(buf, len, OFF_OBJECTIVE, &nan, 8, &err) == SVC_ERR_CORRUPT &&
				  strstr(err.detail, "report") != NULL, "a NaN objective: %s", err.detail);
			CHECK(decode_damaged(buf, len, OFF_GAP, &inf, 8, &err) == SVC_ERR_CORRUPT,
				  "an infinite gap: %s", err.detail);
			CHECK(decode_damaged(buf, len, OFF_HITS, &huge, 8, &err) == SVC_ERR_CORRUPT,
				  "cache hits past int64: %s", err.detail);
			CHECK(decode_damaged(buf, len, OFF_MISSES, &huge, 8, &err) == SVC_ERR_CORRUPT,
				  "cache misses past int64: %s", err.detail);
		}
		/* a bsgd model's bytes read as v4 (damaged header) are refused too */
		free(buf);
		svc_model_free(&svc_env_malloc, &m);
	}
	{
		uint16_t	v4 = 4;

		parse("{\"budget\": 20}", &opt, &err);
		svc_fit_rows(&svc_env_malloc, x, 120, 2, &opt, &m, &err);
		buf = encode(&m, &len);
		CHECK(buf[OFF_VERSION] == 2, "bsgd still writes version 2");
		CHECK(decode_damaged(buf, len, OFF_VERSION, &v4, 2, &err) == SVC_ERR_CORRUPT,
			  "a bsgd model labelled v4: %s", err.detail);
		free(buf);
		svc_model_free(&svc_env_malloc, &m);
	}
	free(x);
}

/* ------------------------------------------------------------------ */

static void
test_memory(void)
{
	double	   *x = blobs(13200, 3);
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	UnitBudget	b = {0, 0};
	SvcEnv		env = {.alloc = unit_counted_alloc, .release = unit_counted_free,
		.realloc = unit_counted_realloc, .ctx = &b};
	SvcSmoParams p;
	size_t		need13200;
	char		expect[160];

	/*
	 * cache_mb 1: the solver's 88 bytes a row and the refinement's 97 (two
	 * columns) for 13200 rows are more than 1 MB
	 */
	svc_smo_params_default(&p);
	need13200 = svc_smo_memory(13200, 2, &p) + svc_smo_refine_memory(13200, 2);
	CHECK(need13200 > ((size_t) 1 << 20) &&
		  svc_smo_memory(5000, 2, &p) + svc_smo_refine_memory(5000, 2) <= ((size_t) 1 << 20) &&
		  svc_smo_refine_memory(13200, 2) > svc_smo_refine_memory(13000, 2) &&
		  svc_smo_refine_memory(13200, 4) > svc_smo_refine_memory(13200, 2) &&
		  svc_smo_refine_memory(-1, 2) == SIZE_MAX &&
		  svc_smo_refine_memory(INT64_MAX, 2) == SIZE_MAX,
		  "the bound sits between 5000 and 13200 rows and grows with rows and columns");
	CHECK(svc_smo_refine_cache(100, 10, 2) == 0 &&
		  svc_smo_refine_cache((size_t) 1 << 20, 10, 2) ==
		  ((size_t) 1 << 20) - svc_smo_refine_memory(10, 2),
		  "the refinement's cache is the caller's less its own bytes");
	snprintf(expect, sizeof(expect),
			 "the exact solver needs %zu kB for 13200 rows, more than its memory budget of 1024 kB",
			 (need13200 + 1023) / 1024);
	parse("{\"solver\": \"smo\", \"cache_mb\": 1}", &opt, &err);
	CHECK(svc_fit_rows(&env, x, 13200, 2, &opt, &m, &err) == SVC_ERR_LIMIT &&
		  strstr(err.message, expect) &&
		  strstr(err.hint, "\"sample\"") && strstr(err.hint, "\"bsgd\""),
		  "cache_mb 1 refuses 13200 rows: %s / %s", err.message, err.hint);
	svc_model_free(&env, &m);
	CHECK(b.live == 0, "the refusal leaves nothing allocated (%ld)", b.live);

	/* the environment's budget when cache_mb is 0, and cache_mb over it */
	env.solver_memory = 4096;
	parse("{\"solver\": \"smo\"}", &opt, &err);
	CHECK(svc_fit_rows(&env, x, 300, 2, &opt, &m, &err) == SVC_ERR_LIMIT,
		  "a 4 kB environment budget refuses 300 rows: %s", err.message);
	svc_model_free(&env, &m);
	parse("{\"solver\": \"smo\", \"cache_mb\": 1}", &opt, &err);
	CHECK(svc_fit_rows(&env, x, 300, 2, &opt, &m, &err) == SVC_OK,
		  "cache_mb 1 overrides it: %s", err.message);
	svc_model_free(&env, &m);
	CHECK(svc_smo_budget(&env, &opt) == (size_t) 1 << 20, "budget from cache_mb");
	opt.cache_mb = 0;
	CHECK(svc_smo_budget(&env, &opt) == 4096, "budget from the environment");
	CHECK(svc_smo_budget(&svc_env_malloc, &opt) == SVC_SOLVER_MEMORY_DEFAULT,
		  "budget by default: 100 MB");
	/* bsgd ignores the budget */
	parse("{\"cache_mb\": 1}", &opt, &err);
	CHECK(svc_fit_rows(&env, x, 300, 2, &opt, &m, &err) == SVC_OK, "bsgd ignores the budget");
	svc_model_free(&env, &m);

	/*
	 * A cache of two columns against one of every column: the same
	 * solution, bit for bit, with more misses.
	 */
	{
		SvcModel	small,
					big;
		size_t		need;

		parse("{\"solver\": \"smo\"}", &opt, &err);
		need = svc_smo_memory(600, 2, &p) + svc_smo_refine_memory(600, 2);
		env.solver_memory = need;
		CHECK(svc_fit_rows(&env, x, 600, 2, &opt, &small, &err) == SVC_OK, "the smallest budget");
		env.solver_memory = need + 600 * 600 * 8;
		CHECK(svc_fit_rows(&env, x, 600, 2, &opt, &big, &err) == SVC_OK, "a budget for all of K");
		CHECK(small.n_sv == big.n_sv && small.offset == big.offset &&
			  memcmp(small.alpha, big.alpha, sizeof(double) * small.n_sv) == 0 &&
			  small.cache_misses > big.cache_misses,
			  "same solution, misses %lld vs %lld", (long long) small.cache_misses,
			  (long long) big.cache_misses);
		svc_model_free(&env, &small);
		svc_model_free(&env, &big);
	}
	CHECK(b.live == 0, "nothing left allocated (%ld)", b.live);
	free(x);
}

/* Cancelled and out of memory at every point: clean, nothing left. */
static void
test_failures(void)
{
	/* fewer rows under valgrind, where each of some 170 fits is slow */
	int64_t		n = under_valgrind() ? 48 : 150;
	double	   *x = blobs(n, 4);
	SvcOptions	opt;
	SvcError	err;
	int			kinds[2] = {0, 0};

	parse("{\"solver\": \"smo\"}", &opt, &err);
	unit_fit_fails_cleanly(x, n, 2, &opt, kinds);
	printf("  fit smo: fails cleanly at each of %d allocations, stops at each of %d checks\n",
		   kinds[0], kinds[1]);
	CHECK(kinds[0] > 10 && kinds[1] > 0, "the failure loops ran");
	free(x);
}


/*
 * A sphere trained on a sample of the rows seen: the rows the fit did not
 * see have no term of their own in f, so the training rows' quantile left
 * more than outlier_fraction of the table outside (10.4% of
 * blobs_k100_d16 at 0.05).  The offset weighs the training rows by the
 * share trained and stands for the others by the same sums without the
 * row's own term (as a row beside it sees it): here 6.8% of all the
 * rows end outside, where the training rows' quantile left 12.4%.
 */
static void
test_sampled_share(void)
{
	const int64_t n = 12000;
	const int32_t d = 16;
	double	   *x = malloc(sizeof(double) * (size_t) n * d),
			   *xs = malloc(sizeof(double) * d),
				c[20][16];
	SvcRng		rng;
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	uint8_t    *state;
	int64_t		cap = 1024,
				out = 0;

	svc_rng_seed(&rng, 1016);
	for (int k = 0; k < 20; k++)
		for (int j = 0; j < d; j++)
			c[k][j] = 10 * svc_rng_unit(&rng);
	for (int64_t i = 0; i < n; i++)
		for (int j = 0; j < d; j++)
		{
			/* a sum of uniforms: near-Gaussian, sd 0.5 */
			double		g = svc_rng_unit(&rng) + svc_rng_unit(&rng) + svc_rng_unit(&rng) - 1.5;

			x[(size_t) i * d + j] = c[i % 20][j] + g;
		}
	svc_options_default(&opt);
	{
		const char *o = "{\"solver\": \"smo\", \"sample\": 1500}";

		CHECK(svc_options_parse(o, strlen(o), &opt, &err) == SVC_OK, "options: %s", err.message);
	}
	state = unit_state_new(d, cap, &opt, NULL, 0);
	/* a row left out shows in rows_seen below */
	(void) unit_state_add_rows(&state, x, n, NULL);
	memset(&m, 0, sizeof(m));
	CHECK(svc_fit_state(&svc_env_malloc, state, &m, &err) == SVC_OK, "sampled fit: %s", err.message);
	CHECK(m.rows_seen == n && m.rows_used == 1500, "rows seen %lld, used %lld",
		  (long long) m.rows_seen, (long long) m.rows_used);
	for (int64_t i = 0; i < n; i++)
	{
		svc_model_scale_row(&m, x + (size_t) i * d, xs);
		out += svc_model_decision_scaled(&m, xs) < 0;
	}
	/* 2-10% at 0.05, as issue 34 asks of every exact solver (12.4% before) */
	CHECK(out >= 0.02 * n && out <= 0.10 * n,
		  "a sampled sphere leaves about outlier_fraction of all the rows outside: %lld of %lld",
		  (long long) out, (long long) n);
	printf("  sampled sphere: %lld of %lld rows outside (%.3f)\n", (long long) out, (long long) n,
		   (double) out / n);
	svc_model_free(&svc_env_malloc, &m);
	free(state);
	free(x);
	free(xs);
}

/* ------------------------------------------------------------------ */

int
main(void)
{
	test_options();
	test_fit();
	test_fit_edges();
	test_model_v4();
	test_memory();
	test_failures();
	test_sampled_share();
	return unit_summary("test_solver_smo");
}
