/*
 * rowtree.h - exact nearest rows by a k-d tree or, from
 * SVC_ROWTREE_BALL_DIMS dimensions on, a ball tree
 *
 * A k-d tree's cells stop pruning in many dimensions, where a ball
 * tree's still do; both give the same points and distances (those of
 * svc_sqdist_many), so the choice changes the time, never an answer.
 */
#ifndef SVC_ROWTREE_H
#define SVC_ROWTREE_H

#include "balltree.h"
#include "kdtree.h"

#define SVC_ROWTREE_BALL_DIMS 16

typedef struct SvcRowTree
{
	bool		ball;
	SvcKdTree	kd;
	SvcBallTree bt;
	int32_t    *one_group;		/* a ball tree built without groups: all 0 */
} SvcRowTree;

/*
 * Build the tree of n rows of d values (finite; copied), with a group per
 * row (any value but INT32_MIN) for svc_rowtree_other_within, or NULL
 * for no groups.  *t must start zeroed; svc_rowtree_free it on any result.
 */
static inline SvcStatus
svc_rowtree_build(const SvcEnv *env, const double *rows, int64_t n, int32_t d,
				  const int32_t *group, SvcRowTree *t, SvcError *err)
{
	SvcStatus	st;

	t->ball = d >= SVC_ROWTREE_BALL_DIMS;
	if (t->ball)
	{
		if (group == NULL)
		{
			t->one_group = svc_alloc0(env, sizeof(int32_t) * (size_t) n, err);
			if (!t->one_group)
				return SVC_ERR_NOMEM;
			group = t->one_group;
		}
		return svc_ball_build(env, rows, n, d, group, &t->bt, err);
	}
	st = svc_kd_build(env, rows, n, d, &t->kd, err);
	if (st == SVC_OK && group != NULL)
		st = svc_kd_set_groups(env, &t->kd, group, err);
	return st;
}

static inline void
svc_rowtree_free(const SvcEnv *env, SvcRowTree *t)
{
	svc_kd_free(env, &t->kd);
	svc_ball_free(env, &t->bt);
	svc_free(env, t->one_group);
	t->one_group = NULL;
}

/* svc_kd_knearest's answer (kdtree.h) */
static inline int32_t
svc_rowtree_knearest(const SvcRowTree *t, const double *q, int32_t k, int64_t *idx, double *d2)
{
	return t->ball ? svc_ball_knearest(&t->bt, q, k, idx, d2) :
		svc_kd_knearest(&t->kd, q, k, idx, d2);
}

/* svc_kd_kth_bound's answer (needs groups) */
static inline double
svc_rowtree_kth_bound(const SvcRowTree *t, int64_t p, int32_t k)
{
	return t->ball ? svc_ball_kth_bound(&t->bt, p, k) : svc_kd_kth_bound(&t->kd, p, k);
}

/* svc_kd_other_within's answer (needs groups) */
static inline bool
svc_rowtree_other_within(const SvcRowTree *t, int32_t g, const double *q, double r2)
{
	return t->ball ? svc_ball_other_within(&t->bt, g, q, r2) :
		svc_kd_other_within(&t->kd, g, q, r2);
}

#endif							/* SVC_ROWTREE_H */
