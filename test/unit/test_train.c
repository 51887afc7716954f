/*
 * test_train.c - BSGD training and the model bytes
 */
#include "fit.h"
#include "kernel.h"
#include "model.h"
#include "solver.h"
#include "bsgd_select.h"
#include "solver_bsgd.h"
#include "model_codec.h"
#include "model_report.h"
#include "score.h"
#include "unit.h"
#include "unit_data.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * Rows of any finite magnitude train: times 2^600 (whose squares overflow)
 * or 2^-600 (whose squares underflow), the rows scale to the same values,
 * so the model has the same support vectors and clusters.
 */
static void
test_fit_rows_extreme_magnitudes(void)
{
	double	   *x = blobs(300, 2);
	double	   *big = malloc(sizeof(double) * 600);
	double	   *tiny = malloc(sizeof(double) * 600);
	SvcOptions	opt;
	SvcModel	m0,
				mb,
				mt;
	SvcError	err;

	for (int i = 0; i < 600; i++)
	{
		big[i] = ldexp(x[i], 600);
		tiny[i] = ldexp(x[i], -600);
	}
	svc_options_default(&opt);
	CHECK(svc_fit_rows(&svc_env_malloc, x, 300, 2, &opt, &m0, &err) == SVC_OK, "plain rows train");
	CHECK(svc_fit_rows(&svc_env_malloc, big, 300, 2, &opt, &mb, &err) == SVC_OK,
		  "rows times 2^600 train: %s", err.message);
	CHECK(svc_fit_rows(&svc_env_malloc, tiny, 300, 2, &opt, &mt, &err) == SVC_OK,
		  "rows times 2^-600 train: %s", err.message);
	CHECK(mb.n_sv == m0.n_sv && mt.n_sv == m0.n_sv &&
		  memcmp(mb.sv, m0.sv, sizeof(double) * 2 * (size_t) m0.n_sv) == 0 &&
		  memcmp(mt.sv, m0.sv, sizeof(double) * 2 * (size_t) m0.n_sv) == 0,
		  "the same scaled support vectors");
	CHECK(mb.n_clusters == m0.n_clusters && mt.n_clusters == m0.n_clusters,
		  "the same clusters: %d, %d, %d", m0.n_clusters, mb.n_clusters, mt.n_clusters);
	CHECK(mb.shift[0] == ldexp(m0.shift[0], 600) && mt.mul[1] == ldexp(m0.mul[1], 600),
		  "the scaling follows the rows");
	svc_model_free(&svc_env_malloc, &m0);
	svc_model_free(&svc_env_malloc, &mb);
	svc_model_free(&svc_env_malloc, &mt);
	free(x);
	free(big);
	free(tiny);
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
	CHECK(svc_train_bsgd(&env, x, 3000, 2, &opt, 1.0, NULL, &m, &err) == SVC_ERR_INTERRUPTED,
		  "training stops when interrupted");
	svc_model_free(&svc_env_malloc, &m);
	free(x);
}

/*
 * n rows of k Gaussian blobs (sd 1) in d columns, blob c at 10 / sqrt(2)
 * along column c (centres 10 apart), every other column noise of the same
 * scale; row i in blob i mod k.
 */
static void
blobs_in_columns(double *x, int32_t *truth, int64_t n, int32_t d, int32_t k, uint64_t seed)
{
	SvcRng		rng;

	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < n; i++)
	{
		truth[i] = (int32_t) (i % k);
		for (int32_t j = 0; j < d; j++)
			x[i * d + j] = unit_normal(&rng) + (j == truth[i] ? 10.0 / sqrt(2.0) : 0.0);
	}
}

/*
 * svc_fit_rows of n rows (d columns) at this budget and bandwidth_k, made to
 * fail at each of its allocations and to cancel at each of its interrupt
 * checks in turn (unit_fit_fails_cleanly): each failure reports NOMEM
 * (INTERRUPTED) and, once the caller frees the model, leaves no block.
 */
static void
sweep_fit(const double *x, int64_t n, int32_t d, int32_t bandwidth_k, int32_t budget,
		  const char *what)
{
	SvcOptions	opt;
	int			kinds[2];

	svc_options_default(&opt);
	opt.budget = budget;
	opt.max_iter = 4000;
	opt.bandwidth_k = bandwidth_k;
	unit_fit_fails_cleanly(x, n, d, &opt, kinds);
	CHECK(kinds[0] > 0 && kinds[1] > 0, "%s: the fit allocates (%d) and checks for a cancel (%d)",
		  what, kinds[0], kinds[1]);
	printf("  %s: fails cleanly at each of %d allocations and stops cleanly at each of %d interrupt checks\n",
		   what, kinds[0], kinds[1]);
}

/*
 * The whole fit: scaling, gamma, training, widths, and (3,100 rows, more
 * than the labelling's 3,000) the labelling subset and the labelling.
 */
static void
fit_fails_cleanly(int32_t bandwidth_k)
{
	int64_t		n = 3100;
	double	   *x = blobs(n, 8);
	char		what[64];

	snprintf(what, sizeof(what), "fit, bandwidth_k %d", bandwidth_k);
	sweep_fit(x, n, 2, bandwidth_k, 20, what);
	free(x);
}

/*
 * The same on rows of 96 columns, where bsgd sums its kernels from a float
 * copy of the support vectors (its column copy, the row as floats, the
 * norms and the bounds' scratch are allocated and grown on that path only).
 */
static void
fit_fails_cleanly_wide(void)
{
	int64_t		n = 600;
	int32_t		d = 96;
	double	   *x = malloc(sizeof(double) * (size_t) (n * d));
	SvcRng		rng;

	svc_rng_seed(&rng, 11);
	/* three clusters, each its own mean in every column */
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
			x[i * d + j] = (double) ((i % 3) * ((j % 3) == (i % 3) ? 4 : 0)) +
				svc_rng_unit(&rng) - 0.5;
	sweep_fit(x, n, d, 0, 20, "fit, 96 columns");
	free(x);
}

/*
 * The fit again at a wider gamma (fit.c's widen_if_uncovered): the cover's
 * pass and the second fit fail and stop cleanly too.  Three blobs among
 * noise columns at the default budget, which the fit widens.
 */
static void
fit_fails_cleanly_widened(void)
{
	enum
	{
		N = 700, D = 8, K = 3
	};
	double	   *x = malloc(sizeof(double) * N * D);
	int32_t    *truth = malloc(sizeof(int32_t) * N);
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;

	blobs_in_columns(x, truth, N, D, K, 3);
	svc_options_default(&opt);
	opt.max_iter = 4000;
	CHECK(svc_fit_rows(&svc_env_malloc, x, N, D, &opt, &m, &err) == SVC_OK && m.gamma_widen > 0,
		  "the rows widen the fit (factor %g): %s", m.gamma_widen, err.message);
	svc_model_free(&svc_env_malloc, &m);
	/* every allocation of a fit of 300 support vectors: too slow for valgrind */
	if (!under_valgrind())
		sweep_fit(x, N, D, 0, SVC_DEFAULT_BUDGET, "widened fit");
	free(x);
	free(truth);
}

static void
test_fit_fails_and_stops_cleanly(void)
{
	fit_fails_cleanly(0);
	fit_fails_cleanly(5);
	fit_fails_cleanly_wide();
	fit_fails_cleanly_widened();
}

/* n_blob rows of a dense blob at the origin, n_ring of a sparse ring around it. */
static double *
blob_in_ring(int64_t n_blob, int64_t n_ring, uint64_t seed)
{
	SvcRng		rng;
	double	   *x = malloc(sizeof(double) * 2 * (size_t) (n_blob + n_ring));

	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < n_blob + n_ring; i++)
	{
		double		u1 = svc_rng_unit(&rng) + 1e-12,
					u2 = svc_rng_unit(&rng);
		double		g = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);

		if (i < n_blob)
		{
			x[2 * i] = 0.3 * g;
			x[2 * i + 1] = 0.3 * sqrt(-2 * log(u1)) * sin(2 * M_PI * u2);
		}
		else
		{
			double		r = 4.0 + 0.4 * g;

			x[2 * i] = r * cos(2 * M_PI * u2);
			x[2 * i + 1] = r * sin(2 * M_PI * u2);
		}
	}
	return x;
}

/*
 * bandwidth_k: the ring's support vectors are widened, the blob's keep
 * gamma; f is the sum with each one's width; the equilibria are still its
 * stationary points (the fixed point weighs each term by its width); the
 * threshold is a quantile of the new f; the model is format version 3 and
 * round-trips, and a model with one width stays version 2.
 */
static void
test_bandwidth_k(void)
{
	int64_t		n = 400;
	double	   *x = blob_in_ring(200, 200, 11);
	double	   *xs = malloc(sizeof(double) * 2 * (size_t) n);
	SvcOptions	opt;
	SvcModel	m,
				fixed,
				back;
	SvcError	err;
	size_t		len,
				len2;
	uint8_t    *buf,
			   *buf2;
	int			blob_kept = 0,
				ring_widened = 0,
				bad_width = 0,
				outside = 0;
	double		worst_f = 0,
				worst_grad = 0;

	svc_options_default(&opt);
	opt.budget = 100;
	opt.bandwidth_k = 10;
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &m, &err) == SVC_OK, "fit: %s", err.detail);
	CHECK(m.sv_gamma != NULL && svc_model_format_version(&m) == 3, "widths, version 3");
	for (int32_t i = 0; m.sv_gamma && i < m.n_sv; i++)
	{
		const double *s = m.sv + 2 * (size_t) i;
		/* back to input units: scaled = (x - shift) * mul */
		double		r = hypot(s[0] / m.mul[0] + m.shift[0], s[1] / m.mul[1] + m.shift[1]);

		if (!(m.sv_gamma[i] > 0 && m.sv_gamma[i] <= m.gamma))
			bad_width++;
		if (r < 1.0 && m.sv_gamma[i] == m.gamma)
			blob_kept++;
		if (r > 3.0 && m.sv_gamma[i] < 0.5 * m.gamma)
			ring_widened++;
	}
	CHECK(bad_width == 0, "every width in (0, gamma] (%d not)", bad_width);
	CHECK(blob_kept > 0 && ring_widened > 0,
		  "the blob keeps gamma (%d), the ring is widened (%d)", blob_kept, ring_widened);

	/* f as the sum of each support vector's own kernel */
	for (int64_t i = 0; i < n; i++)
	{
		double		f = -m.offset;

		svc_model_scale_row(&m, x + 2 * i, xs + 2 * i);
		for (int32_t j = 0; j < m.n_sv; j++)
			f += m.alpha[j] * exp(-m.sv_gamma[j] * svc_sqdist(m.sv + 2 * (size_t) j, xs + 2 * i, 2));
		if (fabs(f - svc_model_decision_scaled(&m, xs + 2 * i)) > worst_f)
			worst_f = fabs(f - svc_model_decision_scaled(&m, xs + 2 * i));
		if (svc_model_decision_scaled(&m, xs + 2 * i) < 0)
			outside++;
	}
	CHECK(worst_f < 1e-9, "the decision is the sum with per-vector widths (off by %g)", worst_f);
	{
		/* the fixed point's kernel sum (a trajectory's first f) is that sum too */
		double		next[2],
				   *work = malloc(sizeof(double) * (size_t) m.n_sv);
		double		worst = 0;
		bool		ok;

		for (int64_t i = 0; i < n; i += 7)
		{
			double		a = svc_kernel_fixed_point(m.sv, m.alpha, m.sv_gamma, m.n_sv, 2, m.gamma,
												   xs + 2 * i, next, work, &ok);
			double		b = svc_kernel_sum(m.sv, m.alpha, m.sv_gamma, m.n_sv, 2, m.gamma, xs + 2 * i);

			if (fabs(a - b) > worst * fabs(b))
				worst = fabs(a - b) / fabs(b);
		}
		CHECK(worst < 1e-12, "the fixed point returns the kernel sum with widths (off by %g)", worst);
		free(work);
	}
	CHECK(outside <= (int) (opt.nu * n) + 1 && outside >= (int) (opt.nu * n) - 1,
		  "outlier_fraction %.2f of the rows are outside (%d of %lld)", opt.nu, outside, (long long) n);

	/* each equilibrium is a stationary point of that f */
	for (int32_t e = 0; e < m.n_eq; e++)
	{
		const double *q = m.eq + 2 * (size_t) e;
		double		g[2] = {0, 0},
					scale = 0;

		for (int32_t j = 0; j < m.n_sv; j++)
		{
			const double *s = m.sv + 2 * (size_t) j;
			double		t = m.alpha[j] * exp(-m.sv_gamma[j] * svc_sqdist(s, q, 2)) * 2 * m.sv_gamma[j];

			g[0] += t * (s[0] - q[0]);
			g[1] += t * (s[1] - q[1]);
			scale += fabs(t) * sqrt(svc_sqdist(s, q, 2));
		}
		if (scale > 0 && hypot(g[0], g[1]) / scale > worst_grad)
			worst_grad = hypot(g[0], g[1]) / scale;
	}
	CHECK(m.n_eq > 0 && worst_grad < 1e-2,
		  "the equilibria are stationary points (relative gradient %g)", worst_grad);

	buf = encode(&m, &len);
	CHECK(buf[4] == 3 && buf[5] == 0, "written as format version 3");
	CHECK(svc_model_decode(&svc_env_malloc, buf, len, &back, &err) == SVC_OK &&
		  back.sv_gamma != NULL && memcmp(back.sv_gamma, m.sv_gamma, sizeof(double) * m.n_sv) == 0,
		  "decoded with its widths: %s", err.detail);
	buf2 = encode(&back, &len2);
	CHECK(len == len2 && memcmp(buf, buf2, len) == 0, "encode(decode(model)) == model");
	svc_model_free(&svc_env_malloc, &back);
	free(buf2);
	free(buf);

	/* outlier_fraction 0: the threshold is the lowest training row's f */
	opt.nu = 0;
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &back, &err) == SVC_OK, "fit: %s", err.detail);
	{
		double		lowest = HUGE_VAL;

		for (int64_t i = 0; i < n; i++)
		{
			double		f;

			svc_model_scale_row(&back, x + 2 * i, xs + 2 * i);
			f = svc_model_decision_scaled(&back, xs + 2 * i);
			lowest = f < lowest ? f : lowest;
		}
		CHECK(lowest == 0.0, "outlier_fraction 0: the lowest training row is at 0 (%g)", lowest);
	}
	svc_model_free(&svc_env_malloc, &back);
	opt.nu = 0.05;

	opt.bandwidth_k = 0;
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &fixed, &err) == SVC_OK, "fit: %s", err.detail);
	buf = encode(&fixed, &len);
	CHECK(fixed.sv_gamma == NULL && buf[4] == 2 && buf[5] == 0,
		  "one width: no widths, still format version 2");
	free(buf);
	svc_model_free(&svc_env_malloc, &fixed);
	svc_model_free(&svc_env_malloc, &m);
	free(xs);
	free(x);

	{
		/*
		 * Repeated rows: with every blob row three times, most support
		 * vectors have their k = 2 nearest at distance 0.  The ring must
		 * still be widened from the median of the other distances, not
		 * flattened by a median of 0.
		 */
		int64_t		nd = 800;
		double	   *base = blob_in_ring(200, 200, 11);
		double	   *xd = malloc(sizeof(double) * 2 * (size_t) nd);
		int			flat = 0,
					widened = 0;

		for (int64_t i = 0; i < 200; i++)
			for (int c = 0; c < 3; c++)
				memcpy(xd + 2 * (3 * i + c), base + 2 * i, sizeof(double) * 2);
		memcpy(xd + 2 * 600, base + 2 * 200, sizeof(double) * 2 * 200);
		svc_options_default(&opt);
		opt.strategy = SVC_STRATEGY_UNBUDGETED;
		opt.bandwidth_k = 2;
		CHECK(svc_fit_rows(&svc_env_malloc, xd, nd, 2, &opt, &m, &err) == SVC_OK, "fit: %s", err.detail);
		for (int32_t i = 0; m.sv_gamma && i < m.n_sv; i++)
		{
			flat += m.sv_gamma[i] < 1e-6 * m.gamma;
			widened += m.sv_gamma[i] < m.gamma;
		}
		CHECK(m.sv_gamma && flat == 0 && widened > 0,
			  "repeated rows: %d widths flattened, %d widened of %d", flat, widened, m.n_sv);
		svc_model_free(&svc_env_malloc, &m);
		free(xd);
		free(base);
	}
	{
		/* the smallest gamma: widths would round to 0; what training writes decodes */
		double	   *xb = blob_in_ring(200, 200, 11);

		svc_options_default(&opt);
		opt.gamma = 5e-324;
		opt.bandwidth_k = 1;
		CHECK(svc_fit_rows(&svc_env_malloc, xb, 400, 2, &opt, &m, &err) == SVC_OK, "fit: %s", err.detail);
		buf = encode(&m, &len);
		CHECK(svc_model_decode(&svc_env_malloc, buf, len, &back, &err) == SVC_OK,
			  "gamma 5e-324 with widths decodes: %s", err.detail);
		svc_model_free(&svc_env_malloc, &back);
		svc_model_free(&svc_env_malloc, &m);
		free(buf);
		free(xb);
	}
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
		CHECK(svc_train_bsgd(&svc_env_malloc, x, n, 2, &opt, 1.0, NULL, &m, &err) == SVC_OK,
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
 * gamma auto = 256 / median d^2, times 2/d above two dimensions, floored
 * at 1/8 (from 16 dimensions) by the default rule and not by "auto-d":
 * padding the same rows with zero columns keeps every distance, so only
 * the dimension factor changes gamma.
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
		g2 = svc_gamma_auto(x2, n, 2, SVC_GAMMA_RULE_AUTO, &rng);
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
	for (int32_t d = 3; d <= 40; d++)
	{
		double	   *xd = calloc((size_t) n * d, sizeof(double));
		SvcRng		rng;
		double		gd,
					gold,
					want;

		for (int64_t i = 0; i < n; i++)
			memcpy(xd + i * d, x2 + 2 * i, 2 * sizeof(double));
		svc_rng_seed(&rng, 1);
		gd = svc_gamma_auto(xd, n, d, SVC_GAMMA_RULE_AUTO, &rng);
		svc_rng_seed(&rng, 1);
		gold = svc_gamma_auto(xd, n, d, SVC_GAMMA_RULE_DIM, &rng);
		want = g2 * (d <= 16 ? 2.0 / d : 1.0 / 8.0);
		CHECK(fabs(gd - want) <= 1e-12 * want, "gamma auto in %d-D = %g (want %g)", d, gd, want);
		CHECK(fabs(gold - g2 * 2.0 / d) <= 1e-12 * gold, "gamma auto-d in %d-D = %g (want %g)",
			  d, gold, g2 * 2.0 / d);
		/* up to 16 dimensions the two rules are one, to the bit */
		CHECK((d <= 16) == (gd == gold), "gamma auto and auto-d in %d-D: %.17g, %.17g", d, gd, gold);
		CHECK(svc_gamma_dims_factor(d, SVC_GAMMA_RULE_AUTO) == (d <= 16 ? 2.0 / d : 0.125),
			  "the dimension factor in %d-D", d);
		free(xd);
	}
	free(x2);
}



/*
 * Fit n rows of d columns (classes truth[i] in 0..k-1) with the options
 * given, assign every row as svc_assign does, and report the clusters
 * found, the purity (rows in their cluster's majority class) and the
 * inverse purity (rows in their class's majority cluster).
 */
static int32_t
fit_and_score(const double *x, const int32_t *truth, int64_t n, int32_t d, int32_t k,
			  const char *json, double *purity, double *inverse)
{
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	SvcScorer	s;
	int32_t		K;
	int64_t    *count;
	double	   *xs = malloc(sizeof(double) * (size_t) d);
	int64_t		hit = 0,
				hit_inv = 0;

	svc_options_default(&opt);
	memset(&m, 0, sizeof(m));
	CHECK(svc_options_parse(json, strlen(json), &opt, &err) == SVC_OK, "%s: %s", json, err.message);
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, d, &opt, &m, &err) == SVC_OK, "%s trains: %s", json,
		  err.message);
	CHECK(svc_scorer_init(&svc_env_malloc, &m, &s, &err) == SVC_OK, "scorer: %s", err.message);
	K = m.n_clusters;
	count = calloc((size_t) (K + 1) * (size_t) k, sizeof(int64_t));
	for (int64_t i = 0; i < n; i++)
	{
		double		f;
		int32_t		c;

		svc_model_scale_row(&m, x + (size_t) i * d, xs);
		c = svc_scorer_predict(&s, xs, &f);
		count[(size_t) (c >= 1 && c <= K ? c : 0) * k + truth[i]]++;
	}
	for (int32_t c = 0; c <= K; c++)
	{
		int64_t		best = 0;

		for (int32_t t = 0; t < k; t++)
			best = count[(size_t) c * k + t] > best ? count[(size_t) c * k + t] : best;
		hit += best;
	}
	for (int32_t t = 0; t < k; t++)
	{
		int64_t		best = 0;

		for (int32_t c = 0; c <= K; c++)
			best = count[(size_t) c * k + t] > best ? count[(size_t) c * k + t] : best;
		hit_inv += best;
	}
	*purity = (double) hit / (double) n;
	*inverse = (double) hit_inv / (double) n;
	free(count);
	free(xs);
	svc_scorer_free(&svc_env_malloc, &s);
	svc_model_free(&svc_env_malloc, &m);
	return K;
}

/*
 * 8 clusters on a 4-D latent space, mapped linearly to D columns with a
 * little noise in every column (as embeddings are).
 */
enum
{
	LATENT_K = 8, LATENT_PER = 100, LATENT_L = 4, LATENT_D = 96
};

static void
latent_rows(double *x, int32_t *truth)
{
	double		centre[LATENT_K][LATENT_L],
				w[LATENT_L][LATENT_D];
	SvcRng		rng;

	svc_rng_seed(&rng, 33);
	for (int c = 0; c < LATENT_K; c++)
		for (int j = 0; j < LATENT_L; j++)
			centre[c][j] = 2.0 * unit_normal(&rng);
	for (int j = 0; j < LATENT_L; j++)
		for (int q = 0; q < LATENT_D; q++)
			w[j][q] = unit_normal(&rng) / 2.0;
	for (int64_t i = 0; i < LATENT_K * LATENT_PER; i++)
	{
		double		z[LATENT_L];

		truth[i] = (int32_t) (i % LATENT_K);
		for (int j = 0; j < LATENT_L; j++)
			z[j] = centre[truth[i]][j] + 0.2 * unit_normal(&rng);
		for (int q = 0; q < LATENT_D; q++)
		{
			double		v = 0.1 * unit_normal(&rng);

			for (int j = 0; j < LATENT_L; j++)
				v += z[j] * w[j][q];
			x[(size_t) i * LATENT_D + q] = v;
		}
	}
}

/*
 * The default width beyond 16 dimensions: the rule before 0.5.0
 * ("auto-d", 2/d) makes the kernel 6 times wider and f has one hill; the
 * default (2/d stops at 1/8) finds the 8 clusters.
 */
static void
test_default_width_high_dims(void)
{
	int64_t		n = LATENT_K * LATENT_PER;
	double	   *x = malloc(sizeof(double) * (size_t) n * LATENT_D);
	int32_t    *truth = malloc(sizeof(int32_t) * (size_t) n);
	double		pur,
				inv;
	int32_t		found;

	latent_rows(x, truth);
	found = fit_and_score(x, truth, n, LATENT_D, LATENT_K, "{}", &pur, &inv);
	CHECK(found >= LATENT_K - 1 && found <= LATENT_K + 2 && pur >= 0.95 && inv >= 0.9,
		  "96 columns, 8 clusters, defaults: %d clusters, purity %.3f, inverse %.3f", found, pur,
		  inv);
	found = fit_and_score(x, truth, n, LATENT_D, LATENT_K, "{\"gamma\": \"auto-d\"}", &pur, &inv);
	CHECK(found <= 2, "96 columns, gamma \"auto-d\": %d clusters (the rule before 0.5.0)", found);
	free(x);
	free(truth);
}

/*
 * gamma of a fit of the first n rows of x (d columns) with these options;
 * reason (when not NULL, at most len bytes) gets svc_model_info_json's
 * gamma_reason
 */
static double
fit_gamma(const double *x, int64_t n, int32_t d, const char *json, char *reason, size_t len)
{
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	double		g;

	svc_options_default(&opt);
	memset(&m, 0, sizeof(m));
	CHECK(svc_options_parse(json, strlen(json), &opt, &err) == SVC_OK, "%s: %s", json, err.message);
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, d, &opt, &m, &err) == SVC_OK, "%s trains: %s", json,
		  err.message);
	g = m.gamma;
	if (reason)
	{
		char	   *info = svc_model_info_json(&svc_env_malloc, &m, &err);
		const char *at = info ? strstr(info, "\"gamma_reason\": \"") : NULL;
		const char *end = at ? strchr(at + 17, '"') : NULL;

		CHECK(end != NULL, "%s: the report has gamma_reason", json);
		reason[0] = '\0';
		if (end && (size_t) (end - at - 17) < len)
		{
			memcpy(reason, at + 17, (size_t) (end - at - 17));
			reason[end - at - 17] = '\0';
		}
		free(info);
	}
	svc_model_free(&svc_env_malloc, &m);
	return g;
}

/*
 * The exact solvers' automatic width: a quarter of the budgeted solver's
 * gamma up to 16 columns, half of it above with gamma "auto" (at a quarter
 * the sphere's density tree had one hill on such rows); "auto-d" keeps a
 * quarter.  The same rows and seed draw the same median, so the ratios are
 * exact.  smo finds the 8 latent clusters (these rows split at either
 * ratio; digits, in the quality benchmark, is one cluster at a quarter).
 */
static void
test_sphere_width_high_dims(void)
{
	int64_t		n = LATENT_K * LATENT_PER;
	double	   *x = malloc(sizeof(double) * (size_t) n * LATENT_D);
	int32_t    *truth = malloc(sizeof(int32_t) * (size_t) n);
	double	   *narrow = malloc(sizeof(double) * (size_t) n * 16);
	double		pur,
				inv;
	int32_t		found;

	latent_rows(x, truth);
	for (int64_t i = 0; i < n; i++)
		memcpy(narrow + i * 16, x + i * LATENT_D, 16 * sizeof(double));
	{
		char		rs[256],
					rb[256];

		CHECK(fit_gamma(x, n, LATENT_D, "{\"solver\": \"smo\"}", rs, sizeof(rs)) * 2 ==
			  fit_gamma(x, n, LATENT_D, "{}", rb, sizeof(rb)),
			  "96 columns: smo's automatic gamma is half of bsgd's");
		/* the same median read, and the sphere's share named */
		CHECK(strncmp(rs, rb, strlen(rb)) == 0 &&
			  strcmp(rs + strlen(rb), " / 2 (the exact sphere's share of the budgeted width)") == 0,
			  "smo's gamma_reason \"%s\", bsgd's \"%s\"", rs, rb);
	}
	CHECK(fit_gamma(x, n, LATENT_D, "{\"solver\": \"aid\", \"gamma\": \"auto-d\"}", NULL, 0) * 4 ==
		  fit_gamma(x, n, LATENT_D, "{\"gamma\": \"auto-d\"}", NULL, 0),
		  "96 columns, gamma \"auto-d\": aid's automatic gamma is a quarter of bsgd's");
	CHECK(fit_gamma(narrow, n, 16, "{\"solver\": \"smo\"}", NULL, 0) * 4 ==
		  fit_gamma(narrow, n, 16, "{}", NULL, 0),
		  "16 columns: smo's automatic gamma is a quarter of bsgd's");
	CHECK(fit_gamma(x, n, LATENT_D, "{\"solver\": \"smo\", \"gamma\": 0.5}", NULL, 0) == 0.5,
		  "a given gamma is the sphere's");
	{
		SvcOptions	o;

		svc_options_default(&o);
		CHECK(svc_sphere_width_ratio(&o, 16) == 4 && svc_sphere_width_ratio(&o, 17) == 2,
			  "the sphere's width ratio: 4 up to 16 columns, 2 above");
		o.gamma = 0.5;
		CHECK(svc_sphere_width_ratio(&o, 64) == 4, "with a given gamma the density tree's ratio is 4");
		o.gamma = 0;
		o.gamma_rule = SVC_GAMMA_RULE_DIM;
		CHECK(svc_sphere_width_ratio(&o, 64) == 4, "with \"auto-d\" the ratio is 4");
	}
	found = fit_and_score(x, truth, n, LATENT_D, LATENT_K, "{\"solver\": \"smo\"}", &pur, &inv);
	CHECK(found >= LATENT_K - 1 && found <= LATENT_K + 2 && pur >= 0.95 && inv >= 0.9,
		  "96 columns, 8 clusters, smo: %d clusters, purity %.3f, inverse %.3f", found, pur, inv);
	free(x);
	free(truth);
	free(narrow);
}


/*
 * bsgd's automatic width on rows its budget cannot tile (fit.h): three
 * z-scored 12-D blobs (sd 1, centres 10 apart, as labelled.py's
 * scatter12 without its anomalies), 3,000 rows and 300 support vectors.
 * At the automatic width the median row sits about 0.65 x d kernel units
 * from the nearest support vector and the tree cut 50-70 clusters; at half
 * of it the three blobs.  Budget 299 (under the default: the user's) and
 * a given gamma keep the width.  The model's bytes carry the factor and
 * gamma_reason names it; the round trip keeps both.
 */
static void
test_width_uncovered_rows(void)
{
	enum
	{
		N = 3000, D = 12, K = 3
	};
	double	   *x = malloc(sizeof(double) * N * D);
	int32_t    *truth = malloc(sizeof(int32_t) * N);
	double		pur,
				inv,
				g,
				g_user;
	int32_t		found;
	char		reason[512];

	blobs_in_columns(x, truth, N, D, K, 12);
	/*
	 * Under valgrind only the widened fit and its round trip (below): the
	 * eight fits of 3,000 rows would take most of an hour there.
	 */
	if (under_valgrind())
		goto round_trip;
	found = fit_and_score(x, truth, N, D, K, "{}", &pur, &inv);
	CHECK(found >= K && found <= K + 1 && pur >= 0.97 && inv >= 0.97,
		  "three 12-D blobs, defaults: %d clusters, purity %.3f, inverse %.3f", found, pur, inv);
	found = fit_and_score(x, truth, N, D, K, "{\"budget\": 299}", &pur, &inv);
	CHECK(found >= 20, "three 12-D blobs, budget 299: the automatic width stands (%d clusters)",
		  found);
	g = fit_gamma(x, N, D, "{}", reason, sizeof(reason));
	g_user = fit_gamma(x, N, D, "{\"budget\": 299}", NULL, 0);
	CHECK(g * 2 == g_user, "the width halved: gamma %g against %g", g, g_user);
	CHECK(strstr(reason, " x 0.5 (the rows sat ") != NULL, "gamma_reason names the widening: %s",
		  reason);
	CHECK(fit_gamma(x, N, D, "{\"gamma\": 1.5}", NULL, 0) == 1.5, "a given gamma stands");
	{
		/*
		 * Labelled rows after the solver ("label_spread", the default): the
		 * solver's fit is the unlabelled one, and so is its width; with the
		 * labelled rows in the solver's bounds the automatic width stands.
		 */
		SvcOptions	opt;
		SvcModel	m;
		SvcError	err;
		int8_t	   *lab = calloc(N, 1);

		for (int64_t i = 0; i < N; i += 50)
			lab[i] = 1;
		svc_options_default(&opt);
		memset(&m, 0, sizeof(m));
		CHECK(svc_fit_rows_labelled(&svc_env_malloc, x, lab, N, D, &opt, &m, &err) == SVC_OK,
			  "labelled fit: %s", err.message);
		CHECK(m.gamma == g && m.gamma_widen == 0.5,
			  "with labelled rows the width halves as without: gamma %g against %g", m.gamma, g);
		svc_model_free(&svc_env_malloc, &m);
		opt.label_spread = 0;
		memset(&m, 0, sizeof(m));
		CHECK(svc_fit_rows_labelled(&svc_env_malloc, x, lab, N, D, &opt, &m, &err) == SVC_OK,
			  "labelled fit, labels in the bounds: %s", err.message);
		CHECK(m.gamma == g_user && m.gamma_widen == 0.0,
			  "with the labelled rows in the bounds the automatic width stands: gamma %g against %g",
			  m.gamma, g_user);
		svc_model_free(&svc_env_malloc, &m);
		free(lab);
	}
round_trip:
	{
		SvcOptions	opt;
		SvcModel	m,
					back;
		SvcError	err;
		size_t		len;
		uint8_t    *buf;

		svc_options_default(&opt);
		memset(&m, 0, sizeof(m));
		CHECK(svc_fit_rows(&svc_env_malloc, x, N, D, &opt, &m, &err) == SVC_OK, "fit: %s",
			  err.message);
		buf = encode(&m, &len);
		CHECK(svc_model_decode(&svc_env_malloc, buf, len, &back, &err) == SVC_OK &&
			  back.gamma_widen == 0.5 && back.gamma_cover == m.gamma_cover &&
			  m.gamma_cover >= SVC_GAMMA_COVER_GATE,
			  "the widening's section round-trips (%g, cover %g)", back.gamma_widen, m.gamma_cover);
		svc_model_free(&svc_env_malloc, &back);
		free(buf);
		svc_model_free(&svc_env_malloc, &m);
	}
	free(x);
	free(truth);
}

/*
 * The widening's factor from 16 columns (fit.h): three blobs (sd 1,
 * centres 10 apart) that differ in 3 of 16 columns, the rest noise of the
 * same scale (the quality benchmark's tables group), 3,000 rows, z-scored.
 * At the automatic width the tree cuts dozens of clusters; at half of it
 * (the factor up to 12 columns) the blobs merge into one; at
 * SVC_GAMMA_COVER_TARGET / median (5/8 of the automatic gamma here) the
 * three, with at most two small pieces beside them (purity 0.99).
 */
static void
test_width_tables_16d(void)
{
	enum
	{
		N = 3000, D = 16, K = 3
	};
	double	   *x = malloc(sizeof(double) * N * D);
	int32_t    *truth = malloc(sizeof(int32_t) * N);
	double		pur,
				inv,
				g,
				g_auto;
	int32_t		found;
	char		json[64];

	/* no new path for valgrind to check beyond test_width_uncovered_rows' */
	if (under_valgrind())
	{
		free(x);
		free(truth);
		return;
	}
	blobs_in_columns(x, truth, N, D, K, 5);
	found = fit_and_score(x, truth, N, D, K, "{}", &pur, &inv);
	CHECK(found >= K && found <= K + 2 && pur >= 0.95 && inv >= 0.9,
		  "three 16-D blobs among noise columns, defaults: %d clusters, purity %.3f, inverse %.3f",
		  found, pur, inv);
	g = fit_gamma(x, N, D, "{}", NULL, 0);
	g_auto = fit_gamma(x, N, D, "{\"budget\": 299}", NULL, 0);
	CHECK(g == g_auto * (SVC_GAMMA_COVER_TARGET / 32.0) && g == g_auto * 0.625,
		  "16 columns: gamma x 20/32 (%g against %g)", g, g_auto);
	found = fit_and_score(x, truth, N, D, K, "{\"budget\": 299}", &pur, &inv);
	CHECK(found >= 20, "the automatic width: %d clusters", found);
	snprintf(json, sizeof(json), "{\"gamma\": %.17g}", g_auto * 0.5);
	found = fit_and_score(x, truth, N, D, K, json, &pur, &inv);
	CHECK(found < K, "half the automatic gamma merges the blobs: %d clusters", found);
	free(x);
	free(truth);
}

/*
 * The smallest cluster by default: 15 rows that label, not 3% of them.
 * 50 tight blobs of 40 rows (2% each) on a grid: the default keeps them
 * apart, and min_cluster_share 0.03 alone (the rule before 0.5.0; naming
 * the share clears the size) joins every blob, under 60 rows, to another.
 */
static void
test_default_smallest_cluster(void)
{
	enum
	{
		K = 50, PER = 40
	};
	int64_t		n = K * PER;
	double	   *x = malloc(sizeof(double) * 2 * (size_t) n);
	int32_t    *truth = malloc(sizeof(int32_t) * (size_t) n);
	double		pur,
				inv;
	SvcRng		rng;
	int32_t		found;

	svc_rng_seed(&rng, 50);
	for (int64_t i = 0; i < n; i++)
	{
		truth[i] = (int32_t) (i % K);
		x[2 * i] = 10.0 * (truth[i] % 10) + 0.7 * unit_normal(&rng);
		x[2 * i + 1] = 10.0 * (truth[i] / 10) + 0.7 * unit_normal(&rng);
	}
	found = fit_and_score(x, truth, n, 2, K, "{}", &pur, &inv);
	CHECK(found >= K - 5 && found <= K + 5 && pur >= 0.9,
		  "50 blobs of 2%%, defaults: %d clusters, purity %.3f, inverse %.3f", found, pur, inv);
	found = fit_and_score(x, truth, n, 2, K, "{\"min_cluster_share\": 0.03}", &pur, &inv);
	CHECK(found <= K / 2, "50 blobs of 2%%, min_cluster_share 0.03: %d clusters", found);
	free(x);
	free(truth);
}

/*
 * keep_isolated: 24 small blobs of 15 rows on a circle of radius 12
 * around one blob of 9,000, the default budget of 300, a narrow kernel.
 * Dropping by |alpha| alone keeps support vectors about in proportion to
 * the rows (0.5 per small blob), so many small blobs lose theirs and
 * their rows join another cluster; weighing isolated vectors twice keeps
 * one in nearly every small blob, and with a smallest cluster of 3
 * labelled rows they are clusters.
 * The same seed gives the same bytes; a warm start keeps the option.
 */
enum
{
	ISO_SMALL = 24, ISO_PER = 15, ISO_BIG = 9000
};

/* Small blobs with a support vector within 1.5 of their centre. */
static int32_t
small_blobs_kept(const SvcModel *m, const double centre[][2])
{
	int32_t		kept = 0;

	for (int c = 0; c < ISO_SMALL; c++)
	{
		double		xs[2],
					edge[2] = {centre[c][0] + 1.5, centre[c][1]},
					es[2],
					r2;

		svc_model_scale_row(m, centre[c], xs);
		svc_model_scale_row(m, edge, es);
		r2 = svc_sqdist(xs, es, 2);
		for (int32_t i = 0; i < m->n_sv; i++)
			if (svc_sqdist(xs, m->sv + 2 * (size_t) i, 2) <= r2)
			{
				kept++;
				break;
			}
	}
	return kept;
}

static void
test_keep_isolated(void)
{
	int64_t		n = ISO_BIG + ISO_SMALL * ISO_PER;
	double	   *x = malloc(sizeof(double) * 2 * (size_t) n);
	int32_t    *truth = malloc(sizeof(int32_t) * (size_t) n);
	double		centre[ISO_SMALL][2];
	const char *plain = "{\"gamma\": 20, \"min_cluster_size\": 3, \"keep_isolated\": false}";
	const char *keep = "{\"gamma\": 20, \"min_cluster_size\": 3}";	/* on by default */
	SvcOptions	opt;
	SvcModel	a,
				b,
				w;
	SvcError	err;
	SvcRng		rng;
	int32_t		kept_plain,
				kept_keep,
				found_plain,
				found_keep;
	double		pur,
				inv;
	size_t		la,
				lb;
	uint8_t    *ba,
			   *bb;

	svc_rng_seed(&rng, 12);
	for (int c = 0; c < ISO_SMALL; c++)
	{
		centre[c][0] = 12.0 * cos(2 * M_PI * c / ISO_SMALL);
		centre[c][1] = 12.0 * sin(2 * M_PI * c / ISO_SMALL);
	}
	for (int64_t i = 0; i < n; i++)
	{
		/* the small blobs' rows spread through the order, as a scan's */
		int			c = i % 26 == 25 ? (int) ((i / 26) % ISO_SMALL) : -1;

		truth[i] = c + 1;
		x[2 * i] = (c < 0 ? 0.0 : centre[c][0]) + (c < 0 ? 1.0 : 0.3) * unit_normal(&rng);
		x[2 * i + 1] = (c < 0 ? 0.0 : centre[c][1]) + (c < 0 ? 1.0 : 0.3) * unit_normal(&rng);
	}

	svc_options_default(&opt);
	CHECK(svc_options_parse(plain, strlen(plain), &opt, &err) == SVC_OK, "%s", err.message);
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &a, &err) == SVC_OK, "%s", err.message);
	kept_plain = small_blobs_kept(&a, centre);
	svc_model_free(&svc_env_malloc, &a);

	svc_options_default(&opt);
	CHECK(svc_options_parse(keep, strlen(keep), &opt, &err) == SVC_OK, "%s", err.message);
	CHECK(opt.keep_isolated == 1, "keep_isolated on by default");
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &a, &err) == SVC_OK, "%s", err.message);
	memset(&b, 0, sizeof(b));
	if (!under_valgrind())
		CHECK(svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &b, &err) == SVC_OK, "%s", err.message);
	CHECK(a.n_sv <= 300 && a.opt.keep_isolated == 1, "the budget holds (%d) and the model keeps the option",
		  a.n_sv);
	kept_keep = small_blobs_kept(&a, centre);
	CHECK(kept_keep >= ISO_SMALL - 1 && kept_keep > kept_plain,
		  "small blobs with a support vector: %d with keep_isolated, %d without", kept_keep,
		  kept_plain);
	if (under_valgrind())
	{
		/*
		 * Under valgrind the two fits above run the option's code; the
		 * rest (a second fit, a warm start, two fits scored on every row)
		 * took most of the suite's valgrind time, and runs under ASan.
		 */
		svc_model_free(&svc_env_malloc, &a);
		svc_model_free(&svc_env_malloc, &b);
		free(x);
		free(truth);
		return;
	}
	ba = encode(&a, &la);
	bb = encode(&b, &lb);
	CHECK(la == lb && memcmp(ba, bb, la) == 0, "keep_isolated: same seed, same bytes");
	free(ba);
	free(bb);

	/* a warm start on the same rows continues with the option */
	CHECK(svc_fit_rows_warm(&svc_env_malloc, x, n, 2, &opt, &a, &w, &err) == SVC_OK,
		  "warm start: %s", err.message);
	CHECK(w.n_sv <= 300 && small_blobs_kept(&w, centre) >= ISO_SMALL - 1,
		  "warm start keeps the small blobs' vectors (%d of %d)", small_blobs_kept(&w, centre),
		  ISO_SMALL);
	svc_model_free(&svc_env_malloc, &w);
	svc_model_free(&svc_env_malloc, &a);
	svc_model_free(&svc_env_malloc, &b);

	found_plain = fit_and_score(x, truth, n, 2, ISO_SMALL + 1, plain, &pur, &inv);
	found_keep = fit_and_score(x, truth, n, 2, ISO_SMALL + 1, keep, &pur, &inv);
	CHECK(found_keep >= ISO_SMALL - 3 && found_keep <= ISO_SMALL + 3 && found_keep > found_plain &&
		  inv >= 0.99,
		  "clusters: %d with keep_isolated (inverse purity %.3f), %d without", found_keep, inv,
		  found_plain);
	free(x);
	free(truth);
}

/* The fit finds its solver in the table; ids without one are refused. */
static void
test_solver_table(void)
{
	const SvcSolverOps *bsgd = svc_solver_find(SVC_SOLVER_BSGD);

	CHECK(bsgd != NULL && bsgd->fit == svc_train_bsgd &&
		  bsgd->boundary == SVC_BOUNDARY_HYPERPLANE, "bsgd is in the solver table");
	CHECK(svc_solver_find(SVC_SOLVER_DEFAULT) == bsgd, "the default solver is bsgd");
	CHECK(svc_solver_find(SVC_SOLVER_SMO) != NULL &&
		  svc_solver_find(SVC_SOLVER_SMO)->boundary == SVC_BOUNDARY_SPHERE,
		  "smo is in the solver table, with the sphere");
	CHECK(svc_solver_find(SVC_SOLVER_AID) != NULL &&
		  svc_solver_find(SVC_SOLVER_AID)->boundary == SVC_BOUNDARY_SPHERE,
		  "aid is in the solver table, with the sphere");
	CHECK(svc_solver_find((SvcSolver) 0) == NULL, "ids without a solver are not found");
	CHECK(strcmp(svc_solver_name(SVC_SOLVER_BSGD), "bsgd") == 0 &&
		  strcmp(svc_solver_name(SVC_SOLVER_AID), "aid") == 0 &&
		  strcmp(svc_solver_name((SvcSolver) 9), "unknown") == 0, "solver names");
}

/*
 * svc_grow keeps the contents, through the realloc hook or without one,
 * and a failed grow leaves the array, its capacity and the count of live
 * blocks as they were.
 */
static void
test_grow(void)
{
	for (int hook = 0; hook < 2; hook++)
	{
		UnitBudget	b = {LONG_MAX, 0};
		SvcEnv		env = {.alloc = unit_fail_after_alloc, .release = unit_counted_free,
						   .realloc = hook ? unit_fail_after_realloc : NULL, .ctx = &b};
		SvcError	err;
		int32_t    *a = NULL;
		int64_t		cap = 0;
		bool		kept = true;

		for (int32_t i = 0; i < 1000; i++)
		{
			if (svc_grow(&env, (void **) &a, &cap, i + 1, sizeof(int32_t), &err) != SVC_OK)
				break;
			a[i] = i;
		}
		CHECK(cap >= 1000 && cap < 2000 && b.live == 1, "grown to %lld, %ld live", (long long) cap, b.live);
		b.left = 0;
		CHECK(svc_grow(&env, (void **) &a, &cap, cap + 1, sizeof(int32_t), &err) == SVC_ERR_NOMEM &&
			  err.status == SVC_ERR_NOMEM, "a failed grow fails with NOMEM");
		for (int32_t i = 0; i < 1000; i++)
			kept = kept && a[i] == i;
		CHECK(kept && cap >= 1000 && cap < 2000 && b.live == 1,
			  "a failed grow (hook %d) keeps the array, its capacity and the count", hook);
		CHECK(svc_grow(&env, (void **) &a, &cap, INT64_MAX, sizeof(int32_t), &err) == SVC_ERR_LIMIT,
			  "an overflowing grow fails with LIMIT");
		unit_counted_free(&b, a);
		CHECK(b.live == 0, "no block left");
	}
}

/* bsgd_pick's selection as it was: k passes of "first smallest, swap". */
static void
select_by_sort(double *dist, int32_t *idx, int32_t m, int32_t k)
{
	for (int32_t i = 0; i < k; i++)
	{
		int32_t		best = i;

		for (int32_t j = i + 1; j < m; j++)
			if (dist[j] < dist[best])
				best = j;
		if (best != i)
		{
			double		td = dist[i];
			int32_t		ti = idx[i];

			dist[i] = dist[best];
			idx[i] = idx[best];
			dist[best] = td;
			idx[best] = ti;
		}
	}
}

/*
 * The one-pass selection of budget maintenance gives the sort's k slots in
 * the sort's order, ties included (duplicate support vectors tie), so the
 * models are the sort's to the bit; when it declines, idx is untouched.
 */
static void
test_select_nearest_replays_the_sort(void)
{
	SvcRng		rng;
	int			replayed = 0,
				declined = 0,
				wrong = 0;

	svc_rng_seed(&rng, 7);
	for (int trial = 0; trial < 4000; trial++)
	{
		int32_t		m = 1 + (int32_t) svc_rng_below(&rng, 300);
		int32_t		k = 1 + (int32_t) svc_rng_below(&rng, m < SVC_MAX_K ? (uint64_t) m : SVC_MAX_K);
		/* few distinct values make ties (one value: all tie); many make none */
		int32_t		levels = trial % 4 == 0 ? 1 : trial % 4 == 1 ? 3 :
			trial % 4 == 2 ? 40 : 1000000;
		double		dist[300],
					sorted[300];
		int32_t		idx[300],
					expect[300],
					got[300];

		for (int32_t i = 0; i < m; i++)
		{
			/* every eighth trial descending: each row a new nearest */
			dist[i] = trial % 8 == 7 ? (double) (m - i) * 0.5 :
				(double) svc_rng_below(&rng, (uint64_t) levels) * 0.25;
			idx[i] = i * 3 + 1;
			expect[i] = idx[i];
			got[i] = -1;
			sorted[i] = dist[i];
		}
		select_by_sort(sorted, expect, m, k);
		memcpy(got, idx, sizeof(int32_t) * (size_t) m);
		if (svc_select_nearest(dist, got, m, k))
		{
			replayed++;
			if (memcmp(got, expect, sizeof(int32_t) * (size_t) k) != 0)
				wrong++;
		}
		else
		{
			declined++;
			if (memcmp(got, idx, sizeof(int32_t) * (size_t) m) != 0)
				wrong++;
		}
	}
	CHECK(wrong == 0, "the one-pass selection differs from the sort in %d of 4000 trials", wrong);
	CHECK(replayed > 3000 && declined > 0,
		  "most selections replayed (%d), the tie-heavy ones declined (%d)", replayed, declined);
	{
		double		d[4] = {1, 2, 3, 4};
		int32_t		ix[4] = {0, 1, 2, 3};

		CHECK(!svc_select_nearest(d, ix, 4, 0) && !svc_select_nearest(d, ix, 4, 5) &&
			  ix[0] == 0 && ix[3] == 3, "k outside 1..m declined, idx untouched");
	}
	{
		/* a NaN leaves the order open: declined (the caller sorts), no read out of bounds */
		double		d[12] = {NAN, 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5};
		int32_t		ix[12];

		for (int32_t i = 0; i < 12; i++)
			ix[i] = i;
		CHECK(!svc_select_nearest(d, ix, 12, 3) && ix[0] == 0,
			  "a NaN distance: declined, idx untouched");
	}
	{
		/*
		 * a NaN the sort keeps at its place (no value is below it) while
		 * the rows within the k-th are enough: declined all the same
		 */
		double		d[12] = {0.5, NAN, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
		int32_t		ix[12];

		for (int32_t i = 0; i < 12; i++)
			ix[i] = i;
		CHECK(!svc_select_nearest(d, ix, 12, 5) && ix[1] == 1 && ix[4] == 4,
			  "a NaN the sort would take: declined, idx untouched");
		CHECK(!svc_select_nearest(d, ix, 7, 3) && ix[1] == 1,
			  "a NaN among fewer than eight: declined");
	}
}

/*
 * The selection from the slots' columns gives the sort's k slots of every
 * slot but p, in the sort's order, from svc_sqdist_many's distances: with
 * exact ties (repeated rows), near ties that the two sums may order
 * differently (rows a few ulps apart), far rows, infinities and NaN; when
 * it declines, idx is untouched.
 */
static void
test_select_nearest_cols_is_the_sort(void)
{
	SvcRng		rng;
	int			taken = 0,
				declined = 0,
				given_taken = 0,
				wrong = 0;

	svc_rng_seed(&rng, 19);
	for (int trial = 0; trial < 6000; trial++)
	{
		int32_t		b = trial < 200 ? 1 + (int32_t) svc_rng_below(&rng, 12) :
			9 + (int32_t) svc_rng_below(&rng, 292);
		int32_t		cap = b + (int32_t) svc_rng_below(&rng, 5);
		int32_t		d = 1 + (int32_t) svc_rng_below(&rng, trial % 7 == 6 ? 64 : 12);
		int32_t		p = (int32_t) svc_rng_below(&rng, (uint64_t) b);
		int32_t		m = b - 1;
		int32_t		k = 1 + (int32_t) svc_rng_below(&rng, trial % 10 == 9 ? SVC_MAX_K : 8);
		int			kind = trial % 6;
		/* half the permuted sets so small that their squares are subnormal */
		int			tiny = trial % 12 == 11 ? -540 : 0;
		double	   *rows = malloc(sizeof(double) * (size_t) cap * d),
				   *cols = malloc(sizeof(double) * (size_t) cap * d),
				   *work = malloc(sizeof(double) * (size_t) cap),
				   *dist = malloc(sizeof(double) * (size_t) cap),
					x[64];
		int32_t    *list = malloc(sizeof(int32_t) * (size_t) cap),
				   *expect = malloc(sizeof(int32_t) * (size_t) cap),
				   *got = malloc(sizeof(int32_t) * (size_t) cap);

		if (m < 1)
			k = 1;
		else if (k > m)
			k = m;
		for (int32_t i = 0; i < cap; i++)
			for (int32_t j = 0; j < d; j++)
			{
				double		v;

				if (kind == 0)	/* few levels: repeated rows, exact ties */
					v = (double) svc_rng_below(&rng, 3);
				else if (kind == 1)	/* a few ulps apart: near ties */
					v = (1.0 + (double) svc_rng_below(&rng, 4) * DBL_EPSILON) *
						(j % 2 ? 3.7 : -0.3);
				else if (kind == 2)	/* spread over magnitudes, some squares subnormal */
					v = ldexp(svc_rng_unit(&rng) - 0.5, trial % 4 == 0 ?
							  (int) svc_rng_below(&rng, 40) - 560 :
							  (int) svc_rng_below(&rng, 1030) - 530);
				else if (kind == 5)	/* coordinates 1/(j + 1) - 1/3, permuted below */
					v = ldexp(1.0 / (j + 1) - 1.0 / 3, tiny);
				else
					v = svc_rng_unit(&rng) * 10.0;
				rows[(size_t) i * d + j] = v;
			}
		/*
		 * Kind 5: every row a permutation of the same coordinates, at the
		 * same distance from a query with equal coordinates, and the
		 * columns in another coordinate order: the first sums add the same
		 * squares in another order than svc_sqdist_many, as another build
		 * may, and the ties fall by rounding, one way in each (the
		 * subnormal half adds exactly: it checks the cut-off's floor)
		 */
		if (kind == 5)
			for (int32_t i = 0; i < cap; i++)
				for (int32_t j = d - 1; j > 0; j--)
				{
					int32_t		r = (int32_t) svc_rng_below(&rng, (uint64_t) j + 1);
					double		t = rows[(size_t) i * d + j];

					rows[(size_t) i * d + j] = rows[(size_t) i * d + r];
					rows[(size_t) i * d + r] = t;
				}
		/* now and then an infinite or NaN coordinate */
		if (trial % 37 == 3)
			rows[(size_t) svc_rng_below(&rng, (uint64_t) b) * d] = HUGE_VAL;
		if (trial % 53 == 5)
			rows[(size_t) svc_rng_below(&rng, (uint64_t) b) * d] = NAN;
		for (int32_t i = 0; i < cap; i++)
			for (int32_t j = 0; j < d; j++)
				cols[(size_t) (kind == 5 ? d - 1 - j : j) * cap + i] = rows[(size_t) i * d + j];
		/* the query is slot p's vector, as in budget maintenance, or another */
		for (int32_t j = 0; j < d; j++)
			x[j] = kind == 5 ? ldexp(0.7, tiny) : trial % 3 ? rows[(size_t) p * d + j] :
				svc_rng_unit(&rng) * 10.0;
		for (int32_t i = 0, c = 0; i < b; i++)
			if (i != p)
				list[c++] = i;
		if (m > 0)
		{
			svc_sqdist_many(rows, list, m, d, x, dist);
			memcpy(expect, list, sizeof(int32_t) * (size_t) m);
			select_by_sort(dist, expect, m, k);
		}
		for (int32_t i = 0; i < cap; i++)
			got[i] = -7;
		if (svc_select_nearest_cols(rows, cols, (size_t) cap, b, d, p, x, k, work, got))
		{
			taken++;
			if (memcmp(got, expect, sizeof(int32_t) * (size_t) k) != 0)
				wrong++;
		}
		else
		{
			declined++;
			for (int32_t i = 0; i < cap; i++)
				wrong += got[i] != -7;
		}

		/*
		 * The first sums given (svc_select_nearest_given): the distances
		 * svc_kernel_sum_cols_d2 leaves, and svc_sqdist_many's pushed to
		 * either end of that error bound, slot by slot at random
		 */
		for (int variant = 0; variant < 2; variant++)
		{
			double	   *ones = malloc(sizeof(double) * (size_t) cap);

			for (int32_t i = 0; i < cap; i++)
				ones[i] = 1.0;
			if (variant == 0)
				(void) svc_kernel_sum_cols_d2(cols, (size_t) cap, ones, b, d, 1.0, x, work);
			else
			{
				svc_sqdist_many(rows, NULL, b, d, x, work);
				for (int32_t i = 0; i < b; i++)
				{
					double		e = SVC_SQDIST_REL_ERR(d) * work[i] + SVC_SQDIST_ABS_ERR(d);

					/* (NaN and infinity stay: their first sums are those too) */
					if (!isfinite(work[i]))
						continue;
					if (svc_rng_below(&rng, 2))
						work[i] += e;
					else
						work[i] = work[i] - e > 0.0 ? work[i] - e : 0.0;
				}
			}
			free(ones);
			for (int32_t i = 0; i < cap; i++)
				got[i] = -7;
			if (svc_select_nearest_given(rows, b, d, p, x, k, work, got))
			{
				given_taken++;
				if (memcmp(got, expect, sizeof(int32_t) * (size_t) k) != 0)
					wrong++;
			}
			else
				for (int32_t i = 0; i < cap; i++)
					wrong += got[i] != -7;
		}
		free(rows);
		free(cols);
		free(work);
		free(dist);
		free(list);
		free(expect);
		free(got);
	}
	CHECK(wrong == 0, "the selection by columns or from given first sums differs from the sort in %d of 6000 trials", wrong);
	CHECK(taken > 3000 && declined > 200,
		  "most selections taken (%d); small lists, k > 8 and NaN declined (%d)", taken, declined);
	CHECK(given_taken > 6000, "most selections from given first sums taken (%d of 12000)", given_taken);
}

/*
 * The threshold and the width's median take an order statistic by
 * selection: it must be the sorted array's, ties and all sizes included,
 * also where it gives up partitioning and sorts.
 */
/*
 * svc_gamma_cover's distances come four support vectors at a time
 * (svc_sqdist_many): the cover must be the one of svc_sqdist's distance
 * of every probed row and support vector, its least, and the median as a
 * sort gives it, to the bit (the widening's gate reads it).  Widths and
 * support-vector counts that leave every tail of the batches.
 */
static void
test_gamma_cover_is_the_pairs(void)
{
	static const int32_t dims[] = {5, 37, 64, 128};
	static const int32_t nsv[] = {1, 2, 3, 4, 7, 301};
	static const int64_t nrows[] = {1, 700, 1500};
	SvcRng		rng;
	int			wrong = 0,
				cases = 0;

	svc_rng_seed(&rng, 36);
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 6; b++)
			for (int c = 0; c < 3; c++)
			{
				int32_t		d = dims[a];
				int64_t		n = nrows[c];
				int64_t		probe = n < SVC_GAMMA_COVER_PROBE ? n : SVC_GAMMA_COVER_PROBE;
				double	   *rows,
						   *v;
				SvcModel	m;
				SvcError	err;
				double		got = -1,
							want;

				if (a >= 2 && c == 2 && b < 5)
					continue;	/* the long ones once */
				rows = malloc(sizeof(double) * (size_t) (n * d));
				v = malloc(sizeof(double) * (size_t) probe);
				memset(&m, 0, sizeof(m));
				m.dims = d;
				m.n_sv = nsv[b];
				m.gamma = 0.37;
				m.sv = malloc(sizeof(double) * (size_t) (m.n_sv * d));
				/* coarse levels, so that distances tie between vectors */
				for (int64_t i = 0; i < n * d; i++)
					rows[i] = (double) svc_rng_below(&rng, 9) * 0.25 - 1.0 +
						(i % 3 == 0 ? svc_rng_unit(&rng) : 0.0);
				for (int64_t i = 0; i < (int64_t) m.n_sv * d; i++)
					m.sv[i] = (double) svc_rng_below(&rng, 9) * 0.25 - 1.0 +
						(i % 5 == 0 ? svc_rng_unit(&rng) : 0.0);
				/*
				 * beyond float's safe range (the float bounds' 2^40): a
				 * row, then a support vector, so that the exact sums
				 * serve them
				 */
				if (b == 5 && n > 1)
					rows[d + 1] = 0x1.0p41;
				if (b == 4 && c == 1)
					m.sv[d - 1] = -0x1.0p41;
				for (int64_t p = 0; p < probe; p++)
				{
					const double *x = rows + (size_t) (p * n / probe) * (size_t) d;
					double		best = HUGE_VAL;

					for (int32_t j = 0; j < m.n_sv; j++)
					{
						double		d2 = svc_sqdist(x, m.sv + (size_t) j * (size_t) d, d);

						best = d2 < best ? d2 : best;
					}
					v[p] = best * m.gamma;
				}
				qsort(v, (size_t) probe, sizeof(double), svc_cmp_double);
				want = v[probe / 2] / (double) d;
				if (svc_gamma_cover(&svc_env_malloc, &m, rows, n, &got, &err) != SVC_OK ||
					memcmp(&got, &want, sizeof(got)) != 0)
				{
					if (wrong++ < 3)
						printf("  cover of %lld rows x %d, %d vectors: %.17g, the pairs %.17g\n",
							   (long long) n, d, m.n_sv, got, want);
				}
				cases++;
				free(m.sv);
				free(rows);
				free(v);
			}
	CHECK(wrong == 0, "svc_gamma_cover is the pairs' svc_sqdist cover to the bit "
		  "(%d of %d cases differ)", wrong, cases);
	{
		/*
		 * Support vectors at distances from the row that differ in the
		 * last bits of a double only (one coordinate each moved by 1 + k
		 * 2^-40): their float sums cannot order them, so the least is
		 * found only if every vector the bounds leave in is summed
		 * exactly.
		 */
		enum
		{
			D = 64, B = 30
		};
		double		x[D],
					sv[B * D];
		int			off = 0;

		for (int trial = 0; trial < 40; trial++)
		{
			SvcModel	m;
			SvcError	err;
			double		got = -1,
						want = HUGE_VAL;

			for (int j = 0; j < D; j++)
				x[j] = svc_rng_unit(&rng) * 4.0 - 2.0;
			for (int k = 0; k < B; k++)
			{
				int			at = (k * 7 + trial) % D;

				memcpy(sv + k * D, x, sizeof(x));
				sv[k * D + at] += (k % 2 ? -1.0 : 1.0) * (1.0 + (B - 1 - k) * 0x1.0p-40);
			}
			memset(&m, 0, sizeof(m));
			m.dims = D;
			m.n_sv = B;
			m.gamma = 1.0;
			m.sv = sv;
			for (int k = 0; k < B; k++)
			{
				double		d2 = svc_sqdist(x, sv + k * D, D);

				want = d2 < want ? d2 : want;
			}
			want /= D;
			if (svc_gamma_cover(&svc_env_malloc, &m, x, 1, &got, &err) != SVC_OK ||
				memcmp(&got, &want, sizeof(got)) != 0)
				off++;
		}
		CHECK(off == 0, "svc_gamma_cover: the least of distances that float sums cannot "
			  "order (%d of 40 rows differ)", off);
	}
	{
		/*
		 * The float path's allocations and interrupt checks, each failing
		 * in turn: the right status and nothing left allocated (the
		 * widened fit's sweep runs below 64 columns)
		 */
		enum
		{
			D = 64, B = 70, N = 200
		};
		double	   *rows = malloc(sizeof(double) * N * D);
		SvcModel	m;
		int			bad = 0;
		long		k,
					nalloc = 0,
					nstop = 0;

		memset(&m, 0, sizeof(m));
		m.dims = D;
		m.n_sv = B;
		m.gamma = 0.5;
		m.sv = malloc(sizeof(double) * B * D);
		for (int i = 0; i < N * D; i++)
			rows[i] = svc_rng_unit(&rng);
		for (int i = 0; i < B * D; i++)
			m.sv[i] = svc_rng_unit(&rng);
		for (int stop = 0; stop < 2; stop++)
			for (k = 0;; k++)
			{
				UnitBudget	ub = {k, 0};
				SvcEnv		fail_alloc = {.alloc = unit_fail_after_alloc, .release = unit_counted_free, .realloc = unit_fail_after_realloc, .ctx = &ub};
				SvcEnv		stop_env = {.alloc = unit_counted_alloc, .release = unit_counted_free, .interrupt = unit_stop_after, .realloc = unit_counted_realloc, .ctx = &ub};
				SvcError	err;
				double		got;
				SvcStatus	st = svc_gamma_cover(stop ? &stop_env : &fail_alloc, &m, rows, N,
												 &got, &err);

				if (ub.live != 0 ||
					(st != SVC_OK && st != (stop ? SVC_ERR_INTERRUPTED : SVC_ERR_NOMEM)))
					bad++;
				if (st == SVC_OK)
				{
					*(stop ? &nstop : &nalloc) = k;
					break;
				}
			}
		CHECK(bad == 0 && nalloc >= 6 && nstop >= 1,
			  "svc_gamma_cover fails cleanly at each of %ld allocations and stops cleanly at each "
			  "of %ld interrupt checks (%d wrong)", nalloc, nstop, bad);
		free(m.sv);
		free(rows);
	}
	{
		SvcModel	m;
		SvcError	err;
		double		got = -1,
					row[3] = {1, 2, 3};

		memset(&m, 0, sizeof(m));
		m.dims = 3;
		m.gamma = 1;
		CHECK(svc_gamma_cover(&svc_env_malloc, &m, row, 1, &got, &err) == SVC_OK && got == 0.0,
			  "no support vectors: cover 0 (%g)", got);
	}
}

static void
test_select_double_is_the_sort(void)
{
	SvcRng		rng;
	int			wrong = 0;

	svc_rng_seed(&rng, 11);
	for (int trial = 0; trial < 3000; trial++)
	{
		int64_t		n = 1 + (int64_t) svc_rng_below(&rng, trial < 1000 ? 9 : 500);
		int64_t		k = (int64_t) svc_rng_below(&rng, (uint64_t) n);
		int32_t		levels = trial % 3 == 0 ? 1 : trial % 3 == 1 ? 4 : 1000000;
		/* a round limit of 0-3 reaches the sort that stops a bad pivot's run */
		int			rounds = trial % 2 ? (int) (trial / 2 % 4) : -1;
		double		v[500],
					sorted[500],
					got;
		bool		same_values = true;

		for (int64_t i = 0; i < n; i++)
		{
			/* ascending, descending and random runs, with negatives */
			double		x = (double) svc_rng_below(&rng, (uint64_t) levels) - levels / 2;

			v[i] = trial % 5 == 3 ? (double) i : trial % 5 == 4 ? (double) (n - i) : x;
			sorted[i] = v[i];
		}
		qsort(sorted, (size_t) n, sizeof(double), svc_cmp_double);
		got = rounds < 0 ? svc_select_double(v, n, k) :
			svc_select_double_rounds(v, n, k, rounds);
		/* none larger before k, none smaller after (gamma's median relies on it) */
		for (int64_t i = 0; i < n; i++)
			same_values &= i < k ? v[i] <= got : v[i] >= got;
		/* only reordered: sorting the result gives the same values */
		qsort(v, (size_t) n, sizeof(double), svc_cmp_double);
		for (int64_t i = 0; i < n; i++)
			same_values &= v[i] == sorted[i];
		if (got != sorted[k] || !same_values)
			wrong++;
	}
	CHECK(wrong == 0, "selection differs from the sort in %d of 3000 trials", wrong);
}

/* Row i's value for svc_select_bounded, counting the asks. */
typedef struct Asked
{
	const double *v;
	int64_t		count;
} Asked;

static double
asked_value(void *ctx, int64_t i)
{
	Asked	   *a = ctx;

	a->count++;
	return a->v[i];
}

/*
 * The bounded selection gives the sorted values' k-th and largest whatever
 * the intervals (tight, wide, infinite, overlapping so that their order is
 * not the values'), asks few values when the intervals are tight, and
 * refuses a value outside its interval.
 */
static void
test_select_bounded(void)
{
	SvcRng		rng;
	int			wrong = 0,
				tight_trials = 0;
	int64_t		tight_asked = 0;
	SvcError	err;

	svc_rng_seed(&rng, 13);
	for (int trial = 0; trial < 2000; trial++)
	{
		int64_t		n = 1 + (int64_t) svc_rng_below(&rng, trial < 500 ? 8 : 400);
		int64_t		k = (int64_t) svc_rng_below(&rng, (uint64_t) n);
		/* tight, wide, some infinite, ties, ties with exact intervals */
		int			kind = trial % 5;
		double		v[400],
					lo[400],
					hi[400],
					work[400],
					sorted[400],
					kth,
					top;
		Asked		a = {v, 0};
		int64_t		asked;

		for (int64_t i = 0; i < n; i++)
		{
			double		r = kind == 0 ? 1e-9 : svc_rng_unit(&rng) * 0.3;

			if (kind == 4 && svc_rng_below(&rng, 2) == 0)
				r = 0.0;
			v[i] = kind >= 3 ? (double) svc_rng_below(&rng, 5) : svc_rng_unit(&rng);
			lo[i] = v[i] - r * svc_rng_unit(&rng);
			hi[i] = v[i] + r * svc_rng_unit(&rng);
			if (kind == 2 && svc_rng_below(&rng, 10) == 0)
			{
				lo[i] = -HUGE_VAL;
				hi[i] = HUGE_VAL;
			}
			sorted[i] = v[i];
		}
		qsort(sorted, (size_t) n, sizeof(double), svc_cmp_double);
		if (svc_select_bounded(&svc_env_malloc, lo, hi, n, k, asked_value, &a, work, &kth,
							   &top, &asked, &err) != SVC_OK ||
			kth != sorted[k] || top != sorted[n - 1] || asked != a.count || asked > n)
			wrong++;
		if (kind == 0 && n >= 100)
		{
			tight_trials++;
			tight_asked += asked;
		}
	}
	CHECK(wrong == 0, "bounded selection differs from the sort in %d of 2000 trials", wrong);
	CHECK(tight_trials > 0 && tight_asked <= 4 * tight_trials,
		  "tight intervals: %lld values asked in %d trials", (long long) tight_asked,
		  tight_trials);
	{
		double		v[3] = {1, 2, 3},
					lo[3] = {0.5, 1.5, 2.5},
					hi[3] = {1.5, 1.9, 3.5},	/* 2 is outside [1.5, 1.9] */
					work[3],
					kth,
					top;
		Asked		a = {v, 0};
		int64_t		asked;

		CHECK(svc_select_bounded(&svc_env_malloc, lo, hi, 3, 1, asked_value, &a, work, &kth,
								 &top, &asked, &err) == SVC_ERR_INTERNAL,
			  "a value outside its interval is refused");
	}
}

/*
 * The threshold is the nu-quantile of the full kernel sums over the
 * training rows, to the bit, though fit.c computes few of them (the
 * scorer's bounded sums place the rest): against sorting every full sum,
 * with one width and with bandwidth_k, at several nu, and with each row
 * repeated 15 times (runs of equal sums at the quantile), exactly or
 * moved by a few units of its last bits (sums closer than the bounds, so
 * that the quantile is chosen among several full sums).
 */
static void
test_threshold_is_the_full_sums_quantile(void)
{
	static const char *const cases[] = {
		"{}", "{\"nu\": 0.2}", "{\"nu\": 0.9}", "{\"budget\": 20, \"nu\": 0.01}",
		"{\"bandwidth_k\": 5}", "{\"bandwidth_k\": 5, \"nu\": 0}",
	"{\"bandwidth_k\": 5, \"nu\": 0.5}"};
	int64_t		n = 600;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (int repeated = 0; repeated < 3; repeated++)
		{
			double	   *x = blobs(n, 5);
			double	   *xs = malloc(sizeof(double) * 2 * (size_t) n);
			double	   *sums = malloc(sizeof(double) * (size_t) n);
			double	   *cols;
			SvcModel	m;
			int64_t		idx;
			double		q,
						top;

			if (repeated)
				for (int64_t i = 0; i < n; i++)
				{
					memcpy(x + 2 * i, x + 2 * (i % 40), sizeof(double) * 2);
					if (repeated == 2)
						x[2 * i] += (double) (i / 40) * 1e-14;
				}
			m = train(cases[c], x, n);
			cols = malloc(sizeof(double) * 2 * (size_t) (m.n_sv > 0 ? m.n_sv : 1));
			svc_rows_to_cols(m.sv, m.n_sv, 2, cols);
			for (int64_t i = 0; i < n; i++)
			{
				svc_model_scale_row(&m, x + 2 * i, xs + 2 * i);
				sums[i] = m.sv_gamma ?
					svc_kernel_sum(m.sv, m.alpha, m.sv_gamma, m.n_sv, 2, m.gamma, xs + 2 * i) :
					svc_kernel_sum_cols(cols, (size_t) m.n_sv, m.alpha, m.n_sv, 2, m.gamma,
										xs + 2 * i);
			}
			qsort(sums, (size_t) n, sizeof(double), svc_cmp_double);
			idx = (int64_t) floor(m.opt.nu * (double) n);
			if (idx >= n)
				idx = n - 1;
			q = sums[idx];
			top = sums[n - 1];
			if (!(q > 1e-12 * top) || !(q > 0))
				q = top > 0 ? 1e-12 * top : 1e-300;
			CHECK(m.offset == q, "%s%s: the threshold %.17g is the sorted full sums' %.17g",
				  cases[c], repeated == 2 ? ", rows nearly repeated" :
				  repeated ? ", rows repeated" : "", m.offset, q);
			svc_model_free(&svc_env_malloc, &m);
			free(cols);
			free(sums);
			free(xs);
			free(x);
		}
}


/*
 * svc_select_nearest_slotf where the float sums cannot order the slots:
 * slot 0 and others each one coordinate away from it by 1 + k 2^-40,
 * the nearest the one with k least, so that only the exact sums of every
 * slot the bounds leave in find it.
 */
static void
test_nearest_slotf_near_ties(void)
{
	enum
	{
		D = 64, B = 40, CAPF = 64
	};
	SvcRng		rng;
	double		rows[B * D],
				sn2[B],
				lo[CAPF],
				hi[B];
	float		cols[CAPF * D],
				xf[D];
	int			wrong = 0,
				taken = 0;

	svc_rng_seed(&rng, 41);
	for (int trial = 0; trial < 40; trial++)
	{
		int32_t		want = -1,
					at;
		double		best = HUGE_VAL,
					v = -1.0;

		for (int j = 0; j < D; j++)
			rows[j] = svc_rng_unit(&rng) * 4.0 - 2.0;
		for (int k = 1; k < B; k++)
		{
			memcpy(rows + k * D, rows, sizeof(double) * D);
			/* k's distance grows with (B - k + trial) % B: the nearest moves */
			rows[k * D + (k * 7 + trial) % D] += (k % 2 ? -1.0 : 1.0) *
				(1.0 + ((B - k + trial) % B) * 0x1.0p-40);
		}
		memset(cols, 0, sizeof(cols));
		for (int i = 0; i < B; i++)
		{
			sn2[i] = 0.0;
			for (int j = 0; j < D; j++)
			{
				cols[j * CAPF + i] = (float) rows[i * D + j];
				sn2[i] += rows[i * D + j] * rows[i * D + j];
			}
		}
		for (int i = 1; i < B; i++)
		{
			double		e = svc_sqdist(rows + i * D, rows, D);

			if (e < best)
			{
				best = e;
				want = i;
			}
		}
		at = svc_select_nearest_slotf(rows, cols, CAPF, sn2, B, D, 0, xf, lo, hi, &v);
		if (at >= 0)
		{
			taken++;
			wrong += at != want || memcmp(&v, &best, sizeof(v)) != 0;
		}
	}
	CHECK(wrong == 0 && taken == 40,
		  "the nearest slot among distances that float sums cannot order (%d wrong, %d of 40 taken)",
		  wrong, taken);
}

/*
 * Wide rows' float kernel sums (svc_kernel_sum_colsf) and the bounds
 * svc_sqdistf_bounds makes of their squared distances: svc_sqdist's
 * distance of every slot within them, on spread rows, near duplicates,
 * rows far from the origin (the rounding to float moves them most),
 * subnormal coordinates and coordinates up to 2^40; the bounds tight
 * (a thousandth) on the plain rows; and the selection from them
 * (svc_select_nearest_bounds) that of the sort.
 */
static void
test_sqdistf_bounds(void)
{
	SvcRng		rng;
	int			outside = 0,
				loose = 0,
				taken = 0,
				wrong = 0,
				plain = 0,
				slot_taken = 0,
				slot_wrong = 0;
	double		worst = 0.0;

	svc_rng_seed(&rng, 23);
	for (int trial = 0; trial < 600; trial++)
	{
		int32_t		b = 9 + (int32_t) svc_rng_below(&rng, 300);
		int32_t		d = 64 + (int32_t) svc_rng_below(&rng, trial % 5 == 0 ? 800 : 100);
		int32_t		capf = (b + 63) / 64 * 64;
		int32_t		p = b - 1;
		int32_t		k = 1 + (int32_t) svc_rng_below(&rng, 8);
		int			kind = trial % 5;
		double	   *rows = malloc(sizeof(double) * (size_t) b * d),
				   *d2 = malloc(sizeof(double) * (size_t) capf),
				   *lo = malloc(sizeof(double) * (size_t) capf),
				   *hi = malloc(sizeof(double) * (size_t) capf),
				   *sn2 = malloc(sizeof(double) * (size_t) capf),
				   *ones = malloc(sizeof(double) * (size_t) capf),
				   *x = malloc(sizeof(double) * (size_t) d),
					xn2 = 0.0;
		float	   *colsf = calloc((size_t) capf * d, sizeof(float)),
				   *xf = malloc(sizeof(float) * (size_t) d);
		int32_t    *list = malloc(sizeof(int32_t) * (size_t) b),
				   *expect = malloc(sizeof(int32_t) * (size_t) b),
				   *got = malloc(sizeof(int32_t) * (size_t) b);

		for (int32_t i = 0; i < b; i++)
			for (int32_t j = 0; j < d; j++)
			{
				double		v = svc_rng_unit(&rng) - 0.5;

				if (kind == 1 && i > 0)	/* near duplicates of row 0 */
					v = rows[j] + ldexp(v, -20 - (int) svc_rng_below(&rng, 20));
				else if (kind == 2)	/* far from the origin */
					v = 1000.0 + v * 1e-3;
				else if (kind == 3)	/* subnormal floats and squares */
					v = ldexp(v, -140 - (int) svc_rng_below(&rng, 20));
				else if (kind == 4 && j % 7 == 0)	/* up to 2^40 */
					v = ldexp(v, 41);
				rows[(size_t) i * d + j] = v;
			}
		/* the query is the last slot's vector, as after an insertion */
		memcpy(x, rows + (size_t) p * d, sizeof(double) * (size_t) d);
		for (int32_t i = 0; i < b; i++)
		{
			sn2[i] = 0.0;
			ones[i] = 1.0;
			for (int32_t j = 0; j < d; j++)
			{
				double		v = rows[(size_t) i * d + j];

				colsf[(size_t) j * capf + i] = (float) v;
				sn2[i] += v * v;
			}
		}
		for (int32_t j = 0; j < d; j++)
		{
			xf[j] = (float) x[j];
			xn2 += x[j] * x[j];
		}
		(void) svc_kernel_sum_colsf(colsf, (size_t) capf, ones, b, d, 1.0, xf, d2);
		svc_sqdistf_bounds(d2, sn2, xn2, b, d, lo, hi);
		for (int32_t i = 0; i < b; i++)
		{
			double		e = svc_sqdist(rows + (size_t) i * d, x, d);

			outside += !(lo[i] <= e && e <= hi[i]);
			if (kind == 0 && i != p)
			{
				double		w = (hi[i] - lo[i]) / e;

				plain++;
				worst = w > worst ? w : worst;
				loose += !(w < 1e-3);
			}
		}
		for (int32_t i = 0, c = 0; i < b; i++)
			if (i != p)
				list[c++] = i;
		svc_sqdist_many(rows, list, b - 1, d, x, d2);
		memcpy(expect, list, sizeof(int32_t) * (size_t) (b - 1));
		select_by_sort(d2, expect, b - 1, k);
		for (int32_t i = 0; i < b; i++)
			got[i] = -7;
		if (svc_select_nearest_bounds(rows, b, d, p, x, k, lo, hi, got))
		{
			taken++;
			wrong += memcmp(got, expect, sizeof(int32_t) * (size_t) k) != 0;
		}
		else
			for (int32_t i = 0; i < b; i++)
				wrong += got[i] != -7;
		{
			/*
			 * keep_isolated's nearest other slot of slot q from the same
			 * columns (svc_select_nearest_slotf): a scan's choice over
			 * every svc_sqdist_many distance, and that distance's bits
			 */
			int32_t		q = (trial * 37) % b,
						want = -1,
						at;
			double		best = HUGE_VAL,
						v = -1.0;

			svc_sqdist_many(rows, NULL, b, d, rows + (size_t) q * d, d2);
			for (int32_t i = 0; i < b; i++)
				if (i != q && d2[i] < best)
				{
					best = d2[i];
					want = i;
				}
			at = svc_select_nearest_slotf(rows, colsf, (size_t) capf, sn2, b, d, q, xf, lo, hi,
										  &v);
			if (at >= 0)
			{
				slot_taken++;
				slot_wrong += at != want || memcmp(&v, &best, sizeof(v)) != 0;
			}
		}
		free(rows);
		free(d2);
		free(lo);
		free(hi);
		free(sn2);
		free(ones);
		free(x);
		free(colsf);
		free(xf);
		free(list);
		free(expect);
		free(got);
	}
	CHECK(outside == 0, "svc_sqdist's distance within the float sums' bounds (%d outside)", outside);
	CHECK(plain > 10000 && loose == 0, "the bounds within a thousandth on plain rows (%d of %d wider, widest %g)",
		  loose, plain, worst);
	CHECK(wrong == 0 && taken > 500, "the selection from bounds is the sort's (%d wrong, %d of 600 taken)",
		  wrong, taken);
	CHECK(slot_wrong == 0 && slot_taken > 500,
		  "the nearest other slot from bounds is the scan's, with its distance (%d wrong, "
		  "%d of 600 taken)", slot_wrong, slot_taken);
}

/*
 * More rows than the labelling takes (SVC_LABEL_ROWS): its subset is
 * gathered in place in the fit's own copy of the rows now, not in a fresh
 * allocation, which must leave every byte of the model as it was (the
 * hashes of main at cbd9dd6, this build's flags), at 2 and at 70 columns.
 */
static void
test_label_subset_in_place(void)
{
	static const struct
	{
		int64_t		n;
		int32_t		d;
		uint64_t	hash;
	}			cases[] = {
		{3400, 2, UINT64_C(0x6d08027b07ebbebb)},
		{3100, 70, UINT64_C(0xbd97f867b46dae84)},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		int64_t		n = cases[c].n;
		int32_t		d = cases[c].d;
		double	   *b = blobs(n, 21 + c);
		double	   *x = malloc(sizeof(double) * (size_t) n * (size_t) d);
		SvcOptions	opt;
		SvcModel	m;
		SvcError	err;
		uint64_t	h = UINT64_C(0xcbf29ce484222325);

		/* the blobs' two columns, and mixtures of them for the others */
		for (int64_t i = 0; i < n; i++)
			for (int32_t j = 0; j < d; j++)
				x[(size_t) i * d + j] = j < 2 ? b[2 * i + j] :
					b[2 * i] * (double) (j % 5) * 0.25 - b[2 * i + 1] * (double) (j % 3) * 0.5;
		svc_options_default(&opt);
		opt.budget = 40;
		CHECK(svc_fit_rows(&svc_env_malloc, x, n, d, &opt, &m, &err) == SVC_OK,
			  "%lld x %d: fit: %s", (long long) n, d, err.message);
		{
			size_t		len = svc_model_encoded_size(&m);
			uint8_t    *enc = malloc(len);

			svc_model_encode(&m, enc);
			for (size_t i = 0; i < len; i++)
				h = (h ^ enc[i]) * UINT64_C(0x100000001b3);
			free(enc);
		}
		if (getenv("SVC_PRINT_PINS"))
			printf("%lld x %d: model hash 0x%016llx\n", (long long) n, d, (unsigned long long) h);
		CHECK(h == cases[c].hash, "%lld x %d: the model bytes of the pinned build (0x%016llx)",
			  (long long) n, d, (unsigned long long) h);
		svc_model_free(&svc_env_malloc, &m);
		free(b);
		free(x);
	}
}

int
main(void)
{
	test_label_subset_in_place();
	test_select_bounded();
	test_threshold_is_the_full_sums_quantile();
	test_select_double_is_the_sort();
	test_gamma_cover_is_the_pairs();
	test_select_nearest_replays_the_sort();
	test_select_nearest_cols_is_the_sort();
	test_sqdistf_bounds();
	test_nearest_slotf_near_ties();
	test_grow();
	test_solver_table();
	test_strategies_keep_budget();
	test_paper_threshold();
	test_fit_rows_extreme_magnitudes();
	test_seed_reproduces_bytes();
	test_model_round_trip_and_damage();
	test_degenerate_inputs();
	test_interrupt();
	test_passes_draw_each_row_once();
	test_gamma_auto_dimension();
	test_default_width_high_dims();
	test_sphere_width_high_dims();
	test_width_uncovered_rows();
	test_width_tables_16d();
	test_default_smallest_cluster();
	test_keep_isolated();
	test_fit_fails_and_stops_cleanly();
	test_bandwidth_k();
	return unit_summary("test_train");
}
