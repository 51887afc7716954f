/*
 * quality_cli.c - fit a table of rows as svc_train would, without a server
 *
 *   quality_cli [--opts JSON] [--cut JSON]... [--out FILE] ROWS.f64 DIMS
 *
 * ROWS.f64 holds n x DIMS doubles (native byte order, row-major).  The rows
 * pass through a training state as the aggregate's scan would pass them
 * (the reservoir of "sample" rows, the running statistics), the model is
 * fitted from that state (svc_fit_state, as svc_train's final function),
 * and every row is then scored with the scorer (svc_assign's cluster and
 * outlier flag).  Prints one JSON line: the width and what the fit found,
 * the milliseconds of the scan, of the fit and of scoring; with --out,
 * writes each row's cluster (int32) and outlier flag (int8), n of each,
 * clusters first.  Each --cut (cut options, as svc_recut takes them) cuts
 * the model again and scores every row again: one more JSON line, and one
 * more n clusters in the file.
 *
 * For test/bench/quality.py (--engine cli): the quality benchmark's loop
 * without loading every set into PostgreSQL.  Built from the core's
 * objects with the extension's flags (`make test/tools/quality_cli`).
 */
#include "label_cut.h"
#include "fit.h"
#include "model.h"
#include "options.h"
#include "options_text.h"
#include "score.h"
#include "state.h"
#include "../unit/unit_state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static double *
read_rows(const char *path, int32_t d, int64_t *n)
{
	FILE	   *f = fopen(path, "rb");
	long		len;
	double	   *x;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
	{
		if (f)
			fclose(f);
		return NULL;
	}
	*n = (int64_t) ((size_t) len / (sizeof(double) * (size_t) d));
	x = malloc((size_t) len > 0 ? (size_t) len : 1);
	if (!x || fread(x, sizeof(double), (size_t) (*n * d), f) != (size_t) (*n * d))
	{
		free(x);
		fclose(f);
		return NULL;
	}
	fclose(f);
	return x;
}

int
main(int argc, char **argv)
{
	const char *opts = "{}";
	const char *out = NULL;
	const char *cuts[64];
	int			n_cuts = 0;
	FILE	   *fo = NULL;
	const char *path = NULL;
	int32_t		d = 0;
	int64_t		n,
				cap,
				outliers = 0;
	double	   *x,
				t0,
				t_scan,
				t_fit,
				t_score;
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	SvcScorer	s;
	uint8_t    *state;
	int32_t    *cluster;
	int8_t	   *outlier;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--opts") == 0 && i + 1 < argc)
			opts = argv[++i];
		else if (strcmp(argv[i], "--cut") == 0 && i + 1 < argc && n_cuts < 64)
			cuts[n_cuts++] = argv[++i];
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (!path)
			path = argv[i];
		else
			d = atoi(argv[i]);
	}
	if (!path || d < 1)
	{
		fprintf(stderr, "usage: quality_cli [--opts JSON] [--out FILE] ROWS.f64 DIMS\n");
		return 2;
	}
	x = read_rows(path, d, &n);
	if (!x || n < 1)
	{
		fprintf(stderr, "quality_cli: cannot read %s\n", path);
		return 1;
	}
	svc_options_default(&opt);
	if (svc_options_parse(opts, strlen(opts), &opt, &err) != SVC_OK)
	{
		fprintf(stderr, "quality_cli: %s\n", err.message);
		return 1;
	}

	/* the scan: a state grown as the aggregate grows it */
	t0 = now_ms();
	cap = n < 1024 ? n : 1024;
	if (cap > opt.sample)
		cap = opt.sample;
	state = unit_state_new(d, cap, &opt, NULL, 0);
	if (!state || !unit_state_add_rows(&state, x, n, NULL))
	{
		fprintf(stderr, "quality_cli: the training state did not grow\n");
		return 1;
	}
	t_scan = now_ms() - t0;

	t0 = now_ms();
	memset(&m, 0, sizeof(m));
	if (svc_fit_state(&svc_env_malloc, state, &m, &err) != SVC_OK)
	{
		fprintf(stderr, "quality_cli: %s\n", err.message);
		return 1;
	}
	t_fit = now_ms() - t0;
	free(state);

	cluster = malloc(sizeof(int32_t) * (size_t) n);
	outlier = malloc((size_t) n);
	if (out && !(fo = fopen(out, "wb")))
	{
		fprintf(stderr, "quality_cli: cannot write %s\n", out);
		return 1;
	}
	for (int c = -1; c < n_cuts; c++)
	{
		double	   *xs = malloc(sizeof(double) * (size_t) d);

		if (c >= 0)
		{
			SvcOptions	wanted = m.opt;

			if (svc_options_parse_cut(cuts[c], strlen(cuts[c]), &wanted, &err) != SVC_OK ||
				svc_model_recut(&svc_env_malloc, &m, &wanted, &err) != SVC_OK)
			{
				fprintf(stderr, "quality_cli: %s\n", err.message);
				return 1;
			}
			svc_scorer_free(&svc_env_malloc, &s);
		}
		t0 = now_ms();
		if (svc_scorer_init(&svc_env_malloc, &m, &s, &err) != SVC_OK)
		{
			fprintf(stderr, "quality_cli: %s\n", err.message);
			return 1;
		}
		outliers = 0;
		for (int64_t i = 0; i < n; i++)
		{
			double		f;

			svc_model_scale_row(&m, x + (size_t) i * d, xs);
			cluster[i] = svc_scorer_predict(&s, xs, &f);
			outlier[i] = f < 0;
			outliers += f < 0;
		}
		free(xs);
		t_score = now_ms() - t0;
		printf("{\"rows\": %lld, \"dims\": %d, \"gamma\": %.6g, \"n_sv\": %d, \"n_eq\": %d, "
			   "\"n_clusters\": %d, \"rows_used\": %lld, \"outlier_share\": %.4f, "
			   "\"scan_ms\": %.1f, \"fit_ms\": %.1f, \"score_ms\": %.1f}\n",
			   (long long) n, d, m.gamma, m.n_sv, m.n_eq, m.n_clusters, (long long) m.rows_used,
			   (double) outliers / (double) n, t_scan, t_fit, t_score);
		if (fo && (fwrite(cluster, sizeof(int32_t), (size_t) n, fo) != (size_t) n ||
				   (c < 0 && fwrite(outlier, 1, (size_t) n, fo) != (size_t) n)))
		{
			fprintf(stderr, "quality_cli: cannot write %s\n", out);
			return 1;
		}
	}
	if (fo && fclose(fo) != 0)
	{
		fprintf(stderr, "quality_cli: cannot write %s\n", out);
		return 1;
	}
	svc_scorer_free(&svc_env_malloc, &s);
	svc_model_free(&svc_env_malloc, &m);
	free(cluster);
	free(outlier);
	free(x);
	return 0;
}
