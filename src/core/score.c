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
#include "vec8.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GRP		4				/* blocks per group, bounded by a ball */
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
split(const SvcModel *m, int32_t *perm, KeyIdx *tmp, int32_t lo, int32_t hi)
{
	int32_t		d = m->dims;
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
			double		v = m->sv[(size_t) perm[k] * d + j];

			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
		}
		if (mx - mn > spread)
		{
			spread = mx - mn;
			best = j;
		}
	}
	for (int32_t k = lo; k < hi; k++)
	{
		tmp[k - lo].key = m->sv[(size_t) perm[k] * d + best];
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
	split(m, perm, tmp, lo, mid);
	split(m, perm, tmp, mid, hi);
}

/* ---------- wide rows: distances from float dot products ---------- */

#define WIDE_SLOTS	SVC_WIDE_SLOTS	/* slots of one float group: 4 vectors of 16 */
#define WIDE_RUN	16			/* coordinates summed in float, then in double */
#define WIDE_MAX_COORD 0x1p60	/* rows and support vectors beyond it: double */
#define WIDE_MAX_ETA 0x1p-10	/* a row whose exponents' bound passes it: double */

typedef float f16 __attribute__((vector_size(64)));
#define F16_LO(a)	__builtin_shufflevector(a, a, 0, 1, 2, 3, 4, 5, 6, 7)
#define F16_HI(a)	__builtin_shufflevector(a, a, 8, 9, 10, 11, 12, 13, 14, 15)

/*
 * The slots as floats, 64 to a group, coordinate by coordinate within it
 * ([group][j][64], padding 0), with their squared norms in double.
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
		float	   *g = s->sf + t / WIDE_SLOTS * WIDE_SLOTS * d + t % WIDE_SLOTS;
		const double *blk = s->st + t / BLK * BLK * d + t % BLK;
		double		nrm = 0.0;

		for (int32_t j = 0; j < d; j++)
		{
			float		v = (float) blk[(size_t) j * BLK];

			g[(size_t) j * WIDE_SLOTS] = v;
			nrm += (double) v * (double) v;
		}
		s->sfnorm[t] = nrm;
		if (t < (size_t) s->m->n_sv)
			s->sf_norm = fmax(s->sf_norm, sqrt(nrm) * (1.0 + 0x1p-40));
	}
	return SVC_OK;
}

/*
 * Every slot's squared distance from x into s->d2, as ||x'||^2 + ||s'||^2
 * - 2 x'.s' with x' and s' the floats nearest x and s: float products
 * summed WIDE_RUN coordinates at a time, those sums in double.  Returns a
 * bound on each distance's error against the exact ||x - s||^2, or -1
 * where a coordinate of x is past WIDE_MAX_COORD (the caller then takes
 * the double distances).
 *
 * With u = 2^-24 and v = 2^-53: each run of WIDE_RUN float multiply-adds
 * is within gamma_16 = 16u / (1 - 16u) of its sum of |x'_j s'_j|, in any
 * order; the d / 16 runs summed in double, the norms' d terms and the two
 * last operations add (2d + 1) v of (||x'|| + ||s'||)^2.  Rounding to
 * float moves x and s by at most rho = u (||x|| + ||s||) + 2d 2^-149
 * (subnormal floats), so the exact distances differ by at most
 * 2 rho (||x|| + ||s||) + rho^2.  Clamping at 0 only comes nearer.
 * The bound grows with the norms, not the distances: a row far from the
 * origin for its distances to the support vectors gets -1 as well.
 */
static double
wide_distances(SvcScorer *s, const double *x)
{
	const double u = 0x1p-24,
				v = 0x1p-53;
	int32_t		d = s->dims;
	float	   *restrict xf = s->xf;
	double	   *restrict d2 = s->d2;
	double		xx = 0.0,
				xn = 0.0,
				e;

	for (int32_t j = 0; j < d; j++)
	{
		if (!(fabs(x[j]) <= WIDE_MAX_COORD))
			return -1.0;
		xf[j] = (float) x[j];
		xx += (double) xf[j] * (double) xf[j];
		xn += x[j] * x[j];
	}
	{
		double		a = sqrt(xn) + s->sv_norm,
					ah = sqrt(xx) + s->sf_norm,
					rho = u * a + 2.0 * d * 0x1p-149;

		e = ((2.0 * d + 1.0) * v + WIDE_RUN * u / (1.0 - WIDE_RUN * u)) * ah * ah +
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
	for (int32_t gq = 0; gq < s->n_wide; gq++)
	{
		const float *g = s->sf + (size_t) gq * WIDE_SLOTS * d;
		const double *nrm = s->sfnorm + (size_t) gq * WIDE_SLOTS;
		v8			acc[8] = {{0}};

		for (int32_t j0 = 0; j0 < d; j0 += WIDE_RUN)
		{
			int32_t		j1 = j0 + WIDE_RUN < d ? j0 + WIDE_RUN : d;
			f16			a0 = {0},
						a1 = {0},
						a2 = {0},
						a3 = {0};

			for (int32_t j = j0; j < j1; j++)
			{
				const float *gj = g + (size_t) j * WIDE_SLOTS;
				float		xj = xf[j];
				f16			l0,
							l1,
							l2,
							l3;

				memcpy(&l0, gj, sizeof(l0));
				memcpy(&l1, gj + 16, sizeof(l1));
				memcpy(&l2, gj + 32, sizeof(l2));
				memcpy(&l3, gj + 48, sizeof(l3));
				a0 += l0 * xj;
				a1 += l1 * xj;
				a2 += l2 * xj;
				a3 += l3 * xj;
			}
			/*
			 * each run's float sums into the double ones, by halves (a
			 * shuffle, not a copy through memory: that kept the
			 * accumulators of the loop above on the stack)
			 */
			acc[0] += __builtin_convertvector(F16_LO(a0), v8);
			acc[1] += __builtin_convertvector(F16_HI(a0), v8);
			acc[2] += __builtin_convertvector(F16_LO(a1), v8);
			acc[3] += __builtin_convertvector(F16_HI(a1), v8);
			acc[4] += __builtin_convertvector(F16_LO(a2), v8);
			acc[5] += __builtin_convertvector(F16_HI(a2), v8);
			acc[6] += __builtin_convertvector(F16_LO(a3), v8);
			acc[7] += __builtin_convertvector(F16_HI(a3), v8);
		}
		for (int q = 0; q < 8; q++)
		{
			v8			dd = xx + load8(nrm + q * BLK) - 2.0 * acc[q];

			for (int k = 0; k < BLK; k++)
				dd[k] = dd[k] > 0.0 ? dd[k] : 0.0;
			store8p(d2 + (size_t) gq * WIDE_SLOTS + q * BLK, &dd);
		}
	}
	return e;
}

SvcStatus
svc_scorer_init(const SvcEnv *env, const SvcModel *m, SvcScorer *s, SvcError *err)
{
	int32_t		n = m->n_sv,
				d = m->dims;
	int32_t    *perm = NULL;
	KeyIdx	   *tmp = NULL;
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
	split(m, perm, tmp, 0, n);

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
	s->pacc = svc_alloc(env, sizeof(double) * BLK * (size_t) d, err);
	if (!s->kx || !s->pacc || !s->aabs || !s->st || !s->alpha || !s->width || !s->lnref || !s->d2 ||
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
		s->ggmin[g] = gmin;
	}
	svc_free(env, perm);
	svc_free(env, tmp);
	return SVC_OK;

fail:
	svc_free(env, perm);
	svc_free(env, tmp);
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
	svc_free(env, s->bmax);
	svc_free(env, s->kept);
	svc_free(env, s->gcentre);
	svc_free(env, s->gradius);
	svc_free(env, s->glnmass);
	svc_free(env, s->ggmin);
	svc_free(env, s->gub);
	svc_free(env, s->gdist);
	svc_free(env, s->kx);
	svc_free(env, s->pacc);
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
static inline int
group_distances(const SvcScorer *s, const double *x, int32_t g, v8 *acc)
{
	int32_t		d = s->dims,
				b0 = g * GRP,
				nq = s->n_blk - b0 < GRP ? s->n_blk - b0 : GRP;
	const double *blk = s->st + (size_t) b0 * BLK * d;

	if (s->wide_on)
	{
		/* this pass's float distances (wide_distances) */
		for (int q = 0; q < nq; q++)
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
		   bool recorded)
{
	const double *width = s->width,
			   *lnref = s->lnref;
	v8			vref,
				vtop;
	double		top,
				cut;
	int			nq = group_distances(s, x, g, acc);

	for (int k = 0; k < BLK; k++)
		vref[k] = vtop[k] = -DBL_MAX;
	for (int q = 0; q < nq; q++)
	{
		int32_t		b = g * GRP + q;
		v8			r;

		e[q] = -load8(width + (size_t) b * BLK) * acc[q];
		r = e[q] + load8(lnref + (size_t) b * BLK);
		vmax8p(&vref, &r);
		vmax8p(&vtop, &e[q]);
	}
	top = hmax8p(&vtop);
	cut = hmax8p(&vref) - PRUNE_LN;
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
take_group(SvcScorer *s, const double *x, int32_t g, Sums *u)
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
	int			nq = group_head(s, x, g, u, acc, e, true);

	cut = u->cut;
	shift = u->shift;
	for (int q = 0; q < nq; q++)
	{
		store8p(d2 + (size_t) (g * GRP + q) * BLK, &acc[q]);
		bm[q] = hmax8p(&e[q]);
	}
	for (int q = 0; q < nq; q++)
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
	u->n_drop += nq - nk;
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
sum_group(SvcScorer *s, const double *x, int32_t g, Sums *u)
{
	const double *alpha = s->alpha,
			   *aabs = s->aabs;
	v8			acc[GRP],
				e[GRP],
				lam,
				abs;
	int			nq = group_head(s, x, g, u, acc, e, false);

	lam = u->lam;
	abs = u->abs;
	if (EXP_BY_GROUP)
	{
		for (int q = 0; q < nq; q++)
		{
			e[q] -= u->shift;
			for (int t = 0; t < BLK; t++)
				e[q][t] = e[q][t] > EXP_FLOOR ? e[q][t] : EXP_FLOOR;
		}
		exp_blocks(e, nq);
	}
	for (int q = 0; q < nq; q++)
	{
		int32_t		b = g * GRP + q;
		v8			kv = e[q];

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
	u->n_kept += nq;
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

	memset(&u, 0, sizeof(u));
	u.shift = -DBL_MAX;
	u.cut = -DBL_MAX;
	out->d2_err = 0.0;
	out->eta = 0.0;
	s->wide_on = false;
	if (s->n_wide > 0)
	{
		double		e = wide_distances(s, x);

		if (e >= 0.0)
		{
			s->wide_on = true;
			out->d2_err = e;
			out->eta = s->gmax * e;
		}
	}

	/* each group's bound, eight groups at a time */
	for (int32_t c = 0; c < ng; c += BLK)
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
		int32_t		gslots = (ng + BLK - 1) / BLK * BLK;

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

	if (record)
		take_group(s, x, first, &u);
	else
		sum_group(s, x, first, &u);
	for (int32_t g = 0; g < ng; g++)
	{
		if (g == first)
			continue;
		if (s->gub[g] <= u.cut)
		{
			if (record)
				for (int32_t b = g * GRP; b < nb && b < (g + 1) * GRP; b++)
					s->bmax[b] = -DBL_MAX;	/* skipped */
			u.n_drop++;
			u.dsum += s->gdist[g] + s->gradius[g];
			continue;
		}
		if (record)
			take_group(s, x, g, &u);
		else
			sum_group(s, x, g, &u);
	}

	{
		double		scale = exp(u.shift);
		/*
		 * wide rows: every exponent is within eta of the exact one, so
		 * each kept term within a factor exp(eta) and the dropped ones'
		 * share of the largest within exp(2 eta) of 2^-50
		 */
		double		wide = exp(2.0 * out->eta);
		double		rel = u.n_drop * ldexp(1.0, -50) * wide + expm1(out->eta) * (1.0 + 0x1p-30) +
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
