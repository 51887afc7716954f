/*
 * test_vec8.c - the scorer's vector helpers: exp8p against libm's exp
 * within the bound the scorer's error allowance uses, over the whole range
 * it is called on, and the horizontal sum and maximum
 */
#include <float.h>
#include <math.h>

#include "unit.h"
#include "vec8.h"

#define U DBL_EPSILON

static uint64_t rng = 88172645463325252ULL;

/*
 * Half an ulp of slack for the reference where long double is no wider
 * than double (valgrind computes x87 arithmetic in doubles): expl is then
 * only as good as exp.
 */
static long double ref_slack;

static void
set_ref_slack(void)
{
	volatile long double one = 1.0L;

	ref_slack = (one + 0x1p-60L == one) ? U / 2 : 0.0L;
}

static double
uniform(double lo, double hi)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return lo + (hi - lo) * ((rng >> 11) * (1.0 / 9007199254740992.0));
}

/*
 * The largest error of exp8p on [lo, hi] against expl, in units of the
 * documented bound (1 + 2|x|/3) U exp(x); and whether every value was
 * finite and normal.
 */
static double
worst_ratio(double lo, double hi, int n, bool *normal)
{
	double		worst = 0.0;

	*normal = true;
	for (int i = 0; i < n; i++)
	{
		v8			x,
					y;

		for (int k = 0; k < 8; k++)
			x[k] = uniform(lo, hi);
		y = exp8p(&x);
		for (int k = 0; k < 8; k++)
		{
			long double ref = expl((long double) x[k]);
			long double bound = ((1.0L + 2.0L * fabsl((long double) x[k]) / 3.0L) * U + ref_slack) * ref;
			double		r = (double) (fabsl((long double) y[k] - ref) / bound);

			if (!isnormal(y[k]))
				*normal = false;
			worst = r > worst ? r : worst;
		}
	}
	return worst;
}

static void
test_exp8p(void)
{
	static const double ranges[][2] = {
		{-1, 1}, {-10, -1}, {-40, -10}, {-200, -40}, {-708, -200}, {0, 40}, {40, 700}
	};

	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
	{
		bool		normal;
		double		r = worst_ratio(ranges[i][0], ranges[i][1], 20000, &normal);

		CHECK(r <= 1.0, "exp8p on [%g, %g]: error %.3g of its bound", ranges[i][0], ranges[i][1], r);
		CHECK(normal, "exp8p on [%g, %g]: a value not finite and normal", ranges[i][0], ranges[i][1]);
	}
	{
		/* the ends of the range, the integers' and the half-integers' edges */
		v8			x = {0.0, -708.0, 700.0, -700.0, 40.0, M_LN2 / 2, -M_LN2 / 2, 1e-300};
		v8			y = exp8p(&x);

		CHECK(y[0] == 1.0, "exp8p(0) = %.17g", y[0]);
		for (int k = 1; k < 8; k++)
		{
			long double ref = expl((long double) x[k]);

			CHECK(isnormal(y[k]) &&
				  fabsl((long double) y[k] - ref) <=
				  ((1.0L + 2.0L * fabsl((long double) x[k]) / 3.0L) * U + ref_slack) * ref,
				  "exp8p(%.17g) = %.17g, expl gives %.17Lg", x[k], y[k], ref);
		}
	}
}

static void
test_horizontal(void)
{
	double		a[8] = {3.0, -1.0, 7.5, 2.0, -9.0, 7.25, 0.5, 1.0};
	v8			v = load8(a),
				m;
	double		back[8];

	CHECK(hsum8p(&v) == 11.25, "hsum8p = %g", hsum8p(&v));
	CHECK(hmax8p(&v) == 7.5, "hmax8p = %g", hmax8p(&v));
	for (int k = 0; k < 8; k++)
		m[k] = k;
	vmax8p(&m, &v);
	store8p(back, &m);
	for (int k = 0; k < 8; k++)
		CHECK(back[k] == (a[k] > k ? a[k] : k), "vmax8p lane %d = %g", k, back[k]);
}

int
main(void)
{
	set_ref_slack();
	test_exp8p();
	test_horizontal();
	return unit_summary("test_vec8");
}
