/*
 * fit.h - from the aggregate's state to a trained, labelled model
 */
#ifndef SVC_FIT_H
#define SVC_FIT_H

#include "svc_core.h"
#include "model.h"

/* Most rows that run trajectories to label the equilibria. */
#define SVC_LABEL_ROWS 3000

/*
 * The "auto" gamma: SVC_GAMMA_AUTO_FACTOR / median squared distance
 * between pairs of rows, estimated on at most a few thousand pairs drawn
 * with rng, times svc_gamma_dims_factor(d, rule).  When the median is
 * zero (mostly duplicates) the mean of the non-zero distances stands in;
 * 1/d when every row is equal.
 */
double		svc_gamma_auto(const double *x, int64_t n, int32_t d, SvcGammaRule rule,
						   SvcRng *rng);

/* The dimension's factor of the "auto" gamma: 1 up to two dimensions,
 * then 2/d, floored at 1/8 by SVC_GAMMA_RULE_AUTO (options.h). */
double		svc_gamma_dims_factor(int32_t d, SvcGammaRule rule);

/*
 * The exact solvers' "auto" gamma: svc_gamma_auto / svc_sphere_width_ratio.
 * At the budgeted width the sphere keeps 60-100% of the rows as free
 * support vectors, all with f = 0 within the tolerance, and the
 * incremental solver's margin set holds thousands of rows.  A quarter of
 * it keeps 7-35% of the rows as support vectors on the nine sets and
 * still splits them into basins fine enough for the saddle tree (label.c).
 */
double		svc_gamma_sphere(const double *x, int64_t n, int32_t d, const SvcOptions *opt,
							 SvcRng *rng);

/*
 * Train a model from a checked state buffer (see state.h): scale the
 * kept rows, choose gamma, run the solver, label the equilibria.  The
 * model's arrays are allocated from env.  A state with an init model
 * (state.h) is a warm start, as svc_fit_rows_warm.
 */
SvcStatus	svc_fit_state(const SvcEnv *env, const uint8_t *state, SvcModel *m,
						  SvcError *err);

/*
 * The same from rows in memory (row-major, n * dims, unscaled), for the
 * unit tests and the benchmark driver.
 */
SvcStatus	svc_fit_rows(const SvcEnv *env, const double *rows, int64_t n,
						 int32_t dims, const SvcOptions *opt, SvcModel *m,
						 SvcError *err);

/*
 * The same with a label per row: 1 (normal), -1 (anomaly) or 0 (unknown);
 * label may be NULL (no labelled row).  See supervision.h.
 */
SvcStatus	svc_fit_rows_labelled(const SvcEnv *env, const double *rows,
								  const int8_t *label, int64_t n, int32_t dims,
								  const SvcOptions *opt, SvcModel *m, SvcError *err);

/*
 * A warm start: continue init (a decoded model) on n new rows (unscaled).
 * opt are the init's options with the cut options of the call
 * (svc_options_warm_check refuses any other difference).  The solver
 * continues from init (solver.h's warm_fit; a solver without one is
 * refused with a hint); the scaling and gamma stay init's; the widths,
 * threshold and labelling are made again on the new rows and init's
 * support vectors, which stand for the rows init was trained on.
 * rows_seen adds up; the warm start's report (model.h) counts the new
 * rows outside the box of init's support vectors, a sign of drift.
 */
SvcStatus	svc_fit_rows_warm(const SvcEnv *env, const double *rows, int64_t n,
							  int32_t dims, const SvcOptions *opt, const SvcModel *init,
							  SvcModel *m, SvcError *err);

/*
 * Whether init can be continued with opt on rows of dims columns: a model
 * of a solver that has a warm start (else an error with a hint), of those
 * columns, with the options of opt but for the cut.
 */
SvcStatus	svc_fit_warm_check(const SvcModel *init, int32_t dims, const SvcOptions *opt,
							   SvcError *err);

#endif							/* SVC_FIT_H */
