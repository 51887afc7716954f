/* solver_aid.c - the solver "aid": smo's sphere by aggregation (aid.h) behind the fit's seam */
#include "solver_aid.h"
#include "solver_smo.h"
#include "aid.h"

#include <math.h>
#include <string.h>

/* As solver_smo.c: C n nu = 1 / (nu n) scales the gaps to libsvm's. */
static double
libsvm_scale(double nu, int64_t n)
{
	double		nl = nu * (double) n;

	return nl > 1.0 ? nl : 1.0;
}

/* The refusal when n rows do not fit the budget: before any allocation. */
static SvcStatus
too_many_rows(SvcError *err, int64_t n, size_t need, size_t budget)
{
	if (need == SIZE_MAX)
		svc_fail(err, SVC_ERR_LIMIT, "too many rows for the solver \"aid\": %lld",
				 (long long) n);
	else
		svc_fail(err, SVC_ERR_LIMIT,
				 "the solver \"aid\" needs %zu kB for %lld rows, more than its memory budget of %zu kB",
				 (need + 1023) / 1024, (long long) n, budget / 1024);
	if (need != SIZE_MAX && n > 0)
		svc_error_detail(err, "The solver \"aid\" needs about %zu bytes per row (its vectors, "
						 "its clusters' and its solver's) and caches kernel columns within "
						 "the option \"cache_mb\", by default maintenance_work_mem.",
						 (size_t) ((need + (size_t) n - 1) / (size_t) n));
	svc_error_hint(err, "Lower \"sample\", raise \"cache_mb\", or use the budgeted "
				   "solver \"bsgd\".");
	return SVC_ERR_LIMIT;
}

SvcStatus
svc_train_aid(const SvcEnv *env, const double *x, int64_t n, int32_t d,
			  const SvcOptions *opt, double gamma, const double *weight, SvcModel *m,
			  SvcError *err)
{
	SvcAidParams p;
	SvcAidResult res;
	SvcStatus	st;
	size_t		budget = svc_smo_budget(env, opt),
				need;
	double	   *sv,
			   *alpha;
	int64_t		n_sv = 0,
				k = 0;

	if (weight != NULL)
		return svc_fail(err, SVC_ERR_INTERNAL, "the solver \"aid\" takes no row weights");
	svc_aid_params_default(&p);
	p.gamma = gamma;
	/* C = 1 / (nu n), as smo: the same problem */
	p.c = opt->nu * (double) n > 1.0 ? 1.0 / (opt->nu * (double) n) : 1.0;
	p.eps = svc_smo_eps(opt->tol, opt->nu, n);
	p.gap = opt->aid_gap;
	p.max_iter = opt->max_iter;
	p.seed = opt->seed;
	need = svc_aid_memory(n, d, &p);
	if (need == SIZE_MAX || need > budget)
		return too_many_rows(err, n, need, budget);
	p.cache_bytes = budget - need;

	st = svc_aid_solve(env, x, n, d, &p, &res, err);
	if (st != SVC_OK)
		return st;
	for (int64_t i = 0; i < n; i++)
		if (res.alpha[i] > 0)
			n_sv++;
	if (n_sv < 1 || n_sv > INT32_MAX || res.rounds < 1)
	{
		svc_aid_result_free(env, &res);
		return svc_fail(err, SVC_ERR_INTERNAL, "the solver \"aid\" kept %lld support vectors",
						(long long) n_sv);
	}
	sv = svc_alloc(env, sizeof(double) * (size_t) n_sv * (size_t) d, err);
	alpha = svc_alloc(env, sizeof(double) * (size_t) n_sv, err);
	if (sv == NULL || alpha == NULL)
	{
		svc_free(env, sv);
		svc_free(env, alpha);
		svc_aid_result_free(env, &res);
		return SVC_ERR_NOMEM;
	}
	for (int64_t i = 0; i < n; i++)
	{
		if (!(res.alpha[i] > 0))
			continue;
		memcpy(sv + (size_t) k * (size_t) d, x + (size_t) i * (size_t) d,
			   sizeof(double) * (size_t) d);
		alpha[k++] = res.alpha[i];
	}
	m->n_sv = (int32_t) n_sv;
	m->sv = sv;
	m->alpha = alpha;
	m->offset = res.offset;
	m->gamma = gamma;
	m->iterations = res.smo_iterations;
	m->converged = res.converged;
	m->objective = res.objective;
	/* the last solve's KKT gap, in tol's scale as smo reports it */
	m->gap = res.smo_gap * libsvm_scale(opt->nu, n) / 2.0;
	m->cache_hits = res.cache_hits;
	m->cache_misses = res.cache_misses;
	m->aid_rounds = res.rounds;
	m->aid_aggregates = res.aggregates;
	res.aggregates = NULL;		/* the model's now */
	m->aid_final_gap = res.gap;
	m->aid_share = res.share_aggregated;
	svc_aid_result_free(env, &res);
	return SVC_OK;
}
