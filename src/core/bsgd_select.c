/*
 * bsgd_select.c - budget maintenance's selection of the nearest slots
 *
 * Declared in bsgd_select.h.  Built at -O3 for the host CPU (the Makefile),
 * without fast-math: its comparisons are exact in any build, and the
 * lanes' minima and the sums by column vectorise.
 */
#include "bsgd_select.h"
#include "kernel.h"
#include "vec8.h"

#include <float.h>
#include <math.h>

#define SELECT_REPLAY_MAX (4 * SVC_MAX_K)
#define SELECT_CAND_MAX 256

/*
 * The k-th smallest (1 <= k <= 8) of the eight lanes' minima of v[0..n),
 * n >= 8 (lane j: positions j, j + 8, ... of the whole eights), which are
 * eight of the values, so at least the k-th smallest of all; NaN where a
 * value is NaN (the lanes' sums tell: the values are distances, none
 * negative).  The lanes vectorise.
 */
static double
lanes_bound(const double *v, int32_t n, int32_t k)
{
	double		lane[8],
				lsum[8],
				sorted[8];

	for (int j = 0; j < 8; j++)
		lane[j] = lsum[j] = v[j];
	for (int32_t i0 = 8; i0 + 8 <= n; i0 += 8)
		for (int j = 0; j < 8; j++)
		{
			double		x = v[i0 + j];

			lane[j] = x < lane[j] ? x : lane[j];
			lsum[j] += x;
		}
	for (int32_t i = n / 8 * 8; i < n; i++)
		lsum[0] += v[i];
	for (int j = 0; j < 8; j++)
		if (lsum[j] != lsum[j])
			return NAN;
	for (int j = 0; j < 8; j++)
	{
		int			p = j;

		while (p > 0 && sorted[p - 1] > lane[j])
		{
			sorted[p] = sorted[p - 1];
			p--;
		}
		sorted[p] = lane[j];
	}
	return sorted[k - 1];
}

/*
 * Into cand, in order, the positions of dist[0..m) that can be among the
 * k smallest: those at most lanes_bound.  The listing
 * has no branch per row; the selection then scans a few rows instead of
 * all, with their mispredicted branches.  Returns their count; m (cand
 * unused: take every row) when k > 8, m < 8 or more than SELECT_CAND_MAX
 * pass; -1 when a distance is NaN (the sort's passes leave a NaN where it
 * stands, which a selection by value does not reproduce).
 */
static int32_t
candidates(const double *dist, int32_t m, int32_t k, int32_t *cand)
{
	double		bound;
	int32_t		nc = 0;

	if (k > 8 || m < 8)
	{
		for (int32_t i = 0; i < m; i++)
			if (dist[i] != dist[i])
				return -1;
		return m;
	}
	bound = lanes_bound(dist, m, k);
	if (bound != bound)
		return -1;
	for (int32_t i = 0; i < m; i++)
	{
		cand[nc] = i;
		nc += dist[i] <= bound;
		if (nc == SELECT_CAND_MAX)
			return m;
	}
	return nc;
}

/*
 * The partial selection sort of bsgd_pick (k passes, each taking the first
 * smallest distance at or after position i and swapping it to i) replayed
 * on the rows that can be taken: val[c], at position pos[c] of the list,
 * slot[c], for every row within the k-th smallest distance (nc >= k of
 * them), in position order.  Writes idx[0..k), ties included, as the sort
 * leaves them.  Reorders pos.
 */
static void
replay(const double *val, int32_t *pos, const int32_t *slot, int32_t nc, int32_t k,
	   int32_t *idx)
{
	for (int32_t i = 0; i < k; i++)
	{
		int32_t		best = -1;

		/*
		 * The pass's choice among the rows not yet taken (all at positions
		 * i and after): the smallest distance, on a tie the first position.
		 */
		for (int32_t c = 0; c < nc; c++)
			if (pos[c] >= i &&
				(best < 0 || val[c] < val[best] ||
				 (val[c] == val[best] && pos[c] < pos[best])))
				best = c;
		/* its swap: the row at position i moves to the chosen one's place */
		for (int32_t c = 0; c < nc; c++)
			if (pos[c] == i && c != best)
			{
				pos[c] = pos[best];
				break;
			}
		pos[best] = i;
		idx[i] = slot[best];
	}
}

/* The k smallest of v over the n rows of list (all rows if list is NULL). */
static int32_t
smallest_k(const double *v, const int32_t *list, int32_t n, int32_t k, double *top)
{
	int32_t		ntop = 0;

	for (int32_t r = 0; r < n; r++)
	{
		double		x = v[list ? list[r] : r];
		int32_t		j;

		if (ntop == k && !(x < top[k - 1]))
			continue;
		j = ntop < k ? ntop++ : k - 1;
		while (j > 0 && top[j - 1] > x)
		{
			top[j] = top[j - 1];
			j--;
		}
		top[j] = x;
	}
	return ntop;
}

/*
 * The partial selection sort's order in about one pass: only rows within
 * the k-th smallest distance can be taken, so the passes and their swaps
 * are replayed on those alone.  Writes idx[0..k); false (nothing written)
 * when a distance is NaN or ties at the k-th distance leave too many to
 * replay.
 */
bool
svc_select_nearest(const double *dist, int32_t *idx, int32_t m, int32_t k)
{
	double		top[SVC_MAX_K];	/* the k smallest distances, ascending */
	double		val[SELECT_REPLAY_MAX];
	int32_t		pos[SELECT_REPLAY_MAX],
				slot[SELECT_REPLAY_MAX],
				nc = 0;
	int32_t		cand[SELECT_CAND_MAX],
				n_cand;
	double		limit;

	if (k <= 0 || k > m)
		return false;
	n_cand = candidates(dist, m, k, cand);
	if (n_cand < 0)
		return false;
	smallest_k(dist, n_cand < m ? cand : NULL, n_cand, k, top);
	limit = top[k - 1];
	for (int32_t r = 0; r < n_cand; r++)
	{
		int32_t		i = n_cand < m ? cand[r] : r;

		if (dist[i] <= limit)
		{
			if (nc == SELECT_REPLAY_MAX)
				return false;
			val[nc] = dist[i];
			pos[nc] = i;
			slot[nc] = idx[i];
			nc++;
		}
	}
	if (nc < k)
		return false;			/* cannot be: at least the k smallest are within */
	replay(val, pos, slot, nc, k, idx);
	return true;
}

/*
 * The rest of svc_select_nearest_cols once work[0..b) holds first sums of
 * the slots' distances to x: slack is what a first sum may exceed
 * svc_sqdist_many's distance by in absolute terms (underflow), beyond the
 * relative error the cut-off allows.  Slot p is left out of the list (its
 * successors move up one place); p = -1 leaves none out.
 */
static bool
nearest_from_first(const double *rows, int32_t b, int32_t d, int32_t p, const double *x,
				   int32_t k, double slack, double *work, double *hi, int32_t *idx)
{
	double		top[SVC_MAX_K],
				bound,
				cut,
				limit;
	double		exact[SELECT_CAND_MAX];
	int32_t		cand[SELECT_CAND_MAX],
				pos[SELECT_CAND_MAX],
				nc = 0,
				nw = 0;

	if (k <= 0)
		return false;			/* (the callers check; so the compiler knows) */
	if (p >= 0)
		work[p] = HUGE_VAL;		/* not in the list */
	if (hi != NULL)
	{
		/* bounds given: a row whose least exceeds the k-th greatest is out */
		if (p >= 0)
			hi[p] = HUGE_VAL;
		bound = lanes_bound(hi, b, k);
		if (bound != bound)
			return false;
		cut = bound;
	}
	else
	{
		bound = lanes_bound(work, b, k);
		if (bound != bound)
			return false;
		cut = bound * (1.0 + 8.0 * (d + 2) * DBL_EPSILON) + slack;
	}
	if (!(cut < HUGE_VAL))
		return false;			/* p would pass */
	for (int32_t i = 0; i < b; i++)
	{
		cand[nc] = i;
		nc += work[i] <= cut;
		if (nc == SELECT_CAND_MAX)
			return false;
	}
	if (nc < k)
		return false;
	/*
	 * the distances the list would have had, for the candidates: no NaN,
	 * as the first sums had none (the same differences, squared)
	 */
	svc_sqdist_many(rows, cand, nc, d, x, exact);
	smallest_k(exact, NULL, nc, k, top);
	limit = top[k - 1];
	/* the rows within it, at their positions in the list (p left out) */
	for (int32_t c = 0; c < nc; c++)
		if (exact[c] <= limit)
		{
			/* nw <= c: the arrays are compacted in place */
			exact[nw] = exact[c];
			pos[nw] = cand[c] - (p >= 0 && cand[c] > p);
			cand[nw] = cand[c];
			nw++;
		}
	/* fewer than k: a NaN distance where its first sum had none */
	if (nw < k)
		return false;
	replay(exact, pos, cand, nw, k, idx);
	/* the taken rows' distances, for the caller (bsgd's projection) */
	for (int32_t c = 0; c < nw; c++)
		work[cand[c]] = exact[c];
	return true;
}

/*
 * svc_select_nearest for the list of every slot 0..b-1 but p, in order,
 * whose distances to x are those svc_sqdist_many gives from rows, without
 * computing them all: first from cols (the same vectors by column, stride
 * apart), a loop over the slots that vectorises, then, for the rows that
 * can be among the k nearest by that first sum, svc_sqdist_many's own.
 * Both sum the same d squares, each within gamma = (d + 1) 2^-53 of the
 * exact sum, relatively (underflow aside), so a row whose first sum
 * exceeds the k-th smallest first sum by more than a factor (1 + gamma)^2
 * / (1 - gamma)^2 is not among the k nearest by the other either: the
 * cut-off allows 1 + 8 (d + 2) 2^-52, and DBL_MIN per square for
 * underflow; lanes_bound bounds the k-th smallest first sum.  work holds
 * b doubles.  False (idx untouched) where svc_select_nearest
 * would be (the caller then takes every distance and sorts) and where
 * k > 8, b < 9 or too many rows pass.
 */
bool
svc_select_nearest_cols(const double *rows, const double *cols, size_t stride,
						int32_t b, int32_t d, int32_t p, const double *x, int32_t k,
						double *work, int32_t *idx)
{
	if (k <= 0 || k > 8 || b < 9 || p < 0 || p >= b)
		return false;
	/* whole eights of slots with their sums in registers, then the rest */
	for (int32_t i0 = 0; i0 + 8 <= b; i0 += 8)
	{
		v8			acc = {0};

		for (int32_t j = 0; j < d; j++)
		{
			v8			u = load8(cols + (size_t) j * stride + i0) - x[j];

			acc += u * u;
		}
		store8p(work + i0, &acc);
	}
	for (int32_t i = b / 8 * 8; i < b; i++)
	{
		double		acc = 0.0;

		for (int32_t j = 0; j < d; j++)
		{
			double		u = cols[(size_t) j * stride + i] - x[j];

			acc += u * u;
		}
		work[i] = acc;
	}
	return nearest_from_first(rows, b, d, p, x, k, (d + 1) * DBL_MIN, work, NULL, idx);
}

/*
 * svc_select_nearest_cols with the first sums given in work[0..b) (p's
 * ignored): distances within SVC_SQDIST_REL_ERR(d) of svc_sqdist's,
 * relatively, plus SVC_SQDIST_ABS_ERR(d), as svc_kernel_sum_cols_d2
 * leaves them.  Then a row among the k nearest by svc_sqdist has a first
 * sum within (1 + r)^2 of the bound, which the cut-off's 1 + 8 (d + 2)
 * 2^-52 covers (r = (d + 2) 2^-51), plus (2 + r) times the absolute term.
 */
bool
svc_select_nearest_given(const double *rows, int32_t b, int32_t d, int32_t p,
						 const double *x, int32_t k, double *work, int32_t *idx)
{
	if (k <= 0 || k > 8 || b < 9 || p < 0 || p >= b)
		return false;
	return nearest_from_first(rows, b, d, p, x, k, 2.5 * SVC_SQDIST_ABS_ERR(d), work, NULL, idx);
}

/*
 * The same from bounds of the distances: lo[i] <= svc_sqdist_many's
 * distance of slot i <= hi[i] (p's ignored, both overwritten).
 */
bool
svc_select_nearest_bounds(const double *rows, int32_t b, int32_t d, int32_t p,
						  const double *x, int32_t k, double *lo, double *hi, int32_t *idx)
{
	if (k <= 0 || k > 8 || b < 9 || p < 0 || p >= b)
		return false;
	return nearest_from_first(rows, b, d, p, x, k, 0.0, lo, hi, idx);
}

/*
 * A float sum of d squares of float differences is within F = (d + 4)
 * 2^-23 of the exact sum D' of those squares, relatively, plus A for
 * squares that underflow.  r' = sqrt(D') is within e of r = |s - x|, each
 * vector moved by its rounding to float (at most 2^-24 of its norm, plus
 * 2^-150 a coordinate in the subnormals): e^2 <= E = 4 c^2 (|s|^2 + |x|^2)
 * + 2 d 2^-300, c = 2^-24 and a little.  Without a square root,
 * (r' + e)^2 <= (1 + h) r'^2 + (1 + 1/h) e^2 and (r' - e)^2 >= (1 - h)
 * r'^2 - (1/h - 1) e^2 for 0 < h <= 1 (h = 2^-16).  svc_sqdist's own sum
 * is within G = (d + 8) 2^-50 of r^2, relatively (which also covers this
 * loop's roundings), plus its underflow term.
 */
void
svc_sqdistf_bounds(const double *d2f, const double *sn2, double xn2, int32_t n, int32_t d,
				   double *lo, double *hi)
{
	double		dd = (double) d;
	double		f = (dd + 4.0) * 0x1.0p-23,
				a = (dd + 1.0) * 0x1.0p-148,
				c2 = 4.0 * (1.01 * 0x1.0p-24) * (1.01 * 0x1.0p-24),
				ev2 = 2.0 * dd * 0x1.0p-296,
				h = 0x1.0p-16,
				gr = (dd + 8.0) * 0x1.0p-50,
				abs_err = SVC_SQDIST_ABS_ERR(d),
				klo = (1.0 - h) / (1.0 + f) * (1.0 - gr),
				khi = (1.0 + h) / (1.0 - f) * (1.0 + gr),
				elo = (1.0 / h - 1.0) * (1.0 - gr),
				ehi = (1.0 + 1.0 / h) * (1.0 + gr);

	for (int32_t i = 0; i < n; i++)
	{
		double		v = d2f[i],
					e2 = c2 * (sn2[i] + xn2) + ev2,
					l = (v - a) * klo - elo * e2 - abs_err;

		lo[i] = l > 0 ? l : 0.0;
		hi[i] = (v + a) * khi + ehi * e2 + abs_err;
	}
}

int32_t
svc_select_nearest_floatcols(const double *rows, const float *cols, size_t stride,
							 const double *sn2, int32_t b, int32_t d, int32_t p,
							 const double *x, double xn2, float *xf, double *lo, double *hi,
							 double *dist)
{
	int32_t		at;

	if (b < 9 || p < -1 || p >= b)
		return -1;
	for (size_t j = 0; j < (size_t) d; j++)
		xf[j] = (float) x[j];
	/*
	 * The float sums made bounds; the selection of one (k = 1) then sums
	 * exactly the slots whose lower bound is within the least upper one,
	 * which hold every slot at the least distance, and takes the first
	 * of them at it: the scan's choice
	 */
	svc_sqdist_colsf(cols, stride, b, d, xf, lo);
	svc_sqdistf_bounds(lo, sn2, xn2, b, d, lo, hi);
	if (!nearest_from_first(rows, b, d, p, x, 1, 0.0, lo, hi, &at))
		return -1;
	*dist = lo[at];
	return at;
}

int32_t
svc_select_nearest_slotf(const double *rows, const float *cols, size_t stride,
						 const double *sn2, int32_t b, int32_t d, int32_t i, float *xf,
						 double *lo, double *hi, double *dist)
{
	if (b < 9 || i < 0 || i >= b)
		return -1;
	return svc_select_nearest_floatcols(rows, cols, stride, sn2, b, d, i,
										rows + (size_t) i * (size_t) d, sn2[i], xf, lo, hi,
										dist);
}
