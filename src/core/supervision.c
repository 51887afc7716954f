/* supervision.c - per-row bounds from labelled rows' impact scores (supervision.h) */
#include "supervision.h"
#include "kernel.h"
#include "threshold.h"
#include "state.h"

#include <stdlib.h>
#include <string.h>

#include <math.h>

/*
 * C_i / C for an impact score s (already 0 inside (-h, h)).  u runs from 0
 * at the edge of a neighbourhood to 1 at a lone labelled row; the bound
 * moves from C to the labelled extreme (1, or 1/N' with N' the rows that
 * are not labelled anomalies) linearly in u, or linearly in log C_i
 * (geometric).
 */
static double
weight_of_score(double s, double c, double h, int64_t n, SvcLabelCurve curve)
{
	double		u = (fabs(s) - h) / (1.0 - h);
	double		end = s < 0 ? 1.0 : 1.0 / (double) n;

	if (s == 0.0)
		return 1.0;
	if (curve == SVC_LABEL_CURVE_LINEAR)
		return ((1.0 - u) * c + u * end) / c;
	return pow(end / c, u);
}

SvcStatus
svc_supervision_weights(const SvcEnv *env, const double *x, const int8_t *label,
						int64_t n, int32_t d, double gamma, double c, double h,
						SvcLabelCurve curve, double anomaly_bound, bool neighbours,
						double *weight, SvcError *err)
{
	int64_t    *lab;
	int64_t		n_lab = 0,
				n_anomaly_rows = 0;
	double		total = 0.0;

	lab = svc_alloc(env, sizeof(int64_t) * (size_t) (n > 0 ? n : 1), err);
	if (lab == NULL)
		return SVC_ERR_NOMEM;
	for (int64_t i = 0; i < n; i++)
	{
		if (label[i] != 0)
			lab[n_lab++] = i;
		n_anomaly_rows += label[i] < 0;
	}

	for (int64_t i = 0; i < n; i++)
	{
		const double *xi = x + (size_t) i * (size_t) d;
		double		sum_normal = 0.0,
					sum_anomaly = 0.0,
					s;
		int64_t		n_normal = 0,
					n_anomaly = 0;

		if ((i & 255) == 0 && svc_interrupted(env, err))
		{
			svc_free(env, lab);
			return SVC_ERR_INTERRUPTED;
		}
		for (int64_t k = 0; neighbours && k < n_lab; k++)
		{
			int64_t		l = lab[k];
			double		kv = exp(-gamma * svc_sqdist(xi, x + (size_t) l * (size_t) d, d));

			if (!(kv >= h))
				continue;
			if (label[l] > 0)
			{
				sum_normal += kv;
				n_normal++;
			}
			else
			{
				sum_anomaly += kv;
				n_anomaly++;
			}
		}
		s = (n_anomaly > 0 ? sum_anomaly / (double) n_anomaly : 0.0) -
			(n_normal > 0 ? sum_normal / (double) n_normal : 0.0);
		if (fabs(s) < h)
			s = 0.0;
		if (!neighbours)
			s = label[i] > 0 ? -1.0 : 0.0;	/* a labelled normal's own bound: 1 */
		if (label[i] < 0)
		{
			/* signed: alpha_i in [-anomaly_bound C, 0] (smo.c) */
			weight[i] = -anomaly_bound;
			continue;
		}
		weight[i] = weight_of_score(s, c, h, n - n_anomaly_rows, curve);
		total += weight[i] * c;
	}
	svc_free(env, lab);

	/* the alphas sum to 1: the bounds must leave room for it (bounds of
	 * exactly 1/N each may sum to a rounding below 1) */
	if (!(total >= 1.0 - 1e-9))
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "the labelled rows leave no feasible model");
		svc_error_detail(err, "The rows' bounds sum to %g; the one-class problem needs at least 1.",
						 total);
		svc_error_hint(err, "Label fewer rows as anomalies, lower \"outlier_fraction\", or "
					   "raise \"label_radius\" to narrow the neighbourhoods.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	return SVC_OK;
}

/*
 * The threshold: the outlier_fraction quantile (threshold.h), or with
 * outlier_fraction 0 the solver's own offset, kept.
 */
static SvcStatus
threshold(const SvcEnv *env, SvcModel *m, const double *rows, int64_t n, SvcError *err)
{
	if (m->opt.nu > 0 || m->sv_gamma)
		return svc_threshold_set(env, m, rows, n, err);
	return SVC_OK;
}

/*
 * Labelled rows' support vectors: appended to the model's, alpha 0, the
 * anomalies at m->gamma, then the normals at lab_gamma (the codec's
 * section 8 stores the count and width of this last run).  slot[i] is
 * labelled row i's support vector.
 */
static SvcStatus
append_labelled(const SvcEnv *env, SvcModel *m, const double *rows, const int8_t *label,
				int64_t n, int64_t n_lab, double lab_gamma, int64_t *slot, SvcError *err)
{
	int32_t		d = m->dims;
	int64_t		total = (int64_t) m->n_sv + n_lab;
	int64_t		n_wide = 0;
	bool		widths;
	double	   *sv,
			   *alpha,
			   *g = NULL;
	int64_t		k,
				kw;

	for (int64_t i = 0; i < n; i++)
		n_wide += label[i] > 0;
	/*
	 * A width gamma / (SVC_SPREAD_LIFT_WIDTH k) that rounds to 0 (gamma a
	 * few times the least double) has no run of its own: the codec keeps
	 * such a run only at a width in (0, gamma)
	 */
	if (!(lab_gamma > 0.0 && lab_gamma < m->gamma))
		n_wide = 0;
	widths = m->sv_gamma != NULL || n_wide > 0;
	if (total > INT32_MAX)
		return svc_fail(err, SVC_ERR_LIMIT, "too many support vectors: %lld", (long long) total);
	sv = svc_alloc(env, sizeof(double) * (size_t) total * (size_t) d, err);
	alpha = svc_alloc(env, sizeof(double) * (size_t) total, err);
	if (widths)
		g = svc_alloc(env, sizeof(double) * (size_t) total, err);
	if (!sv || !alpha || (widths && !g))
	{
		svc_free(env, sv);
		svc_free(env, alpha);
		svc_free(env, g);
		return SVC_ERR_NOMEM;
	}
	if (m->n_sv > 0)
	{
		memcpy(sv, m->sv, sizeof(double) * (size_t) m->n_sv * (size_t) d);
		memcpy(alpha, m->alpha, sizeof(double) * (size_t) m->n_sv);
		if (m->sv_gamma)
			memcpy(g, m->sv_gamma, sizeof(double) * (size_t) m->n_sv);
		else if (g)
			for (int32_t i = 0; i < m->n_sv; i++)
				g[i] = m->gamma;
	}
	k = m->n_sv;
	kw = total - n_wide;
	for (int64_t i = 0; i < n; i++)
	{
		bool		w = n_wide > 0 && label[i] > 0;
		int64_t		s;

		if (label[i] == 0)
			continue;
		s = w ? kw++ : k++;
		slot[i] = s;
		memcpy(sv + (size_t) s * (size_t) d, rows + (size_t) i * (size_t) d,
			   sizeof(double) * (size_t) d);
		alpha[s] = 0.0;
		if (g)
			g[s] = w ? lab_gamma : m->gamma;
	}
	svc_free(env, m->sv);
	svc_free(env, m->alpha);
	svc_free(env, m->sv_gamma);
	m->sv = sv;
	m->alpha = alpha;
	m->sv_gamma = g;
	m->n_sv = (int32_t) total;
	if (n_wide > 0)
	{
		m->lab_wide = n_wide;
		m->lab_gamma = lab_gamma;
	}
	return SVC_OK;
}

double
svc_supervision_lift_scale(double rho)
{
	double		k = rho / SVC_SPREAD_RUGGED;

	return k > 1.0 ? fmin(k, SVC_SPREAD_LIFT_SCALE_MAX) : 1.0;
}

/*
 * The median over the first (up to SVC_SPREAD_ISLAND_PROBE) support
 * vectors of gamma times the squared distance to the nearest other one:
 * how far apart the solver's kernels sit (supervision.h).  0 with fewer
 * than two.
 */
static SvcStatus
island_level(const SvcEnv *env, const SvcModel *m, double *level, SvcError *err)
{
	int32_t		d = m->dims,
				ns = m->n_sv,
				probe = ns < SVC_SPREAD_ISLAND_PROBE ? ns : SVC_SPREAD_ISLAND_PROBE;
	double	   *v;

	*level = 0.0;
	if (ns < 2)
		return SVC_OK;
	v = svc_alloc(env, sizeof(double) * (size_t) probe, err);
	if (v == NULL)
		return SVC_ERR_NOMEM;
	for (int32_t i = 0; i < probe; i++)
	{
		const double *a = m->sv + (size_t) i * (size_t) d;
		double		best = HUGE_VAL;

		if ((i & 63) == 0 && svc_interrupted(env, err))
		{
			svc_free(env, v);
			return SVC_ERR_INTERRUPTED;
		}
		for (int32_t j = 0; j < ns; j++)
		{
			double		d2;

			if (j == i)
				continue;
			d2 = svc_sqdist(a, m->sv + (size_t) j * (size_t) d, d);
			if (d2 < best)
				best = d2;
		}
		v[i] = best * (m->sv_gamma ? m->sv_gamma[i] : m->gamma);
	}
	qsort(v, (size_t) probe, sizeof(double), svc_cmp_double);
	*level = v[probe / 2];
	svc_free(env, v);
	return SVC_OK;
}

/*
 * The hyperplane's lift scale k (supervision.h): 1 unless the solver's
 * kernels sit apart (island_level at SVC_SPREAD_ISLAND or more), then
 * from the quantile of the solver's f at SVC_SPREAD_RUGGED_SHARE over its
 * threshold q0 (m->offset, which it leaves as it found it).
 */
static SvcStatus
lift_scale(const SvcEnv *env, SvcModel *m, const double *rows, int64_t n, double *k,
		   SvcError *err)
{
	double		nu = m->opt.nu,
				q0 = m->offset,
				level;
	SvcStatus	st;

	*k = 1.0;
	if (!(nu > 0 && nu < SVC_SPREAD_RUGGED_SHARE && q0 > 0))
		return SVC_OK;
	st = island_level(env, m, &level, err);
	if (st != SVC_OK || !(level >= SVC_SPREAD_ISLAND))
		return st;
	m->opt.nu = SVC_SPREAD_RUGGED_SHARE;
	st = svc_threshold_set(env, m, rows, n, err);
	m->opt.nu = nu;
	if (st == SVC_OK)
		*k = svc_supervision_lift_scale(m->offset / q0);
	m->offset = q0;
	return st;
}

/*
 * The hyperplane's lift in a model whose automatic gamma was widened
 * (fit.c, m->gamma_widen > 0; supervision.h): where the solver's kernels
 * sat apart at the automatic width (island_level over the widening factor
 * at SVC_SPREAD_ISLAND or more) the lift of scale SVC_SPREAD_WIDENED_K,
 * else the labelled normals at the solver's own width, weight
 * SVC_SPREAD_LIFT_HYPERPLANE.  Sets *lift (times SVC_SPREAD_LIFT q0) and
 * *lab_gamma.
 */
static SvcStatus
lift_widened(const SvcEnv *env, const SvcModel *m, double *lift, double *lab_gamma,
			 SvcError *err)
{
	double		level,
				k = SVC_SPREAD_WIDENED_K;
	SvcStatus	st;

	*lift = SVC_SPREAD_LIFT_HYPERPLANE;
	*lab_gamma = m->gamma;
	st = island_level(env, m, &level, err);
	if (st != SVC_OK || !(level >= SVC_SPREAD_ISLAND * m->gamma_widen))
		return st;
	*lift = SVC_SPREAD_LIFT_HYPERPLANE * k * k;
	*lab_gamma = m->gamma / (SVC_SPREAD_LIFT_WIDTH * k);
	return SVC_OK;
}

SvcStatus
svc_supervision_spread(const SvcEnv *env, SvcModel *m, const double *rows,
					   const int8_t *label, int64_t n, SvcError *err)
{
	int32_t		d = m->dims;
	int64_t		n_lab = 0,
				first;
	int64_t    *slot;
	double		q0;
	/* the hyperplane's narrower kernel reaches fewer neighbours: twice */
	double		push = m->boundary == SVC_BOUNDARY_SPHERE ? 1.0 : 2.0;
	double		lift = 1.0,
				lab_gamma = m->gamma,
				k = 1.0;
	SvcStatus	st;

	for (int64_t i = 0; i < n; i++)
		n_lab += label[i] != 0;
	st = threshold(env, m, rows, n, err);
	if (st != SVC_OK || n_lab == 0)
		return st;
	if (m->boundary != SVC_BOUNDARY_SPHERE && m->gamma_widen > 0)
	{
		/* a widened model's f is smoother: a lift of its own */
		st = lift_widened(env, m, &lift, &lab_gamma, err);
		if (st != SVC_OK)
			return st;
	}
	else if (m->boundary != SVC_BOUNDARY_SPHERE)
	{
		/* the hyperplane's labelled normals lift a wider neighbourhood */
		st = lift_scale(env, m, rows, n, &k, err);
		if (st != SVC_OK)
			return st;
		lift = SVC_SPREAD_LIFT_HYPERPLANE * k * k;
		lab_gamma = m->gamma / (SVC_SPREAD_LIFT_WIDTH * k);
	}
	q0 = m->offset;
	first = m->n_sv;
	slot = svc_alloc(env, sizeof(int64_t) * (size_t) n, err);
	if (slot == NULL)
		return SVC_ERR_NOMEM;
	st = append_labelled(env, m, rows, label, n, n_lab, lab_gamma, slot, err);
	if (st != SVC_OK)
	{
		svc_free(env, slot);
		return st;
	}

	/*
	 * The first weights from the threshold q0 of the solver's f: a
	 * labelled normal lifts its kernel sum by q0 (2 k^2 times with the
	 * hyperplane), a labelled anomaly takes
	 * its own down to SVC_SPREAD_DEPTH q0 (the others' weights aside), or
	 * as far again below it with the hyperplane.
	 */
	for (int64_t i = 0; i < n; i++)
	{
		const double *x = rows + (size_t) i * (size_t) d;
		double		lam;

		if (label[i] > 0)
			m->alpha[slot[i]] = lift * SVC_SPREAD_LIFT * q0;
		else if (label[i] < 0)
		{
			lam = svc_kernel_sum(m->sv, m->alpha, m->sv_gamma, (int32_t) first, d, m->gamma, x);
			m->alpha[slot[i]] = -push * fmax(0.0, lam - SVC_SPREAD_DEPTH * q0);
		}
	}

	/*
	 * Then the threshold again, and the anomalies that the others'
	 * weights (a normal's lift nearby, a threshold that moved down) left
	 * above the depth pushed again, a few rounds at most.
	 */
	for (int round = 0; round < SVC_SPREAD_ROUNDS; round++)
	{
		bool		pushed = false;

		st = threshold(env, m, rows, n, err);
		if (st != SVC_OK)
			break;
		for (int64_t i = 0; i < n; i++)
		{
			const double *x = rows + (size_t) i * (size_t) d;
			double		lam;

			if (label[i] >= 0)
				continue;
			lam = svc_kernel_sum(m->sv, m->alpha, m->sv_gamma, m->n_sv, d, m->gamma, x);
			if (lam > SVC_SPREAD_DEPTH * m->offset * (1.0 + 1e-9))
			{
				m->alpha[slot[i]] -= lam - SVC_SPREAD_DEPTH * m->offset;
				pushed = true;
			}
		}
		if (!pushed)
			break;
		if (round == SVC_SPREAD_ROUNDS - 1)
			st = threshold(env, m, rows, n, err);
	}
	svc_free(env, slot);
	return st;
}

SvcStatus
svc_supervision_merge_rows(const SvcEnv *env, double *rows, int8_t *label, int64_t kept,
						   int64_t n, int32_t d, SvcError *err)
{
	size_t		rowsz = sizeof(double) * (size_t) d;
	double	   *out = rows + (size_t) n * (size_t) d;
	int8_t	   *lab = svc_alloc(env, (size_t) (n > 0 ? n : 1), err);
	int64_t		i = 0,
				j = kept,
				k = 0;

	if (lab == NULL)
		return SVC_ERR_NOMEM;
	while (i < kept || j < n)
	{
		int64_t		src = j >= n || (i < kept &&
								   svc_state_row_cmp(rows + (size_t) j * d, rows + (size_t) i * d, d) >= 0) ?
			i++ : j++;

		memcpy(out + (size_t) k * d, rows + (size_t) src * d, rowsz);
		lab[k++] = label[src];
	}
	memcpy(rows, out, rowsz * (size_t) n);
	memcpy(label, lab, (size_t) n);
	svc_free(env, lab);
	return SVC_OK;
}
