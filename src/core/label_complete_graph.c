/* label_complete_graph.c - Ben-Hur's labelling: rows linked when the segment between them stays in f >= 0 */
#include "label_complete_graph.h"
#include "label_algorithm3.h"
#include "kernel.h"
#include "label_trajectory.h"
#include "label_cut.h"
#include "unionfind.h"

#include <stdlib.h>
#include <string.h>

/*
 * Kernel sums per unit of svc_label_units_per_check: a unit is a
 * trajectory or a saddle height, tens of sums; a pair test is one sum per
 * point.
 */
#define GRAPH_SUMS_PER_UNIT 16

SvcStatus
svc_graph_check_rows(int64_t n, SvcError *err)
{
	if (n <= SVC_GRAPH_MAX_ROWS)
		return SVC_OK;
	svc_fail(err, SVC_ERR_LIMIT,
			 "too many rows for \"labeling\": \"complete-graph\": %lld", (long long) n);
	svc_error_detail(err, "The complete graph tests the segment between every pair of rows and labels at most %d rows.",
					 SVC_GRAPH_MAX_ROWS);
	svc_error_hint(err, "Set \"sample\" to %d or less to train on a uniform sample, or use \"labeling\": \"tree\".",
				   SVC_GRAPH_MAX_ROWS);
	return SVC_ERR_LIMIT;
}

/*
 * The segment's points t = k / (m + 1), k = 1..m, nearest the middle first:
 * a pair across a gap usually fails at the midpoint, after one kernel sum.
 * The endpoints are the rows themselves, known to be inside.
 */
static void
segment_order(int32_t m, double *t)
{
	int32_t		n = 0;

	/* k = (m + 1) / 2 is the middle (or just below it); then outwards */
	for (int32_t off = 0; n < m; off++)
	{
		int32_t		lo = (m + 1) / 2 - off;
		int32_t		hi = (m + 2) / 2 + off;

		if (lo >= 1)
			t[n++] = (double) lo / (m + 1);
		if (hi != lo && hi <= m && n < m)
			t[n++] = (double) hi / (m + 1);
	}
}

/* Whether every point of the segment a-b has f >= 0; *sums counts kernel sums. */
static bool
linked(const SvcModel *m, const double *a, const double *b, const double *t,
	   int32_t npts, double *pt, int64_t *sums)
{
	for (int32_t k = 0; k < npts; k++)
	{
		(*sums)++;
		if (svc_lambda_on_segment(m, a, b, t[k], pt) - m->offset < 0.0)
			return false;
	}
	return true;
}

SvcStatus
svc_graph_label_rows(const SvcEnv *env, const SvcModel *m, const double *xs,
					 int64_t n, const double *rowlam, int32_t *label,
					 int64_t *n_nodes, SvcError *err)
{
	int32_t		d = m->dims;
	int32_t		npts = m->opt.segment_points;
	int32_t    *node = NULL;	/* row of each node */
	int32_t    *parent = NULL;	/* union-find over nodes */
	double	   *t = NULL;
	double	   *pt = NULL;
	int32_t		nn = 0;
	int64_t		sums = 0;
	int64_t		every = svc_label_units_per_check(m) * GRAPH_SUMS_PER_UNIT;
	int64_t		next_check = 0;
	SvcStatus	st = SVC_ERR_NOMEM;

	st = svc_graph_check_rows(n, err);
	if (st != SVC_OK)
		return st;
	if (npts < 1 || npts > SVC_SEGMENT_POINTS_MAX)
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "segment_points %d is out of range",
						npts);
	st = SVC_ERR_NOMEM;
	node = svc_alloc(env, sizeof(int32_t) * (size_t) (n > 0 ? n : 1), err);
	parent = svc_alloc(env, sizeof(int32_t) * (size_t) (n > 0 ? n : 1), err);
	t = svc_alloc(env, sizeof(double) * (size_t) npts, err);
	pt = svc_alloc(env, sizeof(double) * (size_t) d, err);
	if (!node || !parent || !t || !pt)
		goto done;
	segment_order(npts, t);

	for (int64_t i = 0; i < n; i++)
		if (rowlam[i] - m->offset >= 0.0)
			node[nn++] = (int32_t) i;
	if (n_nodes)
		*n_nodes = nn;
	svc_uf_init(parent, nn);

	/*
	 * Links only matter for connectivity: a pair already in one component
	 * is skipped, which leaves at most nn - 1 successful tests, and the
	 * cost is that of the failing ones, mostly between components.
	 */
	for (int32_t a = 0; a < nn; a++)
	{
		const double *xa = xs + (size_t) node[a] * d;

		for (int32_t b = a + 1; b < nn; b++)
		{
			int32_t		ra = svc_uf_find(parent, a);
			int32_t		rb = svc_uf_find(parent, b);

			if (ra == rb)
				continue;
			if (sums >= next_check)
			{
				if (svc_interrupted(env, err))
				{
					st = SVC_ERR_INTERRUPTED;
					goto done;
				}
				next_check = sums + every;
			}
			if (linked(m, xa, xs + (size_t) node[b] * d, t, npts, pt, &sums))
				svc_uf_join(parent, ra, rb);
		}
	}

	/*
	 * Nodes get their root's row + 1 (roots are the lowest node, so the
	 * lowest row), the others 0 until the fill gives them their nearest
	 * node's; then 1 is taken off.
	 */
	for (int64_t i = 0; i < n; i++)
		label[i] = 0;
	for (int32_t a = 0; a < nn; a++)
		label[node[a]] = node[svc_uf_find(parent, a)] + 1;
	st = svc_label_fill_nearest(env, xs, n, d, label, 0, NULL, err);
	if (st != SVC_OK)
		goto done;

	/*
	 * The smallest cluster, as the tree's cuts have it (label_cut.h): a
	 * component with fewer rows, its own and those outside the domain
	 * nearest to it, gives its rows to the nearest larger one (at the
	 * automatic width small islands of the domain are common).  With no
	 * component that large, the largest stays (ties: the lowest row).
	 */
	if (nn > 0)
	{
		double		small = svc_cut_min_rows(&m->opt, n, m->rows_used);
		int32_t    *rows = parent;	/* reused: counts by label */
		int32_t		best = -1;
		bool		any = false,
					few = false;

		memset(rows, 0, sizeof(int32_t) * (size_t) n);
		for (int64_t i = 0; i < n; i++)
			rows[label[i] - 1]++;
		for (int64_t r = 0; r < n; r++)
		{
			if (rows[r] == 0)
				continue;
			if (best < 0 || rows[r] > rows[best])
				best = (int32_t) r;
			any = any || (double) rows[r] >= small;
			few = few || (double) rows[r] < small;
		}
		for (int64_t i = 0; few && i < n; i++)
		{
			int32_t		r = label[i] - 1;
			bool		big = any ? (double) rows[r] >= small : r == best;

			/* the nodes (inside rows) of the large components seed */
			if (!big || !(rowlam[i] - m->offset >= 0.0))
				label[i] = 0;
		}
		if (few)
		{
			st = svc_label_fill_nearest(env, xs, n, d, label, 0, NULL, err);
			if (st != SVC_OK)
				goto done;
		}
	}
	/* with no node, every row keeps 0: one cluster */
	for (int64_t i = 0; i < n; i++)
		label[i] = label[i] > 0 ? label[i] - 1 : 0;
	st = SVC_OK;
done:
	svc_free(env, node);
	svc_free(env, parent);
	svc_free(env, t);
	svc_free(env, pt);
	return st;
}

/* A row's (equilibrium, label), sorted to count the votes. */
typedef struct Vote
{
	int32_t		eq;
	int32_t		label;
} Vote;

static int
vote_cmp(const void *a, const void *b)
{
	const Vote *x = a;
	const Vote *y = b;

	if (x->eq != y->eq)
		return x->eq < y->eq ? -1 : 1;
	if (x->label != y->label)
		return x->label < y->label ? -1 : 1;
	return 0;
}

SvcStatus
svc_graph_eq_parts(const SvcEnv *env, const int32_t *label, const int32_t *roweq,
				   int64_t n, int32_t M, int32_t *part, SvcError *err)
{
	Vote	   *v = svc_alloc(env, sizeof(Vote) * (size_t) (n > 0 ? n : 1), err);
	int32_t    *winner = svc_alloc(env, sizeof(int32_t) * (size_t) (M > 0 ? M : 1), err);
	int32_t    *rep = svc_alloc(env, sizeof(int32_t) * (size_t) (n > 0 ? n : 1), err);
	SvcStatus	st = SVC_ERR_NOMEM;

	if (!v || !winner || !rep)
		goto done;
	for (int64_t i = 0; i < n; i++)
	{
		if (roweq[i] < 0 || roweq[i] >= M || label[i] < 0 || label[i] >= n)
		{
			st = svc_fail(err, SVC_ERR_INTERNAL, "row %lld has no equilibrium or label",
						  (long long) i);
			goto done;
		}
		v[i].eq = roweq[i];
		v[i].label = label[i];
	}
	qsort(v, (size_t) n, sizeof(Vote), vote_cmp);
	for (int32_t e = 0; e < M; e++)
		winner[e] = -1;
	/* runs of one (eq, label); the first longest run of an eq wins */
	for (int64_t i = 0, best = 0; i < n;)
	{
		int64_t		j = i;

		while (j < n && v[j].eq == v[i].eq && v[j].label == v[i].label)
			j++;
		if (i == 0 || v[i].eq != v[i - 1].eq)
			best = 0;
		if (j - i > best)
		{
			best = j - i;
			winner[v[i].eq] = v[i].label;
		}
		i = j;
	}
	for (int64_t i = 0; i < n; i++)
		rep[i] = -1;
	for (int32_t e = 0; e < M; e++)
	{
		if (winner[e] < 0)
		{
			st = svc_fail(err, SVC_ERR_INTERNAL, "equilibrium %d has no rows", e);
			goto done;
		}
		if (rep[winner[e]] < 0)
			rep[winner[e]] = e;
		part[e] = rep[winner[e]];
	}
	st = SVC_OK;
done:
	svc_free(env, v);
	svc_free(env, winner);
	svc_free(env, rep);
	return st;
}
