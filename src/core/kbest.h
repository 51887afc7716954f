/*
 * kbest.h - the k nearest points found so far in a tree search, sorted by
 * (distance, index), as the k-d tree and the ball tree keep them
 *
 * Ties go to the smaller index, so that both trees (and the scan they
 * stand in for) give the same points in the same order.
 */
#ifndef SVC_KBEST_H
#define SVC_KBEST_H

#include <float.h>
#include <stdint.h>

typedef struct KBest
{
	int32_t		k;
	int32_t		found;			/* how many of idx[] and d2[] hold points */
	int64_t    *idx;
	double	   *d2;
} KBest;

/* The k-th distance, or DBL_MAX while fewer than k points are found. */
static inline double
kbest_bound(const KBest *kb)
{
	return kb->found < kb->k ? DBL_MAX : kb->d2[kb->found - 1];
}

/* Point p at squared distance d2, kept if it is among the k best. */
static inline void
kbest_offer(KBest *kb, int64_t p, double d2)
{
	int32_t		pos;

	if (kb->found == kb->k &&
		!(d2 < kb->d2[kb->k - 1] || (d2 == kb->d2[kb->k - 1] && p < kb->idx[kb->k - 1])))
		return;
	pos = kb->found < kb->k ? kb->found++ : kb->k - 1;
	while (pos > 0 && (kb->d2[pos - 1] > d2 ||
					   (kb->d2[pos - 1] == d2 && kb->idx[pos - 1] > p)))
	{
		kb->d2[pos] = kb->d2[pos - 1];
		kb->idx[pos] = kb->idx[pos - 1];
		pos--;
	}
	kb->d2[pos] = d2;
	kb->idx[pos] = p;
}

#endif							/* SVC_KBEST_H */
