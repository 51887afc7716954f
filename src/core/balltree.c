/*
 * balltree.c - exact neighbour searches that keep working in many
 * dimensions (balltree.h)
 *
 * Subtrees are ranges of a point order; each node splits its range at the
 * median of the points' projections on the line between two far points
 * (the farthest from the mean, and the farthest from that one), so that
 * well-separated clusters part early; leaves hold at most BALL_LEAF
 * points.  Every node keeps a ball: the mean of its points and the
 * largest distance to it, widened for rounding.  A search skips a node
 * when the ball lies beyond the distance it asks about, and reads the
 * distances of a leaf's points with svc_sqdist_many, so that the points
 * found and their distances are those of the k-d tree's searches.
 */
#include "balltree.h"
#include "kbest.h"
#include "kernel.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BALL_LEAF	32
/* Lloyd rounds of a node's two means, at most */
#define BALL_ROUNDS 4
#define BALL_MIXED	INT32_MIN
/* relative room for the rounding of a distance to a centre (d <= 16,000) */
#define BALL_ROOM	1e-9

/*
 * A squared distance r2 raised past the rounding of any other sum of the
 * same d squares (as kdtree.c's beyond_rounding).
 */
static inline double
beyond_rounding(double r2, int32_t d)
{
	return r2 * (1.0 + 8.0 * (d + 2) * DBL_EPSILON) + (d + 1) * DBL_MIN;
}

typedef struct KeyIdx
{
	double		key;
	int64_t		idx;
} KeyIdx;

static int
cmp_keyidx(const void *a, const void *b)
{
	const KeyIdx *x = a,
			   *y = b;

	if (x->key < y->key)
		return -1;
	if (x->key > y->key)
		return 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Points whose distances are computed at a time (svc_sqdist_many batches
 * them: the same values as svc_sqdist's, sooner) */
#define DIST_BLOCK 64

/*
 * The ball of node v from its points (in the point order); returns the
 * index of the point farthest from its centre (the first of ties), which
 * a split starts from: the radius's distances are those farthest() would
 * sum again.
 */
static int64_t
ball_fill(SvcBallTree *t, int32_t v)
{
	int32_t		d = t->d;
	int64_t		lo = t->lo[v],
				hi = t->hi[v];
	double	   *c = t->centre + (size_t) v * d;
	double		r2 = 0.0,
				bd = -1.0;
	int64_t		best = lo;
	int32_t		g = t->grp[lo];

	for (int32_t j = 0; j < d; j++)
		c[j] = 0.0;
	for (int64_t i = lo; i < hi; i++)
	{
		const double *x = t->pts + (size_t) i * d;

		for (int32_t j = 0; j < d; j++)
			c[j] += x[j];
		if (t->grp[i] != g)
			g = BALL_MIXED;
	}
	for (int32_t j = 0; j < d; j++)
		c[j] /= (double) (hi - lo);
	for (int64_t i0 = lo; i0 < hi; i0 += DIST_BLOCK)
	{
		double		q[DIST_BLOCK];
		int64_t		m = hi - i0 < DIST_BLOCK ? hi - i0 : DIST_BLOCK;

		svc_sqdist_many(t->pts + (size_t) i0 * d, NULL, m, d, c, q);
		for (int64_t i = 0; i < m; i++)
		{
			r2 = q[i] > r2 ? q[i] : r2;
			/* farthest()'s choice */
			if (q[i] > bd)
			{
				bd = q[i];
				best = i0 + i;
			}
		}
	}
	t->radius[v] = sqrt(r2) * (1.0 + BALL_ROOM);
	t->pure[v] = g;
	return best;
}

/* The index in [lo, hi) of the point farthest from c (the first of ties). */
static int64_t
farthest(const SvcBallTree *t, int64_t lo, int64_t hi, const double *c)
{
	int64_t		best = lo;
	double		bd = -1.0;

	for (int64_t i0 = lo; i0 < hi; i0 += DIST_BLOCK)
	{
		double		q[DIST_BLOCK];
		int64_t		m = hi - i0 < DIST_BLOCK ? hi - i0 : DIST_BLOCK;

		svc_sqdist_many(t->pts + (size_t) i0 * t->d, NULL, m, t->d, c, q);
		for (int64_t i = 0; i < m; i++)
			if (q[i] > bd)
			{
				bd = q[i];
				best = i0 + i;
			}
	}
	return best;
}

/* Build node v over [lo, hi) and its subtree; tmp has room for hi - lo. */
static int32_t
ball_build_range(SvcBallTree *t, int64_t lo, int64_t hi, KeyIdx *tmp, double *work)
{
	int32_t		v = t->n_node++;
	int32_t		d = t->d;
	int64_t		far;

	t->lo[v] = lo;
	t->hi[v] = hi;
	t->left[v] = t->right[v] = -1;
	far = ball_fill(t, v);
	if (hi - lo > BALL_LEAF)
	{
		int64_t		a = far;
		int64_t		b;
		int64_t		mid = lo + (hi - lo) / 2;
		double	   *u = work;
		const double *pa;

		memcpy(u + d, t->pts + (size_t) a * d, sizeof(double) * (size_t) d);
		pa = u + d;
		b = farthest(t, lo, hi, pa);
		for (int32_t j = 0; j < d; j++)
			u[j] = t->pts[(size_t) b * d + j] - pa[j];
		{
			/*
			 * Two means from the two far points: a few rounds of Lloyd's
			 * steps, then the points nearer the first mean go first.
			 */
			double	   *ma = work + 2 * (size_t) d + (size_t) (hi - lo) * d + (size_t) (hi - lo);
			double	   *mb = ma + d;
			int64_t		k = 0;
			int64_t		min_side = (hi - lo) / 32 + 1 > BALL_LEAF / 4 ?
				(hi - lo) / 32 + 1 : BALL_LEAF / 4;

			memcpy(ma, pa, sizeof(double) * (size_t) d);
			for (int32_t j = 0; j < d; j++)
				mb[j] = t->pts[(size_t) b * d + j];
			for (int round = 0; round < BALL_ROUNDS; round++)
			{
				int64_t		na = 0, nb = 0;
				double	   *sa = mb + d, *sb = sa + d;
				bool		moved = round == 0;
				/* the last round's means are not used: no sums for them */
				bool		sums = round < BALL_ROUNDS - 1;

				memset(sa, 0, sizeof(double) * 2 * (size_t) d);
				for (int64_t i0 = lo; i0 < hi; i0 += DIST_BLOCK)
				{
					double		qa[DIST_BLOCK],
								qb[DIST_BLOCK];
					int64_t		m = hi - i0 < DIST_BLOCK ? hi - i0 : DIST_BLOCK;

					svc_sqdist_many2(t->pts + (size_t) i0 * d, m, d, ma, mb, qa, qb);
					for (int64_t i = i0; i < i0 + m; i++)
					{
						const double *x = t->pts + (size_t) i * d;
						bool		near_a = qa[i - i0] <= qb[i - i0];
						double	   *acc = near_a ? sa : sb;
						double		key = near_a ? 0.0 : 1.0;

						/* round 0 moves by definition (tmp not yet written) */
						if (round > 0 && tmp[i - lo].key != key)
							moved = true;
						tmp[i - lo].key = key;
						tmp[i - lo].idx = t->perm[i];
						for (int32_t j = 0; sums && j < d; j++)
							acc[j] += x[j];
						na += near_a;
						nb += !near_a;
					}
				}
				if (na == 0 || nb == 0)
					break;
				/*
				 * No point changed sides: the means, and so every later
				 * round, would be these again.  The split is the one the
				 * remaining rounds would give.
				 */
				if (!moved || !sums)
				{
					k = na;
					break;
				}
				for (int32_t j = 0; j < d; j++)
				{
					ma[j] = sa[j] / na;
					mb[j] = sb[j] / nb;
				}
				k = na;
			}
			/* unless a side would be tiny: it would only deepen the tree */
			if (k >= min_side && k <= (hi - lo) - min_side)
			{
				qsort(tmp, (size_t) (hi - lo), sizeof(KeyIdx), cmp_keyidx);
				mid = lo + k;
			}
			else
			{
				/* the median of the projections, as without */
				for (int64_t i = lo; i < hi; i++)
				{
					const double *x = t->pts + (size_t) i * d;
					double		s2 = 0.0;

					for (int32_t j = 0; j < d; j++)
						s2 += (x[j] - pa[j]) * u[j];
					tmp[i - lo].key = s2;
					tmp[i - lo].idx = t->perm[i];
				}
				qsort(tmp, (size_t) (hi - lo), sizeof(KeyIdx), cmp_keyidx);
			}
		}
		/* the points and their groups in the new order, through the tail of work */
		{
			double	   *copy = work + 2 * (size_t) d;
			int32_t    *gcopy = (int32_t *) (copy + (size_t) (hi - lo) * d);

			for (int64_t i = lo; i < hi; i++)
			{
				memcpy(copy + (size_t) (i - lo) * d, t->pts + (size_t) i * d,
					   sizeof(double) * (size_t) d);
				gcopy[i - lo] = t->grp[i];
			}
			for (int64_t i = lo; i < hi; i++)
			{
				int64_t		from = t->pos[tmp[i - lo].idx] - lo;

				t->perm[i] = tmp[i - lo].idx;
				memcpy(t->pts + (size_t) i * d, copy + (size_t) from * d,
					   sizeof(double) * (size_t) d);
				t->grp[i] = gcopy[from];
			}
			for (int64_t i = lo; i < hi; i++)
				t->pos[t->perm[i]] = i;
		}
		t->left[v] = ball_build_range(t, lo, mid, tmp, work);
		t->right[v] = ball_build_range(t, mid, hi, tmp, work);
	}
	return v;
}

SvcStatus
svc_ball_build(const SvcEnv *env, const double *pts, int64_t n, int32_t d,
			   const int32_t *group, SvcBallTree *t, SvcError *err)
{
	int64_t		max_node = n / (BALL_LEAF / 4) * 2 + 2;
	KeyIdx	   *tmp = NULL;
	double	   *work = NULL;
	SvcStatus	st = SVC_ERR_NOMEM;

	memset(t, 0, sizeof(*t));
	t->n = n;
	t->d = d;
	if (n < 1)
		return SVC_OK;
	t->perm = svc_alloc(env, sizeof(int64_t) * (size_t) n, err);
	t->pos = svc_alloc(env, sizeof(int64_t) * (size_t) n, err);
	t->pts = svc_alloc(env, sizeof(double) * (size_t) n * d, err);
	t->grp = svc_alloc(env, sizeof(int32_t) * (size_t) n, err);
	t->kwork = svc_alloc(env, sizeof(double) * (size_t) n, err);
	t->lo = svc_alloc(env, sizeof(int64_t) * (size_t) max_node, err);
	t->hi = svc_alloc(env, sizeof(int64_t) * (size_t) max_node, err);
	t->left = svc_alloc(env, sizeof(int32_t) * (size_t) max_node, err);
	t->right = svc_alloc(env, sizeof(int32_t) * (size_t) max_node, err);
	t->pure = svc_alloc(env, sizeof(int32_t) * (size_t) max_node, err);
	t->radius = svc_alloc(env, sizeof(double) * (size_t) max_node, err);
	t->centre = svc_alloc(env, sizeof(double) * (size_t) max_node * d, err);
	tmp = svc_alloc(env, sizeof(KeyIdx) * (size_t) n, err);
	work = svc_alloc(env, sizeof(double) * ((size_t) (n + 6) * d + (size_t) n), err);
	if (!t->perm || !t->pos || !t->pts || !t->grp || !t->kwork || !t->lo || !t->hi || !t->left ||
		!t->right || !t->pure || !t->radius || !t->centre || !tmp || !work)
		goto done;
	for (int64_t i = 0; i < n; i++)
	{
		t->perm[i] = i;
		t->pos[i] = i;
		t->grp[i] = group[i];
	}
	memcpy(t->pts, pts, sizeof(double) * (size_t) n * d);
	ball_build_range(t, 0, n, tmp, work);
	st = SVC_OK;
done:
	svc_free(env, tmp);
	svc_free(env, work);
	if (st != SVC_OK)
		svc_ball_free(env, t);
	return st;
}

void
svc_ball_free(const SvcEnv *env, SvcBallTree *t)
{
	svc_free(env, t->perm);
	svc_free(env, t->pos);
	svc_free(env, t->pts);
	svc_free(env, t->grp);
	svc_free(env, t->kwork);
	svc_free(env, t->lo);
	svc_free(env, t->hi);
	svc_free(env, t->left);
	svc_free(env, t->right);
	svc_free(env, t->pure);
	svc_free(env, t->radius);
	svc_free(env, t->centre);
	memset(t, 0, sizeof(*t));
}

/*
 * The distance from q to node v's centre, and whether every point of v
 * lies beyond cut (a squared distance) from q, by any sum of the squares:
 * the centre's distance is shrunk and the radius was widened by far more
 * than their rounding (a NaN distance skips nothing).
 */
static inline double
centre_dist2(const SvcBallTree *t, int32_t v, const double *q)
{
	return svc_sqdist(t->centre + (size_t) v * t->d, q, t->d);
}

/* The same for the two children of a node, side by side (the same sums). */
static inline void
children_dist2(const SvcBallTree *t, int32_t a, int32_t b, const double *q,
			   double *da, double *db)
{
	int32_t		ab[2] = {a, b};
	double		out[2];

	svc_sqdist_many(t->centre, ab, 2, t->d, q, out);
	*da = out[0];
	*db = out[1];
}

static inline bool
ball_beyond(const SvcBallTree *t, int32_t v, double dc2, double cut)
{
	double		gap = sqrt(dc2) * (1.0 - BALL_ROOM) - t->radius[v];

	return gap > 0.0 && gap * gap * (1.0 - BALL_ROOM) > cut;
}

/* dc2: the squared distance from q to v's centre */
static bool
ball_other_within(const SvcBallTree *t, int32_t v, double dc2, int32_t g, const double *q,
				  double cut)
{
	if (t->pure[v] == g || ball_beyond(t, v, dc2, cut))
		return false;
	if (t->left[v] < 0)
	{
		double		d2[BALL_LEAF];
		int32_t		other[BALL_LEAF] = {0};	/* gcc -O1 cannot see the loop fill it */
		int64_t		lo = t->lo[v],
					m = t->hi[v] - lo;
		int32_t		no = 0;

		/* only the points of other groups */
		for (int32_t i = 0; i < m; i++)
		{
			other[no] = i;
			no += t->grp[lo + i] != g;
		}
		svc_sqdist_many(t->pts + (size_t) lo * t->d, other, no, t->d, q, d2);
		for (int32_t i = 0; i < no; i++)
			if (d2[i] <= cut)
				return true;
		return false;
	}
	{
		int32_t		a = t->left[v],
					b = t->right[v];
		double		da,
					db;

		children_dist2(t, a, b, q, &da, &db);

		/* the nearer side first: a point within is likelier there */
		if (db < da)
			return ball_other_within(t, b, db, g, q, cut) ||
				ball_other_within(t, a, da, g, q, cut);
		return ball_other_within(t, a, da, g, q, cut) ||
			ball_other_within(t, b, db, g, q, cut);
	}
}

bool
svc_ball_other_within(const SvcBallTree *t, int32_t g, const double *q, double r2)
{
	if (t->n < 1)
		return false;
	return ball_other_within(t, 0, centre_dist2(t, 0, q), g, q, beyond_rounding(r2, t->d));
}

double
svc_ball_kth_bound(const SvcBallTree *t, int64_t p, int32_t k)
{
	int32_t		v = 0;
	int64_t		at;

	if (k < 1 || k > t->n)
		return HUGE_VAL;
	at = t->pos[p];
	/* down while the child holding p still has k points */
	while (t->left[v] >= 0)
	{
		int32_t		c = at < t->hi[t->left[v]] ? t->left[v] : t->right[v];

		if (t->hi[c] - t->lo[c] < k)
			break;
		v = c;
	}
	svc_sqdist_many(t->pts + (size_t) t->lo[v] * t->d, NULL, t->hi[v] - t->lo[v], t->d,
					t->pts + (size_t) at * t->d, t->kwork);
	return svc_select_double(t->kwork, t->hi[v] - t->lo[v], k - 1);
}

static void
ball_knearest(const SvcBallTree *t, int32_t v, double dc2, const double *q, KBest *kb)
{
	if (kb->found == kb->k &&
		ball_beyond(t, v, dc2, beyond_rounding(kb->d2[kb->k - 1], t->d)))
		return;
	if (t->left[v] < 0)
	{
		double		d2[BALL_LEAF];
		int64_t		lo = t->lo[v],
					m = t->hi[v] - lo;

		svc_sqdist_many(t->pts + (size_t) lo * t->d, NULL, m, t->d, q, d2);
		for (int64_t i = 0; i < m; i++)
			if (kb->found < kb->k || d2[i] <= kb->d2[kb->k - 1])
				kbest_offer(kb, t->perm[lo + i], d2[i]);
		return;
	}
	{
		int32_t		a = t->left[v],
					b = t->right[v];
		double		da,
					db;

		children_dist2(t, a, b, q, &da, &db);

		if (db < da)
		{
			ball_knearest(t, b, db, q, kb);
			ball_knearest(t, a, da, q, kb);
		}
		else
		{
			ball_knearest(t, a, da, q, kb);
			ball_knearest(t, b, db, q, kb);
		}
	}
}

int32_t
svc_ball_knearest(const SvcBallTree *t, const double *q, int32_t k, int64_t *idx, double *d2)
{
	KBest		kb = {k, 0, idx, d2};

	if (k <= 0 || t->n < 1)
		return 0;
	ball_knearest(t, 0, centre_dist2(t, 0, q), q, &kb);
	return kb.found;
}
