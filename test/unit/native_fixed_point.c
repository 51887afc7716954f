/*
 * native_fixed_point.c - kernel.c's batched sums against its plain loops
 * (built as test_fixed_point_native)
 *
 * Where the build has 256-bit FMA, kernel.c runs several sums side by
 * side (a trajectory step's weighted sums 8 columns at a time, distances
 * 4 rows at a time), each in the order gcc gives the plain loop (one
 * 4-lane chain, then its epilogue).  Models and what they predict stay
 * the same bytes only if the two agree bit for bit: this links kernel.c
 * as built and again built with -DSVC_PLAIN_SUMS (its functions renamed
 * plain_*), both with the extension's kernel flags, and compares every
 * output bit over counts of each residue mod 4 and widths around 8.
 */
#include "unit.h"
#include "kernel.h"

#include <stdint.h>

double		plain_fixed_point_cols(const double *cols, size_t stride, const double *alpha,
								   int32_t n, int32_t d, double gamma, const double *x,
								   double *next, double *work, bool *ok);

void		plain_sqdist_many(const double *rows, const int32_t *idx, int64_t m, int32_t d,
							  const double *x, double *out);
double		plain_sqdist(const double *a, const double *b, int32_t d);
double		plain_kernel_sum(const double *s, const double *alpha, const double *widths,
							 int32_t n, int32_t d, double gamma, const double *x);

static uint64_t rng = UINT64_C(0x9E3779B97F4A7C15);

static double
uniform(void)
{
	rng = rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (double) (rng >> 11) / 9007199254740992.0;
}

int
main(void)
{
	static const int ns[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 31, 32, 33, 63, 297, 298, 299, 300};
	static const int ds[] = {1, 7, 8, 9, 15, 16, 17, 31, 64, 129, 768};
	static double cols[300 * 768], alpha[300], x[768], next[768], ref[768], work[300],
				widths[300];
	static int32_t idx[300];
	int			bad = 0,
				cases = 0;

	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (size_t b = 0; b < sizeof(ds) / sizeof(ds[0]); b++)
			for (int rep = 0; rep < 2; rep++)
			{
				int			n = ns[a],
							d = ds[b];
				bool		ok1,
							ok2;
				double		f1,
							f2;

				for (int i = 0; i < n * d; i++)
					cols[i] = 2.0 * uniform() - 1.0;
				for (int i = 0; i < n; i++)
					alpha[i] = uniform() * (rep ? 1e-3 : 1.0);
				for (int j = 0; j < d; j++)
					x[j] = uniform() - 0.5;
				f1 = svc_kernel_fixed_point_cols(cols, (size_t) n, alpha, n, d, 4.0 / d,
												 x, next, work, &ok1);
				f2 = plain_fixed_point_cols(cols, (size_t) n, alpha, n, d, 4.0 / d,
											x, ref, work, &ok2);
				cases++;
				if (ok1 != ok2 || memcmp(&f1, &f2, sizeof(f1)) != 0 ||
					memcmp(next, ref, sizeof(double) * (size_t) d) != 0)
				{
					if (bad++ < 5)
						printf("n %d d %d: next differs from the plain sums\n", n, d);
				}
				/* the same numbers as n rows of d: distances, kernel sums */
				for (int i = 0; i < n; i++)
				{
					idx[i] = (int32_t) (uniform() * n);
					widths[i] = (0.5 + uniform()) * 4.0 / d;
				}
				for (int k = 0; k < 2; k++)
				{
					svc_sqdist_many(cols, k ? idx : NULL, n, d, x, next);
					plain_sqdist_many(cols, k ? idx : NULL, n, d, x, ref);
					f1 = svc_kernel_sum(cols, alpha, k ? widths : NULL, n, d, 4.0 / d, x);
					f2 = plain_kernel_sum(cols, alpha, k ? widths : NULL, n, d, 4.0 / d, x);
					/* and the single distance (the ball tree mixes the two) */
					for (int i = 0; i < n; i++)
					{
						double		p = plain_sqdist(cols + (size_t) (k ? idx[i] : i) * d, x, d);

						work[i] = svc_sqdist(cols + (size_t) (k ? idx[i] : i) * d, x, d);
						bad += memcmp(&p, work + i, sizeof(p)) != 0;
					}
					cases++;
					if (memcmp(next, ref, sizeof(double) * (size_t) n) != 0 ||
						memcmp(next, work, sizeof(double) * (size_t) n) != 0 ||
						memcmp(&f1, &f2, sizeof(f1)) != 0)
					{
						if (bad++ < 5)
							printf("n %d d %d: distances or kernel sum differ\n", n, d);
					}
				}
			}
	CHECK(bad == 0, "fast and plain sums agree bit for bit in %d of %d cases",
		  cases - bad, cases);
	return unit_summary("test_fixed_point_native");
}
