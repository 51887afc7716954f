/*
 * bsgd_select.h - budget maintenance's selection of the nearest slots
 * (bsgd_select.c), for bsgd.c and its unit test
 */
#ifndef SVC_BSGD_SELECT_H
#define SVC_BSGD_SELECT_H

#include "svc_core.h"

#include <math.h>

/*
 * Budget maintenance's choice of the k nearest (bsgd_pick): idx[0..k) set
 * to the slots of the k smallest of dist[0..m) in the order a partial
 * selection sort of (dist, idx) leaves them, ties included, in about one
 * pass over dist.  False, with idx untouched, when k is out of 1..m, a
 * distance is NaN or ties at the k-th distance are too many to replay;
 * the caller then sorts.
 */
bool		svc_select_nearest(const double *dist, int32_t *idx, int32_t m, int32_t k);

/*
 * The same choice for the list of every slot 0..b-1 but p, from the
 * slots' vectors by row (rows, as svc_sqdist_many reads them) and by
 * column (cols, stride apart), computing few of svc_sqdist_many's
 * distances.  work holds b doubles; on success work[idx[i]], i < k, is
 * svc_sqdist_many's distance of slot idx[i] to x (so are some others').
 * False, with idx untouched, where the caller must take every distance
 * (k > 8, b < 9, NaN, many ties).
 */
bool		svc_select_nearest_cols(const double *rows, const double *cols, size_t stride,
									int32_t b, int32_t d, int32_t p, const double *x,
									int32_t k, double *work, int32_t *idx);

/*
 * The same with the first sums given: work[0..b) the slots' squared
 * distances to x as svc_kernel_sum_cols_d2 leaves them (within its error
 * bound of svc_sqdist's; work[p] ignored and overwritten).  On success
 * work[idx[i]], i < k, holds the exact distances, as above.
 */
bool		svc_select_nearest_given(const double *rows, int32_t b, int32_t d, int32_t p,
									 const double *x, int32_t k, double *work, int32_t *idx);

/*
 * The same from bounds: lo[i] <= slot i's squared distance to x as
 * svc_sqdist_many gives it <= hi[i] (lo[p], hi[p] ignored and
 * overwritten).  On success lo[idx[i]], i < k, holds the exact distances.
 */
bool		svc_select_nearest_bounds(const double *rows, int32_t b, int32_t d, int32_t p,
									  const double *x, int32_t k, double *lo, double *hi,
									  int32_t *idx);

/*
 * The largest magnitude of a coordinate that svc_sqdistf_bounds' float
 * sums take (no float overflow in a sum of squares), and whether every
 * |v[i]|, i < n, is within it.
 */
#define SVC_SQDISTF_MAX 0x1.0p40

static inline bool
svc_sqdistf_range(const double *v, size_t n)
{
	bool		ok = true;

	/* no exit inside: the loop vectorises */
	for (size_t i = 0; i < n; i++)
		ok &= fabs(v[i]) <= SVC_SQDISTF_MAX;
	return ok;
}

/*
 * Bounds lo[i] <= svc_sqdist(s_i, x) <= hi[i] from d2f[i], the squared
 * distance svc_kernel_sum_colsf summed in float from s_i and x rounded to
 * float, sn2[i] = |s_i|^2 and xn2 = |x|^2 (d columns, every coordinate at
 * most 2^40 in magnitude: no float overflow).  lo may be d2f.
 */
void		svc_sqdistf_bounds(const double *d2f, const double *sn2, double xn2, int32_t n,
							   int32_t d, double *lo, double *hi);

/*
 * The slot of b nearest x (svc_sqdist_many's distance from x to rows[j],
 * the first of ties, as a scan of every distance with < takes it), slot
 * p left out (-1: none), from float columns of the same vectors (cols,
 * stride apart, a multiple of 64; sn2[j] = |s_j|^2, xn2 = |x|^2, every
 * coordinate at most 2^40 in magnitude), with that distance in *dist.
 * xf holds d floats, lo and hi b doubles each.  -1 where the bounds
 * cannot tell (b < 9, too many candidates, no finite bound): the caller
 * then takes every distance.
 */
int32_t		svc_select_nearest_floatcols(const double *rows, const float *cols, size_t stride,
										 const double *sn2, int32_t b, int32_t d, int32_t p,
										 const double *x, double xn2, float *xf, double *lo,
										 double *hi, double *dist);

/*
 * keep_isolated's nearest other slot of slot i among b:
 * svc_select_nearest_floatcols from rows[i], slot i left out.
 */
int32_t		svc_select_nearest_slotf(const double *rows, const float *cols, size_t stride,
									 const double *sn2, int32_t b, int32_t d, int32_t i,
									 float *xf, double *lo, double *hi, double *dist);

#endif							/* SVC_BSGD_SELECT_H */
