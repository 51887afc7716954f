/* supervision.c - per-row bounds from labelled rows' impact scores (supervision.h) */
#include "supervision.h"
#include "kernel.h"

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
