/*
 * test_balltree.c - the ball tree's searches give the k-d tree's answers
 * (the same k nearest, the same distances, the same "another group within"),
 * in clustered, random, repeated and near-tie data, low and high dimensions
 */
#include "unit.h"
#include "balltree.h"
#include "kdtree.h"
#include "kernel.h"

#include <math.h>

static uint64_t rng = 88172645463325252ULL;

static double
unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double) (rng >> 11) * (1.0 / 9007199254740992.0);
}

static double
gauss(void)
{
	return sqrt(-2.0 * log(unif() + 1e-300)) * cos(6.283185307179586 * unif());
}

/* kinds of data */
enum
{
	CLUSTERS, RANDOM, REPEATS, GRID
};

static void
make(double *x, int32_t *grp, int64_t n, int32_t d, int kind, int k)
{
	double	   *cent = malloc(sizeof(double) * (size_t) k * d);

	for (int64_t i = 0; i < (int64_t) k * d; i++)
		cent[i] = gauss();
	for (int64_t i = 0; i < n; i++)
	{
		int			c = (int) (unif() * k);

		for (int32_t j = 0; j < d; j++)
		{
			double		v;

			switch (kind)
			{
				case CLUSTERS:
					v = cent[(size_t) c * d + j] + 0.05 * gauss();
					break;
				case RANDOM:
					v = gauss();
					break;
				case REPEATS:
					v = cent[(size_t) c * d + j];	/* every row one of k */
					break;
				default:
					v = floor(unif() * 3.0);	/* a grid: many equal distances */
					break;
			}
			x[(size_t) i * d + j] = v;
		}
		/* groups: the cluster mostly, some rows of another group */
		grp[i] = unif() < 0.9 ? c : (c + 1) % k;
	}
	free(cent);
}

/* Brute force: whether a point of another group is within r2 by svc_sqdist. */
static bool
brute_other(const double *x, const int32_t *grp, int64_t n, int32_t d, int32_t g,
			const double *q, double r2)
{
	for (int64_t i = 0; i < n; i++)
		if (grp[i] != g && svc_sqdist(x + (size_t) i * d, q, d) <= r2)
			return true;
	return false;
}

static void
compare(int64_t n, int32_t d, int kind, int k)
{
	double	   *x = malloc(sizeof(double) * (size_t) n * d);
	int32_t    *grp = malloc(sizeof(int32_t) * (size_t) n);
	SvcKdTree	kd;
	SvcBallTree bt;
	SvcError	err;
	int64_t		bad_knn = 0,
				bad_other = 0,
				bad_bound = 0,
				yes = 0,
				asked = 0;

	make(x, grp, n, d, kind, k);
	CHECK(svc_kd_build(&svc_env_malloc, x, n, d, &kd, &err) == SVC_OK, "kd build");
	CHECK(svc_kd_set_groups(&svc_env_malloc, &kd, grp, &err) == SVC_OK, "kd groups");
	CHECK(svc_ball_build(&svc_env_malloc, x, n, d, grp, &bt, &err) == SVC_OK, "ball build");
	for (int64_t p = 0; p < n; p += (n > 400 ? 3 : 1))
	{
		const double *q = x + (size_t) p * d;
		int64_t		i1[12],
					i2[12];
		double		d1[12],
					d2[12];
		int32_t		f1 = svc_kd_knearest(&kd, q, 11, i1, d1),
					f2 = svc_ball_knearest(&bt, q, 11, i2, d2);
		double		b = svc_ball_kth_bound(&bt, p, 11);

		if (f1 != f2)
			bad_knn++;
		else
			for (int32_t r = 0; r < f1; r++)
				if (i1[r] != i2[r] || d1[r] != d2[r])
				{
					bad_knn++;
					break;
				}
		/* the bound holds the 11th nearest */
		if (f1 == 11 && !(b >= d1[10]))
			bad_bound++;
		/* at the bound, at a fraction of it, and around a point's exact distance */
		{
			double		radii[3] = {b, 0.3 * b, f1 > 3 ? d1[3] : 0.0};

			for (int r = 0; r < 3; r++)
			{
				bool		a = svc_kd_other_within(&kd, grp[p], q, radii[r]),
							c = svc_ball_other_within(&bt, grp[p], q, radii[r]),
							exact = brute_other(x, grp, n, d, grp[p], q, radii[r]);

				/*
				 * true when one is within, false when none is within its
				 * rounding beyond (the k-d tree's contract); and the k-d
				 * tree's answer where the two questions agree
				 */
				if ((exact && !c) ||
					(c && !brute_other(x, grp, n, d, grp[p], q,
									   radii[r] * (1 + 1e-12) + 1e-300)) ||
					(exact && !a))
					bad_other++;
				yes += c;
				asked++;
			}
		}
	}
	CHECK(bad_knn == 0, "n %lld d %d kind %d: %lld queries with other nearest than the k-d tree's",
		  (long long) n, d, kind, (long long) bad_knn);
	CHECK(bad_bound == 0, "n %lld d %d kind %d: %lld k-th bounds below the 11th nearest",
		  (long long) n, d, kind, (long long) bad_bound);
	CHECK(bad_other == 0, "n %lld d %d kind %d: %lld answers of other_within differ",
		  (long long) n, d, kind, (long long) bad_other);
	/* the radii ask both questions: some answers are yes, some no */
	CHECK(kind == REPEATS || kind == GRID || (yes > 0 && yes < asked), "n %lld d %d kind %d: %lld yes of %lld",
		  (long long) n, d, kind, (long long) yes, (long long) asked);
	svc_kd_free(&svc_env_malloc, &kd);
	svc_ball_free(&svc_env_malloc, &bt);
	free(x);
	free(grp);
}

/* Degenerate sizes: empty, one point, fewer than k, fewer than a leaf. */
static void
small_sizes(void)
{
	double		x[40 * 3];
	int32_t		grp[40];
	SvcBallTree bt;
	SvcError	err;

	for (int i = 0; i < 40 * 3; i++)
		x[i] = (double) (i % 7);
	for (int i = 0; i < 40; i++)
		grp[i] = i % 2;
	CHECK(svc_ball_build(&svc_env_malloc, x, 0, 3, grp, &bt, &err) == SVC_OK, "empty");
	CHECK(svc_ball_knearest(&bt, x, 3, NULL, NULL) == 0, "empty knn");
	CHECK(!svc_ball_other_within(&bt, 0, x, 1e300), "empty within");
	svc_ball_free(&svc_env_malloc, &bt);
	for (int64_t n = 1; n <= 40; n += 13)
	{
		int64_t		idx[5];
		double		d2[5];

		CHECK(svc_ball_build(&svc_env_malloc, x, n, 3, grp, &bt, &err) == SVC_OK, "n %lld",
			  (long long) n);
		CHECK(svc_ball_knearest(&bt, x, 5, idx, d2) == (n < 5 ? n : 5), "n %lld knn",
			  (long long) n);
		CHECK(n < 5 ? svc_ball_kth_bound(&bt, 0, 5) == HUGE_VAL :
			  svc_ball_kth_bound(&bt, 0, 5) >= d2[4], "n %lld bound", (long long) n);
		CHECK(svc_ball_other_within(&bt, 0, x, 1e300) == (n > 1), "n %lld within",
			  (long long) n);
		svc_ball_free(&svc_env_malloc, &bt);
	}
}

/*
 * The trees themselves (the point order, the nodes' ranges, children and
 * radii) pinned to the bytes of main at cbd9dd6: a node's farthest point
 * from its centre now comes from the radius's pass instead of a pass of
 * its own, which must pick the same point (the first of ties).  kth_bound
 * depends on the shape, so the shape is part of what a fit sees.
 */
static void
tree_pinned(void)
{
	static const struct
	{
		int64_t		n;
		int32_t		d;
		int			kind;
		int			k;
		uint64_t	hash;
	}			cases[] = {
		{1000, 8, CLUSTERS, 6, UINT64_C(0x59f4a4dce1a013fc)},
		{900, 200, CLUSTERS, 20, UINT64_C(0xbd4f0d49d7303377)},
		{600, 40, REPEATS, 12, UINT64_C(0x0cdb2342cef09a34)},
		{500, 3, GRID, 4, UINT64_C(0x8530347c8306af14)},
	};

	uint64_t	saved = rng;

	rng = 88172645463325252ULL;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		int64_t		n = cases[c].n;
		int32_t		d = cases[c].d;
		double	   *x = malloc(sizeof(double) * (size_t) n * d);
		int32_t    *grp = malloc(sizeof(int32_t) * (size_t) n);
		SvcBallTree bt;
		SvcError	err;
		uint64_t	h = UINT64_C(0xcbf29ce484222325);

		make(x, grp, n, d, cases[c].kind, cases[c].k);
		CHECK(svc_ball_build(&svc_env_malloc, x, n, d, grp, &bt, &err) == SVC_OK, "ball build");
#define MIX(p, len) do { \
	const uint8_t *b_ = (const uint8_t *) (p); \
	for (size_t i_ = 0; i_ < (size_t) (len); i_++) \
		h = (h ^ b_[i_]) * UINT64_C(0x100000001b3); \
} while (0)
		MIX(bt.perm, sizeof(int64_t) * (size_t) n);
		MIX(bt.lo, sizeof(int64_t) * (size_t) bt.n_node);
		MIX(bt.hi, sizeof(int64_t) * (size_t) bt.n_node);
		MIX(bt.left, sizeof(int32_t) * (size_t) bt.n_node);
		MIX(bt.right, sizeof(int32_t) * (size_t) bt.n_node);
		MIX(bt.radius, sizeof(double) * (size_t) bt.n_node);
#undef MIX
		if (getenv("SVC_PRINT_PINS"))
			printf("tree %zu: %d nodes, hash 0x%016llx\n", c, bt.n_node, (unsigned long long) h);
		CHECK(h == cases[c].hash, "tree %zu (%lld x %d): main's tree (0x%016llx)", c,
			  (long long) n, d, (unsigned long long) h);
		svc_ball_free(&svc_env_malloc, &bt);
		free(x);
		free(grp);
	}
	/* the other tests draw their data as before */
	rng = saved;
}

int
main(void)
{
	tree_pinned();
	small_sizes();
	for (int kind = CLUSTERS; kind <= GRID; kind++)
	{
		compare(300, 2, kind, 5);
		compare(1000, 8, kind, 6);
		compare(1500, 40, kind, 12);
		compare(900, 200, kind, 20);
	}
	return unit_summary("test_balltree");
}
