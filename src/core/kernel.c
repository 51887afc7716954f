/*
 * kernel.c - RBF kernel sums
 *
 * The exp calls vectorise (glibc's libmvec) only under the fast-math flags
 * the Makefile gives this file alone.  The sums do not depend on those
 * flags or on the compiler: each is written out in one order of our own
 * (below), the same in every function that computes it, so a batched sum
 * equals the single one by construction.  What still differs between
 * builds is fused or unfused multiply-adds and the exp: results are
 * reproducible per build, not bit-identical across builds, a trade
 * measured to be worth it (doc/design-notes.md).
 */
#include "kernel.h"

#include <float.h>
#include <math.h>
#include <string.h>
#if defined(__AVX__) && defined(__FMA__)
#include <immintrin.h>
#endif

/*
 * The order of a sum of d terms t_0 .. t_{d-1} (a squared distance, a dot
 * product) over contiguous values:
 *
 *   four lanes, lane l adding the terms j = l (mod 4) in increasing j,
 *   each product added with one multiply-add (fused where the build has
 *   fused multiply-add, that is where __FP_FAST_FMA is defined, else a
 *   multiply then an add); the result is (l0 + l2) + (l1 + l3).
 *
 * The d % 4 last terms go to their lanes like the others (the missing
 * ones as 0 * 0, which adds nothing).  A sum over values stored down a
 * column (a row of rows stored by column) is one chain instead: term by
 * term in increasing j, each with the same multiply-add.
 *
 * Several sums run side by side (4 distances, 8 columns' weighted sums)
 * because one chain runs at the multiply-add's latency; each keeps its
 * own lanes, so the bits are those of the single sum.  test_sum_order
 * checks every path against this definition written in plain C.
 */
typedef double v4d __attribute__((vector_size(32)));
typedef float v8f __attribute__((vector_size(32)));

#if defined(__AVX__) && defined(__FMA__)
#define madd4(a, b, c) ((v4d) _mm256_fmadd_pd((a), (b), (c)))
#define madd8f(a, b, c) ((v8f) _mm256_fmadd_ps((a), (b), (c)))
#elif defined(__FP_FAST_FMA)
/* (statement expressions: a function passing these vectors warns of ABI) */
#define madd4(a, b, c) ({ \
	v4d			a_ = (a), b_ = (b), c_ = (c); \
	for (int k_ = 0; k_ < 4; k_++) \
		c_[k_] = fma(a_[k_], b_[k_], c_[k_]); \
	c_; })
#define madd8f(a, b, c) ({ \
	v8f			a_ = (a), b_ = (b), c_ = (c); \
	for (int k_ = 0; k_ < 8; k_++) \
		c_[k_] = fmaf(a_[k_], b_[k_], c_[k_]); \
	c_; })
#else
/*
 * No fused multiply-add in this build: nothing can contract these, but
 * fast-math may split a chain of additions into several (clang does when
 * it unrolls), hence the barrier on each sum (CHAIN_PIN below) where the
 * build may reassociate.
 */
#define madd4(a, b, c) ({ v4d s_ = (c) + (a) * (b); CHAIN_PIN(s_); s_; })
#define madd8f(a, b, c) ({ v8f s_ = (c) + (a) * (b); CHAIN_PIN(s_); s_; })
#endif

/*
 * An empty barrier: the value is whatever the asm leaves, so fast-math
 * cannot regroup the sums on either side of it (its reassociation merged
 * the lanes' final additions in another order before these were here).
 */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__SSE2__)
#define OPAQUE(v) __asm__("" : "+x"(v))
#elif defined(__aarch64__)
#define OPAQUE(v) __asm__("" : "+w"(v))
#else
#define OPAQUE(v) __asm__("" : "+m"(v))
#endif

/* The same for a 32-byte vector (as two halves where registers are 16 bytes). */
#if defined(__AVX__)
#define OPAQUE_V(v) __asm__("" : "+x"(v))
#elif defined(__SSE2__) || defined(__aarch64__)
typedef double v2d __attribute__((vector_size(16)));
#define OPAQUE_V(v) do { \
	v2d			h_[2]; \
	memcpy(h_, &(v), sizeof(h_)); \
	OPAQUE(h_[0]); \
	OPAQUE(h_[1]); \
	memcpy(&(v), h_, sizeof(h_)); \
} while (0)
#else
#define OPAQUE_V(v) __asm__("" : "+m"(v))
#endif

/*
 * A chain's step pinned only where the build may reassociate additions:
 * gcc defines __ASSOCIATIVE_MATH__ for -fassociative-math (-ffast-math
 * among others), and both gcc and clang define __FAST_MATH__ under
 * -ffast-math.  Elsewhere the compiler must add in the order written, and
 * a barrier on every step only costs: without fused multiply-adds (a
 * baseline x86-64 build, the unit tests' -O1 core) it moved each step's
 * vector through memory, about half again the time of test_label.  The
 * lanes' reduction (lanes_sum) keeps its barriers in every build.
 */
#if defined(__FAST_MATH__) || defined(__ASSOCIATIVE_MATH__)
#define CHAIN_PIN(v) OPAQUE_V(v)
#else
#define CHAIN_PIN(v) ((void) 0)
#endif

/* The lanes of a chain reduced: (l0 + l2) + (l1 + l3). */
static inline double
lanes_sum(const v4d *acc)
{
	double		s02 = (*acc)[0] + (*acc)[2],
				s13 = (*acc)[1] + (*acc)[3],
				r;

	OPAQUE(s02);
	OPAQUE(s13);
	r = s02 + s13;
	OPAQUE(r);
	return r;
}

/*
 * The rem < 4 values at p padded with zeros (a macro: a function passing
 * these vectors warns of an ABI change where the build has no AVX; the
 * cases spelt out: a loop over rem became a call of memcpy).
 */
#define load_tail(p, rem) ({ \
	const double *p_ = (p); \
	size_t		r_ = (rem); \
	r_ == 1 ? (v4d) {p_[0], 0.0, 0.0, 0.0} : \
		r_ == 2 ? (v4d) {p_[0], p_[1], 0.0, 0.0} : \
		r_ == 3 ? (v4d) {p_[0], p_[1], p_[2], 0.0} : \
		(v4d) {0.0, 0.0, 0.0, 0.0}; })

#define SQB 4					/* rows per batch of distances */

/*
 * out[k] = the squared distance of rows[k] from xs[k], for nb (a constant
 * where inlined, at most SQB) pairs side by side.  Where the xs are one
 * point its loads are one.
 */
static inline __attribute__((always_inline)) void
sqdist_batch(const double *const *rows, const double *const *xs, int nb, int32_t d,
			 double *out)
{
	size_t		n4 = (size_t) d & ~(size_t) 3,
				rem = (size_t) d - n4;
	v4d			acc[SQB];

	for (int k = 0; k < nb; k++)
		acc[k] = (v4d) {0.0, 0.0, 0.0, 0.0};
	for (size_t j = 0; j < n4; j += 4)
		for (int k = 0; k < nb; k++)
		{
			v4d			t,
						xv;

			memcpy(&t, rows[k] + j, sizeof(t));
			memcpy(&xv, xs[k] + j, sizeof(xv));
			t = t - xv;
			acc[k] = madd4(t, t, acc[k]);
		}
	if (rem > 0)
		for (int k = 0; k < nb; k++)
		{
			v4d			t = load_tail(rows[k] + n4, rem) - load_tail(xs[k] + n4, rem);

			acc[k] = madd4(t, t, acc[k]);
		}
	for (int k = 0; k < nb; k++)
		out[k] = lanes_sum(&acc[k]);
}

/*
 * One distance, in the batches' order.  Inlined in this file's loops: the
 * module is built with -fPIC, so a call to the exported svc_sqdist is
 * never inlined, and a call per support vector costs a visible share of
 * a fit.
 */
static inline double
sqdist(const double *a, const double *b, int32_t d)
{
	size_t		n4 = (size_t) d & ~(size_t) 3,
				rem = (size_t) d - n4;
	v4d			acc = {0.0, 0.0, 0.0, 0.0};

	for (size_t j = 0; j < n4; j += 4)
	{
		v4d			u,
					v;

		memcpy(&u, a + j, sizeof(u));
		memcpy(&v, b + j, sizeof(v));
		u = u - v;
		acc = madd4(u, u, acc);
	}
	if (rem > 0)
	{
		v4d			t = load_tail(a + n4, rem) - load_tail(b + n4, rem);

		acc = madd4(t, t, acc);
	}
	return lanes_sum(&acc);
}

/* sum_i a[i] b[i] over n values, in the order above */
static inline double
dot(const double *a, const double *b, size_t n)
{
	size_t		n4 = n & ~(size_t) 3;
	v4d			acc = {0.0, 0.0, 0.0, 0.0};

	for (size_t i = 0; i < n4; i += 4)
	{
		v4d			u,
					v;

		memcpy(&u, a + i, sizeof(u));
		memcpy(&v, b + i, sizeof(v));
		acc = madd4(u, v, acc);
	}
	if (n > n4)
		acc = madd4(load_tail(a + n4, n - n4), load_tail(b + n4, n - n4), acc);
	return lanes_sum(&acc);
}

/* sum_i a[i] (of |a[i]| with absolute) over n values: the same lanes, additions */
static inline double
sum4(const double *a, size_t n, bool absolute)
{
	size_t		n4 = n & ~(size_t) 3;
	v4d			acc = {0.0, 0.0, 0.0, 0.0};

	for (size_t i = 0; i < n; i += 4)
	{
		v4d			u = i < n4 ? (v4d) {a[i], a[i + 1], a[i + 2], a[i + 3]} :
			load_tail(a + i, n - n4);

		if (absolute)
			u = (v4d) {fabs(u[0]), fabs(u[1]), fabs(u[2]), fabs(u[3])};
		acc = acc + u;
		CHAIN_PIN(acc);
	}
	return lanes_sum(&acc);
}

double
svc_sqdist(const double *a, const double *b, int32_t d)
{
	return sqdist(a, b, d);
}

void
svc_sqdist_many(const double *rows, const int32_t *idx, int64_t m, int32_t d,
				const double *x, double *out)
{
	const double *xs[SQB] = {x, x, x, x};
	const double *r[SQB];
	int64_t		i = 0;

#define ROW(i) (rows + (size_t) (idx ? idx[i] : (i)) * (size_t) d)
	for (; i + SQB <= m; i += SQB)
	{
		for (int k = 0; k < SQB; k++)
			r[k] = ROW(i + k);
		sqdist_batch(r, xs, SQB, d, out + i);
	}
	if (i + 2 <= m)
	{
		r[0] = ROW(i);
		r[1] = ROW(i + 1);
		sqdist_batch(r, xs, 2, d, out + i);
		i += 2;
	}
	if (i < m)
		out[i] = sqdist(ROW(i), x, d);
#undef ROW
}

void
svc_sqdist_many2(const double *rows, int64_t m, int32_t d, const double *xa,
				 const double *xb, double *outa, double *outb)
{
	const double *xs[SQB] = {xa, xb, xa, xb};
	const double *r[SQB];
	double		o[SQB];

	for (int64_t i = 0; i < m; i += 2)
	{
		int			nb = i + 1 < m ? 4 : 2;

		r[0] = r[1] = rows + (size_t) i * (size_t) d;
		r[2] = r[3] = r[0] + (size_t) d;
		if (nb == 4)
			sqdist_batch(r, xs, 4, d, o);
		else
			sqdist_batch(r, xs, 2, d, o);
		outa[i] = o[0];
		outb[i] = o[1];
		if (nb == 4)
		{
			outa[i + 1] = o[2];
			outb[i + 1] = o[3];
		}
	}
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

/*
 * total plus the block's sum of alpha_i exp(buf_i) (a dot product in the
 * order above); buf overwritten.
 */
static inline double
block_total(double *buf, size_t m, const double *alpha, double total)
{
	for (size_t i = 0; i < m; i++)
		buf[i] = buf[i] > EXP_FLOOR ? buf[i] : EXP_FLOOR;
	for (size_t i = 0; i < m; i++)
		buf[i] = exp(buf[i]);
	return total + dot(alpha, buf, m);
}

/*
 * out[i] = squared distance from x of the m rows stored by column (row i's
 * coordinate j at cols[j * stride + i]): coordinate by coordinate across
 * the rows, each row's sum one chain in coordinate order (a lane of a
 * vector), so the loops vectorise without a horizontal sum per row.
 */
#define CHUNK 32				/* rows whose sums stay in registers */

/*
 * CHUNK rows' sums in registers across all d coordinates: a loop over
 * the rows inside one over the coordinates loads and stores each row's
 * partial sum at every coordinate, which on wide rows cost as much as
 * reading the rows.
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
			acc[k] = madd4(t, t, acc[k]);
		}
	}
	memcpy(out, acc, sizeof(acc));
}

/*
 * The same for the last m < CHUNK rows: whole fours of rows, then the
 * last m % 4 in a vector padded with zeros (its other lanes unused).
 */
static inline void
cols_sqdist_tail(const double *cols, size_t stride, size_t m, int32_t d,
				 const double *x, double *out)
{
	v4d			acc[CHUNK / 4];
	size_t		full = m / 4,
				rem = m % 4;

	for (int k = 0; k < CHUNK / 4; k++)
		acc[k] = (v4d) {0.0, 0.0, 0.0, 0.0};
	for (size_t j = 0; j < (size_t) d; j++, cols += stride)
	{
		double		xj = x[j];
		v4d			xv = {xj, xj, xj, xj};

		for (size_t k = 0; k < full; k++)
		{
			v4d			t;

			memcpy(&t, cols + 4 * k, sizeof(t));
			t = t - xv;
			acc[k] = madd4(t, t, acc[k]);
		}
		if (rem > 0)
		{
			v4d			t = load_tail(cols + 4 * full, rem) - xv;

			acc[full] = madd4(t, t, acc[full]);
		}
	}
	memcpy(out, acc, sizeof(double) * m);
}

static inline void
cols_sqdist(const double *cols, size_t stride, size_t m, int32_t d, const double *x,
			double *out)
{
	size_t		done = 0;

	for (; done + CHUNK <= m; done += CHUNK)
		cols_sqdist_chunk(cols + done, stride, d, x, out + done);
	if (done < m)
		cols_sqdist_tail(cols + done, stride, m - done, d, x, out + done);
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

		svc_sqdist_many(row, NULL, m, d, x, buf);
		/* two loops, so the common one keeps its constant factor */
		if (widths)
			for (int32_t i = 0; i < m; i++)
				buf[i] = -widths[i0 + i] * buf[i];
		else
			for (int32_t i = 0; i < m; i++)
				buf[i] = -gamma * buf[i];
		total = block_total(buf, (size_t) m, alpha + i0, total);
	}
	return total;
}

void
svc_kernel_sum_points(const double *s, const double *alpha, const double *widths,
					  int32_t n, int32_t d, double gamma, const double *pts, int32_t np,
					  double *out)
{
	for (int32_t p0 = 0; p0 < np; p0 += SQB)
	{
		int			nb = np - p0 < SQB ? np - p0 : SQB;
		double		buf[SQB][KBLOCK];
		double		total[SQB] = {0.0, 0.0, 0.0, 0.0};
		const double *xs[SQB];

		for (int k = 0; k < SQB; k++)
			xs[k] = pts + (size_t) (p0 + (k < nb ? k : 0)) * (size_t) d;
		for (int32_t i0 = 0; i0 < n; i0 += KBLOCK)
		{
			int32_t		m = (n - i0 < KBLOCK) ? n - i0 : KBLOCK;

			/* each support vector's row read once for the nb points */
			for (int32_t i = 0; i < m; i++)
			{
				const double *row = s + (size_t) (i0 + i) * d;
				const double *r[SQB] = {row, row, row, row};
				double		q[SQB];

				if (nb == 4)
					sqdist_batch(r, xs, 4, d, q);
				else if (nb == 3)
					sqdist_batch(r, xs, 3, d, q);
				else if (nb == 2)
					sqdist_batch(r, xs, 2, d, q);
				else
					q[0] = sqdist(row, xs[0], d);
				for (int k = 0; k < nb; k++)
					buf[k][i] = q[k];
			}
			/* then each point's block as svc_kernel_sum takes it */
			for (int k = 0; k < nb; k++)
			{
				if (widths)
					for (int32_t i = 0; i < m; i++)
						buf[k][i] = -widths[i0 + i] * buf[k][i];
				else
					for (int32_t i = 0; i < m; i++)
						buf[k][i] = -gamma * buf[k][i];
				total[k] = block_total(buf[k], (size_t) m, alpha + i0, total[k]);
			}
		}
		for (int k = 0; k < nb; k++)
			out[p0 + k] = total[k];
	}
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

#define CHUNKF 64

#if defined(__AVX512F__) && defined(__FMA__)
typedef float v16f __attribute__((vector_size(64)));
#define COLS_SQDISTF16 1
#endif

/*
 * The float form of cols_sqdist (bsgd's wide rows): 64 rows' sums in
 * eight float vectors across all d coordinates, half the bytes read of
 * the double columns and twice the lanes.  With 64-byte registers, four:
 * each lane's sum the same operations in the same order (a lane never
 * meets another), in half the instructions; the columns of 300 x 768
 * floats in L2, a sum took 10.4 instead of 13.1 us (from L3 both wait on
 * the reads).
 */
static inline void
cols_sqdistf(const float *cols, size_t stride, size_t m, int32_t d, const float *x,
			 double *out)
{
	size_t		done = 0;

	for (; done < m; done += CHUNKF)
	{
#ifdef COLS_SQDISTF16
		v16f		acc[CHUNKF / 16];
#else
		v8f			acc[CHUNKF / 8];
#endif
		float		lane[CHUNKF];
		const float *c = cols + done;
		size_t		left = m - done < CHUNKF ? m - done : CHUNKF;

		memset(acc, 0, sizeof(acc));
		/* a short last chunk reads past the b slots but within cap */
		for (size_t j = 0; j < (size_t) d; j++, c += stride)
		{
			float		xj = x[j];
#ifdef COLS_SQDISTF16
			v16f		xv = {xj, xj, xj, xj, xj, xj, xj, xj, xj, xj, xj, xj, xj, xj, xj, xj};

			for (int k = 0; k < CHUNKF / 16; k++)
			{
				v16f		t;

				memcpy(&t, c + 16 * k, sizeof(t));
				t = t - xv;
				acc[k] = (v16f) _mm512_fmadd_ps(t, t, acc[k]);
			}
#else
			v8f			xv = {xj, xj, xj, xj, xj, xj, xj, xj};

			for (int k = 0; k < CHUNKF / 8; k++)
			{
				v8f			t;

				memcpy(&t, c + 8 * k, sizeof(t));
				t = t - xv;
				acc[k] = madd8f(t, t, acc[k]);
			}
#endif
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

		OPAQUE(inv);			/* a product, not a division, in any build */
		for (size_t j = 0; j < (size_t) d; j++)
			next[j] *= inv;
		*ok = true;
	}
}

/*
 * out[j] = sum_i w[i] cols[j * stride + i] for each of d columns, each a
 * dot product in the order above: 8 columns' chains side by side, then
 * the columns left one at a time.
 */
static void
cols_weighted_sums(const double *cols, size_t stride, size_t n, size_t d,
				   const double *w, double *out)
{
	size_t		j = 0,
				n4 = n & ~(size_t) 3;

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
				acc[k] = madd4(wv, cv, acc[k]);
			}
		}
		if (n > n4)
		{
			v4d			wv = load_tail(w + n4, n - n4);

			for (int k = 0; k < 8; k++)
				acc[k] = madd4(wv, load_tail(c + k * stride + n4, n - n4), acc[k]);
		}
		for (int k = 0; k < 8; k++)
			out[j + k] = lanes_sum(&acc[k]);
	}
	for (; j < d; j++)
		out[j] = dot(w, cols + j * stride, n);
}

/*
 * A fixed-point step's weights from the squared distances in work:
 * alpha_i exp(-gamma d_i - emax), their sum and the sum of their
 * magnitudes.  False when no weight is finite (exp_shifted).
 */
static inline bool
fixed_point_weights(const double *alpha, size_t un, double gamma, double *work, double *emax,
					double *den, double *absden)
{
	for (size_t i = 0; i < un; i++)
		work[i] = -gamma * work[i];
	if (!exp_shifted(work, un, emax))
		return false;
	for (size_t i = 0; i < un; i++)
		work[i] *= alpha[i];
	*den = sum4(work, un, false);
	*absden = sum4(work, un, true);
	return true;
}

/*
 * The step's end, next holding the weighted sums: next normalised and the
 * value; without weights, next = x, *ok false and 0.
 */
static inline double
fixed_point_finish(bool weighted, double *next, const double *x, int32_t d, double den,
				   double absden, double emax, bool *ok)
{
	if (!weighted)
	{
		*ok = false;
		memcpy(next, x, sizeof(double) * (size_t) d);
		return 0.0;
	}
	step_normalise(next, x, d, den, absden, ok);
	return den * exp(emax);
}

double
svc_kernel_fixed_point_cols(const double *cols, size_t stride, const double *alpha,
							int32_t n, int32_t d, double gamma, const double *x,
							double *next, double *work, bool *ok)
{
	double		emax = 0.0;
	double		den = 0.0;		/* with one width, also the kernel sum */
	double		absden = 0.0;
	size_t		un = (size_t) (n > 0 ? n : 0);
	bool		weighted;

	/* svc_kernel_fixed_point's steps, the distances summed down the columns */
	cols_sqdist(cols, stride, un, d, x, work);
	weighted = fixed_point_weights(alpha, un, gamma, work, &emax, &den, &absden);
	if (weighted)
		cols_weighted_sums(cols, stride, un, (size_t) d, work, next);
	return fixed_point_finish(weighted, next, x, d, den, absden, emax, ok);
}

/*
 * Two rows' first steps at once (labelling's trajectories start from
 * thousands of rows, each step reading every support vector twice): the
 * columns are read once for both.  Each row's sums are those of
 * svc_kernel_fixed_point_cols: a slot's distance is one chain in
 * coordinate order whichever rows share the loop, and a weighted sum's
 * lanes run over the slots in the same fours.
 */
static inline void
cols_sqdist2_block(const double *cols, size_t stride, size_t m, int32_t d,
				   const double *x0, const double *x1, double *out0, double *out1)
{
	v4d			a0[CHUNK / 4],
				a1[CHUNK / 4];
	size_t		full = m / 4,
				rem = m % 4;

	for (int k = 0; k < CHUNK / 4; k++)
		a0[k] = a1[k] = (v4d) {0.0, 0.0, 0.0, 0.0};
	for (size_t j = 0; j < (size_t) d; j++, cols += stride)
	{
		v4d			xv0 = {x0[j], x0[j], x0[j], x0[j]},
					xv1 = {x1[j], x1[j], x1[j], x1[j]};

		for (size_t k = 0; k < full; k++)
		{
			v4d			c,
						t0,
						t1;

			memcpy(&c, cols + 4 * k, sizeof(c));
			t0 = c - xv0;
			t1 = c - xv1;
			a0[k] = madd4(t0, t0, a0[k]);
			a1[k] = madd4(t1, t1, a1[k]);
		}
		if (rem > 0)
		{
			v4d			c = load_tail(cols + 4 * full, rem),
						t0 = c - xv0,
						t1 = c - xv1;

			a0[full] = madd4(t0, t0, a0[full]);
			a1[full] = madd4(t1, t1, a1[full]);
		}
	}
	memcpy(out0, a0, sizeof(double) * m);
	memcpy(out1, a1, sizeof(double) * m);
}

static void
cols_weighted_sums2(const double *cols, size_t stride, size_t n, size_t d,
					const double *w0, const double *w1, double *out0, double *out1)
{
	size_t		j = 0,
				n4 = n & ~(size_t) 3;

	for (; j + 8 <= d; j += 8)
	{
		const double *c = cols + j * stride;
		v4d			a0[8],
					a1[8];

		for (int k = 0; k < 8; k++)
			a0[k] = a1[k] = (v4d) {0.0, 0.0, 0.0, 0.0};
		for (size_t i = 0; i < n4; i += 4)
		{
			v4d			wv0,
						wv1;

			memcpy(&wv0, w0 + i, sizeof(wv0));
			memcpy(&wv1, w1 + i, sizeof(wv1));
			for (int k = 0; k < 8; k++)
			{
				v4d			cv;

				memcpy(&cv, c + k * stride + i, sizeof(cv));
				a0[k] = madd4(wv0, cv, a0[k]);
				a1[k] = madd4(wv1, cv, a1[k]);
			}
		}
		if (n > n4)
		{
			v4d			wv0 = load_tail(w0 + n4, n - n4),
						wv1 = load_tail(w1 + n4, n - n4);

			for (int k = 0; k < 8; k++)
			{
				v4d			cv = load_tail(c + k * stride + n4, n - n4);

				a0[k] = madd4(wv0, cv, a0[k]);
				a1[k] = madd4(wv1, cv, a1[k]);
			}
		}
		for (int k = 0; k < 8; k++)
		{
			out0[j + k] = lanes_sum(&a0[k]);
			out1[j + k] = lanes_sum(&a1[k]);
		}
	}
	for (; j < d; j++)
	{
		out0[j] = dot(w0, cols + j * stride, n);
		out1[j] = dot(w1, cols + j * stride, n);
	}
}

void
svc_kernel_fixed_point_cols2(const double *cols, size_t stride, const double *alpha,
							 int32_t n, int32_t d, double gamma, const double *x0,
							 const double *x1, double *next0, double *next1, double *work0,
							 double *work1, bool *ok0, bool *ok1, double *lam0, double *lam1)
{
	size_t		un = (size_t) (n > 0 ? n : 0);
	double		emax0 = 0.0,
				emax1 = 0.0,
				den0 = 0.0,
				den1 = 0.0,
				absden0 = 0.0,
				absden1 = 0.0;
	bool		w0,
				w1;

	for (size_t done = 0; done < un; done += CHUNK)
		cols_sqdist2_block(cols + done, stride, un - done < CHUNK ? un - done : CHUNK, d,
						   x0, x1, work0 + done, work1 + done);
	w0 = fixed_point_weights(alpha, un, gamma, work0, &emax0, &den0, &absden0);
	w1 = fixed_point_weights(alpha, un, gamma, work1, &emax1, &den1, &absden1);
	if (w0 && w1)
		cols_weighted_sums2(cols, stride, un, (size_t) d, work0, work1, next0, next1);
	else if (w0)
		cols_weighted_sums(cols, stride, un, (size_t) d, work0, next0);
	else if (w1)
		cols_weighted_sums(cols, stride, un, (size_t) d, work1, next1);
	*lam0 = fixed_point_finish(w0, next0, x0, d, den0, absden0, emax0, ok0);
	*lam1 = fixed_point_finish(w1, next1, x1, d, den1, absden1, emax1, ok1);
}

/*
 * Four rows' first steps at once: the columns read once for four rows
 * instead of two (at 768 columns the support vectors' doubles, 1.8 MB,
 * come from beyond L2 at every pass).  Each row's sums are still those of
 * svc_kernel_fixed_point_cols: with 64-byte registers a slot's distance
 * is a lane of an 8-lane vector (the same chain in coordinate order as a
 * lane of cols_sqdist's 4-lane ones), and the weighted sums keep their
 * 4-lane chains over the slots, four columns of four rows side by side.
 * Elsewhere it is two pairs' steps.
 */
#if defined(__AVX512F__) && defined(__FMA__)
typedef double v8d __attribute__((vector_size(64)));

static inline void
cols_sqdist4_block(const double *cols, size_t stride, size_t m, int32_t d,
				   const double *const *x, double *const *out)
{
	v8d			a[4][CHUNK / 8];
	size_t		nv = (m + 7) / 8;
	__mmask8	last = (__mmask8) (m % 8 == 0 ? 0xff : (1u << (m % 8)) - 1);

	memset(a, 0, sizeof(a));
	for (size_t j = 0; j < (size_t) d; j++, cols += stride)
	{
		v8d			xv[4];

		for (int r = 0; r < 4; r++)
			xv[r] = (v8d) _mm512_set1_pd(x[r][j]);
		for (size_t k = 0; k < nv; k++)
		{
			/* the slots past m (the last vector's) read as 0, never stored */
			v8d			c = (v8d) _mm512_maskz_loadu_pd(k + 1 == nv ? last : 0xff,
														 cols + 8 * k);

			for (int r = 0; r < 4; r++)
			{
				v8d			t = c - xv[r];

				a[r][k] = (v8d) _mm512_fmadd_pd((__m512d) t, (__m512d) t, (__m512d) a[r][k]);
			}
		}
	}
	for (int r = 0; r < 4; r++)
		memcpy(out[r], a[r], sizeof(double) * m);
}

/* cols_weighted_sums for four rows' weights: each out[r][j] its dot's lanes */
static void
cols_weighted_sums4(const double *cols, size_t stride, size_t n, size_t d,
					const double *const *w, double *const *out)
{
	size_t		j = 0,
				n4 = n & ~(size_t) 3;

	/* by fours (a column's chain is dot's whatever columns share the loop) */
	for (; j + 4 <= d; j += 4)
	{
		const double *c = cols + j * stride;
		v4d			a[4][4];

		memset(a, 0, sizeof(a));
		for (size_t i = 0; i < n4; i += 4)
		{
			v4d			wv[4];

			for (int r = 0; r < 4; r++)
				memcpy(&wv[r], w[r] + i, sizeof(v4d));
			for (int k = 0; k < 4; k++)
			{
				v4d			cv;

				memcpy(&cv, c + k * stride + i, sizeof(cv));
				for (int r = 0; r < 4; r++)
					a[r][k] = madd4(wv[r], cv, a[r][k]);
			}
		}
		if (n > n4)
		{
			v4d			wv[4];

			for (int r = 0; r < 4; r++)
				wv[r] = load_tail(w[r] + n4, n - n4);
			for (int k = 0; k < 4; k++)
			{
				v4d			cv = load_tail(c + k * stride + n4, n - n4);

				for (int r = 0; r < 4; r++)
					a[r][k] = madd4(wv[r], cv, a[r][k]);
			}
		}
		for (int r = 0; r < 4; r++)
			for (int k = 0; k < 4; k++)
				out[r][j + k] = lanes_sum(&a[r][k]);
	}
	for (; j < d; j++)
		for (int r = 0; r < 4; r++)
			out[r][j] = dot(w[r], cols + j * stride, n);
}
#endif

void
svc_kernel_fixed_point_cols4(const double *cols, size_t stride, const double *alpha,
							 int32_t n, int32_t d, double gamma, const double *const *x,
							 double *const *next, double *const *work, bool *ok, double *lam)
{
#if defined(__AVX512F__) && defined(__FMA__)
	size_t		un = (size_t) (n > 0 ? n : 0);
	double		emax[4] = {0.0, 0.0, 0.0, 0.0},
				den[4] = {0.0, 0.0, 0.0, 0.0},
				absden[4] = {0.0, 0.0, 0.0, 0.0};
	bool		wt[4],
				all = true;

	for (size_t done = 0; done < un; done += CHUNK)
	{
		double	   *o[4] = {work[0] + done, work[1] + done, work[2] + done, work[3] + done};

		cols_sqdist4_block(cols + done, stride, un - done < CHUNK ? un - done : CHUNK, d, x, o);
	}
	for (int r = 0; r < 4; r++)
	{
		wt[r] = fixed_point_weights(alpha, un, gamma, work[r], &emax[r], &den[r], &absden[r]);
		all &= wt[r];
	}
	if (all)
		cols_weighted_sums4(cols, stride, un, (size_t) d, (const double *const *) work, next);
	else
		for (int r = 0; r < 4; r++)
			if (wt[r])
				cols_weighted_sums(cols, stride, un, (size_t) d, work[r], next[r]);
	for (int r = 0; r < 4; r++)
		lam[r] = fixed_point_finish(wt[r], next[r], x[r], d, den[r], absden[r], emax[r], &ok[r]);
#else
	for (int r = 0; r < 4; r += 2)
		svc_kernel_fixed_point_cols2(cols, stride, alpha, n, d, gamma, x[r], x[r + 1], next[r],
									 next[r + 1], work[r], work[r + 1], &ok[r], &ok[r + 1],
									 &lam[r], &lam[r + 1]);
#endif
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
