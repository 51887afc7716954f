/*
 * model.h - the trained model in memory (its bytes: model_codec.h; its report: model_report.h)
 *
 * Every solver produces the same decision function shape,
 *     f(x) = sum_i alpha_i exp(-gamma_i ||x - s_i||^2) - offset,
 * gamma_i = gamma but where bandwidth_k widens a support vector's kernel,
 * on scaled input x' = (x - shift) .* mul: the hyperplane of the
 * large-margin one-class SVM has offset 1, and the hypersphere of SVDD
 * reduces to the same form with another offset.  So scoring and labelling
 * work on any solver through this one struct.
 */
#ifndef SVC_MODEL_H
#define SVC_MODEL_H

#include "svc_core.h"
#include "options.h"

#define SVC_MODEL_MAGIC "SVCM"
/*
 * Version 3 adds a width per support vector (bandwidth_k > 0); a model with
 * one width is still written as version 2, so builds that predate widths
 * read it, and refuse rather than misread one that has them.
 */
#define SVC_MODEL_FORMAT_VERSION 3
#define SVC_MODEL_FORMAT_ONE_WIDTH 2
/*
 * Version 4 adds the exact solver's report (objective, gap, cache counts)
 * and is written only for models of solver smo (and incremental, whose
 * id builds before it refuse), with or without widths;
 * bsgd models keep their version 2 or 3 bytes.
 */
#define SVC_MODEL_FORMAT_SOLVER_STATS 4
/*
 * Version 5 adds tagged sections (model_codec.c) and is written only for
 * a model that has one: extended options other than their defaults, and
 * the reports and certificates of later features.
 */
#define SVC_MODEL_FORMAT_SECTIONS 5

typedef enum SvcBoundary
{
	SVC_BOUNDARY_HYPERPLANE = 1,
	SVC_BOUNDARY_SPHERE = 2
} SvcBoundary;

/*
 * How one of the model's clusters relates to a cluster of the model it
 * was made from (label_lineage.h).
 */
typedef enum SvcLinkKind
{
	SVC_LINK_PARENT = 1,		/* the old cluster it shares most with */
	SVC_LINK_MERGED = 2,		/* an old cluster that merged into it */
	SVC_LINK_ENDED = 3			/* an old cluster that shares nothing */
} SvcLinkKind;

typedef struct SvcClusterLink
{
	int32_t		cluster;		/* 1..n_clusters; 0 for SVC_LINK_ENDED */
	int32_t		old_id;			/* the old cluster's id */
	int32_t		kind;			/* SvcLinkKind */
	int64_t		shared;			/* what they share (label_lineage.h) */
} SvcClusterLink;

typedef struct SvcModel
{
	int32_t		dims;
	SvcOptions	opt;			/* options as given (gamma 0 = "auto") */
	SvcSolver	solver;
	SvcBoundary boundary;
	double		gamma;			/* width in effect */
	double		epsilon;		/* B_eps half width in effect */
	double		offset;			/* f(x) = sum alpha K - offset */

	double	   *shift;			/* [dims]: scaled = (x - shift) * mul */
	double	   *mul;			/* [dims] */

	int32_t		n_sv;
	double	   *sv;				/* [n_sv * dims], row-major, scaled space */
	double	   *alpha;			/* [n_sv] */
	double	   *sv_gamma;		/* [n_sv]: each one's width (bandwidth_k > 0),
								 * in (0, gamma]; NULL: gamma for all */

	int32_t		n_eq;			/* labelled equilibria */
	double	   *eq;				/* [n_eq * dims], scaled space */
	int32_t    *eq_cluster;		/* [n_eq], 1..n_clusters */
	double	   *eq_f;			/* [n_eq], f at the equilibrium */
	int64_t    *eq_rows;		/* [n_eq], labelled rows that climb to it */

	int32_t		n_clusters;
	int64_t    *cluster_size;	/* [n_clusters]: training rows per cluster */

	/*
	 * The ids users see, for a model made from another (a warm start or a
	 * recut, label_lineage.h): cluster k is cluster_id[k - 1]; next_id is
	 * one past the highest id ever used; the links say where each cluster
	 * came from.  NULL, 0, 0, NULL for a model trained from scratch, whose
	 * ids are 1..n_clusters.  Stored in section 7 of format 5.
	 */
	int32_t    *cluster_id;
	int32_t		next_id;
	int32_t		n_links;
	SvcClusterLink *links;

	/*
	 * The saddle tree (tree labelling; none with the paper's): n_eq - 1
	 * edges joining equilibria edge_a[i], edge_b[i] through a pass at
	 * height edge_f[i] (in f), by decreasing height.  Its cut (label_cut.h)
	 * gives eq_cluster, n_clusters and cluster_size.
	 */
	int32_t		n_edges;
	int32_t    *edge_a;
	int32_t    *edge_b;
	double	   *edge_f;

	int64_t		rows_seen;		/* non-NULL rows the aggregate saw */
	int64_t		rows_used;		/* rows kept for training and labelling */
	int64_t		iterations;		/* SGD or SMO steps run */
	bool		converged;		/* stopped by tol, not by max_iter */
	/*
	 * bsgd's gamma "auto" widened (fit.c): gamma_widen the factor applied
	 * (0 when the automatic width stands), gamma_cover the rows' median
	 * gamma x squared distance to the nearest support vector per
	 * dimension at the automatic width that made it (section 9).
	 */
	double		gamma_widen;
	double		gamma_cover;

	/* The exact solver's report (solver smo; 0 for the others). */
	double		objective;		/* the dual's value at the solution */
	double		gap;			/* final KKT violation, in tol's scale */
	int64_t		cache_hits;		/* kernel columns found in the cache */
	int64_t		cache_misses;	/* ... and computed */

	/* aid's report (solver aid only; section 2 of format 5). */
	int32_t		aid_rounds;		/* aggregated solves */
	int64_t    *aid_aggregates; /* [aid_rounds]: clusters of each solve */
	double		aid_final_gap;	/* relative gap of the bounds at the end */
	double		aid_share;		/* rows in clusters of 2+ rows at the end */

	/*
	 * Labelled rows (the three-argument aggregate, supervision.h; all 0
	 * without them).  Stored in section 3 of format 5.
	 */
	int64_t		lab_normal;		/* labelled normal rows trained on */
	int64_t		lab_anomaly;	/* labelled anomalies trained on */
	int64_t		lab_seen_normal;	/* ... seen by the aggregate */
	int64_t		lab_seen_anomaly;
	int64_t		lab_wrong_normal;	/* trained-on normals with f < 0 */
	int64_t		lab_wrong_anomaly;	/* trained-on anomalies with f >= 0 */
	double		lab_weight_min; /* range of C_i / C over the training rows */
	double		lab_weight_max;

	/*
	 * The hyperplane's labelled normals at a width of their own
	 * (supervision.h): the last lab_wide support vectors have the kernel
	 * width lab_gamma (< gamma); 0 and 0 in models whose labelled rows
	 * all spread at gamma, as before 0.5.0.  Stored in section 8 of
	 * format 5.
	 */
	int64_t		lab_wide;
	double		lab_gamma;

	/*
	 * The warm start that made the model (svc_train(features, options,
	 * init), fit.h; all 0 for a model trained from scratch).  Stored in
	 * section 5 of format 5.
	 */
	int64_t		warm_starts;	/* warm starts in the model's history */
	int64_t		warm_rows_before;	/* the init model's rows_seen */
	int64_t		warm_steps_before;	/* the init model's SGD steps */
	int64_t		warm_rows_new;	/* new rows trained on (the sample) */
	int64_t		warm_rows_outside;	/* ... outside the init model's range */

	/*
	 * The kept rows (option keep_rows, keep.h; keep_n 0 without it): every
	 * row of the fit's window in the model's scaled space, by increasing
	 * arrival counter, with its alpha and bound.  Stored in section 6 of
	 * format 5.
	 */
	int64_t		keep_n;			/* rows kept (= rows_used) */
	double	   *keep_x;			/* [keep_n * dims], scaled space */
	double	   *keep_alpha;		/* [keep_n], in [0, keep_c] */
	double	   *keep_c;			/* [keep_n], each row's bound C */
	int64_t    *keep_counter;	/* [keep_n], arrival numbers, increasing */
	int64_t		keep_next;		/* the next row's counter (rows passed + 1) */
	int64_t		keep_added;		/* rows that entered by the last warm start */
	int64_t		keep_removed;	/* kept rows that left by it */
} SvcModel;

/* Allocate the kept rows' arrays for n rows (keep_n = n; values unset). */
SvcStatus	svc_model_alloc_kept(const SvcEnv *env, SvcModel *m, int64_t n, SvcError *err);

/* Allocate the arrays of a model of the given sizes (zeroed). */
SvcStatus	svc_model_alloc(const SvcEnv *env, SvcModel *m, int32_t dims,
							int32_t n_sv, int32_t n_eq, int32_t n_clusters,
							int32_t n_edges, SvcError *err);
void		svc_model_free(const SvcEnv *env, SvcModel *m);

/* Free only what labelling fills (equilibria, clusters, tree); NULLs them. */
void		svc_model_free_labelling(const SvcEnv *env, SvcModel *m);

/* SVC_ERR_CORRUPT "invalid svclust model" with what as the detail. */
SvcStatus	svc_model_corrupt(SvcError *err, const char *what);

/* Scale one input row into out (dims values). */
void		svc_model_scale_row(const SvcModel *m, const double *x, double *out);

/*
 * A real[] row (dims floats) scaled into out as svc_model_scale_row scales
 * the same values in double (each float is exact in double: the same
 * bits), in one pass; false where an element is infinite or NaN (out then
 * holds no row).
 */
bool		svc_model_scale_floats(const SvcModel *m, const float *v, double *out);

/* f(x) for a row already scaled. */
double		svc_model_decision_scaled(const SvcModel *m, const double *xs);

#endif							/* SVC_MODEL_H */
