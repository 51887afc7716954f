/*
 * incremental.c - exact incremental and decremental learning of smo.h's sphere
 *
 * Notation (see incremental.h and doc/incremental.md).  h_i = (K alpha)_i
 * + b on every kept row, b = -offset; KKT with sum alpha = t: h = 0 on S
 * (0 < alpha < C), h <= 0 on E (alpha = C), h >= 0 on R (alpha = 0).
 *
 * A drive moves one row c (the candidate, outside the sets while it
 * moves) by u per unit of a step s (u = +1 adds, -1 removes) and the
 * total t by v, while the margin rows and b move so that h stays 0 on S
 * and sum alpha = t:
 *   [0  1'  ] [db      ]   [ v - u      ]
 *   [1  K_SS] [dalpha_S] = [ -u K_Sc    ] s,
 * so [db; dalpha_S] = beta s with beta = Q (rhs), Q the inverse of the
 * bordered matrix, and every other row's h moves by
 *   gam_i s = (beta_0 + K_iS beta_S + u K_ic) s.
 * The step is the largest s before the first set change: a margin alpha
 * reaches 0 (to R) or C (to E), an E or R row's h reaches 0 (to S), the
 * candidate's h reaches 0 or its alpha C (adding) or 0 (removing), or t
 * its target.  With S empty the system has no solution for v != u: b alone
 * moves (up when someone must give alpha, down when someone must take it)
 * until a row of E or R reaches h = 0 and enters S.
 *
 * Q is updated by rank one as rows enter and leave S, and computed afresh
 * from K_SS (Cholesky) every REFACTOR_EVERY changes; h and b are
 * recomputed from the rows every RESYNC_EVERY added rows, so rounding does
 * not pile up over a long stream.
 */
#include "incremental.h"
#include "kernel.h"

#include <math.h>
#include <string.h>

enum
{
	SET_FREE = 0,				/* no row in the slot */
	SET_S,						/* margin: 0 < alpha < C, h = 0 */
	SET_E,						/* error: alpha = C, h <= 0 */
	SET_R,						/* rest: alpha = 0, h >= 0 */
	SET_Z,						/* C = 0: alpha = 0 whatever h */
	SET_CAND					/* the row a drive moves */
};

/* a direction smaller than this moves nothing (duplicate rows) */
#define DIR_EPS 1e-12
/* the Schur complement of a row entering S: below it, the row is in S's span */
#define KAPPA_MIN 1e-10
/* a margin row this close to the candidate (kernel value) is its twin */
#define TWIN_EPS 1e-9
#define CHECK_EVERY 64
#define REFACTOR_EVERY 1024
/* the residual of M Q = I on Q's first column beyond which Q is refactored */
#define RESIDUAL_MAX 1e-11
#define RESYNC_EVERY 256
/* sums of bounds within this (relative) of t are t */
#define CSUM_EPS 1e-12

typedef enum Event
{
	EV_NONE = 0,
	EV_LEAVE_E,					/* a margin alpha reached C */
	EV_LEAVE_R,					/* a margin alpha reached 0 */
	EV_JOIN,					/* an E or R row's h reached 0 */
	EV_CAND_H,					/* the candidate's h reached 0 */
	EV_CAND_C,					/* the candidate's alpha reached C */
	EV_CAND_ZERO,				/* the candidate's alpha reached 0 */
	EV_MASS						/* t reached its target */
} Event;

struct SvcIncr
{
	const SvcEnv *env;
	int32_t		d;
	double		gamma;
	int64_t		cap;
	size_t		memory;			/* 0: no limit */
	size_t		used;			/* bytes held */

	double	   *x;				/* cap * d */
	double	   *alpha;
	double	   *h;
	double	   *c;
	uint8_t    *set;
	uint8_t    *blocked;		/* rows refused by S during this drive */
	int64_t    *spos;			/* position in S, or -1 */
	int64_t    *free_slots;
	int64_t		n_free;
	int64_t		hi;				/* slots 0 .. hi - 1 have been used */
	int64_t		rows;
	double		b;
	double		t;				/* sum alpha */
	double		csum;			/* sum C over kept rows */

	int64_t		m;				/* |S| */
	int64_t    *S;				/* cap slots */
	double	  **col;			/* column of each margin row over the slots */
	double	  **pool;			/* spare columns */
	int64_t		n_pool;
	double	   *Q;				/* (m + 1)^2 inverse, stride qcap */
	int64_t		qcap;

	double	   *kc;				/* the candidate's column */
	double	   *gam;			/* dh per unit step */
	double	   *acc;			/* scratch: K alpha */
	double	   *beta;			/* qcap */
	double	   *rhs;			/* qcap */
	int64_t		changes;		/* S changes since Q was computed afresh */
	int64_t		since_resync;
	double		objective;

	SvcIncrStats st;
};

#define QAT(s, a, b) ((s)->Q[(size_t) (a) * (size_t) (s)->qcap + (size_t) (b)])

size_t
svc_incr_memory(int64_t capacity, int32_t d)
{
	size_t		per,
				total;

	if (capacity < 1 || d < 1 || d > SVC_MAX_DIMS || (uint64_t) capacity > SIZE_MAX / 64)
		return SIZE_MAX;
	/* x, then alpha h c kc gam acc, spos S free_slots col pool, set blocked */
	per = sizeof(double) * ((size_t) d + 6) + sizeof(int64_t) * 3 +
		sizeof(double *) * 2 + 2;
	if (!svc_size_mul((size_t) capacity, per, &total) || total > SIZE_MAX - 4096)
		return SIZE_MAX;
	/* Q and beta, rhs for a small S; they grow with it */
	return total + 4096;
}

static void *
take(SvcIncr *s, size_t bytes, SvcError *err)
{
	void	   *p;

	if (s->memory > 0 && (bytes > s->memory || s->used > s->memory - bytes))
	{
		svc_fail(err, SVC_ERR_LIMIT,
				 "the solver \"incremental\" needs more than its memory budget of %zu kB",
				 s->memory / 1024);
		svc_error_detail(err, "Its margin set holds %lld rows, each with a kernel column of "
						 "%lld values.", (long long) s->m, (long long) s->cap);
		svc_error_hint(err, "Raise \"cache_mb\", lower \"sample\", or use the solver \"smo\".");
		return NULL;
	}
	p = svc_alloc(s->env, bytes, err);
	if (p != NULL)
		s->used += bytes;
	return p;
}

static void
give(SvcIncr *s, void *p, size_t bytes)
{
	if (p == NULL)
		return;
	svc_free(s->env, p);
	s->used -= bytes;
}

SvcStatus
svc_incr_create(const SvcEnv *env, const SvcIncrParams *p, SvcIncr **out, SvcError *err)
{
	SvcIncr    *s;
	size_t		need,
				vec,
				q0 = 16;

	*out = NULL;
	if (p->d < 1 || p->d > SVC_MAX_DIMS)
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "dimension %d is out of range", (int) p->d);
	if (!(p->gamma > 0) || !isfinite(p->gamma))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "gamma must be finite and positive");
	need = svc_incr_memory(p->capacity, p->d);
	if (p->capacity < 1 || need == SIZE_MAX)
		return svc_fail(err, SVC_ERR_LIMIT, "too many rows for the solver \"incremental\": %lld",
						(long long) p->capacity);
	if (p->memory > 0 && need > p->memory)
	{
		svc_fail(err, SVC_ERR_LIMIT,
				 "the solver \"incremental\" needs %zu kB for %lld rows, more than its memory budget of %zu kB",
				 (need + 1023) / 1024, (long long) p->capacity, p->memory / 1024);
		svc_error_detail(err, "It needs about %zu bytes per row up front, and a kernel column "
						 "of 8 bytes per row for each row on the margin.",
						 (size_t) ((need + (size_t) p->capacity - 1) / (size_t) p->capacity));
		svc_error_hint(err, "Lower \"sample\", raise \"cache_mb\", or use the budgeted "
					   "solver \"bsgd\".");
		return SVC_ERR_LIMIT;
	}
	s = svc_alloc0(env, sizeof(SvcIncr), err);
	if (s == NULL)
		return SVC_ERR_NOMEM;
	s->env = env;
	s->d = p->d;
	s->gamma = p->gamma;
	s->cap = p->capacity;
	s->memory = p->memory;
	vec = sizeof(double) * (size_t) p->capacity;
	s->qcap = (int64_t) q0;
	if ((s->x = take(s, vec * (size_t) p->d, err)) == NULL ||
		(s->alpha = take(s, vec, err)) == NULL ||
		(s->h = take(s, vec, err)) == NULL ||
		(s->c = take(s, vec, err)) == NULL ||
		(s->kc = take(s, vec, err)) == NULL ||
		(s->gam = take(s, vec, err)) == NULL ||
		(s->acc = take(s, vec, err)) == NULL ||
		(s->spos = take(s, vec, err)) == NULL ||
		(s->S = take(s, vec, err)) == NULL ||
		(s->free_slots = take(s, vec, err)) == NULL ||
		(s->col = take(s, vec, err)) == NULL ||
		(s->pool = take(s, vec, err)) == NULL ||
		(s->set = take(s, (size_t) p->capacity, err)) == NULL ||
		(s->blocked = take(s, (size_t) p->capacity, err)) == NULL ||
		(s->Q = take(s, sizeof(double) * q0 * q0, err)) == NULL ||
		(s->beta = take(s, sizeof(double) * q0, err)) == NULL ||
		(s->rhs = take(s, sizeof(double) * q0, err)) == NULL)
	{
		SvcStatus	st = err->status;

		svc_incr_free(s);
		return st;
	}
	memset(s->set, SET_FREE, (size_t) p->capacity);
	memset(s->blocked, 0, (size_t) p->capacity);
	*out = s;
	return SVC_OK;
}

void
svc_incr_free(SvcIncr *s)
{
	const SvcEnv *env;

	if (s == NULL)
		return;
	env = s->env;
	for (int64_t k = 0; k < s->m && s->col != NULL; k++)
		svc_free(env, s->col[k]);
	for (int64_t k = 0; k < s->n_pool; k++)
		svc_free(env, s->pool[k]);
	svc_free(env, s->x);
	svc_free(env, s->alpha);
	svc_free(env, s->h);
	svc_free(env, s->c);
	svc_free(env, s->kc);
	svc_free(env, s->gam);
	svc_free(env, s->acc);
	svc_free(env, s->spos);
	svc_free(env, s->S);
	svc_free(env, s->free_slots);
	svc_free(env, s->col);
	svc_free(env, s->pool);
	svc_free(env, s->set);
	svc_free(env, s->blocked);
	svc_free(env, s->Q);
	svc_free(env, s->beta);
	svc_free(env, s->rhs);
	svc_free(env, s);
}

/* A column buffer of cap doubles: a spare one, else a new one. */
static double *
new_column(SvcIncr *s, SvcError *err)
{
	if (s->n_pool > 0)
		return s->pool[--s->n_pool];
	return take(s, sizeof(double) * (size_t) s->cap, err);
}

static void
kernel_column(const SvcIncr *s, int64_t j, double *out)
{
	svc_kernel_column(s->x, s->d, j, s->gamma, NULL, s->hi, out);
	out[j] = 1.0;
}

/* Room in Q, beta and rhs for a margin set of m rows. */
static SvcStatus
grow_q(SvcIncr *s, int64_t m, SvcError *err)
{
	int64_t		want = s->qcap;
	double	   *q,
			   *beta,
			   *rhs;

	if (m + 1 <= s->qcap)
		return SVC_OK;
	while (want < m + 1)
		want *= 2;
	if (want > s->cap + 1)
		want = s->cap + 1;
	q = take(s, sizeof(double) * (size_t) want * (size_t) want, err);
	if (q == NULL)
		return err->status;
	beta = take(s, sizeof(double) * (size_t) want, err);
	if (beta == NULL)
	{
		give(s, q, sizeof(double) * (size_t) want * (size_t) want);
		return err->status;
	}
	rhs = take(s, sizeof(double) * (size_t) want, err);
	if (rhs == NULL)
	{
		give(s, q, sizeof(double) * (size_t) want * (size_t) want);
		give(s, beta, sizeof(double) * (size_t) want);
		return err->status;
	}
	for (int64_t a = 0; a <= s->m; a++)
		memcpy(q + (size_t) a * (size_t) want, s->Q + (size_t) a * (size_t) s->qcap,
			   sizeof(double) * (size_t) (s->m + 1));
	give(s, s->Q, sizeof(double) * (size_t) s->qcap * (size_t) s->qcap);
	give(s, s->beta, sizeof(double) * (size_t) s->qcap);
	give(s, s->rhs, sizeof(double) * (size_t) s->qcap);
	s->Q = q;
	s->beta = beta;
	s->rhs = rhs;
	s->qcap = want;
	return SVC_OK;
}

/*
 * Q afresh from K_SS: with K_SS = L L', u = K_SS^-1 1 and sigma = 1'u,
 *   Q = [[-1/sigma, u'/sigma], [u/sigma, K^-1 - u u'/sigma]].
 * When K_SS is not safely positive definite the updated Q stays.
 */
static SvcStatus
refactor(SvcIncr *s, SvcError *err)
{
	int64_t		m = s->m;
	size_t		mm = (size_t) m * (size_t) m;
	double	   *L,
			   *inv;
	double		sigma = 0.0;
	bool		ok = true;

	s->changes = 0;
	if (m == 0)
		return SVC_OK;
	L = take(s, sizeof(double) * mm, err);
	if (L == NULL)
		return err->status;
	inv = take(s, sizeof(double) * mm, err);
	if (inv == NULL)
	{
		give(s, L, sizeof(double) * mm);
		return err->status;
	}
	/* Cholesky, lower triangle of L */
	for (int64_t i = 0; i < m && ok; i++)
	{
		for (int64_t j = 0; j <= i; j++)
		{
			double		v = s->col[j][s->S[i]];

			for (int64_t k = 0; k < j; k++)
				v -= L[i * m + k] * L[j * m + k];
			if (i == j)
			{
				if (!(v > 1e-14))
				{
					ok = false;
					break;
				}
				L[i * m + i] = sqrt(v);
			}
			else
				L[i * m + j] = v / L[j * m + j];
		}
	}
	if (ok)
	{
		/*
		 * inv = K^-1 by whole rows, so that the loops run along them: L Y
		 * = I (Y lower triangular), then L' Z = Y; Z's column k is the
		 * solve for e_k, into inv's row k (inv[k m + i] = Z[i m + k])
		 */
		double	   *restrict Z = inv;

		for (int64_t i = 0; i < m; i++)
		{
			double	   *restrict zi = Z + i * m;

			for (int64_t k = 0; k < m; k++)
				zi[k] = i == k ? 1.0 : 0.0;
			for (int64_t j = 0; j < i; j++)
			{
				const double *restrict zj = Z + j * m;
				double		lij = L[i * m + j];

				for (int64_t k = 0; k <= j; k++)
					zi[k] -= lij * zj[k];
			}
			for (int64_t k = 0; k <= i; k++)
				zi[k] /= L[i * m + i];
		}
		for (int64_t i = m - 1; i >= 0; i--)
		{
			double	   *restrict zi = Z + i * m;

			for (int64_t j = i + 1; j < m; j++)
			{
				const double *restrict zj = Z + j * m;
				double		lji = L[j * m + i];

				for (int64_t k = 0; k < m; k++)
					zi[k] -= lji * zj[k];
			}
			for (int64_t k = 0; k < m; k++)
				zi[k] /= L[i * m + i];
		}
		/* u = K^-1 1 into beta[1..m] */
		for (int64_t i = 0; i < m; i++)
		{
			double		v = 0.0;

			for (int64_t j = 0; j < m; j++)
				v += Z[i * m + j];
			s->beta[i + 1] = v;
			sigma += v;
		}
		if (sigma > 0 && isfinite(sigma))
		{
			QAT(s, 0, 0) = -1.0 / sigma;
			for (int64_t i = 0; i < m; i++)
			{
				QAT(s, 0, i + 1) = QAT(s, i + 1, 0) = s->beta[i + 1] / sigma;
				/* one triangle, mirrored: the rows of Q stand for its columns */
				for (int64_t j = 0; j <= i; j++)
					QAT(s, i + 1, j + 1) = QAT(s, j + 1, i + 1) = Z[j * m + i] -
						s->beta[i + 1] * s->beta[j + 1] / sigma;
			}
			s->st.refactors++;
		}
	}
	give(s, L, sizeof(double) * mm);
	give(s, inv, sizeof(double) * mm);
	return SVC_OK;
}

/*
 * The residual of M Q = I on Q's first column (the one b's moves use in
 * every step): 1' Q_S0 - 1 and Q_00 + K_SS Q_S0, O(|S|^2).
 */
static double
residual(const SvcIncr *s)
{
	double		worst,
				sum = 0.0;

	for (int64_t k = 0; k < s->m; k++)
		sum += QAT(s, k + 1, 0);
	worst = fabs(sum - 1.0);
	for (int64_t a = 0; a < s->m; a++)
	{
		double		v = QAT(s, 0, 0);

		for (int64_t k = 0; k < s->m; k++)
			v += s->col[k][s->S[a]] * QAT(s, k + 1, 0);
		worst = fmax(worst, fabs(v));
	}
	return worst;
}

/* After a change of S: Q afresh when its residual has grown, or now and then. */
static SvcStatus
note_change(SvcIncr *s, SvcError *err)
{
	++s->changes;
	if (s->changes >= REFACTOR_EVERY ||
		(s->changes % CHECK_EVERY == 0 && s->m > 0 && residual(s) > RESIDUAL_MAX))
		return refactor(s, err);
	return SVC_OK;
}

/*
 * Row j (h = 0) into S with its column q (owned by S from now on).  When
 * the Schur complement kappa of its border is not safely positive (the
 * row's feature vector is in the span of S's, a duplicate), it stays out:
 * *joined is false and q is not taken.
 */
static SvcStatus
join_s(SvcIncr *s, int64_t j, double *q, bool *joined, SvcError *err)
{
	int64_t		m = s->m;
	SvcStatus	st;

	*joined = false;
	if ((st = grow_q(s, m + 1, err)) != SVC_OK)
		return st;
	if (m == 0)
	{
		QAT(s, 0, 0) = -1.0;
		QAT(s, 0, 1) = QAT(s, 1, 0) = 1.0;
		QAT(s, 1, 1) = 0.0;
	}
	else
	{
		double		kappa = 1.0;

		/* beta = -Q w, w = [1; K_Sj], by Q's rows (symmetric) */
		double	   *restrict bt = s->beta;

		for (int64_t a = 0; a <= m; a++)
			bt[a] = QAT(s, 0, a);
		for (int64_t k = 0; k < m; k++)
		{
			const double *restrict qk = &QAT(s, k + 1, 0);
			double		wk = q[s->S[k]];

			for (int64_t a = 0; a <= m; a++)
				bt[a] += qk[a] * wk;
		}
		for (int64_t a = 0; a <= m; a++)
			bt[a] = -bt[a];
		kappa += s->beta[0];
		for (int64_t k = 0; k < m; k++)
			kappa += q[s->S[k]] * s->beta[k + 1];
		if (!(kappa > KAPPA_MIN))
			return SVC_OK;
		for (int64_t a = 0; a <= m; a++)
		{
			double	   *restrict qa = &QAT(s, a, 0);
			double		ba = bt[a];

			for (int64_t b = 0; b <= m; b++)
				qa[b] += ba * bt[b] / kappa;
			QAT(s, a, m + 1) = QAT(s, m + 1, a) = ba / kappa;
		}
		QAT(s, m + 1, m + 1) = 1.0 / kappa;
	}
	s->S[m] = j;
	s->col[m] = q;
	s->spos[j] = m;
	s->set[j] = SET_S;
	s->h[j] = 0.0;
	s->m = m + 1;
	*joined = true;
	return note_change(s, err);
}

/* The margin row at position k out of S (to set), its column spare. */
static SvcStatus
leave_s(SvcIncr *s, int64_t k, uint8_t set, SvcError *err)
{
	int64_t		m = s->m,
				p = k + 1,
				last = m;		/* Q index of the last margin row */
	int64_t		j = s->S[k];

	if (m >= 2)
	{
		double		qpp = QAT(s, p, p);

		for (int64_t a = 0; a <= m; a++)
		{
			double	   *restrict qa = &QAT(s, a, 0);
			const double *restrict qp = &QAT(s, p, 0);
			double		qap = qa[p];

			if (a == p || qap == 0.0)
				continue;

			/*
			 * b = p too (it is not read again: column p takes the last
			 * one's or leaves Q), so that the loop has no branch
			 */
			for (int64_t b = 0; b <= m; b++)
				qa[b] -= qap * qp[b] / qpp;
		}
		/* the last margin row into the hole */
		if (p != last)
		{
			for (int64_t a = 0; a <= m; a++)
				QAT(s, a, p) = QAT(s, a, last);
			for (int64_t b = 0; b <= m; b++)
				QAT(s, p, b) = QAT(s, last, b);
			QAT(s, p, p) = QAT(s, last, last);
		}
	}
	s->pool[s->n_pool++] = s->col[k];
	if (k != m - 1)
	{
		s->S[k] = s->S[m - 1];
		s->col[k] = s->col[m - 1];
		s->spos[s->S[k]] = k;
	}
	s->m = m - 1;
	s->spos[j] = -1;
	s->set[j] = set;
	return note_change(s, err);
}

/* Row j into S with a column computed now; see join_s. */
static SvcStatus
join_new(SvcIncr *s, int64_t j, SvcError *err)
{
	double	   *q = new_column(s, err);
	bool		joined;
	SvcStatus	st;

	if (q == NULL)
		return err->status;
	kernel_column(s, j, q);
	st = join_s(s, j, q, &joined, err);
	if (!joined)
	{
		s->pool[s->n_pool++] = q;
		if (st == SVC_OK)
			s->blocked[j] = 1;
	}
	return st;
}

/*
 * One drive: candidate cand (or -1) by u per unit step, t by v toward
 * target.  Ends with the candidate out of the sets' way: the caller
 * places it by *how (EV_CAND_H, EV_CAND_C, EV_CAND_ZERO, EV_MASS).
 */
static SvcStatus
drive(SvcIncr *s, int64_t cand, double u, double v, double target, Event *how,
	  SvcError *err)
{
	int64_t		max_steps = 100 * s->rows + 1000;
	int64_t		joined = -1;	/* the row that entered S at the last step */
	int64_t		prev_joined = -1;
	SvcStatus	st;

	memset(s->blocked, 0, (size_t) s->hi);
	for (int64_t iter = 0;; iter++)
	{
		double		best = INFINITY;
		Event		ev = EV_NONE;
		int64_t		who = -1;
		int64_t		m = s->m;

		if (iter % SVC_INCR_INTERRUPT_EVERY == SVC_INCR_INTERRUPT_EVERY - 1 &&
			svc_interrupted(s->env, err))
			return err->status;
		if (iter > max_steps)
			return svc_fail(err, SVC_ERR_INTERNAL,
							"the incremental path did not end after %lld steps",
							(long long) iter);
		s->st.steps++;
		if (m == 0)
		{
			/* b alone: up when someone must give alpha, down to take it */
			double		dir = v - u > 0 ? -1.0 : 1.0;

			for (int64_t i = 0; i < s->hi; i++)
			{
				double		lim;

				if (s->blocked[i])
					continue;
				if (dir > 0 && s->set[i] == SET_E)
					lim = fmax(0.0, -s->h[i]);
				else if (dir < 0 && s->set[i] == SET_R)
					lim = fmax(0.0, s->h[i]);
				else
					continue;
				if (lim < best)
				{
					best = lim;
					ev = EV_JOIN;
					who = i;
				}
			}
			if (cand >= 0 && u > 0 && dir > 0 && fmax(0.0, -s->h[cand]) < best)
			{
				best = fmax(0.0, -s->h[cand]);
				ev = EV_CAND_H;
				who = cand;
			}
			if (ev == EV_NONE)
			{
				/* nobody can take more: t is as large as the bounds allow */
				if (cand < 0 && v > 0)
				{
					*how = EV_MASS;
					return SVC_OK;
				}
				return svc_fail(err, SVC_ERR_INTERNAL,
								"the incremental path found no row to enter the margin");
			}
			s->b += dir * best;
			for (int64_t i = 0; i < s->hi; i++)
				if (s->set[i] != SET_FREE && s->set[i] != SET_S)
					s->h[i] += dir * best;
		}
		else
		{
			/* beta = Q rhs */
			s->rhs[0] = v - u;
			for (int64_t k = 0; k < m; k++)
				s->rhs[k + 1] = cand >= 0 ? -u * s->kc[s->S[k]] : 0.0;
			/* Q is symmetric: its rows, contiguous, in the order of the sums */
			{
				double	   *restrict bt = s->beta;

				for (int64_t a = 0; a <= m; a++)
					bt[a] = 0.0;
				for (int64_t k = 0; k <= m; k++)
				{
					const double *restrict qk = &QAT(s, k, 0);
					double		rk = s->rhs[k];

					for (int64_t a = 0; a <= m; a++)
						bt[a] += qk[a] * rk;
				}
			}
			/* gam = beta_0 + K_iS beta_S + u K_ic */
			for (int64_t i = 0; i < s->hi; i++)
				s->gam[i] = s->beta[0] + (cand >= 0 ? u * s->kc[i] : 0.0);
			/* four columns a pass: the columns, not gam, are the traffic */
			{
				double	   *restrict g = s->gam;
				int64_t		k = 0,
							hi = s->hi;

				for (; k + 4 <= m; k += 4)
				{
					const double *q0 = s->col[k],
							   *q1 = s->col[k + 1],
							   *q2 = s->col[k + 2],
							   *q3 = s->col[k + 3];
					double		b0 = s->beta[k + 1],
								b1 = s->beta[k + 2],
								b2 = s->beta[k + 3],
								b3 = s->beta[k + 4];

					for (int64_t i = 0; i < hi; i++)
						g[i] += b0 * q0[i] + b1 * q1[i] + b2 * q2[i] + b3 * q3[i];
				}
				for (; k < m; k++)
				{
					const double *q = s->col[k];
					double		bk = s->beta[k + 1];

					for (int64_t i = 0; i < hi; i++)
						g[i] += bk * q[i];
				}
			}
			for (int64_t k = 0; k < m; k++)
			{
				int64_t		j = s->S[k];
				double		bk = s->beta[k + 1],
							lim;

				if (bk > DIR_EPS)
				{
					lim = fmax(0.0, s->c[j] - s->alpha[j]) / bk;
					if (lim < best)
					{
						best = lim;
						ev = EV_LEAVE_E;
						who = k;
					}
				}
				else if (bk < -DIR_EPS)
				{
					lim = fmax(0.0, s->alpha[j]) / -bk;
					if (lim < best)
					{
						best = lim;
						ev = EV_LEAVE_R;
						who = k;
					}
				}
			}
			for (int64_t i = 0; i < s->hi; i++)
			{
				double		g = s->gam[i],
							lim;

				if (s->blocked[i])
					continue;
				if (s->set[i] == SET_E && g > DIR_EPS)
					lim = fmax(0.0, -s->h[i]) / g;
				else if (s->set[i] == SET_R && g < -DIR_EPS)
					lim = fmax(0.0, s->h[i]) / -g;
				else
					continue;
				if (lim < best)
				{
					best = lim;
					ev = EV_JOIN;
					who = i;
				}
			}
			if (cand >= 0 && u > 0)
			{
				double		g = s->gam[cand];

				if (g > DIR_EPS && fmax(0.0, -s->h[cand]) / g < best)
				{
					best = fmax(0.0, -s->h[cand]) / g;
					ev = EV_CAND_H;
				}
				if (fmax(0.0, s->c[cand] - s->alpha[cand]) < best)
				{
					best = fmax(0.0, s->c[cand] - s->alpha[cand]);
					ev = EV_CAND_C;
				}
			}
			else if (cand >= 0 && s->alpha[cand] < best)
			{
				best = s->alpha[cand];
				ev = EV_CAND_ZERO;
			}
			if (v != 0.0 && fabs(target - s->t) < best)
			{
				best = fabs(target - s->t);
				ev = EV_MASS;
			}
			if (ev == EV_NONE || !isfinite(best))
				return svc_fail(err, SVC_ERR_INTERNAL,
								"the incremental path has no bound on its step");
			/* move */
			s->b += s->beta[0] * best;
			for (int64_t k = 0; k < m; k++)
			{
				int64_t		j = s->S[k];

				s->alpha[j] = fmin(fmax(s->alpha[j] + s->beta[k + 1] * best, 0.0), s->c[j]);
			}
			for (int64_t i = 0; i < s->hi; i++)
				if (s->set[i] != SET_FREE && s->set[i] != SET_S)
					s->h[i] += s->gam[i] * best;
			if (cand >= 0)
				s->alpha[cand] = fmin(fmax(s->alpha[cand] + u * best, 0.0), s->c[cand]);
			s->t += v * best;
		}

		prev_joined = joined;
		joined = -1;
		switch (ev)
		{
			case EV_LEAVE_E:
			case EV_LEAVE_R:
				{
					int64_t		j = s->S[who];

					s->alpha[j] = ev == EV_LEAVE_E ? s->c[j] : 0.0;
					s->h[j] = 0.0;
					if ((st = leave_s(s, who, ev == EV_LEAVE_E ? SET_E : SET_R, err)) != SVC_OK)
						return st;

					/*
					 * Entering S, a row's alpha moves the way that keeps its
					 * h at 0 (beta_j = -gam_j / kappa), so leaving again at
					 * the next step without a move means both signs are
					 * rounding: its h does not move with this path (rows
					 * near-duplicate of margin rows).  It would join and
					 * leave for ever; it stays out for this drive, at its
					 * bound with h = 0, optimal there.
					 */
					if (best == 0.0 && j == prev_joined)
					{
						s->blocked[j] = 1;
						s->st.cycles++;
					}
					break;
				}
			case EV_JOIN:
				s->h[who] = 0.0;
				if ((st = join_new(s, who, err)) != SVC_OK)
					return st;
				joined = s->set[who] == SET_S ? who : -1;
				break;
			case EV_CAND_H:
				s->h[cand] = 0.0;
				*how = ev;
				return SVC_OK;
			case EV_CAND_C:
				s->alpha[cand] = s->c[cand];
				*how = ev;
				return SVC_OK;
			case EV_CAND_ZERO:
				s->alpha[cand] = 0.0;
				*how = ev;
				return SVC_OK;
			case EV_MASS:
				s->t = target;
				*how = ev;
				return SVC_OK;
			case EV_NONE:
				break;
		}
	}
}

/*
 * h and b afresh from the rows: K alpha over every row with alpha > 0,
 * b = -(the mean of K alpha over S), or with S empty the midpoint of the
 * bracket the bound rows leave (as smo.c's offset).  *viol gets the
 * largest KKT violation and the objective is recomputed.
 */
static SvcStatus
resync(SvcIncr *s, double *viol, SvcError *err)
{
	double		lo = -INFINITY,
				hi = INFINITY,
				sum_s = 0.0,
				worst = 0.0,
				quad = 0.0,
				asum = 0.0;
	int64_t		cols = 0;

	for (int64_t i = 0; i < s->hi; i++)
		s->acc[i] = 0.0;
	for (int64_t j = 0; j < s->hi; j++)
	{
		const double *q;

		if (s->set[j] == SET_FREE || !(s->alpha[j] > 0))
			continue;
		if (++cols % 64 == 0 && svc_interrupted(s->env, err))
			return err->status;
		if (s->spos[j] >= 0)
			q = s->col[s->spos[j]];
		else
		{
			kernel_column(s, j, s->gam);
			q = s->gam;
		}
		for (int64_t i = 0; i < s->hi; i++)
			s->acc[i] += s->alpha[j] * q[i];
	}
	for (int64_t i = 0; i < s->hi; i++)
	{
		switch (s->set[i])
		{
			case SET_S:
				sum_s += s->acc[i];
				break;
			case SET_E:
				lo = fmax(lo, s->acc[i]);
				break;
			case SET_R:
				hi = fmin(hi, s->acc[i]);
				break;
			default:
				break;
		}
		if (s->set[i] != SET_FREE)
		{
			quad += s->alpha[i] * s->acc[i];
			asum += s->alpha[i];
		}
	}
	if (s->m > 0)
		s->b = -sum_s / (double) s->m;
	else if (isfinite(hi) && isfinite(lo))
		s->b = -(lo + hi) / 2.0;
	else if (isfinite(lo))
		s->b = -lo;
	else if (isfinite(hi))
		s->b = -hi;
	for (int64_t i = 0; i < s->hi; i++)
	{
		double		h = s->acc[i] + s->b,
					a = s->alpha[i],
					ci = s->c[i],
					w = 0.0;

		switch (s->set[i])
		{
			case SET_S:
				w = fabs(h);
				h = 0.0;
				break;
			case SET_E:
				w = fmax(h, 0.0);
				break;
			case SET_R:
				w = fmax(-h, 0.0);
				break;
			case SET_FREE:
				continue;
			default:
				break;
		}
		w = fmax(w, fmax(-a, a - ci));
		worst = fmax(worst, w);
		s->h[i] = h;
	}
	worst = fmax(worst, fabs(asum - s->t));
	s->objective = quad - asum;
	s->since_resync = 0;
	if (viol != NULL)
		*viol = worst;
	return SVC_OK;
}

/*
 * Every row at its bound, the one feasible point when the bounds sum to
 * at most 1: S empty, t the sum, b at the top of its bracket.
 */
static SvcStatus
all_at_bound(SvcIncr *s, SvcError *err)
{
	while (s->m > 0)
	{
		SvcStatus	st = leave_s(s, s->m - 1, SET_E, err);

		if (st != SVC_OK)
			return st;
	}
	s->t = 0.0;
	for (int64_t i = 0; i < s->hi; i++)
	{
		if (s->set[i] == SET_FREE || s->set[i] == SET_Z)
			continue;
		s->alpha[i] = s->c[i];
		s->set[i] = SET_E;
		s->t += s->c[i];
	}
	return resync(s, NULL, err);
}

/*
 * The candidate into S with the column it brought (s->kc); a spare column
 * becomes the candidate column from now on.  When the candidate does not
 * join (in the span of S, see join_s), the spare goes back to the pool and
 * *joined is false.
 */
static SvcStatus
join_cand(SvcIncr *s, int64_t cand, bool *joined, SvcError *err)
{
	double	   *q = new_column(s, err);
	SvcStatus	st;

	*joined = false;
	if (q == NULL)
		return err->status;
	st = join_s(s, cand, s->kc, joined, err);
	if (*joined)
		s->kc = q;
	else
		s->pool[s->n_pool++] = q;
	return st;
}

/*
 * The candidate ended on the margin with 0 < alpha < C but in S's span:
 * a duplicate of a margin row (kernel 1 between them).  Two equal rows
 * count only by the sum of their alphas, so the twin takes the
 * candidate's alpha up to its bound (the candidate goes to R with h = 0);
 * past it the twin goes to E and the candidate takes its place in S with
 * the rest.  f and the sum of alpha stay as they are.
 */
static SvcStatus
place_twin(SvcIncr *s, int64_t cand, SvcError *err)
{
	int64_t		tw = -1;
	double		room;
	bool		joined;
	SvcStatus	st;

	for (int64_t k = 0; k < s->m; k++)
		if (tw < 0 || s->kc[s->S[k]] > s->kc[s->S[tw]])
			tw = k;
	if (tw < 0 || !(s->kc[s->S[tw]] >= 1.0 - TWIN_EPS))
		return svc_fail(err, SVC_ERR_INTERNAL,
						"a row on the margin duplicates the margin set");
	s->st.twins++;
	room = s->c[s->S[tw]] - s->alpha[s->S[tw]];
	if (s->alpha[cand] <= room)
	{
		s->alpha[s->S[tw]] += s->alpha[cand];
		s->alpha[cand] = 0.0;
		s->set[cand] = SET_R;
		return SVC_OK;
	}
	s->alpha[cand] -= room;
	s->alpha[s->S[tw]] = s->c[s->S[tw]];
	s->h[s->S[tw]] = 0.0;
	if ((st = leave_s(s, tw, SET_E, err)) != SVC_OK)
		return st;
	if ((st = join_cand(s, cand, &joined, err)) == SVC_OK && !joined)
		st = svc_fail(err, SVC_ERR_INTERNAL,
					  "a row on the margin duplicates the margin set");
	return st;
}

/* Place the candidate as its drive ended. */
static SvcStatus
place(SvcIncr *s, int64_t cand, Event how, SvcError *err)
{
	bool		joined;
	SvcStatus	st;

	if (how == EV_CAND_C)
	{
		s->set[cand] = SET_E;
		return SVC_OK;
	}
	if (!(s->alpha[cand] > 0))
	{
		s->alpha[cand] = 0.0;
		s->set[cand] = SET_R;
		return SVC_OK;
	}
	if (s->alpha[cand] >= s->c[cand])
	{
		s->alpha[cand] = s->c[cand];
		s->set[cand] = SET_E;
		return SVC_OK;
	}
	if ((st = join_cand(s, cand, &joined, err)) != SVC_OK || joined)
		return st;
	return place_twin(s, cand, err);
}

SvcStatus
svc_incr_add(SvcIncr *s, const double *x, double c, int64_t *slot_out, SvcError *err)
{
	int64_t		slot;
	double		sum = 0.0,
				old_t = s->t;
	SvcStatus	st;
	Event		how = EV_NONE;

	if (svc_interrupted(s->env, err))
		return err->status;
	if (!(c >= 0) || !isfinite(c))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "the bound of a row must be finite and not negative");
	if (svc_first_nonfinite(x, (size_t) s->d) >= 0)
		return svc_fail(err, SVC_ERR_INVALID_INPUT, "the row has a non-finite value");
	if (s->n_free > 0)
		slot = s->free_slots[--s->n_free];
	else if (s->hi < s->cap)
		slot = s->hi++;
	else
		return svc_fail(err, SVC_ERR_LIMIT, "the solver \"incremental\" keeps at most %lld rows",
						(long long) s->cap);
	memcpy(s->x + (size_t) slot * (size_t) s->d, x, sizeof(double) * (size_t) s->d);
	s->alpha[slot] = 0.0;
	s->c[slot] = c;
	s->spos[slot] = -1;
	kernel_column(s, slot, s->kc);
	for (int64_t k = 0; k < s->m; k++)
		s->col[k][slot] = s->kc[s->S[k]];
	for (int64_t j = 0; j < s->hi; j++)
		if (s->set[j] != SET_FREE && s->alpha[j] > 0)
			sum += s->alpha[j] * s->kc[j];
	s->h[slot] = sum + s->b;
	s->rows++;
	s->st.added++;
	s->csum += c;
	if (c == 0)
	{
		s->set[slot] = SET_Z;
		*slot_out = slot;
		return SVC_OK;
	}
	if (s->csum <= 1.0)
	{
		s->set[slot] = SET_E;
		st = all_at_bound(s, err);
	}
	else
	{
		s->set[slot] = SET_CAND;
		/* inside the sphere already (h >= 0): alpha stays 0 */
		if (s->h[slot] >= 0)
		{
			s->set[slot] = SET_R;
			st = SVC_OK;
		}
		else
		{
			st = drive(s, slot, 1.0, 0.0, 0.0, &how, err);
			if (st == SVC_OK)
				st = place(s, slot, how, err);
		}
		if (st == SVC_OK && old_t < 1.0)
		{
			/* the bounds now allow sum alpha = 1: the rest of the mass */
			st = drive(s, -1, 0.0, 1.0, 1.0, &how, err);
		}
	}
	if (st != SVC_OK)
		return st;
	*slot_out = slot;
	if (++s->since_resync >= RESYNC_EVERY)
		return resync(s, NULL, err);
	return SVC_OK;
}

SvcStatus
svc_incr_remove(SvcIncr *s, int64_t slot, SvcError *err)
{
	SvcStatus	st = SVC_OK;
	Event		how;

	if (svc_interrupted(s->env, err))
		return err->status;
	if (slot < 0 || slot >= s->hi || s->set[slot] == SET_FREE)
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "slot %lld holds no row",
						(long long) slot);
	s->csum -= s->c[slot];
	s->rows--;
	s->st.removed++;
	/*
	 * Within rounding of t counts as t: k rows of bound 1/k sum to 1 + 4e-16,
	 * and the path would look for a row to take a candidate's last 1e-13.
	 */
	if (s->csum <= s->t + CSUM_EPS * fmax(1.0, s->t))
	{
		/* the rest can no longer hold t: every row at its bound */
		if (s->spos[slot] >= 0 && (st = leave_s(s, s->spos[slot], SET_FREE, err)) != SVC_OK)
			return st;
		s->set[slot] = SET_FREE;
		s->alpha[slot] = 0.0;
		s->free_slots[s->n_free++] = slot;
		return all_at_bound(s, err);
	}
	if (s->spos[slot] >= 0 && (st = leave_s(s, s->spos[slot], SET_CAND, err)) != SVC_OK)
		return st;
	if (s->alpha[slot] > 0)
	{
		s->set[slot] = SET_CAND;
		/* the candidate's column: its own, over the kept rows */
		kernel_column(s, slot, s->kc);
		st = drive(s, slot, -1.0, 0.0, 0.0, &how, err);
		if (st != SVC_OK)
			return st;
	}
	s->set[slot] = SET_FREE;
	s->alpha[slot] = 0.0;
	s->h[slot] = 0.0;
	s->free_slots[s->n_free++] = slot;
	return SVC_OK;
}

SvcStatus
svc_incr_load(SvcIncr *s, const double *x, const double *alpha, const double *c, int64_t n,
			  double tol, int64_t *slots, double *viol_out, SvcError *err)
{
	double		viol;
	SvcStatus	st;

	*viol_out = NAN;
	if (s->rows != 0 || s->hi != 0)
		return svc_fail(err, SVC_ERR_INTERNAL, "the solver \"incremental\" loads only when empty");
	if (n < 1 || n > s->cap)
		return svc_fail(err, SVC_ERR_LIMIT, "the solver \"incremental\" keeps at most %lld rows",
						(long long) s->cap);
	for (int64_t i = 0; i < n; i++)
	{
		double		a = alpha[i],
					ci = c[i];

		if (!(ci >= 0) || !isfinite(ci) || !(a >= 0 && a <= ci))
			return svc_fail(err, SVC_ERR_INVALID_INPUT,
							"a stored alpha is outside its bound [0, %g]", ci);
		if (svc_first_nonfinite(x + (size_t) i * (size_t) s->d, (size_t) s->d) >= 0)
			return svc_fail(err, SVC_ERR_INVALID_INPUT, "the row has a non-finite value");
		memcpy(s->x + (size_t) i * (size_t) s->d, x + (size_t) i * (size_t) s->d,
			   sizeof(double) * (size_t) s->d);
		s->alpha[i] = a;
		s->c[i] = ci;
		s->spos[i] = -1;
		s->h[i] = 0.0;
		/* the sets by alpha; S's rows join below, with their columns */
		s->set[i] = ci == 0 ? SET_Z : a <= 0 ? SET_R : a >= ci ? SET_E : SET_CAND;
		s->csum += ci;
		slots[i] = i;
	}
	s->hi = n;
	s->rows = n;
	if (s->csum <= 1.0)
	{
		/* the one feasible point: every row at its bound */
		s->t = s->csum;
		st = all_at_bound(s, err);
	}
	else
	{
		s->t = 1.0;
		st = SVC_OK;
		for (int64_t i = 0; i < n && st == SVC_OK; i++)
		{
			if (s->set[i] != SET_CAND)
				continue;
			if ((i & 63) == 63 && svc_interrupted(s->env, err))
				return err->status;
			st = join_new(s, i, err);
			if (st == SVC_OK && s->set[i] != SET_S)
				return svc_fail(err, SVC_ERR_INVALID_INPUT,
								"a stored margin row duplicates the margin set");
		}
		/* Q afresh: the rank-one updates built it row by row */
		if (st == SVC_OK)
			st = refactor(s, err);
	}
	if (st != SVC_OK)
		return st;
	if (resync(s, &viol, err) != SVC_OK)
		return err->status;
	*viol_out = viol;
	if (!(viol <= tol))
	{
		svc_fail(err, SVC_ERR_INVALID_INPUT,
				 "the stored solution is not optimal: its KKT violation is %g, above %g",
				 viol, tol);
		return SVC_ERR_INVALID_INPUT;
	}
	return SVC_OK;
}

SvcStatus
svc_incr_set_bound(SvcIncr *s, int64_t slot, double c, int64_t *slot_out, SvcError *err)
{
	double	   *row;
	SvcStatus	st;

	if (slot < 0 || slot >= s->hi || s->set[slot] == SET_FREE)
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "slot %lld holds no row",
						(long long) slot);
	if (!(c >= 0) || !isfinite(c))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "the bound of a row must be finite and not negative");
	*slot_out = slot;
	if (c == s->c[slot])
		return SVC_OK;

	/*
	 * A row off its bound keeps every condition under any bound at or above
	 * its alpha: S's h = 0 and R's h >= 0 do not involve C.  So does the
	 * sum of bounds as long as it can still hold t.  A row at its bound (E,
	 * or Z), or one whose alpha the new bound cuts, must move: it leaves by
	 * an exact decrement and comes back with the new bound.
	 */
	if ((s->set[slot] == SET_S || s->set[slot] == SET_R) && s->alpha[slot] < c &&
		s->csum - s->c[slot] + c >= s->t)
	{
		s->csum += c - s->c[slot];
		s->c[slot] = c;
		return SVC_OK;
	}
	row = svc_alloc(s->env, sizeof(double) * (size_t) s->d, err);
	if (row == NULL)
		return SVC_ERR_NOMEM;
	memcpy(row, s->x + (size_t) slot * (size_t) s->d, sizeof(double) * (size_t) s->d);
	st = svc_incr_remove(s, slot, err);
	if (st == SVC_OK)
	{
		s->st.removed--;
		st = svc_incr_add(s, row, c, slot_out, err);
		if (st == SVC_OK)
			s->st.added--;
	}
	svc_free(s->env, row);
	return st;
}

double
svc_incr_bound(const SvcIncr *s, int64_t slot)
{
	if (slot < 0 || slot >= s->hi || s->set[slot] == SET_FREE)
		return 0.0;
	return s->c[slot];
}

int64_t
svc_incr_rows(const SvcIncr *s)
{
	return s->rows;
}

int64_t
svc_incr_slots(const SvcIncr *s)
{
	return s->hi;
}

double
svc_incr_kkt_violation(SvcIncr *s, SvcError *err)
{
	double		v;

	if (resync(s, &v, err) != SVC_OK)
		return NAN;
	return v;
}

double
svc_incr_objective(SvcIncr *s, SvcError *err)
{
	if (resync(s, NULL, err) != SVC_OK)
		return NAN;
	return s->objective;
}

double
svc_incr_decision(const SvcIncr *s, const double *x)
{
	double		sum = 0.0;

	for (int64_t j = 0; j < s->hi; j++)
		if (s->set[j] != SET_FREE && s->alpha[j] > 0)
			sum += s->alpha[j] *
				exp(-s->gamma * svc_sqdist(x, s->x + (size_t) j * (size_t) s->d, s->d));
	return sum + s->b;
}

double
svc_incr_alpha(const SvcIncr *s, int64_t slot)
{
	if (slot < 0 || slot >= s->hi || s->set[slot] == SET_FREE)
		return 0.0;
	return s->alpha[slot];
}

const double *
svc_incr_row(const SvcIncr *s, int64_t slot)
{
	if (slot < 0 || slot >= s->hi || s->set[slot] == SET_FREE)
		return NULL;
	return s->x + (size_t) slot * (size_t) s->d;
}

double
svc_incr_offset(const SvcIncr *s)
{
	return -s->b;
}

void
svc_incr_stats(const SvcIncr *s, SvcIncrStats *out)
{
	*out = s->st;
	out->n_margin = s->m;
	out->n_error = 0;
	for (int64_t i = 0; i < s->hi; i++)
		if (s->set[i] == SET_E)
			out->n_error++;
}
