/*
 * wide_core.c - the fit and the scorer on wide rows, without a server
 *
 *   wide_core [--score N] [--repeat R] FILE [OPTIONS_JSON]
 *
 * FILE holds rows as test/bench/wide_rows.c writes them (id, a {...}
 * array literal, a class; tab separated).  Fits a model on the rows with
 * the options (svc_fit_rows, as svc_train's final function does on its
 * sample), then scores the first N rows (default: all) with the scorer
 * (svc_scorer_decision, then svc_scorer_predict), R times (default 1).
 * Prints the CPU time of each part and what the model found, so that
 * perf or callgrind can look at the core alone.
 *
 * Built from the core's objects with the extension's flags
 * (`make test/tools/wide_core`).
 */
#include "fit.h"
#include "model.h"
#include "model_codec.h"
#include "options.h"
#include "options_text.h"
#include "score.h"

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

/* The rows of FILE and their classes; NULL on failure. */
static double *
read_rows(const char *path, int64_t *n, int32_t *d, int32_t **cls)
{
	FILE	   *f = fopen(path, "r");
	char	   *line = NULL;
	size_t		cap_line = 0;
	double	   *x = NULL;
	int64_t		cap = 0;

	*n = 0;
	*d = -1;
	*cls = NULL;
	if (!f)
		return NULL;
	while (getline(&line, &cap_line, f) > 0)
	{
		char	   *p = strchr(line, '{'),
				   *end;
		int32_t		k = 0;

		if (!p)
			continue;
		p++;
		if (*n == cap)
		{
			cap = cap ? 2 * cap : 1024;
			*cls = realloc(*cls, sizeof(int32_t) * (size_t) cap);
			if (*d > 0)
				x = realloc(x, sizeof(double) * (size_t) (cap * *d));
		}
		if (*d < 0)
		{
			/* the first row gives the width */
			int32_t		w = 1;

			for (char *q = p; *q && *q != '}'; q++)
				w += *q == ',';
			*d = w;
			x = realloc(x, sizeof(double) * (size_t) (cap * *d));
		}
		for (;;)
		{
			double		t = strtod(p, &end);

			if (end == p || k == *d)
				break;
			x[*n * *d + k++] = t;
			p = end;
			while (*p == ',')
				p++;
		}
		if (k != *d || *p != '}')
			continue;
		(*cls)[*n] = atoi(p + 1);
		(*n)++;
	}
	free(line);
	fclose(f);
	return x;
}

int
main(int argc, char **argv)
{
	int64_t		n,
				n_score = -1;
	int32_t		d,
			   *cls;
	int			repeat = 1,
				a = 1;
	const char *json = "{}";
	double	   *x,
			   *xs;
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	SvcScorer	s;
	double		t0,
				t_fit,
				t_dec = 0,
				t_pred = 0,
				fsum = 0;
	int64_t		csum = 0;
	uint64_t	fh = 1469598103934665603ULL;

	for (; a < argc && strncmp(argv[a], "--", 2) == 0; a += 2)
	{
		if (a + 1 >= argc)
			break;
		if (strcmp(argv[a], "--score") == 0)
			n_score = atoll(argv[a + 1]);
		else if (strcmp(argv[a], "--repeat") == 0)
			repeat = atoi(argv[a + 1]);
	}
	if (a >= argc)
	{
		fprintf(stderr, "usage: wide_core [--score N] [--repeat R] FILE [OPTIONS_JSON]\n");
		return 2;
	}
	x = read_rows(argv[a], &n, &d, &cls);
	if (a + 1 < argc)
		json = argv[a + 1];
	if (!x || n < 2)
	{
		fprintf(stderr, "wide_core: cannot read %s\n", argv[a]);
		return 1;
	}
	svc_options_default(&opt);
	if (svc_options_parse(json, strlen(json), &opt, &err) != SVC_OK)
	{
		fprintf(stderr, "wide_core: %s\n", err.message);
		return 1;
	}
	memset(&m, 0, sizeof(m));
	t0 = cpu_now();
	if (svc_fit_rows(&svc_env_malloc, x, n < opt.sample ? n : opt.sample, d, &opt, &m, &err) != SVC_OK)
	{
		fprintf(stderr, "wide_core: %s\n", err.message);
		return 1;
	}
	t_fit = cpu_now() - t0;
	{
		/* FNV-1a of the model's bytes: the same model, the same hash */
		size_t		len = svc_model_encoded_size(&m);
		uint8_t    *b = malloc(len);
		uint64_t	h = 1469598103934665603ULL;

		svc_model_encode(&m, b);
		for (size_t i = 0; i < len; i++)
			h = (h ^ b[i]) * 1099511628211ULL;
		printf("model: %zu bytes, hash %016llx\n", len, (unsigned long long) h);
		free(b);
	}
	if (svc_scorer_init(&svc_env_malloc, &m, &s, &err) != SVC_OK)
	{
		fprintf(stderr, "wide_core: %s\n", err.message);
		return 1;
	}
	if (n_score < 0 || n_score > n)
		n_score = n;
	xs = malloc(sizeof(double) * (size_t) d);
	for (int r = 0; r < repeat; r++)
	{
		for (int64_t i = 0; i < n_score; i++)
		{
			t0 = cpu_now();
			svc_model_scale_row(&m, x + i * d, xs);
			{
				double		f = svc_scorer_decision(&s, xs);
				uint64_t	bits;

				memcpy(&bits, &f, sizeof(bits));
				fh = (fh ^ bits) * 1099511628211ULL;
				fsum += f;
			}
			t_dec += cpu_now() - t0;
		}
		for (int64_t i = 0; i < n_score; i++)
		{
			t0 = cpu_now();
			svc_model_scale_row(&m, x + i * d, xs);
			{
				int32_t		c = svc_scorer_predict(&s, xs, NULL);

				fh = (fh ^ (uint64_t) c) * 1099511628211ULL;
				csum += c;
			}
			t_pred += cpu_now() - t0;
		}
	}
	printf("%lld rows x %d, fit on %lld: %.3f s; %d support vectors, %d equilibria, %d clusters, "
		   "gamma %.4g; decision %.2f us a row, predict %.2f us a row (%.1f%% at the first point, "
		   "%.1f%% full trajectories); sums %.6g %lld, hash of every f and cluster %016llx\n",
		   (long long) n, d, (long long) (n < opt.sample ? n : opt.sample), t_fit, m.n_sv, m.n_eq,
		   m.n_clusters, m.gamma, 1e6 * t_dec / (n_score * repeat), 1e6 * t_pred / (n_score * repeat),
		   100.0 * s.n_first / (double) (s.n_rows ? s.n_rows : 1),
		   100.0 * s.n_fallback / (double) (s.n_rows ? s.n_rows : 1), fsum, (long long) csum,
		   (unsigned long long) fh);
	svc_scorer_free(&svc_env_malloc, &s);
	svc_model_free(&svc_env_malloc, &m);
	free(x);
	free(xs);
	free(cls);
	return 0;
}
