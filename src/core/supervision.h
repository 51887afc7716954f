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
 *   u = (|s_i| - h) / (1 - h),  E = 1 near normals (s < 0), 1/N near anomalies
 *   geometric (default):  C_i = C^(1 - u) E^u
 *   linear:               C_i = (1 - u) C + u E
 *   s_i = 0:              C_i = C
 *
 * C_i is C at the edge of a neighbourhood (|s| = h) and moves to 1 at a
 * labelled normal alone in its neighbourhood (s = -1: a bound of 1 never
 * binds, as the alphas sum to 1, so the row cannot be an error) or to 1/N
 * at a lone labelled anomaly (s = 1: cheap to leave outside).  The linear
 * form is the one of the method's authors' code; since 1 is hundreds of
 * times C, it lifts a row a tenth of the way into a labelled normal's
 * neighbourhood to tens of times C, which keeps the anomalies near labelled
 * normals inside (doc/benchmark.md measures both).  The geometric form
 * moves by the same factor per step of u.  The alphas sum to 1, so the
 * bounds must allow it: sum C_i >= 1.
 *
 * The weights returned are C_i / C: the exact solver bounds row i by
 * weight_i C, the budgeted one weighs row i's hinge step by it.
 */
#ifndef SVC_SUPERVISION_H
#define SVC_SUPERVISION_H

#include "svc_core.h"
#include "options.h"

/*
 * x: n scaled rows of d values; label[i] is 1 (normal), -1 (anomaly) or 0
 * (unknown); gamma the kernel width; c the common bound C (> 0); h the
 * neighbourhood, in (0, 1).  Fills weight[n].  Errors:
 * SVC_ERR_INVALID_PARAMETER when sum C_i < 1 (no feasible model),
 * SVC_ERR_INTERRUPTED.
 */
SvcStatus	svc_supervision_weights(const SvcEnv *env, const double *x,
									const int8_t *label, int64_t n, int32_t d,
									double gamma, double c, double h,
									SvcLabelCurve curve, double *weight,
									SvcError *err);

#endif							/* SVC_SUPERVISION_H */
