/* solver_smo.c - the solver "smo": the exact hypersphere (smo.h) behind the fit's seam */
#include "solver_smo.h"
#include "smo.h"

#include <math.h>
#include <string.h>

/*
 * libsvm's one-class SVM solves min 1/2 a' K a subject to sum a = nu l and
 * 0 <= a <= 1, and stops when the violation gap of its gradient K a falls
 * below -e (1e-3 by default).  smo.h's alpha is a / (nu l), with gradient
 * G = 2 K alpha - 1 = (2 / (nu l)) K a - 1, so its gaps are 2 / (nu l)
 * times libsvm's: tol in libsvm's scale is eps = 2 tol / (nu l).  When
 * nu l <= 1 (nu = 0 among them) C = 1 / (nu l) >= 1 bounds nothing, as
 * sum alpha = 1, and the problem is libsvm's with nu l = 1: eps = 2 tol.
 * So "tol" 1e-3 stops where libsvm's -e 1e-3 would, whatever n is.
 */
static double
libsvm_scale(double nu, int64_t n)
{
	double		nl = nu * (double) n;

	return nl > 1.0 ? nl : 1.0;
}

double
svc_smo_eps(double tol, double nu, int64_t n)
{
	return 2.0 * tol / libsvm_scale(nu, n);
}

size_t
svc_smo_budget(const SvcEnv *env, const SvcOptions *opt)
{
	if (opt->cache_mb > 0)
	{
		uint64_t	bytes = (uint64_t) opt->cache_mb << 20;

		return bytes > SIZE_MAX ? SIZE_MAX : (size_t) bytes;
	}
	if (env->solver_memory > 0)
		return env->solver_memory;
	return SVC_SOLVER_MEMORY_DEFAULT;
}

double
svc_smo_c(double nu, int64_t n)
{
	return 1.0 / libsvm_scale(nu, n);
}

double
svc_smo_gap_in_tol(double gap, double nu, int64_t n)
{
	return gap * libsvm_scale(nu, n) / 2.0;
}

SvcStatus
svc_smo_refuse_memory(SvcError *err, const char *who, const char *name,
					  const char *per_row, const char *cached,
					  int64_t n, size_t need, size_t budget)
{
	if (need == SIZE_MAX)
		svc_fail(err, SVC_ERR_LIMIT, "too many rows for %s: %lld", who, (long long) n);
	else
		svc_fail(err, SVC_ERR_LIMIT,
				 "%s needs %zu kB for %lld rows, more than its memory budget of %zu kB",
				 who, (need + 1023) / 1024, (long long) n, budget / 1024);
	if (need != SIZE_MAX && n > 0)
		svc_error_detail(err, "The solver \"%s\" needs about %zu bytes per row (%s) and "
						 "caches %s within the option \"cache_mb\", by default "
						 "maintenance_work_mem.",
						 name, (size_t) ((need + (size_t) n - 1) / (size_t) n), per_row, cached);
	svc_error_hint(err, "Lower \"sample\", raise \"cache_mb\", or use the budgeted "
				   "solver \"bsgd\".");
	return SVC_ERR_LIMIT;
}

SvcStatus
svc_smo_take_support(const SvcEnv *env, const double *x, const double *alpha_rows,
					 int64_t n, int32_t d, const char *who, SvcModel *m, SvcError *err)
{
	int64_t		n_sv = 0,
				k = 0;
	double	   *sv,
			   *alpha;

	/* negative alphas (labelled anomalies) are support vectors too */
	for (int64_t i = 0; i < n; i++)
		if (alpha_rows[i] != 0)
			n_sv++;
	if (n_sv < 1 || n_sv > INT32_MAX)
		return svc_fail(err, SVC_ERR_INTERNAL, "%s kept %lld support vectors",
						who, (long long) n_sv);
	sv = svc_alloc(env, sizeof(double) * (size_t) n_sv * (size_t) d, err);
	alpha = svc_alloc(env, sizeof(double) * (size_t) n_sv, err);
	if (sv == NULL || alpha == NULL)
	{
		svc_free(env, sv);
		svc_free(env, alpha);
		return SVC_ERR_NOMEM;
	}
	for (int64_t i = 0; i < n; i++)
	{
		if (alpha_rows[i] == 0)
			continue;
		memcpy(sv + (size_t) k * (size_t) d, x + (size_t) i * (size_t) d,
			   sizeof(double) * (size_t) d);
		alpha[k++] = alpha_rows[i];
	}
	m->n_sv = (int32_t) n_sv;
	m->sv = sv;
	m->alpha = alpha;
	return SVC_OK;
}

SvcStatus
svc_train_smo(const SvcEnv *env, const double *x, int64_t n, int32_t d,
			  const SvcOptions *opt, double gamma, const double *weight, SvcModel *m,
			  SvcError *err)
{
	SvcSmoParams p;
	SvcSmoResult res;
	SvcStatus	st;
	size_t		budget = svc_smo_budget(env, opt),
				need;
	double	   *c_rows = NULL,
			   *lo_rows = NULL,
			   *margin = NULL;

	svc_smo_params_default(&p);
	p.gamma = gamma;
	/* C = 1 / (nu n): the share nu of rows bounds the outliers from above */
	p.c_all = svc_smo_c(opt->nu, n);
	p.eps = svc_smo_eps(opt->tol, opt->nu, n);
	p.max_iter = opt->max_iter;	/* 0: smo.h's automatic cap */
	need = svc_smo_memory(n, d, &p);
	/* labelled rows: their bounds too, upper and lower, and margins */
	if (weight != NULL && need <= SIZE_MAX - 3 * sizeof(double) * (size_t) n)
		need += 3 * sizeof(double) * (size_t) n;
	/* the refinement's vectors and rows, taken from the cache (smo.h) */
	if (need != SIZE_MAX && svc_smo_refine_memory(n, d) <= SIZE_MAX - need)
		need += svc_smo_refine_memory(n, d);
	else
		need = SIZE_MAX;
	if (need == SIZE_MAX || need > budget)
		return svc_smo_refuse_memory(err, "the exact solver", "smo",
									 "its vectors, two kernel columns and the refinement's copy of the support vectors",
									 "more columns",
									 n, need, budget);
	/*
	 * The rest is cache.  need counts the two columns the solver takes
	 * even without a budget, so it never holds more than the budget.
	 */
	p.cache_bytes = budget - need;
	if (weight != NULL)
	{
		/*
		 * A bound per row, C_i = weight_i C; a negative weight is a
		 * labelled anomaly, alpha_i in [weight_i C, 0] (supervision.h).
		 * The labelled rows' margin is the stopping tolerance: at the end
		 * every row's -G is within eps of the others', so the offset,
		 * a mean over the free rows, and a labelled row at its bound or
		 * free are within eps / 2 in f, and a margin of eps leaves an
		 * anomaly at f <= -eps / 2 < 0 and a normal (bound 1, never
		 * reached) at f >= eps / 2 (smo.c).  Free rows otherwise end
		 * anywhere within the tolerance of f = 0, on either side.  The
		 * margin is small next to f's scale, so the domain moves no more.
		 * A labelled normal is the row with a weight above 1 (1 / C,
		 * supervision.h, where the sphere moves no neighbour).
		 */
		c_rows = svc_alloc(env, sizeof(double) * (size_t) n, err);
		lo_rows = svc_alloc(env, sizeof(double) * (size_t) n, err);
		margin = svc_alloc(env, sizeof(double) * (size_t) n, err);
		if (c_rows == NULL || lo_rows == NULL || margin == NULL)
		{
			svc_free(env, c_rows);
			svc_free(env, lo_rows);
			svc_free(env, margin);
			return SVC_ERR_NOMEM;
		}
		for (int64_t i = 0; i < n; i++)
		{
			c_rows[i] = weight[i] < 0 ? 0.0 : weight[i] * p.c_all;
			lo_rows[i] = weight[i] < 0 ? weight[i] * p.c_all : 0.0;
			margin[i] = weight[i] < 0 ? p.eps : weight[i] > 1.0 ? -p.eps : 0.0;
		}
		p.c = c_rows;
		p.lo = lo_rows;
		p.margin = margin;
	}

	st = svc_smo_solve(env, x, n, d, &p, &res, err);
	if (st == SVC_OK)
	{
		SvcSmoResult fine;
		double		eps = p.eps;

		/* the same point as aid and incremental within tol (smo.h) */
		p.eps = eps * SVC_SMO_REFINE;
		st = svc_smo_refine(env, x, n, d, &p, res.alpha, &fine, err);
		p.eps = eps;
		if (st == SVC_OK)
		{
			fine.iterations += res.iterations;
			svc_smo_result_free(env, &res);
			res = fine;
		}
		else
			svc_smo_result_free(env, &res);
	}
	svc_free(env, c_rows);
	svc_free(env, lo_rows);
	svc_free(env, margin);
	if (st != SVC_OK)
		return st;
	st = svc_smo_take_support(env, x, res.alpha, n, d, "the exact solver", m, err);
	if (st != SVC_OK)
	{
		svc_smo_result_free(env, &res);
		return st;
	}
	m->offset = res.offset;
	m->gamma = gamma;
	m->iterations = res.iterations;
	m->converged = res.converged;
	m->objective = res.objective;
	/* in tol's scale, so that a converged model reports gap < tol */
	m->gap = svc_smo_gap_in_tol(res.gap, opt->nu, n);
	m->cache_hits = res.cache_hits;
	m->cache_misses = res.cache_misses;
	svc_smo_result_free(env, &res);
	return SVC_OK;
}
