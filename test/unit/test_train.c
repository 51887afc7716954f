/*
 * test_train.c - BSGD training and the model bytes
 */
#include "fit.h"
#include "kernel.h"
#include "model.h"
#include "train.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* n rows of three Gaussian blobs in 2-D, reproducible from seed. */
static double *
blobs(int64_t n, uint64_t seed)
{
	SvcRng		rng;
	double	   *x = malloc(sizeof(double) * 2 * (size_t) n);
	static const double centre[3][2] = {{0, 0}, {6, 0}, {3, 5}};

	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < n; i++)
	{
		int			c = (int) (i % 3);
		double		u1 = svc_rng_unit(&rng) + 1e-12,
					u2 = svc_rng_unit(&rng);
		double		r = sqrt(-2 * log(u1)) * 0.5;

		x[2 * i] = centre[c][0] + r * cos(2 * M_PI * u2);
		x[2 * i + 1] = centre[c][1] + r * sin(2 * M_PI * u2);
	}
	return x;
}

static uint8_t *
encode(const SvcModel *m, size_t *len)
{
	uint8_t    *buf;

	*len = svc_model_encoded_size(m);
	buf = malloc(*len);
	svc_model_encode(m, buf);
	return buf;
}

static void
test_strategies_keep_budget(void)
{
	static const SvcStrategy all[] = {SVC_STRATEGY_REMOVAL, SVC_STRATEGY_PROJECT_KNN,
	SVC_STRATEGY_PROJECT_RANDOM, SVC_STRATEGY_UNBUDGETED};
	int64_t		n = 900;
	double	   *x = blobs(n, 1);

	for (size_t s = 0; s < 4; s++)
	{
		SvcOptions	opt;
		SvcModel	m;
		SvcError	err;
		int64_t		inside = 0;
		double		far[2] = {100, 100};
		double		xs[2];

		svc_options_default(&opt);
		opt.budget = 30;
		opt.strategy = all[s];
		CHECK(svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &m, &err) == SVC_OK,
			  "%s trains: %s", svc_strategy_name(all[s]), err.message);
		if (all[s] != SVC_STRATEGY_UNBUDGETED)
			CHECK(m.n_sv <= 30, "%s keeps #SV %d <= budget 30", svc_strategy_name(all[s]), m.n_sv);
		else
			CHECK(m.n_sv > 30, "unbudgeted keeps more (%d)", m.n_sv);
		CHECK(m.n_sv >= 1 && m.iterations >= 1, "a model has support vectors and steps");
		for (int64_t i = 0; i < n; i++)
		{
			svc_model_scale_row(&m, x + 2 * i, xs);
			inside += svc_model_decision_scaled(&m, xs) >= 0;
		}
		CHECK(inside >= n * 8 / 10, "%s: f >= 0 on most training rows (%lld of %lld)",
			  svc_strategy_name(all[s]), (long long) inside, (long long) n);
		svc_model_scale_row(&m, far, xs);
		CHECK(svc_model_decision_scaled(&m, xs) < 0, "%s: f < 0 far from the data",
			  svc_strategy_name(all[s]));
		for (int32_t i = 0; i < m.n_sv; i++)
			CHECK(isfinite(m.alpha[i]), "alpha finite");
		svc_model_free(&svc_env_malloc, &m);
	}
	free(x);
}

static void
test_paper_threshold(void)
{
	/* nu = 0 keeps the paper's f = w'phi - 1 */
	double	   *x = blobs(300, 2);
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;

	svc_options_default(&opt);
	opt.nu = 0;
	CHECK(svc_fit_rows(&svc_env_malloc, x, 300, 2, &opt, &m, &err) == SVC_OK, "nu 0 trains");
	CHECK(m.offset == 1.0, "nu 0 keeps offset 1");
	svc_model_free(&svc_env_malloc, &m);
	free(x);
}

static void
test_seed_reproduces_bytes(void)
{
	double	   *x = blobs(600, 3);
	SvcOptions	opt;
	SvcModel	a,
				b,
				c;
	SvcError	err;
	size_t		la,
				lb,
				lc;
	uint8_t    *ba,
			   *bb,
			   *bc;

	svc_options_default(&opt);
	svc_fit_rows(&svc_env_malloc, x, 600, 2, &opt, &a, &err);
	svc_fit_rows(&svc_env_malloc, x, 600, 2, &opt, &b, &err);
	opt.seed = 43;
	svc_fit_rows(&svc_env_malloc, x, 600, 2, &opt, &c, &err);
	ba = encode(&a, &la);
	bb = encode(&b, &lb);
	bc = encode(&c, &lc);
	CHECK(la == lb && memcmp(ba, bb, la) == 0, "same seed, same bytes");
	CHECK(la != lc || memcmp(ba, bc, la) != 0, "another seed, other bytes");
	free(ba);
	free(bb);
	free(bc);
	svc_model_free(&svc_env_malloc, &a);
	svc_model_free(&svc_env_malloc, &b);
	svc_model_free(&svc_env_malloc, &c);
	free(x);
}

static void
test_model_round_trip_and_damage(void)
{
	double	   *x = blobs(300, 4);
	SvcOptions	opt;
	SvcModel	m,
				d;
	SvcError	err;
	size_t		len,
				len2;
	uint8_t    *buf,
			   *buf2,
			   *copy;
	int			accepted = 0;

	svc_options_default(&opt);
	opt.budget = 20;
	svc_fit_rows(&svc_env_malloc, x, 300, 2, &opt, &m, &err);
	buf = encode(&m, &len);
	CHECK(svc_model_decode(&svc_env_malloc, buf, len, &d, &err) == SVC_OK,
		  "decode of an encoding: %s %s", err.message, err.detail);
	buf2 = encode(&d, &len2);
	CHECK(len == len2 && memcmp(buf, buf2, len) == 0, "encode(decode(model)) == model");
	svc_model_free(&svc_env_malloc, &d);
	free(buf2);

	copy = malloc(len);
	for (size_t i = 0; i < len; i++)
	{
		memcpy(copy, buf, len);
		copy[i] ^= (uint8_t) (1u << (i % 8));
		if (svc_model_decode(&svc_env_malloc, copy, len, &d, &err) == SVC_OK)
			accepted++;
		svc_model_free(&svc_env_malloc, &d);
	}
	CHECK(accepted == 0, "every single-bit flip is rejected (%d accepted)", accepted);
	for (size_t cut = 0; cut < len; cut += (cut < 64 ? 1 : 37))
	{
		CHECK(svc_model_decode(&svc_env_malloc, buf, cut, &d, &err) == SVC_ERR_CORRUPT,
			  "truncation to %zu bytes is rejected", cut);
		svc_model_free(&svc_env_malloc, &d);
	}
	memcpy(copy, buf, len);
	copy[4] = 99;
	CHECK(svc_model_decode(&svc_env_malloc, copy, len, &d, &err) == SVC_ERR_CORRUPT &&
		  strstr(err.message, "version") != NULL, "a future version is named as such");
	svc_model_free(&svc_env_malloc, &d);
	free(copy);
	free(buf);
	svc_model_free(&svc_env_malloc, &m);
	free(x);
}

static void
test_degenerate_inputs(void)
{
	double		one[3] = {1, 2, 3};
	double		same[30];
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;

	svc_options_default(&opt);
	CHECK(svc_fit_rows(&svc_env_malloc, one, 1, 3, &opt, &m, &err) == SVC_OK,
		  "one row trains: %s", err.message);
	CHECK(m.n_sv == 1 && m.n_clusters == 1, "one row: one SV, one cluster");
	svc_model_free(&svc_env_malloc, &m);
	for (int i = 0; i < 30; i++)
		same[i] = 5.0;
	CHECK(svc_fit_rows(&svc_env_malloc, same, 10, 3, &opt, &m, &err) == SVC_OK,
		  "identical rows train: %s", err.message);
	CHECK(m.n_clusters == 1 && isfinite(m.gamma), "identical rows: one cluster");
	svc_model_free(&svc_env_malloc, &m);
}

static bool
always_interrupt(void *ctx)
{
	(void) ctx;
	return true;
}

static void
test_interrupt(void)
{
	double	   *x = blobs(3000, 5);
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	SvcEnv		env = svc_env_malloc;

	env.interrupt = always_interrupt;
	svc_options_default(&opt);
	opt.tol = 1e-9;
	memset(&m, 0, sizeof(m));
	CHECK(svc_train_bsgd(&env, x, 3000, 2, &opt, 1.0, &m, &err) == SVC_ERR_INTERRUPTED,
		  "training stops when interrupted");
	svc_model_free(&svc_env_malloc, &m);
	free(x);
}

/* An allocator that fails after `left` allocations, counting live blocks. */
typedef struct AllocBudget
{
	long		left;
	long		live;
} AllocBudget;

static void *
budget_alloc(void *ctx, size_t size)
{
	AllocBudget *b = ctx;

	if (b->left-- <= 0)
		return NULL;
	b->live++;
	return malloc(size);
}

static void
budget_free(void *ctx, void *p)
{
	((AllocBudget *) ctx)->live--;
	free(p);
}

/*
 * The whole fit (scaling, gamma, training, the labelling subset of more
 * than 3,000 rows, labelling) with its k-th allocation failing, for every
 * k until it succeeds: each failure reports SVC_ERR_NOMEM and, once the
 * caller frees the model, leaves no block behind.
 */
static void
test_fit_fails_cleanly_at_every_allocation(void)
{
	int64_t		n = 3100;
	double	   *x = blobs(n, 8);
	long		k;
	int			bad = 0;

	for (k = 0;; k++)
	{
		AllocBudget b = {k, 0};
		SvcEnv		env = {budget_alloc, budget_free, NULL, &b};
		SvcOptions	opt;
		SvcModel	m;
		SvcError	err;
		SvcStatus	st;

		svc_options_default(&opt);
		opt.budget = 20;
		opt.max_iter = 4000;
		st = svc_fit_rows(&env, x, n, 2, &opt, &m, &err);
		svc_model_free(&env, &m);
		if (b.live != 0 || (st != SVC_OK && st != SVC_ERR_NOMEM))
			bad++;
		if (st == SVC_OK)
			break;
	}
	CHECK(bad == 0, "fit: %d of %ld failing allocations leaked or misreported", bad, k);
	printf("  fit: fails cleanly at each of %ld allocations\n", k);
	free(x);
}

/*
 * Rows are drawn in passes: with C < 1 every draw violates the margin
 * (w'phi(x) <= ||w|| <= C), so after k full passes every row must be a
 * support vector with alpha = C k / (k n) = C / n exactly.  Independent
 * draws would leave some rows out and count others twice.
 */
static void
test_passes_draw_each_row_once(void)
{
	int64_t		n = 97;
	double	   *x = blobs(n, 4);

	for (int64_t passes = 1; passes <= 3; passes += 2)
	{
		SvcOptions	opt;
		SvcModel	m;
		SvcError	err;
		bool		equal = true;

		svc_options_default(&opt);
		opt.strategy = SVC_STRATEGY_UNBUDGETED;
		opt.c = 0.5;
		opt.max_iter = passes * n;
		memset(&m, 0, sizeof(m));
		CHECK(svc_train_bsgd(&svc_env_malloc, x, n, 2, &opt, 1.0, &m, &err) == SVC_OK,
			  "%lld passes train: %s", (long long) passes, err.message);
		CHECK(m.n_sv == n, "%lld passes: every row drawn (%d of %lld support vectors)",
			  (long long) passes, m.n_sv, (long long) n);
		for (int32_t i = 0; i < m.n_sv; i++)
			equal &= fabs(m.alpha[i] - opt.c / (double) n) <= 1e-12 * opt.c;
		CHECK(equal, "%lld passes: every row drawn equally often (alpha = C/n)",
			  (long long) passes);
		svc_model_free(&svc_env_malloc, &m);
	}
	free(x);
}

/*
 * gamma auto = 256 / median d^2, times 2/d above two dimensions: padding
 * the same rows with zero columns keeps every distance, so only the
 * dimension factor changes gamma.
 */
static void
test_gamma_auto_dimension(void)
{
	int64_t		n = 60;			/* n(n-1)/2 <= 4096: every pair, no sampling */
	double	   *x2 = blobs(n, 5);
	double		g2;

	{
		SvcRng		rng;

		svc_rng_seed(&rng, 1);
		g2 = svc_gamma_auto(x2, n, 2, &rng);
	}
	{
		/* in 2-D: 256 / the median of every pair's squared distance */
		int64_t		np = n * (n - 1) / 2,
					c = 0;
		double	   *dist = malloc(sizeof(double) * (size_t) np);
		double		median;

		for (int64_t i = 0; i < n; i++)
			for (int64_t j = i + 1; j < n; j++)
				dist[c++] = svc_sqdist(x2 + 2 * i, x2 + 2 * j, 2);
		qsort(dist, (size_t) np, sizeof(double), svc_cmp_double);
		median = np % 2 ? dist[np / 2] : 0.5 * (dist[np / 2 - 1] + dist[np / 2]);
		CHECK(fabs(g2 - SVC_GAMMA_AUTO_FACTOR / median) <= 1e-12 * g2,
			  "gamma auto in 2-D = %g (want 256 / median = %g)", g2,
			  SVC_GAMMA_AUTO_FACTOR / median);
		free(dist);
	}
	for (int32_t d = 3; d <= 8; d++)
	{
		double	   *xd = calloc((size_t) n * d, sizeof(double));
		SvcRng		rng;
		double		gd,
					want;

		for (int64_t i = 0; i < n; i++)
			memcpy(xd + i * d, x2 + 2 * i, 2 * sizeof(double));
		svc_rng_seed(&rng, 1);
		gd = svc_gamma_auto(xd, n, d, &rng);
		want = g2 * 2.0 / d;
		CHECK(fabs(gd - want) <= 1e-12 * want, "gamma auto in %d-D = %g (want %g)", d, gd, want);
		free(xd);
	}
	free(x2);
}

int
main(void)
{
	test_strategies_keep_budget();
	test_paper_threshold();
	test_seed_reproduces_bytes();
	test_model_round_trip_and_damage();
	test_degenerate_inputs();
	test_interrupt();
	test_passes_draw_each_row_once();
	test_gamma_auto_dimension();
	test_fit_fails_cleanly_at_every_allocation();
	return unit_summary("test_train");
}
