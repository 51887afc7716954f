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
 * Train a model from a checked state buffer (see state.h): scale the
 * kept rows, choose gamma, run the solver, label the equilibria.  The
 * model's arrays are allocated from env.
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

#endif							/* SVC_FIT_H */
