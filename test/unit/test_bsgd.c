/*
 * test_bsgd.c - the budgeted SGD's keep_isolated bookkeeping
 *
 * keep_isolated weighs a support vector by its distance to the nearest
 * other one.  Those distances are kept up to date step by step (a sorted
 * copy for their median, an undo of the newest vector's changes when the
 * budget drops it at once, and no distances at all for a new vector that
 * no distance could save).  Each shortcut must give the support vectors
 * and alphas of a plain recomputation at every step: the hashes below were
 * taken from that recomputation (svclust before 0.5.0's faster
 * bookkeeping), over the paths the shortcuts touch: every strategy,
 * labelled rows and anomalies, a warm start, small budgets, d from 2 to 40.
 * From 64 columns the kernel sums are in float and the nearest searches
 * start from bounds of the distances: the 96-D hashes are the double sums'
 * (svclust before the float sums), the same support vectors and alphas.
 */
#include "bsgd.h"
#include "model.h"
#include "options.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const SvcEnv *env = &svc_env_malloc;

/* splitmix64, for rows that do not depend on libc */
static uint64_t
next_u64(uint64_t *s)
{
	uint64_t	z = (*s += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static double
uniform(uint64_t *s)
{
	return (double) (next_u64(s) >> 11) * 0x1.0p-53;
}

/*
 * n rows of d: 5 blobs of spread 0.3 around centres in [-3, 3]^d, and one
 * row in 20 far out on its own (the rows keep_isolated is about).
 */
static double *
make_rows(int64_t n, int32_t d, uint64_t seed)
{
	double	   *x = malloc(sizeof(double) * (size_t) n * (size_t) d);
	double		centre[5][96];
	uint64_t	s = seed;

	for (int c = 0; c < 5; c++)
		for (int32_t j = 0; j < d; j++)
			centre[c][j] = 6.0 * uniform(&s) - 3.0;
	for (int64_t i = 0; i < n; i++)
	{
		int			c = (int) (next_u64(&s) % 5);
		bool		far = i % 20 == 7;

		for (int32_t j = 0; j < d; j++)
			x[i * d + j] = far ? 16.0 * uniform(&s) - 8.0
				: centre[c][j] + 0.3 * (uniform(&s) + uniform(&s) + uniform(&s) - 1.5);
	}
	return x;
}

static uint64_t
fnv(const void *p, size_t n, uint64_t h)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * UINT64_C(0x100000001B3);
	return h;
}

typedef struct Case
{
	const char *name;
	int64_t		n;
	int32_t		d;
	double		gamma;
	int32_t		budget;
	SvcStrategy strategy;
	int			labelled;		/* weights: 0 none, 1 positive, 2 with anomalies */
	bool		warm;			/* the second half from the first half's model */
} Case;

static const Case cases[] = {
	{"2-D project-knn", 600, 2, 1.0, 40, SVC_STRATEGY_PROJECT_KNN, 0, false},
	{"2-D removal budget 2", 300, 2, 2.0, 2, SVC_STRATEGY_REMOVAL, 0, false},
	{"8-D removal", 800, 8, 0.5, 60, SVC_STRATEGY_REMOVAL, 0, false},
	{"8-D project-random", 800, 8, 0.5, 60, SVC_STRATEGY_PROJECT_RANDOM, 0, false},
	{"8-D project-knn", 800, 8, 0.5, 60, SVC_STRATEGY_PROJECT_KNN, 0, false},
	{"40-D project-knn", 500, 40, 0.05, 50, SVC_STRATEGY_PROJECT_KNN, 0, false},
	{"8-D labelled", 800, 8, 0.5, 40, SVC_STRATEGY_PROJECT_KNN, 1, false},
	{"8-D anomalies", 800, 8, 0.5, 40, SVC_STRATEGY_PROJECT_KNN, 2, false},
	{"8-D warm start", 800, 8, 0.5, 60, SVC_STRATEGY_PROJECT_KNN, 0, true},
	{"8-D warm start, budget below init", 800, 8, 0.5, 60, SVC_STRATEGY_REMOVAL, 0, true},
	/* float kernel sums and distance bounds from 64 columns on (bsgd.c) */
	{"96-D project-knn", 500, 96, 0.05, 40, SVC_STRATEGY_PROJECT_KNN, 0, false},
	{"96-D removal", 500, 96, 0.05, 40, SVC_STRATEGY_REMOVAL, 0, false},
	{"96-D anomalies", 500, 96, 0.05, 30, SVC_STRATEGY_PROJECT_KNN, 2, false},
	{"96-D warm start", 500, 96, 0.05, 40, SVC_STRATEGY_PROJECT_KNN, 0, true},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* Hashes of sv and alpha from the recomputing bookkeeping (see the top). */
static const uint64_t expected[N_CASES] = {
#include "bsgd_hashes.inc"
};

/* The hash of the model's support vectors and alphas; 0 on failure. */
static uint64_t
run_case(const Case *k, bool keep_isolated, int32_t *n_sv)
{
	double	   *x = make_rows(k->n, k->d, UINT64_C(0x1234) + (uint64_t) k->d);
	double	   *w = NULL;
	SvcOptions	opt;
	SvcModel	m,
				init;
	SvcError	err;
	uint64_t	h = UINT64_C(0xCBF29CE484222325);
	int64_t		from = 0;
	bool		ok = true;

	svc_options_default(&opt);
	opt.budget = k->budget;
	opt.strategy = k->strategy;
	opt.keep_isolated = keep_isolated;
	opt.seed = 11;
	opt.max_iter = 3 * k->n;
	if (k->labelled)
	{
		w = malloc(sizeof(double) * (size_t) k->n);
		for (int64_t i = 0; i < k->n; i++)
			w[i] = k->labelled == 2 && i % 20 == 7 ? -1.0 : (i % 9 == 0 ? 3.0 : 1.0);
	}
	memset(&m, 0, sizeof(m));
	memset(&init, 0, sizeof(init));
	if (k->warm)
	{
		/* the init model holds more vectors than the second run's budget */
		SvcOptions	first = opt;

		first.budget = k->strategy == SVC_STRATEGY_REMOVAL ? 2 * k->budget : k->budget;
		from = k->n / 2;
		ok = svc_bsgd_run(env, x, from, k->d, &first, k->gamma, NULL, NULL, &init,
						  &err) == SVC_OK;
	}
	if (ok)
		ok = svc_bsgd_run(env, x + from * k->d, k->n - from, k->d, &opt, k->gamma,
						  w ? w + from : NULL, k->warm ? &init : NULL, &m, &err) == SVC_OK;
	if (ok)
	{
		h = fnv(m.sv, sizeof(double) * (size_t) m.n_sv * (size_t) k->d, h);
		h = fnv(m.alpha, sizeof(double) * (size_t) m.n_sv, h);
		h = fnv(&m.iterations, sizeof(m.iterations), h);
		*n_sv = m.n_sv;
	}
	else
		printf("%s: %s\n", k->name, err.message);
	free(m.sv);
	free(m.alpha);
	free(init.sv);
	free(init.alpha);
	free(w);
	free(x);
	return ok ? h : 0;
}

int
main(void)
{
	bool		print = getenv("SVC_PRINT_HASHES") != NULL;
	int			differ = 0;

	for (size_t c = 0; c < N_CASES; c++)
	{
		int32_t		n_sv = 0,
					n_off = 0;
		uint64_t	h = run_case(&cases[c], true, &n_sv),
					off = run_case(&cases[c], false, &n_off);

		if (print)
			printf("\tUINT64_C(0x%016llx),\t/* %s */\n", (unsigned long long) h, cases[c].name);
		CHECK(h != 0 && h == expected[c], "%s: keep_isolated's support vectors as recomputed (hash %016llx)",
			  cases[c].name, (unsigned long long) h);
		CHECK(n_sv <= cases[c].budget, "%s: %d support vectors within the budget", cases[c].name, n_sv);
		differ += h != off;
	}
	/* the option is in play: it changes the model in most cases */
	CHECK(differ >= (int) N_CASES / 2, "keep_isolated changes %d of %d models", differ, (int) N_CASES);
	return unit_summary("test_bsgd");
}
