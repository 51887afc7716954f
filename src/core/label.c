/*
 * label.c - clusters from the equilibria of the decision function
 *
 * Every row runs the fixed-point iteration x <- P(x) (a weighted mean
 * shift that climbs f) to an equilibrium.  Training collects the
 * equilibria and labels them, by a saddle tree cut with the merge-by-ratio
 * rule (FINDINGS.md section 9) or by Algorithm 3 of the budgeted SVC paper;
 * prediction runs a new row's trajectory and takes the cluster of the
 * labelled equilibrium it reaches.  Training and prediction share one
 * trajectory routine, so a training row gets the same id from both.
 *
 * lambda(x) = sum_i alpha_i K(x, s_i) = f(x) + offset is the "height"
 * the tree works on: its ordering is that of f, and it is >= 0 wherever the
 * alphas are positive.
 */
#include "label.h"
#include "cut.h"
#include "kdtree.h"
#include "unionfind.h"
#include "kernel.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Trajectories (FINDINGS.md section 7). */
#define TRAJ_MAX_STEPS		300		/* fixed-point steps per trajectory */
#define TRAJ_STOP_SIGMA		1e-3	/* converged when a step is this * sigma */
#define SNAP_SIGMA			0.25	/* equilibria closer than this * sigma merge,
									 * and trajectories stop this close to one:
									 * 0.05 (FINDINGS 7) gave the same clusters
									 * on the benchmark sets for 1.5x the work */

/* Saddle tree (FINDINGS.md section 9). */
#define FILL_CHECK_EVERY	1024	/* k-d tree queries between interrupt checks */
#define TREE_KNN			3		/* straight segments: each one's 3 nearest */
#define SADDLE_POINTS		32		/* evenly spaced, endpoints included */
#define SADDLE_REFINE		4		/* golden-section steps around the minimum */
#define DATA_KNN			10		/* data paths: each row's 10 nearest rows */
#define DATA_MAX_SIGMA		4.0		/* ... no farther than 4 sigma */
#define DATA_STEP_SIGMA		0.5		/* ... checked every half sigma */
#define DATA_MAX_STEPS		8

/* Algorithm 3 of the paper. */
#define PAPER_POINTS		20		/* m sample points, endpoints included */
#define EPS_AUTO_SHARE		0.30	/* auto epsilon puts 30% of rows in B_eps */

/* Tolerances of a trajectory, all derived from sigma = 1/sqrt(2 gamma). */
typedef struct TrajTol
{
	double		stop;			/* converged when a step is at most this */
	double		merge;			/* snap to an equilibrium this close */
} TrajTol;

/* Where one trajectory ended. */
typedef struct TrajEnd
{
	int32_t		near;			/* nearest equilibrium to the end, -1 if none */
	bool		snapped;		/* the end is within merge tolerance of it */
	double		lambda0;		/* kernel sum at the start, f + offset */
} TrajEnd;

/* The equilibria found so far, growing as training runs rows. */
typedef struct EqList
{
	int32_t		n;
	int32_t		cap;
	int32_t		dims;
	double	   *x;				/* [cap * dims] */
	double	   *lambda;			/* [cap] kernel sum at the equilibrium */
} EqList;

/* A candidate edge of the saddle tree. */
typedef struct Edge
{
	int32_t		a;				/* a < b, equilibrium indexes */
	int32_t		b;
	double		d2;				/* squared distance between them */
	double		saddle;			/* lowest lambda on the path, >= 0 */
} Edge;

/* The tolerances for a model's width (FINDINGS.md section 7). */
static void
traj_tol(const SvcModel *m, TrajTol *tt)
{
	double		sigma = 1.0 / sqrt(2.0 * m->gamma);

	tt->stop = TRAJ_STOP_SIGMA * sigma;
	tt->merge = SNAP_SIGMA * sigma;
}

/*
 * How many units of work (trajectories, saddle heights: tens of kernel
 * sums each) to run between interrupt checks: about a million kernel
 * terms' worth of sums, so a large model checks at every unit and a small
 * one does not pay for the hook at every row.
 */
static int64_t
units_per_check(const SvcModel *m)
{
	int64_t		terms = (int64_t) (m->n_sv > 0 ? m->n_sv : 1) * m->dims;
	int64_t		every = 1024 / (terms / 64 + 1);

	return every > 0 ? every : 1;
}

SvcStatus
svc_label_work_init(const SvcEnv *env, const SvcModel *m, SvcLabelWork *w,
					SvcError *err)
{
	size_t		d = (size_t) (m->dims > 0 ? m->dims : 1);
	size_t		s = (size_t) (m->n_sv > 0 ? m->n_sv : 1);

	w->x = svc_alloc(env, sizeof(double) * d, err);
	w->next = svc_alloc(env, sizeof(double) * d, err);
	w->kbuf = svc_alloc(env, sizeof(double) * s, err);
	if (!w->x || !w->next || !w->kbuf)
	{
		svc_label_work_free(env, w);
		return SVC_ERR_NOMEM;
	}
	return SVC_OK;
}

void
svc_label_work_free(const SvcEnv *env, SvcLabelWork *w)
{
	svc_free(env, w->x);
	svc_free(env, w->next);
	svc_free(env, w->kbuf);
	w->x = w->next = w->kbuf = NULL;
}

/* Index of the equilibrium nearest to x (lowest index on ties), and its
 * squared distance (HUGE_VAL if it overflows); -1 when there is none or
 * x has a NaN. */
static int32_t
nearest_eq(const double *eq, int32_t n_eq, int32_t d, const double *x,
		   double *dist2)
{
	int32_t		best = -1;
	double		bd = DBL_MAX;

	for (int32_t i = 0; i < n_eq; i++)
	{
		double		t = svc_sqdist(eq + (size_t) i * d, x, d);

		if (t < bd)
		{
			bd = t;
			best = i;
		}
	}
	if (best < 0 && n_eq > 0)
	{
		/*
		 * Every distance overflowed: x is some 1e154 or more away from the
		 * equilibria.  Compare the distances scaled down instead, so that
		 * such a row still gets the nearest equilibrium (a row with a NaN
		 * still gets none).
		 */
		best = (int32_t) svc_nearest_far(eq, n_eq, d, x);
		bd = HUGE_VAL;
	}
	*dist2 = bd;
	return best;
}

/*
 * Run the trajectory of x0 against the equilibria eq[n_eq] and report the
 * nearest one to where it ends; w->x holds the end point.
 *
 * It stops when a step is below tt->stop, after TRAJ_MAX_STEPS steps, where
 * the denominator guard fires (the point then stays put), or as soon as it
 * comes within tt->merge of a known equilibrium: that is where most rows
 * of a cluster would end anyway, and it saves most of the steps.  The
 * nearest-equilibrium scan costs O(n_eq * dims), so it runs only when a
 * lower bound on the distance (the last measured distance minus the way
 * walked since, by the triangle inequality) says a snap is possible.
 */
static void
run_trajectory(const SvcModel *m, const double *eq, int32_t n_eq,
			   const double *x0, SvcLabelWork *w, const TrajTol *tt,
			   TrajEnd *out)
{
	int32_t		d = m->dims;
	double		bound = 0.0;	/* lower bound on distance to nearest eq */
	double		dist2 = DBL_MAX;
	int32_t		near = -1;
	int			steps = 1;
	bool		ok;

	memcpy(w->x, x0, sizeof(double) * (size_t) d);
	out->lambda0 = svc_kernel_fixed_point(m->sv, m->alpha, m->sv_gamma, m->n_sv,
										  d, m->gamma, w->x, w->next, w->kbuf,
										  &ok);
	for (;;)
	{
		double		step;
		double	   *t;

		if (n_eq > 0 && bound <= tt->merge)
		{
			near = nearest_eq(eq, n_eq, d, w->x, &dist2);
			bound = sqrt(dist2);
			if (bound <= tt->merge)
			{
				out->near = near;
				out->snapped = true;
				return;
			}
		}
		if (!ok)
			break;				/* frozen where the weights cancel */
		step = sqrt(svc_sqdist(w->x, w->next, d));
		if (isnan(step))
			break;				/* the step overflowed: stay where it was */
		t = w->x;
		w->x = w->next;
		w->next = t;
		bound -= step;
		if (step <= tt->stop || steps >= TRAJ_MAX_STEPS)
			break;
		(void) svc_kernel_fixed_point(m->sv, m->alpha, m->sv_gamma, m->n_sv, d,
									  m->gamma, w->x, w->next, w->kbuf, &ok);
		steps++;
	}
	near = nearest_eq(eq, n_eq, d, w->x, &dist2);
	out->near = near;
	out->snapped = near >= 0 && sqrt(dist2) <= tt->merge;
}

int32_t
svc_label_predict(const SvcModel *m, const double *xs, SvcLabelWork *w,
				  double *decision)
{
	TrajTol		tt;
	TrajEnd		end;

	if (m->n_eq <= 0)
	{
		if (decision)
			*decision = svc_model_decision_scaled(m, xs);
		return 0;
	}
	traj_tol(m, &tt);
	run_trajectory(m, m->eq, m->n_eq, xs, w, &tt, &end);
	if (decision)
		*decision = end.lambda0 - m->offset;
	/* no nearest equilibrium only when xs is not finite (NaN distances) */
	return end.near >= 0 ? m->eq_cluster[end.near] : 0;
}

/* ---------------------------------------------------------------- */
/* Equilibria list and union-find                                    */
/* ---------------------------------------------------------------- */

/* Free the equilibria list's arrays. */
static void
eqlist_free(const SvcEnv *env, EqList *l)
{
	svc_free(env, l->x);
	svc_free(env, l->lambda);
	l->x = l->lambda = NULL;
	l->n = l->cap = 0;
}

/* Append an equilibrium, doubling the arrays when full. */
static SvcStatus
eqlist_push(const SvcEnv *env, EqList *l, const double *x, double lambda,
			SvcError *err)
{
	size_t		d = (size_t) l->dims;

	if (l->n == l->cap)
	{
		int32_t		cap = l->cap < 16 ? 16 : (l->cap > INT32_MAX / 2 ? INT32_MAX : l->cap * 2);
		double	   *nx = svc_alloc(env, sizeof(double) * d * (size_t) cap, err);
		double	   *nl = svc_alloc(env, sizeof(double) * (size_t) cap, err);

		if (!nx || !nl)
		{
			svc_free(env, nx);
			svc_free(env, nl);
			return SVC_ERR_NOMEM;
		}
		if (l->n > 0)
		{
			memcpy(nx, l->x, sizeof(double) * d * (size_t) l->n);
			memcpy(nl, l->lambda, sizeof(double) * (size_t) l->n);
		}
		svc_free(env, l->x);
		svc_free(env, l->lambda);
		l->x = nx;
		l->lambda = nl;
		l->cap = cap;
	}
	memcpy(l->x + d * (size_t) l->n, x, sizeof(double) * d);
	l->lambda[l->n] = lambda;
	l->n++;
	return SVC_OK;
}

/* ---------------------------------------------------------------- */
/* Saddle tree                                                       */
/* ---------------------------------------------------------------- */

/* lambda at a + t (b - a); pt is scratch of dims doubles. */
static double
lambda_on_segment(const SvcModel *m, const double *a, const double *b,
				  double t, double *pt)
{
	for (int32_t j = 0; j < m->dims; j++)
		pt[j] = a[j] + t * (b[j] - a[j]);
	return svc_kernel_sum(m->sv, m->alpha, m->sv_gamma, m->n_sv, m->dims,
						  m->gamma, pt);
}

/*
 * Saddle height between two equilibria: the lowest lambda on the straight
 * segment, from SADDLE_POINTS evenly spaced points, then a few
 * golden-section steps in the bracket around the lowest of them; clamped
 * at 0 since negative alphas can push lambda below.  A chord across a
 * curved ridge under-estimates the pass.  Pushing each point uphill across
 * the segment (one or two mean-shift steps with the along-segment part
 * removed) was measured on the nine shared sets: +0.01 mean NMI at
 * gamma = 256/median (spiral, flame), -0.01 at the auto gamma, so it is
 * left out.
 */
static double
saddle_height(const SvcModel *m, const double *a, const double *b, double *pt)
{
	const double g = 0.6180339887498949;	/* golden ratio - 1 */
	double		best = DBL_MAX;
	int			kbest = 0;
	double		lo,
				hi,
				t1,
				t2,
				v1,
				v2;

	for (int k = 0; k < SADDLE_POINTS; k++)
	{
		double		v = lambda_on_segment(m, a, b, (double) k / (SADDLE_POINTS - 1), pt);

		if (v < best)
		{
			best = v;
			kbest = k;
		}
	}
	if (kbest > 0 && kbest < SADDLE_POINTS - 1)
	{
		lo = (double) (kbest - 1) / (SADDLE_POINTS - 1);
		hi = (double) (kbest + 1) / (SADDLE_POINTS - 1);
		t1 = hi - g * (hi - lo);
		t2 = lo + g * (hi - lo);
		v1 = lambda_on_segment(m, a, b, t1, pt);
		v2 = lambda_on_segment(m, a, b, t2, pt);
		for (int r = 0; r < SADDLE_REFINE; r++)
		{
			if (v1 < best)
				best = v1;
			if (v2 < best)
				best = v2;
			if (v1 < v2)
			{
				hi = t2;
				t2 = t1;
				v2 = v1;
				t1 = hi - g * (hi - lo);
				v1 = lambda_on_segment(m, a, b, t1, pt);
			}
			else
			{
				lo = t1;
				t1 = t2;
				v1 = v2;
				t2 = lo + g * (hi - lo);
				v2 = lambda_on_segment(m, a, b, t2, pt);
			}
		}
		if (v1 < best)
			best = v1;
		if (v2 < best)
			best = v2;
	}
	return best > 0.0 ? best : 0.0;
}

/* Edges by (a, b): to drop the pairs found from both ends. */
static int
edge_cmp_pair(const void *pa, const void *pb)
{
	const Edge *x = pa;
	const Edge *y = pb;

	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return 0;
}

/* Edges by decreasing saddle, then shorter first, then by (a, b): a full
 * key, so the order never depends on qsort's instability. */
static int
edge_cmp_saddle(const void *pa, const void *pb)
{
	const Edge *x = pa;
	const Edge *y = pb;

	if (x->saddle != y->saddle)
		return x->saddle > y->saddle ? -1 : 1;
	if (x->d2 != y->d2)
		return x->d2 < y->d2 ? -1 : 1;
	return edge_cmp_pair(pa, pb);
}

/* A neighbour candidate, kept in a small buffer sorted by (d2, j). */
typedef struct Neigh
{
	double		d2;
	int32_t		j;
} Neigh;

/*
 * Candidate edges for M equilibria: each one's TREE_KNN nearest, their
 * saddles from straight segments.  The data edges carry most of the tree
 * (FINDINGS.md section 9: a chord is only a lower bound on the pass, and
 * testing far pairs made results worse); these few keep it sound where
 * rows are too far apart for data edges (high dimension, where every
 * support vector can be its own equilibrium).  Measured on the nine shared
 * sets against all pairs up to 60 equilibria, else 12 nearest plus all
 * within 4 sigma: the same best-cut NMI (0.811 at budget 100, 0.903 at
 * 300) for about half the labelling time.  Returns the edge count in
 * *n_edges; *edges is allocated from env.
 */
static SvcStatus
candidate_edges(const SvcEnv *env, const EqList *eqs, Edge **edges,
				int64_t *n_edges, SvcError *err)
{
	int32_t		M = eqs->n;
	int32_t		d = eqs->dims;
	size_t		cap;
	Edge	   *e;
	int64_t		ne = 0;
	Neigh		buf[TREE_KNN];

	*edges = NULL;
	*n_edges = 0;
	cap = (size_t) M * TREE_KNN;
	if (!svc_size_mul(cap, sizeof(Edge), &cap))
		return svc_fail(err, SVC_ERR_LIMIT, "too many equilibria to label: %d", M);
	e = svc_alloc(env, cap > 0 ? cap : sizeof(Edge), err);
	if (!e)
		return SVC_ERR_NOMEM;

	for (int32_t a = 0; a < M; a++)
	{
		int			nb = 0;
		const double *xa = eqs->x + (size_t) a * d;

		if ((a & 63) == 0 && svc_interrupted(env, err))
		{
			svc_free(env, e);
			return SVC_ERR_INTERRUPTED;
		}
		/* Insertion into a sorted buffer: most j fail the first test. */
		for (int32_t b = 0; b < M; b++)
		{
			double		t;
			int			p;

			if (b == a)
				continue;
			t = svc_sqdist(xa, eqs->x + (size_t) b * d, d);
			if (nb == TREE_KNN && !(t < buf[nb - 1].d2))
				continue;		/* ties keep the lower index, already in */
			p = nb < TREE_KNN ? nb++ : nb - 1;
			while (p > 0 && buf[p - 1].d2 > t)
			{
				buf[p] = buf[p - 1];
				p--;
			}
			buf[p].d2 = t;
			buf[p].j = b;
		}
		for (int k = 0; k < nb; k++)
		{
			e[ne].a = a < buf[k].j ? a : buf[k].j;
			e[ne].b = a < buf[k].j ? buf[k].j : a;
			e[ne].d2 = buf[k].d2;
			e[ne].saddle = 0.0;
			ne++;
		}
	}
	/* Drop the pairs that both ends chose. */
	if (ne > 1)
	{
		int64_t		w = 0;

		qsort(e, (size_t) ne, sizeof(Edge), edge_cmp_pair);
		for (int64_t i = 0; i < ne; i++)
			if (w == 0 || edge_cmp_pair(&e[w - 1], &e[i]) != 0)
				e[w++] = e[i];
		ne = w;
	}
	*edges = e;
	*n_edges = ne;
	return SVC_OK;
}

/*
 * Make the candidate graph connected, so that every equilibrium ends in
 * the tree: while there are several components, link each to the nearest
 * equilibrium outside it (Boruvka rounds; each round at least halves the
 * count).  The saddles of these long links are usually 0, so they merge
 * only through the minimum cluster size.  Appends to *edges, reallocating.
 */
static SvcStatus
connect_components(const SvcEnv *env, const EqList *eqs, Edge **edges,
				   int64_t *n_edges, SvcError *err)
{
	int32_t		M = eqs->n;
	int32_t		d = eqs->dims;
	int32_t    *parent = NULL;
	int32_t    *link_to = NULL;
	int32_t    *link_from = NULL;
	int32_t    *link_root = NULL;	/* component of link_to, before joining */
	double	   *link_d2 = NULL;
	SvcStatus	st = SVC_OK;

	parent = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);
	link_to = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);
	link_from = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);
	link_root = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);
	link_d2 = svc_alloc(env, sizeof(double) * (size_t) M, err);
	if (!parent || !link_to || !link_from || !link_root || !link_d2)
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}
	svc_uf_init(parent, M);
	for (int64_t k = 0; k < *n_edges; k++)
	{
		int32_t		ra = svc_uf_find(parent, (*edges)[k].a);
		int32_t		rb = svc_uf_find(parent, (*edges)[k].b);

		if (ra != rb)
			svc_uf_join(parent, ra, rb);
	}

	for (;;)
	{
		int32_t		n_comp = 0;
		int32_t		n_new = 0;
		Edge	   *grown;

		for (int32_t i = 0; i < M; i++)
		{
			link_to[i] = -1;
			link_d2[i] = DBL_MAX;
			if (svc_uf_find(parent, i) == i)
				n_comp++;
		}
		if (n_comp <= 1)
			break;
		if (svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			goto done;
		}
		/* Nearest outside pair per component, lowest indexes on ties. */
		for (int32_t a = 0; a < M; a++)
		{
			int32_t		ra = svc_uf_find(parent, a);

			for (int32_t b = 0; b < M; b++)
			{
				double		t;

				if (svc_uf_find(parent, b) == ra)
					continue;
				t = svc_sqdist(eqs->x + (size_t) a * d, eqs->x + (size_t) b * d, d);
				if (t < link_d2[ra])
				{
					link_d2[ra] = t;
					link_from[ra] = a;
					link_to[ra] = b;
				}
			}
		}
		for (int32_t r = 0; r < M; r++)
			if (link_to[r] >= 0)
			{
				link_root[r] = svc_uf_find(parent, link_to[r]);
				n_new++;
			}
		grown = svc_alloc(env, sizeof(Edge) * (size_t) (*n_edges + n_new), err);
		if (!grown)
		{
			st = SVC_ERR_NOMEM;
			goto done;
		}
		memcpy(grown, *edges, sizeof(Edge) * (size_t) *n_edges);
		for (int32_t r = 0; r < M; r++)
		{
			int32_t		a,
						b,
						ra,
						rb;

			if (link_to[r] < 0)
				continue;

			/*
			 * Two components that are each other's nearest name the same
			 * pair: the one with the lower root has added it already.
			 */
			if (link_root[r] < r && link_from[link_root[r]] == link_to[r] &&
				link_to[link_root[r]] == link_from[r])
				continue;
			a = link_from[r] < link_to[r] ? link_from[r] : link_to[r];
			b = link_from[r] < link_to[r] ? link_to[r] : link_from[r];
			grown[*n_edges].a = a;
			grown[*n_edges].b = b;
			grown[*n_edges].d2 = link_d2[r];
			grown[*n_edges].saddle = 0.0;
			(*n_edges)++;
			ra = svc_uf_find(parent, a);
			rb = svc_uf_find(parent, b);
			if (ra != rb)
				svc_uf_join(parent, ra, rb);
		}
		svc_free(env, *edges);
		*edges = grown;
	}
done:
	svc_free(env, parent);
	svc_free(env, link_to);
	svc_free(env, link_from);
	svc_free(env, link_root);
	svc_free(env, link_d2);
	return st;
}

/*
 * Saddle estimates along the data.  A straight segment between two
 * equilibria under-estimates the pass along a curved ridge (rings,
 * spirals, moons: FINDINGS.md section 9), but the rows themselves lie on
 * the ridge.  Two near rows that climb to different equilibria a and b
 * bound the pass between a and b from below by the lowest lambda on the
 * short segment between them, so each pair of neighbouring rows across a
 * basin boundary proposes an edge (a, b) with that height; the highest
 * proposal per pair is kept.  Appends to *edges, reallocating.
 */
static SvcStatus
data_edges(const SvcEnv *env, const SvcModel *m, const EqList *eqs,
		   const double *xs, int64_t n, const int32_t *roweq,
		   const double *rowlam, Edge **edges, int64_t *n_edges, SvcError *err)
{
	int32_t		d = m->dims;
	double		sigma = 1.0 / sqrt(2.0 * m->gamma);
	double		max_d2 = (DATA_MAX_SIGMA * sigma) * (DATA_MAX_SIGMA * sigma);
	SvcKdTree	tree = {0};
	int64_t		idx[DATA_KNN + 1];
	double		nd2[DATA_KNN + 1];
	Edge	   *out = NULL;
	int64_t		n_out = 0,
				cap = 0;
	double	   *pt = NULL;
	int64_t		every = units_per_check(m);
	SvcStatus	st;

	st = svc_kd_build(env, xs, n, d, &tree, err);
	if (st != SVC_OK)
		goto done;
	pt = svc_alloc(env, sizeof(double) * (size_t) d, err);
	if (!pt)
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}
	for (int64_t i = 0; i < n; i++)
	{
		int32_t		found;
		const double *xi = xs + (size_t) i * d;

		if (i % every == 0 && svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			goto done;
		}
		found = svc_kd_knearest(&tree, xi, DATA_KNN + 1, idx, nd2);
		for (int32_t r = 0; r < found; r++)
		{
			int64_t		j = idx[r];
			const double *xj = xs + (size_t) j * d;
			int32_t		a = roweq[i],
						b = roweq[j];
			double		h;
			int			steps;

			/* each unordered pair once, and only across basins */
			if (j <= i || a == b || nd2[r] > max_d2)
				continue;
			h = rowlam[i] < rowlam[j] ? rowlam[i] : rowlam[j];
			steps = (int) ceil(sqrt(nd2[r]) / (DATA_STEP_SIGMA * sigma));
			if (steps > DATA_MAX_STEPS)
				steps = DATA_MAX_STEPS;
			for (int k = 1; k < steps; k++)
			{
				double		v = lambda_on_segment(m, xi, xj, (double) k / steps, pt);

				h = v < h ? v : h;
			}
			if (n_out == cap)
			{
				int64_t		ncap = cap ? cap * 2 : 1024;
				Edge	   *grown = svc_alloc(env, sizeof(Edge) * (size_t) ncap, err);

				if (!grown)
				{
					st = SVC_ERR_NOMEM;
					goto done;
				}
				if (n_out)
					memcpy(grown, out, sizeof(Edge) * (size_t) n_out);
				svc_free(env, out);
				out = grown;
				cap = ncap;
			}
			out[n_out].a = a < b ? a : b;
			out[n_out].b = a < b ? b : a;
			out[n_out].d2 = svc_sqdist(eqs->x + (size_t) a * d, eqs->x + (size_t) b * d, d);
			out[n_out].saddle = h > 0.0 ? h : 0.0;
			n_out++;
		}
	}

	/* append to the candidate edges, then keep the highest saddle per pair */
	if (n_out > 0)
	{
		Edge	   *all = svc_alloc(env, sizeof(Edge) * (size_t) (*n_edges + n_out), err);
		int64_t		w = 0;

		if (!all)
		{
			st = SVC_ERR_NOMEM;
			goto done;
		}
		if (*n_edges)
			memcpy(all, *edges, sizeof(Edge) * (size_t) *n_edges);
		memcpy(all + *n_edges, out, sizeof(Edge) * (size_t) n_out);
		qsort(all, (size_t) (*n_edges + n_out), sizeof(Edge), edge_cmp_pair);
		for (int64_t k = 0; k < *n_edges + n_out; k++)
		{
			if (w > 0 && edge_cmp_pair(&all[w - 1], &all[k]) == 0)
			{
				if (all[k].saddle > all[w - 1].saddle)
					all[w - 1].saddle = all[k].saddle;
			}
			else
				all[w++] = all[k];
		}
		svc_free(env, *edges);
		*edges = all;
		*n_edges = w;
	}
	st = SVC_OK;
done:
	svc_kd_free(env, &tree);
	svc_free(env, out);
	svc_free(env, pt);
	return st;
}

/*
 * The saddle tree: the maximum spanning tree of the candidate and data
 * edges by saddle height.  Writes its M - 1 edges, by decreasing saddle,
 * into tree[] (allocated by the caller); svc_cut_apply cuts it.
 */
static SvcStatus
tree_build(const SvcEnv *env, const SvcModel *m, const EqList *eqs,
		   const double *xs, int64_t n_rows, const int32_t *roweq,
		   const double *rowlam, Edge *tree, SvcError *err)
{
	int32_t		M = eqs->n;
	int32_t		d = eqs->dims;
	Edge	   *edges = NULL;
	int64_t		ne = 0;
	int32_t		nt = 0;
	int32_t    *mst = NULL;		/* union-find of the spanning tree */
	double	   *pt = NULL;
	int64_t		every = units_per_check(m);
	SvcStatus	st;

	st = candidate_edges(env, eqs, &edges, &ne, err);
	if (st != SVC_OK)
		goto done;
	st = connect_components(env, eqs, &edges, &ne, err);
	if (st != SVC_OK)
		goto done;

	mst = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);
	pt = svc_alloc(env, sizeof(double) * (size_t) d, err);
	if (!mst || !pt)
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}

	for (int64_t k = 0; k < ne; k++)
	{
		if (k % every == 0 && svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			goto done;
		}
		edges[k].saddle = saddle_height(m, eqs->x + (size_t) edges[k].a * d,
										eqs->x + (size_t) edges[k].b * d, pt);
	}
	st = data_edges(env, m, eqs, xs, n_rows, roweq, rowlam, &edges, &ne, err);
	if (st != SVC_OK)
		goto done;
	if (ne > 1)
		qsort(edges, (size_t) ne, sizeof(Edge), edge_cmp_saddle);

	svc_uf_init(mst, M);
	for (int64_t k = 0; k < ne && nt < M - 1; k++)
	{
		int32_t		ta = svc_uf_find(mst, edges[k].a);
		int32_t		tb = svc_uf_find(mst, edges[k].b);

		if (ta == tb)
			continue;			/* not a tree edge */
		svc_uf_join(mst, ta, tb);
		tree[nt++] = edges[k];
	}
	/* connect_components made the graph connected */
	st = nt == M - 1 ? SVC_OK : svc_fail(err, SVC_ERR_INTERNAL, "saddle tree is not connected");
done:
	svc_free(env, edges);
	svc_free(env, mst);
	svc_free(env, pt);
	return st;
}

/* ---------------------------------------------------------------- */
/* Algorithm 3                                                       */
/* ---------------------------------------------------------------- */

/*
 * Labelling as the paper's Algorithm 3: two equilibria are connected when
 * all PAPER_POINTS points of the segment between them (endpoints included)
 * have f >= 0; clusters are the connected components.  A pair already in
 * one component needs no test, which leaves at most M - 1 successful
 * tests; a failing one usually stops at its first point.
 */
static SvcStatus
paper_components(const SvcEnv *env, const SvcModel *m, const EqList *eqs,
				 int32_t *comp, SvcError *err)
{
	int32_t		M = eqs->n;
	int32_t		d = eqs->dims;
	double	   *pt;

	pt = svc_alloc(env, sizeof(double) * (size_t) d, err);
	if (!pt)
		return SVC_ERR_NOMEM;
	svc_uf_init(comp, M);
	for (int32_t a = 0; a < M; a++)
	{
		const double *xa = eqs->x + (size_t) a * d;

		if (svc_interrupted(env, err))
		{
			svc_free(env, pt);
			return SVC_ERR_INTERRUPTED;
		}
		if (eqs->lambda[a] - m->offset < 0.0)
			continue;			/* an endpoint fails the test */
		for (int32_t b = a + 1; b < M; b++)
		{
			const double *xb = eqs->x + (size_t) b * d;
			int32_t		ra,
						rb;
			bool		inside = true;

			if (eqs->lambda[b] - m->offset < 0.0)
				continue;
			ra = svc_uf_find(comp, a);
			rb = svc_uf_find(comp, b);
			if (ra == rb)
				continue;
			for (int k = 1; k < PAPER_POINTS - 1 && inside; k++)
				if (lambda_on_segment(m, xa, xb, (double) k / (PAPER_POINTS - 1), pt) - m->offset < 0.0)
					inside = false;
			if (inside)
				svc_uf_join(comp, ra, rb);
		}
	}
	for (int32_t i = 0; i < M; i++)
		comp[i] = svc_uf_find(comp, i);
	svc_free(env, pt);
	return SVC_OK;
}

/*
 * Exact, by a k-d tree over a copy of the source rows kept in row order,
 * so a tie goes to the lowest row, as the tree breaks ties by lowest index.
 */
SvcStatus
svc_label_fill_nearest(const SvcEnv *env, const double *xs, int64_t n, int32_t d,
					   int32_t *label, int32_t pending, int64_t *n_sources,
					   SvcError *err)
{
	SvcKdTree	t = {0};
	double	   *pts = NULL;
	int32_t    *label_of = NULL;	/* label of each source row */
	int64_t		nb = 0;
	SvcStatus	st = SVC_OK;

	for (int64_t i = 0; i < n; i++)
		if (label[i] > pending)
			nb++;
	if (n_sources)
		*n_sources = nb;
	if (nb == 0)
		return SVC_OK;
	pts = svc_alloc(env, sizeof(double) * (size_t) nb * (size_t) d, err);
	label_of = svc_alloc(env, sizeof(int32_t) * (size_t) nb, err);
	if (!pts || !label_of)
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}
	nb = 0;
	for (int64_t i = 0; i < n; i++)
		if (label[i] > pending)
		{
			memcpy(pts + (size_t) nb * d, xs + (size_t) i * d, sizeof(double) * (size_t) d);
			label_of[nb++] = label[i];
		}
	st = svc_kd_build(env, pts, nb, d, &t, err);
	if (st != SVC_OK)
		goto done;
	for (int64_t i = 0, q = 0; i < n; i++)
	{
		if (label[i] != pending)
			continue;
		if (q++ % FILL_CHECK_EVERY == 0 && svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			goto done;
		}
		label[i] = label_of[svc_kd_nearest(&t, xs + (size_t) i * d, NULL)];
	}
done:
	svc_kd_free(env, &t);
	svc_free(env, pts);
	svc_free(env, label_of);
	return st;
}

/* ---------------------------------------------------------------- */
/* Training                                                          */
/* ---------------------------------------------------------------- */

/* Check a model's numbers before labelling with them. */
static SvcStatus
check_inputs(const SvcModel *m, const double *xs, int64_t n, SvcError *err)
{
	if (m->dims < 1 || m->dims > SVC_MAX_DIMS)
		return svc_fail(err, SVC_ERR_INTERNAL, "model dimension %d is out of range", m->dims);
	if (m->n_sv < 0 || (m->n_sv > 0 && (!m->sv || !m->alpha)))
		return svc_fail(err, SVC_ERR_INTERNAL, "model has no support vectors array");
	if (!(isfinite(m->gamma) && m->gamma > 0.0) || !isfinite(m->offset))
		return svc_fail(err, SVC_ERR_INTERNAL, "model kernel parameters are invalid");
	if (!isfinite(m->opt.merge_ratio) || !isfinite(m->opt.min_cluster_share) ||
		!(isfinite(m->opt.epsilon) && m->opt.epsilon >= 0.0))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "labelling options are invalid");
	if (n < 1)
		return svc_fail(err, SVC_ERR_INVALID_INPUT, "no rows to label");
	if (n > INT32_MAX)
		return svc_fail(err, SVC_ERR_LIMIT, "too many rows to label: %lld", (long long) n);
	if (svc_first_nonfinite(xs, (size_t) n * (size_t) m->dims) >= 0)
		return svc_fail(err, SVC_ERR_INVALID_INPUT, "a row to label is not finite");
	return SVC_OK;
}

/*
 * The auto epsilon: the 30% quantile of |f| over the rows, so that B_eps
 * holds 30% of them (FINDINGS.md section 2: wider was better, and an
 * absolute epsilon often leaves B_eps empty).  absf is sorted in place.
 */
static double
auto_epsilon(double *absf, int64_t n)
{
	int64_t		k = (int64_t) ceil(EPS_AUTO_SHARE * (double) n) - 1;

	if (k < 0)
		k = 0;
	qsort(absf, (size_t) n, sizeof(double), svc_cmp_double);
	return absf[k];
}

/*
 * Write the model's labelling (freeing what it held, only on success):
 * the equilibria with their rows, and either the tree (tree[], M - 1
 * edges by decreasing saddle), cut by svc_cut_apply, or the paper's
 * components (comp[i], an equilibrium index per equilibrium) numbered
 * by svc_cut_number.  roweq[r] is the equilibrium of row r.
 */
static SvcStatus
finish_model(const SvcEnv *env, SvcModel *m, const EqList *eqs,
			 const Edge *tree, const int32_t *comp, const int32_t *roweq,
			 int64_t n, int32_t *labels, SvcError *err)
{
	int32_t		M = eqs->n;
	int32_t		n_edges = tree ? M - 1 : 0;
	SvcModel	next = *m;
	SvcStatus	st = SVC_ERR_NOMEM;

	next.n_eq = M;
	next.n_edges = n_edges;
	next.eq = svc_alloc(env, sizeof(double) * (size_t) M * (size_t) eqs->dims, err);
	next.eq_f = svc_alloc(env, sizeof(double) * (size_t) M, err);
	next.eq_rows = svc_alloc0(env, sizeof(int64_t) * (size_t) M, err);
	next.eq_cluster = NULL;
	next.cluster_size = NULL;
	next.edge_a = svc_alloc(env, sizeof(int32_t) * (size_t) n_edges, err);
	next.edge_b = svc_alloc(env, sizeof(int32_t) * (size_t) n_edges, err);
	next.edge_f = svc_alloc(env, sizeof(double) * (size_t) n_edges, err);
	if (!next.eq || !next.eq_f || !next.eq_rows || !next.edge_a ||
		!next.edge_b || !next.edge_f)
		goto done;
	memcpy(next.eq, eqs->x, sizeof(double) * (size_t) M * (size_t) eqs->dims);
	for (int32_t i = 0; i < M; i++)
		next.eq_f[i] = eqs->lambda[i] - m->offset;
	for (int64_t r = 0; r < n; r++)
		next.eq_rows[roweq[r]]++;
	for (int32_t k = 0; k < n_edges; k++)
	{
		next.edge_a[k] = tree[k].a;
		next.edge_b[k] = tree[k].b;
		next.edge_f[k] = tree[k].saddle - m->offset;
	}

	if (tree)
	{
		st = svc_cut_apply(env, &next, err);
		if (st != SVC_OK)
			goto done;
	}
	else
	{
		next.eq_cluster = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);
		if (!next.eq_cluster)
			goto done;
		st = svc_cut_number(env, M, comp, next.eq_rows, next.eq_cluster,
							&next.n_clusters, &next.cluster_size, err);
		if (st != SVC_OK)
			goto done;
	}
	if (labels)
		for (int64_t r = 0; r < n; r++)
			labels[r] = next.eq_cluster[roweq[r]];

	svc_model_free_labelling(env, m);
	*m = next;
	return SVC_OK;
done:
	svc_model_free_labelling(env, &next);
	return st;
}

SvcStatus
svc_label_train(const SvcEnv *env, SvcModel *m, const double *xs, int64_t n,
				int32_t *labels, SvcError *err)
{
	int32_t		d = m->dims;
	bool		paper = m->opt.labeling == SVC_LABELING_PAPER;
	SvcLabelWork w = {0};
	EqList		eqs = {0};
	double	   *rowlam = NULL;	/* kernel sum at each row (paper) */
	double	   *absf = NULL;
	int32_t    *roweq = NULL;	/* equilibrium of each row, -1 = none yet */
	int32_t    *comp = NULL;
	Edge	   *tree = NULL;
	double		epsilon = 0.0;
	bool		all_rows = true;	/* trajectories from every row */
	int64_t		every = units_per_check(m);
	TrajTol		tt;
	SvcStatus	st;

	st = check_inputs(m, xs, n, err);
	if (st != SVC_OK)
		return st;
	traj_tol(m, &tt);
	eqs.dims = d;

	st = svc_label_work_init(env, m, &w, err);
	if (st != SVC_OK)
		return st;
	rowlam = svc_alloc(env, sizeof(double) * (size_t) n, err);
	absf = svc_alloc(env, sizeof(double) * (size_t) n, err);
	roweq = svc_alloc(env, sizeof(int32_t) * (size_t) n, err);
	if (!rowlam || !absf || !roweq)
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}

	/*
	 * Algorithm 3 needs f at every row before it knows where to start
	 * trajectories; the tree gets f free from each trajectory's first step.
	 */
	if (paper)
	{
		int64_t		in_beps = 0;

		for (int64_t i = 0; i < n; i++)
		{
			if (i % (every * 16) == 0 && svc_interrupted(env, err))
			{
				st = SVC_ERR_INTERRUPTED;
				goto done;
			}
			rowlam[i] = svc_kernel_sum(m->sv, m->alpha, m->sv_gamma, m->n_sv, d,
									   m->gamma, xs + (size_t) i * d);
			absf[i] = fabs(rowlam[i] - m->offset);
		}
		epsilon = m->opt.epsilon > 0.0 ? m->opt.epsilon : auto_epsilon(absf, n);
		for (int64_t i = 0; i < n; i++)
			if (fabs(rowlam[i] - m->offset) <= epsilon)
				in_beps++;
		/* An empty strip would label nothing: then run every row. */
		all_rows = in_beps == 0;
	}

	/*
	 * Trajectories, in row order, each snapping to the equilibria found
	 * before it; roweq < 0 marks the rows left for step 10 of Algorithm 3.
	 */
	for (int64_t i = 0, run = 0; i < n; i++)
	{
		TrajEnd		end;

		roweq[i] = -1;
		if (!all_rows && fabs(rowlam[i] - m->offset) > epsilon)
			continue;
		if (run++ % every == 0 && svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			goto done;
		}
		run_trajectory(m, eqs.x, eqs.n, xs + (size_t) i * d, &w, &tt, &end);
		if (!paper)
		{
			rowlam[i] = end.lambda0;
			absf[i] = fabs(end.lambda0 - m->offset);
		}
		if (end.snapped)
			roweq[i] = end.near;
		else
		{
			double		lam = svc_kernel_sum(m->sv, m->alpha, m->sv_gamma, m->n_sv, d,
											 m->gamma, w.x);

			st = eqlist_push(env, &eqs, w.x, lam, err);
			if (st != SVC_OK)
				goto done;
			roweq[i] = eqs.n - 1;
		}
	}
	if (!paper)
		epsilon = m->opt.epsilon > 0.0 ? m->opt.epsilon : auto_epsilon(absf, n);

	if (paper)
	{
		comp = svc_alloc(env, sizeof(int32_t) * (size_t) eqs.n, err);
		if (!comp)
		{
			st = SVC_ERR_NOMEM;
			goto done;
		}
		st = paper_components(env, m, &eqs, comp, err);
		/* rows outside B_eps have equilibrium -1 until they take one */
		if (st == SVC_OK && !all_rows)
			st = svc_label_fill_nearest(env, xs, n, d, roweq, -1, NULL, err);
	}
	else
	{
		tree = svc_alloc(env, sizeof(Edge) * (size_t) eqs.n, err);
		if (!tree)
		{
			st = SVC_ERR_NOMEM;
			goto done;
		}
		st = tree_build(env, m, &eqs, xs, n, roweq, rowlam, tree, err);
	}
	if (st != SVC_OK)
		goto done;

	st = finish_model(env, m, &eqs, tree, comp, roweq, n, labels, err);
	if (st == SVC_OK)
		m->epsilon = epsilon;
done:
	svc_label_work_free(env, &w);
	eqlist_free(env, &eqs);
	svc_free(env, rowlam);
	svc_free(env, absf);
	svc_free(env, roweq);
	svc_free(env, tree);
	svc_free(env, comp);
	return st;
}
