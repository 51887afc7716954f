/*
 * kdtree.c - exact nearest neighbour search in a k-d tree
 *
 * The tree is implicit: perm[lo..hi) holds a subtree whose root is the
 * median perm[mid], mid = lo + (hi - lo) / 2, split on the axis of widest
 * spread; a copy of the points in that order keeps a search's reads
 * sequential.  Building partitions by quickselect; searching descends to the
 * query's side first and visits the other side only if the splitting
 * plane is closer than the best distance so far.
 *
 * Built at -O3 for the host CPU (the Makefile), without fast-math: the
 * leaves' first sums by coordinate vectorise, and every comparison is
 * exact in any build.
 */
#include "kdtree.h"
#include "kbest.h"
#include "kernel.h"
#include "vec8.h"

#include <float.h>
#include <math.h>
#include <string.h>

/*
 * Searches scan subtrees this small whole rather than descend further (a
 * subtree's points are contiguous in the node copy).  With k > 1 the
 * bound stays loose for longer and a descent prunes little, so larger
 * subtrees pay; the nearest one's bound tightens at once (measured:
 * doc/design-notes.md).
 */
#define KD_LEAF 8
#define KD_LEAF_K 64

static double
coord(const SvcKdTree *t, int64_t i, int32_t j)
{
	return t->pts[(size_t) t->perm[i] * t->d + j];
}

/* Order by coordinate j, then by point index, so the build is deterministic. */
static bool
kd_less(const SvcKdTree *t, int64_t a, int64_t b, int32_t j)
{
	double		ca = coord(t, a, j),
				cb = coord(t, b, j);

	return ca < cb || (ca == cb && t->perm[a] < t->perm[b]);
}

static void
kd_swap(SvcKdTree *t, int64_t a, int64_t b)
{
	int64_t		tmp = t->perm[a];

	t->perm[a] = t->perm[b];
	t->perm[b] = tmp;
}

/* Put the k-th smallest of perm[lo..hi) by axis j at position k. */
static void
kd_select(SvcKdTree *t, int64_t lo, int64_t hi, int64_t k, int32_t j)
{
	while (hi - lo > 1)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		int64_t		store = lo;

		/* median of three as pivot, moved to the end */
		if (kd_less(t, mid, lo, j))
			kd_swap(t, mid, lo);
		if (kd_less(t, hi - 1, lo, j))
			kd_swap(t, hi - 1, lo);
		if (kd_less(t, mid, hi - 1, j))
			kd_swap(t, mid, hi - 1);
		for (int64_t i = lo; i < hi - 1; i++)
			if (kd_less(t, i, hi - 1, j))
				kd_swap(t, i, store++);
		kd_swap(t, store, hi - 1);
		if (store == k)
			return;
		if (k < store)
			hi = store;
		else
			lo = store + 1;
	}
}

/* Build the subtree perm[lo..hi): recursion depth is log2(n). */
static void
kd_build_range(SvcKdTree *t, int64_t lo, int64_t hi)
{
	int64_t		mid;
	int32_t		best_axis = 0;
	double		best_spread = -1.0;

	if (hi - lo < 1)
		return;
	mid = lo + (hi - lo) / 2;
	for (int32_t j = 0; j < t->d; j++)
	{
		double		mn = DBL_MAX,
					mx = -DBL_MAX;

		for (int64_t i = lo; i < hi; i++)
		{
			double		c = coord(t, i, j);

			mn = c < mn ? c : mn;
			mx = c > mx ? c : mx;
		}
		if (mx - mn > best_spread)
		{
			best_spread = mx - mn;
			best_axis = j;
		}
	}
	kd_select(t, lo, hi, mid, best_axis);
	t->axis[mid] = best_axis;
	kd_build_range(t, lo, mid);
	kd_build_range(t, mid + 1, hi);
}

SvcStatus
svc_kd_build(const SvcEnv *env, const double *pts, int64_t n, int32_t d,
			 SvcKdTree *t, SvcError *err)
{
	t->pts = pts;
	t->n = n;
	t->d = d;
	t->pure = NULL;
	t->pos = NULL;
	t->gnode = NULL;
	t->perm = svc_alloc(env, sizeof(int64_t) * (size_t) (n > 0 ? n : 1), err);
	t->axis = svc_alloc(env, sizeof(int32_t) * (size_t) (n > 0 ? n : 1), err);
	t->node = svc_alloc(env, sizeof(double) * (size_t) (n > 0 ? n : 1) * (size_t) d, err);
	t->stride = (n > 0 ? n : 0) + 8;
	t->cols = svc_alloc0(env, sizeof(double) * (size_t) t->stride * (size_t) d, err);
	if (!t->perm || !t->axis || !t->node || !t->cols)
		return SVC_ERR_NOMEM;
	for (int64_t i = 0; i < n; i++)
	{
		t->perm[i] = i;
		t->axis[i] = 0;
	}
	kd_build_range(t, 0, n);
	for (int64_t i = 0; i < n; i++)
		memcpy(t->node + (size_t) i * d, pts + (size_t) t->perm[i] * d,
			   sizeof(double) * (size_t) d);
	for (int32_t j = 0; j < d; j++)
		for (int64_t i = 0; i < n; i++)
			t->cols[(size_t) j * t->stride + i] = t->node[(size_t) i * d + j];
	return SVC_OK;
}

void
svc_kd_free(const SvcEnv *env, SvcKdTree *t)
{
	svc_free(env, t->perm);
	svc_free(env, t->axis);
	svc_free(env, t->node);
	svc_free(env, t->cols);
	svc_free(env, t->pure);
	svc_free(env, t->pos);
	svc_free(env, t->gnode);
	t->perm = NULL;
	t->axis = NULL;
	t->node = NULL;
	t->cols = NULL;
	t->pure = NULL;
	t->pos = NULL;
	t->gnode = NULL;
}

/*
 * The first sums of the points at i0..i0+7 of the node order to q: each
 * coordinate's squared difference added in order, by column, eight points
 * at a time (the padding keeps the eight in bounds from any i0 < n).
 */
static inline v8
first8(const SvcKdTree *t, int64_t i0, const double *q)
{
	v8			u = load8(t->cols + (size_t) i0) - q[0],
				acc = u * u;

	for (int32_t j = 1; j < t->d; j++)
	{
		u = load8(t->cols + (size_t) j * t->stride + (size_t) i0) - q[j];
		acc += u * u;
	}
	return acc;
}

/*
 * A squared distance r2 by one sum raised past every other sum of the same
 * d squares can give: each is within (d + 1) 2^-53 of the exact sum,
 * relatively (underflow aside), and a square's difference rounded then
 * squared within 3 2^-53 of its exact square, so 1 + 8 (d + 2) 2^-52 of
 * r2 covers them, and DBL_MIN per square underflow (the bound of
 * svc_select_nearest_cols).
 */
static inline double
beyond_rounding(double r2, int32_t d)
{
	return r2 * (1.0 + 8.0 * (d + 2) * DBL_EPSILON) + (d + 1) * DBL_MIN;
}

/* pure[] of a subtree whose points are of more than one group */
#define KD_MIXED INT32_MIN

/* Fill pure[] for the subtree perm[lo..hi), hi > lo; returns its entry. */
static int32_t
kd_pure_range(SvcKdTree *t, int64_t lo, int64_t hi)
{
	int64_t		mid = lo + (hi - lo) / 2;
	int32_t		g = t->gnode[mid];

	if (lo < mid && kd_pure_range(t, lo, mid) != g)
		g = KD_MIXED;
	if (mid + 1 < hi && kd_pure_range(t, mid + 1, hi) != g)
		g = KD_MIXED;
	t->pure[mid] = g;
	return g;
}

SvcStatus
svc_kd_set_groups(const SvcEnv *env, SvcKdTree *t, const int32_t *group, SvcError *err)
{
	/* a second call replaces the first's groups */
	svc_free(env, t->pure);
	svc_free(env, t->pos);
	svc_free(env, t->gnode);
	t->pure = svc_alloc(env, sizeof(int32_t) * (size_t) (t->n > 0 ? t->n : 1), err);
	t->pos = svc_alloc(env, sizeof(int64_t) * (size_t) (t->n > 0 ? t->n : 1), err);
	t->gnode = svc_alloc(env, sizeof(int32_t) * (size_t) (t->n + 8), err);
	if (!t->pure || !t->pos || !t->gnode)
		return SVC_ERR_NOMEM;
	for (int64_t i = 0; i < t->n; i++)
	{
		t->pos[t->perm[i]] = i;
		t->gnode[i] = group[t->perm[i]];
	}
	for (int64_t i = t->n; i < t->n + 8; i++)
		t->gnode[i] = KD_MIXED;	/* past the end: never read as a point */
	if (t->n > 0)
		kd_pure_range(t, 0, t->n);
	return SVC_OK;
}

double
svc_kd_kth_bound(const SvcKdTree *t, int64_t p, int32_t k)
{
	int64_t		lo = 0,
				hi = t->n,
				at = t->pos[p];
	const double *q = t->pts + (size_t) p * t->d;
	v8			min1,
				min2;
	double		two[16];

	if (k < 1 || k > 16)
		return HUGE_VAL;
	/* down to a leaf on p's side (p itself, at a node, on neither) */
	while (hi - lo > KD_LEAF_K)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (at < mid)
			hi = mid;
		else
			lo = mid + 1;
	}
	/*
	 * The two smallest first sums of each of the eight lanes: sixteen
	 * distances to points of the tree (of the leaf, and beyond its end
	 * those of the next points), so their k-th smallest is at least that
	 * of every point.  The padding past the last point is no point, and a
	 * NaN sum (a NaN coordinate) no distance.
	 */
	for (int l = 0; l < 8; l++)
		min1[l] = min2[l] = HUGE_VAL;
	for (int64_t i0 = lo; i0 < hi; i0 += 8)
	{
		v8			acc = first8(t, i0, q);

		for (int l = 0; l < 8; l++)
		{
			double		x = i0 + l < t->n && acc[l] == acc[l] ? acc[l] : HUGE_VAL;
			double		above = x > min1[l] ? x : min1[l];

			min2[l] = above < min2[l] ? above : min2[l];
			min1[l] = x < min1[l] ? x : min1[l];
		}
	}
	store8p(two, &min1);
	store8p(two + 8, &min2);
	/* svc_sqdist_many's sums are within the first sums' rounding (above) */
	return beyond_rounding(svc_select_double(two, 16, k - 1), t->d);
}

/*
 * Whether a point of perm[lo..hi) (at most KD_LEAF_K) outside group g has
 * a first sum by coordinate within cut: as kd_leaf_cols, a loop that
 * vectorises, and the cut-off allows for the other sums' rounding.
 */
static bool
kd_leaf_other(const SvcKdTree *t, int64_t lo, int64_t hi, int32_t g, const double *q,
			  double cut)
{
	for (int64_t i0 = lo; i0 < hi; i0 += 8)
	{
		v8			acc = first8(t, i0, q);
		int64_t		any = 0;

		/* past hi: other points, or the padding, none of them asked about */
		for (int l = 0; l < 8; l++)
			any |= (i0 + l < hi) & (acc[l] <= cut) & (t->gnode[i0 + l] != g);
		if (any)
			return true;
	}
	return false;
}

/*
 * svc_kd_other_within on perm[lo..hi): the query's side first, the other
 * only if its splitting plane is within the cut-off.
 */
static bool
kd_other_within(const SvcKdTree *t, int64_t lo, int64_t hi, int32_t g, const double *q,
				double cut)
{
	while (hi > lo)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		const double *x = t->node + (size_t) mid * t->d;
		int32_t		j = t->axis[mid];
		double		diff;

		if (t->pure[mid] == g)
			return false;
		if (hi - lo <= KD_LEAF_K)
			return kd_leaf_other(t, lo, hi, g, q, cut);
		if (t->gnode[mid] != g && svc_sqdist(x, q, t->d) <= cut)
			return true;
		diff = q[j] - x[j];
		if (diff < 0)
		{
			if (kd_other_within(t, lo, mid, g, q, cut))
				return true;
			lo = mid + 1;
		}
		else
		{
			if (kd_other_within(t, mid + 1, hi, g, q, cut))
				return true;
			hi = mid;
		}
		/* the other side is at least |diff| away (NaN: searched no further) */
		if (!(diff * diff <= cut))
			return false;
	}
	return false;
}

bool
svc_kd_other_within(const SvcKdTree *t, int32_t g, const double *q, double r2)
{
	/* diff^2 at a plane is one square of the sums beyond it: the same cut */
	return kd_other_within(t, 0, t->n, g, q, beyond_rounding(r2, t->d));
}

double
svc_sqdist_far(const double *a, const double *b, int32_t d)
{
	const double c = 0x1p-600;
	double		s = 0.0;

	for (int32_t j = 0; j < d; j++)
	{
		double		bj = isinf(b[j]) ? copysign(DBL_MAX, b[j]) : b[j];
		double		t = a[j] * c - bj * c;

		s += t * t;
	}
	return s;
}

/*
 * Offer the points of perm[lo..hi) (at most KD_LEAF_K) that are within
 * the k-th best when kb is full, with the distances svc_sqdist_many gives,
 * without computing most of them: first a sum by coordinate, a loop that
 * vectorises across the points, then svc_sqdist_many's own distance for
 * the points whose first sum can be within (beyond_rounding of the k-th
 * best).  False (nothing offered) when kb is not full: the caller then
 * computes every distance.
 */
static bool
kd_leaf_cols(const SvcKdTree *t, int64_t lo, int64_t hi, const double *q, KBest *kb)
{
	double		exact[KD_LEAF_K],
				cut;
	int32_t		cand[KD_LEAF_K],
				m = (int32_t) (hi - lo),
				nc = 0;

	if (kb->found < kb->k)
		return false;
	/* infinite or NaN when the k-th best is: every point or none, as before */
	cut = beyond_rounding(kb->d2[kb->k - 1], t->d);
	/* whole eights: the columns' padding keeps the last one in bounds */
	for (int32_t i0 = 0; i0 < m; i0 += 8)
	{
		v8			acc = first8(t, lo + i0, q);
		vi8			within;
		int64_t		any = 0;

		/* most eights hold none: one test for them (a NaN is never within) */
		within = acc <= cut;
		for (int l = 0; l < 8; l++)
			any |= within[l];
		if (any == 0)
			continue;
		for (int32_t i = i0; i < i0 + 8 && i < m; i++)
		{
			cand[nc] = i;
			nc += acc[i - i0] <= cut;
		}
	}
	if (nc == 0)
		return true;
	svc_sqdist_many(t->node + (size_t) lo * t->d, cand, nc, t->d, q, exact);
	/* in the points' order, against the k-th best as it tightens */
	for (int32_t c = 0; c < nc; c++)
		if (exact[c] <= kb->d2[kb->k - 1])
			kbest_offer(kb, t->perm[lo + cand[c]], exact[c]);
	return true;
}

/*
 * Search perm[lo..hi): the query's side first, the other if it can help;
 * a subtree of at most leaf points is scanned whole.  The k best by
 * (distance, index) do not depend on the order the points are offered.
 */
static void
kd_search_k(const SvcKdTree *t, int64_t lo, int64_t hi, const double *q, KBest *kb,
			int64_t leaf)
{
	int64_t		mid;
	double		diff;
	int32_t		j;
	const double *x;

	if (hi - lo <= leaf)
	{
		double		d2[KD_LEAF_K];
		bool		full;
		double		last;

		/* the nearest one's leaves of 8 are as fast without it */
		if (leaf == KD_LEAF_K && kd_leaf_cols(t, lo, hi, q, kb))
			return;
		full = kb->found == kb->k;
		last = full ? kb->d2[kb->k - 1] : 0.0;
		svc_sqdist_many(t->node + (size_t) lo * t->d, NULL, hi - lo, t->d, q, d2);
		/* most are farther than the k-th best: no call for them */
		for (int64_t i = lo; i < hi; i++)
			if (!full || d2[i - lo] <= last)
			{
				kbest_offer(kb, t->perm[i], d2[i - lo]);
				full = kb->found == kb->k;
				last = full ? kb->d2[kb->k - 1] : 0.0;
			}
		return;
	}
	mid = lo + (hi - lo) / 2;
	x = t->node + (size_t) mid * t->d;
	kbest_offer(kb, t->perm[mid], svc_sqdist(x, q, t->d));
	j = t->axis[mid];
	diff = q[j] - x[j];
	if (diff < 0)
	{
		kd_search_k(t, lo, mid, q, kb, leaf);
		if (diff * diff <= kbest_bound(kb))
			kd_search_k(t, mid + 1, hi, q, kb, leaf);
	}
	else
	{
		kd_search_k(t, mid + 1, hi, q, kb, leaf);
		if (diff * diff <= kbest_bound(kb))
			kd_search_k(t, lo, mid, q, kb, leaf);
	}
}

int32_t
svc_kd_knearest(const SvcKdTree *t, const double *q, int32_t k, int64_t *idx,
				double *d2)
{
	KBest		kb = {k, 0, idx, d2};

	if (k <= 0)
		return 0;
	kd_search_k(t, 0, t->n, q, &kb, k > 1 ? KD_LEAF_K : KD_LEAF);
	return kb.found;
}

int64_t
svc_kd_nearest(const SvcKdTree *t, const double *q, double *dist2)
{
	int64_t		best = -1;
	double		best_d2 = DBL_MAX;
	KBest		kb = {1, 0, &best, &best_d2};

	kd_search_k(t, 0, t->n, q, &kb, KD_LEAF);
	if (t->n > 0 && !(kb.found == 1 && best_d2 < DBL_MAX))
	{
		/*
		 * Every distance overflowed (or q has a NaN): compare them scaled
		 * down instead, so that a row very far from every point still gets
		 * the nearest one rather than none; a NaN row gets the first.
		 */
		best = svc_nearest_far(t->pts, t->n, t->d, q);
		if (best < 0)
			best = 0;
		best_d2 = HUGE_VAL;
	}
	if (dist2)
		*dist2 = best_d2;
	return t->n > 0 ? best : -1;
}

int64_t
svc_nearest_far(const double *pts, int64_t n, int32_t d, const double *q)
{
	int64_t		best = -1;
	double		bd = 0.0;

	for (int64_t p = 0; p < n; p++)
	{
		double		d2 = svc_sqdist_far(pts + (size_t) p * d, q, d);

		if (d2 < bd || (best < 0 && d2 == d2))
		{
			bd = d2;
			best = p;
		}
	}
	return best;
}
