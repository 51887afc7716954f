/* solver.h - the seam between the fit and the solvers that train f */
#ifndef SVC_SOLVER_H
#define SVC_SOLVER_H

#include "svc_core.h"
#include "options.h"
#include "model.h"

/*
 * A solver trains the decision function
 *     f(x) = sum_i alpha_i exp(-gamma_i ||x - s_i||^2) - offset
 * on n scaled rows x (row-major, n * d) with width gamma.  It must fill:
 *   m->n_sv, m->sv [n_sv * d] and m->alpha [n_sv], allocated from env
 *     (support vectors in the scaled space; n_sv >= 0);
 *   m->offset (finite: 1 for the large-margin hyperplane, the radius term
 *     for a hypersphere);
 *   m->gamma = gamma, m->iterations and m->converged;
 *   and, if it has them, its report (objective, gap, cache_hits,
 *   cache_misses; smo does).
 * It must leave every other field alone: the fit sets solver and boundary
 * from the table, the scaling before, and the widths (bandwidth_k), the
 * quantile offset and the labelling after it.  The quantile offset
 * (outlier_fraction) replaces the solver's offset whenever
 * outlier_fraction > 0 or widths change f.  On failure it frees what it
 * allocated and leaves those fields as they were.
 * Labelling, prediction, recut and the report use only f, its fixed point
 * (kernel.h) and the stored tree, so they work with any solver.
 *
 * A new solver is a new file with its fit function and one entry in the
 * table of solver.c.
 */
typedef struct SvcSolverOps
{
	SvcSolver	id;
	const char *name;			/* as svc_model_info reports it */
	SvcBoundary boundary;		/* the shape its f describes */

	/*
	 * Whether it takes per-row weights (labelled rows, supervision.h):
	 * weight is then NULL (all 1) or n multipliers of each row's bound C,
	 * in [0, 1 / C], or negative for a labelled anomaly.  A solver without them is never given weights: the
	 * fit refuses labelled rows for it.
	 */
	bool		takes_weights;
	SvcStatus	(*fit) (const SvcEnv *env, const double *x, int64_t n, int32_t d,
						const SvcOptions *opt, double gamma, const double *weight,
						SvcModel *m, SvcError *err);

	/*
	 * A warm start (fit.h): continue from init, a model of this solver,
	 * on n new rows scaled by init's scaling, with init's gamma and
	 * opt = init's options (cut options aside).  Fills m as fit does.
	 * NULL: the solver cannot be warm-started, and the fit refuses.  The
	 * exact solvers (smo, incremental) continue only a model with kept
	 * rows (keep.h); the fit refuses the others.
	 */
	SvcStatus	(*warm_fit) (const SvcEnv *env, const double *x, int64_t n, int32_t d,
							 const SvcOptions *opt, const SvcModel *init, SvcModel *m,
							 SvcError *err);
} SvcSolverOps;

/* The solver of options that name none (options.c's default). */
#define SVC_SOLVER_DEFAULT SVC_SOLVER_BSGD

/* The solver of this id, or NULL when this build has none. */
const SvcSolverOps *svc_solver_find(SvcSolver id);

/* The name of a solver id ("bsgd", "smo", "aid", "incremental"),
 * "unknown" for others. */
const char *svc_solver_name(SvcSolver id);

#endif							/* SVC_SOLVER_H */
