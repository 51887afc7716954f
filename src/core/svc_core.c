/*
 * svc_core.c - errors, allocation, interrupts and the PRNG of the core
 */
#include "svc_core.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *
malloc_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return malloc(size);
}

static void
malloc_release(void *ctx, void *ptr)
{
	(void) ctx;
	free(ptr);
}

static void *
malloc_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
	(void) ctx;
	(void) old_size;
	return realloc(ptr, new_size);
}

const SvcEnv svc_env_malloc = {
	.alloc = malloc_alloc,
	.release = malloc_release,
	.realloc = malloc_realloc,
};

void *
svc_alloc(const SvcEnv *env, size_t size, SvcError *err)
{
	void	   *p = env->alloc(env->ctx, size == 0 ? 1 : size);

	if (p == NULL)
		svc_fail(err, SVC_ERR_NOMEM, "out of memory allocating %zu bytes", size);
	return p;
}

void *
svc_alloc0(const SvcEnv *env, size_t size, SvcError *err)
{
	void	   *p = svc_alloc(env, size, err);

	if (p != NULL)
		memset(p, 0, size == 0 ? 1 : size);
	return p;
}

void
svc_free(const SvcEnv *env, void *ptr)
{
	if (ptr != NULL && env->release != NULL)
		env->release(env->ctx, ptr);
}

SvcStatus
svc_grow(const SvcEnv *env, void **ptr, int64_t *cap, int64_t need, size_t elem,
		 SvcError *err)
{
	int64_t		ncap;
	size_t		old_size,
				new_size;
	void	   *p;

	if (need <= *cap)
		return SVC_OK;
	ncap = *cap > INT64_MAX / 2 ? INT64_MAX : *cap * 2;
	if (ncap < need)
		ncap = need;
	if (ncap < SVC_GROW_MIN)
		ncap = SVC_GROW_MIN;
	if ((uint64_t) ncap > SIZE_MAX || !svc_size_mul((size_t) ncap, elem, &new_size) ||
		!svc_size_mul((size_t) *cap, elem, &old_size))
		return svc_fail(err, SVC_ERR_LIMIT, "array of %lld elements is too large",
						(long long) ncap);
	if (*ptr == NULL || *cap == 0 || env->realloc == NULL)
	{
		p = svc_alloc(env, new_size, err);
		if (p == NULL)
			return SVC_ERR_NOMEM;
		if (*ptr != NULL && old_size > 0)
			memcpy(p, *ptr, old_size);
		svc_free(env, *ptr);
	}
	else
	{
		p = env->realloc(env->ctx, *ptr, old_size, new_size);
		if (p == NULL)
			return svc_fail(err, SVC_ERR_NOMEM, "out of memory allocating %zu bytes",
							new_size);
	}
	*ptr = p;
	*cap = ncap;
	return SVC_OK;
}

char *
svc_double_text(char *buf, double v)
{
	for (int prec = 15; prec < 17; prec++)
	{
		snprintf(buf, SVC_DOUBLE_TEXT_LEN, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return buf;
	}
	/* 17 significant digits always read back (NaN and infinities aside) */
	snprintf(buf, SVC_DOUBLE_TEXT_LEN, "%.17g", v);
	return buf;
}

bool
svc_interrupted(const SvcEnv *env, SvcError *err)
{
	if (env->interrupt != NULL && env->interrupt(env->ctx))
	{
		svc_fail(err, SVC_ERR_INTERRUPTED, "canceling statement due to user request");
		return true;
	}
	return false;
}

bool
svc_size_mul(size_t a, size_t b, size_t *result)
{
	if (a != 0 && b > SIZE_MAX / a)
		return false;
	*result = a * b;
	return true;
}

static void
vformat(char *buf, const char *fmt, va_list ap)
__attribute__((format(printf, 2, 0)));

static void
vformat(char *buf, const char *fmt, va_list ap)
{
	vsnprintf(buf, SVC_ERRMSG_LEN, fmt, ap);
}

SvcStatus
svc_fail(SvcError *err, SvcStatus status, const char *fmt,...)
{
	va_list		ap;

	if (err == NULL)
		return status;
	err->status = status;
	err->detail[0] = '\0';
	err->hint[0] = '\0';
	va_start(ap, fmt);
	vformat(err->message, fmt, ap);
	va_end(ap);
	return status;
}

void
svc_error_detail(SvcError *err, const char *fmt,...)
{
	va_list		ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vformat(err->detail, fmt, ap);
	va_end(ap);
}

void
svc_error_hint(SvcError *err, const char *fmt,...)
{
	va_list		ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vformat(err->hint, fmt, ap);
	va_end(ap);
}

void
svc_error_clear(SvcError *err)
{
	err->status = SVC_OK;
	err->message[0] = '\0';
	err->detail[0] = '\0';
	err->hint[0] = '\0';
}

int
svc_first_nonfinite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return (int) i;
	return -1;
}

/*
 * Quickselect: partition around the median of three of v[lo..hi], keep
 * the side holding k.  Hoare's scans stop on values equal to the pivot,
 * so runs of equal values split evenly rather than one at a time.  An
 * input that defeats the pivot round after round gets the rest sorted
 * instead, so no input takes quadratic time.
 */
double
svc_select_double(double *v, int64_t n, int64_t k)
{
	int			rounds = 16;

	for (int64_t m = n; m > 1; m /= 2)
		rounds += 2;
	return svc_select_double_rounds(v, n, k, rounds);
}

double
svc_select_double_rounds(double *v, int64_t n, int64_t k, int rounds)
{
	int64_t		lo = 0,
				hi = n - 1;

	while (hi > lo)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		int64_t		i = lo,
					j = hi;
		double		a = v[lo],
					b = v[mid],
					c = v[hi];
		double		pivot = a < b ? (b < c ? b : (a < c ? c : a)) :
			(a < c ? a : (b < c ? c : b));

		if (rounds-- == 0)
		{
			qsort(v + lo, (size_t) (hi - lo + 1), sizeof(double), svc_cmp_double);
			break;
		}
		while (i <= j)
		{
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j)
			{
				double		t = v[i];

				v[i] = v[j];
				v[j] = t;
				i++;
				j--;
			}
		}
		/* now v[lo..j] <= pivot <= v[i..hi], and v(j..i) == pivot */
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

/*
 * Every v_i lies in [lo_i, hi_i], so the k-th smallest v lies between the
 * k-th smallest lo and the k-th smallest hi.  A row whose hi is below that
 * range is below the answer, one whose lo is above it above: the answer is
 * the (k - below)-th smallest of the rest, whose values are asked.  The
 * largest v is at least the largest lo: only rows whose hi reaches it can
 * hold it.
 */
SvcStatus
svc_select_bounded(const SvcEnv *env, const double *lo, const double *hi, int64_t n,
				   int64_t k, double (*value) (void *ctx, int64_t i), void *ctx,
				   double *work, double *kth, double *largest, int64_t *n_asked,
				   SvcError *err)
{
	double		lo_k,
				hi_k,
				top_lo = -HUGE_VAL,
				top = -HUGE_VAL;
	int64_t		below = 0,
				open = 0;

	*n_asked = 0;
	memcpy(work, lo, sizeof(double) * (size_t) n);
	lo_k = svc_select_double(work, n, k);
	memcpy(work, hi, sizeof(double) * (size_t) n);
	hi_k = svc_select_double(work, n, k);
	for (int64_t i = 0; i < n; i++)
		top_lo = lo[i] > top_lo ? lo[i] : top_lo;

	/* work: the values of the rows that may hold the k-th */
	for (int64_t i = 0; i < n; i++)
	{
		bool		may_be_kth = hi[i] >= lo_k && !(lo[i] > hi_k);
		bool		may_be_top = hi[i] >= top_lo;
		double		v;

		if (hi[i] < lo_k)
			below++;
		if (!may_be_kth && !may_be_top)
			continue;
		if ((*n_asked & 1023) == 0 && svc_interrupted(env, err))
			return SVC_ERR_INTERRUPTED;
		v = value(ctx, i);
		(*n_asked)++;
		if (!(v >= lo[i] && v <= hi[i]))
			return svc_fail(err, SVC_ERR_INTERNAL,
							"value %.17g of row %lld is outside its bounds [%.17g, %.17g]",
							v, (long long) i, lo[i], hi[i]);
		if (may_be_top)
			top = v > top ? v : top;
		if (may_be_kth)
			work[open++] = v;
	}
	if (!(k - below >= 0 && k - below < open))
		return svc_fail(err, SVC_ERR_INTERNAL, "the bounded selection lost its answer");
	*kth = svc_select_double(work, open, k - below);
	*largest = top;
	return SVC_OK;
}

int
svc_cmp_double(const void *pa, const void *pb)
{
	double		a = *(const double *) pa,
				b = *(const double *) pb;

	return (a > b) - (a < b);
}

int
svc_cmp_int64(const void *pa, const void *pb)
{
	int64_t		a = *(const int64_t *) pa,
				b = *(const int64_t *) pb;

	return (a > b) - (a < b);
}

/* splitmix64: expands a 64-bit seed into the xoshiro state. */
static uint64_t
splitmix64(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

void
svc_rng_seed(SvcRng *rng, uint64_t seed)
{
	uint64_t	sm = seed;

	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&sm);
}

static inline uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t
svc_rng_next(SvcRng *rng)
{
	uint64_t   *s = rng->s;
	uint64_t	result = rotl(s[1] * 5, 7) * 9;
	uint64_t	t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t
svc_rng_below(SvcRng *rng, uint64_t n)
{
	/* Rejection sampling on the top of the range removes modulo bias. */
	uint64_t	limit = UINT64_MAX - (UINT64_MAX % n);
	uint64_t	r;

	do
		r = svc_rng_next(rng);
	while (r >= limit);
	return r % n;
}

double
svc_rng_unit(SvcRng *rng)
{
	return (double) (svc_rng_next(rng) >> 11) * 0x1.0p-53;
}

void
svc_rng_sample(SvcRng *rng, int64_t *idx, int64_t n, int64_t m)
{
	for (int64_t i = 0; i < m && i < n - 1; i++)
	{
		int64_t		j = i + (int64_t) svc_rng_below(rng, (uint64_t) (n - i));
		int64_t		t = idx[i];

		idx[i] = idx[j];
		idx[j] = t;
	}
}

int
svc_scale_exponent(double maxabs)
{
	/*
	 * 0 over a wide range, so that ordinary data is not scaled at all;
	 * outside it the exponent that brings the largest magnitude into
	 * [0.5, 1).  It never decreases as maxabs grows, so a column's
	 * exponent only ever rises.  Squares of values up to 2^400 and sums
	 * of 2^62 of them stay finite; squares of values down to 2^-400 stay
	 * normal.
	 */
	return svc_scale_plain(maxabs) ? 0 : ilogb(maxabs) + 1;
}
