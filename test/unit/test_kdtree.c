/*
 * test_kdtree.c - the k-d tree finds exactly the nearest point
 */
#include "kdtree.h"
#include "kernel.h"
#include "unit.h"

#include <math.h>
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
/*
 * Queries so far away that every squared distance overflows still get the
 * nearest point (compared scaled down), with dist2 HUGE_VAL; a NaN query
 * gets the first point rather than none; an empty tree gives -1.
 */
static void
check_far_queries(void)
{
	/* far enough apart that the scaled distances still tell them apart */
	const double pts[] = {0.0, 0.0, 5e154, 0.0, 0.0, 5e154, -5e154, -5e154};
	const double right[] = {2e155, 0.0};	/* nearest: index 1 */
	const double up[] = {0.0, 2e155};	/* nearest: index 2 */
	const double down[] = {-2e155, -2e155};	/* nearest: index 3 */
	const double nan_q[] = {NAN, 0.0};
	SvcKdTree	t,
				empty;
	SvcError	err;
	double		d2;

	CHECK(svc_kd_build(&svc_env_malloc, pts, 4, 2, &t, &err) == SVC_OK, "build");
	CHECK(svc_kd_nearest(&t, right, &d2) == 1 && d2 == HUGE_VAL, "far right: the right point");
	CHECK(svc_kd_nearest(&t, up, &d2) == 2 && d2 == HUGE_VAL, "far up: the upper point");
	CHECK(svc_kd_nearest(&t, down, &d2) == 3 && d2 == HUGE_VAL, "far down-left: the lower-left point");
	CHECK(svc_kd_nearest(&t, nan_q, NULL) == 0, "a NaN query gets the first point");
	{
		/* the k nearest take overflowed distances too while fewer than k are found */
		int64_t		idx[3];
		double		kd2[3];

		CHECK(svc_kd_knearest(&t, right, 3, idx, kd2) == 3 && kd2[2] == HUGE_VAL,
			  "far right: three nearest found, at overflowed distances");
	}
	CHECK(svc_nearest_far(pts, 4, 2, right) == 1, "svc_nearest_far: far right");
	CHECK(svc_nearest_far(pts, 4, 2, nan_q) == -1, "svc_nearest_far: a NaN query gets none");
	CHECK(svc_nearest_far(pts, 0, 2, right) == -1, "svc_nearest_far: no points");
	CHECK(svc_kd_build(&svc_env_malloc, pts, 0, 2, &empty, &err) == SVC_OK, "build empty");
	CHECK(svc_kd_nearest(&empty, right, NULL) == -1, "an empty tree gives -1");
	svc_kd_free(&svc_env_malloc, &t);
	svc_kd_free(&svc_env_malloc, &empty);
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
	/* many equal distances where the cell bound prunes; past its 64 axes */
	check_against_scan(3000, 8, 300, 7, true);
	check_against_scan(200, 70, 50, 8, false);
	check_against_scan(200, 70, 50, 9, true);
	check_far_queries();
	return unit_summary("test_kdtree");
}
