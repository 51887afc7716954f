/*
 * kernel.h - RBF kernel sums, the inner loop of everything
 *
 * Support vectors are stored row-major and contiguous; these loops are
 * compiled with the vectorising flags of the Makefile (see OPTFLAGS).
 */
#ifndef SVC_KERNEL_H
#define SVC_KERNEL_H

#include "svc_core.h"

#include <float.h>

/* Squared Euclidean distance, summed in the order kernel.c defines. */
double		svc_sqdist(const double *a, const double *b, int32_t d);

/*
 * out[i] = svc_sqdist(row i, x) for m rows: rows idx[i] of rows, or the
 * first m when idx is NULL.  The same sums as svc_sqdist, one call for the
 * lot (a loop of calls from another file cannot inline them).
 */
void		svc_sqdist_many(const double *rows, const int32_t *idx, int64_t m,
							int32_t d, const double *x, double *out);

/*
 * outa[i] and outb[i] = svc_sqdist(row i, xa) and (row i, xb) for the
 * first m rows: the same sums, each row read once for both points.
 */
void		svc_sqdist_many2(const double *rows, int64_t m, int32_t d, const double *xa,
							 const double *xb, double *outa, double *outb);

/*
 * sum_i alpha_i exp(-g_i ||x - s_i||^2) over n rows s of d values, with
 * g_i = widths[i], or gamma for all when widths is NULL.
 */
double		svc_kernel_sum(const double *s, const double *alpha,
						   const double *widths, int32_t n, int32_t d,
						   double gamma, const double *x);

/*
 * svc_kernel_sum at np points (pts: np rows of d doubles) into out: each
 * value to the bit the one svc_kernel_sum gives at that point (the same
 * distances, blocks and sums); each support vector's row is read once
 * for up to four points.
 */
void		svc_kernel_sum_points(const double *s, const double *alpha, const double *widths,
								  int32_t n, int32_t d, double gamma, const double *pts,
								  int32_t np, double *out);

/* The n rows of d values (row-major) by column: cols[j * n + i]. */
void		svc_rows_to_cols(const double *rows, int64_t n, int32_t d, double *cols);

/*
 * The same sum with one width, the n rows stored by column: coordinate j
 * of row i at cols[j * stride + i].  Each distance is one chain down its
 * column (kernel.c defines the orders), so its last bits may differ from
 * svc_kernel_sum's; the loops vectorise across rows.
 */
double		svc_kernel_sum_cols(const double *cols, size_t stride, const double *alpha,
								int32_t n, int32_t d, double gamma, const double *x);

/*
 * svc_kernel_sum_cols that also writes the squared distance of each row
 * from x into d2[0..n).  Those are sums of the squares svc_sqdist sums,
 * in another order: the two differ by at most SVC_SQDIST_REL_ERR(d) times
 * either, plus SVC_SQDIST_ABS_ERR(d) for squares that underflow.
 */
double		svc_kernel_sum_cols_d2(const double *cols, size_t stride, const double *alpha,
								   int32_t n, int32_t d, double gamma, const double *x,
								   double *d2);

/*
 * Two sums of the same d non-negative doubles, each within (d u / (1 - d u))
 * of the exact one (u = 2^-53, any order, fused or not), differ by at most
 * 2 d u / (1 - 2 d u) of either: (d + 2) 2^-51 covers it for d < 2^40.
 */
/*
 * svc_kernel_sum_cols from float columns and a float x (bsgd's wide rows),
 * each squared distance summed in float; d2 (NULL for none) gets them.
 * Reads the columns in whole 64s of rows: stride a multiple of 64.
 */
double		svc_kernel_sum_colsf(const float *cols, size_t stride, const double *alpha,
								 int32_t n, int32_t d, double gamma, const float *x,
								 double *d2);

/* Its squared distances alone, into out[0..n). */
void		svc_sqdist_colsf(const float *cols, size_t stride, int32_t n, int32_t d,
							 const float *x, double *out);

#define SVC_SQDIST_REL_ERR(d)	(((double) (d) + 2.0) * 0x1.0p-51)
#define SVC_SQDIST_ABS_ERR(d)	(2.0 * ((double) (d) + 1.0) * DBL_MIN)

/*
 * One step of the fixed-point iteration P(x) (a weighted mean shift):
 * writes sum_i w_i s_i / sum_i w_i into next, with w_i = alpha_i K(x, s_i)
 * (times g_i when widths gives each s_i its own, as in svc_kernel_sum).
 * The exponents are shifted by their largest value before exp, so the
 * ratio is exact far from every support vector where all K underflow.
 * work needs n doubles.  Returns the (unshifted) kernel sum,
 * sum_i alpha_i K(x, s_i), so f(x) = result - offset comes for free.
 * *ok is false when the shifted denominator is not safely positive
 * (projection can make some alpha negative): next is then a copy of x.
 */
double		svc_kernel_fixed_point(const double *s, const double *alpha,
								   const double *widths, int32_t n, int32_t d,
								   double gamma, const double *x, double *next,
								   double *work, bool *ok);

/*
 * The same step with one width, the rows stored by column as for
 * svc_kernel_sum_cols; the same values in a build without fast-math.
 */
double		svc_kernel_fixed_point_cols(const double *cols, size_t stride,
										const double *alpha, int32_t n, int32_t d,
										double gamma, const double *x, double *next,
										double *work, bool *ok);

/*
 * svc_kernel_fixed_point_cols at two rows x0 and x1, reading the columns
 * once: each row's next, ok and value (lam) to the bit as two calls give
 * them.
 */
void		svc_kernel_fixed_point_cols2(const double *cols, size_t stride,
										 const double *alpha, int32_t n, int32_t d,
										 double gamma, const double *x0, const double *x1,
										 double *next0, double *next1, double *work0,
										 double *work1, bool *ok0, bool *ok1, double *lam0,
										 double *lam1);

/*
 * svc_kernel_fixed_point_cols at four rows x[0..3], reading the columns
 * once (with AVX-512; else as two pairs): each row's next[r], ok[r] and
 * value lam[r] to the bit as four calls give them; work[r] n doubles each.
 */
void		svc_kernel_fixed_point_cols4(const double *cols, size_t stride,
										 const double *alpha, int32_t n, int32_t d,
										 double gamma, const double *const *x,
										 double *const *next, double *const *work, bool *ok,
										 double *lam);

/*
 * A column of the kernel matrix of the n rows of d values in x (row-major):
 * out[t] = exp(-gamma ||x_t - x_row||^2) for t = idx[k], k < m, or for
 * t = k < m when idx is NULL; other entries of out are not touched.  The
 * exponents are computed first and exp'd as a block, so that exp is the
 * vector exp of this file's build (the last bits may differ from exp()'s).
 * Exponents below -700 become -700 (K about 1e-304, not 0).
 */
void		svc_kernel_column(const double *x, int32_t d, int64_t row,
							  double gamma, const int64_t *idx, int64_t m,
							  double *out);

/* The same values packed: out[k] for the k-th row of idx (or row k). */
void		svc_kernel_values(const double *x, int32_t d, int64_t row,
							  double gamma, const int64_t *idx, int64_t m,
							  double *out);

#endif							/* SVC_KERNEL_H */
