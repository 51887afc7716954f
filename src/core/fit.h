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
 * bsgd's "auto" width on rows its budget cannot tile.  The budget keeps a
 * few hundred support vectors, and where the rows fill their dimensions
 * (z-scored compact blobs in 8-24 columns) the automatic width leaves most
 * rows several kernel widths from every support vector: f has a hill per
 * support vector and the tree dozens of clusters (three 12-D blobs: 38-69).
 * The cover is the median over a stride of up to SVC_GAMMA_COVER_PROBE rows
 * of gamma times the squared distance to the nearest support vector, per
 * dimension (squared distances grow with it).  Three 8-24-D blob families
 * measured 0.49-0.69 at the automatic width; every set of the quality
 * benchmark above two columns 0.00-0.10 (digits 0.08, blobs_k40_d8 0.10,
 * emb128_k10 0.018); sets with no more rows than the budget 0 (every row
 * a support vector: wine, iris).  At SVC_GAMMA_COVER_GATE or more the fit
 * is done again at gamma x svc_gamma_cover_widen (below), at least
 * SVC_GAMMA_COVER_WIDEN (doc/design-notes.md has the other factors
 * measured).
 */
#define SVC_GAMMA_COVER_PROBE 1000
#define SVC_GAMMA_COVER_GATE 0.3
#define SVC_GAMMA_COVER_WIDEN 0.5

/*
 * The cover of model m's support vectors over n rows of m->dims values
 * (scaled as the fit scaled them) into *cover: the median over the probed
 * rows of m->gamma times the least squared distance (svc_sqdist's) to a
 * support vector, over m->dims; 0 with no rows or no support vectors.
 */
SvcStatus	svc_gamma_cover(const SvcEnv *env, const SvcModel *m, const double *rows,
							int64_t n, double *cover, SvcError *err);

/*
 * The widened gamma, as a share of the automatic one g:
 * max(g / 2, SVC_GAMMA_COVER_TARGET / median squared distance of the scaled
 * rows), at most g.  Up to 12 columns (g = 512 / (d x median)) the half is
 * the larger; from 16 columns (the floor 1/8, g = 32 / median) the target
 * is, 20/32 of g.  On z-scored tables of a few blobs among noise columns
 * of the same scale (the quality benchmark's tables group) the blobs merge
 * at about 16 / median whatever the width of the table (8-24 columns),
 * while the widest gamma that still over-splits falls towards it as the
 * noise columns grow (8-D about 34 / median, 12-D 30, 16-D 22, 24-D 21):
 * half of g is 16 / median from 16 columns, one cluster on some tables.
 * doc/design-notes.md has the measurements.
 */
#define SVC_GAMMA_COVER_TARGET 20.0
double		svc_gamma_cover_widen(int32_t d, SvcGammaRule rule);

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
