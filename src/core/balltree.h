/*
 * balltree.h - exact neighbour searches that keep working in many dimensions
 *
 * A k-d tree's cells are bounded on the few coordinates it split on: in
 * 128 or 768 dimensions a query's ball around it meets nearly every cell
 * and a search reads every row.  Here each subtree has a ball (the mean of
 * its points and the largest distance to it), and subtrees are split
 * across the line between two far points, so that in clustered data a
 * subtree soon holds one cluster and a far cluster's subtrees are skipped
 * whole by the triangle inequality.  The answers are those of the k-d
 * tree's searches (kdtree.h): the same points, the same distances.
 */
#ifndef SVC_BALLTREE_H
#define SVC_BALLTREE_H

#include "svc_core.h"

typedef struct SvcBallTree
{
	int64_t		n;
	int32_t		d;
	int32_t		n_node;
	int64_t    *perm;			/* [n] point order: a subtree is a range */
	int64_t    *pos;			/* [n] where each point stands in perm */
	double	   *pts;			/* [n * d] the points in perm's order */
	int32_t    *grp;			/* [n] their groups in perm's order */
	int64_t    *lo;				/* [n_node] each node's range of perm */
	int64_t    *hi;
	int32_t    *left;			/* [n_node] children (-1: a leaf) */
	int32_t    *right;
	int32_t    *pure;			/* [n_node] the group all its points share,
								 * or INT32_MIN */
	double	   *centre;			/* [n_node * d] */
	double	   *radius;			/* [n_node] at least every point's distance
								 * to the centre */
	double	   *kwork;			/* [n] svc_ball_kth_bound's distances */
} SvcBallTree;

/*
 * Build the tree of n points of d values (finite; copied) with a group
 * per point (any value but INT32_MIN).
 */
SvcStatus	svc_ball_build(const SvcEnv *env, const double *pts, int64_t n, int32_t d,
						   const int32_t *group, SvcBallTree *t, SvcError *err);
void		svc_ball_free(const SvcEnv *env, SvcBallTree *t);

/* svc_kd_other_within's answer (kdtree.h). */
bool		svc_ball_other_within(const SvcBallTree *t, int32_t g, const double *q, double r2);

/*
 * At least the squared distance from point p to its k-th nearest point
 * (itself included) by svc_sqdist_many, 1 <= k <= n (else HUGE_VAL): the
 * k-th smallest distance to the points of the smallest subtree of p with
 * k of them.  Not thread-safe: it uses the tree's workspace.
 */
double		svc_ball_kth_bound(const SvcBallTree *t, int64_t p, int32_t k);

/* svc_kd_knearest's answer: the same points and distances, in its order. */
int32_t		svc_ball_knearest(const SvcBallTree *t, const double *q, int32_t k,
							  int64_t *idx, double *d2);

#endif							/* SVC_BALLTREE_H */
