/*
 * test_smo.c - the exact SVDD solver: feasibility, KKT, brute force, cache
 */
#include "kernel.h"
#include "smo.h"
#include "unit.h"
#include "unit_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double
kern(const double *x, int32_t d, double gamma, int64_t a, int64_t b)
{
	double		s = 0;

	for (int32_t k = 0; k < d; k++)
	{
		double		t = x[a * d + k] - x[b * d + k];

		s += t * t;
	}
	return exp(-gamma * s);
}

static double
bound(const SvcSmoParams *p, int64_t t)
{
	return p->c != NULL ? p->c[t] : p->c_all;
}

/* The lower bound L_t (signed rows) and the linear term of F on row t. */
static double
lower(const SvcSmoParams *p, int64_t t)
{
	return p->lo != NULL ? p->lo[t] : 0.0;
}

static double
linear(const SvcSmoParams *p, int64_t t)
{
	return p->margin != NULL ? -1 + 2 * p->margin[t] : -1;
}

/* Fresh gradient G = 2 K alpha - 1 into g (n doubles). */
static void
full_gradient(const double *x, int64_t n, int32_t d, double gamma,
			  const double *alpha, double *g)
{
	for (int64_t t = 0; t < n; t++)
	{
		double		s = 0;

		for (int64_t j = 0; j < n; j++)
			if (alpha[j] != 0)
				s += alpha[j] * kern(x, d, gamma, t, j);
		g[t] = 2 * s - 1;
	}
}

/* m - M from a fresh gradient; also the objective into *obj. */
static double
kkt_gap(const double *x, int64_t n, int32_t d, const SvcSmoParams *p,
		const double *alpha, double *obj)
{
	double	   *g = malloc(sizeof(double) * (size_t) n);
	double		m = -INFINITY,
				big_m = INFINITY,
				f = 0;

	full_gradient(x, n, d, p->gamma, alpha, g);
	for (int64_t t = 0; t < n; t++)
	{
		f += alpha[t] * (g[t] + 1) / 2 + linear(p, t) * alpha[t];
		g[t] += linear(p, t) + 1;	/* G = 2 K alpha + linear term */
		if (alpha[t] < bound(p, t) && -g[t] > m)
			m = -g[t];
		if (alpha[t] > lower(p, t) && -g[t] < big_m)
			big_m = -g[t];
	}
	free(g);
	if (obj != NULL)
		*obj = f;
	return isinf(m) || isinf(big_m) ? 0 : m - big_m;
}

/* sum = 1 to 1e-12 and the box; returns the number of violations */
static int
feasible(const SvcSmoParams *p, int64_t n, const double *alpha)
{
	double		sum = 0;
	int			bad = 0;

	for (int64_t t = 0; t < n; t++)
	{
		sum += alpha[t];
		if (!(alpha[t] >= lower(p, t) && alpha[t] <= bound(p, t)))
			bad++;
	}
	if (fabs(sum - 1) > 1e-12)
		bad++;
	return bad;
}

static double
decision(const double *x, int64_t n, int32_t d, double gamma,
		 const SvcSmoResult *r, const double *pt)
{
	return svc_kernel_sum(x, r->alpha, NULL, (int32_t) n, d, gamma, pt) - r->offset;
}

/* Solve A z = b (m x m, row-major, destroyed) by partial pivoting; false if singular. */
static bool
solve_linear(double *a, double *b, int m)
{
	for (int c = 0; c < m; c++)
	{
		int			piv = c;

		for (int r = c + 1; r < m; r++)
			if (fabs(a[r * m + c]) > fabs(a[piv * m + c]))
				piv = r;
		if (fabs(a[piv * m + c]) < 1e-13)
			return false;
		for (int k = 0; k < m; k++)
		{
			double		t = a[c * m + k];

			a[c * m + k] = a[piv * m + k];
			a[piv * m + k] = t;
		}
		{
			double		t = b[c];

			b[c] = b[piv];
			b[piv] = t;
		}
		for (int r = c + 1; r < m; r++)
		{
			double		f = a[r * m + c] / a[c * m + c];

			for (int k = c; k < m; k++)
				a[r * m + k] -= f * a[c * m + k];
			b[r] -= f * b[c];
		}
	}
	for (int c = m - 1; c >= 0; c--)
	{
		for (int k = c + 1; k < m; k++)
			b[c] -= a[c * m + k] * b[k];
		b[c] /= a[c * m + c];
	}
	return true;
}

/*
 * Exact minimum by enumerating every active set of n <= 8 rows: each row
 * at L_t (0 unless signed), at C_t or free; the free ones solve the
 * equality-constrained KKT system 2 K_FF a_F - lambda 1 = -lin_F - 2 K_FB a_B,
 * sum a_F = 1 - sum a_B (lin the linear term, -1 on unsigned rows).
 * The objective is convex, so the least feasible candidate is the optimum.
 */
static double
brute_force(const double *x, int n, int32_t d, const SvcSmoParams *p)
{
	double		best = INFINITY;
	int			total = 1;

	for (int k = 0; k < n; k++)
		total *= 3;
	for (int code = 0; code < total; code++)
	{
		int			st[8],
					fr[8],
					nf = 0,
					c = code;
		double		a[8],
					rest = 1,
					mat[81],
					rhs[9],
					f = 0;
		bool		ok = true;

		for (int k = 0; k < n; k++)
		{
			st[k] = c % 3;
			c /= 3;
			a[k] = st[k] == 1 ? bound(p, k) : lower(p, k);
			if (st[k] == 2)
				fr[nf++] = k;
			else
				rest -= a[k];
		}
		if (nf == 0)
		{
			if (fabs(rest) > 1e-12)
				continue;
		}
		else
		{
			int			m = nf + 1;

			for (int r = 0; r < nf; r++)
			{
				double		s = -linear(p, fr[r]);

				for (int k = 0; k < nf; k++)
					mat[r * m + k] = 2 * kern(x, d, p->gamma, fr[r], fr[k]);
				mat[r * m + nf] = -1;
				for (int k = 0; k < n; k++)
					if (st[k] != 2)
						s -= 2 * kern(x, d, p->gamma, fr[r], k) * a[k];
				rhs[r] = s;
			}
			for (int k = 0; k < nf; k++)
				mat[nf * m + k] = 1;
			mat[nf * m + nf] = 0;
			rhs[nf] = rest;
			if (!solve_linear(mat, rhs, m))
				continue;
			for (int k = 0; k < nf; k++)
			{
				if (rhs[k] < lower(p, fr[k]) - 1e-12 || rhs[k] > bound(p, fr[k]) + 1e-12)
					ok = false;
				a[fr[k]] = rhs[k];
			}
			if (!ok)
				continue;
		}
		for (int r = 0; r < n; r++)
			for (int k = 0; k < n; k++)
				f += a[r] * a[k] * kern(x, d, p->gamma, r, k);
		for (int r = 0; r < n; r++)
			f += linear(p, r) * a[r];
		if (f < best)
			best = f;
	}
	return best;
}

static SvcSmoParams
params(double gamma, double c_all, double eps)
{
	SvcSmoParams p;

	svc_smo_params_default(&p);
	p.gamma = gamma;
	p.c_all = c_all;
	p.eps = eps;
	return p;
}

static void
test_feasible_and_kkt(void)
{
	int64_t		n = 300;
	double	   *x = blobs(n, 7);
	static const double eps[] = {1e-3, 1e-6};
	static const double nus[] = {0.05, 0.3, 0.9};

	for (int e = 0; e < 2; e++)
		for (int v = 0; v < 3; v++)
		{
			SvcSmoParams p = params(0.7, 1.0 / (nus[v] * (double) n), eps[e]);
			SvcSmoResult r;
			SvcError	err;
			SvcStatus	st = svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err);
			double		obj,
						gap;

			CHECK(st == SVC_OK, "solve: %s", err.message);
			if (st != SVC_OK)
				continue;
			gap = kkt_gap(x, n, 2, &p, r.alpha, &obj);
			CHECK(r.converged, "converged at eps %g nu %g", eps[e], nus[v]);
			CHECK(feasible(&p, n, r.alpha) == 0, "feasible at nu %g", nus[v]);
			CHECK(gap < eps[e] + 1e-10, "fresh KKT gap %g < eps %g", gap, eps[e]);
			CHECK(fabs(gap - r.gap) < 1e-9, "reported gap %g vs fresh %g", r.gap, gap);
			CHECK(fabs(obj - r.objective) < 1e-10, "objective %.15g vs %.15g",
				  r.objective, obj);
			/* nu-property: outliers <= nu n <= support vectors */
			CHECK(r.n_bound <= nus[v] * n + 1e-9 && r.n_bound + r.n_free >= nus[v] * n - 1e-9,
				  "bound %lld, free %lld, nu n %g", (long long) r.n_bound,
				  (long long) r.n_free, nus[v] * n);
			/* f = 0 on the free SVs (to the precision eps allows) */
			for (int64_t t = 0; t < n; t++)
				if (r.alpha[t] > 0 && r.alpha[t] < p.c_all)
				{
					double		f = decision(x, n, 2, p.gamma, &r, x + 2 * t);

					CHECK(fabs(f) < eps[e], "f = %g on free SV %lld", f, (long long) t);
					break;
				}
			svc_smo_result_free(&svc_env_malloc, &r);
			CHECK(r.alpha == NULL, "freed");
		}
	free(x);
}

static void
test_brute_force(void)
{
	static const double cs[] = {0.2, 0.25, 0.4, 1.0};
	static const double gammas[] = {0.05, 0.5, 3.0};
	double		percol[6] = {0.1, 0.3, 0.05, 0.5, 0.2, 0.0};

	for (uint64_t seed = 1; seed <= 3; seed++)
	{
		double	   *x = blobs(6, seed * 11);

		for (int g = 0; g < 3; g++)
			for (int c = 0; c < 5; c++)
			{
				SvcSmoParams p = params(gammas[g], c < 4 ? cs[c] : 0, 1e-12);
				SvcSmoResult r;
				SvcError	err;
				double		want,
							gap;

				if (c == 4)
					p.c = percol;
				p.max_iter = 100000;
				CHECK(svc_smo_solve(&svc_env_malloc, x, 6, 2, &p, &r, &err) == SVC_OK,
					  "solve: %s", err.message);
				want = brute_force(x, 6, 2, &p);
				gap = kkt_gap(x, 6, 2, &p, r.alpha, NULL);
				CHECK(fabs(r.objective - want) < 1e-9,
					  "seed %d gamma %g C %d: objective %.15g, brute force %.15g",
					  (int) seed, gammas[g], c, r.objective, want);
				CHECK(feasible(&p, 6, r.alpha) == 0 && gap < 1e-11, "feasible, gap %g", gap);
				CHECK(c != 4 || r.alpha[5] == 0, "C_5 = 0 keeps alpha_5 = 0");
				svc_smo_result_free(&svc_env_malloc, &r);
			}
		free(x);
	}
}

/* Cache sizes and shrinking change the path, not the optimum. */
static void
test_cache_and_shrinking_agree(void)
{
	int64_t		n = 400;
	double	   *x = blobs(n, 3);
	double	   *ref = NULL;
	int64_t		misses_small = 0,
				misses_big = 0;

	for (int cfg = 0; cfg < 4; cfg++)
	{
		SvcSmoParams p = params(1.0, 1.0 / (0.15 * (double) n), 1e-10);
		SvcSmoResult r;
		SvcError	err;
		double		diff = 0;

		p.cache_bytes = (cfg & 1) ? (size_t) 3 * 8 * (size_t) n : (size_t) 1 << 30;
		p.shrinking = (cfg & 2) != 0;
		CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) == SVC_OK,
			  "solve: %s", err.message);
		CHECK(r.converged && feasible(&p, n, r.alpha) == 0, "cfg %d feasible", cfg);
		CHECK(r.cache_hits + r.cache_misses > 0, "cache used");
		if (cfg == 0)
		{
			ref = r.alpha;
			misses_big = r.cache_misses;
			CHECK(misses_big <= n, "unlimited cache computes a column at most once: %lld",
				  (long long) misses_big);
			continue;
		}
		if (cfg == 1)
			misses_small = r.cache_misses;
		for (int64_t t = 0; t < n; t++)
			diff = fmax(diff, fabs(r.alpha[t] - ref[t]));
		CHECK(diff < 1e-8, "cfg %d: alpha differs by %g", cfg, diff);
		svc_smo_result_free(&svc_env_malloc, &r);
	}
	CHECK(misses_small > misses_big, "a 3-column cache misses more (%lld vs %lld)",
		  (long long) misses_small, (long long) misses_big);
	free(ref);
	free(x);
}

static void
test_duplicates_and_edges(void)
{
	SvcError	err;
	SvcSmoResult r;

	/* duplicate rows: each row of a blob three times */
	{
		int64_t		n = 120;
		double	   *b = blobs(n / 3, 5);
		double	   *x = malloc(sizeof(double) * 2 * (size_t) n);
		SvcSmoParams p = params(0.8, 1.0 / (0.2 * (double) n), 1e-8);

		for (int64_t t = 0; t < n; t++)
			memcpy(x + 2 * t, b + 2 * (t % (n / 3)), 2 * sizeof(double));
		CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) == SVC_OK,
			  "duplicates: %s", err.message);
		CHECK(r.converged && feasible(&p, n, r.alpha) == 0, "duplicates feasible");
		CHECK(kkt_gap(x, n, 2, &p, r.alpha, NULL) < 1e-8, "duplicates KKT");
		svc_smo_result_free(&svc_env_malloc, &r);
		free(x);
		free(b);
	}
	/* one row: alpha = 1, f = 0 on it */
	for (int c = 0; c < 2; c++)
	{
		double		x[3] = {1, 2, 3};
		SvcSmoParams p = params(0.5, c == 0 ? 1.0 : 5.0, 1e-3);

		CHECK(svc_smo_solve(&svc_env_malloc, x, 1, 3, &p, &r, &err) == SVC_OK,
			  "one row: %s", err.message);
		CHECK(r.alpha[0] == 1 && r.converged && r.iterations == 0, "one row alpha %g",
			  r.alpha[0]);
		CHECK(fabs(r.offset - 1) < 1e-15 && fabs(r.r2) < 1e-15, "one row offset %g r2 %g",
			  r.offset, r.r2);
		CHECK(r.n_free + r.n_bound == 1 && r.n_bound == (c == 0), "one row counts");
		svc_smo_result_free(&svc_env_malloc, &r);
	}
	/* C = 1/n: every alpha at the bound */
	{
		int64_t		n = 97;
		double	   *x = blobs(n, 9);
		SvcSmoParams p = params(0.5, 1.0 / (double) n, 1e-3);
		int			bad = 0;

		CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) == SVC_OK,
			  "C = 1/n: %s", err.message);
		for (int64_t t = 0; t < n; t++)
			bad += r.alpha[t] != p.c_all;
		CHECK(bad == 0 && r.converged && r.n_bound == n && r.n_free == 0,
			  "C = 1/n: %d rows off the bound", bad);
		CHECK(feasible(&p, n, r.alpha) == 0, "C = 1/n sums to 1");
		/* all outside or on the sphere */
		for (int64_t t = 0; t < n; t++)
			if (decision(x, n, 2, p.gamma, &r, x + 2 * t) > 1e-12)
				bad++;
		CHECK(bad == 0, "C = 1/n: %d rows inside", bad);
		svc_smo_result_free(&svc_env_malloc, &r);
		free(x);
	}
	/* per-row C_i */
	{
		int64_t		n = 200;
		double	   *x = blobs(n, 13);
		double	   *c = malloc(sizeof(double) * (size_t) n);
		SvcSmoParams p = params(0.6, 0, 1e-7);
		SvcRng		rng;
		int			bad = 0;

		svc_rng_seed(&rng, 4);
		for (int64_t t = 0; t < n; t++)
			c[t] = t % 7 == 0 ? 0 : 0.002 + 0.05 * svc_rng_unit(&rng);
		p.c = c;
		CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) == SVC_OK,
			  "per-row C: %s", err.message);
		CHECK(r.converged && feasible(&p, n, r.alpha) == 0, "per-row C feasible");
		CHECK(kkt_gap(x, n, 2, &p, r.alpha, NULL) < 1e-7, "per-row C KKT");
		for (int64_t t = 0; t < n; t += 7)
			bad += r.alpha[t] != 0;
		CHECK(bad == 0, "C_i = 0 rows stay at 0");
		svc_smo_result_free(&svc_env_malloc, &r);
		free(c);
		free(x);
	}
	/* refusals */
	{
		int64_t		n = 50;
		double	   *x = blobs(n, 2);
		SvcSmoParams p = params(0.5, 0.9 / (double) n, 1e-3);

		CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) ==
			  SVC_ERR_INVALID_PARAMETER && r.alpha == NULL, "sum C < 1 refused");
		CHECK(strstr(err.message, "less than 1") != NULL, "message: %s", err.message);
		p = params(NAN, 1, 1e-3);
		CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) ==
			  SVC_ERR_INVALID_PARAMETER, "NaN gamma refused");
		p = params(1, -1, 1e-3);
		CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) ==
			  SVC_ERR_INVALID_PARAMETER, "negative C refused");
		p = params(1, 1, 0);
		CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) ==
			  SVC_ERR_INVALID_PARAMETER, "eps 0 refused");
		x[7] = INFINITY;
		p = params(1, 1, 1e-3);
		CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) ==
			  SVC_ERR_INVALID_INPUT, "infinite value refused");
		free(x);
	}
	/* max_iter: feasible, not converged */
	{
		int64_t		n = 300;
		double	   *x = blobs(n, 21);
		SvcSmoParams p = params(0.5, 1.0 / (0.1 * (double) n), 1e-9);

		p.max_iter = 5;
		CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) == SVC_OK,
			  "max_iter: %s", err.message);
		CHECK(!r.converged && r.iterations == 5 && feasible(&p, n, r.alpha) == 0,
			  "max_iter stops feasible, converged %d", (int) r.converged);
		CHECK(fabs(kkt_gap(x, n, 2, &p, r.alpha, NULL) - r.gap) < 1e-9, "gap reported");
		svc_smo_result_free(&svc_env_malloc, &r);
		free(x);
	}
}

/*
 * run's exits under every allocation failing in turn, then an interrupt
 * at every check: each returns NOMEM or INTERRUPTED with no multipliers
 * and nothing left allocated, until one succeeds (after at least two).
 */
typedef SvcStatus (*SmoRun) (const SvcEnv *env, bool interrupts, const void *ctx,
							 SvcSmoResult *r);

static void
check_exits(const char *what, SmoRun run, const void *ctx)
{
	for (int interrupts = 0; interrupts < 2; interrupts++)
	{
		int			bad = 0;
		long		k;

		for (k = 0; k < 100000; k++)
		{
			UnitBudget	b = {k, 0};
			SvcEnv		fail_alloc = {.alloc = unit_fail_after_alloc, .release = unit_counted_free, .realloc = unit_fail_after_realloc, .ctx = &b};
			SvcEnv		stop = {.alloc = unit_counted_alloc, .release = unit_counted_free, .interrupt = unit_stop_after, .realloc = unit_counted_realloc, .ctx = &b};
			const SvcEnv *env = interrupts ? &stop : &fail_alloc;
			SvcStatus	expected = interrupts ? SVC_ERR_INTERRUPTED : SVC_ERR_NOMEM;
			SvcSmoResult r;
			SvcStatus	st;

			st = run(env, interrupts, ctx, &r);
			if (st != SVC_OK && (st != expected || r.alpha != NULL))
				bad++;
			svc_smo_result_free(env, &r);
			if (b.live != 0)
				bad++;
			if (st == SVC_OK)
				break;
		}
		CHECK(bad == 0 && k >= 2, "%s, %s: %d bad exits, succeeded at %ld", what,
			  interrupts ? "interrupts" : "allocations", bad, k);
	}
}

static SvcStatus
run_solve(const SvcEnv *env, bool interrupts, const void *ctx, SvcSmoResult *r)
{
	int64_t		n = 150;
	/* a tight eps makes many thousand iterations, many interrupt calls */
	SvcSmoParams p = params(2.0, 1.0 / (0.1 * (double) n), interrupts ? 1e-12 : 1e-6);
	SvcError	err;

	p.cache_bytes = 5 * 8 * (size_t) n;
	p.max_iter = interrupts ? 0 : 3000;
	return svc_smo_solve(env, ctx, n, 2, &p, r, &err);
}

/* The solver's exits: 150 rows. */
static void
test_failures(void)
{
	double	   *x = blobs(150, 17);

	check_exits("solve", run_solve, x);
	free(x);
}

typedef struct RefineCase
{
	const double *x;
	int64_t		n;
	SvcSmoParams p;
	const double *alpha;
} RefineCase;

static SvcStatus
run_refine(const SvcEnv *env, bool interrupts, const void *ctx, SvcSmoResult *r)
{
	const RefineCase *c = ctx;
	SvcError	err;

	(void) interrupts;
	return svc_smo_refine(env, c->x, c->n, 2, &c->p, c->alpha, r, &err);
}

/* The refinement's exits, from a coarse solution of 150 rows. */
static void
test_refine_failures(void)
{
	RefineCase	c = {.n = 150};
	double	   *x = blobs(c.n, 23);
	SvcSmoResult coarse;
	SvcError	err;

	c.x = x;
	c.p = params(2.0, 1.0 / (0.1 * (double) c.n), 1e-2);
	c.p.max_iter = 3000;
	CHECK(svc_smo_solve(&svc_env_malloc, x, c.n, 2, &c.p, &coarse, &err) == SVC_OK,
		  "coarse solve: %s", err.message);
	c.p.eps = 1e-9;
	c.alpha = coarse.alpha;
	check_exits("refine", run_refine, &c);
	svc_smo_result_free(&svc_env_malloc, &coarse);
	free(x);
}

/* 2000 rows at nu = 0.1: about 90 % inside; blob centres in, far points out. */
static void
test_nu_fraction_and_sign(void)
{
	int64_t		n = under_valgrind() ? 600 : 2000;
	double	   *x = blobs(n, 31);
	double		nu = 0.1;
	SvcSmoParams p = params(0.5, 1.0 / (nu * (double) n), 1e-6);
	SvcSmoResult r;
	SvcError	err;
	int64_t		inside = 0;
	static const double deep[3][2] = {{0, 0}, {6, 0}, {3, 5}};
	static const double far[3][2] = {{30, 30}, {-10, 0}, {3, 2}};

	CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) == SVC_OK,
		  "solve: %s", err.message);
	CHECK(r.converged, "converged in %lld iterations", (long long) r.iterations);
	for (int64_t t = 0; t < n; t++)
		inside += decision(x, n, 2, p.gamma, &r, x + 2 * t) >= -1e-6;
	CHECK(fabs((double) inside / (double) n - (1 - nu)) < 0.02,
		  "%lld of %lld rows inside, expected about %g", (long long) inside,
		  (long long) n, 1 - nu);
	for (int c = 0; c < 3; c++)
	{
		double		fin = decision(x, n, 2, p.gamma, &r, deep[c]),
					fout = decision(x, n, 2, p.gamma, &r, far[c]);

		CHECK(fin > 0, "blob centre %d: f = %g > 0", c, fin);
		CHECK(fout < 0, "far point %d: f = %g < 0", c, fout);
	}
	/* R^2 - ||phi(x) - centre||^2 = 2 f(x) */
	{
		double		q = 0,
					s = svc_kernel_sum(x, r.alpha, NULL, (int32_t) n, 2, p.gamma, far[2]);
		double	   *g = malloc(sizeof(double) * (size_t) n);

		full_gradient(x, n, 2, p.gamma, r.alpha, g);
		for (int64_t t = 0; t < n; t++)
			q += r.alpha[t] * (g[t] + 1) / 2;
		CHECK(fabs(r.r2 - (1 - 2 * s + q) - 2 * (s - r.offset)) < 1e-12, "R^2 identity");
		free(g);
	}
	svc_smo_result_free(&svc_env_malloc, &r);
	free(x);
}

/*
 * Signed rows (SVDD with negative examples): alpha_t in [L_t, 0] and the
 * margin's linear term.  Tiny sets against the brute force, KKT and the
 * box; the signed rows at 0 or free end at f <= -margin (to the tolerance);
 * on blobs the rows planted at a blob's edge are inside without their sign
 * and outside with it, whatever the cache and shrinking.
 */
static void
test_signed(void)
{
	static const double gammas[] = {0.05, 0.5, 3.0};
	static const double margins[] = {0.0, 0.01};
	static const double lows[] = {-0.05, -0.3, -2.0};
	int			at_lower = 0,
				at_zero = 0,
				free_rows = 0;

	for (uint64_t seed = 1; seed <= 3; seed++)
	{
		double	   *x = blobs(6, seed * 13);

		for (int g = 0; g < 3; g++)
			for (int mg = 0; mg < 2; mg++)
				for (int l = 0; l < 3; l++)
				{
					double		c[6] = {0.4, 0.4, 0.4, 0.4, 0, 0};
					double		lo[6] = {0, 0, 0, 0, lows[l], lows[(l + 1) % 3]};
					SvcSmoParams p = params(gammas[g], 0, 1e-12);
					SvcSmoResult r;
					SvcError	err;
					double		want,
								gap;

					double		mrow[6] = {-margins[mg], 0, 0, 0, margins[mg], margins[mg]};

					p.c = c;
					p.lo = lo;
					p.margin = mrow;
					p.max_iter = 100000;
					CHECK(svc_smo_solve(&svc_env_malloc, x, 6, 2, &p, &r, &err) == SVC_OK,
						  "signed solve: %s", err.message);
					want = brute_force(x, 6, 2, &p);
					gap = kkt_gap(x, 6, 2, &p, r.alpha, NULL);
					CHECK(fabs(r.objective - want) < 1e-9,
						  "signed seed %d gamma %g margin %g L %d: objective %.15g, brute force %.15g",
						  (int) seed, gammas[g], margins[mg], l, r.objective, want);
					CHECK(feasible(&p, 6, r.alpha) == 0 && gap < 1e-11,
						  "signed: feasible, gap %g", gap);
					if (r.alpha[0] < c[0])
					{
						double		f0 = decision(x, 6, 2, p.gamma, &r, x);

						CHECK(f0 >= margins[mg] - 1e-9, "a row with a negative margin below C: "
							  "f %g >= %g", f0, margins[mg]);
					}
					for (int t = 4; t < 6; t++)
					{
						double		f = decision(x, 6, 2, p.gamma, &r, x + 2 * t);

						CHECK(r.alpha[t] <= 0 && r.alpha[t] >= lo[t], "signed alpha in [L, 0]");
						if (r.alpha[t] <= lo[t])
						{
							at_lower++;
							CHECK(f >= -margins[mg] - 1e-9, "at L: inside the margin (%g)", f);
						}
						else
						{
							at_zero += r.alpha[t] == 0;
							free_rows += r.alpha[t] < 0;
							CHECK(f <= -margins[mg] + 1e-9, "signed row at 0 or free: f %g <= -%g",
								  f, margins[mg]);
						}
					}
					svc_smo_result_free(&svc_env_malloc, &r);
				}
		free(x);
	}
	CHECK(at_lower > 0 && at_zero > 0 && free_rows > 0,
		  "the tiny sets cover every case: %d at L, %d at 0, %d free", at_lower, at_zero, free_rows);

	/* blobs with rows planted at a blob's edge */
	{
		int64_t		base = 300,
					n = base + 6;
		double	   *b = blobs(base, 5);
		double	   *x = malloc(sizeof(double) * 2 * (size_t) n);
		double	   *c = malloc(sizeof(double) * (size_t) n);
		double	   *lo = malloc(sizeof(double) * (size_t) n);
		double	   *mrow = malloc(sizeof(double) * (size_t) n);
		double		c_all = 1.0 / (0.05 * (double) n);
		int			inside_plain = 0;
		SvcSmoResult ref;

		memcpy(x, b, sizeof(double) * 2 * (size_t) base);
		free(b);
		for (int64_t i = base; i < n; i++)
		{
			/* near the mean of the first rows: inside without a sign */
			x[2 * i] = x[2 * (i - base) * 3] + 0.05;
			x[2 * i + 1] = x[2 * (i - base) * 3 + 1] - 0.05;
		}
		for (int v = 0; v < 3; v++)
		{
			SvcSmoParams p = params(2.0, c_all, 1e-8);
			SvcSmoResult r;
			SvcError	err;
			int			outside = 0;

			for (int64_t i = 0; i < n; i++)
			{
				c[i] = i < base ? c_all : 0;
				lo[i] = i < base ? 0 : -10 * c_all;
			}
			if (v > 0)
			{
				for (int64_t i = 0; i < n; i++)
					mrow[i] = i < base ? 0 : p.eps;
				p.c = c;
				p.lo = lo;
				p.margin = mrow;
				p.shrinking = v == 1;
				p.cache_bytes = v == 1 ? p.cache_bytes : 16 * sizeof(double) * (size_t) n;
			}
			CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &r, &err) == SVC_OK,
				  "blobs signed solve: %s", err.message);
			for (int64_t i = base; i < n; i++)
			{
				double		f = decision(x, n, 2, p.gamma, &r, x + 2 * i);

				outside += f < 0;
				if (v == 0)
					inside_plain += f >= 0;
				else
					CHECK(f < -p.eps / 4, "planted row %lld: f %g < 0", (long long) i, f);
			}
			if (v > 0)
				CHECK(outside == 6 && kkt_gap(x, n, 2, &p, r.alpha, NULL) < p.eps,
					  "every signed row outside (%d of 6), KKT to eps", outside);
			if (v == 2)
			{
				double		diff = 0;

				for (int64_t i = 0; i < n; i++)
					diff = fmax(diff, fabs(r.alpha[i] - ref.alpha[i]));
				CHECK(diff < 1e-3 * c_all && fabs(r.objective - ref.objective) < 1e-10,
					  "shrinking and a small cache agree: %g", diff);
				svc_smo_result_free(&svc_env_malloc, &ref);
			}
			if (v == 1)
				ref = r;
			else
				svc_smo_result_free(&svc_env_malloc, &r);
		}
		CHECK(inside_plain >= 4, "the planted rows are inside without a sign (%d of 6)",
			  inside_plain);
		free(x);
		free(c);
		free(lo);
		free(mrow);
	}

	/* refused: a lower bound above 0, or one with C_t > 0, or a bad margin */
	{
		double	   *x = blobs(4, 3);
		double		lo[4] = {0, 0, 0, -0.5};
		double		c[4] = {1, 1, 1, 0};
		SvcSmoParams p = params(1.0, 1.0, 1e-3);
		SvcSmoResult r;
		SvcError	err;

		p.lo = lo;
		CHECK(svc_smo_solve(&svc_env_malloc, x, 4, 2, &p, &r, &err) == SVC_ERR_INVALID_PARAMETER,
			  "L < 0 with C > 0 refused");
		double		mbad[4] = {0, 0, 0, NAN};

		p.c = c;
		p.margin = mbad;
		CHECK(svc_smo_solve(&svc_env_malloc, x, 4, 2, &p, &r, &err) == SVC_ERR_INVALID_PARAMETER,
			  "a NaN margin refused");
		p.margin = NULL;
		lo[0] = 0.1;
		CHECK(svc_smo_solve(&svc_env_malloc, x, 4, 2, &p, &r, &err) == SVC_ERR_INVALID_PARAMETER,
			  "L > 0 refused");
		lo[0] = 0;
		CHECK(svc_smo_solve(&svc_env_malloc, x, 4, 2, &p, &r, &err) == SVC_OK && r.alpha[3] <= 0,
			  "valid: %s", err.message);
		svc_smo_result_free(&svc_env_malloc, &r);
		free(x);
	}
}

/*
 * svc_smo_refine: from a coarse solution to a fine eps over every row
 * (the fresh gap, not the subset's), F no higher than the start's and
 * within the fine eps of a direct fine solve; rows at 0 in the coarse
 * solution that the finer sphere needs join (the completion); signed rows
 * with margins keep their bounds.
 */
static void
test_refine(void)
{
	int64_t		n = 500;
	double	   *x = blobs(n, 11);
	double	   *lo = calloc((size_t) n, sizeof(double));
	double	   *cc = malloc(sizeof(double) * (size_t) n);
	double	   *mg = calloc((size_t) n, sizeof(double));

	for (int signed_rows = 0; signed_rows < 2; signed_rows++)
	{
		SvcSmoParams p = params(2.0, 1.0 / (0.05 * (double) n), 2e-2);
		SvcSmoResult coarse,
					fine,
					direct;
		SvcError	err;
		double		obj;
		int64_t		joined = 0;

		if (signed_rows)
		{
			for (int64_t t = 0; t < n; t++)
			{
				cc[t] = t % 50 == 7 ? 0.0 : p.c_all;
				lo[t] = t % 50 == 7 ? -p.c_all : 0.0;
				mg[t] = t % 50 == 7 ? p.eps : 0.0;
			}
			p.c = cc;
			p.lo = lo;
			p.margin = mg;
		}
		CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &coarse, &err) == SVC_OK,
			  "coarse solve: %s", err.message);
		p.eps = 1e-7;
		CHECK(svc_smo_refine(&svc_env_malloc, x, n, 2, &p, coarse.alpha, &fine, &err) ==
			  SVC_OK, "refine: %s", err.message);
		CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &direct, &err) == SVC_OK,
			  "direct fine solve: %s", err.message);
		CHECK(kkt_gap(x, n, 2, &p, coarse.alpha, NULL) > 1e-5,
			  "signed %d: the coarse solution is coarse", signed_rows);
		CHECK(feasible(&p, n, fine.alpha) == 0, "signed %d: refined feasible", signed_rows);
		CHECK(kkt_gap(x, n, 2, &p, fine.alpha, &obj) < p.eps + 1e-12,
			  "signed %d: fresh gap %g over every row < %g", signed_rows,
			  kkt_gap(x, n, 2, &p, fine.alpha, NULL), p.eps);
		CHECK(fabs(obj - fine.objective) < 1e-12 && fine.objective <= coarse.objective + 1e-15,
			  "signed %d: objective %.17g (reported %.17g), coarse %.17g", signed_rows, obj,
			  fine.objective, coarse.objective);
		CHECK(fabs(fine.objective - direct.objective) < p.eps &&
			  fabs(fine.offset - direct.offset) < p.eps,
			  "signed %d: as the direct solve: F %.12g vs %.12g, offset %.12g vs %.12g",
			  signed_rows, fine.objective, direct.objective, fine.offset, direct.offset);
		for (int64_t t = 0; t < n; t++)
			joined += coarse.alpha[t] == 0.0 && fine.alpha[t] != 0.0;
		if (!signed_rows)
			CHECK(joined > 0, "rows at 0 joined: %lld", (long long) joined);
		printf("  refine (signed %d): %lld rows joined, %lld iterations\n", signed_rows,
			   (long long) joined, (long long) fine.iterations);
		svc_smo_result_free(&svc_env_malloc, &coarse);
		svc_smo_result_free(&svc_env_malloc, &fine);
		svc_smo_result_free(&svc_env_malloc, &direct);
	}
	free(x);
	free(lo);
	free(cc);
	free(mg);
}

/*
 * svc_smo_feasible_start: a start inside the bounds that sums to 1 stays
 * as it is; one that drifted (over or under 1, a row above c or below 0, a
 * NaN, nothing at all) is moved onto the simplex within the bounds.  A
 * refinement from a drifted coarse solution ends where the one from the
 * solution itself does (incremental's path hands its multipliers over so).
 */
static void
feasible_case(const char *what, double *a, int64_t n, double c, bool moved)
{
	double		sum = 0.0;
	bool		inside = true;

	CHECK(svc_smo_feasible_start(a, n, c) == moved, "%s: moved %d", what, (int) moved);
	for (int64_t t = 0; t < n; t++)
	{
		inside = inside && a[t] >= 0.0 && a[t] <= c;
		sum += a[t];
	}
	CHECK(inside && fabs(sum - 1.0) < 1e-12, "%s: in [0, %g], sum %.17g", what, c, sum);
}

static void
test_feasible_start(void)
{
	double		ok[4] = {0.25, 0.25, 0.25, 0.25},
				over[4] = {0.3, 0.3, 0.3, 0.3},
				under[4] = {0.1, 0.1, 0.2, 0.2},
				above_c[4] = {0.6, 0.2, 0.1, 0.1},
				negative[4] = {-0.1, 0.5, 0.3, 0.3},
				none[4] = {0, 0, 0, 0},
				nan_row[4] = {NAN, 0.2, 0.2, 0.2};
	int64_t		n = 400;
	double	   *x = blobs(n, 5);
	SvcSmoParams p = params(2.0, 1.0 / (0.1 * (double) n), 2e-2);
	SvcSmoResult coarse,
				fine,
				drifted;
	SvcError	err;

	feasible_case("on the simplex", ok, 4, 0.5, false);
	CHECK(ok[0] == 0.25 && ok[3] == 0.25, "on the simplex: untouched");
	feasible_case("sum 1.2", over, 4, 0.5, true);
	CHECK(fabs(over[0] - 0.25) < 1e-15, "sum 1.2: scaled, %g", over[0]);
	feasible_case("sum 0.6", under, 4, 0.5, true);
	feasible_case("a row above c", above_c, 4, 0.4, true);
	feasible_case("a row below 0", negative, 4, 0.5, true);
	CHECK(negative[0] >= 0.0, "a row below 0: %g", negative[0]);
	feasible_case("every row 0", none, 4, 0.5, true);
	feasible_case("a NaN", nan_row, 4, 0.5, true);
	CHECK(nan_row[0] < 1e-12, "a NaN: %g", nan_row[0]);

	CHECK(svc_smo_solve(&svc_env_malloc, x, n, 2, &p, &coarse, &err) == SVC_OK,
		  "coarse solve: %s", err.message);
	p.eps = 1e-7;
	CHECK(svc_smo_refine(&svc_env_malloc, x, n, 2, &p, coarse.alpha, &fine, &err) == SVC_OK,
		  "refine: %s", err.message);
	for (int64_t t = 0; t < n; t++)
		coarse.alpha[t] *= 1.0 + 1e-6;
	CHECK(svc_smo_feasible_start(coarse.alpha, n, p.c_all), "the drifted start moves");
	CHECK(svc_smo_refine(&svc_env_malloc, x, n, 2, &p, coarse.alpha, &drifted, &err) == SVC_OK,
		  "refine from the drifted start: %s", err.message);
	CHECK(fabs(drifted.objective - fine.objective) < p.eps &&
		  fabs(drifted.offset - fine.offset) < p.eps,
		  "drifted start: F %.12g vs %.12g, offset %.12g vs %.12g", drifted.objective,
		  fine.objective, drifted.offset, fine.offset);
	svc_smo_result_free(&svc_env_malloc, &coarse);
	svc_smo_result_free(&svc_env_malloc, &fine);
	svc_smo_result_free(&svc_env_malloc, &drifted);
	free(x);
}

int
main(void)
{
	test_feasible_and_kkt();
	test_brute_force();
	test_cache_and_shrinking_agree();
	test_duplicates_and_edges();
	test_failures();
	test_refine_failures();
	test_nu_fraction_and_sign();
	test_signed();
	test_refine();
	test_feasible_start();
	return unit_summary("test_smo");
}
