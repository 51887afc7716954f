/*
 * supervision.h - per-row bounds from a few labelled rows (semi-supervised SVC)
 *
 * A row labelled normal should end inside the domain and a row labelled
 * anomaly outside it.  The rows near labelled ones get a bound C_i of their
 * own instead of the common C, from an impact score computed over the
 * labelled rows l in the kernel neighbourhood k(x_i, x_l) >= h:
 *
 *   s_i = mean k to the labelled anomalies - mean k to the labelled normals
 *
 * (a mean over those inside the neighbourhood; 0 when there are none), set
 * to 0 where |s_i| < h.  Then, with N training rows:
 *
 *   u = (|s_i| - h) / (1 - h),  E = 1 near normals (s < 0), 1/N' near anomalies
 *   geometric (default):  C_i = C^(1 - u) E^u
 *   linear:               C_i = (1 - u) C + u E
 *   s_i = 0:              C_i = C
 *
 * C_i is C at the edge of a neighbourhood (|s| = h) and moves to 1 at a
 * labelled normal alone in its neighbourhood (s = -1: a bound of 1 never
 * binds, as the alphas sum to 1, so the row cannot be an error) or to 1/N
 * at a row alone with a labelled anomaly (s = 1: cheap to leave outside),
 * N' being the rows that are not labelled anomalies, so that their bounds
 * sum to 1 at the least.  The labelled anomaly itself gets a signed bound:
 * the weight -anomaly_bound, meaning alpha_i in [-anomaly_bound C, 0] for
 * the exact solver (SVDD with negative examples, smo.c), where a negative
 * alpha pushes the domain's boundary away from the row, and a hinge on the
 * other side, weighed by anomaly_bound, for the budgeted one.  The linear
 * form is the one of the method's authors' code; since 1 is hundreds of
 * times C, it lifts a row a tenth of the way into a labelled normal's
 * neighbourhood to tens of times C, which keeps the anomalies near labelled
 * normals inside (doc/benchmark.md measures both).  The geometric form
 * moves by the same factor per step of u.  The alphas sum to 1, so the
 * bounds must allow it: sum C_i >= 1.
 *
 * Without neighbours (the exact solver's choice, fit.c) only the labelled
 * rows get bounds of their own: 1 for a normal, the signed one for an
 * anomaly.  The negative alpha already pushes the boundary away from the
 * anomaly in the kernel's own neighbourhood; the impact score's lowered
 * bounds around it then push out normal rows too, and the raised bounds
 * around labelled normals keep the anomalies near them inside (measured
 * and not adopted: doc/design-notes.md).  The budgeted solver visits each
 * row a few times only, and the neighbours' bounds are what moves its
 * boundary; it keeps them.
 *
 * The weights returned are C_i / C: the exact solver bounds row i by
 * weight_i C, the budgeted one weighs row i's hinge step by it; a negative
 * weight marks a labelled anomaly (above).
 */
#ifndef SVC_SUPERVISION_H
#define SVC_SUPERVISION_H

#include "svc_core.h"
#include "options.h"
#include "model.h"

/*
 * x: n scaled rows of d values; label[i] is 1 (normal), -1 (anomaly) or 0
 * (unknown); gamma the kernel width; c the common bound C (> 0); h the
 * neighbourhood, in (0, 1); anomaly_bound > 0 a labelled anomaly's bound
 * in units of C; neighbours: whether the unlabelled rows' bounds move
 * (above).  Fills weight[n].  Errors:
 * SVC_ERR_INVALID_PARAMETER when sum C_i < 1 (no feasible model),
 * SVC_ERR_INTERRUPTED.
 */
SvcStatus	svc_supervision_weights(const SvcEnv *env, const double *x,
									const int8_t *label, int64_t n, int32_t d,
									double gamma, double c, double h,
									SvcLabelCurve curve, double anomaly_bound,
									bool neighbours, double *weight,
									SvcError *err);

/*
 * Labelled rows that generalise: after the solver, each labelled row
 * becomes a support vector of f as well, so that it moves f at its
 * unlabelled neighbours, within the kernel's reach, and not only at
 * itself.  A labelled normal gets the weight SVC_SPREAD_LIFT q0, q0 the
 * threshold (svc_threshold_set) of the solver's f: it lifts f around it by
 * about the threshold's height; a labelled anomaly a negative weight that
 * takes its kernel sum down to SVC_SPREAD_DEPTH times the threshold (with
 * the hyperplane, whose kernel is narrower and reaches fewer neighbours,
 * twice that weight: the deeper push measured better there, the other
 * worse on the sphere).  The
 * threshold is then taken again, and the labelled anomalies that are
 * still above the depth (a normal's lift nearby, a threshold that moved
 * down) are pushed again, for at most SVC_SPREAD_ROUNDS rounds.  Sets
 * m->offset; with no labelled row, only the threshold.
 *
 * With the hyperplane the labelled normals' support vectors take the
 * kernel width gamma / SVC_SPREAD_LIFT_WIDTH (m->lab_gamma, stored in the
 * model): at the solver's own width a lift moved f at a handful of rows.
 * They lift by SVC_SPREAD_LIFT_HYPERPLANE times a sphere's weight: a
 * wider kernel sums more rows, and the budgeted solver's f is smoother.
 * Where the solver's kernels sit apart (the median over its support
 * vectors of gamma times the squared distance to the nearest other one
 * at SVC_SPREAD_ISLAND or more: each a hill of its own) and so f is rugged
 * near the threshold, the width divides by k more and the weight
 * multiplies by k^2: k = rho / SVC_SPREAD_RUGGED within
 * [1, SVC_SPREAD_LIFT_SCALE_MAX], rho the quantile of the solver's f at
 * SVC_SPREAD_RUGGED_SHARE of the rows over the threshold (k = 1 with an
 * outlier_fraction of 0 or of that share or more).  Measured on planted
 * anomalies (doc/benchmark.md, doc/design-notes.md): on z-scored 12-D
 * blobs at the automatic gamma (gap 7, rho 95-150) a lift at gamma / 8
 * reached no neighbour (the kernel there about 0.01) and moved f at the
 * labelled row alone; on 2-D blobs (gap 0.2-0.6, rho 2-5), on 4-D blobs
 * (gap 1.6, rho 15-38), on the 12-D blobs unscaled (gap 2.7, rho 8) or at
 * gamma 1 (gap 4, rho 10-16) k = 1 measured best: wider lifts there
 * replace a better f and lowered F1 by up to 0.2.
 * The anomalies keep gamma: in 12 dimensions a wider negative term
 * outreaches the solver's terms, whose sums near the threshold are tiny
 * there, and f went negative on up to a quarter of the rows.
 * doc/benchmark.md measures it on planted anomalies of five shapes.
 *
 * A model whose automatic gamma was widened (fit.c, the cover: bsgd
 * above two columns where the support vectors left the rows uncovered;
 * the labelled fit widens as the unlabelled fit of the same rows does)
 * has a smoother f, and the lift is its own: where the kernels sat apart
 * at the automatic width (the island level above over the widening
 * factor at SVC_SPREAD_ISLAND or more: 8 to 16 columns of z-scored blobs
 * among noise columns, 5.7-7.8) k is SVC_SPREAD_WIDENED_K; where they did
 * not (4 to 6 such columns: 1.7-4.3) the labelled normals take the
 * solver's own width and SVC_SPREAD_LIFT_HYPERPLANE q0, so that they end
 * inside without moving f at their neighbours.  Measured on test/bench/
 * labelled.py's scatter12 and the same shape in 4, 5, 6, 8 and 16
 * columns (doc/design-notes.md): at 4-5 columns a lift at gamma / 8 or
 * wider lowered the outlier F1 (4-D -0.12 to -0.34, 5-D -0.04 to -0.09)
 * and at 6 it gained nothing (+0.002 to -0.035), while the solver's own
 * width kept within 0.01 of 0; at 8-16 columns k 1.5 gained +0.023 to
 * +0.034 (k 1 +0.017 to +0.031, k 2 about k 1.5 with lower minima).
 */
#define SVC_SPREAD_LIFT 1.0
#define SVC_SPREAD_DEPTH 0.5
#define SVC_SPREAD_ROUNDS 8
#define SVC_SPREAD_LIFT_WIDTH 8.0
#define SVC_SPREAD_LIFT_HYPERPLANE 2.0
#define SVC_SPREAD_RUGGED_SHARE 0.1
#define SVC_SPREAD_RUGGED 16.0
#define SVC_SPREAD_LIFT_SCALE_MAX 8.0
#define SVC_SPREAD_ISLAND 4.5
#define SVC_SPREAD_ISLAND_PROBE 1024
#define SVC_SPREAD_WIDENED_K 1.5

/*
 * k for the hyperplane's lift (above) from rho, the solver's f at
 * SVC_SPREAD_RUGGED_SHARE over its threshold, where its kernels sit
 * apart (1 where they do not): its width is
 * gamma / (SVC_SPREAD_LIFT_WIDTH k), its weight SVC_SPREAD_LIFT_HYPERPLANE
 * k^2 times the threshold.  1 up to rho = SVC_SPREAD_RUGGED (and for a
 * rho that is not a number).
 */
double		svc_supervision_lift_scale(double rho);

/*
 * Rows 0..kept-1 (unlabelled) and kept..n-1 (labelled, label[i] != 0)
 * each sorted lexicographically (state.h) into one sorted run, labels
 * moved with their rows; ties keep the unlabelled row first.  The solver
 * then sees the rows in the order an unlabelled fit of the same rows
 * sees them: the same gamma draw and SGD order, so the labels' effect
 * is the spread's, not a different model's.  rows has room for 2n rows
 * (the second half is scratch).  Errors: SVC_ERR_NOMEM.
 */
SvcStatus	svc_supervision_merge_rows(const SvcEnv *env, double *rows, int8_t *label,
									   int64_t kept, int64_t n, int32_t d, SvcError *err);

SvcStatus	svc_supervision_spread(const SvcEnv *env, SvcModel *m, const double *rows,
								   const int8_t *label, int64_t n, SvcError *err);

#endif							/* SVC_SUPERVISION_H */
