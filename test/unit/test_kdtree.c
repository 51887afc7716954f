/*
 * test_kdtree.c - the k-d tree finds exactly the nearest point
 */
#include "kdtree.h"
#include "kernel.h"
#include "unit.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/*
 * The queries checked against a scan: all, or under valgrind (where the
 * scans, a distance to every point for each query, take minutes) every
 * QSTEP-th.  Built with --coverage, the share runs every line and branch
 * of the core that all the queries run.
 */
#define QSTEP (under_valgrind() ? QSTEP_VALGRIND : 1)
#define QSTEP_VALGRIND 4

/*
 * svc_kd_knearest's k nearest of q against a scan: exactly the scan's
 * order by (distance, index), the r-th being the smallest pair above the
 * (r-1)-th.  Returns 1 where they differ.
 */
static int
knearest_differs(const SvcKdTree *t, const double *pts, int64_t n, int32_t d,
				 const double *q, int32_t k)
{
	int64_t		idx[16];
	double		kd2[16];
	int32_t		found = svc_kd_knearest(t, q, k, idx, kd2);
	int32_t		expect = n < k ? (int32_t) n : k;
	double		prev_d2 = -1;
	int64_t		prev_i = -1;

	if (found != expect)
		return 1;
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
			return 1;
		prev_d2 = want_d2;
		prev_i = want;
	}
	return 0;
}

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
	for (int k = 0; k < queries; k += QSTEP)
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
		wrong += knearest_differs(&t, pts, n, d, q, 7);
	}
	CHECK(wrong == 0, "n=%lld d=%d: %d of %d queries differ from a scan",
		  (long long) n, d, wrong, (queries + QSTEP - 1) / QSTEP);
	svc_kd_free(&svc_env_malloc, &t);
	free(pts);
	free(q);
}

/*
 * The saddle tree's use: the 11 nearest of every point among the points
 * themselves, in clusters (a leaf's first sums by coordinate spare most
 * distances once 11 are found), on a grid of repeated values (ties at the
 * 11th distance, taken by index), and points some with a coordinate so
 * large that their squared distances overflow to infinity (never within).
 */
static void
check_self_queries(int64_t n, int32_t d, uint64_t seed, int kind)
{
	SvcRng		rng;
	double	   *pts = malloc(sizeof(double) * (size_t) n * d);
	SvcKdTree	t;
	SvcError	err;
	int			wrong = 0;

	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
		{
			double	   *x = pts + (size_t) i * d + j;

			if (kind == 0)
				*x = (double) (i % 5) * 3 + svc_rng_unit(&rng);
			else if (kind == 1)
				*x = (double) svc_rng_below(&rng, 2);
			else
				*x = j == 0 && i % 7 == 0 ? 1e200 * (1 + (double) (i % 3)) : svc_rng_unit(&rng);
		}
	CHECK(svc_kd_build(&svc_env_malloc, pts, n, d, &t, &err) == SVC_OK, "build");
	for (int64_t i = 0; i < n; i += QSTEP)
		wrong += knearest_differs(&t, pts, n, d, pts + (size_t) i * d, 11);
	CHECK(wrong == 0, "self queries n=%lld d=%d kind %d: %d of %lld differ from a scan",
		  (long long) n, d, kind, wrong, (long long) (n + QSTEP - 1) / QSTEP);
	svc_kd_free(&svc_env_malloc, &t);
	free(pts);
}

/* the cut-off svc_kd_other_within allows beyond r2 for rounding */
static double
within_cut(double r2, int32_t d)
{
	return r2 * (1.0 + 8.0 * (d + 2) * DBL_EPSILON) + (d + 1) * DBL_MIN;
}

/*
 * svc_kd_other_within against a scan: true whenever a point of another
 * group is within r2, and only when one is within the cut-off (g 99 and
 * -1: of no point); and
 * svc_kd_kth_bound at least every point's k-th nearest distance.  Groups
 * as clusters (whole subtrees of one group), at random (none), on a grid
 * of repeated points, or side by side (subtrees one group on each side of
 * a split); radii from 0 to past every point.
 */
static void
check_groups(int64_t n, int32_t d, uint64_t seed, int kind)
{
	SvcRng		rng;
	double	   *pts = malloc(sizeof(double) * (size_t) n * d);
	double	   *d2 = malloc(sizeof(double) * (size_t) n);
	int32_t    *group = malloc(sizeof(int32_t) * (size_t) n);
	SvcKdTree	t;
	SvcError	err;
	int			wrong = 0,
				bound_low = 0,
				bound_inf = 0,
				asked = 0;

	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < n; i++)
	{
		group[i] = kind == 0 ? (int32_t) (i % 4) : (int32_t) svc_rng_below(&rng, 3);
		for (int32_t j = 0; j < d; j++)
			pts[(size_t) i * d + j] = kind == 2 ? (double) svc_rng_below(&rng, 3)
				: group[i] * (kind == 0 ? 6.0 : 0.0) + svc_rng_unit(&rng);
		/* two groups side by side, their border across the splits */
		if (kind == 3)
			group[i] = pts[(size_t) i * d] + 0.3 * pts[(size_t) i * d + 1] > 0.6;
	}
	CHECK(svc_kd_build(&svc_env_malloc, pts, n, d, &t, &err) == SVC_OK &&
		  svc_kd_set_groups(&svc_env_malloc, &t, group, &err) == SVC_OK, "build with groups");
	for (int64_t p = 0; p < n; p += QSTEP)
	{
		const double *q = pts + (size_t) p * d;
		double		sorted[17];
		int			ns = 0;

		for (int64_t i = 0; i < n; i++)
		{
			double		x = svc_sqdist(pts + (size_t) i * d, q, d);
			int			at;

			/* the 17 smallest, ascending */
			d2[i] = x;
			if (ns == 17 && !(x < sorted[16]))
				continue;
			at = ns < 17 ? ns++ : 16;
			while (at > 0 && sorted[at - 1] > x)
			{
				sorted[at] = sorted[at - 1];
				at--;
			}
			sorted[at] = x;
		}
		for (int32_t k = 1; k <= 17; k++)
		{
			double		b = svc_kd_kth_bound(&t, p, k);

			if (k <= 16 && k <= n && b < sorted[k - 1])
				bound_low++;
			if (k > 16 && b != HUGE_VAL)
				bound_low++;
			if (k == 11 && n >= 128 && !(b < HUGE_VAL))
				bound_inf++;
		}
		for (int r = 0; r < 5; r++)
		{
			double		r2 = r == 0 ? 0.0 : r == 1 ? sorted[1] : r == 2 ? sorted[10]
				: r == 3 ? svc_kd_kth_bound(&t, p, 11) : 1e3;
			int32_t		g = p % 7 == 0 ? 99 : p % 7 == 1 ? -1 : group[p];
			bool		any = false,
						any_cut = false,
						got = svc_kd_other_within(&t, g, q, r2);

			for (int64_t i = 0; i < n; i++)
				if (group[i] != g)
				{
					any = any || d2[i] <= r2;
					any_cut = any_cut || d2[i] <= within_cut(r2, d);
				}
			wrong += (any && !got) || (got && !any_cut);
			asked++;
		}
	}
	CHECK(wrong == 0, "groups n=%lld d=%d kind %d: %d of %d answers differ from a scan",
		  (long long) n, d, kind, wrong, asked);
	CHECK(bound_low == 0 && bound_inf == 0,
		  "groups n=%lld d=%d kind %d: %d k-th bounds below the k-th distance, %d infinite",
		  (long long) n, d, kind, bound_low, bound_inf);
	svc_kd_free(&svc_env_malloc, &t);
	free(pts);
	free(d2);
	free(group);
}

/*
 * A point with a NaN coordinate has no distance to count: the bound from
 * the other points stays at least the k-th distance among them.
 */
static void
check_kth_bound_nan(void)
{
	double		pts[16 * 2];
	int32_t		group[16] = {0};
	SvcKdTree	t;
	SvcError	err;

	for (int i = 0; i < 16; i++)
	{
		pts[2 * i] = i;
		pts[2 * i + 1] = i == 8 ? NAN : 0.0;
	}
	CHECK(svc_kd_build(&svc_env_malloc, pts, 16, 2, &t, &err) == SVC_OK &&
		  svc_kd_set_groups(&svc_env_malloc, &t, group, &err) == SVC_OK, "build with groups");
	CHECK(svc_kd_kth_bound(&t, 0, 2) >= 1.0 && svc_kd_kth_bound(&t, 0, 15) >= 15.0 * 15.0,
		  "a NaN point counts no distance: bounds %g, %g", svc_kd_kth_bound(&t, 0, 2),
		  svc_kd_kth_bound(&t, 0, 15));
	/* groups given again replace the first */
	CHECK(svc_kd_set_groups(&svc_env_malloc, &t, group, &err) == SVC_OK &&
		  !svc_kd_other_within(&t, 0, pts, 1e300), "one group: none of another");
	svc_kd_free(&svc_env_malloc, &t);
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
	{
		/*
		 * Past a leaf: every distance overflows (the k best are the lowest
		 * indices, at infinity), or a NaN query (k found, each NaN)
		 */
		SvcRng		rng;
		double		many[500 * 2];
		const double far_q[] = {1e200, -1e200};
		SvcKdTree	big;
		int64_t		idx[11];
		double		kd2[11];
		int			nan_d2 = 0;

		svc_rng_seed(&rng, 14);
		for (int i = 0; i < 500 * 2; i++)
			many[i] = svc_rng_unit(&rng);
		CHECK(svc_kd_build(&svc_env_malloc, many, 500, 2, &big, &err) == SVC_OK, "build");
		CHECK(knearest_differs(&big, many, 500, 2, far_q, 11) == 0,
			  "far query: the 11 nearest at overflowed distances, as a scan");
		CHECK(svc_kd_knearest(&big, nan_q, 11, idx, kd2) == 11, "NaN query: 11 found");
		for (int r = 0; r < 11; r++)
			nan_d2 += kd2[r] != kd2[r];
		CHECK(nan_d2 == 11, "NaN query: %d of 11 distances NaN", nan_d2);
		svc_kd_free(&svc_env_malloc, &big);
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
	check_self_queries(3000, 8, 10, 0);
	check_self_queries(700, 5, 11, 1);
	check_self_queries(900, 3, 12, 2);
	check_self_queries(150, 70, 13, 0);
	check_groups(1500, 8, 15, 0);
	check_groups(800, 3, 16, 1);
	check_groups(600, 5, 17, 2);
	check_groups(40, 2, 18, 1);
	check_groups(300, 70, 19, 0);
	check_groups(2000, 2, 20, 3);
	check_groups(1000, 4, 21, 3);
	check_kth_bound_nan();
	check_far_queries();
	return unit_summary("test_kdtree");
}
