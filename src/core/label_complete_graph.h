/* label_complete_graph.h - Ben-Hur's labelling: rows linked when the segment between them stays in f >= 0 */
#ifndef SVC_LABEL_COMPLETE_GRAPH_H
#define SVC_LABEL_COMPLETE_GRAPH_H

#include "svc_core.h"
#include "model.h"

/*
 * Most training rows the complete graph labels.  The pair scan costs up to
 * N^2 / 2 * segment_points kernel sums (most pairs across a gap fail
 * within a few); past this many rows training refuses (a hint names
 * "sample" and "labeling": "tree").  It is at most SVC_LABEL_ROWS (fit.h),
 * so the graph always labels every kept row.
 */
#define SVC_GRAPH_MAX_ROWS 3000

/* SVC_ERR_LIMIT, with a hint, when n rows are too many for the graph. */
SvcStatus	svc_graph_check_rows(int64_t n, SvcError *err);

/*
 * Label n scaled rows xs (row-major) by the complete graph of the model's
 * f, with rowlam[i] the kernel sum f + offset at row i.  A row is a node
 * when f >= 0 there; two nodes are linked when the m points
 * x_i + t (x_j - x_i), t = k / (m + 1), k = 1..m, all have f >= 0, with
 * m = segment_points, or with "auto" (0) as many as keep them a quarter of
 * a kernel width 1 / sqrt(2 gamma) apart, 20 to 400.  label[i] receives the lowest row of i's connected component;
 * a row outside the domain takes the label of its nearest node (ties to
 * the lowest row).  A component with fewer rows (its nodes and the rows
 * that take its label) than the model's minimum cluster size
 * (svc_cut_min_rows) gives them to the nearest node of a larger one; with
 * none that large, the largest stays.  With no node at all, every row is
 * labelled 0: one cluster.  *n_nodes, unless NULL, receives the number of
 * nodes.
 */
SvcStatus	svc_graph_label_rows(const SvcEnv *env, const SvcModel *m,
								 const double *xs, int64_t n, const double *rowlam,
								 int32_t *label, int64_t *n_nodes, SvcError *err);

/*
 * From row labels to the M equilibria: part[e] (an equilibrium index, as
 * svc_cut_number takes) names the label held by most of the rows whose
 * trajectory reached e (roweq[i]; ties to the lowest label), so two
 * equilibria share a part when their majorities share a label.  Every
 * equilibrium must be reached by at least one row.
 */
SvcStatus	svc_graph_eq_parts(const SvcEnv *env, const int32_t *label,
							   const int32_t *roweq, int64_t n, int32_t M,
							   int32_t *part, SvcError *err);

#endif							/* SVC_LABEL_COMPLETE_GRAPH_H */
