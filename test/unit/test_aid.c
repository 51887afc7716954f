/*
 * test_aid.c - aggregation and iterative disaggregation: the same optimum
 * as smo, monotone bounds in every round, the solver "aid" end to end and
 * its report section
 */
#include "aid.h"
#include "bytes.h"
#include "fit.h"
#include "kernel.h"
#include "model.h"
#include "model_codec.h"
#include "model_report.h"
#include "options.h"
#include "smo.h"
#include "solver.h"
#include "solver_smo.h"
#include "unit.h"
#include "unit_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* n rows uniform in [0, 1]^d; every third row repeats the one before. */
static double *
noise(int64_t n, int32_t d, uint64_t seed)
{
	SvcRng		rng;
	double	   *x = malloc(sizeof(double) * (size_t) d * (size_t) n);

	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
			x[i * d + j] = i % 3 == 2 ? x[(i - 1) * d + j] : svc_rng_unit(&rng);
	return x;
}

/* f on every row, by brute force: sum_j alpha_j K(x_j, x_i) - offset. */
static void
decision(const double *x, int64_t n, int32_t d, double gamma, const double *alpha,
		 double offset, double *f)
{
	for (int64_t i = 0; i < n; i++)
	{
		double		s = 0.0;

		for (int64_t j = 0; j < n; j++)
			if (alpha[j] > 0)
				s += alpha[j] * exp(-gamma * svc_sqdist(x + i * d, x + j * d, d));
		f[i] = s - offset;
	}
}

/* The observer: the bounds of every round against the last and the optimum. */
typedef struct Watch
{
	double		optimum;		/* smo's F */
	double		scale;			/* |F| */
	double		last_upper;
	double		last_lower;
	double		last_gap;
	int64_t		last_aggregates;
	int			rounds;
	int			bad;
	char		what[200];
} Watch;

static void
watch_round(void *ctx, const SvcAidRound *r)
{
	Watch	   *w = ctx;
	double		slack = 1e-12 * w->scale;
	/* smo's optimum is itself within its tolerance of the true one */
	double		opt_slack = 1e-9 * w->scale;

	if (r->round != w->rounds)
		snprintf(w->what, sizeof(w->what), "round %d numbered %d", w->rounds, r->round);
	else if (w->rounds > 0 && r->upper > w->last_upper + slack)
		snprintf(w->what, sizeof(w->what), "round %d: upper %.17g rose from %.17g",
				 r->round, r->upper, w->last_upper);
	else if (w->rounds > 0 && r->lower < w->last_lower)
		snprintf(w->what, sizeof(w->what), "round %d: lower %.17g fell from %.17g",
				 r->round, r->lower, w->last_lower);
	else if (w->rounds > 0 && r->gap > w->last_gap + 1e-12)
		snprintf(w->what, sizeof(w->what), "round %d: gap %.3g widened from %.3g",
				 r->round, r->gap, w->last_gap);
	else if (r->lower_round > r->lower || r->lower > r->upper + slack)
		snprintf(w->what, sizeof(w->what), "round %d: bounds out of order", r->round);
	else if (r->lower > w->optimum + opt_slack || r->upper < w->optimum - opt_slack)
		snprintf(w->what, sizeof(w->what), "round %d: [%.17g, %.17g] misses the optimum %.17g",
				 r->round, r->lower, r->upper, w->optimum);
	else if (w->rounds > 0 && r->aggregates <= w->last_aggregates)
		snprintf(w->what, sizeof(w->what), "round %d: %lld clusters after %lld",
				 r->round, (long long) r->aggregates, (long long) w->last_aggregates);
	else
	{
		w->last_upper = r->upper;
		w->last_lower = r->lower;
		w->last_gap = r->gap;
		w->last_aggregates = r->aggregates;
		w->rounds++;
		return;
	}
	w->bad++;
	w->rounds++;
}

/*
 * One set: smo and aid to a tight tolerance, the same optimum (1e-6
 * relative; typically far closer), the same sign of f where |f| > 1e-6,
 * and the monotone bounds of every round.
 */
static void
check_case(const char *name, const double *x, int64_t n, int32_t d, double gamma,
		   double nu, SvcAidInit init, int64_t clusters, size_t cache)
{
	SvcSmoParams sp;
	SvcSmoResult sr;
	SvcAidParams ap;
	SvcAidResult ar;
	SvcError	err;
	Watch		w;
	double		c = nu * (double) n > 1.0 ? 1.0 / (nu * (double) n) : 1.0;
	double	   *fs = malloc(sizeof(double) * (size_t) n),
			   *fa = malloc(sizeof(double) * (size_t) n);
	double		asum = 0.0,
				rel;
	int64_t		disagree = 0,
				out_of_box = 0;

	svc_smo_params_default(&sp);
	sp.gamma = gamma;
	sp.c_all = c;
	sp.eps = 1e-10;
	CHECK(svc_smo_solve(&svc_env_malloc, x, n, d, &sp, &sr, &err) == SVC_OK, "%s: smo", name);

	memset(&w, 0, sizeof(w));
	w.optimum = sr.objective;
	w.scale = fabs(sr.objective);
	svc_aid_params_default(&ap);
	ap.gamma = gamma;
	ap.c = c;
	ap.eps = 1e-10;
	ap.gap = 1e-13;
	ap.init = init;
	ap.init_clusters = clusters;
	ap.seed = 11;
	ap.cache_bytes = cache;
	ap.observe = watch_round;
	ap.observe_ctx = &w;
	if (svc_aid_solve(&svc_env_malloc, x, n, d, &ap, &ar, &err) != SVC_OK)
	{
		CHECK(false, "%s: aid fails: %s", name, err.message);
		svc_smo_result_free(&svc_env_malloc, &sr);
		free(fs);
		free(fa);
		return;
	}
	CHECK(w.bad == 0 && w.rounds == ar.rounds && ar.rounds >= 1,
		  "%s: the bounds of every round (%d rounds): %s", name, w.rounds, w.what);
	rel = fabs(ar.objective - sr.objective) / fabs(sr.objective);
	CHECK(rel <= 1e-6, "%s: objective %.17g against smo's %.17g (%.2g relative)",
		  name, ar.objective, sr.objective, rel);
	CHECK(ar.converged && ar.lower <= ar.objective && ar.gap >= 0 && ar.gap <= 1,
		  "%s: converged, gap %.3g", name, ar.gap);
	for (int64_t i = 0; i < n; i++)
	{
		asum += ar.alpha[i];
		if (!(ar.alpha[i] >= 0 && ar.alpha[i] <= c))
			out_of_box++;
	}
	CHECK(fabs(asum - 1.0) < 1e-9 && out_of_box == 0,
		  "%s: feasible (sum %.17g, %lld outside [0, C])", name, asum, (long long) out_of_box);
	decision(x, n, d, gamma, sr.alpha, sr.offset, fs);
	decision(x, n, d, gamma, ar.alpha, ar.offset, fa);
	for (int64_t i = 0; i < n; i++)
		if (fabs(fs[i]) > 1e-6 && (fs[i] > 0) != (fa[i] > 0))
			disagree++;
	CHECK(disagree == 0, "%s: %lld rows where f's sign differs from smo's", name,
		  (long long) disagree);
	printf("  %s: %d rounds, clusters %lld -> %lld, share aggregated %.2f, "
		   "objective rel diff %.1e, gap %.1e\n",
		   name, ar.rounds, (long long) ar.aggregates[0],
		   (long long) ar.aggregates[ar.rounds - 1], ar.share_aggregated, rel, ar.gap);
	svc_aid_result_free(&svc_env_malloc, &ar);
	svc_smo_result_free(&svc_env_malloc, &sr);
	free(fs);
	free(fa);
}

static void
test_solve(void)
{
	bool		vg = under_valgrind();
	double	   *b = blobs(vg ? 120 : 400, 1);
	double	   *r = unit_ring_blob(vg ? 120 : 300, 2);
	double	   *u = noise(vg ? 90 : 240, 3, 3);

	size_t		mb = (size_t) 100 << 20;
	/* room for 8 of the rows' sums (of 400 rows): the cache evicts */
	size_t		few = 8 * 400 * sizeof(double) * 4 / 3 + 64;

	check_case("blobs gamma 2 nu 0.05", b, vg ? 120 : 400, 2, 2.0, 0.05, SVC_AID_INIT_KMEANS, 0, mb);
	check_case("blobs gamma 20 nu 0.1", b, vg ? 120 : 400, 2, 20.0, 0.1, SVC_AID_INIT_KMEANS, 0, mb);
	check_case("blobs gamma 20, no cache", b, vg ? 120 : 400, 2, 20.0, 0.1, SVC_AID_INIT_KMEANS, 0, 0);
	check_case("blobs gamma 20, a cache of 8", b, vg ? 120 : 400, 2, 20.0, 0.1, SVC_AID_INIT_KMEANS, 0,
			   few);
	check_case("blobs gamma 0.3 nu 0.2 grid", b, vg ? 120 : 400, 2, 0.3, 0.2, SVC_AID_INIT_GRID, 0, mb);
	check_case("blobs one cluster", b, vg ? 120 : 400, 2, 2.0, 0.05, SVC_AID_INIT_KMEANS, 1, mb);
	check_case("blobs every row alone", b, vg ? 120 : 400, 2, 2.0, 0.05, SVC_AID_INIT_KMEANS,
			   vg ? 120 : 400, mb);
	check_case("ring gamma 3 nu 0.1", r, vg ? 120 : 300, 2, 3.0, 0.1, SVC_AID_INIT_KMEANS, 0, mb);
	check_case("ring gamma 3 nu 0.1 grid", r, vg ? 120 : 300, 2, 3.0, 0.1, SVC_AID_INIT_GRID, 0, mb);
	check_case("noise 3-D duplicates nu 0.3", u, vg ? 90 : 240, 3, 5.0, 0.3, SVC_AID_INIT_KMEANS, 0, mb);
	check_case("noise nu n < 1 (no bound)", u, vg ? 90 : 240, 3, 5.0, 0.001, SVC_AID_INIT_KMEANS, 0, mb);
	free(b);
	free(r);
	free(u);
}

/* The RBF of the rows through smo.h's kernel callback, and a failing one. */
typedef struct RbfCtx
{
	const double *x;
	int32_t		d;
	double		gamma;
	long		calls_left;		/* fail (interrupted) when it reaches 0 */
} RbfCtx;

static SvcStatus
rbf_callback(void *ctx, int64_t j, const int64_t *idx, int64_t m, double *out, SvcError *err)
{
	RbfCtx	   *c = ctx;

	if (c->calls_left-- == 0)
		return svc_fail(err, SVC_ERR_INTERRUPTED, "stopped in the kernel");
	svc_kernel_column(c->x, c->d, j, c->gamma, idx, m, out);
	return SVC_OK;
}

static void
test_smo_callback(void)
{
	int64_t		n = under_valgrind() ? 100 : 300;
	double	   *x = blobs(n, 9);
	double	   *ones = malloc(sizeof(double) * (size_t) n);
	RbfCtx		ctx = {x, 2, 3.0, -1};
	SvcSmoParams p;
	SvcSmoResult plain,
				cb,
				warm;
	SvcError	err;
	UnitBudget	b = {0, 0};
	SvcEnv		env = {.alloc = unit_counted_alloc, .release = unit_counted_free,
		.realloc = unit_counted_realloc, .ctx = &b};

	for (int64_t i = 0; i < n; i++)
		ones[i] = 1.0;
	svc_smo_params_default(&p);
	p.gamma = 3.0;
	p.c_all = 1.0 / (0.1 * (double) n);
	p.eps = 1e-9;
	p.cache_bytes = 8 * (size_t) n * 10;	/* a small cache: shrinking and eviction */
	CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &plain, &err) == SVC_OK, "plain smo");
	p.kernel = rbf_callback;
	p.kernel_ctx = &ctx;
	p.diag = ones;
	CHECK(svc_smo_solve(&svc_env_malloc, NULL, n, 2, &p, &cb, &err) == SVC_OK, "smo by callback");
	CHECK(cb.iterations == plain.iterations && cb.objective == plain.objective &&
		  memcmp(cb.alpha, plain.alpha, sizeof(double) * (size_t) n) == 0,
		  "the callback with K_tt = 1 is the RBF path, bit for bit (%lld / %lld iterations)",
		  (long long) cb.iterations, (long long) plain.iterations);
	p.alpha0 = plain.alpha;
	CHECK(svc_smo_solve(&svc_env_malloc, NULL, n, 2, &p, &warm, &err) == SVC_OK &&
		  warm.iterations <= 2 && fabs(warm.objective - plain.objective) <= 1e-12,
		  "started at the optimum, it stays (%lld iterations)", (long long) warm.iterations);
	svc_smo_result_free(&svc_env_malloc, &warm);
	/* a start that is not feasible is refused */
	ones[0] = 2.0;
	p.alpha0 = ones;
	CHECK(svc_smo_solve(&svc_env_malloc, NULL, n, 2, &p, &warm, &err) == SVC_ERR_INVALID_PARAMETER,
		  "a start outside the box is refused");
	ones[0] = 1.0;
	p.alpha0 = NULL;
	/* the kernel fails at each of its calls in turn: clean, nothing left */
	{
		int			stops = 0;

		for (long k = 0; k < 100000; k++)
		{
			SvcStatus	st;

			ctx.calls_left = k;
			st = svc_smo_solve(&env, NULL, n, 2, &p, &warm, &err);
			if (st == SVC_OK)
			{
				svc_smo_result_free(&env, &warm);
				break;
			}
			if (st != SVC_ERR_INTERRUPTED || b.live != 0)
			{
				CHECK(false, "the kernel's failure at call %ld: status %d, %ld blocks left",
					  k, st, b.live);
				break;
			}
			stops++;
			/* past the first 200 calls, every 37th: the loop stays short */
			if (k >= 200)
				k += 36;
		}
		CHECK(stops > 10 && b.live == 0, "the kernel's failures end cleanly (%d)", stops);
	}
	svc_smo_result_free(&svc_env_malloc, &plain);
	svc_smo_result_free(&svc_env_malloc, &cb);
	free(ones);
	free(x);
}

/* The default gap stops early, with bounds that hold. */
static void
test_gap(void)
{
	int64_t		n = under_valgrind() ? 150 : 600;
	double	   *x = blobs(n, 5);
	SvcAidParams ap;
	SvcAidResult ar,
				exact;
	SvcError	err;

	svc_aid_params_default(&ap);
	ap.gamma = 20.0;
	ap.c = 1.0 / (0.05 * (double) n);
	ap.eps = 1e-8;
	CHECK(svc_aid_solve(&svc_env_malloc, x, n, 2, &ap, &ar, &err) == SVC_OK, "gap 1e-4");
	ap.gap = 0.0;
	CHECK(svc_aid_solve(&svc_env_malloc, x, n, 2, &ap, &exact, &err) == SVC_OK, "gap 0");
	CHECK(ar.gap <= 1e-4 && ar.rounds <= exact.rounds && exact.all_passed &&
		  ar.lower <= exact.objective + 1e-12 && ar.objective >= exact.objective - 1e-12 &&
		  (ar.objective - exact.objective) <= 1e-4 * fabs(exact.objective),
		  "the default gap: %d rounds (gap %.2g) against %d; F %.17g vs %.17g",
		  ar.rounds, ar.gap, exact.rounds, ar.objective, exact.objective);
	svc_aid_result_free(&svc_env_malloc, &ar);
	svc_aid_result_free(&svc_env_malloc, &exact);

	/* parameter errors */
	svc_aid_params_default(&ap);
	CHECK(svc_aid_solve(&svc_env_malloc, x, n, 2, &ap, &ar, &err) == SVC_ERR_INVALID_PARAMETER,
		  "gamma 0 is refused");
	ap.gamma = 1.0;
	ap.c = 0.5 / (double) n;
	CHECK(svc_aid_solve(&svc_env_malloc, x, n, 2, &ap, &ar, &err) == SVC_ERR_INVALID_PARAMETER,
		  "C n < 1 is refused");
	ap.c = 1.0;
	ap.gap = -1;
	CHECK(svc_aid_solve(&svc_env_malloc, x, n, 2, &ap, &ar, &err) == SVC_ERR_INVALID_PARAMETER,
		  "a negative gap is refused");
	ap.gap = 1e-4;
	x[5] = NAN;
	CHECK(svc_aid_solve(&svc_env_malloc, x, n, 2, &ap, &ar, &err) == SVC_ERR_INVALID_INPUT,
		  "a NaN is refused");
	free(x);
}

/* n rows of five Gaussian blobs in d <= 3 dimensions (sd 1, centres in [-6, 6]^d). */
static double *
five_blobs(int64_t n, int d, uint64_t seed)
{
	SvcRng		rng;
	double		c[5][3];
	double	   *x = malloc(sizeof(double) * (size_t) d * (size_t) n);

	svc_rng_seed(&rng, seed);
	for (int k = 0; k < 5; k++)
		for (int j = 0; j < d; j++)
			c[k][j] = 12.0 * svc_rng_unit(&rng) - 6.0;
	for (int64_t i = 0; i < n; i++)
		for (int j = 0; j < d; j++)
		{
			double		u1 = svc_rng_unit(&rng) + 1e-12,
						u2 = svc_rng_unit(&rng);

			x[d * i + j] = c[i % 5][j] + sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		}
	return x;
}

/*
 * Through the fit at the exact solvers' defaults, on five blobs in d
 * columns: aid keeps at most 1.5 times smo's support vectors, with its
 * objective within the gap of smo's.
 */
static void
aid_sparse_as_smo(const double *x, int64_t n, int32_t d)
{
	SvcOptions	opt;
	SvcModel	ms,
				ma;
	SvcError	err;

	CHECK(parse("{\"solver\": \"smo\"}", &opt, &err) == SVC_OK &&
		  svc_fit_rows(&svc_env_malloc, x, n, d, &opt, &ms, &err) == SVC_OK, "smo fit: %s",
		  err.message);
	CHECK(parse("{\"solver\": \"aid\"}", &opt, &err) == SVC_OK &&
		  svc_fit_rows(&svc_env_malloc, x, n, d, &opt, &ma, &err) == SVC_OK, "aid fit: %s",
		  err.message);
	printf("  five %d-D blobs, %lld rows: smo %d support vectors, aid %d; F %.12g and %.12g\n",
		   d, (long long) n, ms.n_sv, ma.n_sv, ms.objective, ma.objective);
	CHECK(ma.n_sv <= 1.5 * ms.n_sv, "aid keeps %d support vectors, smo %d", ma.n_sv, ms.n_sv);
	CHECK(ma.objective - ms.objective <= opt.aid_gap * fabs(ms.objective),
		  "aid's F %.17g within the gap of smo's %.17g", ma.objective, ms.objective);
	svc_model_free(&svc_env_malloc, &ms);
	svc_model_free(&svc_env_malloc, &ma);
}

/*
 * The polish: stopped by the gap, the clusters that straddle the sphere
 * leave a spread of small multipliers; smo on the support vectors gathers
 * them, within the gap.  Through the fit at the exact solvers' defaults,
 * aid keeps at most 1.5 times smo's support vectors.
 */
static void
test_polish(void)
{
	int64_t		n = under_valgrind() ? 300 : 1500;
	double	   *x = five_blobs(n, 3, 6);
	SvcAidParams ap;
	SvcAidResult raw,
				pol;
	SvcError	err;
	int64_t		sv_raw = 0,
				sv_pol = 0;

	svc_aid_params_default(&ap);
	ap.gamma = 2.0;
	ap.c = 1.0 / (0.05 * (double) n);
	ap.eps = 2e-3 / (0.05 * (double) n);
	ap.polish = false;
	CHECK(svc_aid_solve(&svc_env_malloc, x, n, 3, &ap, &raw, &err) == SVC_OK, "aid, no polish");
	ap.polish = true;
	CHECK(svc_aid_solve(&svc_env_malloc, x, n, 3, &ap, &pol, &err) == SVC_OK, "aid, polish");
	for (int64_t i = 0; i < n; i++)
	{
		sv_raw += raw.alpha[i] > 0;
		sv_pol += pol.alpha[i] > 0;
	}
	/*
	 * Under valgrind's 300 rows nearly every row is a support vector
	 * (252), and the polish may keep them all: fewer only from 1,500.
	 */
	CHECK((under_valgrind() ? sv_pol <= sv_raw : sv_pol < sv_raw) &&
		  pol.objective <= raw.objective && pol.objective >= pol.lower &&
		  pol.gap <= raw.gap && pol.lower == raw.lower,
		  "the polish: %lld -> %lld support vectors, F %.12g -> %.12g (lower %.12g)",
		  (long long) sv_raw, (long long) sv_pol, raw.objective, pol.objective, pol.lower);
	svc_aid_result_free(&svc_env_malloc, &raw);
	svc_aid_result_free(&svc_env_malloc, &pol);

	aid_sparse_as_smo(x, n, 3);
	free(x);
}

/*
 * The polish's start: on 2-D blobs at the exact solvers' width, thousands
 * of rows lie within smo's tolerance of the sphere, and smo started from
 * the clusters' even spread stops with them all free (1.85 times smo's
 * support vectors on 5,000 rows).  Gathered on the rows farthest outside,
 * aid keeps at most 1.5 times smo's support vectors, within the gap.
 */
static void
test_polish_gathers(void)
{
	/* 3,000 rows: 1,884 support vectors against smo's 1,119 from the even
	 * spread, 1,036 gathered; valgrind's 1,000 rows: 647 and 469 (484) */
	int64_t		n = under_valgrind() ? 1000 : 3000;
	double	   *x = five_blobs(n, 2, 1);

	aid_sparse_as_smo(x, n, 2);
	free(x);
}

/*
 * smo's stopping rule over every row of x: m - M, with m the largest -G_i
 * of the rows below C and M the smallest of the rows above 0 (G = 2 K
 * alpha - 1, smo.h), by brute force.
 */
static double
kkt_gap(const double *x, int64_t n, int32_t d, double gamma, double c, const double *alpha)
{
	double		m = -HUGE_VAL,
				mm = HUGE_VAL;

	for (int64_t i = 0; i < n; i++)
	{
		double		s = 0.0,
					g;

		for (int64_t j = 0; j < n; j++)
			if (alpha[j] > 0)
				s += alpha[j] * (i == j ? 1.0 : exp(-gamma * svc_sqdist(x + i * d, x + j * d, d)));
		g = 1.0 - 2.0 * s;
		if (alpha[i] < c && g > m)
			m = g;
		if (alpha[i] > 0 && g < mm)
			mm = g;
	}
	return m - mm;
}

/*
 * The completion: the polish solves over the rounds' support vectors
 * alone, and the sphere it finds leaves rows at 0 outside by more than the
 * tolerance (blobs in 2-D and 3-D at a wide and at the exact solvers'
 * width: m - M up to 24 times eps before).  Those rows join and smo runs
 * again, so aid stops where smo would: within eps on every row.
 */
static void
test_polish_completes(void)
{
	int64_t		n = under_valgrind() ? 400 : 2000;

	for (int d = 2; d <= 3; d++)
	{
		double	   *x = five_blobs(n, d, 6);

		for (int w = 0; w < 2; w++)
		{
			SvcAidParams ap;
			SvcAidResult ar;
			SvcError	err;
			double		gap;

			svc_aid_params_default(&ap);
			ap.gamma = w == 0 ? 2.0 : 0.5;
			ap.c = 1.0 / (0.05 * (double) n);
			ap.eps = 2e-3 / (0.05 * (double) n);
			if (svc_aid_solve(&svc_env_malloc, x, n, d, &ap, &ar, &err) != SVC_OK)
			{
				CHECK(false, "aid: %s", err.message);
				continue;
			}
			gap = kkt_gap(x, n, d, ap.gamma, ap.c, ar.alpha);
			printf("  %d-D, gamma %g: m - M %.3g, eps %.3g\n", d, ap.gamma, gap, ap.eps);
			CHECK(!ar.all_passed && gap < ap.eps * (1 + 1e-6),
				  "%d-D, gamma %g: smo's rule on every row, m - M %.17g against eps %.17g "
				  "(stopped by the gap: %d)", d, ap.gamma, gap, ap.eps, !ar.all_passed);
			svc_aid_result_free(&svc_env_malloc, &ar);
		}
		free(x);
	}
}

/*
 * smo on the rows of raw's support vectors from raw's multipliers (the
 * polish's spread start), then again with the rows the sphere leaves
 * outside by eps / 2 in K alpha (the completion), until there are none: the
 * rows' multipliers into alpha, the offset into *offset.
 */
static void
polish_from_spread(const double *x, int64_t n, int32_t d, const SvcAidParams *ap,
				   const SvcAidResult *raw, double *alpha, double *offset)
{
	int64_t    *idx = malloc(sizeof(int64_t) * (size_t) n);
	double	   *xs = malloc(sizeof(double) * (size_t) d * (size_t) n),
			   *a0 = malloc(sizeof(double) * (size_t) n),
			   *sum = malloc(sizeof(double) * (size_t) n),
			   *col = malloc(sizeof(double) * (size_t) n);
	bool	   *act = malloc(sizeof(bool) * (size_t) n);
	int64_t		added = 1;
	SvcSmoParams sp;
	SvcError	err;

	svc_smo_params_default(&sp);
	sp.gamma = ap->gamma;
	sp.c_all = ap->c;
	sp.eps = ap->eps;
	sp.max_iter = ap->max_iter;
	sp.cache_bytes = ap->cache_bytes;
	sp.alpha0 = a0;
	*offset = 0.0;
	for (int64_t i = 0; i < n; i++)
	{
		act[i] = raw->alpha[i] > 0;
		alpha[i] = raw->alpha[i];
	}
	while (added > 0)
	{
		SvcSmoResult res;
		int64_t		ns = 0;
		double		top = -HUGE_VAL;

		for (int64_t i = 0; i < n; i++)
			if (act[i])
			{
				idx[ns] = i;
				memcpy(xs + d * ns, x + d * i, sizeof(double) * (size_t) d);
				a0[ns++] = fmin(alpha[i], ap->c);
			}
		CHECK(svc_smo_solve(&svc_env_malloc, xs, ns, d, &sp, &res, &err) == SVC_OK, "smo");
		if (res.alpha == NULL)
			break;
		memset(alpha, 0, sizeof(double) * (size_t) n);
		for (int64_t k = 0; k < ns; k++)
			alpha[idx[k]] = res.alpha[k];
		*offset = res.offset;
		svc_smo_result_free(&svc_env_malloc, &res);
		memset(sum, 0, sizeof(double) * (size_t) n);
		for (int64_t j = 0; j < n; j++)
			if (alpha[j] > 0)
			{
				svc_kernel_column(x, d, j, ap->gamma, NULL, n, col);
				col[j] = 1.0;
				for (int64_t i = 0; i < n; i++)
					sum[i] += alpha[j] * col[i];
			}
		for (int64_t j = 0; j < n; j++)
			if (alpha[j] > 0 && sum[j] > top)
				top = sum[j];
		added = 0;
		for (int64_t i = 0; i < n; i++)
			if (!act[i] && sum[i] <= top - ap->eps / 2.0)
			{
				act[i] = true;
				added++;
			}
	}
	free(idx);
	free(xs);
	free(a0);
	free(sum);
	free(col);
	free(act);
}

/*
 * Rows that barely overlap at the kernel's width (uniform in [0, 1]^9 at
 * a narrow width) keep nearly every row a support vector: there the
 * polish starts from the rounds' spread, not gathered (which costs smo
 * about a step per row to spread out again), so its result is smo's on
 * the rounds' support vectors from the rounds' multipliers, completed with
 * the rows left outside, bit for bit.
 * With every third row a copy of the one before, smo keeps the copies'
 * spread, so the polish gathers: a third fewer support vectors.
 */
static void
test_polish_isolated(void)
{
	int64_t		n = under_valgrind() ? 300 : 1200;
	SvcAidParams ap;
	double	   *alpha = malloc(sizeof(double) * (size_t) n);

	svc_aid_params_default(&ap);
	ap.gamma = 8.0;
	ap.c = 1.0 / (0.05 * (double) n);
	ap.eps = 2e-3 / (0.05 * (double) n);
	/* so that the gap, not the checks, stops the rounds on 300 rows */
	ap.gap = 1e-3;
	for (int copies = 0; copies < 2; copies++)
	{
		double	   *x = noise(n, 9, 11);
		SvcAidResult raw,
					pol;
		SvcError	err;
		double		offset;
		int64_t		sv = 0,
					sv_spread = 0;
		bool		same = true;

		/* noise(): every third row repeats the one before */
		for (int64_t i = 2; !copies && i < n; i += 3)
			for (int j = 0; j < 9; j++)
				x[9 * i + j] = 0.5 * (x[9 * (i - 1) + j] + x[9 * (i - 2) + j]);
		ap.polish = false;
		CHECK(svc_aid_solve(&svc_env_malloc, x, n, 9, &ap, &raw, &err) == SVC_OK,
			  "aid, no polish");
		ap.polish = true;
		CHECK(svc_aid_solve(&svc_env_malloc, x, n, 9, &ap, &pol, &err) == SVC_OK,
			  "aid, polish");
		CHECK(!raw.all_passed, "the gap stops the rounds (%d rounds)", raw.rounds);
		polish_from_spread(x, n, 9, &ap, &raw, alpha, &offset);
		for (int64_t i = 0; i < n; i++)
		{
			same = same && memcmp(&alpha[i], &pol.alpha[i], sizeof(double)) == 0;
			sv += pol.alpha[i] > 0;
			sv_spread += alpha[i] > 0;
		}
		printf("  9-D uniform rows%s, %lld rows: %lld support vectors polished, %lld from the spread\n",
			   copies ? " (a third copies)" : "", (long long) n, (long long) sv,
			   (long long) sv_spread);
		if (!copies)
			CHECK(sv > n / 2 && same && memcmp(&offset, &pol.offset, sizeof(double)) == 0,
				  "the polish from the rounds' spread, bit for bit (%lld support vectors)",
				  (long long) sv);
		else
			CHECK(sv < 0.8 * sv_spread, "copies gathered: %lld support vectors, %lld spread",
				  (long long) sv, (long long) sv_spread);
		svc_aid_result_free(&svc_env_malloc, &raw);
		svc_aid_result_free(&svc_env_malloc, &pol);
		free(x);
	}
	free(alpha);
}

/* The model's section 2 at the end of the bytes: header, then the payload. */
static size_t
aid_section(const SvcModel *m, size_t len)
{
	return len - 4 - 8 - 24 - 8 * (size_t) m->aid_rounds;
}

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

/* svc_fit_rows with aid against smo: the same sphere, the same clusters. */
static void
test_fit(void)
{
	int64_t		n = under_valgrind() ? 150 : 450;
	double	   *x = blobs(n, 7);
	SvcOptions	opt;
	SvcModel	ms,
				ma,
				back;
	SvcError	err;
	uint8_t    *buf,
			   *again;
	size_t		len,
				len2,
				sec;
	char	   *json;
	bool		same = true;

	CHECK(parse("{\"solver\": \"smo\", \"tol\": 1e-7}", &opt, &err) == SVC_OK, "smo options");
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &ms, &err) == SVC_OK, "smo fit");
	CHECK(parse("{\"solver\": \"aid\", \"tol\": 1e-7, \"aid_gap\": 1e-9}", &opt, &err) == SVC_OK,
		  "aid options: %s", err.message);
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &ma, &err) == SVC_OK, "aid fit: %s",
		  err.message);
	CHECK(ma.solver == SVC_SOLVER_AID && ma.boundary == SVC_BOUNDARY_SPHERE &&
		  ma.aid_rounds >= 1 && ma.converged &&
		  fabs(ma.objective - ms.objective) <= 1e-6 * fabs(ms.objective),
		  "aid's sphere: F %.17g against smo's %.17g", ma.objective, ms.objective);
	same = ma.n_clusters == ms.n_clusters;
	for (int32_t i = 0; same && i < ma.n_clusters; i++)
		same = ma.cluster_size[i] == ms.cluster_size[i];
	for (int64_t i = 0; same && i < n; i++)
	{
		double		xs[2];

		svc_model_scale_row(&ma, x + 2 * i, xs);
		same = (svc_model_decision_scaled(&ma, xs) >= 0) ==
			(svc_model_decision_scaled(&ms, xs) >= 0) ||
			fabs(svc_model_decision_scaled(&ms, xs)) <= 1e-6;
	}
	CHECK(same, "the same clusters (%d and %d) and domain as smo", ma.n_clusters, ms.n_clusters);

	/* the bytes: format 5 with section 2, and back */
	buf = encode(&ma, &len);
	CHECK(svc_load_u16(buf + 4) == SVC_MODEL_FORMAT_SECTIONS, "aid writes format 5");
	sec = aid_section(&ma, len);
	CHECK(svc_load_u16(buf + sec) == 2 && svc_load_u32(buf + sec + 4) == 24 + 8 * (uint32_t) ma.aid_rounds,
		  "section 2 last, of its length");
	CHECK(svc_model_decode(&svc_env_malloc, buf, len, &back, &err) == SVC_OK &&
		  back.aid_rounds == ma.aid_rounds && back.aid_final_gap == ma.aid_final_gap &&
		  back.aid_share == ma.aid_share &&
		  memcmp(back.aid_aggregates, ma.aid_aggregates, sizeof(int64_t) * ma.aid_rounds) == 0,
		  "decodes to the same report: %s", err.message);
	again = encode(&back, &len2);
	CHECK(len2 == len && memcmp(buf, again, len) == 0, "and encodes to the same bytes");
	json = svc_model_info_json(&svc_env_malloc, &back, &err);
	CHECK(json && strstr(json, "\"solver\": \"aid\"") && strstr(json, "\"boundary\": \"sphere\"") &&
		  strstr(json, "\"aid_rounds\": ") && strstr(json, "\"aid_aggregates\": [") &&
		  strstr(json, "\"aid_final_gap\": ") && strstr(json, "\"aid_share_aggregated\": ") &&
		  strstr(json, "\"aid_gap\": 1e-09") && strstr(json, "\"objective\": "),
		  "svc_model_info shows the report: %s", json ? json : err.message);
	svc_free(&svc_env_malloc, json);
	svc_model_free(&svc_env_malloc, &back);
	free(again);

	/* every damage to the section is refused */
	{
		uint32_t	u;
		double		v;
		uint64_t	big = (uint64_t) n + 1;

		u = 0;
		CHECK(decode_damaged(buf, len, sec + 8, &u, 4, &err) == SVC_ERR_CORRUPT,
			  "0 rounds: %s", err.detail);
		u = 1;
		CHECK(decode_damaged(buf, len, sec + 12, &u, 4, &err) == SVC_ERR_CORRUPT,
			  "a non-zero pad: %s", err.detail);
		v = 1.5;
		CHECK(decode_damaged(buf, len, sec + 16, &v, 8, &err) == SVC_ERR_CORRUPT,
			  "a gap above 1: %s", err.detail);
		v = NAN;
		CHECK(decode_damaged(buf, len, sec + 24, &v, 8, &err) == SVC_ERR_CORRUPT,
			  "a NaN share: %s", err.detail);
		CHECK(decode_damaged(buf, len, sec + 32, &big, 8, &err) == SVC_ERR_CORRUPT,
			  "more clusters than rows: %s", err.detail);
		if (ma.aid_rounds > 1)
		{
			uint64_t	first = (uint64_t) ma.aid_aggregates[1];

			CHECK(decode_damaged(buf, len, sec + 32, &first, 8, &err) == SVC_ERR_CORRUPT,
				  "counts that do not rise: %s", err.detail);
		}
		buf[12] = SVC_SOLVER_SMO;	/* the header's solver: smo with aid's section */
		CHECK(decode_damaged(buf, len, 16 + 120, &buf[12], 1, &err) == SVC_ERR_CORRUPT,
			  "smo with aid's report: %s", err.detail);
		buf[12] = SVC_SOLVER_AID;
	}
	free(buf);
	svc_model_free(&svc_env_malloc, &ms);
	svc_model_free(&svc_env_malloc, &ma);
	free(x);
}

/* Refused up front past the budget; cancelled and out of memory cleanly. */
static void
test_limits(void)
{
	int64_t		n = under_valgrind() ? 48 : 150;
	double	   *x = blobs(13200, 3);
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	int			kinds[2] = {0, 0};
	UnitBudget	b0 = {0, 0};
	SvcEnv		env = {.alloc = unit_counted_alloc, .release = unit_counted_free,
		.realloc = unit_counted_realloc, .ctx = &b0};

	parse("{\"solver\": \"aid\", \"cache_mb\": 1}", &opt, &err);
	CHECK(svc_fit_rows(&env, x, 13200, 2, &opt, &m, &err) == SVC_ERR_LIMIT &&
		  strstr(err.message, "the solver \"aid\" needs") &&
		  strstr(err.hint, "\"sample\"") && strstr(err.hint, "\"bsgd\""),
		  "cache_mb 1 refuses 13200 rows: %s / %s", err.message, err.hint);
	svc_model_free(&env, &m);
	CHECK(b0.live == 0, "the refusal leaves nothing allocated (%ld)", b0.live);

	/*
	 * labelled rows act after the solver (label_spread): aid takes them;
	 * in the solver's bounds (label_spread false), which aid has none of,
	 * it refuses them
	 */
	{
		int8_t	   *label = calloc((size_t) n, sizeof(int8_t));

		label[3] = 1;
		label[40] = -1;
		parse("{\"solver\": \"aid\"}", &opt, &err);
		CHECK(svc_fit_rows_labelled(&env, x, label, n, 2, &opt, &m, &err) == SVC_OK &&
			  m.lab_normal == 1 && m.lab_anomaly == 1 && m.lab_wrong_anomaly == 0,
			  "labelled rows spread: %s", err.message);
		svc_model_free(&env, &m);
		parse("{\"solver\": \"aid\", \"label_spread\": false}", &opt, &err);
		CHECK(svc_fit_rows_labelled(&env, x, label, n, 2, &opt, &m, &err) == SVC_ERR_INVALID_PARAMETER &&
			  strcmp(err.message, "the solver \"aid\" does not take labelled rows in its bounds") == 0,
			  "labelled rows in the bounds are refused: %s", err.message);
		svc_model_free(&env, &m);
		CHECK(b0.live == 0, "the refusal leaves nothing allocated (%ld)", b0.live);
		free(label);
	}

	parse("{\"solver\": \"aid\"}", &opt, &err);
	unit_fit_fails_cleanly(x, n, 2, &opt, kinds);
	printf("  fit aid: fails cleanly at each of %d allocations, stops at each of %d checks\n",
		   kinds[0], kinds[1]);
	CHECK(kinds[0] > 10 && kinds[1] > 3, "the failure loops ran");
	free(x);
}

int
main(void)
{
	test_smo_callback();
	test_solve();
	test_gap();
	test_polish();
	test_polish_gathers();
	test_polish_completes();
	test_polish_isolated();
	test_fit();
	test_limits();
	return unit_summary("test_aid");
}
