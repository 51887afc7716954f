/*
 * unionfind.h - a union-find forest over int32 indexes
 *
 * parent[i] == i marks a root.  Joining keeps the lower index as the root,
 * so the roots (and everything numbered from them) depend only on the
 * order of the unions, never on set sizes.
 */
#ifndef SVC_UNIONFIND_H
#define SVC_UNIONFIND_H

#include "svc_core.h"

static inline void
svc_uf_init(int32_t *parent, int32_t n)
{
	for (int32_t i = 0; i < n; i++)
		parent[i] = i;
}

/* Root of i's set (with path halving). */
static inline int32_t
svc_uf_find(int32_t *parent, int32_t i)
{
	while (parent[i] != i)
	{
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

/* Join the sets of roots ra != rb; returns the new root, the lower. */
static inline int32_t
svc_uf_join(int32_t *parent, int32_t ra, int32_t rb)
{
	if (rb < ra)
	{
		int32_t		t = ra;

		ra = rb;
		rb = t;
	}
	parent[rb] = ra;
	return ra;
}

#endif							/* SVC_UNIONFIND_H */
