/*
 * test_kdtree.c - the k-d tree finds exactly the nearest point
 */
#include "kdtree.h"
#include "kernel.h"
#include "unit.h"

#include <stdlib.h>

static void
check_against_scan(int64_t n, int32_t d, int queries, uint64_t seed, bool duplicates)
{
	SvcRng		rng;
	double	   *pts = malloc(sizeof(double) * (size_t) (n > 0 ? n : 1) * d);
	double	   *q = malloc(sizeof(double) * d);
	SvcKdTree	t;
	SvcError	err;
	int			wrong = 0;

	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < n * d; i++)
		pts[i] = duplicates ? (double) svc_rng_below(&rng, 3) : svc_rng_unit(&rng) * 10;
	CHECK(svc_kd_build(&svc_env_malloc, pts, n, d, &t, &err) == SVC_OK, "build");
	for (int k = 0; k < queries; k++)
	{
		int64_t		best = -1;
		double		best_d2 = 1e300,
					got_d2;
		int64_t		got;

		for (int32_t j = 0; j < d; j++)
			q[j] = svc_rng_unit(&rng) * 12 - 1;
		for (int64_t i = 0; i < n; i++)
		{
			double		d2 = svc_sqdist(pts + (size_t) i * d, q, d);

			if (d2 < best_d2)
			{
				best_d2 = d2;
				best = i;
			}
		}
		/* the scan keeps the first of equal distances: ties to the lowest index */
		got = svc_kd_nearest(&t, q, &got_d2);
		wrong += got != best || (n > 0 && got_d2 != best_d2);
		{
			/*
			 * The k nearest: exactly the scan's order by (distance, index),
			 * the r-th being the smallest pair above the (r-1)-th.
			 */
			int64_t		idx[7];
			double		kd2[7];
			int32_t		found = svc_kd_knearest(&t, q, 7, idx, kd2);
			int32_t		expect = n < 7 ? (int32_t) n : 7;
			double		prev_d2 = -1;
			int64_t		prev_i = -1;

			if (found != expect)
				wrong++;
			for (int32_t r = 0; r < found; r++)
			{
				int64_t		want = -1;
				double		want_d2 = 0;

				for (int64_t i = 0; i < n; i++)
				{
					double		d2 = svc_sqdist(pts + (size_t) i * d, q, d);
					bool		after = d2 > prev_d2 || (d2 == prev_d2 && i > prev_i);

					if (after && (want < 0 || d2 < want_d2))
					{
						want = i;
						want_d2 = d2;
					}
				}
				if (idx[r] != want || kd2[r] != want_d2)
					wrong++;
				prev_d2 = want_d2;
				prev_i = want;
			}
		}
	}
	CHECK(wrong == 0, "n=%lld d=%d: %d of %d queries differ from a scan",
		  (long long) n, d, wrong, queries);
	svc_kd_free(&svc_env_malloc, &t);
	free(pts);
	free(q);
}

int
main(void)
{
	check_against_scan(0, 2, 5, 1, false);
	check_against_scan(1, 2, 5, 2, false);
	check_against_scan(1000, 2, 500, 3, false);
	check_against_scan(5000, 9, 300, 4, false);
	check_against_scan(2000, 3, 300, 5, true);
	check_against_scan(300, 40, 100, 6, false);
	return unit_summary("test_kdtree");
}
