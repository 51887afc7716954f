/*
 * test_score.c - unit tests of the scorer (score.c, score_trajectory.c):
 * its kernel sums against the full sum, its clusters against the full
 * trajectory's
 */
#include "unit.h"
#include "unit_data.h"
#include "fit.h"
#include "score.h"
#include "score_internal.h"
#include "label_trajectory.h"
#include "kernel.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* n rows of five blobs in d dimensions, some spread wide as outliers. */
static double *
blobs_d(int64_t n, int32_t d, uint64_t seed)
{
	SvcRng		rng;
	double	   *x = malloc(sizeof(double) * (size_t) (n * d));

	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
		{
			double		noise = svc_rng_unit(&rng) + svc_rng_unit(&rng) - 1.0;

			x[i * d + j] = (i % 5) * 1.5 * (j % 3 + 1) + noise * (i % 41 == 0 ? 6.0 : 1.0);
		}
	return x;
}

/*
 * Score rows (scaled) with the scorer and the full routines; every
 * decision within the bound and of the same sign, every cluster equal.
 */
/*
 * The rows compare() checks: all, or under valgrind (where the full
 * trajectories it compares with take minutes) every STEP-th and the
 * last four (the far rows and an equilibrium, probe_rows).  Built with
 * --coverage, the share runs every line and branch of the core that all
 * the rows run.
 */
#define STEP 4
static int64_t
row_step(int64_t i, int64_t n)
{
	if (!under_valgrind() || i >= n - 4)
		return 1;
	return i + STEP < n - 4 ? STEP : n - 4 - i;
}

static void
compare(const char *what, const SvcModel *m, SvcScorer *s, const double *xs,
		int64_t n, double max_fallback_share)
{
	SvcLabelWork w;
	SvcError	err;
	int64_t		bad_f = 0,
				bad_sign = 0,
				bad_c = 0,
				bad_assign = 0,
				bad_alone = 0,
				bad_bound = 0,
				bad_sum = 0;
	double		worst = 0.0,
				worst_bound = 0.0;

	CHECK(svc_label_work_init(&svc_env_malloc, m, &w, &err) == SVC_OK, "%s: work", what);
	s->n_rows = s->n_fallback = 0;
	for (int64_t i = 0; i < n; i += row_step(i, n))
	{
		/*
		 * The pruned sum and its bound, from which the threshold is
		 * taken (fit.c): the full sum of the threshold within it.
		 */
		const double *x = xs + i * m->dims;
		double		sum_bound;
		double		sum = svc_scorer_sum_bound(s, x, &sum_bound);
		double		full = w.cols ?
			svc_kernel_sum_cols(w.cols, (size_t) m->n_sv, m->alpha, m->n_sv, m->dims, m->gamma, x) :
			svc_kernel_sum(m->sv, m->alpha, m->sv_gamma, m->n_sv, m->dims, m->gamma, x);

		if (!(fabs(full - sum) <= sum_bound))
			bad_sum++;
	}
	for (int64_t i = 0; i < n; i += row_step(i, n))
	{
		const double *x = xs + i * m->dims;
		double		f0 = svc_model_decision_scaled(m, x);
		double		f1 = svc_scorer_decision(s, x);
		double		f2;
		int32_t		c0 = svc_label_assign(m, x, &w, NULL);
		int32_t		c1 = svc_scorer_predict(s, x, &f2);
		/* without f asked for: the first point's sum as the rows go */
		int32_t		c2 = svc_scorer_predict(s, x, NULL);
		double		scale = fabs(f0 + m->offset) + fabs(m->offset);
		/*
		 * wide models sum float distances: f within 1e-4 of the scale
		 * (the bound the scorer keeps is checked below, row by row)
		 */
		double		tol = m->dims >= SVC_SCORE_WIDE_DIMS ? 1e-4 : 1e-11;

		worst = fmax(worst, fabs(f1 - f0) / scale);
		if (fabs(f1 - f0) > tol * scale)
			bad_f++;
		if ((f0 < 0) != (f1 < 0))
			bad_sign++;
		if (c0 != c1)
			bad_c++;
		if (c0 != c2)
			bad_alone++;
		if (f2 != f1)
			bad_assign++;
		{
			/* the error bound the scorer keeps covers the distance */
			double		bound;
			double		f3 = svc_scorer_decision_bound(s, x, &bound);

			if (f3 != f1 || fabs(f3 - f0) > bound)
			{
				if (f3 == f1 && bound > 0.0)
					worst_bound = fmax(worst_bound, fabs(f3 - f0) / bound);
				bad_bound++;
			}
		}
	}
	CHECK(bad_f == 0, "%s: %lld decisions off (worst %g relative)", what, (long long) bad_f, worst);
	CHECK(bad_bound == 0, "%s: %lld decisions outside the scorer's own bound (worst %g of it)",
		  what, (long long) bad_bound, worst_bound);
	CHECK(bad_sum == 0, "%s: %lld full kernel sums outside the scorer's bound", what,
		  (long long) bad_sum);
	CHECK(bad_sign == 0, "%s: %lld decisions of the other sign", what, (long long) bad_sign);
	CHECK(bad_c == 0, "%s: %lld clusters differ from the full trajectory's", what, (long long) bad_c);
	CHECK(bad_alone == 0, "%s: %lld clusters differ from the full trajectory's without f", what,
		  (long long) bad_alone);
	CHECK(bad_assign == 0, "%s: predict's decision differs from decision's on %lld rows", what,
		  (long long) bad_assign);
	CHECK(s->n_fallback <= max_fallback_share * (double) s->n_rows,
		  "%s: %lld of %lld rows ran the full trajectory", what,
		  (long long) s->n_fallback, (long long) s->n_rows);
	svc_label_work_free(&svc_env_malloc, &w);
}

/*
 * n embedding-like rows: one of k centres of an 8-dimensional latent space
 * plus a little spread, mapped linearly to d dimensions, plus noise, and
 * scaled to length 1 (as test/bench/wide_rows.c makes them).
 */
static double *
embed_d(int64_t n, int32_t d, int k, uint64_t seed)
{
	SvcRng		rng;
	double	   *x = malloc(sizeof(double) * (size_t) (n * d));
	double	   *map = malloc(sizeof(double) * (size_t) d * 8);
	double	   *cen = malloc(sizeof(double) * (size_t) k * 8);

	svc_rng_seed(&rng, seed);
	for (int32_t i = 0; i < d * 8; i++)
		map[i] = (svc_rng_unit(&rng) - 0.5) * 2.0;
	for (int i = 0; i < k * 8; i++)
		cen[i] = (svc_rng_unit(&rng) - 0.5) * 6.0;
	for (int64_t i = 0; i < n; i++)
	{
		double		z[8],
					norm = 0.0;
		int			c = (int) (i % k);

		for (int l = 0; l < 8; l++)
			z[l] = cen[c * 8 + l] + 0.3 * (svc_rng_unit(&rng) - 0.5);
		for (int32_t j = 0; j < d; j++)
		{
			double		v = 0.05 * (svc_rng_unit(&rng) - 0.5);

			for (int l = 0; l < 8; l++)
				v += map[j * 8 + l] * z[l];
			x[i * d + j] = v;
			norm += v * v;
		}
		for (int32_t j = 0; j < d; j++)
			x[i * d + j] /= sqrt(norm);
	}
	free(map);
	free(cen);
	return x;
}

/* a standard normal draw (Box-Muller) */
static double
gauss(SvcRng *rng)
{
	double		u = svc_rng_unit(rng);

	return sqrt(-2.0 * log(u > 0.0 ? u : 1e-300)) * cos(6.283185307179586 * svc_rng_unit(rng));
}

/*
 * n rows as test/bench/wide_rows.c makes them: k centres in a
 * 16-dimensional latent space (normal, drawn again while a cosine with an
 * earlier one passes 0.25), rows 0.2 around them, mapped by a normal
 * matrix of variance 1 / d to d dimensions, noise 0.02, scaled to length 1.
 */
static double *
latent16_d(int64_t n, int32_t d, int k, uint64_t seed)
{
	SvcRng		rng;
	double	   *x = malloc(sizeof(double) * (size_t) (n * d));
	double	   *map = malloc(sizeof(double) * (size_t) d * 16);
	double	   *cen = malloc(sizeof(double) * (size_t) k * 16);

	svc_rng_seed(&rng, seed);
	for (int32_t i = 0; i < d * 16; i++)
		map[i] = gauss(&rng) / sqrt((double) d);
	for (int c = 0; c < k; c++)
	{
		bool		near;
		int			tries = 0;

		do
		{
			near = false;
			for (int l = 0; l < 16; l++)
				cen[c * 16 + l] = gauss(&rng);
			for (int o = 0; o < c && !near && tries < 10000; o++)
			{
				double		dot = 0.0,
							nc = 0.0,
							no = 0.0;

				for (int l = 0; l < 16; l++)
				{
					dot += cen[c * 16 + l] * cen[o * 16 + l];
					nc += cen[c * 16 + l] * cen[c * 16 + l];
					no += cen[o * 16 + l] * cen[o * 16 + l];
				}
				near = dot > 0.25 * sqrt(nc * no);
			}
			tries++;
		} while (near);
	}
	for (int64_t i = 0; i < n; i++)
	{
		double		z[16],
					norm = 0.0;
		int			c = (int) svc_rng_below(&rng, (uint64_t) k);

		for (int l = 0; l < 16; l++)
			z[l] = cen[c * 16 + l] + 0.2 * gauss(&rng);
		for (int32_t j = 0; j < d; j++)
		{
			double		v = 0.02 * gauss(&rng);

			for (int l = 0; l < 16; l++)
				v += map[j * 16 + l] * z[l];
			x[i * d + j] = v;
			norm += v * v;
		}
		for (int32_t j = 0; j < d; j++)
			x[i * d + j] /= sqrt(norm);
	}
	free(map);
	free(cen);
	return x;
}

/* Rows to score: the training rows, a wide box around them, far rows. */
static double *
probe_rows(const SvcModel *m, const double *x, int64_t n, int64_t *count)
{
	int32_t		d = m->dims;
	int64_t		extra = 300,
				total = n + extra + 4;
	double	   *xs = malloc(sizeof(double) * (size_t) (total * d));
	SvcRng		rng;

	svc_rng_seed(&rng, 99);
	for (int64_t i = 0; i < n; i++)
		svc_model_scale_row(m, x + i * d, xs + i * d);
	for (int64_t i = n; i < n + extra; i++)
		for (int32_t j = 0; j < d; j++)
			xs[i * d + j] = 8.0 * (svc_rng_unit(&rng) - 0.5);
	for (int32_t j = 0; j < d; j++)
	{
		xs[(n + extra) * d + j] = 1e3;
		xs[(n + extra + 1) * d + j] = -1e30;
		xs[(n + extra + 2) * d + j] = j == 0 ? 1e200 : 0.0;
		xs[(n + extra + 3) * d + j] = m->eq[j];		/* an equilibrium */
	}
	*count = total;
	return xs;
}

static void
test_model(const char *what, int64_t n, int32_t d, const char *json,
		   double max_fallback_share, bool all_ways)
{
	/* a name starting "embed" asks for unit rows in 5 clusters */
	double	   *x = strncmp(what, "embed", 5) == 0 ? embed_d(n, d, 5, 7) : blobs_d(n, d, 7);
	SvcOptions	opt;
	SvcModel	m;
	SvcScorer	s;
	SvcError	err;
	int64_t		count;
	double	   *xs;

	memset(&m, 0, sizeof(m));
	CHECK(parse(json, &opt, &err) == SVC_OK, "%s: options", what);
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, d, &opt, &m, &err) == SVC_OK, "%s: fit: %s",
		  what, err.message);
	xs = probe_rows(&m, x, n, &count);
	CHECK(svc_scorer_init(&svc_env_malloc, &m, &s, &err) == SVC_OK, "%s: init", what);
	CHECK(svc_scorer_certify(&svc_env_malloc, &s, &err) == SVC_OK, "%s: certify", what);
	compare(what, &m, &s, xs, count, max_fallback_share);
	{
		/* past 2^332 the scorer bounds no sum: the caller takes the full one */
		double	   *far = calloc((size_t) d, sizeof(double));
		double		bound = 0.0;

		far[0] = 1e120;
		(void) svc_scorer_sum_bound(&s, far, &bound);
		CHECK(bound == HUGE_VAL, "%s: no bound for a row past 2^332", what);
		free(far);
	}

	/*
	 * Every allocation of the scorer's set-up failing in turn (the
	 * projection of wide models among them): an error, nothing leaked,
	 * until enough are left and it succeeds.
	 */
	{
		long		left = 0;

		for (;; left++)
		{
			UnitBudget	b = {left, 0};
			SvcEnv		env = {.alloc = unit_fail_after_alloc, .release = unit_counted_free,
			.realloc = unit_fail_after_realloc, .ctx = &b};
			SvcScorer	t;
			SvcStatus	st = svc_scorer_init(&env, &m, &t, &err);

			if (st == SVC_OK)
			{
				svc_scorer_free(&env, &t);
				CHECK(b.live == 0, "%s: init: %ld blocks left", what, b.live);
				break;
			}
			CHECK(st == SVC_ERR_NOMEM && err.status == SVC_ERR_NOMEM,
				  "%s: init with %ld allocations: %d", what, left, (int) st);
			CHECK(b.live == 0, "%s: init failing after %ld allocations: %ld blocks left",
				  what, left, b.live);
		}
		CHECK(left >= (d >= SVC_SCORE_WIDE_DIMS ? 30 : 20), "%s: init's allocations: %ld", what, left);
	}

	/*
	 * The distances to the equilibria and their columns are allocated at
	 * the first prediction: where that fails, every row takes the full
	 * trajectory (the same clusters) and nothing leaks.  With one
	 * allocation left, the distances get it and the columns (from 8
	 * equilibria) do not.
	 */
	for (long left = 0; left <= 1; left++)
	{
		UnitBudget	b = {1000000, 0};
		SvcEnv		env = {.alloc = unit_fail_after_alloc, .release = unit_counted_free,
		.realloc = unit_fail_after_realloc, .ctx = &b};
		SvcScorer	t;

		CHECK(svc_scorer_init(&env, &m, &t, &err) == SVC_OK &&
			  svc_scorer_certify(&env, &t, &err) == SVC_OK, "%s: init", what);
		b.left = left;
		compare(what, &m, &t, xs, count, 1.0);
		if (left == 0 || m.n_eq >= 8)
			CHECK(t.n_fallback == t.n_rows, "%s: %lld of %lld rows the full way with %ld allocations left",
				  what, (long long) t.n_fallback, (long long) t.n_rows, left);
		svc_scorer_free(&env, &t);
		CHECK(b.live == 0, "%s: %ld blocks left", what, b.live);
	}

	/* without certificates: snaps only, the same clusters */
	if (all_ways)
	{
		svc_free(&svc_env_malloc, s.basin);
		s.basin = NULL;
		compare(what, &m, &s, xs, count, 1.0);
	}
	svc_scorer_free(&svc_env_malloc, &s);

	/* a negative alpha: no climb to prove, every row the full way */
	if (all_ways && m.n_sv > 1)
	{
		m.alpha[0] = -m.alpha[0] * 0.5;
		CHECK(svc_scorer_init(&svc_env_malloc, &m, &s, &err) == SVC_OK, "%s: init", what);
		CHECK(!s.positive, "%s: a negative alpha is seen", what);
		compare(what, &m, &s, xs, count, 1.0);
		CHECK(s.n_fallback == s.n_rows, "%s: every row takes the full trajectory", what);
		svc_scorer_free(&svc_env_malloc, &s);
	}
	svc_model_free(&svc_env_malloc, &m);
	free(xs);
	free(x);
}

/*
 * The projection's bounds of the last pass against exact distances: each
 * half group's bound on its log terms, glnmass2 - (its least gamma_i lb_i),
 * must leave every slot of the half at least that least gamma_i lb_i away
 * (long double distances from the scorer's own slots), on every row
 * test_wide_bound scores.  The sums' check alone misses a bound that is
 * too high where it skips nothing more (the halves' bounds 5% too high in
 * gamma lb pass it; this check fails on every model).  Returns the slots
 * nearer than their half's bound.
 */
static int64_t
half_bounds_bad(const SvcScorer *s, const double *x)
{
	int32_t		d = s->dims;
	int64_t		bad = 0;

	if (!s->wide_on || s->n_proj == 0 || s->proj_off)
		return 0;
	for (int32_t h = 0; h < 2 * s->n_grp; h++)
	{
		long double least = (long double) s->glnmass2[h] - (long double) s->ghalf[h];

		for (int32_t t = h * 16; t < (h + 1) * 16 && t < s->n_blk * SVC_SCORE_BLOCK; t++)
		{
			const double *blk = s->st + (size_t) (t / SVC_SCORE_BLOCK) * SVC_SCORE_BLOCK * d;
			long double d2 = 0.0L;

			if (s->aabs[t] == 0.0)
				continue;		/* padding */
			for (int32_t j = 0; j < d; j++)
			{
				long double dj = (long double) x[j] - blk[(size_t) j * SVC_SCORE_BLOCK + t % SVC_SCORE_BLOCK];

				d2 += dj * dj;
			}
			if (!((long double) s->width[t] * d2 >= least))
				bad++;
		}
	}
	return bad;
}

/*
 * Wide models' kernel sums against a long double reference, row by row:
 * the pruned sum of float distances must lie within the bound the scorer
 * keeps (the projection that skips groups, the float distances, the exps),
 * whatever gamma (the fit's, far narrower, far wider), for the training
 * rows, rows far out (every term tiny, or the row's norm large for its
 * distances), rows near a support vector and rows at the origin.  And the
 * groups are skipped on some rows, or the test would not test them.
 */
static void
test_wide_bound(const char *what, int64_t n, int32_t d, const char *json)
{
	double	   *x = embed_d(n, d, 5, 11);
	/* the fit's, then narrower and wider (the widest: double distances) */
	double		gammas[] = {0.0, 1e-4, 0.03, 1.0, 2000.0};
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	SvcRng		rng;
	int64_t		nr = n + 40;
	double	   *xs = malloc(sizeof(double) * (size_t) (nr * d));

	memset(&m, 0, sizeof(m));
	CHECK(parse(json, &opt, &err) == SVC_OK, "%s: options", what);
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, d, &opt, &m, &err) == SVC_OK, "%s: fit: %s",
		  what, err.message);
	svc_rng_seed(&rng, 5);
	for (int64_t i = 0; i < n; i++)
		svc_model_scale_row(&m, x + i * d, xs + i * d);
	for (int64_t i = n; i < nr; i++)
	{
		int64_t		r = i - n;
		const double *sv = m.sv + (size_t) (r % m.n_sv) * d;

		for (int32_t j = 0; j < d; j++)
		{
			double		u = svc_rng_unit(&rng) - 0.5;

			switch (r % 4)
			{
				case 0:			/* near a support vector */
					xs[i * d + j] = sv[j] + 1e-3 * u;
					break;
				case 1:			/* far out: every term below e^-600 of 1 */
					xs[i * d + j] = sv[j] * 60.0 + u;
					break;
				case 2:			/* a few times the spread away */
					xs[i * d + j] = sv[j] * 3.0 + u;
					break;
				default:		/* the origin, nearly */
					xs[i * d + j] = 1e-12 * u;
					break;
			}
		}
	}
	for (size_t gi = 0; gi < sizeof(gammas) / sizeof(gammas[0]); gi++)
	{
		SvcScorer	s;
		int64_t		bad = 0,
					dropped = 0,
					halves,
					wide = 0,
					rows = 0,
					eq_rows = 0,
					eq_bad = 0,
					eq_useful = 0,
					half_bad = 0,
					cut_bad = 0;
		double		worst = 0.0,
				   *lb = malloc(sizeof(double) * (size_t) (m.n_eq > 0 ? m.n_eq : 1));

		if (gammas[gi] > 0.0)
			m.gamma = gammas[gi];
		CHECK(svc_scorer_init(&svc_env_malloc, &m, &s, &err) == SVC_OK, "%s: init", what);
		CHECK(s.n_proj > 0, "%s: a projection", what);
		for (int64_t i = 0; i < nr; i += row_step(i, nr))
		{
			const double *xi = xs + i * d;
			SvcScorePass ps;
			long double ref = 0.0L,
						refabs = 0.0L;

			if (!svc_scorer_row_in_range(&s, xi))
				continue;
			halves = s.n_half_drop;
			svc_scorer_pass_sum(&s, xi, &ps);
			CHECK(s.n_half_drop - halves <= ps.n_drop, "%s: a skipped half counts as skipped", what);
			half_bad += half_bounds_bad(&s, xi);
			/*
			 * the cut the README states: 2^-b with b = ceil(-log2 eta) + 5
			 * (eta = m 2^k, m in [1/2, 1): 1 - k + 5), so 2^-b is at most
			 * eta / 32 and more than eta / 64, within [2^-50, 2^-20]
			 */
			if (s.wide_on && !s.exact_steps && ps.eta > 0x1p-40)
			{
				int			k,
							b;

				(void) frexp(ps.eta, &k);
				b = 1 - k + 5;
				b = b < 20 ? 20 : b > 50 ? 50 : b;
				cut_bad += !(ps.prune == ldexp(1.0, -b));
			}
			for (int32_t t = 0; t < m.n_sv; t++)
			{
				long double d2 = 0.0L,
							k;
				const double *sv = m.sv + (size_t) t * d;
				double		g = m.sv_gamma ? m.sv_gamma[t] : m.gamma;

				for (int32_t j = 0; j < d; j++)
				{
					long double dj = (long double) xi[j] - sv[j];

					d2 += dj * dj;
				}
				k = expl(-(long double) g * d2);
				ref += m.alpha[t] * k;
				refabs += fabsl(m.alpha[t] * k);
			}
			/*
			 * the equilibria's distance bounds from the same pass: below
			 * the exact distances (long double), and some far above 0
			 */
			if (svc_scorer_eq_bounds(&s, lb))
			{
				eq_rows++;
				for (int32_t e = 0; e < m.n_eq; e++)
				{
					long double d2 = 0.0L;

					for (int32_t j = 0; j < d; j++)
					{
						long double dj = (long double) xi[j] - m.eq[(size_t) e * d + j];

						d2 += dj * dj;
					}
					if (!((long double) lb[e] <= sqrtl(d2)))
						eq_bad++;
					if ((long double) lb[e] > 0.5L * sqrtl(d2))
						eq_useful++;
				}
			}
			rows++;
			wide += s.wide_on;
			dropped += s.wide_on && ps.n_drop > 0;
			/*
			 * the double distances' bound is against the sum of the
			 * double distances' kernels (whose exponents carry the
			 * distances' rounding times gamma d^2), each distance summed
			 * as the scorer's double path sums it in this build (term by
			 * term in coordinate order), the float distances' against
			 * the exact one; the reference's own rounding is far below
			 * 1e-15 of its terms
			 */
			if (!s.wide_on)
			{
				ref = 0.0L;
				for (int32_t t = 0; t < m.n_sv; t++)
				{
					const double *sv = m.sv + (size_t) t * d;
					double		g = m.sv_gamma ? m.sv_gamma[t] : m.gamma,
								d2 = 0.0;

					for (int32_t j = 0; j < d; j++)
					{
						double		dj = xi[j] - sv[j];

						d2 += dj * dj;
					}
					ref += m.alpha[t] * expl(-(long double) g * d2);
				}
			}
			if (!(fabsl(ref - ps.lam) <= ps.lam_err + 1e-15L * refabs + 1e-300L))
			{
				bad++;
				if (ps.lam_err > 0.0)
					worst = fmax(worst, (double) (fabsl(ref - ps.lam) / ps.lam_err));
			}
		}
		CHECK(bad == 0, "%s, gamma %g: %lld sums outside the scorer's bound (worst %g of it)",
			  what, m.gamma, (long long) bad, worst);
		CHECK(eq_bad == 0, "%s, gamma %g: %lld distances to equilibria below their bound", what,
			  m.gamma, (long long) eq_bad);
		CHECK(half_bad == 0, "%s, gamma %g: %lld slots nearer than their half group's bound", what,
			  m.gamma, (long long) half_bad);
		CHECK(cut_bad == 0, "%s, gamma %g: %lld rows skip at another cut than 2^-5 of eta", what,
			  m.gamma, (long long) cut_bad);
		if (gi == 0)
			CHECK(m.n_eq > 0 && eq_rows == wide && eq_useful > eq_rows * m.n_eq / 2,
				  "%s: %lld of %lld rows x %d equilibria bounded above half their distance", what,
				  (long long) eq_useful, (long long) eq_rows, m.n_eq);
		free(lb);
		if (gammas[gi] < 1000.0)
			CHECK(wide > rows / 2, "%s, gamma %g: %lld rows took the float distances", what, m.gamma,
				  (long long) wide);
		if (gi == 0)
		{
			CHECK(dropped > rows / 4, "%s: groups skipped on %lld rows", what, (long long) dropped);
			/* and halves of the groups taken, by the same bound */
			CHECK(s.n_half_drop > rows / 4, "%s: %lld halves skipped on %lld rows", what,
				  (long long) s.n_half_drop, (long long) rows);
		}
		svc_scorer_free(&svc_env_malloc, &s);
	}
	svc_model_free(&svc_env_malloc, &m);
	free(xs);
	free(x);
}

/*
 * Wide rows' trajectories keep their track: a step's error bound from the
 * float distances counts the kept terms' spread around the row, not the
 * largest norm (which on rows as wide_rows.c makes them lost the track
 * of most rows that stepped more than twice, and sent them the full way),
 * and a row that loses it all the same is tracked again from its start
 * with double distances before the full trajectory.
 */
static void
test_wide_track(const char *what, int64_t n, int32_t d, double max_share)
{
	double	   *x = latent16_d(n, d, 20, 7),
			   *xs = malloc(sizeof(double) * (size_t) d);
	SvcOptions	opt;
	SvcModel	m;
	SvcScorer	s;
	SvcError	err;
	SvcLabelWork w;
	int64_t		bad = 0;

	memset(&m, 0, sizeof(m));
	CHECK(parse("{}", &opt, &err) == SVC_OK, "%s: options", what);
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, d, &opt, &m, &err) == SVC_OK, "%s: fit: %s",
		  what, err.message);
	CHECK(svc_scorer_init(&svc_env_malloc, &m, &s, &err) == SVC_OK, "%s: init", what);
	CHECK(svc_scorer_certify(&svc_env_malloc, &s, &err) == SVC_OK, "%s: certify", what);
	CHECK(svc_label_work_init(&svc_env_malloc, &m, &w, &err) == SVC_OK, "%s: work", what);
	for (int64_t i = 0; i < n; i++)
	{
		svc_model_scale_row(&m, x + i * d, xs);
		if (svc_scorer_predict(&s, xs, NULL) != svc_label_assign(&m, xs, &w, NULL))
			bad++;
	}
	if (getenv("TEST_SCORE_VERBOSE"))
		fprintf(stderr, "%s: %lld of %lld rows the full way, %lld tracked again\n", what,
				(long long) s.n_fallback, (long long) s.n_rows, (long long) s.n_retry);
	CHECK(bad == 0, "%s: %lld clusters differ from the full trajectory's", what, (long long) bad);
	CHECK(s.n_fallback <= max_share * (double) s.n_rows, "%s: %lld of %lld rows ran the full trajectory",
		  what, (long long) s.n_fallback, (long long) s.n_rows);
	CHECK(s.n_retry > 0, "%s: some rows tracked again with double distances", what);
	svc_label_work_free(&svc_env_malloc, &w);
	svc_scorer_free(&svc_env_malloc, &s);
	svc_model_free(&svc_env_malloc, &m);
	free(xs);
	free(x);
}

/*
 * A real[] row scaled from its floats (svc_model_scale_floats, svc_decision's
 * and svc_predict's path for real[]) gives the bits svc_model_scale_row gives
 * on the same values in double, at widths with and without a vector tail;
 * and any infinite or NaN element, wherever it is, is refused.
 */
static void
test_scale_floats(void)
{
	static const int32_t widths[] = {1, 2, 3, 7, 8, 9, 17, 128, 131, 768};
	float		special[] = {INFINITY, -INFINITY, NAN, -NAN};

	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
	{
		int32_t		d = widths[w];
		SvcModel	m;
		float	   *v = malloc(sizeof(float) * (size_t) d);
		double	   *vd = malloc(sizeof(double) * (size_t) d),
				   *a = malloc(sizeof(double) * (size_t) d),
				   *b = malloc(sizeof(double) * (size_t) d);
		bool		same = true,
					ok;

		memset(&m, 0, sizeof(m));
		m.dims = d;
		m.shift = malloc(sizeof(double) * (size_t) d);
		m.mul = malloc(sizeof(double) * (size_t) d);
		srand(7 + (unsigned) d);
		for (int32_t j = 0; j < d; j++)
		{
			m.shift[j] = (rand() / (double) RAND_MAX - 0.5) * 3.0;
			m.mul[j] = 0.1 + rand() / (double) RAND_MAX;
			/* the extremes too: the largest float, subnormals, zeros */
			v[j] = j % 5 == 1 ? (j % 2 ? FLT_MAX : -FLT_MAX) :
				j % 7 == 3 ? 1e-40f : j % 11 == 4 ? -0.0f :
				(float) ((rand() / (double) RAND_MAX - 0.5) * 100.0);
			vd[j] = (double) v[j];
		}
		ok = svc_model_scale_floats(&m, v, a);
		svc_model_scale_row(&m, vd, b);
		for (int32_t j = 0; j < d; j++)
			same = same && memcmp(&a[j], &b[j], sizeof(double)) == 0;
		CHECK(ok && same, "scale_floats at %d columns: finite %d, the same bits %d", d, ok, same);
		for (size_t k = 0; k < sizeof(special) / sizeof(special[0]); k++)
		{
			int32_t		at[] = {0, d / 2, d - 1};

			for (int i = 0; i < 3; i++)
			{
				float		keep = v[at[i]];

				v[at[i]] = special[k];
				CHECK(!svc_model_scale_floats(&m, v, a),
					  "scale_floats at %d columns: element %d %g not refused", d, at[i], special[k]);
				v[at[i]] = keep;
			}
		}
		free(m.shift);
		free(m.mul);
		free(v);
		free(vd);
		free(a);
		free(b);
	}
}

int
main(void)
{
	test_scale_floats();
	/* the benchmark's shape, smaller: most rows settle on a certificate */
	test_model("8-D blobs", 1500, 8, "{}", 0.05, true);
	test_model("2-D blobs", 600, 2, "{}", 1.0, true);
	test_model("8-D blobs, budget 50", 1000, 8, "{\"budget\": 50}", 0.5, false);
	test_model("2-D blobs, widths", 600, 2, "{\"bandwidth_k\": 15}", 1.0, false);
	test_model("2-D blobs, removal", 600, 2, "{\"strategy\": \"removal\"}", 1.0, false);
	test_model("3-D blobs, smo", 300, 3, "{\"solver\": \"smo\"}", 1.0, false);
	test_model("2-D blobs, one cluster", 600, 2, "{\"n_clusters\": 1}", 1.0, false);
	/* wide rows: the float distances (SVC_SCORE_WIDE_DIMS and more) */
	test_model("64-D blobs", 800, 64, "{\"budget\": 100}", 1.0, true);
	test_model("embed 128-D, gamma 8", 1000, 128, "{\"gamma\": 8, \"scale\": \"none\", \"budget\": 150}",
			   0.05, true);
	test_model("embed 300-D, widths", 600, 300,
			   "{\"gamma\": 4, \"scale\": \"none\", \"budget\": 80, \"bandwidth_k\": 5}", 1.0, false);
	/*
	 * 42 of 3000 rows the full way with the largest norm in the step's
	 * bound, 18 with the kept terms' spread, none once those are tracked
	 * again with double distances
	 */
	test_wide_track("wide_rows-like 256-D", 3000, 256, 0.001);
	test_wide_bound("wide bound 128-D", 800, 128, "{\"budget\": 150}");
	test_wide_bound("wide bound 768-D", 200, 768, "{\"gamma\": 40, \"scale\": \"none\", \"budget\": 60}");
	return unit_summary("test_score");
}
