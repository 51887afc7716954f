/*
 * vec8.h - eight doubles as one value, for the scorer's loops
 *
 * The scorer's loops are written on v8 so that they compile to vector
 * instructions whatever the compiler's mood (GCC and clang split it into
 * the registers the target has: one AVX-512 register, two AVX ones, four
 * SSE ones).
 */
#ifndef SVC_VEC8_H
#define SVC_VEC8_H

#include <stdint.h>
#include <string.h>

typedef double v8 __attribute__((vector_size(8 * sizeof(double))));
typedef uint64_t vu8 __attribute__((vector_size(8 * sizeof(uint64_t))));
typedef int64_t vi8 __attribute__((vector_size(8 * sizeof(int64_t))));	/* a v8 comparison */

/* the helpers are static: no ABI to keep, whatever the target's vectors */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

static inline v8
load8(const double *p)
{
	v8			v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void
store8p(double *p, const v8 *v)
{
	memcpy(p, v, sizeof(*v));
}

static inline double
hsum8p(const v8 *vp)
{
	v8			v = *vp;

	return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

static inline double
hmax8p(const v8 *vp)
{
	v8			v = *vp;

	/* a tree, not a chain: three steps deep */
	double		a = v[0] > v[4] ? v[0] : v[4],
				b = v[1] > v[5] ? v[1] : v[5],
				c = v[2] > v[6] ? v[2] : v[6],
				e = v[3] > v[7] ? v[3] : v[7];

	a = a > c ? a : c;
	b = b > e ? b : e;
	return a > b ? a : b;
}

/* *acc = max(*acc, b), elementwise */
static inline void
vmax8p(v8 *acc, const v8 *b)
{
	for (int k = 0; k < 8; k++)
		(*acc)[k] = (*acc)[k] > (*b)[k] ? (*acc)[k] : (*b)[k];
}

/*
 * exp of eight arguments in [-708, 700]: x = n ln2 + r with |r| <= ln2/2
 * (up to rounding), exp(r) by its Taylor series to r^13 (the rest is below
 * 2^-57 there), and n added to the exponent bits.  No constant here can be
 * folded by -ffast-math (n comes from floor, not from adding and
 * subtracting 1.5 2^52), so any build computes what is written.
 *
 * The error comes from the one-part ln2 (about 0.15 |x| U in r), from
 * rounding n ln2 where there is no FMA (about 0.5 |x| U) and from the
 * series (within an ulp): within (1 + 2|x|/3) U of exp(x) for |x| <= 700,
 * U = 2^-52, with or without FMA; test_vec8 checks the bound, built both
 * as the unit tests are and as score.c is.  Inline, with AVX-512, it costs
 * half glibc's vector exp.
 */
static inline v8
exp8p(const v8 *xp)
{
	v8			x = *xp;
	v8			y = x * 0x1.71547652b82fep0 + 0.5;	/* x log2(e) + 1/2 */
	v8			n,
				r,
				p,
				t;
	vu8			bits,
				pow2;

	for (int k = 0; k < 8; k++)
		n[k] = __builtin_floor(y[k]);
	r = x - n * 0x1.62e42fefa39efp-1;	/* x - n ln2 */
	p = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0);
	p = 1.0 / 39916800.0 + r * p;
	p = 1.0 / 3628800.0 + r * p;
	p = 1.0 / 362880.0 + r * p;
	p = 1.0 / 40320.0 + r * p;
	p = 1.0 / 5040.0 + r * p;
	p = 1.0 / 720.0 + r * p;
	p = 1.0 / 120.0 + r * p;
	p = 1.0 / 24.0 + r * p;
	p = 1.0 / 6.0 + r * p;
	p = 0.5 + r * p;
	p = 1.0 + r * p;
	p = 1.0 + r * p;
	/*
	 * n + 1.5 2^52 holds n in its low bits: shifted into the exponent
	 * (unsigned, so the bits shifted out and the wrap of a negative n are
	 * defined)
	 */
	t = n + 0x1.8p52;
	memcpy(&pow2, &t, sizeof(pow2));
	memcpy(&bits, &p, sizeof(bits));
	bits += pow2 << 52;
	memcpy(&p, &bits, sizeof(p));
	return p;
}

#endif							/* SVC_VEC8_H */
