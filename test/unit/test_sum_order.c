/*
 * test_sum_order.c - kernel.c's sums in the order it defines (top of
 * kernel.c), on every path
 *
 * The references below are that order written as plain scalar C; this
 * file is built without fast-math or contraction, so they are exactly the
 * definition, whatever the compiler does with kernel.c's vector forms.
 * Checked bit for bit, over counts of every residue mod 4 and 8 and
 * widths around the vectors': single distances and the batched ones
 * (rows by index or in order), the distances down the columns, a
 * trajectory step's weighted sums and weights' sum, and the float
 * distances.  Built with the core's flags (test_sum_order) and with the
 * extension's kernel flags for this CPU (test_sum_order_native: fast-math,
 * fused multiply-adds, 256-bit vectors).
 */
#include "kernel.h"
#include "unit.h"

#include <math.h>
#include <stdint.h>

/* one multiply-add as kernel.c's build does it */
#ifdef __FP_FAST_FMA
#define MADD(a, b, c) fma((a), (b), (c))
#define MADDF(a, b, c) fmaf((a), (b), (c))
#else
#define MADD(a, b, c) ((c) + (a) * (b))
#define MADDF(a, b, c) ((c) + (a) * (b))
#endif

static double
ref_lanes(const double *a, const double *b, size_t n, bool diff)
{
	double		l[4] = {0.0, 0.0, 0.0, 0.0};

	for (size_t j = 0; j < n; j++)
	{
		double		t = diff ? a[j] - b[j] : a[j];
		double		u = diff ? t : b[j];

		l[j % 4] = MADD(t, u, l[j % 4]);
	}
	return (l[0] + l[2]) + (l[1] + l[3]);
}

static double
ref_plain_sum(const double *a, size_t n, bool absolute)
{
	double		l[4] = {0.0, 0.0, 0.0, 0.0};

	for (size_t j = 0; j < n; j++)
		l[j % 4] += absolute ? fabs(a[j]) : a[j];
	return (l[0] + l[2]) + (l[1] + l[3]);
}

static uint64_t rng = UINT64_C(0x9E3779B97F4A7C15);

static double
uniform(void)
{
	rng = rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (double) (rng >> 11) / 9007199254740992.0;
}

#define MAXN 300
#define MAXD 768
#define PAD 5					/* columns stored with this many slots more */

static bool
same(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

int
main(void)
{
	static const int ns[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 31, 32, 33, 35, 63, 64, 65,
	297, 298, 299, 300};
	static const int ds[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 64, 129, 768};
	static double rows[MAXN * MAXD],
				cols[(MAXN + PAD) * MAXD],
				alpha[MAXN],
				x[MAXD],
				out[MAXN],
				out2[MAXN],
				next[MAXD],
				next2[MAXD],
				work[MAXN],
				work2[MAXN],
				next3[2 * MAXD],
				work3[2 * MAXN],
				colv[MAXN];
	static float colsf[(MAXN + 64) * MAXD],
				xf[MAXD];
	static int32_t idx[MAXN];
	int			bad_single = 0,
				bad_many = 0,
				bad_cols = 0,
				bad_step = 0,
				bad_pair = 0,
				bad_quad = 0,
				bad_points = 0,
				bad_float = 0,
				bad_stride = 0,
				steps = 0,
				cases = 0;

	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (size_t b = 0; b < sizeof(ds) / sizeof(ds[0]); b++)
		{
			int			n = ns[a],
						d = ds[b];
			size_t		stride = (size_t) n + PAD,
						stridef = ((size_t) n + 63) / 64 * 64;
			double		gamma = 2.0 / d;
			bool		ok,
						ok2;

			cases++;
			for (int i = 0; i < n * d; i++)
				rows[i] = 2.0 * uniform() - 1.0;
			for (int i = 0; i < n; i++)
			{
				alpha[i] = uniform() * (i % 7 == 3 ? 1e-3 : 1.0);
				idx[i] = (int32_t) (uniform() * n);
			}
			for (int j = 0; j < d; j++)
			{
				x[j] = uniform() - 0.5;
				xf[j] = (float) x[j];
			}
			for (int i = 0; i < n; i++)
				for (int j = 0; j < d; j++)
				{
					cols[(size_t) j * stride + (size_t) i] = rows[(size_t) i * d + j];
					colsf[(size_t) j * stridef + (size_t) i] = (float) rows[(size_t) i * d + j];
				}
			/* the padding slots hold values that must not be read into the sums */
			for (int j = 0; j < d; j++)
				for (size_t i = (size_t) n; i < stride; i++)
					cols[(size_t) j * stride + i] = 1e300;

			/* rows: the single distance is the order; batches are the single */
			for (int i = 0; i < n; i++)
			{
				const double *r = rows + (size_t) i * d;

				bad_single += !same(svc_sqdist(r, x, d), ref_lanes(r, x, (size_t) d, true));
			}
			for (int k = 0; k < 2; k++)
			{
				svc_sqdist_many(rows, k ? idx : NULL, n, d, x, out);
				for (int i = 0; i < n; i++)
					bad_many += !same(out[i], svc_sqdist(rows + (size_t) (k ? idx[i] : i) * d,
														 x, d));
			}

			/* two points at a time (x and the first row) */
			svc_sqdist_many2(rows, n, d, x, rows, out, out2);
			for (int i = 0; i < n; i++)
				bad_many += !same(out[i], svc_sqdist(rows + (size_t) i * d, x, d)) ||
					!same(out2[i], svc_sqdist(rows + (size_t) i * d, rows, d));

			/* columns: one chain a row, in coordinate order */
			(void) svc_kernel_sum_cols_d2(cols, stride, alpha, n, d, gamma, x, out);
			for (int i = 0; i < n; i++)
			{
				double		s = 0.0;

				for (int j = 0; j < d; j++)
				{
					double		t = cols[(size_t) j * stride + (size_t) i] - x[j];

					s = MADD(t, t, s);
				}
				bad_cols += !same(out[i], s);
			}

			/*
			 * A trajectory step: work holds the weights on return; the
			 * weighted sums and the weights' sum are in the order.
			 */
			(void) svc_kernel_fixed_point_cols(cols, stride, alpha, n, d, gamma, x,
											   next, work, &ok);
			if (ok)
			{
				double		inv = 1.0 / ref_plain_sum(work, (size_t) n, false);

				steps++;
				for (int j = 0; j < d; j++)
				{
					for (int i = 0; i < n; i++)
						colv[i] = cols[(size_t) j * stride + (size_t) i];
					bad_step += !same(next[j], ref_lanes(work, colv, (size_t) n, false) * inv);
				}
			}
			/* the same step from columns stored without the padding */
			svc_rows_to_cols(rows, n, d, cols);
			(void) svc_kernel_fixed_point_cols(cols, (size_t) n, alpha, n, d, gamma, x,
											   next2, work2, &ok2);
			bad_stride += ok != ok2 || memcmp(next, next2, sizeof(double) * (size_t) d) != 0 ||
				memcmp(work, work2, sizeof(double) * (size_t) n) != 0;

			/*
			 * Two rows' steps at once (labelling's first steps): each the
			 * single step's, to the bit, with either row first; the second
			 * row is the first support vector, where f peaks
			 */
			for (int k = 0; k < 2; k++)
			{
				const double *xa = k ? rows : x,
						   *xb = k ? x : rows;
				double		lam[2],
							lam1;
				bool		oks[2],
							ok1;

				svc_kernel_fixed_point_cols2(cols, (size_t) n, alpha, n, d, gamma, xa, xb,
											 next3, next3 + MAXD, work3, work3 + MAXN,
											 &oks[0], &oks[1], &lam[0], &lam[1]);
				for (int r = 0; r < 2; r++)
				{
					lam1 = svc_kernel_fixed_point_cols(cols, (size_t) n, alpha, n, d, gamma,
													   r ? xb : xa, next2, work2, &ok1);
					bad_pair += ok1 != oks[r] || !same(lam1, lam[r]) ||
						memcmp(next2, next3 + r * MAXD, sizeof(double) * (size_t) d) != 0 ||
						memcmp(work2, work3 + r * MAXN, sizeof(double) * (size_t) n) != 0;
				}
			}

			/*
			 * Four rows' steps at once: each the single step's, to the bit;
			 * the rows x, the first and the last support vector and x
			 * moved off them, in two orders
			 */
			for (int k = 0; k < 2; k++)
			{
				static double xm[MAXD],
							next4[4 * MAXD],
							work4[4 * MAXN];
				const double *x4[4];
				double	   *nx4[4],
						   *wk4[4];
				double		lam[4],
							lam1;
				bool		oks[4],
							ok1;

				for (int j = 0; j < d; j++)
					xm[j] = 0.5 * (x[j] + rows[(size_t) (n - 1) * d + j]);
				x4[0] = k ? xm : x;
				x4[1] = rows;
				x4[2] = rows + (size_t) (n - 1) * d;
				x4[3] = k ? x : xm;
				for (int r = 0; r < 4; r++)
				{
					nx4[r] = next4 + (size_t) r * MAXD;
					wk4[r] = work4 + (size_t) r * MAXN;
				}
				svc_kernel_fixed_point_cols4(cols, (size_t) n, alpha, n, d, gamma, x4, nx4, wk4,
											 oks, lam);
				for (int r = 0; r < 4; r++)
				{
					lam1 = svc_kernel_fixed_point_cols(cols, (size_t) n, alpha, n, d, gamma,
													   x4[r], next2, work2, &ok1);
					bad_quad += ok1 != oks[r] || !same(lam1, lam[r]) ||
						memcmp(next2, nx4[r], sizeof(double) * (size_t) d) != 0 ||
						memcmp(work2, wk4[r], sizeof(double) * (size_t) n) != 0;
				}
			}

			/*
			 * Kernel sums at up to nine points at once (the saddle tree's
			 * segments): each svc_kernel_sum's value at its point, to the
			 * bit, with one width and with a width a support vector
			 */
			{
				static double pts[9 * MAXD],
							widths[MAXN],
							vals[9];

				for (int i = 0; i < n; i++)
					widths[i] = gamma * (0.5 + (double) (i % 5) * 0.25);
				for (int p = 0; p < 9; p++)
					for (int j = 0; j < d; j++)
						pts[(size_t) p * d + j] = x[j] + (double) p / 8.0 *
							(rows[(size_t) (n - 1) * d + j] - x[j]);
				for (int np = 1; np <= 9; np++)
					for (int wi = 0; wi < 2; wi++)
					{
						const double *wv = wi ? widths : NULL;

						svc_kernel_sum_points(rows, alpha, wv, n, d, gamma, pts, np, vals);
						for (int p = 0; p < np; p++)
							bad_points += !same(vals[p], svc_kernel_sum(rows, alpha, wv, n, d, gamma,
																		pts + (size_t) p * d));
					}
			}

			/* float columns (bsgd's wide rows): one float chain a row */
			svc_sqdist_colsf(colsf, stridef, n, d, xf, out);
			for (int i = 0; i < n; i++)
			{
				float		s = 0.0f;

				for (int j = 0; j < d; j++)
				{
					float		t = colsf[(size_t) j * stridef + (size_t) i] - xf[j];

					s = MADDF(t, t, s);
				}
				bad_float += !same(out[i], (double) s);
			}
		}
	CHECK(bad_single == 0, "svc_sqdist is the defined order (%d differ)", bad_single);
	CHECK(bad_many == 0, "svc_sqdist_many and svc_sqdist_many2 equal svc_sqdist (%d differ)",
		  bad_many);
	CHECK(bad_cols == 0, "the distances down the columns are one chain a row (%d differ)",
		  bad_cols);
	CHECK(steps > (int) (cases * 3 / 4), "most steps ran (%d of %d)", steps, cases);
	CHECK(bad_step == 0, "a step's weighted sums are the defined order (%d differ)", bad_step);
	CHECK(bad_stride == 0, "a step ignores the columns' padding (%d differ)", bad_stride);
	CHECK(bad_pair == 0, "two rows' steps at once are the single steps (%d differ)", bad_pair);
	CHECK(bad_points == 0, "kernel sums at several points are the single sums (%d differ)",
		  bad_points);
	CHECK(bad_quad == 0, "four rows' steps at once are the single steps (%d differ)", bad_quad);
	CHECK(bad_float == 0, "the float distances are one float chain a row (%d differ)",
		  bad_float);
	return unit_summary("test_sum_order");
}
