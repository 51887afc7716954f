/*
 * select.c - budget maintenance's selection of the nearest slots
 *
 * Declared in train.h.  Built at -O3 for the host CPU (the Makefile),
 * without fast-math: its comparisons are exact in any build, and the
 * lanes' minima vectorise.
 */
#include "train.h"

#define SELECT_REPLAY_MAX (4 * SVC_MAX_K)
#define SELECT_CAND_MAX 256

/*
 * Into cand, in order, the positions of dist[0..m) that can be among the
 * k smallest: those at most the k-th smallest of the eight lanes' minima
 * (positions i mod 8), which are eight of the values, so that bound is at
 * least the k-th smallest of all.  The lanes vectorise and the listing
 * has no branch per row; the selection then scans a few rows instead of
 * all, with their mispredicted branches.  Returns their count, or m (cand
 * unused: take every row) when k > 8, m < 8, a NaN leaves the order open
 * or more than SELECT_CAND_MAX pass.
 */
static int32_t
candidates(const double *dist, int32_t m, int32_t k, int32_t *cand)
{
	double		lane[8],
				sorted[8],
				bound;
	bool		nan = false;
	int32_t		nc = 0;

	if (k > 8 || m < 8)
		return m;
	for (int j = 0; j < 8; j++)
		lane[j] = dist[j];
	for (int32_t i0 = 8; i0 + 8 <= m; i0 += 8)
		for (int j = 0; j < 8; j++)
		{
			double		v = dist[i0 + j];

			lane[j] = v < lane[j] ? v : lane[j];
		}
	for (int32_t i = 0; i < m; i++)
		nan |= dist[i] != dist[i];
	if (nan)
		return m;
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
	bound = sorted[k - 1];
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
 * smallest distance at or after position i and swapping it to i), with the
 * order it gives, ties included, in about one pass: only rows within the
 * k-th smallest distance can be taken, so the passes and their swaps are
 * replayed on those alone.  Writes idx[0..k); false (nothing written) when
 * ties at the k-th distance leave too many to replay.
 */
bool
svc_select_nearest(const double *dist, int32_t *idx, int32_t m, int32_t k)
{
	double		top[SVC_MAX_K];	/* the k smallest distances, ascending */
	int32_t		ntop = 0;
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
	for (int32_t r = 0; r < n_cand; r++)
	{
		int32_t		i = n_cand < m ? cand[r] : r;
		double		v = dist[i];
		int32_t		j;

		if (ntop == k && !(v < top[k - 1]))
			continue;
		j = ntop < k ? ntop++ : k - 1;
		while (j > 0 && top[j - 1] > v)
		{
			top[j] = top[j - 1];
			j--;
		}
		top[j] = v;
	}
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
	/* fewer than k within the k-th (a NaN among them): the caller's sort */
	if (nc < k)
		return false;
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
	return true;
}
