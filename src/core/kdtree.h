/*
 * kdtree.h - exact nearest neighbour search in a k-d tree
 *
 * Used for Algorithm 3's fill (a row takes the cluster of its nearest
 * row of the boundary strip) and for the saddle tree's data edges (each
 * row's nearest rows, and first whether any row of another basin is that
 * near): O(n log n) to build, about O(log n) per query in low dimension,
 * and never worse than a linear scan.
 */
#ifndef SVC_KDTREE_H
#define SVC_KDTREE_H

#include "svc_core.h"

typedef struct SvcKdTree
{
	const double *pts;			/* [n * d], not owned */
	int64_t		n;
	int32_t		d;
	int64_t    *perm;			/* [n]: point order of the implicit tree */
	int32_t    *axis;			/* [n]: split axis of each node */
	double	   *node;			/* [n * d]: the points in perm's order, so a
								 * search reads them in sequence */
	double	   *cols;			/* [d * stride]: node by coordinate, so a
								 * leaf's distances vectorise */
	int64_t		stride;			/* n + 8: whole eights from any leaf stay
								 * within a column (padding 0) */
	int32_t    *pure;			/* [n]: per subtree, at its root's position,
								 * the group all its points share, or
								 * INT32_MIN */
	int64_t    *pos;			/* [n]: where each point stands in perm */
	int32_t    *gnode;			/* [n + 8]: the points' groups in perm's
								 * order (svc_kd_set_groups) */
} SvcKdTree;

SvcStatus	svc_kd_build(const SvcEnv *env, const double *pts, int64_t n, int32_t d,
						 SvcKdTree *t, SvcError *err);
void		svc_kd_free(const SvcEnv *env, SvcKdTree *t);

/*
 * Index of the nearest point to q (ties: lowest index); -1 only if the
 * tree is empty.  Where every squared distance overflows (q some 1e154 or
 * more away from every point), the nearest by svc_sqdist_far, and *dist2
 * is HUGE_VAL.
 */
int64_t		svc_kd_nearest(const SvcKdTree *t, const double *q, double *dist2);

/*
 * The k nearest points to q, nearest first (ties: lowest index), into
 * idx[] and d2[] of room k; returns how many were found (min(k, n)).
 */
int32_t		svc_kd_knearest(const SvcKdTree *t, const double *q, int32_t k,
							int64_t *idx, double *d2);

/*
 * Give the points groups (group[p] for point p, any value but INT32_MIN;
 * copied) for svc_kd_other_within.
 */
SvcStatus	svc_kd_set_groups(const SvcEnv *env, SvcKdTree *t, const int32_t *group,
							  SvcError *err);

/*
 * Whether a point whose group is not g lies within squared distance r2 of
 * q: true whenever one does by svc_sqdist or svc_sqdist_many (and perhaps
 * for one within their rounding beyond r2), false otherwise.  Subtrees of
 * group g alone are not searched, so in separated clusters the answer
 * for a row well inside one comes after a few nodes.  Needs
 * svc_kd_set_groups.
 */
bool		svc_kd_other_within(const SvcKdTree *t, int32_t g, const double *q, double r2);

/*
 * At least the squared distance from point p of the tree to its k-th
 * nearest point (itself included), by svc_sqdist_many, 1 <= k <= 16, for
 * finite points: the k-th smallest of sixteen distances to points of a
 * leaf near it, allowing for rounding (HUGE_VAL for another k, or fewer
 * points).  Needs svc_kd_set_groups.
 */
double		svc_kd_kth_bound(const SvcKdTree *t, int64_t p, int32_t k);

/*
 * The squared distance scaled by 2^-1200 (each coordinate times 2^-600,
 * exactly but for those tiny enough to underflow), for comparing points
 * whose svc_sqdist overflows: it is finite for any finite a and b, and
 * infinite coordinates of b count as +-DBL_MAX.  NaN if b has a NaN.
 */
double		svc_sqdist_far(const double *a, const double *b, int32_t d);

/*
 * The nearest of n points (row-major, d values each) to q by
 * svc_sqdist_far, ties to the lowest index: the fallback where every
 * svc_sqdist overflows.  -1 when n is 0 or q has a NaN.
 */
int64_t		svc_nearest_far(const double *pts, int64_t n, int32_t d, const double *q);

#endif							/* SVC_KDTREE_H */
