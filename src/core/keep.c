/* keep.c - models that keep their rows: the exact warm start and its window (keep.h) */
#include "keep.h"
#include "incremental.h"
#include "solver_smo.h"
#include "solver_incremental.h"

#include <math.h>
#include <string.h>

/* Tag xored into the seed for the reservoir's draws ("WINDOW"). */
#define SVC_SEED_TAG_WINDOW UINT64_C(0x57494E444F57)

SvcStatus
svc_keep_from_fit(const SvcEnv *env, const double *rows, int64_t n, SvcModel *m,
				  SvcError *err)
{
	size_t		d = (size_t) m->dims;
	int64_t		k = 0;
	double		c = svc_smo_c(m->opt.nu, n);
	/* the rows are the last n of the rows_seen the aggregate counted (or
	 * a uniform sample of them, numbered as the last n) */
	int64_t		first = (m->rows_seen > n ? m->rows_seen : n) - n + 1;
	SvcStatus	st;

	st = svc_model_alloc_kept(env, m, n, err);
	if (st != SVC_OK)
		return st;
	memcpy(m->keep_x, rows, sizeof(double) * (size_t) n * d);
	/*
	 * The solvers take their support vectors from the rows in order
	 * (svc_smo_take_support), so the k-th one is the next row equal to it;
	 * of two equal rows either may carry the alpha, f is the same.
	 */
	for (int64_t i = 0; i < n; i++)
	{
		m->keep_c[i] = c;
		m->keep_counter[i] = first + i;
		m->keep_alpha[i] = 0.0;
		if (k < m->n_sv &&
			memcmp(rows + (size_t) i * d, m->sv + (size_t) k * d, sizeof(double) * d) == 0)
		{
			/* rounding may leave alpha a hair past C: the bound holds it */
			m->keep_alpha[i] = fmin(fmax(m->alpha[k], 0.0), c);
			k++;
		}
	}
	if (k != m->n_sv)
		return svc_fail(err, SVC_ERR_INTERNAL,
						"%lld of %d support vectors are not among the rows kept",
						(long long) (m->n_sv - k), m->n_sv);
	m->keep_next = first + n;
	m->keep_added = 0;
	m->keep_removed = 0;
	return SVC_OK;
}

/*
 * A uniform choice of want of the n flags in keep (set to true; the rest
 * false), by selection sampling.
 */
static void
choose_uniform(SvcRng *rng, bool *keep, int64_t n, int64_t want)
{
	for (int64_t i = 0; i < n; i++)
	{
		keep[i] = (int64_t) svc_rng_below(rng, (uint64_t) (n - i)) < want;
		want -= keep[i];
	}
}

/*
 * Which rows the window keeps: stay[i] for the K kept rows, enter[i] for
 * the n new ones, which are the last n (or a uniform sample of n) of the
 * seen rows the call brought, in their order.
 */
static void
choose_window(const SvcModel *init, int64_t n, int64_t seen, const SvcOptions *opt,
			  bool *stay, bool *enter)
{
	int64_t		k = init->keep_n,
				w = opt->sample;

	for (int64_t i = 0; i < k; i++)
		stay[i] = true;
	for (int64_t i = 0; i < n; i++)
		enter[i] = true;
	if (k + n <= w)
		return;
	if (opt->window == SVC_WINDOW_OLDEST)
	{
		/* the lowest counters leave: the kept rows first, they are older */
		int64_t		drop = k + n - w;

		for (int64_t i = 0; i < k && drop > 0; i++, drop--)
			stay[i] = false;
		for (int64_t i = 0; i < n && drop > 0; i++, drop--)
			enter[i] = false;
		return;
	}
	else
	{
		/*
		 * The window after the call is a uniform sample of w of the passed
		 * rows before it (the window holds a uniform sample of those) and
		 * the seen rows of the call (the new rows are a uniform sample of
		 * those).  How many come from the call is hypergeometric: drawn
		 * here by w draws without replacement; which ones, uniformly from
		 * each side.  The draws are seeded by the seed and the first new
		 * counter, so the same calls give the same window.
		 */
		SvcRng		rng;
		uint64_t	left = (uint64_t) (init->keep_next - 1) + (uint64_t) seen,
					left_new = (uint64_t) seen;
		int64_t		from_new = 0;

		svc_rng_seed(&rng, opt->seed ^ SVC_SEED_TAG_WINDOW ^ (uint64_t) init->keep_next);
		for (int64_t i = 0; i < w; i++)
		{
			if (svc_rng_below(&rng, left) < left_new)
			{
				from_new++;
				left_new--;
			}
			left--;
		}
		/* the counts allow it (from_new <= min(seen, w) = n and w - from_new
		 * <= min(rows passed, w) = k); clamped against damaged counters */
		if (from_new > n)
			from_new = n;
		if (w - from_new > k)
			from_new = w - k;
		choose_uniform(&rng, enter, n, from_new);
		choose_uniform(&rng, stay, k, w - from_new);
	}
}

SvcStatus
svc_keep_warm_fit(const SvcEnv *env, const double *x, int64_t n, int32_t d,
				  const SvcOptions *opt, const SvcModel *init, SvcModel *m,
				  SvcError *err)
{
	int64_t		k = init->keep_n,
				n_win = 0,
				leave = 0,
				entered = 0,
				cap,
				out = 0;
	bool	   *stay = NULL,
			   *enter = NULL;
	int64_t    *slot = NULL;
	/* the rows the call brought: set by fit_warm before the solver's call */
	int64_t		seen = m->rows_seen - init->rows_seen;
	double	   *c_all = NULL;
	double		c,
				viol;
	SvcIncrParams p;
	SvcIncr    *s = NULL;
	SvcStatus	st;

	if (k < 1)
		return svc_fail(err, SVC_ERR_INTERNAL, "the init model keeps no rows");
	if (n > opt->sample)
		return svc_fail(err, SVC_ERR_LIMIT, "a warm start takes at most \"sample\" (%lld) new rows",
						(long long) opt->sample);
	if (seen < n)
		seen = n;
	if (init->keep_next > SVC_MAX_SEEN - seen)
		return svc_fail(err, SVC_ERR_LIMIT, "a model cannot have seen more than %lld rows",
						(long long) SVC_MAX_SEEN);
	stay = svc_alloc(env, sizeof(bool) * (size_t) k, err);
	enter = svc_alloc(env, sizeof(bool) * (size_t) (n > 0 ? n : 1), err);
	slot = svc_alloc(env, sizeof(int64_t) * (size_t) (k + n), err);
	if (!stay || !enter || !slot)
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}
	choose_window(init, n, seen, opt, stay, enter);
	for (int64_t i = 0; i < k; i++)
	{
		n_win += stay[i];
		leave += !stay[i];
	}
	for (int64_t i = 0; i < n; i++)
		n_win += enter[i];
	c = svc_smo_c(opt->nu, n_win);

	p.d = d;
	p.gamma = init->gamma;
	cap = k > n_win ? k : n_win;
	p.capacity = cap;
	p.memory = svc_smo_budget(env, opt);
	st = svc_incr_create(env, &p, &s, err);
	if (st != SVC_OK)
		goto done;
	st = svc_incr_load(s, init->keep_x, init->keep_alpha, init->keep_c, k, SVC_KEEP_LOAD_TOL,
					   slot, &viol, err);
	if (st == SVC_ERR_INVALID_INPUT)
	{
		/*
		 * Not the optimum of its rows (an smo model trained to a loose tol,
		 * say): solve the window again by increments from nothing, which
		 * ends on the same exact solution, only later.
		 */
		svc_incr_free(s);
		s = NULL;
		st = svc_incr_create(env, &p, &s, err);
		if (st != SVC_OK)
			goto done;
		for (int64_t i = 0; i < k; i++)
		{
			slot[i] = -1;
			if (stay[i] && (st = svc_incr_add(s, init->keep_x + (size_t) i * d, c, &slot[i],
											  err)) != SVC_OK)
				goto done;
		}
	}
	else if (st != SVC_OK)
		goto done;
	else
	{
		/* the leaving rows first, then the bounds of the window's C */
		for (int64_t i = 0; i < k; i++)
			if (!stay[i])
			{
				if ((st = svc_incr_remove(s, slot[i], err)) != SVC_OK)
					goto done;
				slot[i] = -1;
			}
		/* rows that can keep their place first: the moves then see them */
		for (int pass = 0; pass < 2; pass++)
			for (int64_t i = 0; i < k; i++)
			{
				bool		simple;

				if (!stay[i])
					continue;
				simple = svc_incr_alpha(s, slot[i]) < c &&
					svc_incr_alpha(s, slot[i]) < svc_incr_bound(s, slot[i]);
				if (simple != (pass == 0))
					continue;
				if ((st = svc_incr_set_bound(s, slot[i], c, &slot[i], err)) != SVC_OK)
					goto done;
			}
	}
	for (int64_t i = 0; i < n; i++)
	{
		slot[k + i] = -1;
		if (!enter[i])
			continue;
		if ((st = svc_incr_add(s, x + (size_t) i * d, c, &slot[k + i], err)) != SVC_OK)
			goto done;
		entered++;
	}
	if ((st = svc_incr_report(s, opt, n_win, m, err)) != SVC_OK)
		goto done;
	m->iterations += init->iterations;

	/* the window in counter order: the kept rows that stay, then the new */
	if ((st = svc_model_alloc_kept(env, m, n_win, err)) != SVC_OK)
		goto done;
	c_all = svc_alloc(env, sizeof(double) * (size_t) n_win, err);
	if (c_all == NULL)
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}
	for (int64_t i = 0; i < k + n; i++)
	{
		if (slot[i] < 0)
			continue;
		memcpy(m->keep_x + (size_t) out * d, svc_incr_row(s, slot[i]), sizeof(double) * (size_t) d);
		m->keep_alpha[out] = svc_incr_alpha(s, slot[i]);
		m->keep_c[out] = svc_incr_bound(s, slot[i]);
		m->keep_counter[out] = i < k ? init->keep_counter[i] :
			init->keep_next + (seen - n) + (i - k);
		c_all[out] = m->keep_alpha[out];
		out++;
	}
	m->keep_next = init->keep_next + seen;
	m->keep_added = entered;
	m->keep_removed = leave;
	st = svc_smo_take_support(env, m->keep_x, c_all, n_win, d, "the warm start", m, err);
	if (st != SVC_OK)
		goto done;
	m->gamma = init->gamma;
done:
	svc_incr_free(s);
	svc_free(env, stay);
	svc_free(env, enter);
	svc_free(env, slot);
	svc_free(env, c_all);
	return st;
}
