/*
 * score_check.c - the scorer (score.c, score_trajectory.c) against the
 * full routines on CSV sets
 *
 *   score_check [--seeds N] [--probes N] FILE...
 *
 * Each FILE is a CSV with a header line and one row per point, its last
 * field a label (ignored).  For every file and seed 1..N (default 5) it
 * trains a model with the default options (and that seed), then scores
 * the training rows and N probes (default 20,000) drawn uniformly from
 * the rows' bounding box widened by half its size on each side, both
 * ways: svc_model_decision_scaled and svc_label_assign (the full sum, and
 * the full trajectory with the model's assign_rule) against
 * svc_scorer_decision and svc_scorer_predict.
 * Prints one line per file and seed: rows scored, clusters, rows whose
 * cluster differs, rows whose f has another sign, the largest difference
 * of f relative to sum |alpha_i| K_i, the share of rows that ran the full
 * trajectory, and the CPU microseconds per row of each predict.
 *
 * Built from the core's objects with the extension's flags
 * (`make test/tools/score_check`); run by test/bench/bench.py's scoring section
 * when the data directory exists.
 */
#include "fit.h"
#include "model.h"
#include "options.h"
#include "score.h"
#include "label_trajectory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* sum |alpha_i| K_i at a scaled row: the scale of f's rounding */
static double
abs_sum(const SvcModel *m, const double *r)
{
	double		t = 0.0;

	for (int32_t i = 0; i < m->n_sv; i++)
	{
		double		g = m->sv_gamma ? m->sv_gamma[i] : m->gamma;
		double		q = 0.0;

		for (int32_t j = 0; j < m->dims; j++)
			q += (m->sv[(size_t) i * m->dims + j] - r[j]) * (m->sv[(size_t) i * m->dims + j] - r[j]);
		t += fabs(m->alpha[i]) * exp(-g * q);
	}
	return t;
}

/* Rows of a CSV (header skipped, last field dropped); NULL on failure. */
static double *
read_csv(const char *path, int64_t *n, int32_t *d)
{
	FILE	   *f = fopen(path, "r");
	char		line[65536];
	double	   *x = NULL;
	int64_t		cap = 0;

	*n = 0;
	*d = -1;
	if (!f || !fgets(line, sizeof(line), f))
	{
		if (f)
			fclose(f);
		return NULL;
	}
	while (fgets(line, sizeof(line), f))
	{
		double		v[1024];
		int			k = 0;
		char	   *p = line,
				   *end;

		for (;;)
		{
			double		t = strtod(p, &end);

			if (end == p || k == 1024)
				break;
			v[k++] = t;
			p = end;
			while (*p == ',' || *p == ' ' || *p == '\t')
				p++;
		}
		if (k < 2)
			continue;
		if (*d < 0)
			*d = k - 1;
		if (k - 1 != *d)
			continue;
		if (*n == cap)
		{
			cap = cap ? 2 * cap : 1024;
			x = realloc(x, sizeof(double) * (size_t) (cap * *d));
		}
		memcpy(x + *n * *d, v, sizeof(double) * (size_t) *d);
		(*n)++;
	}
	fclose(f);
	return x;
}

static int
check(const char *path, uint64_t seed, int64_t n_probe)
{
	int64_t		n;
	int32_t		d;
	double	   *x = read_csv(path, &n, &d);
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	SvcScorer	s;
	SvcLabelWork w;
	SvcRng		rng;
	double	   *xs,
			   *lo,
			   *hi,
				t0,
				t_full = 0,
				t_fast = 0,
				worst = 0;
	int64_t		total,
				diff = 0,
				sign = 0;
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	if (!x || n < 2)
	{
		printf("%s: cannot read\n", name);
		return 1;
	}
	memset(&m, 0, sizeof(m));
	svc_options_default(&opt);
	opt.seed = seed;
	if (svc_fit_rows(&svc_env_malloc, x, n, d, &opt, &m, &err) != SVC_OK ||
		svc_scorer_init(&svc_env_malloc, &m, &s, &err) != SVC_OK ||
		svc_label_work_init(&svc_env_malloc, &m, &w, &err) != SVC_OK)
	{
		printf("%s: %s\n", name, err.message);
		return 1;
	}
	total = n + n_probe;
	xs = malloc(sizeof(double) * (size_t) (total * d));
	lo = malloc(sizeof(double) * (size_t) d);
	hi = malloc(sizeof(double) * (size_t) d);
	for (int32_t j = 0; j < d; j++)
	{
		lo[j] = HUGE_VAL;
		hi[j] = -HUGE_VAL;
		for (int64_t i = 0; i < n; i++)
		{
			lo[j] = fmin(lo[j], x[i * d + j]);
			hi[j] = fmax(hi[j], x[i * d + j]);
		}
	}
	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < total; i++)
	{
		double		raw[1024];

		for (int32_t j = 0; j < d; j++)
			raw[j] = i < n ? x[i * d + j] :
				lo[j] + (hi[j] - lo[j]) * (2.0 * svc_rng_unit(&rng) - 0.5);
		svc_model_scale_row(&m, raw, xs + i * d);
	}

	for (int64_t i = 0; i < total; i++)
	{
		const double *r = xs + i * d;
		double		f0,
					f1;
		int32_t		c0,
					c1;

		t0 = cpu_now();
		c0 = svc_label_assign(&m, r, &w, NULL);
		f0 = svc_model_decision_scaled(&m, r);
		t_full += cpu_now() - t0;
		t0 = cpu_now();
		c1 = svc_scorer_predict(&s, r, &f1);
		t_fast += cpu_now() - t0;
		if (c0 != c1)
			diff++;
		if ((f0 < 0) != (f1 < 0))
			sign++;
		worst = fmax(worst, fabs(f1 - f0) / (abs_sum(&m, r) + 1e-300));
	}
	printf("%s seed %llu: %lld rows (%lld training), %d clusters, %lld clusters differ, "
		   "%lld signs differ, f within %.2g of sum|a|K, %.2f%% full trajectories, "
		   "predict %.2f us full / %.2f us scorer\n",
		   name, (unsigned long long) seed, (long long) total, (long long) n,
		   m.n_clusters, (long long) diff, (long long) sign, worst,
		   100.0 * s.n_fallback / (double) s.n_rows,
		   1e6 * t_full / total, 1e6 * t_fast / total);
	svc_scorer_free(&svc_env_malloc, &s);
	svc_label_work_free(&svc_env_malloc, &w);
	svc_model_free(&svc_env_malloc, &m);
	free(x);
	free(xs);
	free(lo);
	free(hi);
	return diff > 0 || sign > 0;
}

int
main(int argc, char **argv)
{
	int			seeds = 5;
	int64_t		probes = 20000;
	int			bad = 0;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
			seeds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--probes") == 0 && i + 1 < argc)
			probes = atoll(argv[++i]);
		else
			for (int s = 1; s <= seeds; s++)
				bad |= check(argv[i], (uint64_t) s, probes);
	}
	return bad;
}
