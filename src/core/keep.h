/*
 * keep.h - models that keep their rows: the exact warm start and its window
 *
 * With the option keep_rows (solvers smo and incremental) a model stores
 * every row of its fit in the model's scaled space, with its alpha, its
 * bound and an arrival counter (model.h, section 6 of the format).  A warm
 * start svc_train(features, options, init) of such a model rebuilds the
 * exact solver from them (incremental.h's svc_incr_load), and moves it to
 * the optimum of the window: the kept rows and the new ones, at most
 * "sample" of them, C = 1 / (nu N) for the N rows of the window.  Rows that
 * leave (oldest first, or by a seeded reservoir: option "window") leave by
 * exact decrements, kept rows whose bound changes are moved exactly, and
 * the new rows enter one at a time.  The result is the exact solution on
 * the window, the one smo gives on those rows.  See doc/incremental.md.
 */
#ifndef SVC_KEEP_H
#define SVC_KEEP_H

#include "svc_core.h"
#include "model.h"

/* Largest KKT violation of a stored solution the warm start continues;
 * beyond it the rows are solved again by increments. */
#define SVC_KEEP_LOAD_TOL 1e-8

/*
 * After a fit with keep_rows on n scaled rows (row-major): the model's
 * kept rows, every row with its alpha (the support vectors' in m, matched
 * to the rows in order), its bound svc_smo_c(nu, n) and counters 1..n.
 */
SvcStatus	svc_keep_from_fit(const SvcEnv *env, const double *rows, int64_t n,
							  SvcModel *m, SvcError *err);

/*
 * The warm start of a model with kept rows (solver.h's warm_fit for smo
 * and incremental): n new rows (scaled by init's scaling), opt init's
 * options.  Fills what solver.h asks and m's kept rows (the window).
 */
SvcStatus	svc_keep_warm_fit(const SvcEnv *env, const double *x, int64_t n, int32_t d,
							  const SvcOptions *opt, const SvcModel *init, SvcModel *m,
							  SvcError *err);

#endif							/* SVC_KEEP_H */
