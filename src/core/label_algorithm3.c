/* label_algorithm3.c - Algorithm 3 of the budgeted SVC paper: B_eps, the f >= 0 segment test, components, fill */
#include "label_algorithm3.h"
#include "kdtree.h"
#include "kernel.h"
#include "unionfind.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PAPER_POINTS		20		/* m sample points, endpoints included */

bool
svc_alg3_in_strip(double f, double epsilon)
{
	return fabs(f) <= epsilon;
}

/*
 * The auto epsilon: the 30% quantile of |f| over the rows, so that B_eps
 * holds 30% of them: an absolute epsilon often leaves B_eps empty
 * (doc/design-notes.md).  absf is sorted in place.
 */
double
svc_alg3_auto_epsilon(double *absf, int64_t n)
{
	int64_t		k = (int64_t) ceil(SVC_EPS_AUTO_SHARE * (double) n) - 1;

	if (k < 0)
		k = 0;
	qsort(absf, (size_t) n, sizeof(double), svc_cmp_double);
	return absf[k];
}

SvcStatus
svc_alg3_strip(const SvcEnv *env, const SvcModel *m, const double *xs, int64_t n,
			   double *rowlam, double *absf, double *epsilon, bool *all_rows,
			   SvcError *err)
{
	int32_t		d = m->dims;
	int64_t		every = svc_label_units_per_check(m) * 16;
	int64_t		in_beps = 0;

	for (int64_t i = 0; i < n; i++)
	{
		if (i % every == 0 && svc_interrupted(env, err))
			return SVC_ERR_INTERRUPTED;
		rowlam[i] = svc_kernel_sum(m->sv, m->alpha, m->sv_gamma, m->n_sv, d,
								   m->gamma, xs + (size_t) i * d);
		absf[i] = fabs(rowlam[i] - m->offset);
	}
	*epsilon = m->opt.epsilon > 0.0 ? m->opt.epsilon : svc_alg3_auto_epsilon(absf, n);
	for (int64_t i = 0; i < n; i++)
		if (svc_alg3_in_strip(rowlam[i] - m->offset, *epsilon))
			in_beps++;
	/* An empty strip would label nothing: then run every row. */
	*all_rows = in_beps == 0;
	return SVC_OK;
}

/*
 * Labelling as the paper's Algorithm 3: two equilibria are connected when
 * all PAPER_POINTS points of the segment between them (endpoints included)
 * have f >= 0; clusters are the connected components.  A pair already in
 * one component needs no test, which leaves at most M - 1 successful
 * tests; a failing one usually stops at its first point.
 */
SvcStatus
svc_alg3_components(const SvcEnv *env, const SvcModel *m, const SvcEqList *eqs,
					int32_t *comp, SvcError *err)
{
	int32_t		M = eqs->n;
	int32_t		d = eqs->dims;
	double	   *pt;

	pt = svc_alloc(env, sizeof(double) * (size_t) d, err);
	if (!pt)
		return SVC_ERR_NOMEM;
	svc_uf_init(comp, M);
	for (int32_t a = 0; a < M; a++)
	{
		const double *xa = eqs->x + (size_t) a * d;

		if (svc_interrupted(env, err))
		{
			svc_free(env, pt);
			return SVC_ERR_INTERRUPTED;
		}
		if (eqs->lambda[a] - m->offset < 0.0)
			continue;			/* an endpoint fails the test */
		for (int32_t b = a + 1; b < M; b++)
		{
			const double *xb = eqs->x + (size_t) b * d;
			int32_t		ra,
						rb;
			bool		inside = true;

			if (eqs->lambda[b] - m->offset < 0.0)
				continue;
			ra = svc_uf_find(comp, a);
			rb = svc_uf_find(comp, b);
			if (ra == rb)
				continue;
			for (int k = 1; k < PAPER_POINTS - 1 && inside; k++)
				if (svc_lambda_on_segment(m, xa, xb, (double) k / (PAPER_POINTS - 1), pt) - m->offset < 0.0)
					inside = false;
			if (inside)
				svc_uf_join(comp, ra, rb);
		}
	}
	for (int32_t i = 0; i < M; i++)
		comp[i] = svc_uf_find(comp, i);
	svc_free(env, pt);
	return SVC_OK;
}

/*
 * Exact, by a k-d tree over a copy of the source rows kept in row order,
 * so a tie goes to the lowest row, as the tree breaks ties by lowest index.
 */
SvcStatus
svc_label_fill_nearest(const SvcEnv *env, const double *xs, int64_t n, int32_t d,
					   int32_t *label, int32_t pending, int64_t *n_sources,
					   SvcError *err)
{
	SvcKdTree	t = {0};
	double	   *pts = NULL;
	int32_t    *label_of = NULL;	/* label of each source row */
	int64_t		nb = 0;
	SvcStatus	st = SVC_OK;

	for (int64_t i = 0; i < n; i++)
		if (label[i] > pending)
			nb++;
	if (n_sources)
		*n_sources = nb;
	if (nb == 0)
		return SVC_OK;
	pts = svc_alloc(env, sizeof(double) * (size_t) nb * (size_t) d, err);
	label_of = svc_alloc(env, sizeof(int32_t) * (size_t) nb, err);
	if (!pts || !label_of)
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}
	nb = 0;
	for (int64_t i = 0; i < n; i++)
		if (label[i] > pending)
		{
			memcpy(pts + (size_t) nb * d, xs + (size_t) i * d, sizeof(double) * (size_t) d);
			label_of[nb++] = label[i];
		}
	st = svc_kd_build(env, pts, nb, d, &t, err);
	if (st != SVC_OK)
		goto done;
	for (int64_t i = 0, q = 0; i < n; i++)
	{
		if (label[i] != pending)
			continue;
		if (q++ % SVC_INTERRUPT_EVERY == 0 && svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			goto done;
		}
		label[i] = label_of[svc_kd_nearest(&t, xs + (size_t) i * d, NULL)];
	}
done:
	svc_kd_free(env, &t);
	svc_free(env, pts);
	svc_free(env, label_of);
	return st;
}

int32_t
svc_alg3_assign_row(const SvcModel *m, const double *xs, double f, SvcLabelWork *w)
{
	return svc_alg3_in_strip(f, m->epsilon) ? svc_label_predict(m, xs, w, NULL)
		: SVC_ALG3_PENDING;
}

SvcStatus
svc_alg3_assign_finish(const SvcEnv *env, const SvcModel *m, const double *xs,
					   int64_t n, int32_t *code, SvcLabelWork *w, SvcError *err)
{
	int32_t		d = m->dims;
	SvcStatus	st;

	st = svc_label_fill_nearest(env, xs, n, d, code, SVC_ALG3_PENDING, NULL, err);
	if (st != SVC_OK)
		return st;
	/* left pending only when B_eps is empty */
	for (int64_t i = 0, q = 0; i < n; i++)
	{
		if (code[i] != SVC_ALG3_PENDING)
			continue;
		if (q++ % SVC_INTERRUPT_EVERY == 0 && svc_interrupted(env, err))
			return SVC_ERR_INTERRUPTED;
		code[i] = svc_label_predict(m, xs + (size_t) i * d, w, NULL);
	}
	return SVC_OK;
}
