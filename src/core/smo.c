/*
 * smo.c - exact SVDD dual by SMO with second-order working sets, an LRU
 *         kernel-column cache and shrinking
 *
 * Notation.  F(alpha) = alpha' K alpha - sum_i alpha_i (K_ii = 1), so the
 * gradient is G = 2 K alpha - 1 and F along alpha + delta (e_i - e_j) is
 *   F + delta (G_i - G_j) + delta^2 (K_ii + K_jj - 2 K_ij).
 * The equality constraint's coefficients are all +1, so (as in libsvm with
 * y = +1) alpha_i may grow when alpha_i < C_i (the set I_up) and alpha_j
 * may shrink when alpha_j > 0 (I_low).  KKT: some lambda has G_t >= lambda
 * on I_up's rows and G_t <= lambda on I_low's, i.e. m <= M with
 * m = max_{I_up} -G_t and M = min_{I_low} -G_t; we stop when m - M < eps.
 *
 * Working set (WSS3 of Fan, Chen and Lin 2005): i = argmax_{I_up} -G_t,
 * then j = argmin over t in I_low with b = G_t - G_i > 0 of -b^2 / a, where
 * a = 2 (K_ii + K_tt - 2 K_it) is the pair's curvature in libsvm's scale:
 * libsvm writes the objective as 1/2 a' Q a, and ours is that with Q = 2K,
 * hence the factor 2.  The step is then delta = b / a (the minimiser of
 * -b delta + a/2 delta^2), clipped so that alpha_i <= C_i and alpha_j >= 0.
 * a <= 0 (duplicate rows) becomes TAU, a huge step that the box clips.
 *
 * The offset.  The centre is c = sum_i alpha_i phi(x_i), and
 *   ||phi(x) - c||^2 = 1 - 2 s(x) + Q,  s(x) = sum_i alpha_i K(x_i, x),
 * with Q = alpha' K alpha.  Inside the sphere of radius R means
 *   s(x) >= (1 + Q - R^2) / 2 =: offset,
 * so f(x) = s(x) - offset >= 0 inside, and
 *   R^2 - ||phi(x) - c||^2 = 2 f(x)
 * (the same form, up to the factor 2).  The free support vectors lie on
 * the sphere, so offset = s(x_k) = (G_k + 1) / 2 on each of them; we
 * average over them.  Without a free one, KKT only brackets it: rows at
 * C_t have G_t <= lambda (s <= offset, outside) and rows at 0 have
 * G_t >= lambda (s >= offset, inside), and we take the midpoint of
 * [max s over rows at C, min s over rows at 0] as libsvm does (the first
 * end alone when no row is at 0).
 *
 * Signed rows (SVDD with negative examples, Tax and Duin 2004).  A row may
 * have a lower bound L_t < 0 instead of 0: a labelled anomaly, with
 * alpha_t in [L_t, 0].  Its alpha is y_t a_t with y_t = -1 in the authors'
 * form, so the equality constraint sum_t alpha_t = 1 keeps coefficients of
 * +1 and the working-set rules above hold with 0 read as L_t: I_up is
 * alpha_t < C_t, I_low is alpha_t > L_t (libsvm's y = -1 sets reduce to
 * this once the sign is folded into alpha).  A negative alpha lowers s(x)
 * near the row: KKT leaves an anomaly at 0 outside (s <= offset), free on
 * the sphere, or at L_t inside (it could not be pushed out).  To put the
 * first two strictly outside, a row may have a margin m_t: row t's sphere
 * constraint moves to ||phi(x_t) - c||^2 = R^2 + 2 m_t (a row with
 * alpha_t >= 0 must be within, a signed row beyond; 2 f(x) is
 * R^2 - ||phi(x) - c||^2), which adds 2 m_t alpha_t to F: the gradient
 * is G_t = 2 (K alpha)_t - 1 + 2 m_t, the offset below reads
 * (G_t + 1) / 2 = s(x_t) + m_t where it reads s(x_t) on the other rows,
 * and the row ends with f <= -m_t at its upper bound or free and
 * f >= -m_t at its lower bound or free (to the tolerance).  An anomaly
 * takes m_t > 0 (outside by m_t at 0 or free), a labelled normal m_t < 0
 * (inside by |m_t| unless at C_t).  Rows without margins keep the
 * arithmetic they had.
 *
 * Shrinking follows libsvm: every min(n, 1000) iterations, a row at a bound
 * that cannot enter the working set (at C_t with -G_t > m, at 0 with
 * G_t > -M) leaves the active set; the first time m - M <= 10 eps all rows
 * come back once.  Shrunk rows' gradients are not updated; before
 * declaring convergence they are recomputed from the rows with alpha > 0
 * and the optimality check is repeated on all rows.
 *
 * The cache holds kernel columns of n doubles, filled only on the rows
 * active when computed: a column computed with every row active stays
 * valid, one computed with fewer is valid until the active set grows
 * again (the epoch counts those growths).  When it grows, the gradient of
 * the shrunk rows needs the columns of the rows with alpha > 0 on exactly
 * those rows, so a valid partial column among them is completed then, as
 * libsvm extends its columns, rather than computed again later.
 */
#include "smo.h"
#include "kernel.h"

#include <math.h>
#include <string.h>

#define TAU 1e-12
#define COL_COMPLETE INT64_C(-1)
#define INTERRUPT_EVERY 1000
#define RECON_BLOCK 256
/* relative slack of sum C_i >= 1, so that C = 1/n passes despite rounding */
#define SUM_C_SLACK 1e-12

typedef struct Smo
{
	const SvcEnv *env;
	const double *x;
	int64_t		n;
	int32_t		d;
	double		gamma;
	const double *c;
	double		c_all;
	const double *lo;			/* lower bounds L_t (<= 0), or NULL: all 0 */
	const double *margin;		/* per-row margins, or NULL: all 0 */
	const double *alpha0;
	SvcSmoKernelFn kernel;		/* NULL: the RBF of x */
	void	   *kernel_ctx;
	const double *diag;			/* K_tt with kernel, else 1 */
	double	   *scratch;		/* n doubles, with kernel only */

	double	   *alpha;
	double	   *g;				/* G = 2 K alpha - 1, valid on active rows */
	int64_t    *order;			/* a permutation; order[0..active) active */
	int64_t		active;
	int64_t    *pos;			/* list of rows with alpha > 0 (scratch) */

	/* cache: LRU list through prev/next, sentinel n, most recent first */
	double	  **col;
	int64_t    *col_epoch;
	int64_t    *col_active;		/* rows active when a partial column was filled */
	int64_t    *prev;
	int64_t    *next;
	int64_t		cap;
	int64_t		used;
	int64_t		epoch;
	int64_t		hits;
	int64_t		misses;
} Smo;

static inline double
upper(const Smo *s, int64_t t)
{
	return s->c != NULL ? s->c[t] : s->c_all;
}

static inline double
lower(const Smo *s, int64_t t)
{
	return s->lo != NULL ? s->lo[t] : 0.0;
}

/* The linear term of F on row t: -1, and -1 + 2 m_t with margins. */
static inline double
linear(const Smo *s, int64_t t)
{
	return s->margin != NULL ? -1.0 + 2.0 * s->margin[t] : -1.0;
}

/* K_tt: 1 for the RBF */
static inline double
diag(const Smo *s, int64_t t)
{
	return s->diag != NULL ? s->diag[t] : 1.0;
}

/*
 * The curvature of F along e_i - e_j in libsvm's scale (see the top),
 * from K_ij; with the RBF, 2 (2 - 2 K_ij) as it always was.
 */
static inline double
curvature(const Smo *s, int64_t i, int64_t j, double kij)
{
	if (s->diag == NULL)
		return 2.0 * (2.0 - 2.0 * kij);
	return 2.0 * (s->diag[i] + s->diag[j] - 2.0 * kij);
}

/*
 * Column j of K on the rows order[from..to) into q, by the vector exp of
 * kernel.c (or the caller's kernel); q[j] = K_jj exactly whether or not j
 * is among them (an entry outside a column's rows is never read, so
 * writing it is harmless).
 */
static SvcStatus
fill_col(const Smo *s, int64_t j, int64_t from, int64_t to, double *q, SvcError *err)
{
	const int64_t *idx = from == 0 && to == s->n ? NULL : s->order + from;

	if (s->kernel != NULL)
	{
		SvcStatus	st = s->kernel(s->kernel_ctx, j, idx, to - from, q, err);

		if (st != SVC_OK)
			return st;
	}
	else
		svc_kernel_column(s->x, s->d, j, s->gamma, idx, to - from, q);
	q[j] = diag(s, j);
	return SVC_OK;
}

static void
lru_unlink(Smo *s, int64_t i)
{
	s->next[s->prev[i]] = s->next[i];
	s->prev[s->next[i]] = s->prev[i];
}

static void
lru_push_front(Smo *s, int64_t i)
{
	int64_t		h = s->n;

	s->next[i] = s->next[h];
	s->prev[i] = h;
	s->prev[s->next[h]] = i;
	s->next[h] = i;
}

/* Column i of K on the active rows; NULL (err set) when out of memory. */
static const double *
get_col(Smo *s, int64_t i, SvcError *err)
{
	double	   *q = s->col[i];

	if (q != NULL && (s->col_epoch[i] == COL_COMPLETE || s->col_epoch[i] == s->epoch))
	{
		s->hits++;
		lru_unlink(s, i);
		lru_push_front(s, i);
		return q;
	}
	s->misses++;
	if (q != NULL)
		lru_unlink(s, i);
	else if (s->used < s->cap)
	{
		q = svc_alloc(s->env, sizeof(double) * (size_t) s->n, err);
		if (q == NULL)
			return NULL;
		s->used++;
	}
	else
	{
		/* evict the least recently used: never the caller's other column,
		 * which it fetched just before (cap >= 2 whenever n >= 2) */
		int64_t		victim = s->prev[s->n];

		q = s->col[victim];
		s->col[victim] = NULL;
		lru_unlink(s, victim);
	}
	s->col[i] = q;
	lru_push_front(s, i);
	if (fill_col(s, i, 0, s->active, q, err) != SVC_OK)
	{
		/* not a valid column: out of the cache, its buffer freed */
		lru_unlink(s, i);
		s->col[i] = NULL;
		s->used--;
		svc_free(s->env, q);
		return NULL;
	}
	s->col_epoch[i] = s->active == s->n ? COL_COMPLETE : s->epoch;
	s->col_active[i] = s->active;
	return q;
}

/*
 * Gradient of the rows outside the active set, from the rows with alpha > 0.
 * The loop runs column by column (each inactive row's sum accumulates in g,
 * then becomes 2 sum - 1): row by row, each row would touch every cached
 * column at one place, a cache miss per term.  Each row still adds its
 * terms in the order of pos, so the sums are the same either way.
 *
 * A column filled during this epoch is valid on the rows at positions
 * [0, col_active) of order when it was filled.  Shrinking since then only
 * swapped rows below the active count, so the rows it lacks are those at
 * positions [col_active, n) now, all of them among the shrunk rows: fill
 * them (the sum needs most of them anyway) and the column is complete.
 */
static SvcStatus
reconstruct_gradient(Smo *s, SvcError *err)
{
	int64_t		npos = 0;

	if (s->active == s->n)
		return SVC_OK;
	for (int64_t t = 0; t < s->n; t++)
		if (s->alpha[t] != 0)
			s->pos[npos++] = t;
	for (int64_t k = s->active; k < s->n; k++)
		s->g[s->order[k]] = 0.0;
	for (int64_t p = 0; p < npos; p++)
	{
		int64_t		j = s->pos[p];
		double	   *q = s->col[j];
		double		aj = s->alpha[j];

		if (p % 16 == 15 && svc_interrupted(s->env, err))
			return err->status;
		if (q != NULL && s->col_epoch[j] == s->epoch)
		{
			SvcStatus	st = fill_col(s, j, s->col_active[j], s->n, q, err);

			if (st != SVC_OK)
				return st;
			s->col_epoch[j] = COL_COMPLETE;
		}
		if (q != NULL && s->col_epoch[j] == COL_COMPLETE)
			for (int64_t k = s->active; k < s->n; k++)
			{
				int64_t		t = s->order[k];

				s->g[t] += aj * q[t];
			}
		else if (s->kernel != NULL)
		{
			/* the caller's kernel, on the shrunk rows, into the scratch column */
			SvcStatus	st = s->kernel(s->kernel_ctx, j, s->order + s->active,
									   s->n - s->active, s->scratch, err);

			if (st != SVC_OK)
				return st;
			for (int64_t k = s->active; k < s->n; k++)
			{
				int64_t		t = s->order[k];

				s->g[t] += aj * (t == j ? diag(s, j) : s->scratch[t]);
			}
		}
		else
		{
			/* not cached, or stale: the shrunk rows alone, a block at a time */
			double		buf[RECON_BLOCK];

			for (int64_t k0 = s->active; k0 < s->n; k0 += RECON_BLOCK)
			{
				int64_t		b = s->n - k0 < RECON_BLOCK ? s->n - k0 : RECON_BLOCK;

				svc_kernel_values(s->x, s->d, j, s->gamma, s->order + k0, b, buf);
				for (int64_t k = 0; k < b; k++)
				{
					int64_t		t = s->order[k0 + k];

					s->g[t] += aj * (t == j ? 1.0 : buf[k]);
				}
			}
		}
	}
	for (int64_t k = s->active; k < s->n; k++)
	{
		int64_t		t = s->order[k];

		s->g[t] = 2.0 * s->g[t] + linear(s, t);
	}
	s->active = s->n;
	s->epoch++;
	return SVC_OK;
}

/* m = max over active I_up of -G, gmax2 = max over active I_low of G. */
static void
violations(const Smo *s, double *m, double *gmax2)
{
	*m = -INFINITY;
	*gmax2 = -INFINITY;
	for (int64_t k = 0; k < s->active; k++)
	{
		int64_t		t = s->order[k];

		if (s->alpha[t] < upper(s, t) && -s->g[t] > *m)
			*m = -s->g[t];
		if (s->alpha[t] > lower(s, t) && s->g[t] > *gmax2)
			*gmax2 = s->g[t];
	}
}

static bool
can_shrink(const Smo *s, int64_t t, double m, double gmax2)
{
	double		ct = upper(s, t),
				lt = lower(s, t);

	if (ct <= lt)
		return true;			/* alpha_t = L_t = C_t: never in a working set */
	if (s->alpha[t] >= ct)
		return -s->g[t] > m;
	if (s->alpha[t] <= lt)
		return s->g[t] > gmax2;
	return false;
}

static SvcStatus
do_shrinking(Smo *s, bool *unshrunk, double eps, SvcError *err)
{
	double		m,
				gmax2;

	violations(s, &m, &gmax2);
	if (!*unshrunk && m + gmax2 <= 10 * eps)
	{
		SvcStatus	st;

		*unshrunk = true;
		st = reconstruct_gradient(s, err);
		if (st != SVC_OK)
			return st;
		violations(s, &m, &gmax2);
	}
	for (int64_t k = 0; k < s->active;)
	{
		if (can_shrink(s, s->order[k], m, gmax2))
		{
			int64_t		tmp = s->order[k];

			s->active--;
			s->order[k] = s->order[s->active];
			s->order[s->active] = tmp;
		}
		else
			k++;
	}
	return SVC_OK;
}

/*
 * WSS3 on the active rows.  Returns 1 when they are optimal to eps (or no
 * pair improves), 0 with *pi, *pj and column i in *qi, -1 on error.
 */
static int
select_pair(Smo *s, double eps, int64_t *pi, int64_t *pj, const double **qi,
			SvcError *err)
{
	double		m = -INFINITY,
				gmax2 = -INFINITY,
				best = INFINITY;
	int64_t		i = -1,
				j = -1;
	const double *q = NULL;

	for (int64_t k = 0; k < s->active; k++)
	{
		int64_t		t = s->order[k];

		if (s->alpha[t] < upper(s, t) && -s->g[t] >= m)
		{
			m = -s->g[t];
			i = t;
		}
	}
	if (i >= 0)
	{
		q = get_col(s, i, err);
		if (q == NULL)
			return -1;
	}
	for (int64_t k = 0; k < s->active; k++)
	{
		int64_t		t = s->order[k];

		if (s->alpha[t] > lower(s, t))
		{
			double		b = m + s->g[t];

			if (s->g[t] > gmax2)
				gmax2 = s->g[t];
			if (q != NULL && b > 0)
			{
				double		a = curvature(s, i, t, q[t]);
				double		o;

				if (a <= 0)
					a = TAU;
				o = -b * b / a;
				if (o <= best)
				{
					best = o;
					j = t;
				}
			}
		}
	}
	if (i < 0 || j < 0 || m + gmax2 < eps)
		return 1;
	*pi = i;
	*pj = j;
	*qi = q;
	return 0;
}

static SvcStatus
update_pair(Smo *s, int64_t i, int64_t j, const double *qi, SvcError *err)
{
	const double *qj = get_col(s, j, err);
	double		ci = upper(s, i),
				lj = lower(s, j);
	double		ai = s->alpha[i],
				aj = s->alpha[j];
	double		a = curvature(s, i, j, qi[j]);
	double		step,
				room,
				ai_new,
				aj_new,
				di,
				dj;

	if (qj == NULL)
		return err->status;
	if (a <= 0)
		a = TAU;
	step = (s->g[j] - s->g[i]) / a;
	room = ci - ai;
	/* aj - lj is aj exactly when L_j = 0 */
	if (room <= step && room <= aj - lj)
	{
		ai_new = ci;
		aj_new = fmax(aj - room, lj);
	}
	else if (aj - lj <= step)
	{
		aj_new = lj;
		ai_new = fmin(ai + (aj - lj), ci);
	}
	else
	{
		ai_new = ai + step;
		aj_new = aj - step;
	}
	s->alpha[i] = ai_new;
	s->alpha[j] = aj_new;
	di = ai_new - ai;
	dj = aj_new - aj;
	for (int64_t k = 0; k < s->active; k++)
	{
		int64_t		t = s->order[k];

		s->g[t] += 2.0 * (di * qi[t] + dj * qj[t]);
	}
	return SVC_OK;
}

static SvcStatus
check_params(const double *x, int64_t n, int32_t d, const SvcSmoParams *p,
			 SvcError *err)
{
	size_t		cells;
	bool		big = false;
	double		sum = 0.0,
				comp = 0.0;

	if (n < 1)
		return svc_fail(err, SVC_ERR_INVALID_INPUT, "no rows to train on");
	if (d < 1 || d > SVC_MAX_DIMS)
		return svc_fail(err, SVC_ERR_INVALID_INPUT, "dimension %d is out of range", (int) d);
	if (p->kernel == NULL && (!(p->gamma > 0) || !isfinite(p->gamma)))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "gamma must be finite and positive");
	if (!(p->eps > 0) || !isfinite(p->eps))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "eps must be finite and positive");
	if (!svc_size_mul((size_t) n, (size_t) d, &cells) ||
		svc_smo_memory(n, d, p) == SIZE_MAX)
		return svc_fail(err, SVC_ERR_LIMIT, "%lld rows of %d values are too many",
						(long long) n, (int) d);
	if (p->kernel == NULL && svc_first_nonfinite(x, cells) >= 0)
		return svc_fail(err, SVC_ERR_INVALID_INPUT, "row %lld has a non-finite value",
						(long long) (svc_first_nonfinite(x, cells) / d));
	if (p->kernel != NULL && p->diag != NULL)
		for (int64_t t = 0; t < n; t++)
			if (!(p->diag[t] > 0) || !isfinite(p->diag[t]))
				return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
								"K_tt of row %lld is not finite and positive", (long long) t);
	if (p->margin != NULL)
		for (int64_t t = 0; t < n; t++)
			if (!isfinite(p->margin[t]) || fabs(p->margin[t]) > 1)
				return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
								"the margin of row %lld is not finite or not in [-1, 1]",
								(long long) t);
	if (p->lo != NULL)
	{
		for (int64_t t = 0; t < n; t++)
			if (!(p->lo[t] <= 0) || !isfinite(p->lo[t]) ||
				(p->lo[t] < 0 && (p->c != NULL ? p->c[t] : p->c_all) != 0))
				return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
								"lower bound L of row %lld is not finite and <= 0 with C = 0",
								(long long) t);
	}
	if (p->alpha0 != NULL)
	{
		double		a0 = 0.0;

		for (int64_t t = 0; t < n; t++)
		{
			double		ct = p->c != NULL ? p->c[t] : p->c_all;
			double		lt = p->lo != NULL ? p->lo[t] : 0.0;

			if (!(p->alpha0[t] >= lt && p->alpha0[t] <= ct))
				return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
								"the start alpha of row %lld is outside [L, C]", (long long) t);
			a0 += p->alpha0[t];
		}
		if (!(fabs(a0 - 1.0) <= 1e-9))
			return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
							"the start alphas sum to %.17g, not 1", a0);
	}
	/* Neumaier's compensated sum, so that n copies of 1/n sum to 1 */
	for (int64_t t = 0; t < n; t++)
	{
		double		ct = p->c != NULL ? p->c[t] : p->c_all;
		double		nsum;

		if (!(ct >= 0))
			return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
							"upper bound C of row %lld is negative or NaN", (long long) t);
		if (ct >= 1)
			big = true;
		if (big)
			continue;
		nsum = sum + ct;
		comp += fabs(sum) >= ct ? (sum - nsum) + ct : (ct - nsum) + sum;
		sum = nsum;
	}
	if (!big && sum + comp < 1.0 - SUM_C_SLACK)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "the upper bounds C_i sum to %.17g, less than 1", sum + comp);
		svc_error_detail(err, "The multipliers must sum to 1 with 0 <= alpha_i <= C_i, "
						 "which needs the bounds to sum to at least 1.");
		svc_error_hint(err, "Raise C: C = 1 / (nu n) needs nu <= 1.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	return SVC_OK;
}

void
svc_smo_params_default(SvcSmoParams *p)
{
	memset(p, 0, sizeof(*p));
	p->gamma = 0.0;
	p->c = NULL;
	p->c_all = 1.0;
	p->lo = NULL;
	p->margin = NULL;
	p->eps = 1e-3;
	p->max_iter = 0;
	p->cache_bytes = (size_t) 100 << 20;
	p->shrinking = true;
}

size_t
svc_smo_memory(int64_t n, int32_t d, const SvcSmoParams *p)
{
	/* one more for the scratch column of a general kernel */
	size_t		per_row = (p->kernel != NULL ? 12 : 11) * sizeof(double);
	size_t		total;

	(void) d;
	if (n < 0 || (uint64_t) n > SIZE_MAX / 2)
		return SIZE_MAX;
	/* alpha, g, order, pos, col, col_epoch, col_active, prev, next
	 * (+ sentinel), and the two columns the solver needs at the least */
	if (!svc_size_mul((size_t) n + 1, per_row, &total) || total > SIZE_MAX - 256)
		return SIZE_MAX;
	return total + 256;
}

static void
smo_release(Smo *s)
{
	const SvcEnv *env = s->env;

	if (s->col != NULL)
		for (int64_t t = 0; t < s->n; t++)
			svc_free(env, s->col[t]);
	svc_free(env, s->g);
	svc_free(env, s->order);
	svc_free(env, s->pos);
	svc_free(env, s->col);
	svc_free(env, s->col_epoch);
	svc_free(env, s->col_active);
	svc_free(env, s->prev);
	svc_free(env, s->next);
	svc_free(env, s->scratch);
}

/* Initial feasible alpha (alpha0, or fill rows to their bound until the
 * sum is 1), and G. */
static SvcStatus
smo_init(Smo *s, SvcError *err)
{
	double		rest = 1.0;

	for (int64_t t = 0; t < s->n; t++)
	{
		double		a = rest > 0 ? fmin(upper(s, t), rest) : 0.0;

		if (s->alpha0 != NULL)
			a = s->alpha0[t];
		s->alpha[t] = a;
		rest -= a;
		s->g[t] = linear(s, t);
		s->order[t] = t;
	}
	for (int64_t j = 0; j < s->n; j++)
	{
		const double *q;

		if (s->alpha[j] == 0)
			continue;
		if (j % 1024 == 1023 && svc_interrupted(s->env, err))
			return err->status;
		q = get_col(s, j, err);
		if (q == NULL)
			return err->status;
		for (int64_t t = 0; t < s->n; t++)
			s->g[t] += 2.0 * s->alpha[j] * q[t];
	}
	return SVC_OK;
}

static void
smo_finish(Smo *s, SvcSmoResult *out)
{
	double		m,
				gmax2,
				free_sum = 0.0,
				lo = -INFINITY,
				hi = INFINITY,
				quad = 0.0,
				lsum = 0.0;
	int64_t		nfree = 0,
				nbound = 0;

	violations(s, &m, &gmax2);
	out->gap = isinf(m) || isinf(gmax2) ? 0.0 : m + gmax2;
	for (int64_t t = 0; t < s->n; t++)
	{
		double		ct = upper(s, t),
					lt = lower(s, t),
					lin = linear(s, t);

		/* s(x_t) = (K alpha)_t, plus the row's margin */
		double		st = (s->g[t] + 1.0) / 2.0;

		quad += s->alpha[t] * (lin == -1.0 ? st : (s->g[t] - lin) / 2.0);
		lsum += s->alpha[t] * lin;
		if (ct <= lt)
			continue;
		if (s->alpha[t] >= ct)
		{
			nbound += ct > 0;
			lo = fmax(lo, st);
		}
		else if (s->alpha[t] <= lt)
			hi = fmin(hi, st);
		else
		{
			nfree++;
			free_sum += st;
		}
	}
	if (nfree > 0)
		out->offset = free_sum / (double) nfree;
	else if (isfinite(hi))
		out->offset = (lo + hi) / 2.0;
	else
		out->offset = lo;
	out->r2 = 1.0 - 2.0 * out->offset + quad;
	out->objective = quad + lsum;
	out->n_free = nfree;
	out->n_bound = nbound;
	out->cache_hits = s->hits;
	out->cache_misses = s->misses;
}

SvcStatus
svc_smo_solve(const SvcEnv *env, const double *x, int64_t n, int32_t d,
			  const SvcSmoParams *p, SvcSmoResult *out, SvcError *err)
{
	Smo			s;
	SvcStatus	st;
	size_t		vec,
				vec1;
	int64_t		max_iter,
				counter,
				iter = 0;
	bool		converged = false,
				unshrunk = false;

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
	s.c = p->c;
	s.c_all = p->c_all;
	s.lo = p->lo;
	s.margin = p->margin;
	s.alpha0 = p->alpha0;
	s.kernel = p->kernel;
	s.kernel_ctx = p->kernel_ctx;
	s.diag = p->kernel != NULL ? p->diag : NULL;
	s.active = n;
	s.cap = (int64_t) (p->cache_bytes / (sizeof(double) * (size_t) n));
	if (s.cap < 2)
		s.cap = 2;
	if (s.cap > n)
		s.cap = n;
	vec = sizeof(double) * (size_t) n;	/* checked by svc_smo_memory */
	vec1 = sizeof(int64_t) * ((size_t) n + 1);
	if ((out->alpha = svc_alloc(env, vec, err)) == NULL ||
		(s.g = svc_alloc(env, vec, err)) == NULL ||
		(s.order = svc_alloc(env, vec1, err)) == NULL ||
		(s.pos = svc_alloc(env, vec1, err)) == NULL ||
		(s.col = svc_alloc0(env, sizeof(double *) * (size_t) n, err)) == NULL ||
		(s.col_epoch = svc_alloc(env, vec1, err)) == NULL ||
		(s.col_active = svc_alloc(env, vec1, err)) == NULL ||
		(s.prev = svc_alloc(env, vec1, err)) == NULL ||
		(s.next = svc_alloc(env, vec1, err)) == NULL ||
		(p->kernel != NULL && (s.scratch = svc_alloc(env, vec, err)) == NULL))
	{
		st = err->status;
		goto fail;
	}
	s.alpha = out->alpha;
	s.prev[n] = s.next[n] = n;

	st = smo_init(&s, err);
	if (st != SVC_OK)
		goto fail;

	max_iter = p->max_iter > 0 ? p->max_iter :
		(n > INT64_C(100000) ? (n > INT64_MAX / 100 ? INT64_MAX : 100 * n) : 10000000);
	counter = (n < 1000 ? n : 1000) + 1;
	while (iter < max_iter)
	{
		int64_t		i = -1,
					j = -1;
		const double *qi = NULL;
		int			r;

		if (iter % INTERRUPT_EVERY == 0 && svc_interrupted(env, err))
		{
			st = err->status;
			goto fail;
		}
		if (--counter == 0)
		{
			counter = n < 1000 ? n : 1000;
			if (p->shrinking && (st = do_shrinking(&s, &unshrunk, p->eps, err)) != SVC_OK)
				goto fail;
		}
		r = select_pair(&s, p->eps, &i, &j, &qi, err);
		if (r == 1)
		{
			if (s.active == n)
			{
				converged = true;
				break;
			}
			if ((st = reconstruct_gradient(&s, err)) != SVC_OK)
				goto fail;
			r = select_pair(&s, p->eps, &i, &j, &qi, err);
			if (r == 1)
			{
				converged = true;
				break;
			}
			counter = 1;		/* shrink again at the next iteration */
		}
		if (r < 0)
		{
			st = err->status;
			goto fail;
		}
		iter++;
		if ((st = update_pair(&s, i, j, qi, err)) != SVC_OK)
			goto fail;
		if (!p->quiet)
			svc_progress(env, SVC_PROGRESS_SMO, iter, max_iter);
	}
	if ((st = reconstruct_gradient(&s, err)) != SVC_OK)
		goto fail;
	smo_finish(&s, out);
	out->iterations = iter;
	out->converged = converged || out->gap < p->eps;
	smo_release(&s);
	return SVC_OK;

fail:
	smo_release(&s);
	svc_free(env, out->alpha);
	out->alpha = NULL;
	return st;
}

void
svc_smo_result_free(const SvcEnv *env, SvcSmoResult *r)
{
	svc_free(env, r->alpha);
	r->alpha = NULL;
}

/*
 * The refinement (svc_smo_refine).  At the solvers' tolerance the rows
 * within it of the sphere are still free to move, and two solvers (or one
 * solver from two starts) stop at two different points of that slack: on
 * d31 at tol 1e-3 smo, aid and incremental draw 17, 16 and 16 clusters,
 * one saddle between two clusters deciding the merge by f differences
 * below the tolerance.  A tolerance a thousand times finer makes them
 * agree, but smo over every row then costs 10-25 times as much on 10,000
 * rows.  Near the end only the support vectors move, so smo runs again
 * over them alone, from the solution, to a finer tolerance (the solvers
 * take a hundredth of theirs: SVC_SMO_REFINE, the coarsest at which the
 * nine 2-D sets and wine gave the same clusters with all three; a tenth
 * left one row of d31 apart, doc/benchmark.md); then every
 * other row's kernel sum over the support vectors tells whether the
 * sphere moved past it (-G_t above the smallest -G of the rows above
 * their lower bound by eps: smo's own stopping rule), and such rows join
 * and smo runs again, until none does.  That stops where smo over every
 * row would stop at the finer tolerance, for the cost of a solve over
 * the support vectors and one kernel sum over them per row and pass.
 */
#define REFINE_PASSES 50

static SvcStatus
refine_solve(const SvcEnv *env, const double *x, int32_t d, const SvcSmoParams *p,
			 const int64_t *idx, int64_t ns, const double *alpha, SvcSmoResult *res,
			 SvcError *err)
{
	SvcSmoParams sp = *p;
	double	   *xs,
			   *a0,
			   *cs = NULL,
			   *ls = NULL,
			   *ms = NULL;
	SvcStatus	st;

	xs = svc_alloc(env, sizeof(double) * (size_t) ns * (size_t) d, err);
	a0 = svc_alloc(env, sizeof(double) * (size_t) ns, err);
	if (p->c != NULL)
		cs = svc_alloc(env, sizeof(double) * (size_t) ns, err);
	if (p->lo != NULL)
		ls = svc_alloc(env, sizeof(double) * (size_t) ns, err);
	if (p->margin != NULL)
		ms = svc_alloc(env, sizeof(double) * (size_t) ns, err);
	if (xs == NULL || a0 == NULL || (p->c != NULL && cs == NULL) ||
		(p->lo != NULL && ls == NULL) || (p->margin != NULL && ms == NULL))
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}
	for (int64_t k = 0; k < ns; k++)
	{
		int64_t		t = idx[k];

		memcpy(xs + (size_t) k * (size_t) d, x + (size_t) t * (size_t) d,
			   sizeof(double) * (size_t) d);
		a0[k] = alpha[t];
		if (cs != NULL)
			cs[k] = p->c[t];
		if (ls != NULL)
			ls[k] = p->lo[t];
		if (ms != NULL)
			ms[k] = p->margin[t];
	}
	sp.c = cs;
	sp.lo = ls;
	sp.margin = ms;
	sp.alpha0 = a0;
	sp.quiet = true;
	st = svc_smo_solve(env, xs, ns, d, &sp, res, err);
done:
	svc_free(env, xs);
	svc_free(env, a0);
	svc_free(env, cs);
	svc_free(env, ls);
	svc_free(env, ms);
	return st;
}

size_t
svc_smo_refine_memory(int64_t n, int32_t d)
{
	/*
	 * out->alpha, idx, list, sum, buf, act and the caller's alpha; a0, cs,
	 * ls, ms and the rows' copy of the subset (at most n rows)
	 */
	size_t		per_row = 6 * sizeof(double) + sizeof(bool) + 4 * sizeof(double),
				rows,
				total;

	if (n < 0 || d < 1 || (uint64_t) n > SIZE_MAX / 2)
		return SIZE_MAX;
	if (!svc_size_mul((size_t) n, (size_t) d * sizeof(double), &rows) ||
		!svc_size_mul((size_t) n, per_row, &total) || total > SIZE_MAX - rows)
		return SIZE_MAX;
	return total + rows;
}

size_t
svc_smo_refine_cache(size_t cache_bytes, int64_t n, int32_t d)
{
	size_t		extra = svc_smo_refine_memory(n, d);

	return extra >= cache_bytes ? 0 : cache_bytes - extra;
}

bool
svc_smo_feasible_start(double *alpha, int64_t n, double c)
{
	double		sum = 0.0,
				rest;
	bool		inside = true;

	for (int64_t t = 0; t < n; t++)
	{
		inside = inside && alpha[t] >= 0.0 && alpha[t] <= c;
		sum += alpha[t];
	}
	if (inside && fabs(sum - 1.0) <= 1e-9)
		return false;
	sum = 0.0;
	for (int64_t t = 0; t < n; t++)
	{
		/* NaN goes to 0: fmax returns its other argument */
		alpha[t] = fmin(fmax(alpha[t], 0.0), c);
		sum += alpha[t];
	}
	rest = 1.0;
	for (int64_t t = 0; t < n; t++)
	{
		if (sum > 0.0)
			alpha[t] = fmin(alpha[t] / sum, c);
		else
			alpha[t] = 0.0;
		rest -= alpha[t];
	}
	for (int64_t t = 0; t < n && rest > 0.0; t++)
	{
		double		add = fmin(c - alpha[t], rest);

		alpha[t] += add;
		rest -= add;
	}
	return true;
}

SvcStatus
svc_smo_refine(const SvcEnv *env, const double *x, int64_t n, int32_t d,
			   const SvcSmoParams *p, const double *alpha, SvcSmoResult *out,
			   SvcError *err)
{
	int64_t    *idx = NULL,
			   *list = NULL;
	double	   *sum = NULL,
			   *buf = NULL;
	bool	   *act = NULL;
	int64_t		iterations = 0,
				hits = 0,
				misses = 0;
	SvcStatus	st;

	memset(out, 0, sizeof(*out));
	if (p->kernel != NULL || x == NULL)
		return svc_fail(err, SVC_ERR_INTERNAL, "the refinement takes the rows' RBF only");
	if ((out->alpha = svc_alloc(env, sizeof(double) * (size_t) n, err)) == NULL ||
		(idx = svc_alloc(env, sizeof(int64_t) * (size_t) n, err)) == NULL ||
		(list = svc_alloc(env, sizeof(int64_t) * (size_t) n, err)) == NULL ||
		(sum = svc_alloc(env, sizeof(double) * (size_t) n, err)) == NULL ||
		(buf = svc_alloc(env, sizeof(double) * (size_t) n, err)) == NULL ||
		(act = svc_alloc0(env, sizeof(bool) * (size_t) n, err)) == NULL)
	{
		st = SVC_ERR_NOMEM;
		goto fail;
	}
	memcpy(out->alpha, alpha, sizeof(double) * (size_t) n);
	/* the support vectors, and the signed rows, which may leave 0 */
	for (int64_t t = 0; t < n; t++)
		act[t] = alpha[t] != 0.0 || (p->lo != NULL && p->lo[t] < 0);
	for (int pass = 0;; pass++)
	{
		SvcSmoResult res;
		int64_t		ns = 0,
					m = 0,
					added = 0,
					done = 0;
		double		low = HUGE_VAL;

		for (int64_t t = 0; t < n; t++)
			if (act[t])
				idx[ns++] = t;
		st = refine_solve(env, x, d, p, idx, ns, out->alpha, &res, err);
		if (st != SVC_OK)
			goto fail;
		for (int64_t k = 0; k < ns; k++)
			out->alpha[idx[k]] = res.alpha[k];
		svc_smo_result_free(env, &res);
		iterations += res.iterations;
		hits += res.cache_hits;
		misses += res.cache_misses;
		{
			double	   *keep = out->alpha;

			*out = res;
			out->alpha = keep;
		}
		if (pass == REFINE_PASSES)
			break;

		/*
		 * s_t = (K alpha)_t over the support vectors, for the rows outside
		 * that may grow (C_t > 0) and for the rows above their lower bound
		 */
		for (int64_t t = 0; t < n; t++)
		{
			bool		above = out->alpha[t] > (p->lo != NULL ? p->lo[t] : 0.0);
			bool		may = !act[t] && (p->c != NULL ? p->c[t] : p->c_all) > 0;

			if (above || may)
			{
				list[m++] = t;
				sum[t] = 0.0;
			}
		}
		for (int64_t j = 0; j < n; j++)
		{
			if (out->alpha[j] == 0.0)
				continue;
			if (++done % 16 == 0 && svc_interrupted(env, err))
			{
				st = err->status;
				goto fail;
			}
			svc_kernel_values(x, d, j, p->gamma, list, m, buf);
			for (int64_t k = 0; k < m; k++)
				sum[list[k]] += out->alpha[j] * (list[k] == j ? 1.0 : buf[k]);
		}
		/* -G_t = 1 - 2 s_t - 2 m_t; M is its smallest above the lower bounds */
		for (int64_t k = 0; k < m; k++)
		{
			int64_t		t = list[k];

			if (out->alpha[t] > (p->lo != NULL ? p->lo[t] : 0.0))
				low = fmin(low, 1.0 - 2.0 * sum[t] -
						   (p->margin != NULL ? 2.0 * p->margin[t] : 0.0));
		}
		for (int64_t k = 0; k < m; k++)
		{
			int64_t		t = list[k];

			if (!act[t] && 1.0 - 2.0 * sum[t] -
				(p->margin != NULL ? 2.0 * p->margin[t] : 0.0) >= low + p->eps)
			{
				act[t] = true;
				added++;
			}
		}
		if (added == 0)
			break;
	}
	out->iterations = iterations;
	out->cache_hits = hits;
	out->cache_misses = misses;
	svc_free(env, idx);
	svc_free(env, list);
	svc_free(env, sum);
	svc_free(env, buf);
	svc_free(env, act);
	return SVC_OK;

fail:
	svc_free(env, out->alpha);
	out->alpha = NULL;
	svc_free(env, idx);
	svc_free(env, list);
	svc_free(env, sum);
	svc_free(env, buf);
	svc_free(env, act);
	return st;
}
