/* label_saddle.h - the saddle tree: equilibria joined through their highest passes */
#ifndef SVC_LABEL_SADDLE_H
#define SVC_LABEL_SADDLE_H

#include "svc_core.h"
#include "model.h"
#include "label_trajectory.h"

/* A candidate edge of the saddle tree. */
typedef struct SvcEdge
{
	int32_t		a;				/* a < b, equilibrium indexes */
	int32_t		b;
	double		d2;				/* squared distance between them */
	double		saddle;			/* lowest lambda on the path, >= 0 */
} SvcEdge;

/*
 * The saddle tree of the equilibria eqs: the maximum spanning tree of the
 * candidate and data edges by saddle height.  roweq[r] and rowlam[r] are
 * the equilibrium and the kernel sum of each of the n_rows rows xs.
 * With cap (not NULL), no edge stands higher than cap[] of either end.
 * Writes its M - 1 edges, by decreasing saddle, into tree[] (allocated by
 * the caller); svc_cut_apply cuts it.
 */
SvcStatus	svc_saddle_tree(const SvcEnv *env, const SvcModel *m,
							const SvcEqList *eqs, const double *xs,
							int64_t n_rows, const int32_t *roweq,
							const double *rowlam, const double *cap,
							SvcEdge *tree, SvcError *err);

#endif							/* SVC_LABEL_SADDLE_H */
