/*
 * score.c - scoring many rows against one model: the scorer's blocks and
 * groups, and the pruned kernel sums of svc_decision (score.h; the
 * proofs: doc/design-notes.md).  The certified trajectories that predict
 * are score_trajectory.c's; what both share is score_internal.h.
 *
 * Built with the kernel's flags (vector exp, see the Makefile).  Every
 * shortcut here carries a bound, and a row whose bound does not settle
 * its answer takes the full computation, so results are those of
 * svc_model_decision_scaled (within its rounding).
 */
#include "score.h"
#include "score_internal.h"
#include "kernel.h"
/*
 * gcc takes exp8p's lane by lane n for read before set where a pass sums
 * a range of a group's blocks (a false -Wmaybe-uninitialized); vec8.h's
 * own -Wpsabi setting is for all of this file, so it is set again
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "vec8.h"
#pragma GCC diagnostic pop
#pragma GCC diagnostic ignored "-Wpsabi"
#else
#include "vec8.h"
#endif

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GRP		4				/* blocks per group, bounded by a ball */
#define HALF	2				/* wide models: blocks of half a group */
#define PROJ_KEYS	SVC_SCORE_PROJ	/* wide models split on their projection */
#define PRUNE_LN	(50.0 * M_LN2)	/* skip a block below 2^-50 of a term */
#define EXP_FLOOR	(-700.0)	/* as kernel.c */
#define RESHIFT		40.0		/* kernel values up to e^40 before a new shift */
/*
 * exp8p's error (vec8.h) is within (1 + 2|x|/3) U of exp(x) (FMA or not):
 * up to 28 U of a term for x in (0, RESHIFT], and for x <= 0 within
 * U exp(x) + 2/(3e) U, the latter bounded by a quarter U of exp(shift).
 */
#define EXP8_REL	28.0
#define EXP8_ABS	0.25

/* ---------- building ---------- */

typedef struct KeyIdx
{
	double		key;
	int32_t		idx;
} KeyIdx;

static int
cmp_keyidx(const void *a, const void *b)
{
	const KeyIdx *x = a,
			   *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/*
 * Order perm[lo, hi) as a k-d tree does (split at the median of the widest
 * coordinate, rounded to whole blocks), so that consecutive blocks hold
 * neighbouring support vectors and a block far from a row can be skipped
 * as a whole.
 */
static void
split(const SvcModel *m, const double *keys, int32_t *perm, KeyIdx *tmp, int32_t lo, int32_t hi)
{
	/* keys (wide models): the support vectors projected, PROJ_KEYS each */
	int32_t		d = keys ? PROJ_KEYS : m->dims;
	const double *v = keys ? keys : m->sv;
	int32_t		best = 0;
	double		spread = -1.0;
	int32_t		mid;

	if (hi - lo <= BLK)
		return;
	for (int32_t j = 0; j < d; j++)
	{
		double		mn = DBL_MAX,
					mx = -DBL_MAX;

		for (int32_t k = lo; k < hi; k++)
		{
			double		c = v[(size_t) perm[k] * d + j];

			mn = c < mn ? c : mn;
			mx = c > mx ? c : mx;
		}
		if (mx - mn > spread)
		{
			spread = mx - mn;
			best = j;
		}
	}
	for (int32_t k = lo; k < hi; k++)
	{
		tmp[k - lo].key = v[(size_t) perm[k] * d + best];
		tmp[k - lo].idx = perm[k];
	}
	qsort(tmp, (size_t) (hi - lo), sizeof(KeyIdx), cmp_keyidx);
	for (int32_t k = lo; k < hi; k++)
		perm[k] = tmp[k - lo].idx;
	{
		/* whole groups of blocks while they fit, then whole blocks */
		int32_t		unit = hi - lo > 2 * GRP * BLK ? GRP * BLK : BLK;

		mid = lo + ((hi - lo) / 2 + unit - 1) / unit * unit;
	}
	split(m, keys, perm, tmp, lo, mid);
	split(m, keys, perm, tmp, mid, hi);
}

/* ---------- wide rows: distances from float dot products ---------- */

#define WIDE_SLOTS	SVC_WIDE_SLOTS	/* slots of one float group: 2 vectors of 16 */
#define WIDE_HALF	SVC_WIDE_HALF	/* a vector of them, HALF blocks */
_Static_assert(SVC_WIDE_HALF == HALF * BLK, "a float half is HALF blocks");
_Static_assert(SVC_WIDE_SLOTS == GRP * BLK, "a float group is a group");
#define WIDE_RUN	16			/* coordinates summed in float, then in double */
#define WIDE_MAX_COORD 0x1p60	/* rows and support vectors beyond it: double */
#define WIDE_MAX_ETA 0x1p-10	/* a row whose exponents' bound passes it: double */
/*
 * Wide rows skip a group whose terms are all below 2^-b of a term, not
 * 2^-50: b such that 2^-b is at most 2^-WIDE_PRUNE_BELOW of eta, the
 * bound on their exponents' error from the float distances (about 4e-5 on
 * unit rows), but at least WIDE_PRUNE_MIN.  What the skipped groups can
 * add to f's bound (n_skip 2^-b e^(2 eta)) is then n_skip / 32 of what the
 * float distances add; and what lets the groups of other clusters go.
 * 2^-5, not 2^-7 as before: on 128-D and 768-D embeddings at the defaults
 * the rows sum a fifth to a quarter fewer blocks (6.4 against 8.0 at
 * 128-D, 8.0 against 11.0 at 768-D) and the bound grows by a sixth (4.2e-5
 * -> 4.9e-5 of sum |alpha_i| K_i on average; doc/benchmark.md).
 */
#define WIDE_PRUNE_BELOW 5
#define WIDE_PRUNE_MIN 20
/* svc_predict's second try of a wide row: double distances, this cut */
#define WIDE_EXACT_BITS 30
#define PROJ		SVC_SCORE_PROJ
#define PROJ_ROUNDS	2			/* power iterations for the projection */
/*
 * Qx from floats (proj_row): x and Q rounded to float move each product
 * by at most 2^-23 + 2^-48 of |x_j q_jr|, a run of WIDE_RUN float
 * multiply-adds sums within gamma_16 of its sum of |products| (times
 * (1 + 2^-24)^2 for the rounded factors), and the runs' sums in double
 * add less than 2^-40 of it: within PROJ_QX_ERR ||x|| ||q_r||
 * (Cauchy-Schwarz), plus 2^-148 a term for subnormal floats.
 */
#define PROJ_QX_ERR (20.0 * 0x1p-24)

typedef float f16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));

/*
 * sum_k p[k][0..15] xr[k] over a whole run of WIDE_RUN coordinates (p's
 * rows 16 floats apart), in float: eight chains of two products, then a
 * tree, so that no multiply-add waits long on another (the bounds on
 * these sums hold for any order of a run's products).
 */
static inline f16
dot_run16(const float *p, const float *xr)
{
	f16			c[8];

	for (int k = 0; k < 8; k++)
	{
		f16			l,
					h;

		memcpy(&l, p + (size_t) k * 16, sizeof(l));
		memcpy(&h, p + (size_t) (k + 8) * 16, sizeof(h));
		c[k] = l * xr[k] + h * xr[k + 8];
	}
	c[0] += c[1];
	c[2] += c[3];
	c[4] += c[5];
	c[6] += c[7];
	c[0] += c[2];
	c[4] += c[6];
	return c[0] + c[4];
}
#define F16_LO(a)	__builtin_shufflevector(a, a, 0, 1, 2, 3, 4, 5, 6, 7)
#define F16_HI(a)	__builtin_shufflevector(a, a, 8, 9, 10, 11, 12, 13, 14, 15)

/*
 * Orthonormalise the k rows of y ([k][d]) in place, twice over (modified
 * Gram-Schmidt); rows that vanish are dropped.  Returns the rows kept.
 */
static int32_t
proj_orthonormalise(double *y, int32_t k, int32_t d)
{
	int32_t		kept = 0;

	for (int32_t r = 0; r < k; r++)
	{
		double	   *v = y + (size_t) r * d;
		double		n0 = 0.0,
					n1 = 0.0;

		for (int32_t j = 0; j < d; j++)
			n0 += v[j] * v[j];
		for (int pass = 0; pass < 2; pass++)
			for (int32_t q = 0; q < kept; q++)
			{
				const double *w = y + (size_t) q * d;
				double		dot = 0.0;

				for (int32_t j = 0; j < d; j++)
					dot += v[j] * w[j];
				for (int32_t j = 0; j < d; j++)
					v[j] -= dot * w[j];
			}
		for (int32_t j = 0; j < d; j++)
			n1 += v[j] * v[j];
		/* nothing left of it beyond rounding: the rows span no more */
		if (!(n1 > n0 * 1e-20 && n1 > 0.0))
			continue;
		n1 = 1.0 / sqrt(n1);
		for (int32_t j = 0; j < d; j++)
			y[(size_t) kept * d + j] = v[j] * n1;
		kept++;
	}
	return kept;
}

/*
 * Up to PROJ directions where the n rows of a ([n][d], centred) spread
 * most, orthonormal, into y ([PROJ][d]); t is [n][PROJ] workspace.
 * Returns how many (rows of a that span less give fewer).
 */
static int32_t
proj_basis(const double *a, int32_t n, int32_t d, double *y, double *t)
{
	int32_t		k = PROJ;

	/* y = R' A with fixed pseudo-random signs */
	for (int32_t r = 0; r < k; r++)
		for (int32_t i = 0; i < n; i++)
		{
			uint64_t	h = ((uint64_t) (r + 1) * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t) (i + 1) * 0xc2b2ae3d27d4eb4fULL);
			double		sign;

			h ^= h >> 29;
			h *= 0xbf58476d1ce4e5b9ULL;
			h ^= h >> 32;
			sign = (h & 1) ? 1.0 : -1.0;
			for (int32_t j = 0; j < d; j++)
				y[(size_t) r * d + j] += sign * a[(size_t) i * d + j];
		}
	k = proj_orthonormalise(y, k, d);
	for (int round = 0; round < PROJ_ROUNDS && k > 0; round++)
	{
		/* y = (A' A) y, by t = A y' */
		for (int32_t i = 0; i < n; i++)
			for (int32_t r = 0; r < k; r++)
			{
				double		dot = 0.0;

				for (int32_t j = 0; j < d; j++)
					dot += a[(size_t) i * d + j] * y[(size_t) r * d + j];
				t[(size_t) i * k + r] = dot;
			}
		memset(y, 0, sizeof(double) * (size_t) k * d);
		for (int32_t i = 0; i < n; i++)
			for (int32_t r = 0; r < k; r++)
				for (int32_t j = 0; j < d; j++)
					y[(size_t) r * d + j] += t[(size_t) i * k + r] * a[(size_t) i * d + j];
		k = proj_orthonormalise(y, k, d);
	}
	return k;
}

/*
 * proj_basis of the n rows of a ([n][d]) once centred: each column's mean
 * (summed in the order of the rows) taken from it in place.
 */
static int32_t
proj_centred_basis(double *a, int32_t n, int32_t d, double *y, double *t)
{
	for (int32_t j = 0; j < d; j++)
	{
		double		mean = 0.0;

		for (int32_t i = 0; i < n; i++)
			mean += a[(size_t) i * d + j];
		mean /= n;
		for (int32_t i = 0; i < n; i++)
			a[(size_t) i * d + j] -= mean;
	}
	return proj_basis(a, n, d, y, t);
}

/*
 * The projection of a wide model: up to PROJ directions where the slots
 * spread most (a randomised range finder on the centred slots: fixed
 * signs, then PROJ_ROUNDS power iterations), nearly orthonormal, with a
 * bound on the largest eigenvalue of Q Q' (Gershgorin on its computed
 * Gram matrix, widened for that computation's rounding) so that
 * ||Q v||^2 <= proj_lam ||v||^2 for every v; and every slot projected.
 * Which directions are found changes how many groups are skipped, never
 * a result.
 */
static SvcStatus
proj_init(const SvcEnv *env, SvcScorer *s, SvcError *err)
{
	int32_t		d = s->dims,
				n = s->n_blk * BLK,
				k = PROJ;
	double	   *a = svc_alloc(env, sizeof(double) * (size_t) n * d, err),
			   *y = svc_alloc0(env, sizeof(double) * (size_t) k * d, err),
			   *t = svc_alloc(env, sizeof(double) * (size_t) n * k, err);
	size_t		gslots = (size_t) (s->n_grp + BLK - 1) / BLK * BLK;
	SvcStatus	st = SVC_ERR_NOMEM;

	s->proj_q = svc_alloc0(env, sizeof(float) * (size_t) d * PROJ, err);
	s->proj_s = svc_alloc0(env, sizeof(float) * (size_t) (s->n_blk + HALF - 1) / HALF * PROJ * WIDE_HALF,
						   err);
	s->ghalf = svc_alloc(env, sizeof(double) * 2 * gslots, err);
	s->proj_hm = svc_alloc(env, sizeof(float) * 2 * gslots, err);
	s->proj_gm = svc_alloc(env, sizeof(float) * gslots, err);
	s->glnmass2 = svc_alloc0(env, sizeof(double) * 2 * gslots, err);
	if (!a || !y || !t || !s->proj_q || !s->proj_s || !s->ghalf || !s->proj_hm ||
		!s->proj_gm || !s->glnmass2)
		goto done;
	/* the slots, row by row */
	for (int32_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
			a[(size_t) i * d + j] = s->st[(size_t) (i / BLK) * BLK * d + (size_t) j * BLK + i % BLK];
	k = proj_centred_basis(a, n, d, y, t);
	if (k == 0)
	{
		st = SVC_OK;			/* the slots are one point: no projection */
		goto done;
	}
	/* Gershgorin on Q Q', each entry within (d + 2) 2^-53 |q_r| |q_q| <= 2^-51 d */
	{
		double		lam = 0.0,
					qn = 0.0;

		for (int32_t r = 0; r < k; r++)
		{
			double		row = 0.0;

			for (int32_t q = 0; q < k; q++)
			{
				double		g = 0.0;

				for (int32_t j = 0; j < d; j++)
					g += y[(size_t) r * d + j] * y[(size_t) q * d + j];
				if (q == r)
					qn = fmax(qn, g);
				row += fabs(g);
			}
			lam = fmax(lam, row);
		}
		s->proj_lam = (lam + k * (d + 2.0) * 0x1p-51) * (1.0 + 0x1p-40);
		s->proj_qn = sqrt(qn + (d + 2.0) * 0x1p-51) * (1.0 + 0x1p-40);
	}
	for (int32_t r = 0; r < k; r++)
		for (int32_t j = 0; j < d; j++)
			s->proj_q[(size_t) j * PROJ + r] = (float) y[(size_t) r * d + j];
	/* every slot projected, as floats: [half group][PROJ][16] (rows past k stay 0) */
	for (int32_t i = 0; i < n; i++)
		for (int32_t r = 0; r < k; r++)
		{
			double		dot = 0.0;

			for (int32_t j = 0; j < d; j++)
				dot += y[(size_t) r * d + j] *
					s->st[(size_t) (i / BLK) * BLK * d + (size_t) j * BLK + i % BLK];
			s->proj_s[((size_t) (i / WIDE_HALF) * PROJ + r) * WIDE_HALF + i % WIDE_HALF] = (float) dot;
		}
	/*
	 * the equilibria projected as the slots, for svc_scorer_eq_bounds,
	 * when each is within sv_norm (which the bound's slack counts; they
	 * are means of support vectors, so they are but for rounding)
	 */
	{
		const SvcModel *m = s->m;
		bool		inside = m->n_eq > 0 && m->eq != NULL;

		for (int32_t i = 0; inside && i < m->n_eq; i++)
		{
			double		nrm = 0.0;

			for (int32_t j = 0; j < d; j++)
				nrm += m->eq[(size_t) i * d + j] * m->eq[(size_t) i * d + j];
			inside = sqrt(nrm) * (1.0 + 0x1p-40) <= s->sv_norm;
		}
		if (inside)
		{
			s->proj_e = svc_alloc0(env, sizeof(float) * (size_t) ((m->n_eq + WIDE_HALF - 1) / WIDE_HALF) *
								   PROJ * WIDE_HALF, err);
			if (!s->proj_e)
				goto done;
			for (int32_t i = 0; i < m->n_eq; i++)
				for (int32_t r = 0; r < k; r++)
				{
					double		dot = 0.0;

					for (int32_t j = 0; j < d; j++)
						dot += y[(size_t) r * d + j] * m->eq[(size_t) i * d + j];
					s->proj_e[((size_t) (i / WIDE_HALF) * PROJ + r) * WIDE_HALF + i % WIDE_HALF] = (float) dot;
				}
		}
	}
	s->n_proj = k;
	st = SVC_OK;
done:
	svc_free(env, a);
	svc_free(env, y);
	svc_free(env, t);
	return st;
}

/*
 * Wide models: the support vectors projected on their widest directions
 * (proj_basis), [n_sv][PROJ_KEYS], for split(): blocks and groups of
 * support vectors near each other in those directions, which the
 * projection's bounds can skip together.  *keys stays NULL for narrower
 * models, where split() takes the coordinates.
 */
static SvcStatus
proj_keys(const SvcEnv *env, const SvcModel *m, double **keys, SvcError *err)
{
	int32_t		d = m->dims,
				n = m->n_sv,
				k;
	double	   *a,
			   *y,
			   *t;
	bool		ok = d >= SVC_SCORE_WIDE_DIMS && n >= 2;

	*keys = NULL;
	for (size_t i = 0; ok && i < (size_t) n * d; i++)
		ok = fabs(m->sv[i]) <= WIDE_MAX_COORD;
	if (!ok)
		return SVC_OK;
	a = svc_alloc(env, sizeof(double) * (size_t) n * d, err);
	y = svc_alloc0(env, sizeof(double) * (size_t) PROJ * d, err);
	t = svc_alloc(env, sizeof(double) * (size_t) n * PROJ, err);
	*keys = svc_alloc0(env, sizeof(double) * (size_t) n * PROJ_KEYS, err);
	if (!a || !y || !t || !*keys)
	{
		svc_free(env, a);
		svc_free(env, y);
		svc_free(env, t);
		svc_free(env, *keys);
		*keys = NULL;
		return SVC_ERR_NOMEM;
	}
	memcpy(a, m->sv, sizeof(double) * (size_t) n * d);
	k = proj_centred_basis(a, n, d, y, t);
	for (int32_t i = 0; i < n; i++)
		for (int32_t r = 0; r < k; r++)
		{
			double		dot = 0.0;

			for (int32_t j = 0; j < d; j++)
				dot += y[(size_t) r * d + j] * m->sv[(size_t) i * d + j];
			(*keys)[(size_t) i * PROJ_KEYS + r] = dot;
		}
	svc_free(env, a);
	svc_free(env, y);
	svc_free(env, t);
	return SVC_OK;
}

/*
 * The slots as floats, each half of a group coordinate by coordinate
 * ([group][half][j][16], padding 0), with their squared norms in double, and
 * the projection that bounds the distances from below.
 */
static SvcStatus
wide_init(const SvcEnv *env, SvcScorer *s, SvcError *err)
{
	int32_t		d = s->dims;
	size_t		slots = (size_t) s->n_blk * BLK;

	s->n_wide = (int32_t) ((slots + WIDE_SLOTS - 1) / WIDE_SLOTS);
	s->sf = svc_alloc0(env, sizeof(float) * (size_t) s->n_wide * WIDE_SLOTS * d, err);
	s->sfnorm = svc_alloc0(env, sizeof(double) * (size_t) s->n_wide * WIDE_SLOTS, err);
	s->xf = svc_alloc(env, sizeof(float) * (size_t) d, err);
	if (!s->sf || !s->sfnorm || !s->xf)
		return SVC_ERR_NOMEM;
	for (size_t t = 0; t < slots; t++)
	{
		float	   *g = s->sf + t / WIDE_SLOTS * WIDE_SLOTS * d +
			t % WIDE_SLOTS / WIDE_HALF * WIDE_HALF * d + t % WIDE_HALF;
		const double *blk = s->st + t / BLK * BLK * d + t % BLK;
		double		nrm = 0.0;

		for (int32_t j = 0; j < d; j++)
		{
			float		v = (float) blk[(size_t) j * BLK];

			g[(size_t) j * WIDE_HALF] = v;
			nrm += (double) v * (double) v;
		}
		s->sfnorm[t] = nrm;
		if (t < (size_t) s->m->n_sv)
			s->sf_norm = fmax(s->sf_norm, sqrt(nrm) * (1.0 + 0x1p-40));
	}
	s->proj_one_width = s->m->sv_gamma == NULL;
	return proj_init(env, s, err);
}

/*
 * The row as floats for wide_group, and the bound on each squared
 * distance's error against the exact ||x - s||^2 that wide_group's
 * distances keep, or -1 where a coordinate of x is past WIDE_MAX_COORD
 * or the bound is too wide (the caller then takes the double distances).
 * *xn gets ||x||^2.
 *
 * wide_group gives ||x'||^2 + ||s'||^2 - 2 x'.s' with x' and s' the
 * floats nearest x and s: float products summed WIDE_RUN coordinates at a
 * time, those sums in double.  With u = 2^-24 and v = 2^-53: each run of
 * WIDE_RUN float multiply-adds is within gamma_16 = 16u / (1 - 16u) of
 * its sum of |x'_j s'_j|, in any order, so 2 x'.s' within 2 gamma_16
 * ||x'|| ||s'|| (Cauchy-Schwarz); the d / 16 runs summed in double, the
 * norms' d terms and the two last operations add (2d + 1) v of
 * (||x'|| + ||s'||)^2.  Rounding to float moves x and s by at most
 * rho = u (||x|| + ||s||) + 2d 2^-149 (subnormal floats), so the exact
 * distances differ by at most 2 rho (||x|| + ||s||) + rho^2.  Clamping
 * at 0 only comes nearer.  The bound grows with the norms, not the
 * distances: a row far from the origin for its distances to the support
 * vectors gets -1 as well.
 */
static double
wide_prep(SvcScorer *s, const double *x, double *xn_out)
{
	const double u = 0x1p-24,
				v = 0x1p-53;
	int32_t		d = s->dims;
	float	   *restrict xf = s->xf;
	double		xx = 0.0,
				xn = 0.0,
				xmax = 0.0,
				e;

	/* no exit inside: the loop vectorises */
	for (int32_t j = 0; j < d; j++)
	{
		double		a = fabs(x[j]);

		xmax = a > xmax ? a : xmax;
		xf[j] = (float) x[j];
		xx += (double) xf[j] * (double) xf[j];
		xn += x[j] * x[j];
	}
	if (!(xmax <= WIDE_MAX_COORD))
		return -1.0;
	{
		double		a = sqrt(xn) + s->sv_norm,
					xh = sqrt(xx),
					ah = xh + s->sf_norm,
					rho = u * a + 2.0 * d * 0x1p-149;

		e = (2.0 * d + 1.0) * v * ah * ah +
			2.0 * (WIDE_RUN * u / (1.0 - WIDE_RUN * u)) * xh * s->sf_norm +
			2.0 * rho * a + rho * rho;
		/* and this bound's own rounding */
		e *= 1.0 + 0x1p-30;
	}
	/*
	 * Far from the origin for its distances (large norms cancel): the
	 * double distances, whose rounding is relative to them
	 */
	if (!(s->gmax * e <= WIDE_MAX_ETA))
		return -1.0;
	s->xf_xx = xx;
	*xn_out = xn;
	return e;
}

/*
 * Group g's squared distances from the row wide_prep took into s->d2:
 * its 32 slots as two vectors of 16 lanes, each summed in two chains
 * (even and odd coordinates) so that the multiply-adds do not wait on
 * each other; a run's sums join before they go to double.  Not inlined:
 * inlined, it pushed group_distances out of line, which slowed narrow rows.
 */
static __attribute__((noinline)) void
wide_group(SvcScorer *s, int32_t g)
{
	int32_t		d = s->dims;
	const float *restrict xf = s->xf;
	const float *gf = s->sf + (size_t) g * WIDE_SLOTS * d;
	const double *nrm = s->sfnorm + (size_t) g * WIDE_SLOTS;
	double		xx = s->xf_xx;
	v8			acc0 = {0},
				acc1 = {0},
				acc2 = {0},
				acc3 = {0};

	for (int32_t j0 = 0; j0 < d; j0 += WIDE_RUN)
	{
		int32_t		j1 = j0 + WIDE_RUN < d ? j0 + WIDE_RUN : d,
					j = j0;
		f16			a0 = {0},
					a1 = {0},
					b0 = {0},
					b1 = {0};

		if (j1 - j0 == WIDE_RUN)
		{
			a0 = dot_run16(gf + (size_t) j0 * WIDE_HALF, xf + j0);
			a1 = dot_run16(gf + (size_t) WIDE_HALF * d + (size_t) j0 * WIDE_HALF, xf + j0);
			j = j1;
		}
		for (; j + 1 < j1; j += 2)
		{
			const float *gj = gf + (size_t) j * WIDE_HALF,
					   *hj = gj + (size_t) WIDE_HALF * d;
			float		xj = xf[j],
						xk = xf[j + 1];
			f16			l0,
						l1,
						m0,
						m1;

			memcpy(&l0, gj, sizeof(l0));
			memcpy(&l1, hj, sizeof(l1));
			memcpy(&m0, gj + WIDE_HALF, sizeof(m0));
			memcpy(&m1, hj + WIDE_HALF, sizeof(m1));
			a0 += l0 * xj;
			a1 += l1 * xj;
			b0 += m0 * xk;
			b1 += m1 * xk;
		}
		if (j < j1)
		{
			const float *gj = gf + (size_t) j * WIDE_HALF;
			float		xj = xf[j];
			f16			l0,
						l1;

			memcpy(&l0, gj, sizeof(l0));
			memcpy(&l1, gj + (size_t) WIDE_HALF * d, sizeof(l1));
			a0 += l0 * xj;
			a1 += l1 * xj;
		}
		a0 += b0;
		a1 += b1;
		/* by halves: a shuffle, not a copy through memory (which kept
		 * the accumulators of the loop above on the stack) */
		acc0 += __builtin_convertvector(F16_LO(a0), v8);
		acc1 += __builtin_convertvector(F16_HI(a0), v8);
		acc2 += __builtin_convertvector(F16_LO(a1), v8);
		acc3 += __builtin_convertvector(F16_HI(a1), v8);
	}
	{
		v8			dd[4];
		double	   *restrict d2 = s->d2 + (size_t) g * WIDE_SLOTS;

		dd[0] = xx + load8(nrm) - 2.0 * acc0;
		dd[1] = xx + load8(nrm + BLK) - 2.0 * acc1;
		dd[2] = xx + load8(nrm + 2 * BLK) - 2.0 * acc2;
		dd[3] = xx + load8(nrm + 3 * BLK) - 2.0 * acc3;
		for (int q = 0; q < 4; q++)
		{
			for (int k = 0; k < BLK; k++)
				dd[q][k] = dd[q][k] > 0.0 ? dd[q][k] : 0.0;
			store8p(d2 + q * BLK, &dd[q]);
		}
	}
}

/*
 * One half of group g (h 0: its first 16 slots, 1: its last) into its
 * place in s->d2, summed as wide_group sums (within the same bound), in
 * four chains: one vector of slots has half the independent sums.  Not
 * inlined, as wide_group.
 */
static __attribute__((noinline)) void
wide_half(SvcScorer *s, int32_t g, int h)
{
	int32_t		d = s->dims;
	const float *restrict xf = s->xf;
	const float *gf = s->sf + (size_t) g * WIDE_SLOTS * d + (size_t) h * WIDE_HALF * d;
	const double *nrm = s->sfnorm + (size_t) g * WIDE_SLOTS + h * WIDE_HALF;
	double		xx = s->xf_xx;
	v8			acc0 = {0},
				acc1 = {0};

	for (int32_t j0 = 0; j0 < d; j0 += WIDE_RUN)
	{
		int32_t		j1 = j0 + WIDE_RUN < d ? j0 + WIDE_RUN : d,
					j = j0;
		f16			a0 = {0},
					b0 = {0},
					c0 = {0},
					e0 = {0};

		if (j1 - j0 == WIDE_RUN)
		{
			a0 = dot_run16(gf + (size_t) j0 * WIDE_HALF, xf + j0);
			j = j1;
		}
		for (; j + 3 < j1; j += 4)
		{
			const float *gj = gf + (size_t) j * WIDE_HALF;
			f16			l0,
						m0,
						n0,
						o0;

			memcpy(&l0, gj, sizeof(l0));
			memcpy(&m0, gj + WIDE_HALF, sizeof(m0));
			memcpy(&n0, gj + 2 * WIDE_HALF, sizeof(n0));
			memcpy(&o0, gj + 3 * WIDE_HALF, sizeof(o0));
			a0 += l0 * xf[j];
			b0 += m0 * xf[j + 1];
			c0 += n0 * xf[j + 2];
			e0 += o0 * xf[j + 3];
		}
		for (; j < j1; j++)
		{
			f16			l0;

			memcpy(&l0, gf + (size_t) j * WIDE_HALF, sizeof(l0));
			a0 += l0 * xf[j];
		}
		a0 += b0;
		c0 += e0;
		a0 += c0;
		acc0 += __builtin_convertvector(F16_LO(a0), v8);
		acc1 += __builtin_convertvector(F16_HI(a0), v8);
	}
	{
		v8			dd[2];
		double	   *restrict d2 = s->d2 + (size_t) g * WIDE_SLOTS + h * WIDE_HALF;

		dd[0] = xx + load8(nrm) - 2.0 * acc0;
		dd[1] = xx + load8(nrm + BLK) - 2.0 * acc1;
		for (int q = 0; q < 2; q++)
		{
			for (int k = 0; k < BLK; k++)
				dd[q][k] = dd[q][k] > 0.0 ? dd[q][k] : 0.0;
			store8p(d2 + q * BLK, &dd[q]);
		}
	}
}

/* elementwise min, by a mask (pointers: no v8 passed by value, as vec8.h) */
static inline v8
vmin8p(const v8 *ap, const v8 *bp)
{
	v8			a = *ap,
				b = *bp;
	vi8			lt = a < b;

	return (v8) (((vi8) a & lt) | ((vi8) b & ~lt));
}

/*
 * Bounds on the log of a group's terms' weights at x,
 * log sum |alpha_i| max(1, gamma_i) exp(-gamma_i ||x - s_i||^2), from the
 * projection: ||x - s||^2 >= ||Q(x - s)||^2 / proj_lam.
 * Each Qs (proj_init) is within gamma_{d+1} qn ||s|| of its exact value
 * per coordinate (d products summed in any order, each rounded or fused),
 * Qx, from floats, within PROJ_QX_ERR qn ||x|| + d 2^-147, so
 * delta = sqrt(k) qn (PROJ_QX_ERR ||x|| + gamma_{d+1} max ||s|| + d 2^-147)
 * in all; the computed distance t' then within delta of ||Q(x - s)||,
 * itself at most T = sqrt(proj_lam) (||x|| + max ||s||), so
 * ||Q(x - s)||^2 >= t'^2 - 2 delta (T + delta).  The projections are kept
 * as floats, and t'^2 summed in float: rounding Qx and Qs to float moves
 * them by at most 2^-24 (||Qx|| + ||Qs||) <= 2^-24 T' (T' = T + delta)
 * more, and 2^-140 for subnormals, so delta grows by that; the float
 * differences, squares and sum of k terms are within (k + 3) 2^-24 of
 * t'^2, inside the 2^-18 taken off, plus 2^-100 for underflow.  Past
 * T' = 2^50 a float square could overflow: no bound then (the row's
 * terms are taken as up to 1).
 *
 * proj_row projects the row, proj_group bounds one group.  (A first bound
 * by a ball around each group's projected slots settled none of them on
 * 128-D embeddings: a group's ball is as wide as the gaps between them.)
 */
static void
proj_row(SvcScorer *s, double xn)
{
	int32_t		d = s->dims,
				k = s->n_proj;
	const float *restrict q = s->proj_q,
			   *restrict xf = s->xf;
	v8			z0 = {0},
				z1 = {0};
	double		xnorm = sqrt(xn) * (1.0 + 0x1p-40),
				gam = (d + 1.0) * 0x1p-53 / (1.0 - (d + 1.0) * 0x1p-53),
				delta = sqrt((double) k) * s->proj_qn *
		(PROJ_QX_ERR * xnorm + gam * s->sv_norm + d * 0x1p-147) * (1.0 + 0x1p-40),
				big = sqrt(s->proj_lam) * (xnorm + s->sv_norm) + delta;
	_Static_assert(PROJ == 2 * BLK, "the projected row is two v8");
	_Static_assert(PROJ == WIDE_HALF, "the projected row is one f16");

	/* the floats' rounding */
	delta += 0x1p-24 * big * (1.0 + 0x1p-20) + 0x1p-140;
	big += 0x1p-24 * big * (1.0 + 0x1p-20) + 0x1p-140;
	s->proj_off = !(big <= 0x1p50);
	s->proj_slack = 2.0 * delta * (big + delta) * (1.0 + 0x1p-40) + 0x1p-100;
	s->proj_inv = (1.0 - 0x1p-40) / s->proj_lam;
	/*
	 * Qx from the row's floats (wide_prep) and Q's: WIDE_RUN coordinates
	 * summed in float, in two chains, then in double
	 */
	for (int32_t j0 = 0; j0 < d; j0 += WIDE_RUN)
	{
		int32_t		j1 = j0 + WIDE_RUN < d ? j0 + WIDE_RUN : d,
					j = j0;
		f16			a = {0},
					b = {0};

		if (j1 - j0 == WIDE_RUN)
		{
			a = dot_run16(q + (size_t) j0 * PROJ, xf + j0);
			j = j1;
		}
		for (; j + 1 < j1; j += 2)
		{
			f16			qa,
						qb;

			memcpy(&qa, q + (size_t) j * PROJ, sizeof(qa));
			memcpy(&qb, q + (size_t) (j + 1) * PROJ, sizeof(qb));
			a += qa * xf[j];
			b += qb * xf[j + 1];
		}
		if (j < j1)
		{
			f16			qa;

			memcpy(&qa, q + (size_t) j * PROJ, sizeof(qa));
			a += qa * xf[j];
		}
		a += b;
		z0 += __builtin_convertvector(F16_LO(a), v8);
		z1 += __builtin_convertvector(F16_HI(a), v8);
	}
	{
		SvcF8		h0 = __builtin_convertvector(z0, SvcF8),
					h1 = __builtin_convertvector(z1, SvcF8);

		memcpy(s->proj_z, &h0, sizeof(h0));
		memcpy(s->proj_z + BLK, &h1, sizeof(h1));
	}
}

/* elementwise min, by a mask */
static inline f16
f16_min(f16 a, f16 b)
{
	vi16		lt = a < b;

	return (f16) (((vi16) a & lt) | ((vi16) b & ~lt));
}

/* log of a group's largest weight from the least gamma_i lb_i, and its sum's rounding */
static inline double
proj_gub(double glnmass, double emax)
{
	return glnmass + emax + 1e-9 * (1.0 + fabs(glnmass) + fabs(emax));
}

/*
 * Squared distances in the projected space from the row's projection z to
 * sixteen projected points, laid out as PROJ rows of WIDE_HALF floats (the
 * support vectors' halves and the equilibria share this layout).
 */
static inline f16
proj_sqdist16(const f16 *z, const float *pts)
{
	f16			acc[4] = {{0}};

	/* four chains, then their sum (the bound holds for any order) */
	for (int32_t r = 0; r < PROJ; r++)
	{
		f16			t,
					p;

		memcpy(&p, pts + (size_t) r * WIDE_HALF, sizeof(p));
		t = (*z)[r] - p;
		acc[r % 4] += t * t;
	}
	return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/*
 * Group g's bound from its slots into s->gub, and each half's (its first
 * and last HALF blocks, with the whole group's mass) into s->ghalf.
 */
static inline void
proj_group(SvcScorer *s, int32_t g)
{
	f16			z;
	double		slack = s->proj_slack,
				inv = s->proj_inv,
				m[2];
	int32_t		b0 = g * GRP,
				b1 = b0 + GRP < s->n_blk ? b0 + GRP : s->n_blk;

	if (s->proj_off)
	{
		/* no bound: every term up to its weight */
		s->ghalf[2 * g] = s->ghalf[2 * g + 1] = s->gub[g] = proj_gub(s->glnmass[g], 0.0);
		return;
	}
	memcpy(&z, s->proj_z, sizeof(z));
	for (int h = 0; h < 2; h++)
	{
		int32_t		b = b0 + h * HALF;
		const float *ps = s->proj_s + (size_t) (b / HALF) * PROJ * WIDE_HALF;
		f16			acc;
		v8			lb,
					vmin;

		m[h] = DBL_MAX;
		if (b >= b1)
			continue;
		for (int t = 0; t < BLK; t++)
			vmin[t] = DBL_MAX;
		/* the half's 16 slots at once, in float */
		acc = proj_sqdist16(&z, ps);
		for (int q = 0; q < HALF && b + q < b1; q++)
		{
			lb = q == 0 ? __builtin_convertvector(F16_LO(acc), v8) :
				__builtin_convertvector(F16_HI(acc), v8);
			lb = (lb * (1.0 - 0x1p-18) - slack) * inv;
			/* max(lb, 0), exactly, without a branch */
			lb = (lb + (v8) ((vu8) lb & 0x7fffffffffffffffULL)) * 0.5;
			lb *= load8(s->width + (size_t) (b + q) * BLK);
			/* the least gamma_i lb_i */
			vmin = vmin8p(&lb, &vmin);
		}
		/* the least lane by halving, in vector registers */
		lb = __builtin_shufflevector(vmin, vmin, 4, 5, 6, 7, 0, 1, 2, 3);
		vmin = vmin8p(&vmin, &lb);
		lb = __builtin_shufflevector(vmin, vmin, 2, 3, 0, 1, 6, 7, 4, 5);
		vmin = vmin8p(&vmin, &lb);
		lb = __builtin_shufflevector(vmin, vmin, 1, 0, 3, 2, 5, 4, 7, 6);
		vmin = vmin8p(&vmin, &lb);
		m[h] = vmin[0];
	}
	s->ghalf[2 * g] = proj_gub(s->glnmass[g], -m[0]);
	s->ghalf[2 * g + 1] = proj_gub(s->glnmass[g], -m[1]);
	s->gub[g] = proj_gub(s->glnmass[g], -(m[0] < m[1] ? m[0] : m[1]));
}

/*
 * Every group's and half's bound as proj_group gives them, for models of
 * one gamma: the bound is then a nondecreasing function of the projected
 * distance (each step rounded, so still nondecreasing), so a half's least
 * lane is its value at the half's least distance, which float comparisons
 * find exactly.  First the least distances (both halves of a group in one
 * reduction), then the bounds, all groups at once.
 */
static void
proj_groups_one(SvcScorer *s)
{
	int32_t		ng = s->n_grp,
				nb = s->n_blk;
	float	   *restrict hm = s->proj_hm,
			   *restrict gm = s->proj_gm;
	double	   *restrict ghalf = s->ghalf,
			   *restrict gub = s->gub;
	const double *glnmass = s->glnmass,
			   *glnmass2 = s->glnmass2;
	double		slack = s->proj_slack,
				inv = s->proj_inv,
				gam = s->width[0];
	f16			z;

	memcpy(&z, s->proj_z, sizeof(z));
	for (int32_t g = 0; g < ng; g++)
	{
		int32_t		b0 = g * GRP,
					b1 = b0 + GRP < nb ? b0 + GRP : nb;
		const float *ps = s->proj_s + (size_t) (b0 / HALF) * PROJ * WIDE_HALF;
		f16			a0 = proj_sqdist16(&z, ps),
					a1,
					lo,
					hi;

		if (b0 + HALF < b1)
			a1 = proj_sqdist16(&z, ps + PROJ * WIDE_HALF);
		else
			for (int t = 0; t < WIDE_HALF; t++)
				a1[t] = FLT_MAX;
		/* lanes of blocks past the group's end */
		if (b0 + 1 >= b1)
			for (int t = BLK; t < WIDE_HALF; t++)
				a0[t] = FLT_MAX;
		if (b0 + HALF + 1 >= b1)
			for (int t = BLK; t < WIDE_HALF; t++)
				a1[t] = FLT_MAX;
		lo = __builtin_shufflevector(a0, a1, 0, 1, 2, 3, 4, 5, 6, 7,
									 16, 17, 18, 19, 20, 21, 22, 23);
		hi = __builtin_shufflevector(a0, a1, 8, 9, 10, 11, 12, 13, 14, 15,
									 24, 25, 26, 27, 28, 29, 30, 31);
		lo = f16_min(lo, hi);
		hi = __builtin_shufflevector(lo, lo, 4, 5, 6, 7, 0, 1, 2, 3,
									 12, 13, 14, 15, 8, 9, 10, 11);
		lo = f16_min(lo, hi);
		hi = __builtin_shufflevector(lo, lo, 2, 3, 0, 1, 6, 7, 4, 5,
									 10, 11, 8, 9, 14, 15, 12, 13);
		lo = f16_min(lo, hi);
		hi = __builtin_shufflevector(lo, lo, 1, 0, 3, 2, 5, 4, 7, 6,
									 9, 8, 11, 10, 13, 12, 15, 14);
		lo = f16_min(lo, hi);
		hm[2 * g] = lo[0];
		hm[2 * g + 1] = lo[BLK];
		gm[g] = lo[0] < lo[BLK] ? lo[0] : lo[BLK];
	}
	for (int32_t t = 0; t < 2 * ng; t++)
	{
		double		lb = ((double) hm[t] * (1.0 - 0x1p-18) - slack) * inv;

		lb = lb > 0.0 ? lb : 0.0;
		ghalf[t] = proj_gub(glnmass2[t], -(lb * gam));
	}
	for (int32_t g = 0; g < ng; g++)
	{
		double		lb = ((double) gm[g] * (1.0 - 0x1p-18) - slack) * inv;

		lb = lb > 0.0 ? lb : 0.0;
		gub[g] = proj_gub(glnmass[g], -(lb * gam));
	}
	/* a last group of HALF blocks or fewer: no second half */
	if ((ng - 1) * GRP + HALF >= nb)
		ghalf[2 * ng - 1] = proj_gub(glnmass[ng - 1], -DBL_MAX);
}

/*
 * Lower bounds on ||x - e_i|| for the model's equilibria at the row of the
 * last pass, as proj_group bounds the slots' (proj_init keeps the
 * equilibria only when their norms are within sv_norm, so this pass's
 * slack covers them too), sixteen at a time; square roots rounded down.
 */
bool
svc_scorer_eq_bounds(const SvcScorer *s, double *lb)
{
	int32_t		n = s->m->n_eq;
	f16			z;

	if (!s->proj_e || !s->wide_on || s->proj_off)
		return false;
	memcpy(&z, s->proj_z, sizeof(z));
	for (int32_t c = 0; c < n; c += WIDE_HALF)
	{
		const float *pe = s->proj_e + (size_t) (c / WIDE_HALF) * PROJ * WIDE_HALF;
		f16			acc = proj_sqdist16(&z, pe);
		double		out[WIDE_HALF];

		/*
		 * all sixteen lanes, then the ones there are: a loop of a known
		 * count vectorises, square roots and all (each correctly rounded,
		 * as the scalar one)
		 */
		for (int t = 0; t < WIDE_HALF; t++)
		{
			double		v = ((double) acc[t] * (1.0 - 0x1p-18) - s->proj_slack) * s->proj_inv;

			v = v > 0.0 ? v : 0.0;
			out[t] = sqrt(v) * (1.0 - 0x1p-40);
		}
		memcpy(lb + c, out, sizeof(double) * (size_t) (n - c < WIDE_HALF ? n - c : WIDE_HALF));
	}
	return true;
}

SvcStatus
svc_scorer_init(const SvcEnv *env, const SvcModel *m, SvcScorer *s, SvcError *err)
{
	int32_t		n = m->n_sv,
				d = m->dims;
	int32_t    *perm = NULL;
	KeyIdx	   *tmp = NULL;
	double	   *keys = NULL;
	size_t		slots;
	SvcStatus	st = SVC_ERR_NOMEM;

	memset(s, 0, sizeof(*s));
	s->m = m;
	s->env = env;
	s->dims = d;
	svc_traj_tol(m, &s->tol);
	s->x = svc_alloc(env, sizeof(double) * (size_t) (d > 0 ? d : 1), err);
	s->p = svc_alloc(env, sizeof(double) * (size_t) (d > 0 ? d : 1), err);
	/* eqd: on first use, so that its allocations depend only on n_eq */
	if (!s->x || !s->p)
		goto fail;
	st = svc_label_work_init(env, m, &s->full, err);
	if (st != SVC_OK)
		goto fail;
	st = SVC_ERR_NOMEM;
	if (n <= 0)
		return SVC_OK;			/* everything takes the full path */

	perm = svc_alloc(env, sizeof(int32_t) * (size_t) n, err);
	tmp = svc_alloc(env, sizeof(KeyIdx) * (size_t) n, err);
	if (!perm || !tmp)
		goto fail;
	for (int32_t i = 0; i < n; i++)
		perm[i] = i;
	st = proj_keys(env, m, &keys, err);
	if (st != SVC_OK)
		goto fail;
	st = SVC_ERR_NOMEM;
	split(m, keys, perm, tmp, 0, n);
	svc_free(env, keys);
	keys = NULL;

	s->n_blk = (n + BLK - 1) / BLK;
	s->n_grp = (s->n_blk + GRP - 1) / GRP;
	{
		/* whole vectors of eight groups: svc_scorer_pass() bounds them together */
		size_t		gslots = (size_t) (s->n_grp + BLK - 1) / BLK * BLK;

		s->gcentre = svc_alloc0(env, sizeof(double) * gslots * d, err);
		s->gradius = svc_alloc0(env, sizeof(double) * gslots, err);
		s->glnmass = svc_alloc0(env, sizeof(double) * gslots, err);
		s->ggmin = svc_alloc0(env, sizeof(double) * gslots, err);
		s->gub = svc_alloc(env, sizeof(double) * gslots, err);
		s->gdist = svc_alloc(env, sizeof(double) * gslots, err);
	}
	if (!s->gcentre || !s->gradius || !s->glnmass || !s->ggmin || !s->gub || !s->gdist)
		goto fail;
	slots = (size_t) s->n_blk * BLK;
	s->st = svc_alloc(env, sizeof(double) * slots * (size_t) d, err);
	s->alpha = svc_alloc(env, sizeof(double) * slots, err);
	s->width = svc_alloc(env, sizeof(double) * slots, err);
	s->aabs = svc_alloc(env, sizeof(double) * slots, err);
	s->lnref = svc_alloc(env, sizeof(double) * slots, err);
	s->d2 = svc_alloc(env, sizeof(double) * (slots + WIDE_SLOTS), err);
	s->lnmass = svc_alloc(env, sizeof(double) * (size_t) s->n_blk, err);
	s->bmax = svc_alloc(env, sizeof(double) * (size_t) s->n_blk, err);
	s->kept = svc_alloc(env, sizeof(int32_t) * (size_t) s->n_blk, err);
	s->kx = svc_alloc(env, sizeof(double) * slots, err);
	if (!s->kx || !s->aabs || !s->st || !s->alpha || !s->width || !s->lnref || !s->d2 ||
		!s->lnmass || !s->bmax || !s->kept)
		goto fail;

	s->positive = true;
	for (int32_t b = 0; b < s->n_blk; b++)
	{
		double	   *blk = s->st + (size_t) b * BLK * d;
		double		mass = 0.0;

		for (int32_t k = 0; k < BLK; k++)
		{
			int32_t		t = b * BLK + k;
			bool		real = t < n;
			/* padding repeats the block's first vector, with alpha 0 */
			int32_t		i = perm[real ? t : b * BLK];
			const double *sv = m->sv + (size_t) i * d;
			double		a = real ? m->alpha[i] : 0.0;
			double		g = m->sv_gamma ? m->sv_gamma[i] : m->gamma;

			for (int32_t j = 0; j < d; j++)
				blk[(size_t) j * BLK + k] = sv[j];
			s->alpha[t] = a;
			s->aabs[t] = fabs(a);
			s->width[t] = g;
			s->lnref[t] = a != 0.0 ? log(fabs(a) * fmin(1.0, g)) : -1e300;
			if (!real)
				continue;
			mass += fabs(a) * fmax(1.0, g);
			s->gmax = fmax(s->gmax, g);
			s->abs_alpha += fabs(a);
			/* a weight alpha_i gamma_i that would read as 0 stops the climb */
			if (!(a * g >= 1e-290))
				s->positive = false;
			{
				double		nrm = 0.0;

				for (int32_t j = 0; j < d; j++)
				{
					s->coord_max = fmax(s->coord_max, fabs(sv[j]));
					nrm += sv[j] * sv[j];
				}
				s->sv_norm = fmax(s->sv_norm, sqrt(nrm) * (1.0 + 0x1p-40));
			}
		}
		s->lnmass[b] = log(mass > 0.0 ? mass : DBL_MIN);
	}
	if (d >= SVC_SCORE_WIDE_DIMS && s->coord_max <= WIDE_MAX_COORD)
	{
		st = wide_init(env, s, err);
		if (st != SVC_OK)
			goto fail;
		st = SVC_ERR_NOMEM;
	}

	/* groups of GRP blocks: a ball around the mean of their vectors */
	for (int32_t g = 0; g < s->n_grp; g++)
	{
		int32_t		lo = g * GRP * BLK,
					hi = (g + 1) * GRP * BLK < n ? (g + 1) * GRP * BLK : n;
		/* coordinate j of group g at [(g / 8 * d + j) * 8 + g % 8] */
		double	   *c = s->gcentre + (size_t) (g / BLK) * BLK * d + g % BLK;
		double		r2 = 0.0,
					mass = 0.0,
					gmin = DBL_MAX;

		for (int32_t j = 0; j < d; j++)
		{
			double		sum = 0.0;

			for (int32_t t = lo; t < hi; t++)
				sum += m->sv[(size_t) perm[t] * d + j];
			c[(size_t) j * BLK] = sum / (hi - lo);
		}
		for (int32_t t = lo; t < hi; t++)
		{
			int32_t		i = perm[t];
			double		g_i = m->sv_gamma ? m->sv_gamma[i] : m->gamma;
			double		d2 = 0.0;

			for (int32_t j = 0; j < d; j++)
			{
				double		dj = m->sv[(size_t) i * d + j] - c[(size_t) j * BLK];

				d2 += dj * dj;
			}
			r2 = fmax(r2, d2);
			mass += fabs(m->alpha[i]) * fmax(1.0, g_i);
			gmin = fmin(gmin, g_i);
		}
		/* widened for the rounding of the centre and the distances */
		s->gradius[g] = sqrt(r2) * (1.0 + 1e-9) + 1e-300;
		s->glnmass[g] = log(mass > 0.0 ? mass : DBL_MIN);
		if (s->glnmass2)
			s->glnmass2[2 * g] = s->glnmass2[2 * g + 1] = s->glnmass[g];
		s->ggmin[g] = gmin;
	}
	svc_free(env, perm);
	svc_free(env, tmp);
	return SVC_OK;

fail:
	svc_free(env, perm);
	svc_free(env, tmp);
	svc_free(env, keys);
	svc_scorer_free(env, s);
	return st;
}

void
svc_scorer_free(const SvcEnv *env, SvcScorer *s)
{
	svc_free(env, s->st);
	svc_free(env, s->alpha);
	svc_free(env, s->width);
	svc_free(env, s->aabs);
	svc_free(env, s->lnref);
	svc_free(env, s->lnmass);
	svc_free(env, s->d2);
	svc_free(env, s->sf);
	svc_free(env, s->sfnorm);
	svc_free(env, s->xf);
	svc_free(env, s->proj_q);
	svc_free(env, s->proj_s);
	svc_free(env, s->proj_e);
	svc_free(env, s->ghalf);
	svc_free(env, s->proj_hm);
	svc_free(env, s->proj_gm);
	svc_free(env, s->glnmass2);
	svc_free(env, s->bmax);
	svc_free(env, s->kept);
	svc_free(env, s->gcentre);
	svc_free(env, s->gradius);
	svc_free(env, s->glnmass);
	svc_free(env, s->ggmin);
	svc_free(env, s->gub);
	svc_free(env, s->gdist);
	svc_free(env, s->kx);
	svc_free(env, s->eqd);
	svc_free(env, s->eqc);
	svc_free(env, s->x);
	svc_free(env, s->p);
	svc_free(env, s->basin);
	svc_label_work_free(env, &s->full);
	memset(s, 0, sizeof(*s));
}

/* ---------- one pass over the support vectors ---------- */

/*
 * Squared distances of group g's blocks into acc, four blocks at a time:
 * four independent sums keep the multiply-adds from waiting on each
 * other.  Returns how many blocks the group has.
 */
static inline __attribute__((always_inline)) int
group_distances(SvcScorer *s, const double *x, int32_t g, v8 *acc, int q0, int q1)
{
	int32_t		d = s->dims,
				b0 = g * GRP,
				nq = s->n_blk - b0 < GRP ? s->n_blk - b0 : GRP;
	const double *blk = s->st + (size_t) b0 * BLK * d;

	if (s->wide_on && !s->exact_steps)
	{
		/* float distances (wide_group), for the groups a pass takes */
		if (q0 == 0 && q1 > HALF)
			wide_group(s, g);
		else
			wide_half(s, g, q0 / HALF);
		for (int q = q0; q < q1; q++)
			acc[q] = load8(s->d2 + (size_t) (b0 + q) * BLK);
		return nq;
	}
	if (nq == GRP)
	{
		/* four named sums: an array here was kept in memory */
		v8			a0 = {0},
					a1 = {0},
					a2 = {0},
					a3 = {0};
		const double *p0 = blk,
				   *p1 = blk + (size_t) d * BLK,
				   *p2 = blk + (size_t) 2 * d * BLK,
				   *p3 = blk + (size_t) 3 * d * BLK;

		for (int32_t j = 0; j < d; j++)
		{
			double		xj = x[j];
			v8			t0 = load8(p0 + (size_t) j * BLK) - xj,
						t1 = load8(p1 + (size_t) j * BLK) - xj,
						t2 = load8(p2 + (size_t) j * BLK) - xj,
						t3 = load8(p3 + (size_t) j * BLK) - xj;

			a0 += t0 * t0;
			a1 += t1 * t1;
			a2 += t2 * t2;
			a3 += t3 * t3;
		}
		acc[0] = a0;
		acc[1] = a1;
		acc[2] = a2;
		acc[3] = a3;
	}
	else
		for (int q = 0; q < nq; q++)
		{
			v8			a = {0};

			for (int32_t j = 0; j < d; j++)
			{
				v8			t = load8(blk + ((size_t) q * d + j) * BLK) - x[j];

				a += t * t;
			}
			acc[q] = a;
		}
	return nq;
}

/*
 * kv[0, nk) = exp(kv[0, nk)), elementwise, apart from the sums so that the
 * blocks' exps run side by side.  exp8p where the target rounds a vector in
 * one instruction; in a baseline x86-64 build (no SSE4.1, EXP_BY_GROUP)
 * glibc's vector exp is faster, called through a loop whose count the
 * compiler does not know (a known count of 8 is unrolled into calls of
 * the scalar exp).
 */
#if defined(__x86_64__) && !defined(__SSE4_1__)
#define EXP_BY_GROUP	1
#else
#define EXP_BY_GROUP	0
#endif

static inline void
exp_blocks(v8 *kv, int nk)
{
#if EXP_BY_GROUP
	double	   *restrict t = (double *) kv;

	for (int i = 0; i < nk * BLK; i++)
		t[i] = exp(t[i]);
#else
	for (int i = 0; i < nk; i++)
		kv[i] = exp8p(&kv[i]);
#endif
}

/* What one pass has summed so far. */
typedef struct Sums
{
	v8			lam;			/* alpha_i K_i / exp(shift) */
	v8			abs;			/* |alpha_i| K_i / exp(shift) */
	double		shift;			/* the exponent the kernel values are taken from */
	double		cut;			/* blocks whose bound is below it are dropped */
	double		prune_ln;		/* the cut below the largest term */
	int32_t		n_kept;
	int32_t		n_drop;
	int32_t		n_reshift;		/* rescalings, each rounding once more */
	double		dsum;			/* sum of the skipped groups' far ends */
} Sums;

/*
 * Take the kernel values from a larger exponent: the sums so far, and the
 * kept blocks' values where they were recorded, scale by exp(old - new)
 * <= 1.
 */
static void
reshift(SvcScorer *s, Sums *u, double shift, bool recorded)
{
	if (u->n_kept > 0)
	{
		double		f = exp(u->shift - shift);
		double	   *restrict kx = s->kx;
		int32_t		nk = u->n_kept * BLK;

		u->lam *= f;
		u->abs *= f;
		if (recorded)
			for (int32_t t = 0; t < nk; t++)
				kx[t] *= f;
		u->n_reshift++;
	}
	u->shift = shift;
}

/*
 * What both group functions start with: group g's squared distances into
 * acc and exponents into e, the cut raised by its largest term, and the
 * shift (the first group's largest exponent; a later group's terms may be
 * larger, up to e^RESHIFT, before the sums take a new one, rescaling the
 * kept values where they were recorded).  Returns the group's blocks.
 * Forced inline: called from two functions, gcc keeps it out of line,
 * which slows f.
 */
static inline __attribute__((always_inline)) int
group_head(SvcScorer *s, const double *x, int32_t g, Sums *u, v8 *acc, v8 *e,
		   bool recorded, int q0, int q1)
{
	const double *width = s->width,
			   *lnref = s->lnref;
	v8			vref,
				vtop;
	double		top,
				cut;
	int			nq = group_distances(s, x, g, acc, q0, q1);

	for (int k = 0; k < BLK; k++)
		vref[k] = vtop[k] = -DBL_MAX;
	for (int q = q0; q < q1; q++)
	{
		int32_t		b = g * GRP + q;
		v8			r;

		e[q] = -load8(width + (size_t) b * BLK) * acc[q];
		r = e[q] + load8(lnref + (size_t) b * BLK);
		vmax8p(&vref, &r);
		vmax8p(&vtop, &e[q]);
	}
	top = hmax8p(&vtop);
	cut = hmax8p(&vref) - u->prune_ln;
	u->cut = cut > u->cut ? cut : u->cut;
	if (u->n_kept == 0)
		u->shift = top;
	else if (top > u->shift + RESHIFT)
		reshift(s, u, top, recorded);
	return nq;
}

/*
 * Group g's blocks, for svc_scorer_pass: their distances and exponents,
 * then the kernel values of those that can matter, kept for pass_step
 * (score_trajectory.c).  A block is dropped when its largest possible
 * terms, sum |alpha_i| max(1, gamma_i) exp(its largest exponent), are at
 * most 2^-50 of the largest single term |alpha_k| min(1, gamma_k) exp(e_k)
 * seen so far (which is in a kept block, unless the exponents are so
 * large, past 2^58, that the cut rounds to the term's own: then every
 * kernel value is 0 anyway).
 */
static inline void
take_group(SvcScorer *s, const double *x, int32_t g, Sums *u, int q0, int q1)
{
	/*
	 * Local pointers and sums: without strict aliasing, every store
	 * through one of s's arrays would otherwise reload the others, and u
	 */
	const double *lnmass = s->lnmass;
	double	   *restrict d2 = s->d2;
	double	   *restrict bmax = s->bmax;
	v8			acc[GRP],
				e[GRP],
				kv[GRP];
	int32_t		kb[GRP];
	int			nk = 0;
	double		bm[GRP],
				cut,
				shift;

	group_head(s, x, g, u, acc, e, true, q0, q1);
	cut = u->cut;
	shift = u->shift;
	for (int q = q0; q < q1; q++)
	{
		store8p(d2 + (size_t) (g * GRP + q) * BLK, &acc[q]);
		bm[q] = hmax8p(&e[q]);
	}
	for (int q = q0; q < q1; q++)
	{
		int32_t		b = g * GRP + q;

		if (bm[q] + lnmass[b] <= cut)
		{
			/* P's bound wants its farthest vector: see pass_step */
			bmax[b] = DBL_MAX;
			continue;
		}
		bmax[b] = bm[q];
		kb[nk] = b;
		kv[nk] = e[q] - shift;
		for (int t = 0; t < BLK; t++)
			kv[nk][t] = kv[nk][t] > EXP_FLOOR ? kv[nk][t] : EXP_FLOOR;
		nk++;
	}
	u->n_drop += q1 - q0 - nk;
	exp_blocks(kv, nk);
	{
		const double *alpha = s->alpha,
				   *aabs = s->aabs;
		double	   *restrict kx = s->kx + (size_t) u->n_kept * BLK;
		int32_t    *restrict kept = s->kept + u->n_kept;
		v8			lam = u->lam,
					abs = u->abs;

		for (int i = 0; i < nk; i++)
		{
			store8p(kx + (size_t) i * BLK, &kv[i]);
			kept[i] = kb[i];
			lam += load8(alpha + (size_t) kb[i] * BLK) * kv[i];
			abs += load8(aabs + (size_t) kb[i] * BLK) * kv[i];
		}
		u->lam = lam;
		u->abs = abs;
		u->n_kept += nk;
	}
}

/*
 * Group g's blocks, for svc_scorer_pass_sum (f alone): every block is summed and
 * nothing is kept.  Deciding block by block, as take_group does to spare
 * pass_step the blocks that do not matter, costs more in branches and
 * horizontal maxima than the exps of the blocks it would drop; the exp is
 * taken in the sums' loop, not in a loop of its own through memory
 * (measured: doc/design-notes.md).
 */
static inline void
sum_group(SvcScorer *s, const double *x, int32_t g, Sums *u, int q0, int q1)
{
	const double *alpha = s->alpha,
			   *aabs = s->aabs;
	v8			acc[GRP],
				e[GRP],
				lam,
				abs;

	group_head(s, x, g, u, acc, e, false, q0, q1);
	lam = u->lam;
	abs = u->abs;
	if (EXP_BY_GROUP)
	{
		for (int q = q0; q < q1; q++)
		{
			e[q] -= u->shift;
			for (int t = 0; t < BLK; t++)
				e[q][t] = e[q][t] > EXP_FLOOR ? e[q][t] : EXP_FLOOR;
		}
		exp_blocks(e + q0, q1 - q0);
	}
	for (int i = 0; i < q1 - q0; i++)
	{
		int32_t		b = g * GRP + q0 + i;
		v8			kv = e[q0 + i];

		if (!EXP_BY_GROUP)
		{
			kv -= u->shift;
			for (int t = 0; t < BLK; t++)
				kv[t] = kv[t] > EXP_FLOOR ? kv[t] : EXP_FLOOR;
			kv = exp8p(&kv);
		}
		lam += load8(alpha + (size_t) b * BLK) * kv;
		abs += load8(aabs + (size_t) b * BLK) * kv;
	}
	u->lam = lam;
	u->abs = abs;
	u->n_kept += q1 - q0;
}

/* blocks [q0, q1) of group g, for either pass */
static inline __attribute__((always_inline)) void
run_blocks(SvcScorer *s, const double *x, int32_t g, Sums *u, bool record, int q0, int q1)
{
	if (record)
		take_group(s, x, g, u, q0, q1);
	else
		sum_group(s, x, g, u, q0, q1);
}

/*
 * Group g; for wide rows, the half whose bound is higher first, then the
 * other unless its bound is below the cut by then (a skipped half counts
 * as a skipped group).  Both halves above the cut from the start: the
 * whole group at once, which reads the row's floats once.
 */
static inline __attribute__((always_inline)) void
pass_group(SvcScorer *s, const double *x, int32_t g, Sums *u, bool record, double far)
{
	int			nq = s->n_blk - g * GRP < GRP ? s->n_blk - g * GRP : GRP,
				lo = 0,
				hi = nq,
				lo2 = 0,
				hi2 = 0;
	double		other;
	int			h;

	if (!(s->wide_on && !s->exact_steps && nq > HALF))
	{
		/* a call of its own: its range from 0 is the narrow rows' code */
		run_blocks(s, x, g, u, record, 0, nq);
		return;
	}
	h = s->ghalf[2 * g + 1] > s->ghalf[2 * g];
	other = s->ghalf[2 * g + 1 - h];
	if (!(u->n_kept > 0 && other > u->cut))
	{
		lo = h ? HALF : 0;
		hi = h ? nq : HALF;
		lo2 = h ? 0 : HALF;
		hi2 = h ? HALF : nq;
	}
	/* one more call of run_blocks: each is a copy of the group's code */
	for (int k = 0; k < 2; k++)
	{
		if (k == 1)
		{
			if (lo2 == hi2)
				break;
			if (!(other > u->cut))
			{
				if (record)
					for (int q = lo2; q < hi2; q++)
						s->bmax[g * GRP + q] = -DBL_MAX;	/* skipped */
				u->n_drop++;
				u->dsum += far;
				s->n_half_drop++;
				break;
			}
			lo = lo2;
			hi = hi2;
		}
		run_blocks(s, x, g, u, record, lo, hi);
	}
}

/*
 * The kernel sum at x: with record, block by block with what pass_step
 * needs to give the fixed-point step P(x) (svc_scorer_pass); without,
 * every block of the groups taken and nothing kept (svc_scorer_pass_sum,
 * f alone).  The group whose ball may hold the largest term goes first
 * and sets the cut; a group whose ball keeps every term below the cut is
 * skipped, distances and all; the other groups' blocks are summed or
 * dropped as take_group says, or all summed (sum_group).  Kernel values
 * are taken from the first group's largest exponent, the shift
 * (exp(e_i - shift) <= e^RESHIFT), and scaled back at the end.
 */
static inline void
pass_any(SvcScorer *s, const double *x, SvcScorePass *out, bool record)
{
	int32_t		d = s->dims,
				nb = s->n_blk,
				ng = s->n_grp,
				first = 0;
	double		best = -DBL_MAX;
	Sums		u;

	double		far = 0.0;		/* wide rows: a bound on every ||x - s_i|| */
	memset(&u, 0, sizeof(u));
	u.shift = -DBL_MAX;
	u.cut = -DBL_MAX;
	u.prune_ln = PRUNE_LN;
	out->d2_err = 0.0;
	out->eta = 0.0;
	out->prune = 0x1p-50;
	s->wide_on = false;
	if (s->n_wide > 0 && s->n_proj > 0)
	{
		double		xn = 0.0,
					e = wide_prep(s, x, &xn);

		if (e >= 0.0)
		{
			int			bits = 50;

			s->wide_on = true;
			if (s->exact_steps)
				bits = WIDE_EXACT_BITS;		/* double distances: eta 0 */
			else
			{
				out->d2_err = e;
				out->eta = s->gmax * e;
				if (out->eta > 0x1p-60)
				{
					/*
					 * eta = m 2^k with m in [1/2, 1) (k from the bits: eta is
					 * a normal number here), so 2^(k - 1) <= eta and
					 * 2^-(1 - k + WIDE_PRUNE_BELOW) <= eta 2^-WIDE_PRUNE_BELOW;
					 * ceil(-log2(eta)) + WIDE_PRUNE_BELOW but for the libm call
					 */
					uint64_t	eb;
					int			b;

					memcpy(&eb, &out->eta, sizeof(eb));
					b = 1 - ((int) (eb >> 52) - 1022) + WIDE_PRUNE_BELOW;
					bits = b < WIDE_PRUNE_MIN ? WIDE_PRUNE_MIN : b > 50 ? 50 : b;
				}
			}
			u.prune_ln = bits * M_LN2;
			{
				/* 2^-bits, bits in [20, 50] */
				uint64_t	pb = (uint64_t) (1023 - bits) << 52;

				memcpy(&out->prune, &pb, sizeof(pb));
			}
			far = (sqrt(xn) + s->sv_norm) * (1.0 + 0x1p-40);
			proj_row(s, xn);
			if (s->proj_one_width && !s->proj_off)
				proj_groups_one(s);
			else
				for (int32_t g = 0; g < ng; g++)
					proj_group(s, g);
		}
	}

	/* each group's bound, eight groups at a time */
	for (int32_t c = 0; c < ng && !s->wide_on; c += BLK)
	{
		const double *gc = s->gcentre + (size_t) c * d;
		v8			dd = {0};

		for (int32_t j = 0; j < d; j++)
		{
			v8			t = load8(gc + (size_t) j * BLK) - x[j];

			dd += t * t;
		}
		store8p(s->gdist + c, &dd);
	}
	{
		/* local pointers, or (without strict aliasing) the loop would not
		 * vectorise: a store through s->gdist could change s->gub */
		double	   *restrict gdist = s->gdist;
		double	   *restrict gub = s->gub;
		const double *gradius = s->gradius,
				   *glnmass = s->glnmass,
				   *ggmin = s->ggmin;
		int32_t		gslots = s->wide_on ? 0 : (ng + BLK - 1) / BLK * BLK;

		for (int32_t g = 0; g < gslots; g++)
		{
			double		dist = sqrt(gdist[g]);
			double		gap = dist - gradius[g];

			gap = gap > 0.0 ? gap : 0.0;
			gdist[g] = dist;
			gub[g] = glnmass[g] - ggmin[g] * gap * gap;
		}
	}
	for (int32_t g = 0; g < ng; g++)
		if (s->gub[g] > best)
		{
			best = s->gub[g];
			first = g;
		}

	/* the first group, then the others in order */
	for (int32_t i = -1; i < ng; i++)
	{
		int32_t		g = i < 0 ? first : i;

		if (i == first)
			continue;
		if (i >= 0 && s->gub[g] <= u.cut)
		{
			if (record)
				for (int32_t b = g * GRP; b < nb && b < (g + 1) * GRP; b++)
					s->bmax[b] = -DBL_MAX;	/* skipped */
			u.n_drop++;
			u.dsum += s->wide_on ? far : s->gdist[g] + s->gradius[g];
			continue;
		}
		pass_group(s, x, g, &u, record, far);
	}

	{
		double		scale = exp(u.shift);
		/*
		 * wide rows: every exponent is within eta of the exact one, so
		 * each kept term within a factor exp(eta) and the dropped ones'
		 * share of the largest within exp(2 eta) of the cut's (2^-50, or
		 * for wide rows prune)
		 */
		double		wide = 1.0,
					em1 = 0.0,
					rel;

		if (out->eta > 0.0)
		{
			/*
			 * for 0 < y <= 2^-9 (eta <= WIDE_MAX_ETA), e^y - 1 <= y + y^2:
			 * upper bounds on exp(2 eta) and expm1(eta) with their
			 * rounding, without libm's calls on every row
			 */
			double		y = 2.0 * out->eta;

			wide = 1.0 + ((y + y * y) * (1.0 + 0x1p-40) + 0x1p-52);
			em1 = (out->eta + out->eta * out->eta) * (1.0 + 0x1p-40);
		}
		rel = u.n_drop * out->prune * wide + em1 * (1.0 + 0x1p-30) +
			(2.0 * s->m->n_sv + 64.0 + EXP8_REL + 2.0 * u.n_reshift) * U;

		out->lam = hsum8p(&u.lam) * scale;
		out->abs = hsum8p(&u.abs) * scale;
		/*
		 * dropped terms, both codes' rounding and the rescalings' (the
		 * factor and the product), exp8p's error (relative, and absolute
		 * for the exponents below the shift), kernel.c's exp floor and
		 * this one's (values below exp(-700) of the shift's term)
		 */
		out->lam_err = out->abs * rel +
			s->abs_alpha * (2e-303 + scale * (EXP8_ABS * U + 1e-300));
	}
	out->p_ok = false;
	out->n_drop = u.n_drop;
	out->n_kept = u.n_kept;
	out->dsum = u.dsum;
}

__attribute__((noinline)) void
svc_scorer_pass(SvcScorer *s, const double *x, SvcScorePass *out)
{
	pass_any(s, x, out, true);
}

/*
 * Not inlined: svc_decision's f and svc_predict's (and svc_assign's) come
 * from here, and one body computes them the same way to the bit.
 */
__attribute__((noinline)) void
svc_scorer_pass_sum(SvcScorer *s, const double *x, SvcScorePass *out)
{
	pass_any(s, x, out, false);
}

/* ---------- decision ---------- */

double
svc_scorer_decision(SvcScorer *s, const double *xs)
{
	double		bound;

	return svc_scorer_decision_bound(s, xs, &bound);
}

double
svc_scorer_decision_bound(SvcScorer *s, const double *xs, double *bound)
{
	SvcScorePass		ps;
	double		f;

	*bound = 0.0;
	if (!svc_scorer_row_in_range(s, xs))
		return svc_model_decision_scaled(s->m, xs);
	svc_scorer_pass_sum(s, xs, &ps);
	f = svc_scorer_decide(s, xs, &ps);
	if (f == ps.lam - s->m->offset)
		*bound = ps.lam_err;
	return f;
}

double
svc_scorer_sum_bound(SvcScorer *s, const double *xs, double *bound)
{
	SvcScorePass		ps;

	if (!svc_scorer_row_in_range(s, xs))
	{
		*bound = HUGE_VAL;
		return 0.0;
	}
	svc_scorer_pass_sum(s, xs, &ps);
	*bound = ps.lam_err;
	return ps.lam;
}
