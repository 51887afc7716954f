/*
 * kernel.c - RBF kernel sums
 *
 * The distance loops vectorise at -O2; the exp calls vectorise (glibc's
 * libmvec) only under the fast-math flags the Makefile gives this file
 * alone.  Results are then reproducible per build, not bit-identical
 * across builds, a trade measured to be worth it (doc/design-notes.md).
 */
#include "kernel.h"

#include <float.h>
#include <math.h>
#include <string.h>
#if defined(__AVX__) && defined(__FMA__)
#include <immintrin.h>
#endif

/*
 * The distance, inlined in this file's loops: the module is built with
 * -fPIC, so a call to the exported svc_sqdist is never inlined, and a call
 * per support vector costs a visible share of a fit.
 */
static inline double
sqdist(const double *a, const double *b, int32_t d)
{
	double		s = 0.0;

	for (int32_t j = 0; j < d; j++)
	{
		double		t = a[j] - b[j];

		s += t * t;
	}
	return s;
}

typedef double v4d __attribute__((vector_size(32)));

/*
 * The fast forms below (FMA_ORDER builds) run several sums side by side,
 * each in the order gcc gives its plain loop at 256-bit vectors with FMA
 * (sqdist above, cols_weighted_sums' plain loop): one 4-lane FMA chain
 * over the first n & ~3 terms, lanes reduced as (l1 + l3) + (l0 + l2),
 * the last n % 4 terms as its epilogue adds them.  A single chain runs at
 * the FMA's latency; several fill the pipeline; the bits are the same
 * (test_fixed_point_native compares kernel.c built both ways).
 */
#if defined(__AVX__) && defined(__FMA__) && !defined(SVC_PLAIN_SUMS)
#define FMA_ORDER 1
#define SQB 4					/* rows per batch of distances */

/* A chain's lanes and its tail terms (t[k] the k-th term's two factors) reduced. */
static inline double
lanes_finish(v4d acc, size_t rem, const double *ta, const double *tb)
{
	double		s02 = acc[0] + acc[2],
				s13 = acc[1] + acc[3],
				r;

	/* empty barriers: fast-math may not regroup these sums */
	__asm__("" : "+x"(s02), "+x"(s13));
	if (rem >= 2)
	{
		s02 = fma(ta[0], tb[0], s02);
		s13 = fma(ta[1], tb[1], s13);
	}
	r = s13 + s02;
	__asm__("" : "+x"(r));
	if (rem == 1)
		r = fma(ta[0], tb[0], r);
	else if (rem == 3)
		r = fma(ta[2], tb[2], r);
	return r;
}

/* out[k] = sqdist(rows[k], x, d) for SQB rows, each in sqdist's order. */
static inline void
sqdist_batch(const double *const *rows, const double *x, int32_t d, double *out)
{
	size_t		n4 = (size_t) d & ~(size_t) 3,
				rem = (size_t) d - n4;
	v4d			acc[SQB];

	for (int k = 0; k < SQB; k++)
		acc[k] = (v4d) {0.0, 0.0, 0.0, 0.0};
	for (size_t j = 0; j < n4; j += 4)
	{
		v4d			xv;

		memcpy(&xv, x + j, sizeof(xv));
		for (int k = 0; k < SQB; k++)
		{
			v4d			t;

			memcpy(&t, rows[k] + j, sizeof(t));
			t = t - xv;
			acc[k] = _mm256_fmadd_pd(t, t, acc[k]);
		}
	}
	for (int k = 0; k < SQB; k++)
	{
		double		t[3];

		for (size_t j = 0; j < rem; j++)
			t[j] = rows[k][n4 + j] - x[n4 + j];
		out[k] = lanes_finish(acc[k], rem, t, t);
	}
}

/*
 * One distance in the batches' form: in the extension's build the same
 * bits as sqdist, and in any build with FMA the same as svc_sqdist_many's
 * (the k-d tree mixes the two; under the sanitizers gcc vectorises sqdist
 * otherwise).
 */
static inline double
sqdist_one(const double *a, const double *b, int32_t d)
{
	size_t		n4 = (size_t) d & ~(size_t) 3,
				rem = (size_t) d - n4;
	v4d			acc = {0.0, 0.0, 0.0, 0.0};
	double		t3[3];

	for (size_t j = 0; j < n4; j += 4)
	{
		v4d			u,
					v;

		memcpy(&u, a + j, sizeof(u));
		memcpy(&v, b + j, sizeof(v));
		u = u - v;
		acc = _mm256_fmadd_pd(u, u, acc);
	}
	for (size_t j = 0; j < rem; j++)
		t3[j] = a[n4 + j] - b[n4 + j];
	return lanes_finish(acc, rem, t3, t3);
}
#else
#define sqdist_one sqdist
#endif

double
svc_sqdist(const double *a, const double *b, int32_t d)
{
	return sqdist_one(a, b, d);
}

void
svc_sqdist_many(const double *rows, const int32_t *idx, int64_t m, int32_t d,
				const double *x, double *out)
{
	int64_t		i = 0;

#ifdef FMA_ORDER
	for (; i + SQB <= m; i += SQB)
	{
		const double *r[SQB];

		for (int k = 0; k < SQB; k++)
			r[k] = rows + (size_t) (idx ? idx[i + k] : i + k) * (size_t) d;
		sqdist_batch(r, x, d, out + i);
	}
#endif
	if (idx != NULL)
		for (; i < m; i++)
			out[i] = sqdist_one(rows + (size_t) idx[i] * (size_t) d, x, d);
	else
		for (; i < m; i++)
			out[i] = sqdist_one(rows + (size_t) i * (size_t) d, x, d);
}

void
svc_rows_to_cols(const double *rows, int64_t n, int32_t d, double *cols)
{
	for (size_t i = 0; i < (size_t) n; i++)
		for (size_t j = 0; j < (size_t) d; j++)
			cols[j * (size_t) n + i] = rows[i * (size_t) d + j];
}

/* Block size: distances are computed into a small buffer, then exp'd. */
#define KBLOCK 64

/*
 * Exponents below about -708 underflow, and glibc's vector exp then hands
 * the whole vector to its scalar slow path: at the widths that separate
 * clusters most terms from other clusters do, which halved the speed of
 * scoring.  exp(-700) is 1e-304, as good as zero for every sum here.
 */
#define EXP_FLOOR (-700.0)

/* total plus alpha_i exp(buf_i) over a block, in order; buf overwritten. */
static inline double
block_total(double *buf, size_t m, const double *alpha, double total)
{
	for (size_t i = 0; i < m; i++)
		buf[i] = buf[i] > EXP_FLOOR ? buf[i] : EXP_FLOOR;
	for (size_t i = 0; i < m; i++)
		buf[i] = exp(buf[i]);
	for (size_t i = 0; i < m; i++)
		total += alpha[i] * buf[i];
	return total;
}

/*
 * out[i] = squared distance from x of the m rows stored by column (row i's
 * coordinate j at cols[j * stride + i]): coordinate by coordinate across
 * the rows, so each row's sum runs in sqdist's order and the loops
 * vectorise without a horizontal sum per row.
 */
#define CHUNK 32				/* rows whose sums stay in registers */

/*
 * CHUNK rows' sums in registers across all d coordinates: the plain loop
 * below loads and stores each row's partial sum at every coordinate,
 * which on wide rows cost as much as reading the rows.  Each row's sum is
 * the same expression, term by term in coordinate order, so the same bits.
 */
static inline void
cols_sqdist_chunk(const double *cols, size_t stride, int32_t d, const double *x,
				  double *out)
{
	v4d			acc[CHUNK / 4];

	for (int k = 0; k < CHUNK / 4; k++)
		acc[k] = (v4d) {0.0, 0.0, 0.0, 0.0};
	for (size_t j = 0; j < (size_t) d; j++, cols += stride)
	{
		double		xj = x[j];
		v4d			xv = {xj, xj, xj, xj};

		for (int k = 0; k < CHUNK / 4; k++)
		{
			v4d			t;

			memcpy(&t, cols + 4 * k, sizeof(t));
			t = t - xv;
			acc[k] += t * t;
		}
	}
	memcpy(out, acc, sizeof(acc));
}

static inline void
cols_sqdist(const double *cols, size_t stride, size_t m, int32_t d, const double *x,
			double *out)
{
	size_t		done = 0;

	for (; done + CHUNK <= m; done += CHUNK)
		cols_sqdist_chunk(cols + done, stride, d, x, out + done);
	if (done == m)
		return;
	cols += done;
	out += done;
	m -= done;
	for (size_t i = 0; i < m; i++)
		out[i] = 0.0;
	for (size_t j = 0; j < (size_t) d; j++, cols += stride)
	{
		double		xj = x[j];

		for (size_t i = 0; i < m; i++)
		{
			double		t = cols[i] - xj;

			out[i] += t * t;
		}
	}
}

double
svc_kernel_sum(const double *s, const double *alpha, const double *widths,
			   int32_t n, int32_t d, double gamma, const double *x)
{
	double		buf[KBLOCK];
	double		total = 0.0;

	for (int32_t i0 = 0; i0 < n; i0 += KBLOCK)
	{
		int32_t		m = (n - i0 < KBLOCK) ? n - i0 : KBLOCK;
		const double *row = s + (size_t) i0 * d;

#ifdef FMA_ORDER
		svc_sqdist_many(row, NULL, m, d, x, buf);
		for (int32_t i = 0; i < m; i++)
			buf[i] = -(widths ? widths[i0 + i] : gamma) * buf[i];
#else
		/* two loops, so the common one keeps its constant factor */
		if (widths)
			for (int32_t i = 0; i < m; i++)
				buf[i] = -widths[i0 + i] * sqdist(row + (size_t) i * d, x, d);
		else
			for (int32_t i = 0; i < m; i++)
				buf[i] = -gamma * sqdist(row + (size_t) i * d, x, d);
#endif
		total = block_total(buf, (size_t) m, alpha + i0, total);
	}
	return total;
}

double
svc_kernel_sum_cols(const double *cols, size_t stride, const double *alpha,
					int32_t n, int32_t d, double gamma, const double *x)
{
	double		buf[KBLOCK];
	double		total = 0.0;

	for (int32_t i0 = 0; i0 < n; i0 += KBLOCK)
	{
		size_t		m = (size_t) ((n - i0 < KBLOCK) ? n - i0 : KBLOCK);

		cols_sqdist(cols + i0, stride, m, d, x, buf);
		for (size_t i = 0; i < m; i++)
			buf[i] = -gamma * buf[i];
		total = block_total(buf, m, alpha + i0, total);
	}
	return total;
}

double
svc_kernel_sum_cols_d2(const double *cols, size_t stride, const double *alpha,
					   int32_t n, int32_t d, double gamma, const double *x, double *d2)
{
	double		buf[KBLOCK];
	double		total = 0.0;

	for (int32_t i0 = 0; i0 < n; i0 += KBLOCK)
	{
		size_t		m = (size_t) ((n - i0 < KBLOCK) ? n - i0 : KBLOCK);

		cols_sqdist(cols + i0, stride, m, d, x, buf);
		memcpy(d2 + i0, buf, sizeof(double) * m);
		for (size_t i = 0; i < m; i++)
			buf[i] = -gamma * buf[i];
		total = block_total(buf, m, alpha + i0, total);
	}
	return total;
}

/*
 * The float form of cols_sqdist (bsgd's wide rows): 64 rows' sums in
 * eight float vectors across all d coordinates, half the bytes read of
 * the double columns and twice the lanes.
 */
typedef float v8f __attribute__((vector_size(32)));

#define CHUNKF 64

static inline void
cols_sqdistf(const float *cols, size_t stride, size_t m, int32_t d, const float *x,
			 double *out)
{
	size_t		done = 0;

	for (; done < m; done += CHUNKF)
	{
		v8f			acc[CHUNKF / 8];
		float		lane[CHUNKF];
		const float *c = cols + done;
		size_t		left = m - done < CHUNKF ? m - done : CHUNKF;

		for (int k = 0; k < CHUNKF / 8; k++)
			acc[k] = (v8f) {0};
		/* a short last chunk reads past the b slots but within cap */
		for (size_t j = 0; j < (size_t) d; j++, c += stride)
		{
			float		xj = x[j];
			v8f			xv = {xj, xj, xj, xj, xj, xj, xj, xj};

			for (int k = 0; k < CHUNKF / 8; k++)
			{
				v8f			t;

				memcpy(&t, c + 8 * k, sizeof(t));
				t = t - xv;
				acc[k] += t * t;
			}
		}
		memcpy(lane, acc, sizeof(lane));
		for (size_t i = 0; i < left; i++)
			out[done + i] = (double) lane[i];
	}
}

void
svc_sqdist_colsf(const float *cols, size_t stride, int32_t n, int32_t d, const float *x,
				 double *out)
{
	cols_sqdistf(cols, stride, (size_t) (n > 0 ? n : 0), d, x, out);
}

double
svc_kernel_sum_colsf(const float *cols, size_t stride, const double *alpha,
					 int32_t n, int32_t d, double gamma, const float *x, double *d2)
{
	double		buf[KBLOCK];
	double		total = 0.0;

	for (int32_t i0 = 0; i0 < n; i0 += KBLOCK)
	{
		size_t		m = (size_t) ((n - i0 < KBLOCK) ? n - i0 : KBLOCK);

		cols_sqdistf(cols + i0, stride, m, d, x, buf);
		if (d2 != NULL)
			memcpy(d2 + i0, buf, sizeof(double) * m);
		for (size_t i = 0; i < m; i++)
			buf[i] = -gamma * buf[i];
		total = block_total(buf, m, alpha + i0, total);
	}
	return total;
}

/*
 * The exponents in work (n of them) shifted by their largest and exp'd in
 * place, the largest in *emax.  False, work untouched, when there is no
 * finite exponent (x some 1e154 or more from every support vector: the
 * distances overflowed): every kernel is 0, there is no step to take,
 * and the floor would turn the zeros into equal weights.
 */
static inline bool
exp_shifted(double *work, size_t n, double *emax)
{
	double		top = -DBL_MAX;

	for (size_t i = 0; i < n; i++)
		top = work[i] > top ? work[i] : top;
	*emax = top;
	if (n == 0 || top == -DBL_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
	{
		double		e = work[i] - top;

		work[i] = exp(e > EXP_FLOOR ? e : EXP_FLOOR);
	}
	return true;
}

/*
 * next (the weighted sum of the support vectors) divided by its weights'
 * sum den.  With negative alphas the weights can cancel: the denominator
 * is then noise and the step meaningless, so the trajectory stops (next
 * is x).  So it does where the denominator is subnormal (alphas of a tiny
 * C), whose reciprocal would overflow.
 */
static inline void
step_normalise(double *next, const double *x, int32_t d, double den, double absden, bool *ok)
{
	if (!(den > 1e-9 * absden) || !(den >= DBL_MIN))
	{
		*ok = false;
		memcpy(next, x, sizeof(double) * (size_t) d);
	}
	else
	{
		double		inv = 1.0 / den;

		for (size_t j = 0; j < (size_t) d; j++)
			next[j] *= inv;
		*ok = true;
	}
}

/*
 * out[j] = sum_i w[i] cols[j * stride + i] for each of d columns: the
 * plain loop (below, for what the fast form leaves) is one chain a
 * column; the fast form runs 8 columns' chains side by side.
 */
static void
cols_weighted_sums(const double *cols, size_t stride, size_t n, size_t d,
				   const double *w, double *out)
{
	size_t		j = 0;

#ifdef FMA_ORDER
	size_t		n4 = n & ~(size_t) 3;

	for (; j + 8 <= d; j += 8)
	{
		const double *c = cols + j * stride;
		v4d			acc[8];

		for (int k = 0; k < 8; k++)
			acc[k] = (v4d) {0.0, 0.0, 0.0, 0.0};
		for (size_t i = 0; i < n4; i += 4)
		{
			v4d			wv;

			memcpy(&wv, w + i, sizeof(wv));
			for (int k = 0; k < 8; k++)
			{
				v4d			cv;

				memcpy(&cv, c + k * stride + i, sizeof(cv));
				acc[k] = _mm256_fmadd_pd(wv, cv, acc[k]);
			}
		}
		for (int k = 0; k < 8; k++)
			out[j + k] = lanes_finish(acc[k], n - n4, w + n4, c + k * stride + n4);
	}
#endif
	for (; j < d; j++)
	{
		const double *col = cols + j * stride;
		double		acc = 0.0;

		for (size_t i = 0; i < n; i++)
			acc += w[i] * col[i];
		out[j] = acc;
	}
}

double
svc_kernel_fixed_point_cols(const double *cols, size_t stride, const double *alpha,
							int32_t n, int32_t d, double gamma, const double *x,
							double *next, double *work, bool *ok)
{
	double		emax;
	double		den = 0.0;		/* with one width, also the kernel sum */
	double		absden = 0.0;
	size_t		un = (size_t) (n > 0 ? n : 0);

	/* svc_kernel_fixed_point's steps, each row's sums in the same order */
	cols_sqdist(cols, stride, un, d, x, work);
	for (size_t i = 0; i < un; i++)
		work[i] = -gamma * work[i];
	if (!exp_shifted(work, un, &emax))
	{
		*ok = false;
		memcpy(next, x, sizeof(double) * (size_t) d);
		return 0.0;
	}
	for (size_t i = 0; i < un; i++)
	{
		double		a = alpha[i] * work[i];

		work[i] = a;
		den += a;
		absden += fabs(a);
	}
	cols_weighted_sums(cols, stride, un, (size_t) d, work, next);
	step_normalise(next, x, d, den, absden, ok);
	return den * exp(emax);
}

static inline void
kernel_column(const double *x, int32_t d, int64_t row, double gamma,
			  const int64_t *idx, int64_t m, double *out, bool scatter)
{
	double		buf[KBLOCK];
	const double *y = x + (size_t) row * (size_t) d;

	for (int64_t k0 = 0; k0 < m; k0 += KBLOCK)
	{
		int32_t		b = (int32_t) (m - k0 < KBLOCK ? m - k0 : KBLOCK);

		/*
		 * Coordinate by coordinate, so that the loops run across rows
		 * (vectorised, gathering with idx) rather than across the few
		 * coordinates of one row, as a call of svc_sqdist per row would.
		 */
		for (int32_t k = 0; k < b; k++)
			buf[k] = 0.0;
		for (int32_t j = 0; j < d; j++)
		{
			double		yj = y[j];

			if (idx != NULL)
				for (int32_t k = 0; k < b; k++)
				{
					double		t = x[(size_t) idx[k0 + k] * (size_t) d + j] - yj;

					buf[k] += t * t;
				}
			else
				for (int32_t k = 0; k < b; k++)
				{
					double		t = x[(size_t) (k0 + k) * (size_t) d + j] - yj;

					buf[k] += t * t;
				}
		}
		for (int32_t k = 0; k < b; k++)
			buf[k] *= -gamma;
		for (int32_t k = 0; k < b; k++)
			buf[k] = buf[k] > EXP_FLOOR ? buf[k] : EXP_FLOOR;
		for (int32_t k = 0; k < b; k++)
			buf[k] = exp(buf[k]);
		if (idx != NULL && scatter)
			for (int32_t k = 0; k < b; k++)
				out[idx[k0 + k]] = buf[k];
		else
			memcpy(out + k0, buf, sizeof(double) * (size_t) b);
	}
}

void
svc_kernel_column(const double *x, int32_t d, int64_t row, double gamma,
				  const int64_t *idx, int64_t m, double *out)
{
	kernel_column(x, d, row, gamma, idx, m, out, true);
}

void
svc_kernel_values(const double *x, int32_t d, int64_t row, double gamma,
				  const int64_t *idx, int64_t m, double *out)
{
	kernel_column(x, d, row, gamma, idx, m, out, false);
}

double
svc_kernel_fixed_point(const double *s, const double *alpha,
					   const double *widths, int32_t n, int32_t d,
					   double gamma, const double *x, double *next,
					   double *work, bool *ok)
{
	double		emax;
	double		den = 0.0;
	double		absden = 0.0;
	double		sum = 0.0;

	for (int32_t i = 0; i < n; i++)
		work[i] = -(widths ? widths[i] : gamma) * sqdist(s + (size_t) i * d, x, d);
	if (!exp_shifted(work, (size_t) (n > 0 ? n : 0), &emax))
	{
		*ok = false;
		memcpy(next, x, sizeof(double) * (size_t) d);
		return 0.0;
	}

	memset(next, 0, sizeof(double) * (size_t) d);
	/*
	 * The gradient of sum_i alpha_i exp(-g_i ||x - s_i||^2) vanishes where
	 * x is the mean of the s_i weighted by alpha_i g_i K_i: with one width
	 * g_i cancels.
	 */
	for (int32_t i = 0; i < n; i++)
	{
		double		a = alpha[i] * work[i];
		double		w = widths ? a * widths[i] : a;
		const double *row = s + (size_t) i * d;

		sum += a;
		den += w;
		absden += fabs(w);
		for (int32_t j = 0; j < d; j++)
			next[j] += w * row[j];
	}
	step_normalise(next, x, d, den, absden, ok);
	return sum * exp(emax);
}
