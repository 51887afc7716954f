/*
 * score_trajectory.c - scoring many rows against one model: the certified
 * trajectories of svc_predict and svc_assign, the basin certificates, and
 * the labelling's trajectories (score.h; the proofs: doc/design-notes.md)
 *
 * Built with the kernel's flags (vector exp, see the Makefile), as
 * score.c, whose passes over the support vectors it steps with.  Every
 * shortcut here carries a bound, and a row whose bound does not settle
 * its answer takes the full computation, so results are those of
 * svc_label_predict (exactly).
 */
#include "score.h"
#include "score_internal.h"
#include "kernel.h"
#include "vec8.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FAST_STEPS 250		/* steps tracked before the full trajectory */
#define MAX_LABEL_STEPS 250	/* the same in labelling */
#define BASIN_GRID	24			/* radii tried per equilibrium */
/*
 * Certificates are computed once the rows predicted would each have paid
 * this many kernel terms for them: at once for a budgeted model, only
 * for long runs with a model of many support vectors and equilibria.
 */
#define CERTIFY_TERMS_PER_ROW 2000.0

/* ---------- the fixed-point step ---------- */

/*
 * How far rounding can move one fixed-point step, in this code or in
 * kernel.c's (a weighted mean of n_sv rows), for points whose largest
 * coordinate is xmax: far above either's actual error.
 */
static double
step_rounding(const SvcScorer *s, double xmax)
{
	return 8.0 * (s->m->n_sv + 64.0) * U * (s->coord_max + xmax + 1.0) * sqrt((double) s->dims);
}

/*
 * The fixed-point step P(x) into s->p, from the kernel values the last
 * svc_scorer_pass() at this same x left behind, with its error bound.
 */
static void
pass_step(SvcScorer *s, const double *x, SvcScorePass *out)
{
	int32_t		d = s->dims,
				nb = s->n_blk,
				n_kept = out->n_kept,
				n_drop = out->n_drop;
	double		dsum = out->dsum,
				xmax = 0.0;
	v8			vw = {0},
				vwq = {0};
	/* the pass took float distances: the mean of the float vectors too */
	bool		wide_on = out->d2_err > 0.0;

	for (int32_t j = 0; j < d; j++)
		xmax = fmax(xmax, fabs(x[j]));
	/* the farthest vector of each block skipped on its own */
	for (int32_t b = 0; b < nb; b++)
		if (s->bmax[b] == DBL_MAX)
		{
			v8			dd = load8(s->d2 + (size_t) b * BLK);

			dsum += sqrt(hmax8p(&dd) + out->d2_err);
		}
	/* the kept terms' weights, in place of their kernel values */
	for (int32_t i = 0; i < n_kept; i++)
	{
		int32_t		b = s->kept[i];
		v8			wk = load8(s->alpha + (size_t) b * BLK) *
			load8(s->width + (size_t) b * BLK) * load8(s->kx + (size_t) i * BLK);

		vw += wk;
		vwq += wk * load8(s->d2 + (size_t) b * BLK);
		store8p(s->kx + (size_t) i * BLK, &wk);
	}
	{
		double		w = hsum8p(&vw);
		double		inv,
					wide,
					step = 0.0;

		if (!(w >= DBL_MIN))
			return;
		inv = 1.0 / w;
		/*
		 * P: eight coordinates at a time, their sums over the kept blocks
		 * (in the blocks' order) in registers, not through memory for
		 * each block; the floats of the blocks where the pass took them
		 */
		for (int32_t j0 = 0; j0 < d; j0 += BLK)
		{
			int32_t		nj = d - j0 < BLK ? d - j0 : BLK;
			v8			a[BLK];

			for (int t = 0; t < BLK; t++)
				a[t] = (v8) {0};
			for (int32_t i = 0; i < n_kept; i++)
			{
				int32_t		b = s->kept[i];
				v8			wk = load8(s->kx + (size_t) i * BLK);

				if (wide_on)
				{
					/* the block's floats, eight lanes of its half group (score.c) */
					int32_t		q = b % (SVC_WIDE_SLOTS / BLK);
					const float *fb = s->sf + (size_t) (b / (SVC_WIDE_SLOTS / BLK)) * SVC_WIDE_SLOTS * d +
						(size_t) (q * BLK / SVC_WIDE_HALF) * SVC_WIDE_HALF * d + (q * BLK) % SVC_WIDE_HALF +
						(size_t) j0 * SVC_WIDE_HALF;

					if (nj == BLK)
						for (int t = 0; t < BLK; t++)
						{
							SvcF8		sv;

							memcpy(&sv, fb + (size_t) t * SVC_WIDE_HALF, sizeof(sv));
							a[t] += wk * __builtin_convertvector(sv, v8);
						}
					else
						for (int t = 0; t < nj; t++)
						{
							SvcF8		sv;

							memcpy(&sv, fb + (size_t) t * SVC_WIDE_HALF, sizeof(sv));
							a[t] += wk * __builtin_convertvector(sv, v8);
						}
				}
				else
				{
					const double *blk = s->st + ((size_t) b * d + j0) * BLK;

					if (nj == BLK)
						for (int t = 0; t < BLK; t++)
							a[t] += wk * load8(blk + (size_t) t * BLK);
					else
						for (int t = 0; t < nj; t++)
							a[t] += wk * load8(blk + (size_t) t * BLK);
				}
			}
			for (int t = 0; t < nj; t++)
			{
				int32_t		j = j0 + t;

				s->p[j] = hsum8p(&a[t]) * inv;
				step += (s->p[j] - x[j]) * (s->p[j] - x[j]);
			}
		}
		/*
		 * wide rows' float distances (score.c): each d_i^2 within d2_err,
		 * each weight within a factor exp(eta) of its exact value
		 */
		wide = exp(2.0 * out->eta);
		out->q = (hsum8p(&vwq) * inv + out->d2_err) * wide;
		/* rounding of a weighted mean of n_sv rows, in either code */
		out->rnd = step_rounding(s, xmax);
		/*
		 * dropped terms: sum w_i d_i over them is at most prune (2^-50,
		 * wide rows 2^-30) w times
		 * their blocks' largest distances, and they move the mean by at
		 * most their weight share times ||p - x||.  Weights off by a
		 * factor exp(+-eta) move the mean of the kept ones (all positive
		 * on this path) by at most sum_i |w'_i / W' - w_i / W| ||s_i - x||:
		 * each |w'_i / W' - w_i / W| <= expm1(2 eta) w_i / W, and
		 * sum_i (w_i / W) ||s_i - x|| <= sqrt(q) (Jensen; q above bounds
		 * the exact weights' mean of the exact d_i^2), or 2 sv_norm.  (The
		 * largest ||s_i||, 2 sv_norm, alone was 20 times wider on 768-D
		 * rows, and most rows that stepped twice there lost their track.)
		 */
		out->p_err = (dsum + n_drop * sqrt(step)) * out->prune * wide + out->rnd +
			expm1(2.0 * out->eta) * fmin(sqrt(out->q), 2.0 * s->sv_norm) * (1.0 + 0x1p-30);
		/*
		 * and a mean of the float vectors: each within 2^-24 of its
		 * coordinates (plus 2^-149 a subnormal one), so the mean within
		 * 2^-24 max|s_i| + sqrt(d) 2^-149
		 */
		if (wide_on)
			out->p_err += 0x1p-24 * s->sv_norm * (1.0 + 0x1p-30) + sqrt((double) d) * 0x1p-149;
		out->drop = n_drop * out->prune * wide;
		out->p_ok = true;
	}
}

/* ---------- prediction ---------- */

/*
 * dist[i] = ||x - eq_i|| for the n_eq rows of eq; returns the least.  In
 * one call and one vector loop: a row's trajectory asks for them at every
 * step, and with many equilibria (162 on flame) a call and a scalar sqrt
 * for each were half of the prediction's time.
 */
static double
eq_dists(const double *eq, int32_t n_eq, int32_t d, const double *x, double *dist)
{
	double		least = DBL_MAX;

	svc_sqdist_many(eq, NULL, n_eq, d, x, dist);
	for (int32_t i = 0; i < n_eq; i++)
	{
		dist[i] = sqrt(dist[i]);
		least = dist[i] < least ? dist[i] : least;
	}
	return least;
}

/*
 * The model's equilibria by column in s->eqc, for eq_dists_model (false:
 * no memory).  Copied at the first prediction, so that the memory is the
 * caller's, as eqd's.
 */
static bool
eqc_ready(SvcScorer *s)
{
	SvcError	err;

	if (s->eqc != NULL || s->m->n_eq < 8)
		return true;			/* eq_dists_model reads rows below 8 */
	s->eqc = svc_alloc(s->env, sizeof(double) * (size_t) s->m->n_eq * (size_t) s->dims, &err);
	if (s->eqc == NULL)
		return false;
	svc_rows_to_cols(s->m->eq, s->m->n_eq, s->dims, s->eqc);
	return true;
}

/*
 * eq_dists for the model's own equilibria, from their columns: a vector
 * loop over the equilibria for each coordinate, where the rows' loop is
 * over the few coordinates of each (measured: doc/design-notes.md).
 */
static double
eq_dists_model(const SvcScorer *s, const double *x, double *restrict dist)
{
	int32_t		n = s->m->n_eq;
	double		least = DBL_MAX;

	/* fewer than a vector's worth: by rows, which is faster there */
	if (n < 8)
		return eq_dists(s->m->eq, n, s->dims, x, dist);
	/*
	 * eight equilibria at a time, their sums in a register over every
	 * coordinate (not through dist[] at each one), each in coordinate
	 * order as before; the last eight end at n (overlapping the eight
	 * before them, which get the same values again)
	 */
	for (int32_t i0 = 0; i0 < n; i0 += 4 * BLK)
	{
		/*
		 * four such sums side by side, so that each does not wait on its
		 * last multiply-add (the fifth ... eighth from i0 + 8 ... as
		 * above, past n the last eight again)
		 */
		int32_t		at[4];
		v8			a0 = {0},
					a1 = {0},
					a2 = {0},
					a3 = {0};

		for (int k = 0; k < 4; k++)
			at[k] = i0 + (k + 1) * BLK <= n ? i0 + k * BLK : n - BLK;
		for (int32_t j = 0; j < s->dims; j++)
		{
			const double *c = s->eqc + (size_t) j * n;
			v8			t0 = load8(c + at[0]) - x[j],
						t1 = load8(c + at[1]) - x[j],
						t2 = load8(c + at[2]) - x[j],
						t3 = load8(c + at[3]) - x[j];

			a0 += t0 * t0;
			a1 += t1 * t1;
			a2 += t2 * t2;
			a3 += t3 * t3;
		}
		store8p(dist + at[0], &a0);
		store8p(dist + at[1], &a1);
		store8p(dist + at[2], &a2);
		store8p(dist + at[3], &a3);
	}
	for (int32_t i = 0; i < n; i++)
	{
		dist[i] = sqrt(dist[i]);
		least = dist[i] < least ? dist[i] : least;
	}
	return least;
}

/*
 * eq_dists_model at the row of the last pass, where that pass left lower
 * bounds on the distances (svc_scorer_eq_bounds): the exact distance only
 * to the equilibria whose bound is within what svc_scorer_predict's tests
 * can use at x known to within eps (a basin's radius; the snap's merge +
 * 3 (eps + slack)), the bound for the others, which then fail every test
 * as their exact distances would.  Returns the least entry.
 */
static double
eq_dists_near(SvcScorer *s, const double *x, double *restrict dist, double eps, double slack)
{
	const SvcModel *m = s->m;
	double		near = (s->tol.merge + 3.0 * (eps + slack)) * (1.0 + 0x1p-40),
				least = DBL_MAX;

	if (!svc_scorer_eq_bounds(s, dist))
		return eq_dists_model(s, x, dist);
	for (int32_t i = 0; i < m->n_eq; i++)
	{
		double		lim = near;

		if (s->basin && s->basin[i].radius > lim)
			lim = s->basin[i].radius;
		if (!(dist[i] > lim))
			dist[i] = sqrt(svc_sqdist(m->eq + (size_t) i * s->dims, x, s->dims));
		least = dist[i] < least ? dist[i] : least;
	}
	return least;
}

/* Room for n distances to equilibria in s->eqd (false: no memory). */
static bool
eqd_reserve(SvcScorer *s, int32_t n)
{
	if (n > s->eqd_cap)
	{
		SvcError	err;
		int32_t		cap = n > 2 * s->eqd_cap ? n : 2 * s->eqd_cap;
		double	   *grown = svc_alloc(s->env, sizeof(double) * (size_t) cap, &err);

		if (!grown)
			return false;
		svc_free(s->env, s->eqd);
		s->eqd = grown;
		s->eqd_cap = cap;
	}
	return true;
}

/*
 * The cluster settled by the equilibria within reach of a point known to
 * within eps: if every equilibrium at most lim away has one cluster, that
 * one, else 0.
 */
static int32_t
one_cluster_within(const SvcModel *m, const double *dist, double lim)
{
	int32_t		c = 0;

	for (int32_t i = 0; i < m->n_eq; i++)
		if (dist[i] <= lim)
		{
			if (c == 0)
				c = m->eq_cluster[i];
			else if (c != m->eq_cluster[i])
				return 0;
		}
	return c;
}

/* svc_scorer_predict's trajectory: svc_label_predict's cluster */
static int32_t
scorer_traj_cluster(SvcScorer *s, const double *xs, double *decision)
{
	const SvcModel *m = s->m;
	int32_t		d = s->dims;
	double		eps = 0.0;		/* ||x - the full trajectory's point|| */
	double		slack;
	double		lip_lam;		/* Lipschitz constant of lambda */
	double		drift = 0.0;	/* how far rounding can lower lambda */
	double		rfar;			/* x0's distance to the farthest sv, bound */
	double	   *dist;
	bool		decided = false,
				was_wide = false,
				sum_only;
	SvcScorePass		ps;

	s->n_rows++;
	if (!s->certified && s->env &&
		(double) s->n_rows * CERTIFY_TERMS_PER_ROW >=
		(double) m->n_eq * m->n_sv * BASIN_GRID)
	{
		SvcError	err;

		/* once: without certificates rows only stop at snaps */
		s->certified = true;
		(void) svc_scorer_certify(s->env, s, &err);
	}
	if (m->n_eq <= 0 || !svc_scorer_row_in_range(s, xs) || !s->positive ||
		!eqd_reserve(s, m->n_eq) || !eqc_ready(s))
		goto full;

	dist = s->eqd;
	lip_lam = sqrt(2.0 * s->gmax / M_E) * s->abs_alpha;
	memcpy(s->x, xs, sizeof(double) * (size_t) d);
	{
		double		xn = 0.0,
					x2 = 0.0;

		for (int32_t j = 0; j < d; j++)
		{
			xn = fmax(xn, fabs(xs[j]));
			x2 += xs[j] * xs[j];
		}
		/*
		 * every sv, and every later point (a mean of them with positive
		 * weights), is within sqrt(d) coord_max and within sv_norm of 0:
		 * in many dimensions the norms are the far tighter bound
		 */
		rfar = fmin(sqrt((double) d) * (fmax(xn, s->coord_max) + s->coord_max),
					(fmax(sqrt(x2), s->sv_norm) + s->sv_norm) * (1.0 + 1e-9));
		/* rounding can lower lambda this much over 300 steps */
		drift = 300.0 * lip_lam * step_rounding(s, fmax(xn, s->coord_max));
	}

again:
	for (int32_t k = 0; k <= MAX_FAST_STEPS; k++)
	{
		double		dn,
					step,
					lip,
					next_eps;
		int32_t		c;

		/*
		 * The first point's sum by svc_scorer_pass_sum where f is asked
		 * for (its value is svc_decision's) or, on narrow models, where
		 * most rows settle there (it is the cheaper); a row that steps from
		 * it takes a pass there too.  On wide models the recording pass
		 * costs no more (its block-by-block drop spares the exps of the
		 * taken halves' blocks below the cut) and a row that steps needs no
		 * second one: 128-D predict about 6% less in the core.
		 */
		sum_only = k == 0 && !s->exact_steps &&
			(decision || (s->n_wide == 0 && s->n_first * 8 >= s->n_rows * 7));
		if (sum_only)
			svc_scorer_pass_sum(s, s->x, &ps);
		else
			svc_scorer_pass(s, s->x, &ps);
		if (k == 0 && !decided)
		{
			if (decision)
				*decision = svc_scorer_decide(s, xs, &ps);
			decided = true;
			was_wide = s->wide_on;
		}
		slack = 1e-9 * (1.0 + rfar);

		dn = eq_dists_near(s, s->x, dist, eps, slack);

		/* a basin certificate */
		if (s->basin)
		{
			double		lam_lo = ps.lam - ps.lam_err - lip_lam * eps - drift;

			for (int32_t i = 0; i < m->n_eq; i++)
				if (s->basin[i].radius > 0.0 &&
					dist[i] + eps + slack < s->basin[i].radius &&
					lam_lo > s->basin[i].level)
				{
					s->n_first += k == 0 && !s->exact_steps;
					s->exact_steps = false;
					return m->eq_cluster[i];
				}
		}

		/* the snap of svc_traj_run: within merge of an equilibrium */
		if (dn + eps + slack <= s->tol.merge)
		{
			c = one_cluster_within(m, dist, dn + 2.0 * eps + slack);
			s->n_first += k == 0 && c > 0 && !s->exact_steps;
			if (c > 0)
			{
				s->exact_steps = false;
				return c;
			}
			break;
		}
		if (dn - eps - slack <= s->tol.merge)
			break;				/* too close to tell */
		if (k == MAX_FAST_STEPS)
			break;
		if (sum_only)
			svc_scorer_pass(s, s->x, &ps);
		pass_step(s, s->x, &ps);
		if (!ps.p_ok)
			break;

		/* the step: its length, and how far the next point may be off */
		step = sqrt(svc_sqdist(s->x, s->p, d));
		if (eps * s->gmax * (rfar + 1.0) > 0.005)
			break;
		lip = 2.0 * s->gmax * (exp(0.04) * (sqrt(ps.q) + eps) * (sqrt(ps.q) + eps) +
							   1.05 * ps.drop * (rfar + 1.0) * (rfar + 1.0));
		next_eps = lip * eps + ps.p_err;
		if (step - eps - next_eps - slack <= s->tol.stop)
		{
			/* the trajectory may end at the next point */
			if (step + eps + next_eps + slack <= s->tol.stop)
			{
				/* it does: the nearest equilibrium to p */
				double		dp = eq_dists_model(s, s->p, dist);

				c = one_cluster_within(m, dist, dp + 2.0 * next_eps + slack);
				if (c > 0)
				{
					s->exact_steps = false;
					return c;
				}
			}
			break;
		}
		memcpy(s->x, s->p, sizeof(double) * (size_t) d);
		eps = next_eps;
	}

	/*
	 * a wide row whose float distances' error lost the track: once more
	 * from the start with double distances (their error bound is the
	 * rounding's, so eps grows far more slowly), before the full trajectory
	 */
	if (was_wide && !s->exact_steps)
	{
		s->exact_steps = true;
		s->n_retry++;
		eps = 0.0;
		memcpy(s->x, xs, sizeof(double) * (size_t) d);
		goto again;
	}
full:
	s->exact_steps = false;
	s->n_fallback++;
	if (decision && !decided)
		*decision = svc_scorer_decision(s, xs);
	return svc_label_predict(m, xs, &s->full, NULL);
}

int32_t
svc_scorer_predict(SvcScorer *s, const double *xs, double *decision)
{
	int32_t		c = scorer_traj_cluster(s, xs, decision);

	/* eqd as scratch, where it has room (it mostly has, from the row) */
	return svc_label_assign_rule(s->m, xs, c, s->eqd_cap >= s->m->n_eq ? s->eqd : NULL);
}

/* ---------- basin certificates ---------- */

SvcStatus
svc_scorer_certify(const SvcEnv *env, SvcScorer *s, SvcError *err)
{
	const SvcModel *m = s->m;
	int32_t		d = m->dims,
				n = m->n_sv,
				M = m->n_eq;
	double	   *dsv;
	SvcBasin   *b;

	svc_free(env, s->basin);
	s->basin = NULL;
	s->certified = true;
	if (!s->positive || M <= 0 || n <= 0)
		return SVC_OK;
	b = svc_alloc0(env, sizeof(SvcBasin) * (size_t) M, err);
	dsv = svc_alloc(env, sizeof(double) * (size_t) n, err);
	if (!b || !dsv)
	{
		svc_free(env, b);
		svc_free(env, dsv);
		return SVC_ERR_NOMEM;
	}
	for (int32_t e = 0; e < M; e++)
	{
		const double *xe = m->eq + (size_t) e * d;
		double		other = DBL_MAX,
					far = 0.0,
					rmax,
					lam_e,
					best_h = DBL_MAX,
					best_r = 0.0;

		if (e % 16 == 0 && svc_interrupted(env, err))
		{
			svc_free(env, b);
			svc_free(env, dsv);
			return SVC_ERR_INTERRUPTED;
		}
		for (int32_t i = 0; i < M; i++)
			if (m->eq_cluster[i] != m->eq_cluster[e])
				other = fmin(other, sqrt(svc_sqdist(xe, m->eq + (size_t) i * d, d)));
		for (int32_t i = 0; i < n; i++)
		{
			dsv[i] = sqrt(svc_sqdist(xe, m->sv + (size_t) i * d, d));
			far = fmax(far, dsv[i]);
		}
		/*
		 * The ball's end points have their nearest equilibrium within 2r
		 * of e, and snap to one within r + merge: all of e's cluster.
		 */
		if (other < DBL_MAX)
			rmax = fmin(other / 2.0, other - s->tol.merge) * (1.0 - 1e-9);
		else
			rmax = far + 8.0 / sqrt(2.0 * s->gmax) + 8.0 * sqrt(1.0 / s->gmax);
		if (!(rmax > s->tol.merge))
			continue;
		lam_e = svc_kernel_sum(m->sv, m->alpha, m->sv_gamma, n, d, m->gamma, xe);
		for (int32_t g = 1; g <= BASIN_GRID; g++)
		{
			double		r = rmax * g / BASIN_GRID;
			double		h = 0.0;

			if (r <= s->tol.merge)
				continue;
			/* on the sphere ||x - s_i|| >= |r - d_i| */
			for (int32_t i = 0; i < n; i++)
			{
				double		t = r - dsv[i];
				double		gi = m->sv_gamma ? m->sv_gamma[i] : m->gamma;

				h += m->alpha[i] * exp(-gi * t * t);
			}
			if (h <= best_h)
			{
				best_h = h;
				best_r = r;
			}
		}
		/* rounding of the bound (and of kernel.c's exp) */
		best_h = best_h * (1.0 + 1e-9) + s->abs_alpha * 1e-300;
		if (best_r > 0.0 && best_h < lam_e)
		{
			b[e].radius = best_r;
			b[e].level = best_h;
		}
	}
	svc_free(env, dsv);
	s->basin = b;
	return SVC_OK;
}

/* ---------- labelling trajectories ---------- */

/*
 * The one equilibrium within lim of a point (dist: its distances to eq),
 * or -1 when none or several are.
 */
static int32_t
one_eq_within(const double *dist, int32_t n_eq, double lim)
{
	int32_t		found = -1;

	for (int32_t i = 0; i < n_eq; i++)
		if (dist[i] <= lim)
		{
			if (found >= 0)
				return -1;
			found = i;
		}
	return found;
}

/* Distances from x to eq[n_eq] into s->eqd (grown as needed); the least. */
static bool
eq_distances(SvcScorer *s, const double *eq, int32_t n_eq, const double *x,
			 double *least)
{
	if (!eqd_reserve(s, n_eq))
		return false;
	*least = eq_dists(eq, n_eq, s->dims, x, s->eqd);
	return true;
}

void
svc_scorer_traj_run(SvcScorer *s, const double *eq, int32_t n_eq,
					const double *x0, SvcLabelWork *w, const SvcTrajTol *tt,
					SvcTrajEnd *out)
{
	const SvcModel *m = s->m;
	int32_t		d = s->dims;
	double		eps = 0.0,
				rfar,
				slack,
				dn;
	bool		ok;
	SvcScorePass		ps;

	if (n_eq <= 0 || !s->positive || !svc_scorer_row_in_range(s, x0))
		goto full;

	/*
	 * The first step as svc_traj_run takes it, to the bit: lambda0 and
	 * the first snap are then its own, and the tracked part starts from
	 * an exact point.
	 */
	memcpy(w->x, x0, sizeof(double) * (size_t) d);
	out->lambda0 = svc_label_step(m, w, &ok);
	{
		/* svc_traj_run's own test: the least squared distance, lowest index */
		int32_t		best = -1;
		double		bd = DBL_MAX;

		for (int32_t i = 0; i < n_eq; i++)
		{
			double		t = svc_sqdist(eq + (size_t) i * d, x0, d);

			if (t < bd)
			{
				bd = t;
				best = i;
			}
		}
		if (best >= 0 && sqrt(bd) <= tt->merge)
		{
			out->near = best;
			out->snapped = true;
			return;
		}
	}
	if (!ok || !(sqrt(svc_sqdist(x0, w->next, d)) > tt->stop))
		goto full;
	memcpy(s->x, w->next, sizeof(double) * (size_t) d);
	{
		double		xn = 0.0,
					x2 = 0.0;

		for (int32_t j = 0; j < d; j++)
		{
			xn = fmax(xn, fabs(x0[j]));
			x2 += x0[j] * x0[j];
		}
		rfar = fmin(sqrt((double) d) * (fmax(xn, s->coord_max) + s->coord_max),
					(fmax(sqrt(x2), s->sv_norm) + s->sv_norm) * (1.0 + 1e-9));
	}
	slack = 1e-9 * (1.0 + rfar);

	for (int k = 1; k <= MAX_LABEL_STEPS; k++)
	{
		double		step,
					lip,
					next_eps;
		int32_t		e;

		if (!eq_distances(s, eq, n_eq, s->x, &dn))
			break;
		if (dn + eps + slack <= tt->merge)
		{
			/* it snaps here, to the nearest equilibrium of the exact point */
			e = one_eq_within(s->eqd, n_eq, dn + 2.0 * eps + slack);
			if (e >= 0)
			{
				out->near = e;
				out->snapped = true;
				return;
			}
			break;
		}
		if (dn - eps - slack <= tt->merge || k == MAX_LABEL_STEPS)
			break;
		svc_scorer_pass(s, s->x, &ps);
		pass_step(s, s->x, &ps);
		if (!ps.p_ok || eps * s->gmax * (rfar + 1.0) > 0.005)
			break;
		step = sqrt(svc_sqdist(s->x, s->p, d));
		lip = 2.0 * s->gmax * (exp(0.04) * (sqrt(ps.q) + eps) * (sqrt(ps.q) + eps) +
							   1.05 * ps.drop * (rfar + 1.0) * (rfar + 1.0));
		next_eps = lip * eps + ps.p_err;
		/* an end short of a snap makes a new equilibrium: the full run's */
		if (step - eps - next_eps - slack <= tt->stop)
			break;
		memcpy(s->x, s->p, sizeof(double) * (size_t) d);
		eps = next_eps;
	}

full:
	s->n_fallback++;
	svc_traj_run(m, eq, n_eq, x0, w, tt, out);
}
