/*
 * label_cut.c - clusters from the saddle tree of a model (see label_cut.h)
 *
 * Every rule decides, edge by edge from the highest pass down, whether to
 * remove the edge; the clusters are the parts joined by the edges kept.
 * Heights are compared as lambda = f + offset, clamped at 0 as training
 * clamps them, and computed the same way from the stored f at training
 * and at any later cut, so a model cut again with its own options gives
 * its own labelling back bit for bit.
 */
#include "label_cut.h"
#include "kernel.h"
#include "label_lineage.h"
#include "unionfind.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CLUSTER_ROWS	5	/* default floor of the minimum cluster size */

/*
 * "separated": a part smaller than the floor in labelled rows but not in
 * rows of the sample stands only when its peak lies more than this many
 * spreads of its neighbour from the neighbour's peak.  A tail fragment of
 * a broad cluster lies within 2-3.6 spreads (plain 2-D blobs, noisy
 * embeddings), a small blob of its own beyond 4 in 2-D (2-7 in 8-16-D:
 * there the spread counts along the line between the peaks, below).  A part under
 * the floor in sample rows (a blob of 0.1% of the rows has 3 labelled rows)
 * is held to the same test with the neighbour's spread at least the pooled
 * spread of the cut in labelled rows: a small neighbour has one or two
 * support vectors, so its own spread says nothing (doc/design-notes.md).
 */
#define APART_SPREADS		4.0
/*
 * Above two columns a spread counts along the line between the two peaks:
 * the distance of the support vectors from a peak grows like sqrt(d) while
 * the gap between the peaks does not (quick benchmark, design notes).
 */
#define APART_LINE_SPREADS	10.0
/*
 * Above two columns a part also stands beyond 3.5 spreads of the 2-D
 * test: once a neighbour holds a blob joined before, the offsets of that
 * blob's support vectors inflate its spread along the line to the next
 * blob (full-size blobs_k40_d8: 32 -> 38 of 40), while tail fragments of
 * the embeddings lie 2.7-3.1 such spreads out (design notes).
 */
#define APART_WIDE_SPREADS	3.5
/*
 * Above two columns a neighbour with fewer than this many support vectors
 * (one on its peak: a spread of ~0) says nothing of its extent along the
 * line, so its spread along the line counts at least the smaller part's
 * own: else a fragment beside it stands by the line test once 10 floors
 * (pooled spread / sqrt(d)) away (emb64_k20 21 -> 20 of 20).  The 3.5-spread test
 * keeps its floor: a small blob beside such a neighbour still stands there.
 */
#define APART_LEAST_SV		2
/*
 * Above two columns a part beside a neighbour of fewer than APART_LEAST_SV
 * support vectors stands only beyond this many kernel widths sigma =
 * 1 / sqrt(2 gamma) of it: the neighbour is one kernel's hill, as wide as
 * the kernel whatever its support vectors' spread (~0) says.  Tail
 * fragments of the embeddings lay 3.86-3.98 sigma from such a neighbour
 * (one at 4.10), small blobs 4.14-6.7 (quick benchmark, seeds 42 and 1-3).
 */
#define APART_KERNEL_WIDTHS	4.06
/*
 * Above two columns the persistence cut also removes an edge that joins a
 * part of at least the least rows of "separated" (one labelled row) when
 * that part lies beyond APART_KERNEL_WIDTHS kernel widths of the other's
 * peak and apart from it by part_apart (under the floor in sample rows,
 * with the pooled spread): a cluster the sample holds with one or a few
 * support vectors is a shallow hill, whose pass to a big neighbour's flank
 * stays above merge_ratio of its low peak however far away it lies
 * (emb384_k50: 36 labelled rows, one support vector, 4.68 widths from its
 * neighbour, pass at 0.58 of its peak).  Parts under the minimum size too:
 * the small blobs of blobs_k100_d16 (2-14 labelled rows, 1-2 support
 * vectors) passed at 0.41-0.76 of their peaks 3.6-4.9 widths from a
 * neighbour, more of them the more support vectors the neighbour had
 * (budget 300 -> 600: k 93 -> 89 of 100).  Parts of one cluster kept by
 * persistence lay within 3.6 widths of each other (quick benchmark,
 * design notes).
 */

/*
 * Above two columns two parts whose peaks both lie under RIPPLE_ALPHA of
 * the mean |alpha| of a support vector are ripples: hills of one or two
 * support vectors of little weight on the threshold (a one-SV hill rises
 * by its own alpha), the way the sample holds a sparse cluster.  Persistence
 * keeps two ripples joined when their pass is at least RIPPLE_RATIO of the
 * lower peak, not merge_ratio: the ratio of such low heights says little,
 * while a pass near zero still parts them.  Parts of one sparse cluster of
 * the embeddings lay at peaks of 0.05-0.12 mean alphas, passes of 0.12-0.36
 * of the lower peak (3.8-4.8 kernel widths, removed by persistence and
 * part_apart's tests); small blobs of blobs_k100_d16 beside each other at
 * 0.28 or more, and two ripple blobs of blobs_k40_d8 over a pass of 0.014
 * (quick benchmark, design notes).
 */
#define RIPPLE_ALPHA		0.2
#define RIPPLE_RATIO		0.1
/*
 * After the persistence cut, above two columns, two clusters whose peaks
 * are both ripples within this many kernel widths of each other join,
 * though no kept edge links them: each ripple of a sparse cluster passes
 * highest to a neighbour cluster's flank, so the tree hangs them on it one
 * by one and the cut parts them from it one by one (emb128_k10's sparse
 * class: 3-4 clusters whose peaks lay 3.8-5.3 widths apart, 4.9-5.6 from
 * the neighbour's peak, which is no ripple; two ripple blobs of
 * blobs_k40_d8 lay 6.5 apart).  At 5.5 a blob of blobs_k100_d16 and
 * clusters of emb384_k50 joined (quick benchmark, design notes).
 */
#define RIPPLE_WIDTHS		5.0

typedef struct CutWork
{
	int32_t		M;
	int32_t    *parent;			/* union-find over equilibria */
	int64_t    *rows;			/* rows of the part, at its root */
	double	   *peak;			/* highest lambda of the part, at its root */
	double	   *acc;			/* eom: sum of rows * height they leave */
	int32_t    *node;			/* eom: the part's node, -1 while small */
	bool	   *removed;		/* [M - 1] per edge */
	/* "separated" (persistence and level): NULL when no part is in between */
	double		small_apart;	/* the floor for a part apart from its neighbour */
	double		least_rows;		/* below small_apart down to this, apart by pool */
	double		pool;			/* the pooled spread, for parts under small_apart */
	double		ripple;			/* above two columns, a peak under it is a ripple */
	int32_t    *peak_eq;		/* [M]: the part's highest equilibrium, at its root */
	int32_t    *sv_eq;			/* [n_sv]: the equilibrium nearest each support vector */
	double	   *line;			/* [dims]: unit vector between two peaks */
	/* eom nodes: at most one per equilibrium and one per joining edge */
	int32_t		n_nodes;
	int32_t    *child0;
	int32_t    *child1;
	int32_t    *node_edge;		/* edge that made the node, -1 for leaves */
	double	   *stab;
	double	   *best;
	bool	   *selected;
} CutWork;

static double
height(const SvcModel *m, double f)
{
	double		lam = f + m->offset;

	return lam > 0.0 ? lam : 0.0;
}

static double
cut_min_rows(const SvcOptions *opt, int64_t rows, int64_t sample_rows, bool sample)
{
	double		floor_rows;

	if (opt->min_cluster_size > 0)
	{
		/* rows of the sample, scaled to the rows that label (options.h) */
		if (sample && rows > 0 && sample_rows > rows)
			return (double) opt->min_cluster_size * (double) rows / (double) sample_rows;
		return (double) opt->min_cluster_size;
	}
	floor_rows = opt->min_cluster_share * (double) rows;
	return floor_rows > MIN_CLUSTER_ROWS ? floor_rows : MIN_CLUSTER_ROWS;
}

double
svc_cut_min_rows(const SvcOptions *opt, int64_t rows, int64_t sample_rows)
{
	return cut_min_rows(opt, rows, sample_rows, opt->min_size_rows == SVC_SIZE_ROWS_SAMPLE);
}

double
svc_cut_min_rows_apart(const SvcOptions *opt, int64_t rows, int64_t sample_rows)
{
	return cut_min_rows(opt, rows, sample_rows, opt->min_size_rows != SVC_SIZE_ROWS_LABELLED);
}

static int64_t
labelled_rows(const SvcModel *m)
{
	int64_t		total = 0;

	for (int32_t i = 0; i < m->n_eq; i++)
		total += m->eq_rows[i];
	return total;
}

static void
work_free(const SvcEnv *env, CutWork *w)
{
	svc_free(env, w->parent);
	svc_free(env, w->rows);
	svc_free(env, w->peak);
	svc_free(env, w->acc);
	svc_free(env, w->node);
	svc_free(env, w->removed);
	svc_free(env, w->child0);
	svc_free(env, w->child1);
	svc_free(env, w->node_edge);
	svc_free(env, w->stab);
	svc_free(env, w->best);
	svc_free(env, w->selected);
	svc_free(env, w->peak_eq);
	svc_free(env, w->sv_eq);
	svc_free(env, w->line);
	memset(w, 0, sizeof(*w));
}

/*
 * The parts' arrays always; the cluster tree's nodes (acc to selected) only
 * for the rules that build it (nodes true: n_clusters and eom).
 */
static SvcStatus
work_init(const SvcEnv *env, const SvcModel *m, bool nodes, CutWork *w,
		  SvcError *err)
{
	int32_t		M = m->n_eq;
	size_t		nn = 2 * (size_t) M;

	memset(w, 0, sizeof(*w));
	w->M = M;
	w->parent = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);
	w->rows = svc_alloc(env, sizeof(int64_t) * (size_t) M, err);
	w->peak = svc_alloc(env, sizeof(double) * (size_t) M, err);
	w->removed = svc_alloc0(env, sizeof(bool) * (size_t) M, err);
	if (!w->parent || !w->rows || !w->peak || !w->removed)
	{
		work_free(env, w);
		return SVC_ERR_NOMEM;
	}
	if (!nodes)
		return SVC_OK;
	w->acc = svc_alloc(env, sizeof(double) * (size_t) M, err);
	w->node = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);
	w->child0 = svc_alloc(env, sizeof(int32_t) * nn, err);
	w->child1 = svc_alloc(env, sizeof(int32_t) * nn, err);
	w->node_edge = svc_alloc(env, sizeof(int32_t) * nn, err);
	w->stab = svc_alloc(env, sizeof(double) * nn, err);
	w->best = svc_alloc(env, sizeof(double) * nn, err);
	w->selected = svc_alloc0(env, sizeof(bool) * nn, err);
	if (!w->acc || !w->node || !w->child0 || !w->child1 || !w->node_edge ||
		!w->stab || !w->best || !w->selected)
	{
		work_free(env, w);
		return SVC_ERR_NOMEM;
	}
	return SVC_OK;
}

static void
parts_reset(const SvcModel *m, CutWork *w)
{
	svc_uf_init(w->parent, w->M);
	for (int32_t i = 0; i < w->M; i++)
	{
		w->rows[i] = m->eq_rows[i];
		w->peak[i] = height(m, m->eq_f[i]);
		if (w->peak_eq)
			w->peak_eq[i] = i;
	}
}

/*
 * The nearest equilibrium of every support vector, for the spreads of
 * the parts ("separated"; n_sv x n_eq distances, once per cut).
 */
static SvcStatus
assign_support_vectors(const SvcEnv *env, const SvcModel *m, CutWork *w, SvcError *err)
{
	size_t		d = (size_t) m->dims;

	for (int32_t i = 0; i < m->n_sv; i++)
	{
		double		best = INFINITY;

		if (i % 64 == 0 && svc_interrupted(env, err))
			return SVC_ERR_INTERRUPTED;
		w->sv_eq[i] = 0;
		for (int32_t e = 0; e < m->n_eq; e++)
		{
			double		dd = svc_sqdist(m->sv + (size_t) i * d, m->eq + (size_t) e * d, m->dims);

			if (dd < best)
			{
				best = dd;
				w->sv_eq[i] = e;
			}
		}
	}
	return SVC_OK;
}

/*
 * The spread of the part at root r: the root mean square distance of its
 * support vectors (those nearest one of its equilibria) from its peak,
 * weighted by |alpha|; 0 when it has none.
 */
static double
part_spread(const SvcModel *m, CutWork *w, int32_t r)
{
	const double *peak = m->eq + (size_t) w->peak_eq[r] * (size_t) m->dims;
	double		num = 0.0;
	double		den = 0.0;

	for (int32_t i = 0; i < m->n_sv; i++)
	{
		double		a;

		if (svc_uf_find(w->parent, w->sv_eq[i]) != r)
			continue;
		a = fabs(m->alpha[i]);
		num += a * svc_sqdist(m->sv + (size_t) i * (size_t) m->dims, peak, m->dims);
		den += a;
	}
	return den > 0.0 ? sqrt(num / den) : 0.0;
}

/*
 * The spread of the part at root r along the unit vector u from its peak:
 * the root mean square of its support vectors' offsets along u, weighted
 * by |alpha|; 0 when it has none.
 */
static double
part_line_spread(const SvcModel *m, CutWork *w, int32_t r, const double *u)
{
	const double *peak = m->eq + (size_t) w->peak_eq[r] * (size_t) m->dims;
	double		num = 0.0;
	double		den = 0.0;

	for (int32_t i = 0; i < m->n_sv; i++)
	{
		const double *x = m->sv + (size_t) i * (size_t) m->dims;
		double		a;
		double		p = 0.0;

		if (svc_uf_find(w->parent, w->sv_eq[i]) != r)
			continue;
		a = fabs(m->alpha[i]);
		for (int32_t j = 0; j < m->dims; j++)
			p += (x[j] - peak[j]) * u[j];
		num += a * p * p;
		den += a;
	}
	return den > 0.0 ? sqrt(num / den) : 0.0;
}

/* The number of support vectors of the part at root r. */
static int32_t
part_sv_count(const SvcModel *m, CutWork *w, int32_t r)
{
	int32_t		n = 0;

	for (int32_t i = 0; i < m->n_sv; i++)
		if (svc_uf_find(w->parent, w->sv_eq[i]) == r)
			n++;
	return n;
}

/* The square of k kernel widths, a width being 1 / sqrt(2 gamma) (gamma > 0). */
static double
sq_kernel_widths(const SvcModel *m, double k)
{
	double		width = k / sqrt(2.0 * m->gamma);

	return width * width;
}

/*
 * Whether the smaller part (root cs) lies apart from the larger (cl): its
 * peak beyond APART_SPREADS spreads of cl from cl's peak, or above two
 * columns beyond APART_LINE_SPREADS spreads along the line between the
 * peaks (least then counts per column, least / sqrt(d)) or beyond
 * APART_WIDE_SPREADS spreads of cl.  A larger part
 * without support vectors has no spread: the small one counts as apart
 * (when cl has fewer than APART_LEAST_SV, cs lies apart only beyond
 * APART_KERNEL_WIDTHS kernel widths, and along the line cl's spread counts
 * at least cs's).  least: the smallest spread to count with.
 */
static bool
part_apart(const SvcModel *m, CutWork *w, int32_t cs, int32_t cl, double least)
{
	const double *ps = m->eq + (size_t) w->peak_eq[cs] * (size_t) m->dims;
	const double *pl = m->eq + (size_t) w->peak_eq[cl] * (size_t) m->dims;
	double		d2 = svc_sqdist(ps, pl, m->dims);
	double		spread;

	if (m->dims > 2 && d2 > 0.0)
	{
		double		dist = sqrt(d2);
		double		line_least = least / sqrt((double) m->dims);

		for (int32_t j = 0; j < m->dims; j++)
			w->line[j] = (ps[j] - pl[j]) / dist;
		spread = part_line_spread(m, w, cl, w->line);
		if (part_sv_count(m, w, cl) < APART_LEAST_SV)
		{
			if (m->gamma > 0.0 && d2 <= sq_kernel_widths(m, APART_KERNEL_WIDTHS))
				return false;
			spread = fmax(spread, part_line_spread(m, w, cs, w->line));
		}
		if (spread < line_least)
			spread = line_least;
		if (d2 > APART_LINE_SPREADS * APART_LINE_SPREADS * spread * spread)
			return true;
	}
	spread = part_spread(m, w, cl);
	if (spread < least)
		spread = least;
	if (m->dims > 2)
		return d2 > APART_WIDE_SPREADS * APART_WIDE_SPREADS * spread * spread;
	return d2 > APART_SPREADS * APART_SPREADS * spread * spread;
}

/*
 * "separated", persistence, above two columns: whether a part (root cs)
 * that persistence keeps joined to cl stands anyway, lying beyond
 * APART_KERNEL_WIDTHS kernel widths of cl's peak and apart from cl (least
 * as part_apart's).
 */
static bool
part_far_apart(const SvcModel *m, CutWork *w, int32_t cs, int32_t cl, double least)
{
	if (m->dims <= 2 || m->gamma <= 0.0)
		return false;
	if (svc_sqdist(m->eq + (size_t) w->peak_eq[cs] * (size_t) m->dims,
				   m->eq + (size_t) w->peak_eq[cl] * (size_t) m->dims, m->dims) <=
		sq_kernel_widths(m, APART_KERNEL_WIDTHS))
		return false;
	return part_apart(m, w, cs, cl, least);
}

/*
 * persistence or level: one pass, each edge decided on the parts it joins.
 * With peak_eq (option "separated"), a part of at least small_apart rows
 * but fewer than small stands only when it lies apart from the other; one
 * of at least least_rows but fewer than small_apart, when it lies apart
 * with the other's spread at least the pooled spread; one that
 * persistence keeps stands when it lies far apart (part_far_apart, with
 * the pooled spread under small_apart); two ripples are judged by
 * RIPPLE_RATIO instead (ripple is 0 in two columns: no peak is under it).
 */
static void
cut_by_height(const SvcModel *m, CutWork *w, double small, bool by_level)
{
	double		level = by_level ? m->opt.level + m->offset : 0.0;

	parts_reset(m, w);
	for (int32_t k = 0; k < m->n_edges; k++)
	{
		int32_t		ca = svc_uf_find(w->parent, m->edge_a[k]);
		int32_t		cb = svc_uf_find(w->parent, m->edge_b[k]);
		double		s = height(m, m->edge_f[k]);
		double		lower = w->peak[ca] < w->peak[cb] ? w->peak[ca] : w->peak[cb];
		int32_t		cs = w->rows[ca] < w->rows[cb] ? ca : cb;
		double		floor_rows = w->peak_eq ? w->least_rows : small;
		bool		keep;

		if ((double) w->rows[ca] < floor_rows || (double) w->rows[cb] < floor_rows)
			keep = true;
		else if (by_level)
			keep = s >= level;
		else if (w->peak[ca] < w->ripple && w->peak[cb] < w->ripple)
			keep = s >= RIPPLE_RATIO * lower;
		else
		{
			keep = s >= m->opt.merge_ratio * lower;
			if (keep && w->peak_eq)
				keep = !part_far_apart(m, w, cs, cs == ca ? cb : ca,
									   (double) w->rows[cs] < w->small_apart ? w->pool : 0.0);
		}
		if (!keep && w->peak_eq && (double) w->rows[cs] < small)
			keep = !part_apart(m, w, cs, cs == ca ? cb : ca,
							   (double) w->rows[cs] < w->small_apart ? w->pool : 0.0);
		if (keep)
		{
			int64_t		sum = w->rows[ca] + w->rows[cb];
			double		top = w->peak[ca] > w->peak[cb] ? w->peak[ca] : w->peak[cb];
			int32_t		top_eq = w->peak_eq ?
				w->peak_eq[w->peak[ca] >= w->peak[cb] ? ca : cb] : 0;
			int32_t		r = svc_uf_join(w->parent, ca, cb);

			w->rows[r] = sum;
			w->peak[r] = top;
			if (w->peak_eq)
				w->peak_eq[r] = top_eq;
		}
		else
			w->removed[k] = true;
	}
}

/*
 * "separated": the pooled spread, the root mean square distance of every
 * support vector from the peak of its part, weighted by |alpha|, in the
 * cut that counts labelled rows (a first pass that sets no part apart).
 */
static double
pooled_spread(const SvcModel *m, CutWork *w, double small, bool by_level)
{
	double		least = w->least_rows;
	double		num = 0.0;
	double		den = 0.0;

	w->least_rows = small;
	cut_by_height(m, w, small, by_level);
	w->least_rows = least;
	for (int32_t i = 0; i < m->n_sv; i++)
	{
		int32_t		r = svc_uf_find(w->parent, w->sv_eq[i]);
		double		a = fabs(m->alpha[i]);

		num += a * svc_sqdist(m->sv + (size_t) i * (size_t) m->dims,
						   m->eq + (size_t) w->peak_eq[r] * (size_t) m->dims, m->dims);
		den += a;
	}
	memset(w->removed, 0, sizeof(bool) * (size_t) w->M);
	return den > 0.0 ? sqrt(num / den) : 0.0;
}

static int32_t
new_node(CutWork *w, int32_t c0, int32_t c1, int32_t edge)
{
	int32_t		id = w->n_nodes++;

	w->child0[id] = c0;
	w->child1[id] = c1;
	w->node_edge[id] = edge;
	w->stab[id] = 0.0;
	return id;
}

/*
 * The parts of at least the minimum size as they appear in the tree: a
 * leaf node when a part first reaches the size, a parent node where two
 * such parts meet (the "true" joins).  Smaller parts join without a node;
 * their rows leave the part they join at that edge's height.  Fills the
 * nodes with their stability; returns the root node, or -1 when even all
 * rows together are fewer than the minimum size.
 */
static int32_t
build_nodes(const SvcModel *m, CutWork *w, double small)
{
	int32_t		root;

	parts_reset(m, w);
	w->n_nodes = 0;
	for (int32_t i = 0; i < w->M; i++)
	{
		w->node[i] = -1;
		w->acc[i] = 0.0;
		if ((double) w->rows[i] >= small)
		{
			w->node[i] = new_node(w, -1, -1, -1);
			w->acc[i] = (double) w->rows[i] * w->peak[i];
		}
	}
	for (int32_t k = 0; k < m->n_edges; k++)
	{
		int32_t		ca = svc_uf_find(w->parent, m->edge_a[k]);
		int32_t		cb = svc_uf_find(w->parent, m->edge_b[k]);
		double		s = height(m, m->edge_f[k]);
		bool		big_a = (double) w->rows[ca] >= small;
		bool		big_b = (double) w->rows[cb] >= small;
		int64_t		sum = w->rows[ca] + w->rows[cb];
		double		acc;
		int32_t		node;
		int32_t		r;

		if (big_a && big_b)
		{
			/* both parts are born here, going up; their parent ends here */
			w->stab[w->node[ca]] = w->acc[ca] - (double) w->rows[ca] * s;
			w->stab[w->node[cb]] = w->acc[cb] - (double) w->rows[cb] * s;
			node = new_node(w, w->node[ca], w->node[cb], k);
			acc = (double) sum * s;
		}
		else if (big_a || big_b)
		{
			int32_t		big = big_a ? ca : cb;
			int32_t		other = big_a ? cb : ca;

			node = w->node[big];
			acc = w->acc[big] + (double) w->rows[other] * s;
		}
		else
		{
			node = (double) sum >= small ? new_node(w, -1, -1, -1) : -1;
			acc = (double) sum * s;
		}
		r = svc_uf_join(w->parent, ca, cb);
		w->rows[r] = sum;
		w->peak[r] = w->peak[ca] > w->peak[cb] ? w->peak[ca] : w->peak[cb];
		w->acc[r] = acc;
		w->node[r] = node;
	}
	root = svc_uf_find(w->parent, 0);
	if (w->node[root] >= 0)
		w->stab[w->node[root]] = w->acc[root];	/* born at height 0 */
	return w->node[root];
}

/* n_clusters: remove the lowest n_clusters - 1 true joins */
static void
cut_by_count(const SvcModel *m, CutWork *w, double small)
{
	int32_t		to_remove = m->opt.n_clusters - 1;

	if (build_nodes(m, w, small) < 0)
		return;
	for (int32_t id = w->n_nodes - 1; id >= 0 && to_remove > 0; id--)
		if (w->node_edge[id] >= 0)
		{
			w->removed[w->node_edge[id]] = true;
			to_remove--;
		}
}

/* eom: a node is kept when it is at least as stable as its best descendants */
static void
cut_by_eom(const SvcModel *m, CutWork *w, double small)
{
	int32_t		root = build_nodes(m, w, small);
	int32_t    *stack = w->parent;	/* reused: the parts are done with */
	int32_t		top = 0;

	if (root < 0)
		return;
	/* children are made before their parents */
	for (int32_t id = 0; id < w->n_nodes; id++)
	{
		double		below;

		if (w->child0[id] < 0)
		{
			w->best[id] = w->stab[id];
			w->selected[id] = true;
			continue;
		}
		below = w->best[w->child0[id]] + w->best[w->child1[id]];
		w->selected[id] = w->stab[id] >= below;
		w->best[id] = w->selected[id] ? w->stab[id] : below;
	}
	/* every join above the selected nodes is removed; nodes <= 2M - 1 */
	stack[top++] = root;
	while (top > 0)
	{
		int32_t		id = stack[--top];

		if (w->selected[id] || w->child0[id] < 0)
			continue;
		w->removed[w->node_edge[id]] = true;
		stack[top++] = w->child0[id];
		stack[top++] = w->child1[id];
	}
}

/* A part before numbering: its rows, lowest equilibrium, first index. */
typedef struct Part
{
	int64_t		rows;
	int32_t		first_eq;
	int32_t		index;			/* in order of first appearance */
} Part;

/* Larger parts first; on ties the one with the lowest equilibrium. */
static int
part_cmp(const void *pa, const void *pb)
{
	const Part *x = pa;
	const Part *y = pb;

	if (x->rows != y->rows)
		return x->rows > y->rows ? -1 : 1;
	return x->first_eq < y->first_eq ? -1 : (x->first_eq > y->first_eq ? 1 : 0);
}

SvcStatus
svc_cut_number(const SvcEnv *env, int32_t M, const int32_t *part,
			   const int64_t *eq_rows, int32_t *eq_cluster, int32_t *n_clusters,
			   int64_t **cluster_size, SvcError *err)
{
	Part	   *parts = svc_alloc(env, sizeof(Part) * (size_t) M, err);
	int32_t    *index_of = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);	/* by part id */
	int32_t    *id_of = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);	/* by index */
	int64_t    *sizes = NULL;
	int32_t		K = 0;
	SvcStatus	st = SVC_ERR_NOMEM;

	if (!parts || !index_of || !id_of)
		goto done;
	for (int32_t i = 0; i < M; i++)
		index_of[i] = -1;
	for (int32_t i = 0; i < M; i++)
	{
		int32_t		p = part[i];

		if (index_of[p] < 0)
		{
			index_of[p] = K;
			parts[K].rows = 0;
			parts[K].first_eq = i;
			parts[K].index = K;
			K++;
		}
		parts[index_of[p]].rows += eq_rows[i];
	}
	qsort(parts, (size_t) K, sizeof(Part), part_cmp);
	sizes = svc_alloc(env, sizeof(int64_t) * (size_t) K, err);
	if (!sizes)
		goto done;
	for (int32_t k = 0; k < K; k++)
	{
		id_of[parts[k].index] = k + 1;
		sizes[k] = parts[k].rows;
	}
	for (int32_t i = 0; i < M; i++)
		eq_cluster[i] = id_of[index_of[part[i]]];
	*n_clusters = K;
	*cluster_size = sizes;
	sizes = NULL;
	st = SVC_OK;
done:
	svc_free(env, parts);
	svc_free(env, index_of);
	svc_free(env, id_of);
	svc_free(env, sizes);
	return st;
}

SvcCutBy
svc_cut_by(const SvcOptions *opt)
{
	if (opt->n_clusters > 0)
		return SVC_CUT_BY_COUNT;
	if (opt->has_level)
		return SVC_CUT_BY_LEVEL;
	return opt->cut == SVC_CUT_EOM ? SVC_CUT_BY_EOM : SVC_CUT_BY_PERSISTENCE;
}

const char *
svc_cut_by_name(SvcCutBy by)
{
	switch (by)
	{
		case SVC_CUT_BY_COUNT:
			return "n_clusters";
		case SVC_CUT_BY_LEVEL:
			return "level";
		case SVC_CUT_BY_PERSISTENCE:
			return svc_cut_name(SVC_CUT_PERSISTENCE);
		case SVC_CUT_BY_EOM:
			return svc_cut_name(SVC_CUT_EOM);
	}
	return "unknown";
}

/* The mean |alpha| of a support vector (n_sv > 0). */
static double
mean_alpha(const SvcModel *m)
{
	double		sum = 0.0;

	for (int32_t i = 0; i < m->n_sv; i++)
		sum += fabs(m->alpha[i]);
	return sum / (double) m->n_sv;
}

/*
 * Join the clusters of the parts in w->parent (roots) whose peaks are both
 * ripples within RIPPLE_WIDTHS kernel widths (w->peak_eq reused: the
 * highest equilibrium of each root, -1 elsewhere).
 */
static SvcStatus
join_ripples(const SvcEnv *env, const SvcModel *m, CutWork *w, SvcError *err)
{
	double		reach = sq_kernel_widths(m, RIPPLE_WIDTHS);
	int32_t    *top = w->peak_eq;

	for (int32_t i = 0; i < w->M; i++)
		top[i] = -1;
	for (int32_t i = 0; i < w->M; i++)
	{
		int32_t		r = svc_uf_find(w->parent, i);

		if (top[r] < 0 || m->eq_f[i] > m->eq_f[top[r]])
			top[r] = i;
	}
	for (int32_t a = 0; a < w->M; a++)
	{
		if (top[a] < 0 || height(m, m->eq_f[top[a]]) >= w->ripple)
			continue;
		if (svc_interrupted(env, err))
			return SVC_ERR_INTERRUPTED;
		for (int32_t b = a + 1; b < w->M; b++)
		{
			int32_t		ra;
			int32_t		rb;

			if (top[b] < 0 || height(m, m->eq_f[top[b]]) >= w->ripple)
				continue;
			ra = svc_uf_find(w->parent, a);
			rb = svc_uf_find(w->parent, b);
			if (ra != rb &&
				svc_sqdist(m->eq + (size_t) top[a] * (size_t) m->dims,
						   m->eq + (size_t) top[b] * (size_t) m->dims, m->dims) <= reach)
				svc_uf_join(w->parent, ra, rb);
		}
	}
	return SVC_OK;
}

/*
 * Decide the edges, then number the parts: eq_cluster[M] and a new
 * cluster_size array (from env) with *n_clusters entries.
 */
static SvcStatus
compute_cut(const SvcEnv *env, const SvcModel *m, int32_t *eq_cluster,
			int32_t *n_clusters, int64_t **cluster_size, SvcError *err)
{
	CutWork		w;
	int64_t		labelled = labelled_rows(m);
	double		small = svc_cut_min_rows(&m->opt, labelled, m->rows_used);
	double		small_apart = svc_cut_min_rows_apart(&m->opt, labelled, m->rows_used);
	SvcCutBy	by = svc_cut_by(&m->opt);
	SvcStatus	st;

	st = work_init(env, m, by == SVC_CUT_BY_COUNT || by == SVC_CUT_BY_EOM, &w, err);
	if (st != SVC_OK)
		return st;
	/* "separated" decides by the parts' spreads; the tree rules by size */
	if (small_apart < small && m->n_sv > 0 &&
		(by == SVC_CUT_BY_PERSISTENCE || by == SVC_CUT_BY_LEVEL))
	{
		w.small_apart = small_apart;
		w.least_rows = 1.0;		/* a part with no labelled row never stands */
		w.peak_eq = svc_alloc(env, sizeof(int32_t) * (size_t) m->n_eq, err);
		w.sv_eq = svc_alloc(env, sizeof(int32_t) * (size_t) m->n_sv, err);
		w.line = svc_alloc(env, sizeof(double) * (size_t) m->dims, err);
		st = !w.peak_eq || !w.sv_eq || !w.line ? SVC_ERR_NOMEM : assign_support_vectors(env, m, &w, err);
		if (st != SVC_OK)
		{
			work_free(env, &w);
			return st;
		}
		w.pool = pooled_spread(m, &w, small, by == SVC_CUT_BY_LEVEL);
		if (m->dims > 2)
			w.ripple = RIPPLE_ALPHA * mean_alpha(m);
	}
	switch (by)
	{
		case SVC_CUT_BY_COUNT:
			cut_by_count(m, &w, small);
			break;
		case SVC_CUT_BY_LEVEL:
			cut_by_height(m, &w, small, true);
			break;
		case SVC_CUT_BY_EOM:
			cut_by_eom(m, &w, small);
			break;
		case SVC_CUT_BY_PERSISTENCE:
			cut_by_height(m, &w, small, false);
			break;
	}

	svc_uf_init(w.parent, w.M);
	for (int32_t k = 0; k < m->n_edges; k++)
		if (!w.removed[k])
			svc_uf_join(w.parent, svc_uf_find(w.parent, m->edge_a[k]),
						svc_uf_find(w.parent, m->edge_b[k]));
	if (w.ripple > 0.0 && m->gamma > 0.0 && by == SVC_CUT_BY_PERSISTENCE)
	{
		st = join_ripples(env, m, &w, err);
		if (st != SVC_OK)
		{
			work_free(env, &w);
			return st;
		}
	}
	for (int32_t i = 0; i < w.M; i++)
		w.parent[i] = svc_uf_find(w.parent, i);
	st = svc_cut_number(env, w.M, w.parent, m->eq_rows, eq_cluster, n_clusters,
						cluster_size, err);
	work_free(env, &w);
	return st;
}

SvcStatus
svc_cut_apply(const SvcEnv *env, SvcModel *m, SvcError *err)
{
	int32_t    *eq_cluster;
	int64_t    *cluster_size = NULL;
	int32_t		K = 0;
	SvcStatus	st;

	if (m->opt.labeling != SVC_LABELING_TREE)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER, "the model has no saddle tree to cut");
		svc_error_detail(err, "The model was trained with \"labeling\": \"%s\".",
						 svc_labeling_name(m->opt.labeling));
		svc_error_hint(err, "Train with \"labeling\": \"tree\" (the default) to cut a model again.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	if (m->n_eq < 1 || m->n_edges != m->n_eq - 1)
		return svc_fail(err, SVC_ERR_INTERNAL, "saddle tree of %d edges for %d equilibria",
						m->n_edges, m->n_eq);
	eq_cluster = svc_alloc(env, sizeof(int32_t) * (size_t) m->n_eq, err);
	if (eq_cluster == NULL)
		return SVC_ERR_NOMEM;
	st = compute_cut(env, m, eq_cluster, &K, &cluster_size, err);
	if (st != SVC_OK)
	{
		svc_free(env, eq_cluster);
		return st;
	}
	svc_free(env, m->eq_cluster);
	svc_free(env, m->cluster_size);
	m->eq_cluster = eq_cluster;
	m->cluster_size = cluster_size;
	m->n_clusters = K;
	return SVC_OK;
}

SvcStatus
svc_model_recut(const SvcEnv *env, SvcModel *m, const SvcOptions *wanted,
				SvcError *err)
{
	uint8_t		current_wire[SVC_OPTIONS_WIRE_FULL];
	uint8_t		wanted_wire[SVC_OPTIONS_WIRE_FULL];
	SvcOptions	before = m->opt;
	SvcModel	cut;
	SvcStatus	st;

	/* compared as the model stores them, so equal means the same cut */
	svc_options_encode_full(&m->opt, current_wire);
	svc_options_encode_full(wanted, wanted_wire);
	if (memcmp(current_wire, wanted_wire, SVC_OPTIONS_WIRE_FULL) == 0)
		return SVC_OK;
	if (m->opt.labeling != SVC_LABELING_TREE)
		return svc_cut_apply(env, m, err);	/* refused: no tree to cut */

	/*
	 * The new cut beside the old one, so that its clusters are matched to
	 * the model's before either is replaced (label_lineage.h): a cluster
	 * the cut keeps keeps its id.
	 */
	cut = *m;
	cut.opt = *wanted;
	cut.eq_cluster = svc_alloc(env, sizeof(int32_t) * (size_t) m->n_eq, err);
	cut.cluster_size = NULL;
	cut.cluster_id = NULL;
	cut.links = NULL;
	cut.next_id = cut.n_links = 0;
	if (cut.eq_cluster == NULL)
		return SVC_ERR_NOMEM;
	st = compute_cut(env, &cut, cut.eq_cluster, &cut.n_clusters, &cut.cluster_size, err);
	if (st == SVC_OK)
		st = svc_lineage_from_recut(env, &cut, m->eq_cluster, m->cluster_id, m->n_clusters,
									svc_lineage_next_id(m), err);
	if (st != SVC_OK)
	{
		svc_free(env, cut.eq_cluster);
		svc_free(env, cut.cluster_size);
		svc_lineage_free(env, &cut);
		m->opt = before;
		return st;
	}
	svc_free(env, m->eq_cluster);
	svc_free(env, m->cluster_size);
	svc_lineage_free(env, m);
	m->opt = *wanted;
	m->eq_cluster = cut.eq_cluster;
	m->cluster_size = cut.cluster_size;
	m->n_clusters = cut.n_clusters;
	m->cluster_id = cut.cluster_id;
	m->next_id = cut.next_id;
	m->links = cut.links;
	m->n_links = cut.n_links;
	return SVC_OK;
}

SvcStatus
svc_cut_check(const SvcEnv *env, const SvcModel *m, SvcError *err)
{
	int32_t		M = m->n_eq;
	int32_t    *parent = NULL;
	int32_t    *eq_cluster = NULL;
	int64_t    *cluster_size = NULL;
	int32_t		K = 0;
	SvcStatus	st;

	if (M < 1 || m->n_edges != M - 1)
		return svc_model_corrupt(err, "The number of tree edges does not match the equilibria.");
	parent = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);
	eq_cluster = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);
	if (!parent || !eq_cluster)
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}
	svc_uf_init(parent, M);
	st = SVC_ERR_CORRUPT;
	for (int32_t k = 0; k < m->n_edges; k++)
	{
		int32_t		a = m->edge_a[k],
					b = m->edge_b[k];

		if (a < 0 || a >= M || b < 0 || b >= M)
		{
			svc_model_corrupt(err, "A tree edge names an equilibrium out of range.");
			goto done;
		}
		if (svc_uf_find(parent, a) == svc_uf_find(parent, b))
		{
			svc_model_corrupt(err, "The tree edges do not form a tree.");
			goto done;
		}
		svc_uf_join(parent, svc_uf_find(parent, a), svc_uf_find(parent, b));
		if (k > 0 && !(m->edge_f[k] <= m->edge_f[k - 1]))
		{
			svc_model_corrupt(err, "The tree edges are not ordered by height.");
			goto done;
		}
	}
	st = compute_cut(env, m, eq_cluster, &K, &cluster_size, err);
	if (st != SVC_OK)
		goto done;
	if (K != m->n_clusters ||
		memcmp(eq_cluster, m->eq_cluster, sizeof(int32_t) * (size_t) M) != 0 ||
		memcmp(cluster_size, m->cluster_size, sizeof(int64_t) * (size_t) K) != 0)
		st = svc_model_corrupt(err, "The clusters do not match the cut of the tree.");
done:
	svc_free(env, parent);
	svc_free(env, eq_cluster);
	svc_free(env, cluster_size);
	return st;
}

bool
svc_cut_summary(const SvcModel *m, double *level, double *stability, double *peak)
{
	bool		any = false;

	for (int32_t k = 0; k < m->n_clusters; k++)
	{
		peak[k] = 0.0;
		stability[k] = -1.0;	/* no removed edge seen yet */
	}
	for (int32_t i = 0; i < m->n_eq; i++)
	{
		int32_t		c = m->eq_cluster[i] - 1;
		double		h = height(m, m->eq_f[i]);

		if (h > peak[c])
			peak[c] = h;
	}
	*level = 0.0;
	/* edges come by decreasing height: the first removed edge touching a
	 * cluster is its highest, and the first of all is the cut level */
	for (int32_t k = 0; k < m->n_edges; k++)
	{
		int32_t		c[2] = {m->eq_cluster[m->edge_a[k]] - 1, m->eq_cluster[m->edge_b[k]] - 1};
		double		s = height(m, m->edge_f[k]);

		if (c[0] == c[1])
			continue;
		if (!any)
			*level = m->edge_f[k];
		any = true;
		for (int j = 0; j < 2; j++)
			if (stability[c[j]] < 0.0)
				stability[c[j]] = peak[c[j]] > 0.0 ?
					1.0 - (s < peak[c[j]] ? s : peak[c[j]]) / peak[c[j]] : 0.0;
	}
	for (int32_t k = 0; k < m->n_clusters; k++)
		if (stability[k] < 0.0)
			stability[k] = 1.0;
	return any;
}

/* Copies of the cut's arrays (n elements of size each; NULL stays NULL). */
static void *
dup_array(const SvcEnv *env, const void *src, size_t n, size_t size, bool *failed,
		  SvcError *err)
{
	void	   *out;

	if (src == NULL || n == 0)
		return NULL;
	out = svc_alloc(env, n * size, err);
	if (out == NULL)
		*failed = true;
	else
		memcpy(out, src, n * size);
	return out;
}

static SvcStatus
copy_cut(const SvcEnv *env, const SvcCutSaved *from, SvcCutSaved *to, SvcError *err)
{
	bool		failed = false;

	*to = *from;
	to->eq_cluster = dup_array(env, from->eq_cluster, (size_t) from->n_eq, sizeof(int32_t),
							   &failed, err);
	to->cluster_size = dup_array(env, from->cluster_size, (size_t) from->n_clusters,
								 sizeof(int64_t), &failed, err);
	to->cluster_id = from->cluster_id == NULL ? NULL :
		dup_array(env, from->cluster_id, (size_t) from->n_clusters, sizeof(int32_t), &failed, err);
	to->links = from->links == NULL ? NULL :
		dup_array(env, from->links, (size_t) from->n_links, sizeof(SvcClusterLink), &failed, err);
	if (failed)
	{
		svc_free(env, to->eq_cluster);
		svc_free(env, to->cluster_size);
		svc_free(env, to->cluster_id);
		svc_free(env, to->links);
		return SVC_ERR_NOMEM;
	}
	return SVC_OK;
}

SvcStatus
svc_cut_save(const SvcEnv *env, const SvcModel *m, SvcCutSaved *s, SvcError *err)
{
	SvcCutSaved now;

	now.opt = m->opt;
	now.n_eq = m->n_eq;
	now.n_clusters = m->n_clusters;
	now.eq_cluster = m->eq_cluster;
	now.cluster_size = m->cluster_size;
	now.cluster_id = m->cluster_id;
	now.next_id = m->next_id;
	now.n_links = m->n_links;
	now.links = m->links;
	return copy_cut(env, &now, s, err);
}

SvcStatus
svc_cut_restore(const SvcEnv *env, SvcModel *m, const SvcCutSaved *s, SvcError *err)
{
	SvcCutSaved copy;
	SvcStatus	st;

	if (s->n_eq != m->n_eq)
		return svc_fail(err, SVC_ERR_INTERNAL, "a saved cut of %d equilibria for %d",
						s->n_eq, m->n_eq);
	st = copy_cut(env, s, &copy, err);
	if (st != SVC_OK)
		return st;
	svc_free(env, m->eq_cluster);
	svc_free(env, m->cluster_size);
	svc_lineage_free(env, m);
	m->opt = copy.opt;
	m->n_clusters = copy.n_clusters;
	m->eq_cluster = copy.eq_cluster;
	m->cluster_size = copy.cluster_size;
	m->cluster_id = copy.cluster_id;
	m->next_id = copy.next_id;
	m->n_links = copy.n_links;
	m->links = copy.links;
	return SVC_OK;
}
