/*
 * model_scale.c - a row scaled as its model scales rows (model.h), the
 * per-row step before every score
 *
 * Built like state.c (the Makefile): at -O3 for the host CPU, without
 * fast-math or contraction, so these loops vectorise at the CPU's width
 * and, each value on its own, give the bits of any build.
 */
#include "model.h"

#include <string.h>

void
svc_model_scale_row(const SvcModel *m, const double *x, double *out)
{
	int32_t		d = m->dims;
	/* locals: without strict aliasing a store to out would reload them */
	const double *restrict shift = m->shift,
			   *restrict mul = m->mul;

	/* x may be out (fit.c scales in place): each value read before its store */
	for (int32_t j = 0; j < d; j++)
		out[j] = (x[j] - shift[j]) * mul[j];
}

bool
svc_model_scale_floats(const SvcModel *m, const float *v, double *out)
{
	int32_t		d = m->dims;
	const double *restrict shift = m->shift,
			   *restrict mul = m->mul;
	uint32_t	top = 0;

	/*
	 * the largest magnitude's bits, without an exit (the loop vectorises):
	 * at or past those of infinity, an element is infinite or NaN
	 */
	for (int32_t j = 0; j < d; j++)
	{
		uint32_t	bits;

		memcpy(&bits, v + j, sizeof(bits));
		bits &= 0x7fffffffU;
		top = bits > top ? bits : top;
		out[j] = ((double) v[j] - shift[j]) * mul[j];
	}
	return top < 0x7f800000U;
}
