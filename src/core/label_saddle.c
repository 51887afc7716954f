/* label_saddle.c - the saddle tree: candidate, connecting and data edges, and their maximum spanning tree */
#include "label_saddle.h"
#include "kernel.h"
#include "rowtree.h"
#include "unionfind.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Saddle tree (the measurements behind these: doc/design-notes.md). */
/*
 * Points of a segment whose lambdas are summed together (scratch of
 * SEG_BATCH rows): each support vector is read once for four of them.
 */
#define SEG_BATCH			8
#define CANDIDATE_CHECK_EVERY 64	/* equilibria scanned between interrupt checks */
#define TREE_KNN			3		/* straight segments: each one's 3 nearest */
#define SADDLE_POINTS		32		/* evenly spaced, endpoints included */
#define SADDLE_REFINE		4		/* golden-section steps around the minimum */
#define DATA_KNN			10		/* data paths: each row's 10 nearest rows */
#define DATA_MAX_SIGMA		4.0		/* ... no farther than 4 sigma */
#define DATA_STEP_SIGMA		0.5		/* ... checked every half sigma */
#define DATA_MAX_STEPS		8

/*
 * Saddle height between two equilibria: the lowest lambda on the straight
 * segment, from SADDLE_POINTS evenly spaced points, then a few
 * golden-section steps in the bracket around the lowest of them; clamped
 * at 0 since negative alphas can push lambda below.  A chord across a
 * curved ridge under-estimates the pass; the data edges make up for it
 * (pushing the points uphill was measured and not adopted:
 * doc/design-notes.md).
 */
/*
 * lambda at a + (k / steps) (b - a) for k = k0 .. k0 + np - 1 (np at most
 * SEG_BATCH) into v: each svc_lambda_on_segment's value to the bit (the
 * same points, svc_kernel_sum's sums); pts is scratch of SEG_BATCH rows.
 */
static void
lambdas_on_segment(const SvcModel *m, const double *a, const double *b, int k0, int np,
				   int steps, double *pts, double *v)
{
	int32_t		d = m->dims;

	for (int p = 0; p < np; p++)
	{
		double		t = (double) (k0 + p) / steps;
		double	   *pt = pts + (size_t) p * d;

		for (int32_t j = 0; j < d; j++)
			pt[j] = a[j] + t * (b[j] - a[j]);
	}
	svc_kernel_sum_points(m->sv, m->alpha, m->sv_gamma, m->n_sv, d, m->gamma, pts, np, v);
}

/* pt: scratch of SEG_BATCH rows */
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

	for (int k0 = 0; k0 < SADDLE_POINTS; k0 += SEG_BATCH)
	{
		int			np = SADDLE_POINTS - k0 < SEG_BATCH ? SADDLE_POINTS - k0 : SEG_BATCH;
		double		v[SEG_BATCH];

		lambdas_on_segment(m, a, b, k0, np, SADDLE_POINTS - 1, pt, v);
		for (int k = k0; k < k0 + np; k++)
			if (v[k - k0] < best)
			{
				best = v[k - k0];
				kbest = k;
			}
	}
	if (kbest > 0 && kbest < SADDLE_POINTS - 1)
	{
		lo = (double) (kbest - 1) / (SADDLE_POINTS - 1);
		hi = (double) (kbest + 1) / (SADDLE_POINTS - 1);
		t1 = hi - g * (hi - lo);
		t2 = lo + g * (hi - lo);
		v1 = svc_lambda_on_segment(m, a, b, t1, pt);
		v2 = svc_lambda_on_segment(m, a, b, t2, pt);
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
				v1 = svc_lambda_on_segment(m, a, b, t1, pt);
			}
			else
			{
				lo = t1;
				t1 = t2;
				v1 = v2;
				t2 = lo + g * (hi - lo);
				v2 = svc_lambda_on_segment(m, a, b, t2, pt);
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
	const SvcEdge *x = pa;
	const SvcEdge *y = pb;

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
	const SvcEdge *x = pa;
	const SvcEdge *y = pb;

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
 * (a chord is only a lower bound on the pass, and testing far pairs made
 * results worse); these few keep it sound where rows are too far apart
 * for data edges (high dimension, where every support vector can be its
 * own equilibrium).  Three nearest cut as well as many more pairs for
 * half the time (doc/design-notes.md).  Returns the edge count in
 * *n_edges; *edges is allocated from env.
 */
static SvcStatus
candidate_edges(const SvcEnv *env, const SvcEqList *eqs, SvcEdge **edges,
				int64_t *n_edges, SvcError *err)
{
	int32_t		M = eqs->n;
	int32_t		d = eqs->dims;
	size_t		cap;
	SvcEdge	   *e;
	int64_t		ne = 0;
	Neigh		buf[TREE_KNN];

	*edges = NULL;
	*n_edges = 0;
	cap = (size_t) M * TREE_KNN;
	if (!svc_size_mul(cap, sizeof(SvcEdge), &cap))
		return svc_fail(err, SVC_ERR_LIMIT, "too many equilibria to label: %d", M);
	e = svc_alloc(env, cap > 0 ? cap : sizeof(SvcEdge), err);
	if (!e)
		return SVC_ERR_NOMEM;

	for (int32_t a = 0; a < M; a++)
	{
		int			nb = 0;
		const double *xa = eqs->x + (size_t) a * d;

		if (a % CANDIDATE_CHECK_EVERY == 0 && svc_interrupted(env, err))
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

		qsort(e, (size_t) ne, sizeof(SvcEdge), edge_cmp_pair);
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
connect_components(const SvcEnv *env, const SvcEqList *eqs, SvcEdge **edges,
				   int64_t *n_edges, SvcError *err)
{
	int32_t		M = eqs->n;
	int32_t		d = eqs->dims;
	int32_t    *parent = NULL;
	int32_t    *link_to = NULL;
	int32_t    *link_from = NULL;
	int32_t    *link_root = NULL;	/* component of link_to, before joining */
	double	   *link_d2 = NULL;
	int64_t		cap = *n_edges;	/* at least: the caller's array may be larger */
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
		SvcEdge	   *grown;

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
		st = svc_grow(env, (void **) edges, &cap, *n_edges + n_new, sizeof(SvcEdge), err);
		if (st != SVC_OK)
			goto done;
		grown = *edges;
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
 * spirals, moons), but the rows themselves lie on
 * the ridge.  Two near rows that climb to different equilibria a and b
 * bound the pass between a and b from below by the lowest lambda on the
 * short segment between them, so each pair of neighbouring rows across a
 * basin boundary proposes an edge (a, b) with that height; the highest
 * proposal per pair is kept.  Appends to *edges, reallocating.
 */
static SvcStatus
data_edges(const SvcEnv *env, const SvcModel *m, const SvcEqList *eqs,
		   const double *xs, int64_t n, const int32_t *roweq,
		   const double *rowlam, SvcEdge **edges, int64_t *n_edges, SvcError *err)
{
	int32_t		d = m->dims;
	double		sigma = 1.0 / sqrt(2.0 * m->gamma);
	double		max_d2 = (DATA_MAX_SIGMA * sigma) * (DATA_MAX_SIGMA * sigma);
	SvcRowTree	tree = {0};
	int64_t		idx[DATA_KNN + 1];
	double		nd2[DATA_KNN + 1];
	SvcEdge	   *out = NULL;
	int64_t		n_out = 0,
				cap = 0;
	double	   *pt = NULL;
	int64_t		every = svc_label_units_per_check(m);
	SvcStatus	st;

	st = svc_rowtree_build(env, xs, n, d, roweq, &tree, err);
	if (st != SVC_OK)
		goto done;
	pt = svc_alloc(env, sizeof(double) * SEG_BATCH * (size_t) d, err);
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
		/*
		 * A row proposes only pairs across basins among its nearest rows
		 * and within max_d2: with no row of another basin within either
		 * (a bound on the k-th nearest from a leaf near it will do) it
		 * proposes none.  In separated clusters, nearly every row.
		 */
		{
			double		r2 = svc_rowtree_kth_bound(&tree, i, DATA_KNN + 1);

			if (!svc_rowtree_other_within(&tree, roweq[i], xi, r2 < max_d2 ? r2 : max_d2))
				continue;
		}
		found = svc_rowtree_knearest(&tree, xi, DATA_KNN + 1, idx, nd2);
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
			for (int k0 = 1; k0 < steps; k0 += SEG_BATCH)
			{
				int			np = steps - k0 < SEG_BATCH ? steps - k0 : SEG_BATCH;
				double		v[SEG_BATCH];

				lambdas_on_segment(m, xi, xj, k0, np, steps, pt, v);
				for (int k = 0; k < np; k++)
					h = v[k] < h ? v[k] : h;
			}
			st = svc_grow(env, (void **) &out, &cap, n_out + 1, sizeof(SvcEdge), err);
			if (st != SVC_OK)
				goto done;
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
		SvcEdge	   *all;
		int64_t		w = 0;
		int64_t		all_cap = *n_edges;

		st = svc_grow(env, (void **) edges, &all_cap, *n_edges + n_out, sizeof(SvcEdge), err);
		if (st != SVC_OK)
			goto done;
		all = *edges;
		memcpy(all + *n_edges, out, sizeof(SvcEdge) * (size_t) n_out);
		qsort(all, (size_t) (*n_edges + n_out), sizeof(SvcEdge), edge_cmp_pair);
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
		*n_edges = w;
	}
	st = SVC_OK;
done:
	svc_rowtree_free(env, &tree);
	svc_free(env, out);
	svc_free(env, pt);
	return st;
}

/*
 * The saddle tree: the maximum spanning tree of the candidate and data
 * edges by saddle height.  Writes its M - 1 edges, by decreasing saddle,
 * into tree[] (allocated by the caller); svc_cut_apply cuts it.
 */
SvcStatus
svc_saddle_tree(const SvcEnv *env, const SvcModel *m, const SvcEqList *eqs,
				const double *xs, int64_t n_rows, const int32_t *roweq,
				const double *rowlam, const double *cap, SvcEdge *tree,
				SvcError *err)
{
	int32_t		M = eqs->n;
	int32_t		d = eqs->dims;
	SvcEdge	   *edges = NULL;
	int64_t		ne = 0;
	int32_t		nt = 0;
	int32_t    *mst = NULL;		/* union-find of the spanning tree */
	double	   *pt = NULL;
	int64_t		every = svc_label_units_per_check(m);
	SvcStatus	st;

	st = candidate_edges(env, eqs, &edges, &ne, err);
	if (st != SVC_OK)
		goto done;
	st = connect_components(env, eqs, &edges, &ne, err);
	if (st != SVC_OK)
		goto done;

	mst = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);
	pt = svc_alloc(env, sizeof(double) * SEG_BATCH * (size_t) d, err);
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
	for (int64_t k = 0; cap != NULL && k < ne; k++)
		edges[k].saddle = fmin(edges[k].saddle, fmin(cap[edges[k].a], cap[edges[k].b]));
	if (ne > 1)
		qsort(edges, (size_t) ne, sizeof(SvcEdge), edge_cmp_saddle);

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
