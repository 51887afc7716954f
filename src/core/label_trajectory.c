/* label_trajectory.c - a row's climb to its equilibrium (x <- P(x)), and prediction by it */
#include "label_trajectory.h"
#include "kdtree.h"
#include "kernel.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Trajectories. */
#define CHECK_KERNEL_ROWS	1024	/* units per check for the smallest models */
#define CHECK_KERNEL_TERMS	64		/* ... fewer by one per this many sv * dims */
#define TRAJ_MAX_STEPS		300		/* fixed-point steps per trajectory */
#define TRAJ_STOP_SIGMA		1e-3	/* converged when a step is this * sigma */
#define SNAP_SIGMA			0.25	/* equilibria closer than this * sigma merge,
									 * and trajectories stop this close to one
									 * (smaller: same clusters, more work) */

/* The tolerances for a model's width. */
void
svc_traj_tol(const SvcModel *m, SvcTrajTol *tt)
{
	double		sigma = 1.0 / sqrt(2.0 * m->gamma);

	tt->stop = TRAJ_STOP_SIGMA * sigma;
	tt->merge = SNAP_SIGMA * sigma;
}

/*
 * How many units of work (trajectories, saddle heights: tens of kernel
 * sums each) to run between interrupt checks: about a million kernel
 * terms' worth of sums, so a large model checks at every unit and a small
 * one does not pay for the hook at every row.
 */
int64_t
svc_label_units_per_check(const SvcModel *m)
{
	int64_t		terms = (int64_t) (m->n_sv > 0 ? m->n_sv : 1) * m->dims;
	int64_t		every = CHECK_KERNEL_ROWS / (terms / CHECK_KERNEL_TERMS + 1);

	return every > 0 ? every : 1;
}

SvcStatus
svc_label_work_init(const SvcEnv *env, const SvcModel *m, SvcLabelWork *w,
					SvcError *err)
{
	size_t		d = (size_t) (m->dims > 0 ? m->dims : 1);
	size_t		s = (size_t) (m->n_sv > 0 ? m->n_sv : 1);

	w->pre_x = NULL;
	w->pre_next = NULL;
	w->x = svc_alloc(env, sizeof(double) * d, err);
	w->next = svc_alloc(env, sizeof(double) * d, err);
	w->kbuf = svc_alloc(env, sizeof(double) * s, err);
	w->cols = m->sv_gamma == NULL ? svc_alloc(env, sizeof(double) * d * s, err) : NULL;
	if (!w->x || !w->next || !w->kbuf || (m->sv_gamma == NULL && !w->cols))
	{
		svc_label_work_free(env, w);
		return SVC_ERR_NOMEM;
	}
	/* by column: the steps' sums vectorise across the support vectors */
	if (w->cols != NULL)
		svc_rows_to_cols(m->sv, m->n_sv, m->dims, w->cols);
	return SVC_OK;
}

double
svc_label_step(const SvcModel *m, SvcLabelWork *w, bool *ok)
{
	if (w->pre_x != NULL)
	{
		const double *pre = w->pre_x;

		w->pre_x = NULL;
		/* the same point to the bit: the same step */
		if (memcmp(w->x, pre, sizeof(double) * (size_t) m->dims) == 0)
		{
			memcpy(w->next, w->pre_next, sizeof(double) * (size_t) m->dims);
			*ok = w->pre_ok;
			return w->pre_lam;
		}
	}
	if (w->cols != NULL)
		return svc_kernel_fixed_point_cols(w->cols, (size_t) m->n_sv, m->alpha,
										    m->n_sv, m->dims, m->gamma, w->x,
										   w->next, w->kbuf, ok);
	return svc_kernel_fixed_point(m->sv, m->alpha, m->sv_gamma, m->n_sv, m->dims,
								  m->gamma, w->x, w->next, w->kbuf, ok);
}

void
svc_label_work_free(const SvcEnv *env, SvcLabelWork *w)
{
	svc_free(env, w->x);
	svc_free(env, w->next);
	svc_free(env, w->kbuf);
	svc_free(env, w->cols);
	w->x = w->next = w->kbuf = w->cols = NULL;
}

/* Index of the equilibrium nearest to x (lowest index on ties), and its
 * squared distance (HUGE_VAL if it overflows); -1 when there is none or
 * x has a NaN. */
static int32_t
nearest_eq(const double *eq, int32_t n_eq, int32_t d, const double *x,
		   double *dist2)
{
	int32_t		best = -1;
	double		bd = DBL_MAX;

	for (int32_t i = 0; i < n_eq; i++)
	{
		double		t = svc_sqdist(eq + (size_t) i * d, x, d);

		if (t < bd)
		{
			bd = t;
			best = i;
		}
	}
	if (best < 0 && n_eq > 0)
	{
		/*
		 * Every distance overflowed: x is some 1e154 or more away from the
		 * equilibria.  Compare the distances scaled down instead, so that
		 * such a row still gets the nearest equilibrium (a row with a NaN
		 * still gets none).
		 */
		best = (int32_t) svc_nearest_far(eq, n_eq, d, x);
		bd = HUGE_VAL;
	}
	*dist2 = bd;
	return best;
}

/*
 * Run the trajectory of x0 against the equilibria eq[n_eq] and report the
 * nearest one to where it ends; w->x holds the end point.
 *
 * It stops when a step is below tt->stop, after TRAJ_MAX_STEPS steps, where
 * the denominator guard fires (the point then stays put), or as soon as it
 * comes within tt->merge of a known equilibrium: that is where most rows
 * of a cluster would end anyway, and it saves most of the steps.  The
 * nearest-equilibrium scan costs O(n_eq * dims), so it runs only when a
 * lower bound on the distance (the last measured distance minus the way
 * walked since, by the triangle inequality) says a snap is possible.
 */
void
svc_traj_run(const SvcModel *m, const double *eq, int32_t n_eq,
			 const double *x0, SvcLabelWork *w, const SvcTrajTol *tt,
			 SvcTrajEnd *out)
{
	int32_t		d = m->dims;
	double		bound = 0.0;	/* lower bound on distance to nearest eq */
	double		dist2 = DBL_MAX;
	int32_t		near = -1;
	int			steps = 1;
	bool		ok;

	memcpy(w->x, x0, sizeof(double) * (size_t) d);
	out->lambda0 = svc_label_step(m, w, &ok);
	for (;;)
	{
		double		step;
		double	   *t;

		if (n_eq > 0 && bound <= tt->merge)
		{
			near = nearest_eq(eq, n_eq, d, w->x, &dist2);
			bound = sqrt(dist2);
			if (bound <= tt->merge)
			{
				out->near = near;
				out->snapped = true;
				return;
			}
		}
		if (!ok)
			break;				/* frozen where the weights cancel */
		step = sqrt(svc_sqdist(w->x, w->next, d));
		if (isnan(step))
			break;				/* the step overflowed: stay where it was */
		t = w->x;
		w->x = w->next;
		w->next = t;
		bound -= step;
		if (step <= tt->stop || steps >= TRAJ_MAX_STEPS)
			break;
		(void) svc_label_step(m, w, &ok);
		steps++;
	}
	near = nearest_eq(eq, n_eq, d, w->x, &dist2);
	out->near = near;
	out->snapped = near >= 0 && sqrt(dist2) <= tt->merge;
}

int32_t
svc_label_predict(const SvcModel *m, const double *xs, SvcLabelWork *w,
				  double *decision)
{
	SvcTrajTol		tt;
	SvcTrajEnd		end;

	if (m->n_eq <= 0)
	{
		if (decision)
			*decision = svc_model_decision_scaled(m, xs);
		return 0;
	}
	svc_traj_tol(m, &tt);
	svc_traj_run(m, m->eq, m->n_eq, xs, w, &tt, &end);
	if (decision)
		*decision = end.lambda0 - m->offset;
	/* no nearest equilibrium only when xs is not finite (NaN distances) */
	return end.near >= 0 ? m->eq_cluster[end.near] : 0;
}

/*
 * assign_rule "auto" (options.h): a row's trajectory's cluster c, or the
 * cluster of the row's nearest equilibrium where that one is clearly the
 * nearer, above two columns.  Measured (doc/design-notes.md): in many
 * columns the kernel is wide against the gaps between clusters, and a
 * row at a cluster's edge (most of them outliers) climbs the sum of a
 * larger neighbour, which has more support vectors; its own cluster's
 * equilibrium is still the nearest.  In two columns the trajectories are
 * local and better than the nearest equilibrium (the plain blobs' tails,
 * d31's overlaps), so they keep the trajectory's cluster.  At most two
 * passes over the equilibria, O(n_eq * dims), with svc_sqdist's sums
 * whether the scorer or svc_label_assign asks, so that the two agree
 * exactly.
 */
int32_t
svc_label_assign_rule(const SvcModel *m, const double *xs, int32_t c, double *dist)
{
	int32_t		d = m->dims,
				best = -1;
	double		d1 = DBL_MAX,
				dc = DBL_MAX;

	if (m->opt.assign_rule != SVC_ASSIGN_AUTO || d <= 2 || c <= 0 || m->n_eq < 2)
		return c;
	/*
	 * c's own equilibria first: a row within gamma x squared distance 1 of
	 * one of them keeps c whatever the others (about half the rows of the
	 * 8-D blobs, which then pay one or two distances, not one per
	 * equilibrium)
	 */
	for (int32_t i = 0; i < m->n_eq; i++)
		if (m->eq_cluster[i] == c)
			dc = fmin(dc, svc_sqdist(m->eq + (size_t) i * d, xs, d));
	if (!(m->gamma * dc > SVC_ASSIGN_MARGIN))
		return c;				/* (a NaN keeps c too) */
	/* the others: in one call where there is room (the same sums) */
	if (dist != NULL)
		svc_sqdist_many(m->eq, NULL, m->n_eq, d, xs, dist);
	for (int32_t i = 0; i < m->n_eq; i++)
		if (m->eq_cluster[i] != c)
		{
			double		t = dist != NULL ? dist[i] : svc_sqdist(m->eq + (size_t) i * d, xs, d);

			if (t < d1)
			{
				d1 = t;
				best = i;
			}
		}
	/*
	 * gamma (dc - d1) > 1: the nearest equilibrium (of another cluster) has
	 * a kernel value more than e times that of c's nearest
	 */
	if (best >= 0 && m->gamma * (dc - d1) > SVC_ASSIGN_MARGIN)
		return m->eq_cluster[best];
	return c;
}

int32_t
svc_label_assign(const SvcModel *m, const double *xs, SvcLabelWork *w,
				 double *decision)
{
	return svc_label_assign_rule(m, xs, svc_label_predict(m, xs, w, decision), NULL);
}

/* Free the equilibria list's arrays. */
void
svc_eqlist_free(const SvcEnv *env, SvcEqList *l)
{
	svc_free(env, l->x);
	svc_free(env, l->lambda);
	l->x = l->lambda = NULL;
	l->n = l->cap = 0;
}

/* Append an equilibrium, growing the arrays when full. */
SvcStatus
svc_eqlist_push(const SvcEnv *env, SvcEqList *l, const double *x, double lambda,
				SvcError *err)
{
	size_t		d = (size_t) l->dims;
	int64_t		cap_x = l->cap,
				cap_l = l->cap;
	SvcStatus	st;

	/* a failed grow keeps every array valid at the old capacity */
	st = svc_grow(env, (void **) &l->x, &cap_x, l->n + 1, sizeof(double) * d, err);
	if (st == SVC_OK)
		st = svc_grow(env, (void **) &l->lambda, &cap_l, l->n + 1, sizeof(double), err);
	if (st != SVC_OK)
		return st;
	l->cap = cap_x;
	memcpy(l->x + d * (size_t) l->n, x, sizeof(double) * d);
	l->lambda[l->n] = lambda;
	l->n++;
	return SVC_OK;
}

/* lambda at a + t (b - a); pt is scratch of dims doubles. */
double
svc_lambda_on_segment(const SvcModel *m, const double *a, const double *b,
					  double t, double *pt)
{
	for (int32_t j = 0; j < m->dims; j++)
		pt[j] = a[j] + t * (b[j] - a[j]);
	return svc_kernel_sum(m->sv, m->alpha, m->sv_gamma, m->n_sv, m->dims,
						  m->gamma, pt);
}
