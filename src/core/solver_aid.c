/* solver_aid.c - the solver "aid": smo's sphere by aggregation (aid.h) behind the fit's seam */
#include "solver_aid.h"
#include "solver_smo.h"
#include "aid.h"
#include "smo.h"

#include <math.h>
#include <string.h>

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

	if (weight != NULL)
		return svc_fail(err, SVC_ERR_INTERNAL, "the solver \"aid\" takes no row weights");
	svc_aid_params_default(&p);
	p.gamma = gamma;
	/* C = 1 / (nu n), as smo: the same problem */
	p.c = svc_smo_c(opt->nu, n);
	p.eps = svc_smo_eps(opt->tol, opt->nu, n);
	p.gap = opt->aid_gap;
	p.max_iter = opt->max_iter;
	p.seed = opt->seed;
	need = svc_aid_memory(n, d, &p);
	if (need == SIZE_MAX || need > budget)
		return svc_smo_refuse_memory(err, "the solver \"aid\"", "aid",
									 "its vectors, its clusters' and its solver's",
									 "kernel columns", n, need, budget);
	p.cache_bytes = budget - need;

	st = svc_aid_solve(env, x, n, d, &p, &res, err);
	if (st != SVC_OK)
		return st;
	if (res.rounds >= 1)
	{
		SvcSmoParams sp;
		SvcSmoResult fine;

		/* smo's point within tol, as smo refines its own (smo.h) */
		svc_smo_params_default(&sp);
		sp.gamma = gamma;
		sp.c_all = p.c;
		sp.eps = p.eps * SVC_SMO_REFINE;
		sp.max_iter = p.max_iter;
		sp.cache_bytes = svc_smo_refine_cache(p.cache_bytes, n, d);
		st = svc_smo_refine(env, x, n, d, &sp, res.alpha, &fine, err);
		if (st != SVC_OK)
		{
			svc_aid_result_free(env, &res);
			return st;
		}
		svc_free(env, res.alpha);
		res.alpha = fine.alpha;
		res.offset = fine.offset;
		res.objective = fine.objective;
		res.smo_gap = fine.gap;
		res.smo_iterations += fine.iterations;
		res.cache_hits += fine.cache_hits;
		res.cache_misses += fine.cache_misses;
	}
	/* aid's alphas are never negative: it takes no labelled rows */
	if (res.rounds < 1)
		st = svc_fail(err, SVC_ERR_INTERNAL, "the solver \"aid\" ran no round");
	else
		st = svc_smo_take_support(env, x, res.alpha, n, d, "the solver \"aid\"", m, err);
	if (st != SVC_OK)
	{
		svc_aid_result_free(env, &res);
		return st;
	}
	m->offset = res.offset;
	m->gamma = gamma;
	m->iterations = res.smo_iterations;
	m->converged = res.converged;
	m->objective = res.objective;
	/* the last solve's KKT gap, in tol's scale as smo reports it */
	m->gap = svc_smo_gap_in_tol(res.smo_gap, opt->nu, n);
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
