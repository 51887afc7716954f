/*
 * bsgd.c - budgeted SGD for the large-margin one-class SVM (BSGD-LMOC)
 *
 * Algorithm 2 of the budgeted SVC paper.  The primal
 *     min_w 1/2 ||w||^2 + C/N sum_i max(0, 1 - w'phi(x_i))
 * is solved by SGD with eta_t = 1/t:
 *     w_{t+1} = (1 - 1/t) w_t + (C/t) [w_t'phi(x) < 1] phi(x).
 * The rows are drawn in passes, each a fresh seeded permutation of the
 * rows, not independently: with eta_t = 1/t, w_T is C/T times the sum of
 * phi over the violating draws, so independent draws leave each row's
 * weight with multinomial noise.  That noise put spurious passes in f
 * and changed the clusters with the seed (flame split on 3 seeds of 5);
 * passes fix every row's count and cost nothing more.
 * w = s * sum_i a_i phi(s_i): the global scale s absorbs the (1 - 1/t)
 * shrink, so a step costs one kernel sum, not a pass over every alpha.
 * ||w||^2 is carried along (exactly up to rounding for removal, up to
 * small terms for projection) because the stopping rule
 * ||w_{t+1} - w_t|| <= tol needs it, and recomputed every NORM_REFRESH
 * steps once that rule can fire.
 */
#include "bsgd.h"
#include "bsgd_select.h"
#include "kernel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Ridge added to the k x k kernel matrix of a projection, for stability. */
#define PROJECTION_RIDGE 1e-3
/* |alpha| within this relative distance are tied for removal. */
#define TIE_RELATIVE 1e-9
/* Steps between exact recomputations of ||w||^2 (projection updates it
 * approximately in between; see bsgd_maintain). */
#define NORM_REFRESH 256
/*
 * keep_isolated: a support vector is isolated when its nearest other one
 * lies beyond 3 kernel sigmas (gamma d^2 > 4.5, sigma^2 = 1 / (2 gamma))
 * and beyond ISOLATED_REL times the median of those distances squared
 * (so that in many dimensions, where every vector is that far from the
 * next, few count); its |alpha| weighs ISOLATED_WEIGHT times when the
 * budget chooses which to drop.  doc/design-notes.md has the measurements.
 */
#define ISOLATED_GAMMA_D2 4.5
#define ISOLATED_REL 8.0
#define ISOLATED_WEIGHT 2.0
/* A labelled anomaly's hinge pushes w'phi(x) below this (see the loop). */
#ifndef ANOMALY_O
#define ANOMALY_O 0.0
#endif
/*
 * From this many columns the kernel sums read a float copy of the support
 * vectors (svc_kernel_sum_colsf): on wide rows they are most of a fit, and
 * bound by the bytes read.  Coordinates beyond SVC_SQDISTF_MAX keep the
 * double sums (no float overflow in a square's sum).
 */
#define BSGD_FLOAT_DIMS 64
/*
 * Projection's squared distances between two support vectors, remembered
 * (direct-mapped, by the vectors' ids): nearly every step projects the
 * vector it drops onto its k nearest, and the same few neighbours in a
 * cluster come back step after step, so most of the k (k + 1) / 2
 * distances among them were taken before (at 768 columns they were a
 * fifth of the solver's time).  The value is svc_sqdist's, computed once:
 * the model's bytes do not change.  Wide rows only (BSGD_FLOAT_DIMS on).
 */
#define PAIR_CACHE_BITS 12
#define PAIR_CACHE (1 << PAIR_CACHE_BITS)

typedef struct PairD2
{
	uint64_t	lo;				/* the ids, lo < hi; 0 for none */
	uint64_t	hi;
	double		d2;
} PairD2;

typedef struct Bsgd
{
	const SvcEnv *env;
	int32_t		d;
	double		gamma;
	int32_t		cap;			/* rows allocated in sv/a/... */
	int32_t		b;				/* support vectors in use */
	double	   *sv;				/* [cap * d] */
	double	   *svt;			/* [d * cap]: sv by column, for the kernel sums
								 * (none with floats) */
	double	   *a;				/* [cap]: alpha_i = scale * a[i] */
	int64_t    *row;			/* [cap]: training row of each SV, -1 for
								 * one of a warm start's init model */
	int64_t    *stamp;			/* [cap]: step it entered, for ties */
	uint64_t   *uid;			/* [cap]: an id of the vector, its own */
	uint64_t	uid_next;		/* the last id given */
	PairD2	   *pairs;			/* [PAIR_CACHE] projection's distances, or
								 * NULL */
	int32_t    *slot_of_row;	/* [n]: SV slot of a row, or -1 */
	int64_t    *order;			/* [n]: the current pass's permutation */
	const double *weight;		/* [n] labelled rows' weights, or NULL */
	double		scale;
	double		wnorm2;			/* ||w||^2 */
	/* projection scratch */
	double	   *kbuf;			/* [cap] */
	int32_t    *idx;			/* [cap] */
	double	   *kmat;			/* [k * k] */
	double	   *rhs;			/* [k] */
	/* keep_isolated: each slot's nearest other slot */
	bool		isolated;		/* the option: keep the arrays below */
	double	   *nnd;			/* [cap] its squared distance */
	int32_t    *nn;				/* [cap] its slot, -1 for none or stale */
	double	   *work;			/* [cap] */
	double	   *nns;			/* [cap] the nnd of slots 0..b, sorted */
	int32_t		n_nns;			/* values in nns */
	/* the last insertion's changes to the others, undone if it is dropped */
	int32_t		undo_slot;		/* the slot inserted, or -1 */
	int32_t		n_undo;
	int32_t    *undo_nn;		/* [cap] slot, then its nn before */
	double	   *undo_nnd;		/* [cap] its nnd before */
	int32_t		pending;		/* a new slot the budget drops at once, kept
								 * out of the nearest distances, or -1 */
	double	   *d2;				/* [cap] the step's row's squared distances
								 * to the slots, from its kernel sum; with
								 * floats a lower bound of svc_sqdist's */
	/* wide rows (BSGD_FLOAT_DIMS): the kernel sums' float copy */
	bool		fl;
	int32_t		capf;			/* cap rounded up to 64 */
	float	   *svtf;			/* [d * capf]: sv by column, as floats */
	float	   *xf;				/* [d]: the kernel sum's row, as floats */
	double	   *snorm;			/* [cap]: each slot's squared norm */
	double	   *d2hi;			/* [cap]: d2's upper bounds; scratch */
	double	   *nnhi;			/* [cap]: bsgd_nn_find's upper bounds */
	int32_t		d2_n;			/* its slots */
	const double *d2_row;		/* the row whose float sums d2 holds, not yet
								 * made bounds (bsgd_d2_ready), or NULL */
} Bsgd;

/*
 * Room for need support vectors.  A failed grow leaves every array valid
 * at the old capacity (some larger), for bsgd_free.
 */
static SvcStatus
bsgd_grow(Bsgd *g, int32_t need, SvcError *err)
{
	int64_t		c[17];
	SvcStatus	st = SVC_OK;

	if (need <= g->cap)
		return SVC_OK;
	for (int i = 0; i < 17; i++)
		c[i] = g->cap;
	st = svc_grow(g->env, (void **) &g->sv, &c[0], need, sizeof(double) * (size_t) g->d, err);
	if (st == SVC_OK)
		st = svc_grow(g->env, (void **) &g->a, &c[1], need, sizeof(double), err);
	if (st == SVC_OK)
		st = svc_grow(g->env, (void **) &g->kbuf, &c[2], need, sizeof(double), err);
	if (st == SVC_OK)
		st = svc_grow(g->env, (void **) &g->row, &c[3], need, sizeof(int64_t), err);
	if (st == SVC_OK)
		st = svc_grow(g->env, (void **) &g->stamp, &c[4], need, sizeof(int64_t), err);
	if (st == SVC_OK)
		st = svc_grow(g->env, (void **) &g->idx, &c[5], need, sizeof(int32_t), err);
	if (st == SVC_OK && g->isolated)
		st = svc_grow(g->env, (void **) &g->nnd, &c[6], need, sizeof(double), err);
	if (st == SVC_OK && g->isolated)
		st = svc_grow(g->env, (void **) &g->nn, &c[7], need, sizeof(int32_t), err);
	if (st == SVC_OK && g->isolated)
		st = svc_grow(g->env, (void **) &g->work, &c[8], need, sizeof(double), err);
	if (st == SVC_OK && g->isolated)
		st = svc_grow(g->env, (void **) &g->nns, &c[9], need, sizeof(double), err);
	if (st == SVC_OK && g->isolated)
		st = svc_grow(g->env, (void **) &g->undo_nn, &c[10], need, 2 * sizeof(int32_t), err);
	if (st == SVC_OK && g->isolated)
		st = svc_grow(g->env, (void **) &g->undo_nnd, &c[11], need, sizeof(double), err);
	if (st == SVC_OK && g->isolated)
		st = svc_grow(g->env, (void **) &g->d2, &c[12], need, sizeof(double), err);
	if (st == SVC_OK && g->fl)
		st = svc_grow(g->env, (void **) &g->snorm, &c[13], need, sizeof(double), err);
	if (st == SVC_OK && g->fl)
		st = svc_grow(g->env, (void **) &g->d2hi, &c[14], need, sizeof(double), err);
	if (st == SVC_OK)
		st = svc_grow(g->env, (void **) &g->uid, &c[15], need, sizeof(uint64_t), err);
	if (st == SVC_OK && g->fl && g->isolated)
		st = svc_grow(g->env, (void **) &g->nnhi, &c[16], need, sizeof(double), err);
	if (st != SVC_OK)
		return st;
	if (c[0] > INT32_MAX)
		return svc_fail(err, SVC_ERR_LIMIT, "too many support vectors: %lld", (long long) c[0]);
	if (!g->fl)
	{
		/* the column copy at the new capacity, its b columns moved over */
		double	   *svt = svc_alloc(g->env, sizeof(double) * (size_t) c[0] * (size_t) g->d, err);

		if (svt == NULL)
			return SVC_ERR_NOMEM;
		for (size_t j = 0; g->svt != NULL && j < (size_t) g->d; j++)
			memcpy(svt + j * (size_t) c[0], g->svt + j * (size_t) g->cap,
				   sizeof(double) * (size_t) g->b);
		svc_free(g->env, g->svt);
		g->svt = svt;
	}
	if (g->fl)
	{
		/* zeroed: a short last 64 of slots reads the unused ones */
		size_t		capf = ((size_t) c[0] + 63) / 64 * 64;
		float	   *svtf = svc_alloc(g->env, sizeof(float) * capf * (size_t) g->d, err);

		if (svtf == NULL)
			return SVC_ERR_NOMEM;
		memset(svtf, 0, sizeof(float) * capf * (size_t) g->d);
		for (size_t j = 0; g->svtf != NULL && j < (size_t) g->d; j++)
			memcpy(svtf + j * capf, g->svtf + j * (size_t) g->capf,
				   sizeof(float) * (size_t) g->b);
		svc_free(g->env, g->svtf);
		g->svtf = svtf;
		g->capf = (int32_t) capf;
	}
	g->cap = (int32_t) c[0];
	return SVC_OK;
}

/* Support vector slot's coordinates, in both copies. */
static void
bsgd_set_sv(Bsgd *g, int32_t slot, const double *x)
{
	memcpy(g->sv + (size_t) slot * g->d, x, sizeof(double) * (size_t) g->d);
	if (!g->fl)
		for (size_t j = 0; j < (size_t) g->d; j++)
			g->svt[j * (size_t) g->cap + (size_t) slot] = x[j];
	else
	{
		double		nn = 0.0;

		for (size_t j = 0; j < (size_t) g->d; j++)
		{
			g->svtf[j * (size_t) g->capf + (size_t) slot] = (float) x[j];
			nn += x[j] * x[j];
		}
		g->snorm[slot] = nn;
	}
}

/* A new vector in slot (bsgd_set_sv's): its own id */
static inline void
bsgd_new_id(Bsgd *g, int32_t slot)
{
	g->uid[slot] = ++g->uid_next;
}

/* The cache's entry for slots i and j (i != j), or NULL without one */
static inline PairD2 *
bsgd_pair_entry(const Bsgd *g, int32_t i, int32_t j, uint64_t *lo, uint64_t *hi)
{
	uint64_t	ui = g->uid[i],
				uj = g->uid[j];

	*lo = ui < uj ? ui : uj;
	*hi = ui < uj ? uj : ui;
	if (g->pairs == NULL)
		return NULL;
	return &g->pairs[((*lo * UINT64_C(0x9E3779B97F4A7C15)) ^
					  (*hi * UINT64_C(0xBF58476D1CE4E5B9))) >> (64 - PAIR_CACHE_BITS)];
}

/* Remember v, svc_sqdist's distance of slots i and j (i != j). */
static inline void
bsgd_pair_put(Bsgd *g, int32_t i, int32_t j, double v)
{
	uint64_t	lo,
				hi;
	PairD2	   *e = bsgd_pair_entry(g, i, j, &lo, &hi);

	if (e != NULL)
	{
		e->lo = lo;
		e->hi = hi;
		e->d2 = v;
	}
}

/*
 * svc_sqdist of slots i and j (i != j), from the cache when it holds
 * their pair.  The sum is symmetric to the bit (the same squares of
 * differences, negated), so the order of i and j does not matter.
 */
static double
bsgd_pair_d2(Bsgd *g, int32_t i, int32_t j)
{
	uint64_t	lo,
				hi;
	PairD2	   *e = bsgd_pair_entry(g, i, j, &lo, &hi);
	double		v;

	if (e != NULL && e->lo == lo && e->hi == hi)
		return e->d2;
	v = svc_sqdist(g->sv + (size_t) i * g->d, g->sv + (size_t) j * g->d, g->d);
	if (e != NULL)
	{
		e->lo = lo;
		e->hi = hi;
		e->d2 = v;
	}
	return v;
}

static void
bsgd_free(Bsgd *g)
{
	svc_free(g->env, g->order);
	svc_free(g->env, g->sv);
	svc_free(g->env, g->svt);
	svc_free(g->env, g->svtf);
	svc_free(g->env, g->xf);
	svc_free(g->env, g->snorm);
	svc_free(g->env, g->nnhi);
	svc_free(g->env, g->d2hi);
	svc_free(g->env, g->a);
	svc_free(g->env, g->kbuf);
	svc_free(g->env, g->row);
	svc_free(g->env, g->stamp);
	svc_free(g->env, g->uid);
	svc_free(g->env, g->pairs);
	svc_free(g->env, g->idx);
	svc_free(g->env, g->slot_of_row);
	svc_free(g->env, g->kmat);
	svc_free(g->env, g->rhs);
	svc_free(g->env, g->nnd);
	svc_free(g->env, g->nn);
	svc_free(g->env, g->work);
	svc_free(g->env, g->nns);
	svc_free(g->env, g->undo_nn);
	svc_free(g->env, g->undo_nnd);
	svc_free(g->env, g->d2);
}

/*
 * keep_isolated's median of the nearest distances is read at every budget
 * step; selecting it afresh each time was the option's largest cost.  The
 * values are kept sorted instead (a multiset: a binary search and a move),
 * and the median is an index.  Sorted or selected, the k-th smallest is
 * the same value, so the models' bytes do not change.
 */
static int32_t
bsgd_nns_lower(const Bsgd *g, double v)
{
	int32_t		lo = 0,
				hi = g->n_nns;

	while (lo < hi)
	{
		int32_t		mid = lo + (hi - lo) / 2;

		if (g->nns[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
bsgd_nns_add(Bsgd *g, double v)
{
	int32_t		at = bsgd_nns_lower(g, v);

	memmove(g->nns + at + 1, g->nns + at, sizeof(double) * (size_t) (g->n_nns - at));
	g->nns[at] = v;
	g->n_nns++;
}

/* v is one of the values held (nearest distances are never NaN) */
static void
bsgd_nns_remove(Bsgd *g, double v)
{
	int32_t		at = bsgd_nns_lower(g, v);

	memmove(g->nns + at, g->nns + at + 1, sizeof(double) * (size_t) (g->n_nns - at - 1));
	g->n_nns--;
}

/* A held value becomes v: the entries between move by one. */
static void
bsgd_nns_replace(Bsgd *g, double old, double v)
{
	int32_t		at = bsgd_nns_lower(g, old);

	if (v < old)
	{
		int32_t		to = bsgd_nns_lower(g, v);

		memmove(g->nns + to + 1, g->nns + to, sizeof(double) * (size_t) (at - to));
		g->nns[to] = v;
	}
	else if (v > old)
	{
		/* old < v, so v goes after at: the entries between move down */
		int32_t		to = bsgd_nns_lower(g, v) - 1;

		memmove(g->nns + at, g->nns + at + 1, sizeof(double) * (size_t) (to - at));
		g->nns[to] = v;
	}
}

/* keep_isolated: slot i's nearest other slot among dist[0..b). */
static void
bsgd_nn_scan(Bsgd *g, int32_t i, const double *dist)
{
	g->nnd[i] = HUGE_VAL;
	g->nn[i] = -1;
	for (int32_t j = 0; j < g->b; j++)
		if (j != i && dist[j] < g->nnd[i])
		{
			g->nnd[i] = dist[j];
			g->nn[i] = j;
		}
}

/*
 * keep_isolated: slot i's nearest other slot, the first of ties, and its
 * distance as svc_sqdist_many gives it.  With floats, from the float
 * columns' bounds and the exact distances of the few slots they leave in
 * (svc_select_nearest_slotf) instead of every slot's double distance.
 */
static void
bsgd_nn_find(Bsgd *g, int32_t i)
{
	if (g->fl)
	{
		double		v;
		int32_t		at = svc_select_nearest_slotf(g->sv, g->svtf, (size_t) g->capf, g->snorm,
												  g->b, g->d, i, g->xf, g->work, g->nnhi, &v);

		if (at >= 0)
		{
			g->nn[i] = at;
			g->nnd[i] = v;
			return;
		}
	}
	svc_sqdist_many(g->sv, NULL, g->b, g->d, g->sv + (size_t) i * g->d, g->work);
	bsgd_nn_scan(g, i, g->work);
}

/*
 * The least of v[0..n) (NaN-free), HUGE_VAL for none: four running minima,
 * as one waits on each comparison in turn (fmin is a call into libm in
 * this build, and the compiler does not vectorise a minimum of doubles).
 */
static inline double
bsgd_least(const double *v, int32_t n)
{
	double		m[4] = {HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL};
	int32_t		i = 0;

	for (; i + 4 <= n; i += 4)
		for (int k = 0; k < 4; k++)
			m[k] = v[i + k] < m[k] ? v[i + k] : m[k];
	for (; i < n; i++)
		m[0] = v[i] < m[0] ? v[i] : m[0];
	m[0] = m[1] < m[0] ? m[1] : m[0];
	m[2] = m[3] < m[2] ? m[3] : m[2];
	return m[2] < m[0] ? m[2] : m[0];
}

/*
 * keep_isolated: the distance of slots j and s as bsgd_nn_find has it
 * (svc_sqdist_many's loop gives each row the same sum whatever the rows
 * around it).
 */
static inline double
bsgd_nn_dist(const Bsgd *g, int32_t j, int32_t s)
{
	double		v;

	svc_sqdist_many(g->sv + (size_t) j * g->d, NULL, 1, g->d, g->sv + (size_t) s * g->d, &v);
	return v;
}

/* x as floats in g->xf, for svc_kernel_sum_colsf */
static const float *
bsgd_xf(const Bsgd *g, const double *x)
{
	for (size_t j = 0; j < (size_t) g->d; j++)
		g->xf[j] = (float) x[j];
	return g->xf;
}

/* keep_isolated with floats: d2's float sums made bounds (bsgd_select.h) */
static void
bsgd_d2_bounds(Bsgd *g, const double *x, int32_t n)
{
	double		xn2 = 0.0;

	for (size_t j = 0; j < (size_t) g->d; j++)
		xn2 += x[j] * x[j];
	svc_sqdistf_bounds(g->d2, g->snorm, xn2, n, g->d, g->d2, g->d2hi);
}

/* d2 (and with floats d2hi) ready for keep_isolated */
static inline void
bsgd_d2_ready(Bsgd *g)
{
	if (g->d2_row != NULL)
	{
		bsgd_d2_bounds(g, g->d2_row, g->d2_n);
		g->d2_row = NULL;
	}
}

/*
 * keep_isolated: a new slot s (the last) and those it is nearest to.  The
 * step's kernel sum left in d2 the distances from s's row to every other
 * slot, summed in another order; within their error bound they decide
 * which slots can be s's nearest or have s as theirs, and only those get
 * the exact distance of a search (at 768 dimensions a full pass per new
 * vector was a sixth of the fit).
 */
static void
bsgd_nn_insert(Bsgd *g, int32_t s)
{
	const double *d2 = g->d2;
	double		rel = SVC_SQDIST_REL_ERR(g->d),
				abs_err = SVC_SQDIST_ABS_ERR(g->d);
	double		reach = HUGE_VAL;
	double		best = HUGE_VAL;
	int32_t		at = -1;

	bsgd_d2_ready(g);
	g->undo_slot = s;
	g->n_undo = 0;
	/*
	 * s's nearest is at most reach away: no slot whose distance is surely
	 * above it (the bound grows with d2, so reach is the least d2's)
	 */
	if (g->fl)
	{
		/* d2 holds lower bounds, d2hi upper ones (bsgd_d2_bounds) */
		reach = bsgd_least(g->d2hi, s);
		rel = 0.0;
		abs_err = 0.0;
	}
	else
	{
		reach = bsgd_least(d2, s);
		reach = reach + (rel * reach + abs_err);
	}
	for (int32_t j = 0; j < s; j++)
	{
		double		lo = d2[j] - (rel * d2[j] + abs_err),
					v;

		if (!(lo <= reach) && !(lo < g->nnd[j]))
			continue;
		v = bsgd_nn_dist(g, j, s);
		/* bsgd_nn_scan's order and ties */
		if (v < best)
		{
			best = v;
			at = j;
		}
		if (v < g->nnd[j])
		{
			g->undo_nn[2 * g->n_undo] = j;
			g->undo_nn[2 * g->n_undo + 1] = g->nn[j];
			g->undo_nnd[g->n_undo++] = g->nnd[j];
			bsgd_nns_replace(g, g->nnd[j], v);
			g->nnd[j] = v;
			g->nn[j] = s;
		}
	}
	g->nnd[s] = best;
	g->nn[s] = at;
	bsgd_nns_add(g, best);
}

/* w'phi(x); with keep_isolated, x's squared distances to the slots in d2 */
static double
bsgd_dot_d2(Bsgd *g, const double *x)
{
	if (g->fl)
	{
		double		o = g->scale * svc_kernel_sum_colsf(g->svtf, (size_t) g->capf, g->a, g->b,
														g->d, g->gamma, bsgd_xf(g, x),
														g->isolated ? g->d2 : NULL);

		/* bounds only for the steps that read them (bsgd_d2_ready) */
		g->d2_row = g->isolated ? x : NULL;
		g->d2_n = g->b;
		return o;
	}
	if (g->isolated)
		return g->scale * svc_kernel_sum_cols_d2(g->svt, (size_t) g->cap, g->a, g->b, g->d,
												 g->gamma, x, g->d2);
	return g->scale * svc_kernel_sum_cols(g->svt, (size_t) g->cap, g->a, g->b, g->d,
										  g->gamma, x);
}

/* w'phi(x) */
static double
bsgd_dot(const Bsgd *g, const double *x)
{
	if (g->fl)
		return g->scale * svc_kernel_sum_colsf(g->svtf, (size_t) g->capf, g->a, g->b, g->d,
											   g->gamma, bsgd_xf(g, x), NULL);
	return g->scale * svc_kernel_sum_cols(g->svt, (size_t) g->cap, g->a, g->b, g->d,
										  g->gamma, x);
}

/* ||w||^2 from scratch: sum_ij alpha_i alpha_j K_ij. */
static double
bsgd_norm2(const Bsgd *g)
{
	double		total = 0.0;

	for (int32_t i = 0; i < g->b; i++)
		total += g->a[i] * (g->fl ?
							svc_kernel_sum_colsf(g->svtf, (size_t) g->capf, g->a, g->b, g->d,
												 g->gamma, bsgd_xf(g, g->sv + (size_t) i * g->d),
												 NULL) :
							svc_kernel_sum_cols(g->svt, (size_t) g->cap, g->a, g->b, g->d,
												g->gamma, g->sv + (size_t) i * g->d));
	total *= g->scale * g->scale;
	return total > 0 ? total : 0.0;
}

/* Remove slot p by moving the last slot into it. */
static void
bsgd_drop(Bsgd *g, int32_t p)
{
	int32_t		last = g->b - 1;
	bool		pending = g->pending == p;
	bool		undo = !pending && g->isolated && g->undo_slot == p && p == last;

	/*
	 * keep_isolated: when p is the slot just inserted (mostly so: its
	 * alpha is the newest, the smallest), the slots whose nearest it
	 * became get their nearest before it back: nothing else has moved
	 * since, so that is the distance a search would find.  Otherwise the
	 * slots whose nearest leaves look again, after the move.
	 */
	if (undo)
	{
		for (int32_t u = g->n_undo - 1; u >= 0; u--)
		{
			int32_t		j = g->undo_nn[2 * u];

			bsgd_nns_replace(g, g->nnd[j], g->undo_nnd[u]);
			g->nnd[j] = g->undo_nnd[u];
			g->nn[j] = g->undo_nn[2 * u + 1];
		}
		bsgd_nns_remove(g, g->nnd[p]);
	}
	else if (g->isolated && !pending)
	{
		int32_t    *nn = g->nn;
		int32_t		b = g->b;

		bsgd_nns_remove(g, g->nnd[p]);
		for (int32_t i = 0; i < b; i++)
			if (nn[i] == p)
				nn[i] = -1;
	}
	g->undo_slot = -1;
	g->pending = -1;
	if (g->row[p] >= 0)
		g->slot_of_row[g->row[p]] = -1;
	if (p != last)
	{
		bsgd_set_sv(g, p, g->sv + (size_t) last * g->d);
		g->a[p] = g->a[last];
		g->row[p] = g->row[last];
		g->stamp[p] = g->stamp[last];
		g->uid[p] = g->uid[last];
		if (g->isolated)
		{
			g->nn[p] = g->nn[last];
			g->nnd[p] = g->nnd[last];
		}
		if (g->row[p] >= 0)
			g->slot_of_row[g->row[p]] = p;
	}
	g->b--;
	if (g->isolated && !undo && !pending)
	{
		int32_t    *nn = g->nn;
		int32_t		b = g->b;

		for (int32_t i = 0; i < b; i++)
			if (nn[i] == last)
				nn[i] = p;
		for (int32_t i = 0; i < b; i++)
			if (nn[i] < 0)
			{
				double		old = g->nnd[i];

				bsgd_nn_find(g, i);
				bsgd_nns_replace(g, old, g->nnd[i]);
			}
	}
}

/* Whether slot i holds a labelled anomaly (a negative weight). */
static inline bool
bsgd_anomaly(const Bsgd *g, int32_t i)
{
	return g->weight != NULL && g->weight[g->row[i]] < 0;
}

/*
 * keep_isolated: the squared distance beyond which a slot is isolated
 * (ISOLATED_GAMMA_D2, ISOLATED_REL); HUGE_VAL without the option.
 */
static double
bsgd_isolated_beyond(Bsgd *g)
{
	double		med;

	if (!g->isolated || g->b < 2)
		return HUGE_VAL;
	med = ISOLATED_REL * g->nns[g->b / 2];
	return med > ISOLATED_GAMMA_D2 / g->gamma ? med : ISOLATED_GAMMA_D2 / g->gamma;
}

/* The weight that chooses which to drop: |alpha|, twice for the isolated. */
static inline double
bsgd_keep_weight(const Bsgd *g, int32_t i, double beyond)
{
	double		ai = fabs(g->a[i]);

	return g->isolated && g->nnd[i] > beyond ? ISOLATED_WEIGHT * ai : ai;
}

/*
 * keep_isolated: whether the new slot s (the last) is the one the budget
 * drops whatever the nearest distances say: its weight, at most
 * ISOLATED_WEIGHT |alpha_s|, below every other's (at least |alpha_i|) by
 * far more than TIE_RELATIVE, and no labelled rows.  bsgd_redundant then
 * returns s without them, and dropping s leaves the distances as they
 * were before it, so s need not enter them (most steps: a new vector's
 * alpha is the smallest).
 */
static bool
bsgd_dropped_at_once(const Bsgd *g, int32_t s)
{
	const double *a = g->a;
	double		m[4] = {HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL};
	int32_t		i = 0;

	if (g->weight != NULL || s != g->b - 1)
		return false;
	/* the least |alpha_i|, i < s, in four running minima (bsgd_least) */
	for (; i + 4 <= s; i += 4)
		for (int k = 0; k < 4; k++)
			m[k] = fabs(a[i + k]) < m[k] ? fabs(a[i + k]) : m[k];
	for (; i < s; i++)
		m[0] = fabs(a[i]) < m[0] ? fabs(a[i]) : m[0];
	m[0] = m[1] < m[0] ? m[1] : m[0];
	m[2] = m[3] < m[2] ? m[3] : m[2];
	m[0] = m[2] < m[0] ? m[2] : m[0];
	return ISOLATED_WEIGHT * fabs(a[s]) < 0.999 * m[0];
}

/*
 * The most redundant support vector: smallest |alpha| (K(x,x) = 1 for the
 * RBF kernel), by bsgd_keep_weight.  Values within a relative 1e-9 count as tied and the oldest
 * wins, so the choice does not hang on rounding.  A labelled anomaly's
 * vector is kept while another is left: it is what holds the boundary away
 * from the row, and a projection onto its neighbours, of the other sign,
 * would spread its push over them.
 */
static int32_t
bsgd_redundant(Bsgd *g)
{
	int32_t		best = 0;
	double		above;
	double		beyond;

	if (g->pending >= 0)
		return g->pending;
	beyond = bsgd_isolated_beyond(g);
	while (best < g->b - 1 && bsgd_anomaly(g, best))
		best++;
	/* a vector with a weight above this can replace neither best nor a tie */
	above = bsgd_keep_weight(g, best, beyond) * (1.0 + TIE_RELATIVE);
	for (int32_t i = best + 1; i < g->b; i++)
	{
		double		ai = bsgd_keep_weight(g, i, beyond),
					ab;

		if (!(ai <= above) || bsgd_anomaly(g, i))
			continue;
		ab = bsgd_keep_weight(g, best, beyond);
		if (ai < ab * (1.0 - TIE_RELATIVE))
			best = i;
		else if (g->stamp[i] < g->stamp[best])
			best = i;
		above = bsgd_keep_weight(g, best, beyond) * (1.0 + TIE_RELATIVE);
	}
	return best;
}

/* Solve (A + ridge I) x = b in place by Cholesky; false if not positive. */
static bool
cholesky_solve(double *A, double *b, int32_t k)
{
	for (int32_t j = 0; j < k; j++)
	{
		double		s = A[j * k + j];

		for (int32_t m = 0; m < j; m++)
			s -= A[j * k + m] * A[j * k + m];
		if (!(s > 1e-12))
			return false;
		s = sqrt(s);
		A[j * k + j] = s;
		for (int32_t i = j + 1; i < k; i++)
		{
			double		t = A[i * k + j];

			for (int32_t m = 0; m < j; m++)
				t -= A[i * k + m] * A[j * k + m];
			A[i * k + j] = t / s;
		}
	}
	for (int32_t i = 0; i < k; i++)
	{
		double		t = b[i];

		for (int32_t m = 0; m < i; m++)
			t -= A[i * k + m] * b[m];
		b[i] = t / A[i * k + i];
	}
	for (int32_t i = k - 1; i >= 0; i--)
	{
		double		t = b[i];

		for (int32_t m = i + 1; m < k; m++)
			t -= A[m * k + i] * b[m];
		b[i] = t / A[i * k + i];
	}
	return true;
}

/*
 * Pick the k slots used to project slot p: nearest in input space or
 * random; never a labelled anomaly's (the projection would shrink its
 * push, see bsgd_redundant).
 */
static int32_t
bsgd_pick(Bsgd *g, int32_t p, int32_t k, bool nearest, SvcRng *rng)
{
	int32_t		m = 0;
	const double *xp = g->sv + (size_t) p * g->d;
	int32_t		b = g->b;
	int32_t    *slots = g->idx;

	/*
	 * No labelled rows: the list is every slot but p, and the nearest
	 * come from a first sum by column that spares most distances
	 */
	if (nearest && g->weight == NULL && k <= b - 1)
	{
		bool		done;

		/*
		 * p inserted at this step (the usual case under keep_isolated):
		 * the step's kernel sum left its row's distances to the others
		 * in d2, which serve as the first sums
		 */
		if (g->isolated && p == b - 1 && (g->pending == p || g->undo_slot == p))
		{
			bsgd_d2_ready(g);
			memcpy(g->kbuf, g->d2, sizeof(double) * (size_t) p);
			if (g->fl)
			{
				memcpy(g->work, g->d2hi, sizeof(double) * (size_t) p);
				done = svc_select_nearest_bounds(g->sv, b, g->d, p, xp, k, g->kbuf, g->work,
												 slots);
			}
			else
				done = svc_select_nearest_given(g->sv, b, g->d, p, xp, k, g->kbuf, slots);
		}
		else if (g->fl)
		{
			/* the first sums from the float columns, made bounds */
			double		xn2 = 0.0;

			for (size_t j = 0; j < (size_t) g->d; j++)
				xn2 += xp[j] * xp[j];
			svc_sqdist_colsf(g->svtf, (size_t) g->capf, b, g->d, bsgd_xf(g, xp), g->kbuf);
			svc_sqdistf_bounds(g->kbuf, g->snorm, xn2, b, g->d, g->kbuf, g->d2hi);
			done = svc_select_nearest_bounds(g->sv, b, g->d, p, xp, k, g->kbuf, g->d2hi,
											 slots);
		}
		else
			done = svc_select_nearest_cols(g->sv, g->svt, (size_t) g->cap, b, g->d, p, xp, k,
										   g->kbuf, slots);
		if (done)
		{
			/*
			 * the selection left the k taken slots' distances to p in
			 * kbuf, svc_sqdist_many's (svc_sqdist's bits): the
			 * projection reads them from the cache
			 */
			for (int32_t i = 0; i < k; i++)
				bsgd_pair_put(g, slots[i], p, g->kbuf[slots[i]]);
			return k;
		}
	}

	/*
	 * The listing works on locals: as far as the compiler knows, a store
	 * through g->idx could change g->b, so it reloaded g->b and the other
	 * fields for every slot.
	 */
	if (g->weight == NULL)
	{
		/*
		 * no labelled rows, so no anomaly: every slot but p, in a loop of
		 * its own (one loop with the test hoisted is slower)
		 */
		for (int32_t i = 0; i < b; i++)
			if (i != p)
				slots[m++] = i;
	}
	else
		for (int32_t i = 0; i < b; i++)
			if (i != p && !bsgd_anomaly(g, i))
				slots[m++] = i;
	if (k > m)
		k = m;
	if (nearest)
	{
		/* partial selection sort on distance; ties by slot order */
		svc_sqdist_many(g->sv, g->idx, m, g->d, xp, g->kbuf);
		if (svc_select_nearest(g->kbuf, g->idx, m, k))
			return k;
		for (int32_t i = 0; i < k; i++)
		{
			int32_t		best = i;

			for (int32_t j = i + 1; j < m; j++)
				if (g->kbuf[j] < g->kbuf[best])
					best = j;
			if (best != i)
			{
				double		td = g->kbuf[i];
				int32_t		ti = g->idx[i];

				g->kbuf[i] = g->kbuf[best];
				g->idx[i] = g->idx[best];
				g->kbuf[best] = td;
				g->idx[best] = ti;
			}
		}
	}
	else
	{
		for (int32_t i = 0; i < k; i++)
		{
			int32_t		j = i + (int32_t) svc_rng_below(rng, (uint64_t) (m - i));
			int32_t		t = g->idx[i];

			g->idx[i] = g->idx[j];
			g->idx[j] = t;
		}
	}
	return k;
}

/*
 * Budget maintenance (Sec. 3.3): drop the most redundant vector p, after
 * projecting alpha_p phi(x_p) onto the span of k others when asked:
 * (K_kk + ridge I) delta = alpha_p k_p, alpha_i += delta_i.  Keeps
 * ||w||^2 current: exactly for removal; for projection up to the terms
 * of support vectors outside the k used, which are small (their kernel
 * with the residual is) and are corrected by the exact recomputation
 * every NORM_REFRESH steps.  The exact update would cost k more kernel
 * sums per step, more than the rest of the step.
 */
static void
bsgd_maintain(Bsgd *g, const SvcOptions *opt, SvcRng *rng)
{
	int32_t		p = bsgd_redundant(g);
	const double *xp = g->sv + (size_t) p * g->d;
	double		alpha_p = g->scale * g->a[p];
	bool		projected = false;

	if (opt->strategy == SVC_STRATEGY_PROJECT_KNN ||
		opt->strategy == SVC_STRATEGY_PROJECT_RANDOM)
	{
		int32_t		k = bsgd_pick(g, p, opt->k,
								  opt->strategy == SVC_STRATEGY_PROJECT_KNN, rng);

		if (k > 0)
		{
			for (int32_t i = 0; i < k; i++)
			{
				for (int32_t j = 0; j < i; j++)
				{
					double		kij = exp(-g->gamma * bsgd_pair_d2(g, g->idx[i], g->idx[j]));

					g->kmat[i * k + j] = kij;
					g->kmat[j * k + i] = kij;
				}
				/* a vector's distance to itself: 0, K = 1 */
				g->kmat[i * k + i] = 1.0 + PROJECTION_RIDGE;
				g->rhs[i] = alpha_p * exp(-g->gamma * bsgd_pair_d2(g, g->idx[i], p));
			}
			{
				/* keep k_p for the norm update before the solve overwrites rhs */
				double		kp[SVC_MAX_K];
				double		kmat_copy[SVC_MAX_K * SVC_MAX_K];

				for (int32_t i = 0; i < k; i++)
					kp[i] = alpha_p == 0 ? 0 : g->rhs[i] / alpha_p;
				memcpy(kmat_copy, g->kmat, sizeof(double) * (size_t) k * k);
				if (cholesky_solve(g->kmat, g->rhs, k))
				{
					/*
					 * dw = sum delta_i phi_i - alpha_p phi_p, nearly
					 * orthogonal to the k used, so w'dw ~ alpha_p phi_p'dw
					 * = alpha_p (delta'k_p - alpha_p); ||dw||^2 exactly,
					 * with the unridged K.
					 */
					double		dkd = 0.0,
								dkp = 0.0,
								wdw;

					for (int32_t i = 0; i < k; i++)
					{
						dkp += g->rhs[i] * kp[i];
						for (int32_t j = 0; j < k; j++)
							dkd += g->rhs[i] * g->rhs[j] *
								(kmat_copy[i * k + j] - (i == j ? PROJECTION_RIDGE : 0.0));
					}
					wdw = alpha_p * (dkp - alpha_p);
					g->wnorm2 += 2.0 * wdw + dkd - 2.0 * alpha_p * dkp + alpha_p * alpha_p;
					for (int32_t i = 0; i < k; i++)
						g->a[g->idx[i]] += g->rhs[i] / g->scale;
					projected = true;
				}
			}
		}
	}
	if (!projected)
		g->wnorm2 += -2.0 * alpha_p * bsgd_dot(g, xp) + alpha_p * alpha_p;
	if (g->wnorm2 < 0)
		g->wnorm2 = 0;
	bsgd_drop(g, p);
}

/* Tag xored into the seed of a warm start's passes ("WARM"). */
#define SEED_TAG_WARM	UINT64_C(0x5741524D)

SvcStatus
svc_bsgd_run(const SvcEnv *env, const double *x, int64_t n, int32_t d,
			 const SvcOptions *opt, double gamma, const double *weight,
			 const SvcModel *init, SvcModel *m, SvcError *err)
{
	Bsgd		g;
	SvcRng		rng;
	SvcStatus	st = SVC_OK;
	bool		budgeted = opt->strategy != SVC_STRATEGY_UNBUDGETED;
	int64_t		t0 = init ? init->iterations : 0;
	int64_t		t;
	bool		converged = false;

	/*
	 * The stopping rule fires at about t = ||w|| / tol whatever n is
	 * (doc/design-notes.md): a few hundred steps, which leave most rows
	 * unvisited and sparse regions without support vectors.  So the rule
	 * is consulted only after one full pass over the rows (the new rows,
	 * for a warm start).
	 */
	int64_t		min_steps = t0 + n;

	if (n < 1)
		return svc_fail(err, SVC_ERR_INTERNAL, "svc_train_bsgd called with no rows");
	if (t0 > INT64_MAX - opt->max_iter)
		return svc_fail(err, SVC_ERR_LIMIT, "the init model has run too many steps: %lld",
						(long long) t0);
	memset(&g, 0, sizeof(g));
	g.env = env;
	g.d = d;
	g.gamma = gamma;
	g.scale = 1.0;
	g.weight = weight;
	g.isolated = budgeted && opt->keep_isolated;
	g.undo_slot = -1;
	g.pending = -1;
	g.fl = d >= BSGD_FLOAT_DIMS && svc_sqdistf_range(x, (size_t) n * (size_t) d) &&
		(init == NULL || svc_sqdistf_range(init->sv, (size_t) init->n_sv * (size_t) d));
	if (g.fl)
	{
		g.xf = svc_alloc(env, sizeof(float) * (size_t) d, err);
		if (!g.xf)
			return SVC_ERR_NOMEM;
	}
	g.slot_of_row = svc_alloc(env, sizeof(int32_t) * (size_t) n, err);
	g.order = svc_alloc(env, sizeof(int64_t) * (size_t) n, err);
	g.kmat = svc_alloc(env, sizeof(double) * SVC_MAX_K * SVC_MAX_K, err);
	g.rhs = svc_alloc(env, sizeof(double) * SVC_MAX_K, err);
	/* below BSGD_FLOAT_DIMS a distance costs about what a look-up does */
	if (budgeted && d >= BSGD_FLOAT_DIMS &&
		(opt->strategy == SVC_STRATEGY_PROJECT_KNN ||
		 opt->strategy == SVC_STRATEGY_PROJECT_RANDOM))
	{
		g.pairs = svc_alloc0(env, sizeof(PairD2) * PAIR_CACHE, err);
		if (!g.pairs)
		{
			bsgd_free(&g);
			return SVC_ERR_NOMEM;
		}
	}
	if (!g.slot_of_row || !g.order || !g.kmat || !g.rhs)
	{
		bsgd_free(&g);
		return SVC_ERR_NOMEM;
	}
	for (int64_t i = 0; i < n; i++)
	{
		g.slot_of_row[i] = -1;
		g.order[i] = i;
	}
	st = bsgd_grow(&g, budgeted ? opt->budget + 1 : 64, err);
	if (st == SVC_OK && init != NULL)
	{
		/* w = sum alpha_i phi(s_i) of init, one width (the widths come after) */
		st = bsgd_grow(&g, init->n_sv + 1, err);
		for (int32_t i = 0; st == SVC_OK && i < init->n_sv; i++)
		{
			bsgd_set_sv(&g, i, init->sv + (size_t) i * d);
			bsgd_new_id(&g, i);
			g.a[i] = init->alpha[i];
			g.row[i] = -1;
			g.stamp[i] = 0;		/* older than any new one, for ties */
		}
		if (st == SVC_OK)
		{
			g.b = init->n_sv;
			g.wnorm2 = bsgd_norm2(&g);
			for (int32_t i = 0; g.isolated && i < g.b; i++)
				bsgd_nn_find(&g, i);
			for (int32_t i = 0; g.isolated && i < g.b; i++)
				bsgd_nns_add(&g, g.nnd[i]);
		}
	}
	/* a warm start's passes are not those of the init's first pass */
	svc_rng_seed(&rng, init ? opt->seed ^ SEED_TAG_WARM ^
				 ((uint64_t) t0 * UINT64_C(0x9E3779B97F4A7C15)) : opt->seed);

	for (t = t0 + 1; st == SVC_OK && t <= t0 + opt->max_iter; t++)
	{
		int64_t		pos = (t - t0 - 1) % n;
		int64_t		r;
		const double *xr;
		double		o;
		bool		violated;
		double		inv_t = 1.0 / (double) t;
		double		c_r;
		double		step;
		bool		anomaly;
		double		delta2;

		if (pos == 0)
			svc_rng_sample(&rng, g.order, n, n);
		r = g.order[pos];
		xr = x + (size_t) r * d;
		/*
		 * A labelled row's hinge weighs C_r / C (supervision.h).  A
		 * labelled anomaly's is the other side's, max(0, o - ANOMALY_O):
		 * a step of -C_r phi(x_r) while w'phi(x_r) is above ANOMALY_O.
		 */
		anomaly = weight != NULL && weight[r] < 0;
		c_r = weight ? opt->c * fabs(weight[r]) : opt->c;
		if (anomaly)
			c_r = -c_r;
		step = c_r * inv_t;
		o = g.b > 0 ? bsgd_dot_d2(&g, xr) : 0.0;
		violated = anomaly ? o > ANOMALY_O : o < 1.0;
		if (t % SVC_INTERRUPT_EVERY == 0 && svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			break;
		}
		svc_progress(env, SVC_PROGRESS_SGD, t - t0, opt->max_iter);

		/* ||w_{t+1} - w_t||^2 = (||w||^2 - 2C[v]o + C^2[v]) / t^2 */
		delta2 = (g.wnorm2 - (violated ? 2.0 * c_r * o - c_r * c_r : 0.0))
			* inv_t * inv_t;

		/* w <- (1 - 1/t) w: at t = 1 the model is empty anyway */
		if (t == 1)
			g.scale = 1.0;
		else
			g.scale *= 1.0 - inv_t;
		g.wnorm2 = (1.0 - inv_t) * (1.0 - inv_t) * g.wnorm2;

		if (violated)
		{
			int32_t		slot = g.slot_of_row[r];

			g.wnorm2 += 2.0 * (1.0 - inv_t) * step * o + step * step;
			if (slot < 0)
			{
				st = bsgd_grow(&g, g.b + 1, err);
				if (st != SVC_OK)
					break;
				slot = g.b++;
				bsgd_set_sv(&g, slot, xr);
				bsgd_new_id(&g, slot);
				g.a[slot] = 0.0;
				g.row[slot] = r;
				g.stamp[slot] = t;
				g.slot_of_row[r] = slot;
				g.a[slot] += step / g.scale;
				if (g.isolated && budgeted && g.b > opt->budget && bsgd_dropped_at_once(&g, slot))
					g.pending = slot;
				else if (g.isolated)
					bsgd_nn_insert(&g, slot);
			}
			else
				g.a[slot] += step / g.scale;
			if (budgeted && g.b > opt->budget)
				bsgd_maintain(&g, opt, &rng);
		}

		/* keep the scale away from underflow by folding it into a */
		if (g.scale < 1e-150)
		{
			for (int32_t i = 0; i < g.b; i++)
				g.a[i] *= g.scale;
			g.scale = 1.0;
		}
		/*
		 * The exact O(b^2 d) refresh matters only where the stopping rule
		 * reads ||w||^2 (t >= min_steps); a refresh replaces all earlier
		 * drift, so earlier ones would change nothing.
		 */
		if ((t % NORM_REFRESH) == 0 && t + NORM_REFRESH >= min_steps)
			g.wnorm2 = bsgd_norm2(&g);

		if (delta2 <= opt->tol * opt->tol && t >= min_steps)
		{
			converged = true;
			break;
		}
	}

	if (st == SVC_OK)
	{
		m->n_sv = g.b;
		m->sv = svc_alloc(env, sizeof(double) * (size_t) g.b * d, err);
		m->alpha = svc_alloc(env, sizeof(double) * (size_t) g.b, err);
		if (!m->sv || !m->alpha)
			st = SVC_ERR_NOMEM;
		else
		{
			memcpy(m->sv, g.sv, sizeof(double) * (size_t) g.b * d);
			for (int32_t i = 0; i < g.b; i++)
				m->alpha[i] = g.scale * g.a[i];
			m->iterations = converged ? t : t0 + opt->max_iter;
			m->converged = converged;
			m->offset = 1.0;
			m->gamma = gamma;
		}
	}
	bsgd_free(&g);
	return st;
}
