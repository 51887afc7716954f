/* label_complete_graph.c - Ben-Hur's labelling: rows linked when the segment between them stays in f >= 0 */
#include "label_complete_graph.h"
#include "label_algorithm3.h"
#include "kernel.h"
#include "label_trajectory.h"
#include "label_cut.h"
#include "unionfind.h"

#include <math.h>
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
 * "auto": the segment's points are at most SEGMENT_SPACING kernel widths
 * 1 / sqrt(2 gamma) apart (gamma the narrowest width; bandwidth_k only
 * widens), so that no gap in the domain that wide lies between two of
 * them; at least SVC_SEGMENT_POINTS_FLOOR (the fixed count before) and at
 * most SEGMENT_POINTS_CAP points (100 widths).  Millions of pairs are
 * tried across the gap between two clusters, and with a fixed count one
 * long segment whose points all missed a narrow gap was enough to join
 * them.
 */
#define SEGMENT_SPACING 0.25
#define SEGMENT_POINTS_CAP 400

/* The number of points to test between a and b (see above). */
static int32_t
segment_count(const SvcModel *m, const double *a, const double *b)
{
	double		len2 = 0.0;
	double		steps;

	if (m->opt.segment_points != SVC_SEGMENT_POINTS_AUTO)
		return m->opt.segment_points;
	for (int32_t j = 0; j < m->dims; j++)
		len2 += (a[j] - b[j]) * (a[j] - b[j]);
	/* len / (c w) intervals, w = 1 / sqrt(2 gamma): len^2 2 gamma / c^2 */
	steps = sqrt(len2 * 2.0 * m->gamma) / SEGMENT_SPACING;
	if (!(steps < SEGMENT_POINTS_CAP))	/* also NaN */
		return SEGMENT_POINTS_CAP;
	if (steps <= SVC_SEGMENT_POINTS_FLOOR + 1)
		return SVC_SEGMENT_POINTS_FLOOR;
	return (int32_t) ceil(steps) - 1;
}

/*
 * Whether every point x_a + t (x_b - x_a), t = k / (npts + 1), k = 1..npts,
 * has f >= 0; *sums counts kernel sums.  The points are tried coarse to
 * fine (the middle, then the middles of the halves, breadth first), so a
 * pair across a gap, wherever the gap lies on the segment, usually fails
 * within a few sums; the answer does not depend on the order.  queue holds
 * npts intervals of k (exclusive ends).
 */
static bool
linked(const SvcModel *m, const double *a, const double *b, int32_t npts,
	   int32_t (*queue)[2], double *pt, int64_t *sums)
{
	int32_t		head = 0,
				tail = 0;

	queue[tail][0] = 0;
	queue[tail++][1] = npts + 1;	/* npts >= 1: a point inside */
	while (head < tail)
	{
		int32_t		lo = queue[head][0];
		int32_t		hi = queue[head++][1];
		int32_t		mid = lo + (hi - lo) / 2;

		(*sums)++;
		if (svc_lambda_on_segment(m, a, b, (double) mid / (npts + 1), pt) - m->offset < 0.0)
			return false;
		/* the halves with a point inside: one interval per point, npts in all */
		if (mid - lo >= 2)
		{
			queue[tail][0] = lo;
			queue[tail++][1] = mid;
		}
		if (hi - mid >= 2)
		{
			queue[tail][0] = mid;
			queue[tail++][1] = hi;
		}
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
	int32_t		(*queue)[2] = NULL;
	double	   *pt = NULL;
	int32_t		nn = 0;
	int64_t		sums = 0;
	int64_t		every = svc_label_units_per_check(m) * GRAPH_SUMS_PER_UNIT;
	int64_t		next_check = 0;
	SvcStatus	st = SVC_ERR_NOMEM;

	st = svc_graph_check_rows(n, err);
	if (st != SVC_OK)
		return st;
	if (npts != SVC_SEGMENT_POINTS_AUTO && (npts < 1 || npts > SVC_SEGMENT_POINTS_MAX))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "segment_points %d is out of range",
						npts);
	st = SVC_ERR_NOMEM;
	node = svc_alloc(env, sizeof(int32_t) * (size_t) (n > 0 ? n : 1), err);
	parent = svc_alloc(env, sizeof(int32_t) * (size_t) (n > 0 ? n : 1), err);
	if (npts == SVC_SEGMENT_POINTS_AUTO)
		npts = SEGMENT_POINTS_CAP;
	queue = svc_alloc(env, sizeof(*queue) * (size_t) npts, err);
	pt = svc_alloc(env, sizeof(double) * (size_t) d, err);
	if (!node || !parent || !queue || !pt)
		goto done;

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
		const double *xb;

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
			xb = xs + (size_t) node[b] * d;
			if (linked(m, xa, xb, segment_count(m, xa, xb), queue, pt, &sums))
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
	svc_free(env, queue);
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
