/*
 * incr_bench.c - the incremental solver (incremental.c) against smo.c, and a sliding window
 *
 * For test/bench/incremental_vs_smo.py.  Two modes, on generated rows (5
 * Gaussian blobs in 2-D, seeded centres in [-6, 6], sd 1, as the benchmark's
 * "clustered" set), with smo's defaults for the exact solvers (nu 0.05,
 * gamma 1, a 100 MB budget):
 *
 *   incr_bench fit N      both solvers on the same N rows: prints
 *       "fit N smo_s incr_s steps n_margin n_error max_abs_f_diff kkt"
 *       (CPU seconds; smo at eps 1e-9 in libsvm's units; f compared on
 *       every row);
 *   incr_bench window W T a window of W rows over T streamed rows (the
 *       oldest leaves by decrement): prints "rss ROWS KB" at every tenth
 *       of the stream (the process's peak resident set so far, VmHWM), then
 *       "window W T incr_s smo_s max_abs_f_diff kkt", with smo solved on the
 *       last W rows at the same C = 1 / (nu W).
 *
 * Built from the extension's core objects with its flags (`make test/tools/incr_bench`).
 */
#include "incremental.h"
#include "kernel.h"
#include "smo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define NU 0.05
#define GAMMA 1.0

static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/*
 * The peak resident set of this process: VmHWM (reset by exec, unlike
 * getrusage's ru_maxrss, which keeps the parent's peak across exec).
 */
static long
peak_rss_kb(void)
{
	FILE	   *f = fopen("/proc/self/status", "r");
	char		line[256];
	long		kb = -1;
	struct rusage ru;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmHWM:", 6) == 0)
			kb = atol(line + 6);
	if (f != NULL)
		fclose(f);
	if (kb >= 0)
		return kb;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void
die(const char *what, const SvcError *err)
{
	fprintf(stderr, "incr_bench: %s: %s\n", what, err ? err->message : "");
	exit(2);
}

/* Row i of the stream: blob i % 5 (seeded centres), sd 1. */
static void
gen_rows(double *x, int64_t from, int64_t n)
{
	SvcRng		rng;
	double		centre[5][2];

	svc_rng_seed(&rng, 2026);
	for (int k = 0; k < 5; k++)
		for (int j = 0; j < 2; j++)
			centre[k][j] = -6.0 + 12.0 * svc_rng_unit(&rng);
	svc_rng_seed(&rng, 7 + (uint64_t) from);
	for (int64_t i = 0; i < n; i++)
	{
		int			k = (int) (svc_rng_below(&rng, 5));

		for (int j = 0; j < 2; j++)
		{
			double		u1 = svc_rng_unit(&rng) + 1e-300,
						u2 = svc_rng_unit(&rng);

			x[2 * i + j] = centre[k][j] + sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		}
	}
}

/* smo on n rows at C = c: alpha and offset; CPU seconds in *secs. */
static SvcSmoResult
run_smo(const double *x, int64_t n, double c, double *secs)
{
	SvcSmoParams p;
	SvcSmoResult r;
	SvcError	err;
	double		t0 = cpu_now();

	svc_smo_params_default(&p);
	p.gamma = GAMMA;
	p.c_all = c;
	/* eps 1e-9 in libsvm's units, as solver_smo.c converts tol */
	p.eps = 2.0 * 1e-9 / (NU * (double) n > 1 ? NU * (double) n : 1.0);
	if (svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) != SVC_OK)
		die("smo", &err);
	*secs = cpu_now() - t0;
	return r;
}

static double
f_diff(const SvcIncr *s, const SvcSmoResult *r, const double *x, int64_t n)
{
	double		worst = 0.0;

	for (int64_t i = 0; i < n; i++)
	{
		double		sum = 0.0;

		for (int64_t j = 0; j < n; j++)
			if (r->alpha[j] > 0)
				sum += r->alpha[j] * exp(-GAMMA * svc_sqdist(x + 2 * i, x + 2 * j, 2));
		worst = fmax(worst, fabs(sum - r->offset - svc_incr_decision(s, x + 2 * i)));
	}
	return worst;
}

static SvcIncr *
new_incr(int64_t cap)
{
	SvcIncrParams p = {.d = 2, .gamma = GAMMA, .capacity = cap, .memory = (size_t) 100 << 20};
	SvcIncr    *s;
	SvcError	err;

	if (svc_incr_create(&svc_env_malloc, &p, &s, &err) != SVC_OK)
		die("create", &err);
	return s;
}

int
main(int argc, char **argv)
{
	SvcError	err;

	if (argc == 3 && strcmp(argv[1], "fit") == 0)
	{
		int64_t		n = atoll(argv[2]);
		double	   *x = malloc(sizeof(double) * 2 * (size_t) n);
		double		c = NU * (double) n > 1 ? 1.0 / (NU * (double) n) : 1.0;
		double		ts,
					t0,
					ti,
					kkt;
		SvcSmoResult r;
		SvcIncr    *s = new_incr(n);
		SvcIncrStats st;
		int64_t		slot;

		gen_rows(x, 0, n);
		r = run_smo(x, n, c, &ts);
		t0 = cpu_now();
		for (int64_t i = 0; i < n; i++)
			if (svc_incr_add(s, x + 2 * i, c, &slot, &err) != SVC_OK)
				die("add", &err);
		kkt = svc_incr_kkt_violation(s, &err);
		ti = cpu_now() - t0;
		svc_incr_stats(s, &st);
		printf("fit %lld %.4f %.4f %lld %lld %lld %.3g %.3g\n", (long long) n, ts, ti,
			   (long long) st.steps, (long long) st.n_margin, (long long) st.n_error,
			   f_diff(s, &r, x, n), kkt);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "window") == 0)
	{
		int64_t		w = atoll(argv[2]),
					total = atoll(argv[3]),
					block = 1000;
		double		c = 1.0 / (NU * (double) w);
		double	   *x = malloc(sizeof(double) * 2 * (size_t) block);
		double	   *last = malloc(sizeof(double) * 2 * (size_t) w);
		int64_t    *fifo = malloc(sizeof(int64_t) * (size_t) w);
		SvcIncr    *s = new_incr(w + 1);
		SvcSmoResult r;
		SvcIncrStats st;
		double		t0 = cpu_now(),
					ti,
					ts,
					kkt;

		for (int64_t i = 0; i < total; i++)
		{
			int64_t		slot;

			if (i % block == 0)
				gen_rows(x, i, block);
			if (i >= w && svc_incr_remove(s, fifo[i % w], &err) != SVC_OK)
				die("remove", &err);
			if (svc_incr_add(s, x + 2 * (i % block), c, &slot, &err) != SVC_OK)
				die("add", &err);
			fifo[i % w] = slot;
			if (i >= total - w)
				memcpy(last + 2 * (i - (total - w)), x + 2 * (i % block), 2 * sizeof(double));
			if ((i + 1) % (total / 10) == 0)
				printf("rss %lld %ld\n", (long long) (i + 1), peak_rss_kb());
		}
		kkt = svc_incr_kkt_violation(s, &err);
		ti = cpu_now() - t0;
		r = run_smo(last, w, c, &ts);
		svc_incr_stats(s, &st);
		printf("window %lld %lld %.4f %.4f %.3g %.3g %lld %lld %lld\n", (long long) w,
			   (long long) total, ti, ts, f_diff(s, &r, last, w), kkt, (long long) st.steps,
			   (long long) st.n_margin, (long long) st.refactors);
		return 0;
	}
	fprintf(stderr, "usage: incr_bench fit N | incr_bench window W TOTAL\n");
	return 2;
}
