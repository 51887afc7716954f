/* label_trajectory.h - a row's climb to its equilibrium, and prediction by it */
#ifndef SVC_LABEL_TRAJECTORY_H
#define SVC_LABEL_TRAJECTORY_H

#include "svc_core.h"
#include "model.h"

/* Workspace for trajectories: sized for a model, reused across rows. */
typedef struct SvcLabelWork
{
	double	   *x;				/* [dims] current point */
	double	   *next;			/* [dims] */
	double	   *kbuf;			/* [n_sv] */
	double	   *cols;			/* [dims * n_sv] the support vectors by
								 * column (one width only), else NULL */
	/*
	 * A first step taken beforehand (svc_kernel_fixed_point_cols2, two
	 * rows at a time): the next svc_label_step at a point equal to pre_x
	 * returns it instead of summing again, then forgets it.  NULL: none.
	 */
	const double *pre_x;
	const double *pre_next;		/* [dims] */
	double		pre_lam;
	bool		pre_ok;
} SvcLabelWork;

/* Tolerances of a trajectory, all derived from sigma = 1/sqrt(2 gamma). */
typedef struct SvcTrajTol
{
	double		stop;			/* converged when a step is at most this */
	double		merge;			/* snap to an equilibrium this close */
} SvcTrajTol;

/* Where one trajectory ended. */
typedef struct SvcTrajEnd
{
	int32_t		near;			/* nearest equilibrium to the end, -1 if none */
	bool		snapped;		/* the end is within merge tolerance of it */
	double		lambda0;		/* kernel sum at the start, f + offset */
} SvcTrajEnd;

/* The equilibria found so far, growing as training runs rows. */
typedef struct SvcEqList
{
	int32_t		n;
	int32_t		dims;
	int64_t		cap;
	double	   *x;				/* [cap * dims] */
	double	   *lambda;			/* [cap] kernel sum at the equilibrium */
} SvcEqList;

SvcStatus	svc_label_work_init(const SvcEnv *env, const SvcModel *m,
								SvcLabelWork *w, SvcError *err);
void		svc_label_work_free(const SvcEnv *env, SvcLabelWork *w);

/* svc_kernel_fixed_point on m's support vectors, from w->x into w->next. */
double		svc_label_step(const SvcModel *m, SvcLabelWork *w, bool *ok);

/* The tolerances for a model's width. */
void		svc_traj_tol(const SvcModel *m, SvcTrajTol *tt);

/* Units of work (trajectories, saddle heights) between interrupt checks. */
int64_t		svc_label_units_per_check(const SvcModel *m);

/*
 * Run the trajectory of x0 against the equilibria eq[n_eq] and report the
 * nearest one to where it ends; w->x holds the end point.
 */
void		svc_traj_run(const SvcModel *m, const double *eq, int32_t n_eq,
						 const double *x0, SvcLabelWork *w, const SvcTrajTol *tt,
						 SvcTrajEnd *out);

/*
 * Cluster id (1..n_clusters) of one scaled row: its trajectory's
 * equilibrium, matched to the nearest labelled equilibrium.  Writes the
 * decision value f(xs) into *decision when not NULL.  Returns 0 only for
 * a model without labelled equilibria (or a row with a NaN): a row however
 * far from the equilibria gets the nearest one's cluster.
 * With the tree labelling a training row gets the id training gave it;
 * with the paper's, a row outside B_eps got its nearest B_eps row's id in
 * training and may get another one here (its own trajectory's).
 */
int32_t		svc_label_predict(const SvcModel *m, const double *xs,
							  SvcLabelWork *w, double *decision);

/*
 * assign_rule "auto" (options.h): margin in gamma x squared distance by
 * which a row's nearest equilibrium must be nearer than the nearest one of
 * its trajectory's cluster to give the row its cluster instead (a kernel
 * value e times larger).  Measured on the quality benchmark: 0.5 loses
 * digits, 1-2 gain the embeddings and blobs alike (doc/design-notes.md).
 */
#define SVC_ASSIGN_MARGIN 1.0

/*
 * The cluster svc_assign and svc_predict give xs, whose trajectory gave c
 * (svc_label_predict): c, or under assign_rule "auto" above two columns
 * its nearest equilibrium's cluster where that equilibrium is nearer by
 * SVC_ASSIGN_MARGIN than every one of c's.  dist: room for n_eq doubles
 * (scratch), or NULL.
 */
int32_t		svc_label_assign_rule(const SvcModel *m, const double *xs, int32_t c,
								  double *dist);

/* svc_label_predict with svc_label_assign_rule: what svc_predict gives. */
int32_t		svc_label_assign(const SvcModel *m, const double *xs,
							 SvcLabelWork *w, double *decision);

/* lambda = f + offset at a + t (b - a); pt is scratch of dims doubles. */
double		svc_lambda_on_segment(const SvcModel *m, const double *a,
								  const double *b, double t, double *pt);

/* Append an equilibrium, growing the arrays when full; free them all. */
SvcStatus	svc_eqlist_push(const SvcEnv *env, SvcEqList *l, const double *x,
							double lambda, SvcError *err);
void		svc_eqlist_free(const SvcEnv *env, SvcEqList *l);

#endif							/* SVC_LABEL_TRAJECTORY_H */
