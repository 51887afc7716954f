/*
 * aid.c - the exact SVDD dual by aggregation and iterative disaggregation
 *
 * See aid.h for what it computes and doc/aid.md for why it is exact.  The
 * clusters are kept as a permutation of the rows (perm) cut into runs
 * (start[G] .. start[G + 1]), so a cluster's rows are contiguous and a
 * split rewrites the permutation in one pass.  Per cluster: its aggregated
 * multiplier a, bound |G| C and self-kernel Kbar_GG (computed once per
 * cluster, when it is made).
 *
 * The aggregated solve asks smo.c for columns of Kbar through a callback:
 * the column of G on the clusters H it names is the sum over G's rows u of
 * K(u, .) on H's rows, summed per H and divided by |G| |H|.  The rows'
 * sums r_G = sum_{u in G} K(u, .) over every row are kept across rounds in
 * a cache (LRU, within the budget), so that a cluster's kernel sums are
 * computed once in its life: a column of Kbar, its self-kernel and its
 * share of the rows' decision values are then sums of r_G, with no exp.
 * When a cached cluster splits, the smaller part's sums are computed and
 * the larger part's are r_G minus them.  Without room in the cache, a
 * column costs |G| times the rows of the clusters asked for.
 */
#include "aid.h"
#include "kdtree.h"
#include "kernel.h"
#include "smo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Lloyd steps of the starting k-means. */
#define KMEANS_STEPS 5
/*
 * Rows per starting cluster when init_clusters is automatic: coarse
 * clusters far from the sphere never split, and fewer clusters cost fewer
 * kernel sums (measured: doc/design-notes.md).
 */
#define AUTO_ROWS_PER_CLUSTER 64
/* Grid: tries of the cell side, bisecting towards the wanted cell count. */
#define GRID_TRIES 24

typedef struct Aid
{
	const SvcEnv *env;
	const double *x;
	int64_t		n;
	int32_t		d;
	double		gamma;
	double		c;

	int64_t		m;				/* clusters */
	int64_t    *perm;			/* [n] rows, cluster by cluster */
	int64_t    *start;			/* [n + 1] */
	int64_t    *perm2;			/* [n] scratch: the next permutation */
	int64_t    *start2;			/* [n + 1] */
	int64_t    *rowlist;		/* [n] scratch of the callback */
	double	   *a;				/* [n] aggregated multipliers */
	double	   *a2;				/* [n] the next round's start */
	double	   *cb;				/* [n] bounds |G| C */
	double	   *kgg;			/* [n] Kbar_GG */
	double	   *kgg2;			/* [n] */
	double	   *s;				/* [n] sum_j alpha_j K(x_j, x_i) per row */
	double	   *arow;			/* [n] the multipliers s was summed for */
	double	   *buf;			/* [n] scratch */
	double	   *r;				/* [n] scratch of the callback */

	/* the cache of r_G: rc[G] or NULL, its last use; pool owns the blocks */
	double	  **rc;				/* [n] */
	double	  **rc2;			/* [n] the next round's */
	int64_t    *stamp;			/* [n] */
	int64_t    *stamp2;			/* [n] */
	double	  **pool;			/* [rcap] every block allocated */
	int64_t		rcap;
	int64_t		rused;
	int64_t		clock;
	int64_t		r_computed;		/* clusters whose sums were computed */
} Aid;

static inline int64_t
csize(const Aid *s, int64_t g)
{
	return s->start[g + 1] - s->start[g];
}

/*
 * sum_{u in G} K(u, t) for the cnt rows t of list (or the first cnt rows
 * of perm when list is NULL), into acc[0..cnt).
 */
static SvcStatus
member_sums(Aid *s, int64_t g, const int64_t *list, int64_t cnt, double *acc,
			SvcError *err)
{
	const int64_t *rows = list != NULL ? list : s->perm;

	memset(acc, 0, sizeof(double) * (size_t) cnt);
	for (int64_t u = s->start[g]; u < s->start[g + 1]; u++)
	{
		int64_t		row = s->perm[u];

		if ((u - s->start[g]) % 64 == 63 && svc_interrupted(s->env, err))
			return err->status;
		svc_kernel_values(s->x, s->d, row, s->gamma, rows, cnt, s->buf);
		for (int64_t k = 0; k < cnt; k++)
			acc[k] += rows[k] == row ? 1.0 : s->buf[k];
	}
	return SVC_OK;
}

/*
 * sum_{u in members} K(u, i) for every row i into out, a full kernel
 * column per member.
 */
static SvcStatus
full_sums(Aid *s, const int64_t *members, int64_t cnt, double *out, SvcError *err)
{
	memset(out, 0, sizeof(double) * (size_t) s->n);
	for (int64_t k = 0; k < cnt; k++)
	{
		int64_t		row = members[k];

		if (k % 16 == 15 && svc_interrupted(s->env, err))
			return err->status;
		svc_kernel_column(s->x, s->d, row, s->gamma, NULL, s->n, s->buf);
		s->buf[row] = 1.0;
		for (int64_t i = 0; i < s->n; i++)
			out[i] += s->buf[i];
	}
	s->r_computed++;
	return SVC_OK;
}

/* A block for the cache: a new one while there is room, else the least
 * recently used cluster's; NULL (st SVC_OK) when the cache has no room. */
static double *
cache_block(Aid *s, SvcStatus *st, SvcError *err)
{
	int64_t		victim = -1;
	double	   *v;

	*st = SVC_OK;
	if (s->rcap == 0)
		return NULL;
	if (s->rused < s->rcap)
	{
		v = svc_alloc(s->env, sizeof(double) * (size_t) s->n, err);
		if (v == NULL)
		{
			*st = SVC_ERR_NOMEM;
			return NULL;
		}
		s->pool[s->rused++] = v;
		return v;
	}
	for (int64_t g = 0; g < s->m; g++)
		if (s->rc[g] != NULL && (victim < 0 || s->stamp[g] < s->stamp[victim]))
			victim = g;
	if (victim < 0)
		return NULL;			/* no cluster holds a block (after a failure) */
	v = s->rc[victim];
	s->rc[victim] = NULL;
	return v;
}

/* r_G from the cache, or computed into it; NULL (st SVC_OK) without room. */
static double *
get_r(Aid *s, int64_t g, SvcStatus *st, SvcError *err)
{
	double	   *v = s->rc[g];

	*st = SVC_OK;
	if (v == NULL)
	{
		v = cache_block(s, st, err);
		if (v == NULL)
			return NULL;
		*st = full_sums(s, s->perm + s->start[g], csize(s, g), v, err);
		if (*st != SVC_OK)
			return NULL;		/* the block stays in the pool, unused */
		s->rc[g] = v;
	}
	s->stamp[g] = ++s->clock;
	return v;
}

/* smo.h's kernel callback: column g of Kbar on the clusters idx[0..cnt). */
static SvcStatus
kbar_column(void *ctx, int64_t g, const int64_t *idx, int64_t cnt, double *out,
			SvcError *err)
{
	Aid		   *s = ctx;
	const int64_t *list = NULL;
	int64_t		nrows = 0,
				pos = 0;
	double		sg = (double) csize(s, g);
	SvcStatus	st = SVC_OK;
	const double *rg = s->rc[g];

	/*
	 * Not cached: the sums over every row (cached for the next use) when
	 * the solve asks for every cluster, else those of the clusters it asks
	 * for alone (shrinking has set the others aside), which cost less.
	 */
	if (rg != NULL)
		s->stamp[g] = ++s->clock;
	else if (idx == NULL || cnt == s->m)
		rg = get_r(s, g, &st, err);
	if (st != SVC_OK)
		return st;
	if (rg != NULL)
	{
		for (int64_t k = 0; k < cnt; k++)
		{
			int64_t		h = idx != NULL ? idx[k] : k;
			double		sum = 0.0;

			for (int64_t u = s->start[h]; u < s->start[h + 1]; u++)
				sum += rg[s->perm[u]];
			out[h] = sum / (sg * (double) csize(s, h));
		}
		return SVC_OK;
	}
	if (idx == NULL)
		nrows = s->start[cnt];
	else
	{
		for (int64_t k = 0; k < cnt; k++)
			for (int64_t u = s->start[idx[k]]; u < s->start[idx[k] + 1]; u++)
				s->rowlist[nrows++] = s->perm[u];
		list = s->rowlist;
	}
	st = member_sums(s, g, list, nrows, s->r, err);
	if (st != SVC_OK)
		return st;
	for (int64_t k = 0; k < cnt; k++)
	{
		int64_t		h = idx != NULL ? idx[k] : k;
		int64_t		sh = csize(s, h);
		double		sum = 0.0;

		for (int64_t u = 0; u < sh; u++)
			sum += s->r[pos + u];
		pos += sh;
		out[h] = sum / (sg * (double) sh);
	}
	return SVC_OK;
}

/* Kbar_GG into *out: from r_G when cached, else |G|^2 kernel values. */
static SvcStatus
self_kernel(Aid *s, int64_t g, double *out, SvcError *err)
{
	int64_t		sz = csize(s, g);
	const int64_t *rows = s->perm + s->start[g];
	double		sum = 0.0;

	if (sz == 1)
	{
		*out = 1.0;
		return SVC_OK;
	}
	if (s->rc[g] != NULL)
	{
		for (int64_t u = 0; u < sz; u++)
			sum += s->rc[g][rows[u]];
	}
	else
	{
		SvcStatus	st = member_sums(s, g, rows, sz, s->r, err);

		if (st != SVC_OK)
			return st;
		for (int64_t u = 0; u < sz; u++)
			sum += s->r[u];
	}
	*out = sum / ((double) sz * (double) sz);
	return SVC_OK;
}

/* ---- the starting clusters ---- */

/* Clusters from a label per row (labels[0..n) in [0, k)): perm and start. */
static void
clusters_from_labels(Aid *s, const int64_t *labels, int64_t k, int64_t *count)
{
	int64_t		m = 0;

	memset(count, 0, sizeof(int64_t) * (size_t) k);
	for (int64_t i = 0; i < s->n; i++)
		count[labels[i]]++;
	/* empty labels get no cluster: count becomes the first position */
	s->start[0] = 0;
	{
		int64_t		pos = 0;

		for (int64_t l = 0; l < k; l++)
		{
			int64_t		c = count[l];

			count[l] = pos;
			if (c > 0)
			{
				pos += c;
				s->start[++m] = pos;
			}
		}
	}
	for (int64_t i = 0; i < s->n; i++)
		s->perm[count[labels[i]]++] = i;
	s->m = m;
}

/*
 * k-means: k distinct rows drawn with the seed as centres, then Lloyd's
 * steps (nearest centre by a k-d tree over the centres, then the means).
 * Any grouping gives the same optimum; a good one only saves rounds.
 */
static SvcStatus
init_kmeans(Aid *s, int64_t k, uint64_t seed, SvcError *err)
{
	const SvcEnv *env = s->env;
	int32_t		d = s->d;
	int64_t    *labels = s->perm2;	/* scratch until the clusters are made */
	int64_t    *count = s->start2;
	double	   *cent = NULL;
	SvcRng		rng;
	SvcStatus	st = SVC_OK;

	cent = svc_alloc(env, sizeof(double) * (size_t) k * (size_t) d, err);
	if (cent == NULL)
		return SVC_ERR_NOMEM;
	for (int64_t i = 0; i < s->n; i++)
		labels[i] = i;
	svc_rng_seed(&rng, seed);
	svc_rng_sample(&rng, labels, s->n, k);
	for (int64_t c = 0; c < k; c++)
		memcpy(cent + (size_t) c * d, s->x + (size_t) labels[c] * d, sizeof(double) * (size_t) d);
	for (int step = 0; step < KMEANS_STEPS; step++)
	{
		SvcKdTree	tree = {0};

		st = svc_kd_build(env, cent, k, d, &tree, err);
		if (st != SVC_OK)
		{
			svc_kd_free(env, &tree);
			goto done;
		}
		for (int64_t i = 0; i < s->n; i++)
		{
			double		d2;

			if ((i & (SVC_INTERRUPT_EVERY - 1)) == 0 && svc_interrupted(env, err))
			{
				svc_kd_free(env, &tree);
				st = err->status;
				goto done;
			}
			labels[i] = svc_kd_nearest(&tree, s->x + (size_t) i * d, &d2);
		}
		svc_kd_free(env, &tree);
		if (step == KMEANS_STEPS - 1)
			break;
		/* the means; an emptied centre stays where it was */
		memset(count, 0, sizeof(int64_t) * (size_t) k);
		for (int64_t i = 0; i < s->n; i++)
			count[labels[i]]++;
		for (int64_t c = 0; c < k; c++)
			if (count[c] > 0)
				memset(cent + (size_t) c * d, 0, sizeof(double) * (size_t) d);
		for (int64_t i = 0; i < s->n; i++)
		{
			double	   *cc = cent + (size_t) labels[i] * d;
			const double *xi = s->x + (size_t) i * d;
			double		w = 1.0 / (double) count[labels[i]];

			for (int32_t j = 0; j < d; j++)
				cc[j] += w * xi[j];
		}
	}
	clusters_from_labels(s, labels, k, count);
done:
	svc_free(env, cent);
	return st;
}

/* FNV-1a over a row's cell coordinates at side h. */
static uint64_t
cell_key(const double *xi, const double *lo, int32_t d, double h)
{
	uint64_t	key = UINT64_C(14695981039346656037);

	for (int32_t j = 0; j < d; j++)
	{
		int64_t		c = (int64_t) floor((xi[j] - lo[j]) / h);

		for (int b = 0; b < 8; b++)
		{
			key ^= (uint64_t) (c >> (8 * b)) & 0xff;
			key *= UINT64_C(1099511628211);
		}
	}
	return key;
}

typedef struct KeyRow
{
	uint64_t	key;
	int64_t		row;
} KeyRow;

static int
cmp_keyrow(const void *pa, const void *pb)
{
	const KeyRow *a = pa,
			   *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->row < b->row ? -1 : a->row > b->row;
}

/*
 * A regular grid: the cell side is bisected (in log scale) until about k
 * cells are occupied; rows of a cell form a cluster (two cells whose keys
 * collide form one, which only costs a split).
 */
static SvcStatus
init_grid(Aid *s, int64_t k, SvcError *err)
{
	const SvcEnv *env = s->env;
	int32_t		d = s->d;
	KeyRow	   *kr = svc_alloc(env, sizeof(KeyRow) * (size_t) s->n, err);
	double	   *lo = svc_alloc(env, sizeof(double) * (size_t) d, err);
	double		span = 0.0,
				hlo,
				hhi,
				h = 0.0;
	int64_t		cells = 0;

	if (kr == NULL || lo == NULL)
	{
		svc_free(env, kr);
		svc_free(env, lo);
		return SVC_ERR_NOMEM;
	}
	for (int32_t j = 0; j < d; j++)
	{
		double		mn = HUGE_VAL,
					mx = -HUGE_VAL;

		for (int64_t i = 0; i < s->n; i++)
		{
			double		v = s->x[(size_t) i * d + j];

			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
		}
		lo[j] = mn;
		span = fmax(span, mx - mn);
	}
	if (!(span > 0))
		span = 1.0;
	hlo = span * 1e-6;
	hhi = span * 2.0;
	for (int t = 0; t < GRID_TRIES; t++)
	{
		if (svc_interrupted(env, err))
		{
			svc_free(env, kr);
			svc_free(env, lo);
			return err->status;
		}
		h = sqrt(hlo * hhi);
		for (int64_t i = 0; i < s->n; i++)
		{
			kr[i].key = cell_key(s->x + (size_t) i * d, lo, d, h);
			kr[i].row = i;
		}
		qsort(kr, (size_t) s->n, sizeof(KeyRow), cmp_keyrow);
		cells = 0;
		for (int64_t i = 0; i < s->n; i++)
			if (i == 0 || kr[i].key != kr[i - 1].key)
				cells++;
		if (cells > k)
			hlo = h;
		else
			hhi = h;
		if (cells >= k * 9 / 10 && cells <= k * 11 / 10 + 1)
			break;
	}
	s->m = 0;
	s->start[0] = 0;
	for (int64_t i = 0; i < s->n; i++)
	{
		if (i > 0 && kr[i].key != kr[i - 1].key)
			s->start[++s->m] = i;
		s->perm[i] = kr[i].row;
	}
	s->start[++s->m] = s->n;
	svc_free(env, kr);
	svc_free(env, lo);
	return SVC_OK;
}

/* ---- one round ---- */

/* The rows' multiplier in cluster g: exactly 0 or C at a bound. */
static double
alpha_of(const Aid *s, int64_t g)
{
	if (!(s->a[g] > 0))
		return 0.0;
	if (s->a[g] >= s->cb[g])
		return s->c;
	return s->a[g] / (double) csize(s, g);
}

/*
 * s = K alpha on every row, updated from the last round's: every row of a
 * cluster had the same multiplier then (the cluster was one, or part of
 * one), so s changes by (alpha_new - alpha_old) r_G for the clusters whose
 * multiplier changed.  Clusters that stay at 0 or at their bound, most of
 * the rows, cost nothing.  arow keeps the rows' multipliers.
 */
static SvcStatus
row_sums(Aid *s, SvcError *err)
{
	int64_t		done = 0;

	for (int64_t g = 0; g < s->m; g++)
	{
		double		an = alpha_of(s, g),
					w = an - s->arow[s->perm[s->start[g]]];

		if (w == 0.0)
			continue;
		for (int64_t u = s->start[g]; u < s->start[g + 1]; u++)
			s->arow[s->perm[u]] = an;
		{
			SvcStatus	st;
			const double *rg = get_r(s, g, &st, err);

			if (st != SVC_OK)
				return st;
			if (rg != NULL)
			{
				if (++done % 16 == 0 && svc_interrupted(s->env, err))
					return err->status;
				for (int64_t i = 0; i < s->n; i++)
					s->s[i] += w * rg[i];
				continue;
			}
		}
		for (int64_t u = s->start[g]; u < s->start[g + 1]; u++)
		{
			int64_t		row = s->perm[u];

			if (++done % 16 == 0 && svc_interrupted(s->env, err))
				return err->status;
			svc_kernel_column(s->x, s->d, row, s->gamma, NULL, s->n, s->buf);
			s->buf[row] = 1.0;
			for (int64_t i = 0; i < s->n; i++)
				s->s[i] += w * s->buf[i];
		}
	}
	return SVC_OK;
}

/*
 * The lower bound on F from the rows' sums s and Q = alpha' K alpha: the
 * one-class primal at w = sum alpha_i phi(x_i) and its best rho,
 *   V = Q / 2 + C sum_i max(0, rho - s_i) - rho,
 * bounds -Q* / 2 from above (weak duality), so F* = Q* - 1 >= -1 - 2 V.
 * V is convex and piecewise linear in rho with its corners at the s_i:
 * at the k-th smallest, V = Q / 2 + C (k s_(k) - sum_{i<k} s_(i)) - s_(k).
 */
static double
lower_bound(Aid *s, double q)
{
	double		best = HUGE_VAL,
				prefix = 0.0;

	memcpy(s->buf, s->s, sizeof(double) * (size_t) s->n);
	qsort(s->buf, (size_t) s->n, sizeof(double), svc_cmp_double);
	for (int64_t k = 0; k < s->n; k++)
	{
		double		v = q / 2.0 + s->c * ((double) k * s->buf[k] - prefix) - s->buf[k];

		if (v < best)
			best = v;
		prefix += s->buf[k];
	}
	return -1.0 - 2.0 * best;
}

/* The state of cluster g's multiplier: -1 at 0, 1 at its bound, 0 free. */
static int
state_of(const Aid *s, int64_t g)
{
	if (!(s->a[g] > 0))
		return -1;
	if (s->a[g] >= s->cb[g])
		return 1;
	return 0;
}

/* Whether cluster g passes the row check at offset rho with slack tf. */
static bool
passes(const Aid *s, int64_t g, double rho, double tf)
{
	int			state = state_of(s, g);

	if (csize(s, g) == 1)
		return true;			/* a row: nothing to split */
	for (int64_t u = s->start[g]; u < s->start[g + 1]; u++)
	{
		double		f = s->s[s->perm[u]] - rho;

		if (state < 0 ? f < -tf : state > 0 ? f > tf : fabs(f) > tf)
			return false;
	}
	return true;
}

/*
 * Split the failing clusters by the sign of f (or, when all its rows are
 * on one side, at the median of f: a free cluster within the slack, or
 * one that fails by rounding alone), into perm2/start2 and the next start
 * a2 (a_G shared in proportion to the sizes, so the solution is the
 * same); *failed gets the failing count.  kgg2 gets the self-kernels of
 * the clusters kept, NAN for the new ones; rc2 their cached sums, and a
 * cached cluster that splits leaves the sums of both parts (the smaller's
 * computed, the larger's by difference; the smaller's cached only while
 * there is room).
 */
static SvcStatus
split(Aid *s, double rho, double tf, int64_t *failed, SvcError *err)
{
	int64_t		m2 = 0;

	*failed = 0;
	s->start2[0] = 0;
	for (int64_t g = 0; g < s->m; g++)
	{
		int64_t		b = s->start[g],
					e = s->start[g + 1],
					sz = e - b,
					npos = 0,
					w;

		if (passes(s, g, rho, tf))
		{
			memcpy(s->perm2 + b, s->perm + b, sizeof(int64_t) * (size_t) sz);
			s->a2[m2] = s->a[g];
			s->kgg2[m2] = s->kgg[g];
			s->rc2[m2] = s->rc[g];
			s->stamp2[m2] = s->stamp[g];
			s->start2[++m2] = e;
			continue;
		}
		(*failed)++;
		/* f >= 0 first, then f < 0 (stable) */
		w = b;
		for (int64_t u = b; u < e; u++)
			if (s->s[s->perm[u]] - rho >= 0)
				s->perm2[w++] = s->perm[u];
		npos = w - b;
		for (int64_t u = b; u < e; u++)
			if (!(s->s[s->perm[u]] - rho >= 0))
				s->perm2[w++] = s->perm[u];
		if (npos == 0 || npos == sz)
		{
			/* one side only: at the median of f, higher half first */
			for (int64_t u = b; u < e; u++)
				s->buf[u - b] = s->s[s->perm[u]];
			qsort(s->buf, (size_t) sz, sizeof(double), svc_cmp_double);
			{
				double		med = s->buf[sz / 2];

				w = b;
				for (int64_t u = b; u < e; u++)
					if (s->s[s->perm[u]] >= med)
						s->perm2[w++] = s->perm[u];
				npos = w - b;
				for (int64_t u = b; u < e; u++)
					if (!(s->s[s->perm[u]] >= med))
						s->perm2[w++] = s->perm[u];
			}
			if (npos == sz)
			{
				/* all equal: halve by position */
				memcpy(s->perm2 + b, s->perm + b, sizeof(int64_t) * (size_t) sz);
				npos = sz / 2;
			}
		}
		{
			double		share = (double) npos / (double) sz;
			double		a1 = fmin(s->a[g] * share, (double) npos * s->c);
			double		a2 = s->a[g] - a1;

			if (a2 > (double) (sz - npos) * s->c)
				a2 = (double) (sz - npos) * s->c;
			s->a2[m2] = a1;
			s->kgg2[m2] = NAN;
			s->rc2[m2] = NULL;
			s->stamp2[m2] = 0;
			s->start2[++m2] = b + npos;
			s->a2[m2] = a2;
			s->kgg2[m2] = NAN;
			s->rc2[m2] = NULL;
			s->stamp2[m2] = 0;
			s->start2[++m2] = e;
		}
		if (s->rc[g] != NULL)
		{
			/* the smaller part's sums; the larger's are the rest */
			bool		first_small = npos <= sz - npos;
			int64_t		small = first_small ? m2 - 2 : m2 - 1;
			int64_t		big = first_small ? m2 - 1 : m2 - 2;
			const int64_t *rows = s->perm2 + (first_small ? b : b + npos);
			int64_t		cnt = first_small ? npos : sz - npos;
			double	   *rg = s->rc[g];
			SvcStatus	st = full_sums(s, rows, cnt, s->r, err);

			if (st != SVC_OK)
				return st;
			for (int64_t i = 0; i < s->n; i++)
				rg[i] -= s->r[i];
			s->rc2[big] = rg;
			s->stamp2[big] = s->stamp[g];
			if (s->rused < s->rcap)
			{
				double	   *v = svc_alloc(s->env, sizeof(double) * (size_t) s->n, err);

				if (v == NULL)
					return SVC_ERR_NOMEM;
				s->pool[s->rused++] = v;
				memcpy(v, s->r, sizeof(double) * (size_t) s->n);
				s->rc2[small] = v;
				s->stamp2[small] = s->stamp[g];
			}
		}
	}
	if (*failed > 0)
	{
		int64_t    *t;
		double	   *td;
		double	  **tp;

		t = s->perm;
		s->perm = s->perm2;
		s->perm2 = t;
		t = s->start;
		s->start = s->start2;
		s->start2 = t;
		td = s->kgg;
		s->kgg = s->kgg2;
		s->kgg2 = td;
		tp = s->rc;
		s->rc = s->rc2;
		s->rc2 = tp;
		t = s->stamp;
		s->stamp = s->stamp2;
		s->stamp2 = t;
		s->m = m2;
	}
	return SVC_OK;
}

/* ---- the driver ---- */

/* A solve's work, added to the totals. */
static void
count_solve(SvcAidResult *out, const SvcSmoResult *res)
{
	out->smo_iterations += res->iterations;
	out->cache_hits += res->cache_hits;
	out->cache_misses += res->cache_misses;
}

/* A solve's solution (all but alpha, which the caller maps to rows). */
static void
take_solution(SvcAidResult *out, const SvcSmoResult *res)
{
	out->objective = res->objective;
	out->offset = res->offset;
	out->r2 = res->r2;
	out->smo_gap = res->gap;
	out->n_free = res->n_free;
	out->n_bound = res->n_bound;
}

typedef struct SumRow
{
	double		s;
	int64_t		row;
	const double *p;			/* the row's values */
	int32_t		d;
} SumRow;

/* By the row's sum K alpha, then by row: the farthest outside first. */
static int
cmp_sumrow(const void *pa, const void *pb)
{
	const SumRow *a = pa,
			   *b = pb;

	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return (a->row > b->row) - (a->row < b->row);
}

/* By the row's values (the copies of a point together), then by row. */
static int
cmp_point(const void *pa, const void *pb)
{
	const SumRow *a = pa,
			   *b = pb;

	for (int32_t j = 0; j < a->d; j++)
		if (a->p[j] != b->p[j])
			return a->p[j] < b->p[j] ? -1 : 1;
	return (a->row > b->row) - (a->row < b->row);
}

/* perm[b..e) in cmp's order, through sr's pairs. */
static void
sort_rows(Aid *s, SumRow *sr, int64_t b, int64_t e,
		  int (*cmp) (const void *, const void *))
{
	for (int64_t u = b; u < e; u++)
	{
		sr[u - b].row = s->perm[u];
		sr[u - b].s = s->s[s->perm[u]];
		sr[u - b].p = s->x + (size_t) s->perm[u] * (size_t) s->d;
		sr[u - b].d = s->d;
	}
	qsort(sr, (size_t) (e - b), sizeof(SumRow), cmp);
	for (int64_t u = b; u < e; u++)
		s->perm[u] = sr[u - b].row;
}

/* Rows u and u - 1 of perm are the same point. */
static bool
same_point(const Aid *s, int64_t u)
{
	const double *a = s->x + (size_t) s->perm[u] * (size_t) s->d,
			   *b = s->x + (size_t) s->perm[u - 1] * (size_t) s->d;

	for (int32_t j = 0; j < s->d; j++)
		if (a[j] != b[j])
			return false;
	return true;
}

/*
 * Where a straddling cluster's rows each carry most of their own kernel
 * sum (the mean over their rows of alpha_i / sum_j alpha_j K_ij above
 * this), the rows barely overlap at the kernel's width and the optimum
 * keeps nearly every row free with a like multiplier: gathered on few
 * rows, smo spends about a step per row spreading the weight back out
 * and drops no row (Shuttle-like 9-D rows at 4 times the exact solvers'
 * gamma: 0.64-0.84, 2.4-3.9 times the polish's steps; at their gamma
 * 0.30-0.39, the same support vectors either way).  2-D and 3-D blobs,
 * where gathering drops up to 3,900 of 6,900 support vectors: at most
 * 0.12.
 */
#define AID_OWN_SHARE 0.25

/*
 * The polish's start, start[row] for every row: the rounds' multipliers,
 * but each free cluster of two or more rows puts its a_G on its rows in
 * the order of their sums (the lowest f, farthest outside, first), C
 * each, the rest on the next row and 0 on the others.  The sums and the
 * bounds are the rounds', so the start is feasible.  The rounds' spread
 * stays (*gathered false) where the rows' own share is above
 * AID_OWN_SHARE and no point repeats in those clusters: smo moves no
 * weight between the copies of a point (their gradients are equal), and
 * from the spread it kept them all (9-D rows, a third of them repeated, at
 * an own share of 0.68: 4,990 support vectors against 3,390 gathered).
 * Each cluster's rows in perm are sorted on the way (perm is not needed
 * after the rounds); the sort's pairs (32 bytes a row) take the
 * aggregated solve's share of the memory (svc_aid_memory), freed by then.
 */
static SvcStatus
gather_start(Aid *s, double *start, bool *gathered, SvcError *err)
{
	int64_t		rows = 0,
				most = 0,
				copies = 0;
	double		own = 0.0;
	SumRow	   *sr;

	*gathered = false;
	for (int64_t g = 0; g < s->m; g++)
	{
		double		v = alpha_of(s, g);

		for (int64_t u = s->start[g]; u < s->start[g + 1]; u++)
			start[s->perm[u]] = v;
		if (state_of(s, g) == 0 && csize(s, g) > most)
			most = csize(s, g);
	}
	if (most < 2)
		return SVC_OK;
	sr = svc_alloc(s->env, sizeof(SumRow) * (size_t) most, err);
	if (sr == NULL)
		return err->status;
	for (int64_t g = 0; g < s->m; g++)
	{
		int64_t		b = s->start[g],
					e = s->start[g + 1];
		double		v = alpha_of(s, g);

		if (state_of(s, g) != 0 || e - b < 2)
			continue;
		sort_rows(s, sr, b, e, cmp_point);
		for (int64_t u = b; u < e; u++)
		{
			copies += u > b && same_point(s, u);
			/* s_i >= alpha_i K_ii = alpha_i > 0, up to rounding */
			own += fmin(v / fmax(s->s[s->perm[u]], 1e-300), 1.0);
		}
		rows += e - b;
	}
	*gathered = copies > 0 || own <= AID_OWN_SHARE * (double) rows;
	for (int64_t g = 0; *gathered && g < s->m; g++)
	{
		int64_t		b = s->start[g],
					e = s->start[g + 1];
		double		rest = s->a[g];

		if (state_of(s, g) != 0 || e - b < 2)
			continue;
		sort_rows(s, sr, b, e, cmp_sumrow);
		for (int64_t u = b; u < e; u++)
		{
			double		w = fmin(rest, s->c);

			start[s->perm[u]] = w > 0 ? w : 0.0;
			rest -= w;
		}
	}
	svc_free(s->env, sr);
	return SVC_OK;
}

/*
 * The completion after the polish: the polish solves over the rounds'
 * support vectors alone, so a row it left at 0 may end outside the new
 * sphere by more than the tolerance (m - M up to 24 times eps on 2-D
 * blobs), and the solution is then no KKT point of the whole problem, nor
 * near the optimum that smo and incremental reach at a tight tolerance
 * (aid's clusters of d31 at tol 1e-6: 15 without, the optimum's 16 with
 * the completion).  Every row's sum
 * s_i = sum_j alpha_j K_ij is taken over the support vectors; a row at 0
 * violates smo's stopping rule when -G_i = 1 - 2 s_i exceeds the smallest
 * -G_j of the rows above 0 by eps or more (smo.h), that is when s_i is
 * below their largest s_j by eps / 2.  act[] gains those rows, and the
 * caller solves again from the solution.  Returns the rows added in
 * *added: none, and the solution stops where smo would on every row.
 */
static SvcStatus
complete_rows(const SvcEnv *env, const double *x, int64_t n, int32_t d,
			  const SvcAidParams *p, const double *alpha, bool *act,
			  int64_t *list, double *sum, double *buf, int64_t *added, SvcError *err)
{
	double		top = -HUGE_VAL;
	int64_t		m = 0,
				done = 0;

	/* the rows that may join, and the support vectors for the largest sum */
	*added = 0;
	for (int64_t i = 0; i < n; i++)
		if (!act[i] || alpha[i] > 0)
		{
			list[m++] = i;
			sum[i] = 0.0;
		}
	for (int64_t j = 0; j < n; j++)
	{
		if (!(alpha[j] > 0))
			continue;
		if (++done % 16 == 0 && svc_interrupted(env, err))
			return err->status;
		svc_kernel_values(x, d, j, p->gamma, list, m, buf);
		for (int64_t k = 0; k < m; k++)
			sum[list[k]] += alpha[j] * (list[k] == j ? 1.0 : buf[k]);
	}
	for (int64_t j = 0; j < n; j++)
		if (alpha[j] > 0 && sum[j] > top)
			top = sum[j];
	for (int64_t k = 0; k < m; k++)
		if (!act[list[k]] && sum[list[k]] <= top - p->eps / 2.0)
		{
			act[list[k]] = true;
			(*added)++;
		}
	return SVC_OK;
}

/* At most this many solves after the polish's: each adds the rows outside. */
#define AID_COMPLETE_PASSES 50

/*
 * The polish (p->polish): when the gap stops the rounds, the clusters that
 * still straddle the sphere spread their weight over all their rows, so
 * nearly every row of them is a support vector with a small multiplier
 * (1.8 times smo's support vectors on five 3-D blobs at the exact solvers'
 * automatic width).  smo on those support vectors alone (every other
 * multiplier stays 0) gathers the weight on the rows that hold the
 * boundary.  It starts from start (gather_start: each straddling
 * cluster's weight on its rows farthest outside), as smo's own start puts
 * the weight on few rows: from the even spread it stops at its tolerance
 * with the many rows within the tolerance of the sphere still free (1.85
 * times smo's support vectors on 5,000 rows of 2-D blobs; doc/aid.md).
 * start is NULL where the rows barely overlap (gather_start): smo starts
 * from the rounds' solution.  Each step lowers F, but the gathered start lies above the rounds' F, so
 * a solve that ends above it is dropped and smo runs again from the
 * rounds' solution itself; the gap is taken again against the same lower
 * bound.  Then the rows the sphere moved past join (complete_rows), and
 * smo runs again from the solution over the larger set, until no row is
 * left outside by the tolerance.  It costs one solve (rarely two) over the
 * support vectors, 1-3 more as rows join (15-35% of aid's time at the
 * exact solvers' width), and a kernel sum over the support vectors for
 * every row per pass, within the memory of the aggregated solves
 * (released before it).
 */
static SvcStatus
polish(const SvcEnv *env, const double *x, int64_t n, int32_t d, const SvcAidParams *p,
	   SvcAidResult *out, const double *start, SvcError *err)
{
	int64_t		ns = 0,
				k;
	int64_t    *idx;
	int64_t    *list;
	double	   *xs = NULL,
			   *a0,
			   *sum,
			   *buf;
	bool	   *act;
	SvcSmoParams sp;
	SvcStatus	st = SVC_ERR_NOMEM;

	for (int64_t i = 0; i < n; i++)
		ns += out->alpha[i] > 0;
	if (ns < 2)
		return SVC_OK;
	idx = svc_alloc(env, sizeof(int64_t) * (size_t) n, err);
	list = svc_alloc(env, sizeof(int64_t) * (size_t) n, err);
	a0 = svc_alloc(env, sizeof(double) * (size_t) n, err);
	sum = svc_alloc(env, sizeof(double) * (size_t) n, err);
	buf = svc_alloc(env, sizeof(double) * (size_t) n, err);
	act = svc_alloc0(env, sizeof(bool) * (size_t) n, err);
	if (!idx || !list || !a0 || !sum || !buf || !act)
		goto done;
	for (int64_t i = 0; i < n; i++)
		act[i] = out->alpha[i] > 0;
	svc_smo_params_default(&sp);
	sp.gamma = p->gamma;
	sp.c_all = p->c;
	sp.eps = p->eps;
	sp.max_iter = p->max_iter;
	sp.cache_bytes = p->cache_bytes;
	sp.alpha0 = a0;
	for (int pass = 0; pass <= AID_COMPLETE_PASSES; pass++)
	{
		int64_t		added;

		ns = 0;
		for (int64_t i = 0; i < n; i++)
			if (act[i])
				idx[ns++] = i;
		svc_free(env, xs);
		xs = svc_alloc(env, sizeof(double) * (size_t) ns * (size_t) d, err);
		if (xs == NULL)
		{
			st = SVC_ERR_NOMEM;
			goto done;
		}
		for (k = 0; k < ns; k++)
			memcpy(xs + (size_t) k * (size_t) d, x + (size_t) idx[k] * (size_t) d,
				   sizeof(double) * (size_t) d);
		/*
		 * from the gathered start, then (when that ends above) from the
		 * rounds'; the later passes from the last solution, whose rows
		 * added at 0 only let F fall
		 */
		for (int attempt = pass == 0 && start != NULL ? 0 : 1; attempt < 2; attempt++)
		{
			SvcSmoResult res;
			bool		better;

			/* a cluster's share of a_G <= |G| C may round above C */
			for (k = 0; k < ns; k++)
				a0[k] = fmin(attempt == 0 ? start[idx[k]] : out->alpha[idx[k]], p->c);
			st = svc_smo_solve(env, xs, ns, d, &sp, &res, err);
			if (st != SVC_OK)
				goto done;
			count_solve(out, &res);
			better = pass > 0 || res.objective <= out->objective;
			if (better)
			{
				memset(out->alpha, 0, sizeof(double) * (size_t) n);
				for (k = 0; k < ns; k++)
					out->alpha[idx[k]] = res.alpha[k];
				take_solution(out, &res);
				out->gap = out->objective - out->lower > 0 ?
					fmin((out->objective - out->lower) / fmax(-out->lower, 1e-300), 1.0) : 0.0;
			}
			svc_smo_result_free(env, &res);
			if (better)
				break;
		}
		if (pass == AID_COMPLETE_PASSES)
			break;
		st = complete_rows(env, x, n, d, p, out->alpha, act, list, sum, buf, &added, err);
		if (st != SVC_OK || added == 0)
			break;
	}
done:
	svc_free(env, idx);
	svc_free(env, list);
	svc_free(env, xs);
	svc_free(env, a0);
	svc_free(env, sum);
	svc_free(env, buf);
	svc_free(env, act);
	return st;
}

void
svc_aid_params_default(SvcAidParams *p)
{
	memset(p, 0, sizeof(*p));
	p->c = 1.0;
	p->eps = 1e-3;
	p->gap = 1e-4;
	p->cache_bytes = (size_t) 100 << 20;
	p->init = SVC_AID_INIT_GRID;
	p->polish = true;
}

size_t
svc_aid_memory(int64_t n, int32_t d, const SvcAidParams *p)
{
	SvcSmoParams sp;
	size_t		smo,
				per_row,
				total;

	if (n < 0 || (uint64_t) n > SIZE_MAX / 4 || d < 1 || d > SVC_MAX_DIMS)
		return SIZE_MAX;
	svc_smo_params_default(&sp);
	sp.kernel = kbar_column;	/* as the solves are: with the scratch column */
	smo = svc_smo_memory(n, d, &sp);	/* at most n clusters */
	if (smo == SIZE_MAX)
		return SIZE_MAX;
	/*
	 * perm, perm2, rowlist, start, start2 (int64), a, a2, cb, kgg, kgg2, s,
	 * arow, buf, r and the result's alpha (double); the aggregated solve's alpha
	 * and its start; k-means' centres (k <= n) or the grid's keys; the
	 * cache's index.  Its blocks are within cache_bytes.
	 */
	(void) p;
	per_row = 5 * sizeof(int64_t) + 10 * sizeof(double) + 2 * sizeof(double) +
		sizeof(double) * (size_t) d + 2 * sizeof(int64_t) +
		5 * sizeof(void *);		/* rc, rc2, stamp, stamp2, pool */
	if (!svc_size_mul((size_t) n + 1, per_row, &total) || total > SIZE_MAX - smo - 256)
		return SIZE_MAX;
	return total + smo + 256;
}

static void
aid_release(Aid *s)
{
	const SvcEnv *env = s->env;

	svc_free(env, s->perm);
	svc_free(env, s->start);
	svc_free(env, s->perm2);
	svc_free(env, s->start2);
	svc_free(env, s->rowlist);
	svc_free(env, s->a);
	svc_free(env, s->a2);
	svc_free(env, s->cb);
	svc_free(env, s->kgg);
	svc_free(env, s->kgg2);
	svc_free(env, s->s);
	svc_free(env, s->arow);
	svc_free(env, s->buf);
	svc_free(env, s->r);
	for (int64_t i = 0; i < s->rused; i++)
		svc_free(env, s->pool[i]);
	svc_free(env, s->pool);
	svc_free(env, s->rc);
	svc_free(env, s->rc2);
	svc_free(env, s->stamp);
	svc_free(env, s->stamp2);
}

static SvcStatus
check_params(const double *x, int64_t n, int32_t d, const SvcAidParams *p,
			 SvcError *err)
{
	size_t		cells;

	if (n < 1)
		return svc_fail(err, SVC_ERR_INVALID_INPUT, "no rows to train on");
	if (d < 1 || d > SVC_MAX_DIMS)
		return svc_fail(err, SVC_ERR_INVALID_INPUT, "dimension %d is out of range", (int) d);
	if (!(p->gamma > 0) || !isfinite(p->gamma))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "gamma must be finite and positive");
	if (!(p->eps > 0) || !isfinite(p->eps))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "eps must be finite and positive");
	if (!(p->gap >= 0) || !isfinite(p->gap))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "the gap must be finite and >= 0");
	if (!(p->c > 0) || !isfinite(p->c) || p->c * (double) n < 1.0 - 1e-12)
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
						"the bound C must be positive with C n >= 1");
	if (p->init != SVC_AID_INIT_KMEANS && p->init != SVC_AID_INIT_GRID)
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "unknown initial grouping");
	if (!svc_size_mul((size_t) n, (size_t) d, &cells) || svc_aid_memory(n, d, p) == SIZE_MAX)
		return svc_fail(err, SVC_ERR_LIMIT, "%lld rows of %d values are too many",
						(long long) n, (int) d);
	if (svc_first_nonfinite(x, cells) >= 0)
		return svc_fail(err, SVC_ERR_INVALID_INPUT, "row %lld has a non-finite value",
						(long long) (svc_first_nonfinite(x, cells) / d));
	return SVC_OK;
}

/* Record the round's aggregate count in out->aggregates. */
static SvcStatus
record_round(const SvcEnv *env, SvcAidResult *out, int64_t *cap, int64_t m,
			 SvcError *err)
{
	SvcStatus	st = svc_grow(env, (void **) &out->aggregates, cap,
							  (int64_t) out->rounds + 1, sizeof(int64_t), err);

	if (st != SVC_OK)
		return st;
	out->aggregates[out->rounds++] = m;
	return SVC_OK;
}

SvcStatus
svc_aid_solve(const SvcEnv *env, const double *x, int64_t n, int32_t d,
			  const SvcAidParams *p, SvcAidResult *out, SvcError *err)
{
	Aid			s;
	SvcStatus	st;
	size_t		vec = sizeof(double) * (size_t) n,
				ivec = sizeof(int64_t) * ((size_t) n + 1),
				smo_cache;
	int64_t		k,
				cap = 0;
	double		lower = -HUGE_VAL,
				c = p->c < 1.0 ? p->c : 1.0,
				rho = 0.0,
				q = 0.0;
	bool		warm = false;

	memset(out, 0, sizeof(*out));
	st = check_params(x, n, d, p, err);
	if (st != SVC_OK)
		return st;
	memset(&s, 0, sizeof(s));
	s.env = env;
	s.x = x;
	s.n = n;
	s.d = d;
	s.gamma = p->gamma;
	s.c = c;
	/* three quarters of the cache for the rows' sums, a quarter for the
	 * solves' columns of Kbar (m doubles each, cheap to fill from them) */
	s.rcap = (int64_t) (p->cache_bytes / 4 * 3 / vec);
	if (s.rcap > n)
		s.rcap = n;
	smo_cache = p->cache_bytes - (size_t) s.rcap * vec;
	if ((s.perm = svc_alloc(env, ivec, err)) == NULL ||
		(s.start = svc_alloc(env, ivec, err)) == NULL ||
		(s.perm2 = svc_alloc(env, ivec, err)) == NULL ||
		(s.start2 = svc_alloc(env, ivec, err)) == NULL ||
		(s.rowlist = svc_alloc(env, ivec, err)) == NULL ||
		(s.a = svc_alloc(env, vec, err)) == NULL ||
		(s.a2 = svc_alloc(env, vec, err)) == NULL ||
		(s.cb = svc_alloc(env, vec, err)) == NULL ||
		(s.kgg = svc_alloc(env, vec, err)) == NULL ||
		(s.kgg2 = svc_alloc(env, vec, err)) == NULL ||
		(s.s = svc_alloc0(env, vec, err)) == NULL ||
		(s.arow = svc_alloc0(env, vec, err)) == NULL ||
		(s.buf = svc_alloc(env, vec, err)) == NULL ||
		(s.r = svc_alloc(env, vec, err)) == NULL ||
		(s.rc = svc_alloc0(env, sizeof(double *) * (size_t) n, err)) == NULL ||
		(s.rc2 = svc_alloc0(env, sizeof(double *) * (size_t) n, err)) == NULL ||
		(s.stamp = svc_alloc0(env, ivec, err)) == NULL ||
		(s.stamp2 = svc_alloc0(env, ivec, err)) == NULL ||
		(s.rcap > 0 && (s.pool = svc_alloc(env, sizeof(double *) * (size_t) s.rcap, err)) == NULL))
	{
		st = err->status;
		goto fail;
	}

	k = p->init_clusters > 0 ? p->init_clusters : n / AUTO_ROWS_PER_CLUSTER;
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	st = p->init == SVC_AID_INIT_GRID ? init_grid(&s, k, err) :
		init_kmeans(&s, k, p->seed, err);
	if (st != SVC_OK)
		goto fail;
	for (int64_t g = 0; g < s.m; g++)
		s.kgg[g] = NAN;

	for (;;)
	{
		SvcSmoParams sp;
		SvcSmoResult res;
		SvcAidRound rd;
		double		lr,
					tf = p->eps / 2.0;
		int64_t		failed;

		/* the new clusters' bounds and self-kernels */
		for (int64_t g = 0; g < s.m; g++)
		{
			s.cb[g] = (double) csize(&s, g) * c;
			if (isnan(s.kgg[g]) && (st = self_kernel(&s, g, &s.kgg[g], err)) != SVC_OK)
				goto fail;
		}
		svc_smo_params_default(&sp);
		sp.c = s.cb;
		sp.eps = p->eps;
		sp.max_iter = p->max_iter;
		sp.cache_bytes = smo_cache;
		sp.kernel = kbar_column;
		sp.kernel_ctx = &s;
		sp.diag = s.kgg;
		sp.alpha0 = warm ? s.a2 : NULL;
		st = svc_smo_solve(env, NULL, s.m, d, &sp, &res, err);
		if (st != SVC_OK)
			goto fail;
		memcpy(s.a, res.alpha, sizeof(double) * (size_t) s.m);
		rho = res.offset;
		count_solve(out, &res);
		rd.smo_iterations = res.iterations;
		out->smo_gap = res.gap;
		svc_smo_result_free(env, &res);
		if ((st = record_round(env, out, &cap, s.m, err)) != SVC_OK)
			goto fail;

		/* the rows' sums, the bounds and the gap */
		if ((st = row_sums(&s, err)) != SVC_OK)
			goto fail;
		q = 0.0;
		for (int64_t g = 0; g < s.m; g++)
		{
			double		sum = 0.0;

			if (!(s.a[g] > 0))
				continue;
			for (int64_t u = s.start[g]; u < s.start[g + 1]; u++)
				sum += s.s[s.perm[u]];
			q += alpha_of(&s, g) * sum;
		}
		lr = lower_bound(&s, q);
		if (lr > lower)
			lower = lr;
		/*
		 * F of this round's multipliers, from the rows' sums: it never rises
		 * (the solve starts from the last solution and every step lowers
		 * it), but it is not clamped, so that the tests see it if it did
		 */
		out->objective = q - 1.0;
		out->lower = lower;
		/* F <= 0 <= -lower; rounding aside, so the gap is in [0, 1] */
		out->gap = out->objective - lower > 0 ?
			fmin((out->objective - lower) / fmax(-lower, 1e-300), 1.0) : 0.0;

		rd.round = out->rounds - 1;
		rd.aggregates = s.m;
		rd.upper = out->objective;
		rd.lower = lower;
		rd.lower_round = lr;
		rd.gap = out->gap;
		rd.failed = -1;			/* not checked: stopped by the gap or the cap */
		if (out->gap <= p->gap || (p->max_rounds > 0 && out->rounds >= p->max_rounds))
		{
			if (p->observe)
				p->observe(p->observe_ctx, &rd);
			out->converged = out->gap <= p->gap;
			break;
		}
		if (svc_interrupted(env, err))
		{
			st = err->status;
			goto fail;
		}
		if ((st = split(&s, rho, tf, &failed, err)) != SVC_OK)
			goto fail;
		rd.failed = failed;
		if (p->observe)
			p->observe(p->observe_ctx, &rd);
		if (failed == 0)
		{
			/* every cluster passes: optimal for the rows, to the tolerance */
			out->converged = true;
			out->all_passed = true;
			break;
		}
		warm = true;
	}

	/* the rows' multipliers, and the sphere of the last solve */
	out->alpha = svc_alloc(env, vec, err);
	if (out->alpha == NULL)
	{
		st = err->status;
		goto fail;
	}
	{
		int64_t		multi = 0;

		for (int64_t g = 0; g < s.m; g++)
		{
			int			state = state_of(&s, g);
			int64_t		sz = csize(&s, g);
			double		v = alpha_of(&s, g);

			if (sz > 1)
				multi += sz;
			for (int64_t u = s.start[g]; u < s.start[g + 1]; u++)
				out->alpha[s.perm[u]] = v;
			if (state > 0)
				out->n_bound += sz;
			else if (state == 0)
				out->n_free += sz;
		}
		out->share_aggregated = (double) multi / (double) n;
	}
	out->final_clusters = s.m;
	out->sums_computed = s.r_computed;
	out->offset = rho;
	out->r2 = 1.0 - 2.0 * rho + q;
	if (p->polish && !out->all_passed)
	{
		/* the next round's start is free now: the polish's start */
		double	   *start = s.a2;

		bool		gathered;

		s.a2 = NULL;
		st = gather_start(&s, start, &gathered, err);
		aid_release(&s);
		if (st == SVC_OK)
			st = polish(env, x, n, d, p, out, gathered ? start : NULL, err);
		svc_free(env, start);
		if (st != SVC_OK)
		{
			svc_aid_result_free(env, out);
			return st;
		}
		return SVC_OK;
	}
	aid_release(&s);
	return SVC_OK;

fail:
	aid_release(&s);
	svc_free(env, out->aggregates);
	out->aggregates = NULL;
	svc_free(env, out->alpha);
	out->alpha = NULL;
	return st;
}

void
svc_aid_result_free(const SvcEnv *env, SvcAidResult *r)
{
	svc_free(env, r->alpha);
	svc_free(env, r->aggregates);
	r->alpha = NULL;
	r->aggregates = NULL;
}
