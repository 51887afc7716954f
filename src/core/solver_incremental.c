/* solver_incremental.c - the solver "incremental": smo's sphere row by row (incremental.h) behind the fit's seam */
#include "solver_incremental.h"
#include "solver_smo.h"
#include "incremental.h"
#include "smo.h"

#include <math.h>

/* the stream of the rows' order */
#define SVC_SEED_TAG_ORDER UINT64_C(0x4F52444552)

SvcStatus
svc_incr_report(SvcIncr *s, const SvcOptions *opt, int64_t n, SvcModel *m, SvcError *err)
{
	SvcIncrStats stats;
	/* the state afresh from the rows: offset as smo takes it, the report */
	double		viol = svc_incr_kkt_violation(s, err),
				objective;

	if (isnan(viol))
		return err->status;
	objective = svc_incr_objective(s, err);
	if (isnan(objective))
		return err->status;
	svc_incr_stats(s, &stats);
	m->offset = svc_incr_offset(s);
	m->iterations = stats.steps;
	m->converged = true;
	m->objective = objective;
	/* smo's gap is in G = 2 h's units, and reported in tol's scale */
	m->gap = svc_smo_gap_in_tol(2.0 * viol, opt->nu, n);
	m->cache_hits = 0;
	m->cache_misses = 0;
	return SVC_OK;
}

/*
 * The path ends within tol of smo's optimum, not at smo's point: smo
 * refines the multipliers to a finer tolerance over the support vectors
 * (svc_smo_refine), so that incremental, aid and smo draw the same
 * clusters where a saddle's merge hangs on f differences below tol.  The
 * path's multipliers are the start (clamped to [0, C] against rounding);
 * the model then holds the refined ones, the report's objective and gap
 * theirs.
 */
static SvcStatus
refine(const SvcEnv *env, SvcIncr *s, const int64_t *slot, const double *x, int64_t n,
	   int32_t d, const SvcOptions *opt, double gamma, double c, size_t budget,
	   SvcModel *m, SvcError *err)
{
	SvcSmoParams sp;
	SvcSmoResult fine;
	double	   *alpha;
	SvcStatus	st;

	alpha = svc_alloc(env, sizeof(double) * (size_t) n, err);
	if (alpha == NULL)
		return SVC_ERR_NOMEM;
	for (int64_t i = 0; i < n; i++)
		alpha[i] = fmin(fmax(svc_incr_alpha(s, slot[i]), 0.0), c);
	/*
	 * A path that drifted off the simplex by rounding starts the
	 * refinement from the nearest feasible point it is given, so that it
	 * still ends at smo's.
	 */
	(void) svc_smo_feasible_start(alpha, n, c);
	svc_smo_params_default(&sp);
	sp.gamma = gamma;
	sp.c_all = c;
	sp.eps = svc_smo_eps(opt->tol, opt->nu, n) * SVC_SMO_REFINE;
	sp.max_iter = opt->max_iter;
	/* the refinement's columns are over the support vectors only */
	sp.cache_bytes = svc_smo_refine_cache(budget / 2, n, d);
	st = svc_smo_refine(env, x, n, d, &sp, alpha, &fine, err);
	svc_free(env, alpha);
	if (st != SVC_OK)
		return st;
	st = svc_smo_take_support(env, x, fine.alpha, n, d, "the solver \"incremental\"", m, err);
	if (st == SVC_OK)
	{
		m->offset = fine.offset;
		m->objective = fine.objective;
		m->gap = svc_smo_gap_in_tol(fine.gap, opt->nu, n);
		m->iterations += fine.iterations;
	}
	svc_smo_result_free(env, &fine);
	return st;
}

SvcStatus
svc_train_incremental(const SvcEnv *env, const double *x, int64_t n, int32_t d,
					  const SvcOptions *opt, double gamma, const double *weight, SvcModel *m,
					  SvcError *err)
{
	SvcIncrParams p;
	SvcIncr    *s = NULL;
	SvcStatus	st;
	size_t		budget = svc_smo_budget(env, opt);
	double		c;
	int64_t    *slot = NULL,
			   *order = NULL;
	SvcRng		rng;

	if (n < 1)
		return svc_fail(err, SVC_ERR_INVALID_INPUT, "no rows to train on");
	/*
	 * C = 1 / (nu n) from the rows of the whole fit, fixed for the run: the
	 * first rows then meet the bound the last ones do, and the end is
	 * smo's problem on all n.
	 */
	c = svc_smo_c(opt->nu, n);
	/*
	 * Labelled rows are smo's signed problem (negative bounds for the
	 * anomalies, margins at the boundary), which the path does not follow.
	 */
	if (weight != NULL)
		return svc_fail(err, SVC_ERR_INTERNAL, "the solver \"incremental\" takes no row weights");
	p.d = d;
	p.gamma = gamma;
	p.capacity = n;
	p.memory = budget;
	st = svc_incr_create(env, &p, &s, err);
	if (st != SVC_OK)
		return st;
	slot = svc_alloc(env, sizeof(int64_t) * (size_t) n, err);
	order = svc_alloc(env, sizeof(int64_t) * (size_t) n, err);
	if (slot == NULL || order == NULL)
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}

	/*
	 * The rows go in a seeded random order: the optimum does not depend on
	 * it, but the path does.  Rows that sweep the space (the aggregate sorts
	 * them) keep landing outside the sphere, each with a long path: the
	 * README's events table sorted took 3.9 s, shuffled 0.2 s (smo 0.37 s).
	 */
	for (int64_t i = 0; i < n; i++)
		order[i] = i;
	svc_rng_seed(&rng, opt->seed ^ SVC_SEED_TAG_ORDER);
	for (int64_t i = n - 1; i > 0; i--)
	{
		int64_t		j = (int64_t) svc_rng_below(&rng, (uint64_t) i + 1),
					t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (int64_t k = 0; k < n; k++)
	{
		int64_t		i = order[k];

		st = svc_incr_add(s, x + (size_t) i * (size_t) d, c, &slot[i], err);
		if (st != SVC_OK)
			goto done;
		/* no progress report: the hook's kinds (svc_core.h) have no "rows added" */
	}
	st = svc_incr_report(s, opt, n, m, err);
	if (st != SVC_OK)
		goto done;
	st = refine(env, s, slot, x, n, d, opt, gamma, c, budget, m, err);
	if (st != SVC_OK)
		goto done;
	m->gamma = gamma;
done:
	svc_free(env, slot);
	svc_free(env, order);
	svc_incr_free(s);
	return st;
}
