/*
 * test_label.c - unit tests of the labelling core (label.c)
 *
 * Models are built by hand, as the LMOC optimum looks: support vectors on
 * (some of) the training rows, alpha_i = C / N, offset 1, and gamma a
 * multiple of 1 / median squared distance.  Data come from the core PRNG,
 * so every run sees the same rows.
 */
#include "unit.h"
#include "label.h"
#include "label_trajectory.h"
#include "score.h"
#include "kernel.h"
#include "model_codec.h"
#include "fit.h"
#include "options_text.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * data seeds of the labelled anomalous cluster (seed 1 joined all blobs);
 * under valgrind the first VALGRIND_SEEDS only: their smo fits of 3,000
 * rows took most of the suite's 20 CPU minutes there, and every seed's
 * check runs in the sanitizer and plain builds
 */
#define LAB_CLUSTER_SEEDS 8
#define LAB_RING_SEEDS 6
#define VALGRIND_SEEDS 2

/* ---------------------------------------------------------------- */
/* Data                                                              */
/* ---------------------------------------------------------------- */

typedef struct Data
{
	int64_t		n;
	int32_t		d;
	double	   *x;				/* [n * d] */
	int32_t    *truth;			/* [n] class 1..k */
	double		med;			/* median squared distance, once known */
} Data;

static void
data_alloc(Data *D, int64_t n, int32_t d)
{
	D->n = n;
	D->d = d;
	D->med = -1;
	D->x = calloc((size_t) (n * d), sizeof(double));
	D->truth = calloc((size_t) n, sizeof(int32_t));
}

static void
data_free(Data *D)
{
	free(D->x);
	free(D->truth);
}

/* Standard normal by Box-Muller (one of the pair). */
static double
gauss(SvcRng *r)
{
	double		u = svc_rng_unit(r);
	double		v = svc_rng_unit(r);

	return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * M_PI * v);
}

/* k blobs of per rows each, at the given 2-D centres, sd s. */
static void
make_blobs(Data *D, SvcRng *r, const double *centres, int k, int per, double s)
{
	data_alloc(D, (int64_t) k * per, 2);
	for (int c = 0; c < k; c++)
		for (int i = 0; i < per; i++)
		{
			int64_t		row = (int64_t) c * per + i;

			D->x[row * 2] = centres[2 * c] + s * gauss(r);
			D->x[row * 2 + 1] = centres[2 * c + 1] + s * gauss(r);
			D->truth[row] = c + 1;
		}
}

/* Two concentric rings of radii 1 and 3, noise s. */
static void
make_rings(Data *D, SvcRng *r, int n_in, int n_out, double s)
{
	data_alloc(D, n_in + n_out, 2);
	for (int64_t i = 0; i < D->n; i++)
	{
		double		rad = i < n_in ? 1.0 : 3.0;
		double		t = 2.0 * M_PI * svc_rng_unit(r);

		D->x[i * 2] = rad * cos(t) + s * gauss(r);
		D->x[i * 2 + 1] = rad * sin(t) + s * gauss(r);
		D->truth[i] = i < n_in ? 1 : 2;
	}
}

/* The usual two interleaved half circles, noise s. */
static void
make_moons(Data *D, SvcRng *r, int per, double s)
{
	data_alloc(D, 2 * per, 2);
	for (int64_t i = 0; i < D->n; i++)
	{
		double		t = M_PI * svc_rng_unit(r);

		if (i < per)
		{
			D->x[i * 2] = cos(t);
			D->x[i * 2 + 1] = sin(t);
			D->truth[i] = 1;
		}
		else
		{
			D->x[i * 2] = 1.0 - cos(t);
			D->x[i * 2 + 1] = 0.5 - sin(t);
			D->truth[i] = 2;
		}
		D->x[i * 2] += s * gauss(r);
		D->x[i * 2 + 1] += s * gauss(r);
	}
}

/* ---------------------------------------------------------------- */
/* Models                                                            */
/* ---------------------------------------------------------------- */

/* Median squared distance over all pairs of (up to 400 of) the rows. */
static double
median_sqdist(Data *D)
{
	int64_t		n = D->n < 400 ? D->n : 400;
	int64_t		np = n * (n - 1) / 2,
				k = 0;
	double	   *v;
	double		med;

	if (D->med >= 0)
		return D->med;
	if (np == 0)
		return 0.0;
	v = malloc(sizeof(double) * (size_t) np);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = i + 1; j < n; j++)
		{
			/* spread the sample over the whole set */
			int64_t		a = i * D->n / n,
						b = j * D->n / n;

			v[k++] = svc_sqdist(D->x + a * D->d, D->x + b * D->d, D->d);
		}
	qsort(v, (size_t) np, sizeof(double), svc_cmp_double);
	med = v[np / 2];
	free(v);
	D->med = med;
	return med;
}

/*
 * A model with support vectors on every stride-th row, alpha = C / n_sv,
 * offset 1 and gamma = factor / median squared distance.
 */
static void
make_model(SvcModel *m, Data *D, int stride, double factor, double C,
		   SvcLabeling labeling)
{
	int32_t		n_sv = (int32_t) ((D->n + stride - 1) / stride);
	double		med = median_sqdist(D);

	memset(m, 0, sizeof(*m));
	svc_options_default(&m->opt);
	m->opt.labeling = labeling;
	m->dims = D->d;
	m->n_sv = n_sv;
	m->sv = malloc(sizeof(double) * (size_t) n_sv * (size_t) D->d);
	m->alpha = malloc(sizeof(double) * (size_t) n_sv);
	for (int32_t i = 0; i < n_sv; i++)
	{
		memcpy(m->sv + (size_t) i * D->d, D->x + (size_t) i * stride * D->d,
			   sizeof(double) * (size_t) D->d);
		m->alpha[i] = C / n_sv;
	}
	m->gamma = med > 0 ? factor / med : 1.0;
	m->offset = 1.0;
}

/* ---------------------------------------------------------------- */
/* Scores                                                            */
/* ---------------------------------------------------------------- */

/* Contingency table of labels (1..ka) against truth (1..kb). */
static int64_t *
contingency(const int32_t *lab, const int32_t *truth, int64_t n, int ka, int kb)
{
	int64_t    *t = calloc((size_t) (ka * kb), sizeof(int64_t));

	for (int64_t i = 0; i < n; i++)
		t[(lab[i] - 1) * kb + truth[i] - 1]++;
	return t;
}

/* Purity: (1/N) sum over found clusters of their largest class. */
static double
purity(const int32_t *lab, const int32_t *truth, int64_t n, int ka, int kb)
{
	int64_t    *t = contingency(lab, truth, n, ka, kb);
	int64_t		s = 0;

	for (int a = 0; a < ka; a++)
	{
		int64_t		mx = 0;

		for (int b = 0; b < kb; b++)
			if (t[a * kb + b] > mx)
				mx = t[a * kb + b];
		s += mx;
	}
	free(t);
	return (double) s / (double) n;
}

/* NMI with the arithmetic mean of the entropies. */
static double
nmi(const int32_t *lab, const int32_t *truth, int64_t n, int ka, int kb)
{
	int64_t    *t = contingency(lab, truth, n, ka, kb);
	double		ha = 0,
				hb = 0,
				mi = 0;

	for (int a = 0; a < ka; a++)
	{
		int64_t		ra = 0;

		for (int b = 0; b < kb; b++)
			ra += t[a * kb + b];
		if (ra)
			ha -= (double) ra / n * log((double) ra / n);
	}
	for (int b = 0; b < kb; b++)
	{
		int64_t		cb = 0;

		for (int a = 0; a < ka; a++)
			cb += t[a * kb + b];
		if (cb)
			hb -= (double) cb / n * log((double) cb / n);
		for (int a = 0; a < ka; a++)
		{
			int64_t		ra = 0;

			if (!t[a * kb + b])
				continue;
			for (int bb = 0; bb < kb; bb++)
				ra += t[a * kb + bb];
			mi += (double) t[a * kb + b] / n *
				log((double) t[a * kb + b] * n / ((double) ra * cb));
		}
	}
	free(t);
	return (ha + hb) > 0 ? 2 * mi / (ha + hb) : 1.0;
}

/* Share of rows whose predicted id equals the training id. */
static double
agreement(const SvcModel *m, const Data *D, const int32_t *labels)
{
	SvcLabelWork w;
	SvcError	err;
	int64_t		same = 0;

	if (svc_label_work_init(&svc_env_malloc, m, &w, &err) != SVC_OK)
		return 0.0;
	for (int64_t i = 0; i < D->n; i++)
		if (svc_label_predict(m, D->x + i * D->d, &w, NULL) == labels[i])
			same++;
	svc_label_work_free(&svc_env_malloc, &w);
	return (double) same / (double) D->n;
}

/* Ids are 1..K, sizes decrease and add up to n, labels match sizes. */
static bool
ids_consistent(const SvcModel *m, const int32_t *labels, int64_t n)
{
	int64_t    *cnt;
	bool		ok = m->n_clusters >= 1 && m->n_eq >= m->n_clusters;

	if (!ok)
		return false;
	cnt = calloc((size_t) m->n_clusters, sizeof(int64_t));
	for (int64_t i = 0; i < n; i++)
	{
		if (labels[i] < 1 || labels[i] > m->n_clusters)
		{
			free(cnt);
			return false;
		}
		cnt[labels[i] - 1]++;
	}
	for (int32_t k = 0; k < m->n_clusters; k++)
	{
		if (cnt[k] != m->cluster_size[k] || cnt[k] == 0)
			ok = false;
		if (k > 0 && m->cluster_size[k] > m->cluster_size[k - 1])
			ok = false;
	}
	for (int32_t i = 0; i < m->n_eq; i++)
		if (m->eq_cluster[i] < 1 || m->eq_cluster[i] > m->n_clusters)
			ok = false;
	free(cnt);
	return ok;
}

static void
free_model(SvcModel *m)
{
	svc_model_free(&svc_env_malloc, m);
}

/*
 * Label D with m, check the bookkeeping, and print what was found.
 * Returns the number of clusters (0 on failure); labels must hold n ids.
 */
static int
label_and_report(const char *name, SvcModel *m, const Data *D, int kb,
				 int32_t *labels, double *pur, double *agree)
{
	SvcError	err;
	SvcStatus	st;
	double		p,
				a,
				v;

	svc_error_clear(&err);
	st = svc_label_train(&svc_env_malloc, m, D->x, D->n, labels, &err);
	CHECK(st == SVC_OK, "%s: svc_label_train failed: %s", name, err.message);
	if (st != SVC_OK)
		return 0;
	CHECK(ids_consistent(m, labels, D->n), "%s: ids, sizes and labels disagree", name);
	p = purity(labels, D->truth, D->n, m->n_clusters, kb);
	v = nmi(labels, D->truth, D->n, m->n_clusters, kb);
	a = agreement(m, D, labels);
	printf("  %-22s n=%-5lld eq=%-4d clusters=%-3d purity=%.3f nmi=%.3f predict agrees %.4f eps=%.4g\n",
		   name, (long long) D->n, m->n_eq, m->n_clusters, p, v, a, m->epsilon);
	if (pur)
		*pur = p;
	if (agree)
		*agree = a;
	return m->n_clusters;
}

/*
 * Label D with m and expect exactly its k classes: that many clusters,
 * each pure, and svc_label_predict agreeing with the labelling.
 */
static void
expect_classes(const char *name, SvcModel *m, const Data *D, int k_true,
			   int32_t *labels)
{
	double		p = 0,
				a = 0;
	int			k = label_and_report(name, m, D, k_true, labels, &p, &a);

	CHECK(k == k_true, "%s: %d clusters, expected %d", name, k, k_true);
	CHECK(p >= 0.99, "%s: purity %.3f", name, p);
	CHECK(a >= 0.99, "%s: predict agrees on %.4f", name, a);
}

/* ---------------------------------------------------------------- */
/* Tests                                                             */
/* ---------------------------------------------------------------- */

static const double blob_centres[] = {0.0, 0.0, 6.0, 0.0, 3.0, 5.0};

static void
test_tree_finds_three_blobs(void)
{
	SvcRng		r;
	Data		D;
	SvcModel	m;
	int32_t    *lab;

	svc_rng_seed(&r, 1);
	make_blobs(&D, &r, blob_centres, 3, 150, 0.6);
	lab = malloc(sizeof(int32_t) * (size_t) D.n);
	make_model(&m, &D, 1, 64.0, 8.0, SVC_LABELING_TREE);
	expect_classes("tree blobs", &m, &D, 3, lab);
	CHECK(m.epsilon > 0, "tree blobs: auto epsilon %g", m.epsilon);
	free_model(&m);

	/* Support vectors on every third row only: same answer. */
	make_model(&m, &D, 3, 64.0, 8.0, SVC_LABELING_TREE);
	expect_classes("tree blobs sv/3", &m, &D, 3, lab);
	free_model(&m);
	free(lab);
	data_free(&D);
}

/*
 * Rings and moons: curved clusters.  The tree never mixes them (purity),
 * but it can cut an arc off: a straight segment between two equilibria on
 * a curved ridge dips below the ridge, and with
 * sparse support vectors the ridge itself is a chain of bumps.  So this
 * asserts purity everywhere and two clusters only for most seeds with
 * support vectors on every row, and prints what was found.
 */
static void
test_tree_rings_and_moons(void)
{
	for (int shape = 0; shape < 2; shape++)
		for (int stride = 1; stride <= 4; stride *= 4)
		{
			int			exact = 0;

			uint64_t	last = under_valgrind() ? 3 : 5;

			for (uint64_t seed = 2; seed < last; seed++)
			{
				SvcRng		r;
				Data		D;
				SvcModel	m;
				int32_t    *lab;
				double		p = 0,
							a = 0;
				int			k;
				char		name[64];

				svc_rng_seed(&r, seed);
				if (shape == 0)
					make_rings(&D, &r, 200, 400, 0.1);
				else
					make_moons(&D, &r, 250, 0.08);
				snprintf(name, sizeof(name), "tree %s sv/%d seed %d",
						 shape == 0 ? "rings" : "moons", stride, (int) seed);
				lab = malloc(sizeof(int32_t) * (size_t) D.n);
				make_model(&m, &D, stride, 64.0, 8.0, SVC_LABELING_TREE);
				k = label_and_report(name, &m, &D, 2, lab, &p, &a);
				CHECK(k >= 2 && p >= 0.98, "%s: %d clusters, purity %.3f", name, k, p);
				CHECK(a >= 0.99, "%s: predict agrees on %.4f", name, a);
				exact += k == 2;
				free_model(&m);
				free(lab);
				data_free(&D);
			}
			if (stride == 1 && last == 5)
				CHECK(exact >= 2, "%s: two clusters in only %d of 3 seeds",
					  shape == 0 ? "rings" : "moons", exact);
		}
}

/*
 * Many modes: two 6 x 6 grids of tight blobs, far apart.  The straight
 * segments to each of the 72 equilibria's 3 nearest make a graph in two
 * pieces that only the connecting step joins.
 */
static void
test_tree_many_modes(void)
{
	SvcRng		r;
	Data		D;
	SvcModel	m;
	SvcError	err;
	int32_t    *lab;
	double		centres[2 * 72];
	int			k = 0;

	for (int g = 0; g < 2; g++)
		for (int i = 0; i < 6; i++)
			for (int j = 0; j < 6; j++)
			{
				centres[2 * k] = 10.0 * i + 1000.0 * g;
				centres[2 * k + 1] = 10.0 * j;
				k++;
			}
	svc_rng_seed(&r, 9);
	make_blobs(&D, &r, centres, 72, 15, 0.3);
	lab = malloc(sizeof(int32_t) * (size_t) D.n);
	make_model(&m, &D, 3, 64.0, 8.0, SVC_LABELING_TREE);
	m.gamma = 2.0;				/* sigma 0.5: one mode per blob */
	m.opt.min_cluster_size = 0;	/* the share decides, as svc_options_finish leaves it */
	m.opt.min_cluster_share = 0.0;
	k = label_and_report("tree 72 blobs", &m, &D, 72, lab, NULL, NULL);
	CHECK(k == 72 && m.n_eq == 72, "72 blobs: %d clusters from %d equilibria", k, m.n_eq);
	CHECK(purity(lab, D.truth, D.n, k, 72) == 1.0, "72 blobs: impure");

	/* Every blob is below the minimum size: all merge, across the gap
	 * (each grid alone, 540 rows, stays below 60%). */
	m.opt.min_cluster_share = 0.6;
	CHECK(svc_label_train(&svc_env_malloc, &m, D.x, D.n, lab, &err) == SVC_OK, "%s", err.message);
	CHECK(m.n_clusters == 1, "72 small blobs: %d clusters, expected 1", m.n_clusters);
	free_model(&m);
	free(lab);
	data_free(&D);
}

/* The cut rule: small components merge, separated large ones do not,
 * and touching ones merge when the saddle is high enough. */
static void
test_tree_cut_rule(void)
{
	SvcRng		r;
	Data		D;
	SvcModel	m;
	int32_t    *lab;
	const double far[] = {0.0, 0.0, 20.0, 0.0, 10.0, 30.0};
	const double touching[] = {0.0, 0.0, 2.5, 0.0};
	int			k;

	/* Two big blobs and a 3-row satellite: the satellite joins one. */
	svc_rng_seed(&r, 10);
	make_blobs(&D, &r, far, 3, 100, 0.5);
	D.n = 203;					/* keep 3 rows of the third blob */
	lab = malloc(sizeof(int32_t) * (size_t) D.n);
	make_model(&m, &D, 1, 64.0, 8.0, SVC_LABELING_TREE);
	m.gamma = 2.0;
	k = label_and_report("tree satellite", &m, &D, 3, lab, NULL, NULL);
	CHECK(k == 2, "satellite: %d clusters, expected 2", k);
	CHECK(m.cluster_size[0] == 103 && m.cluster_size[1] == 100,
		  "satellite: sizes %lld %lld", (long long) m.cluster_size[0],
		  (long long) (k > 1 ? m.cluster_size[1] : 0));
	free_model(&m);
	free(lab);
	data_free(&D);

	/* Two overlapping blobs: two modes, but the dip between them is
	 * shallow (about 0.4 of the peaks), so the ratio rule merges them; a
	 * ratio of 1 does not. */
	svc_rng_seed(&r, 11);
	make_blobs(&D, &r, touching, 2, 200, 0.5);
	lab = malloc(sizeof(int32_t) * (size_t) D.n);
	make_model(&m, &D, 1, 64.0, 8.0, SVC_LABELING_TREE);
	m.gamma = 2.0;
	k = label_and_report("tree touching, ratio 0.4", &m, &D, 2, lab, NULL, NULL);
	CHECK(k == 1 && m.n_eq >= 2, "touching blobs: %d clusters from %d equilibria, expected 1 from 2+", k, m.n_eq);
	free_model(&m);
	make_model(&m, &D, 1, 64.0, 8.0, SVC_LABELING_TREE);
	m.gamma = 2.0;
	m.opt.merge_ratio = 1.0;
	k = label_and_report("tree touching r=1", &m, &D, 2, lab, NULL, NULL);
	CHECK(k == 2, "touching blobs, ratio 1: %d clusters, expected 2", k);
	CHECK(purity(lab, D.truth, D.n, k, 2) > 0.95, "touching blobs, ratio 1: purity %.3f",
		  purity(lab, D.truth, D.n, k, 2));
	free_model(&m);
	free(lab);
	data_free(&D);
}

static void
test_paper_finds_three_blobs(void)
{
	SvcRng		r;
	Data		D;
	SvcModel	m;
	int32_t    *lab;

	svc_rng_seed(&r, 1);
	make_blobs(&D, &r, blob_centres, 3, 150, 0.6);
	lab = malloc(sizeof(int32_t) * (size_t) D.n);
	/* A wide kernel and a large C put the blobs inside the domain f >= 0. */
	make_model(&m, &D, 1, 16.0, 32.0, SVC_LABELING_PAPER);
	expect_classes("paper blobs", &m, &D, 3, lab);
	free_model(&m);

	/* A given epsilon is kept; one so small that B_eps is empty falls back
	 * to trajectories from every row. */
	make_model(&m, &D, 1, 16.0, 32.0, SVC_LABELING_PAPER);
	m.opt.epsilon = 1e-12;
	expect_classes("paper blobs eps->0", &m, &D, 3, lab);
	CHECK(m.epsilon == 1e-12, "paper blobs: given epsilon replaced by %g", m.epsilon);
	free_model(&m);
	free(lab);
	data_free(&D);
}

/*
 * Algorithm 3's m = 20 test joining equilibria: three clusters, each two
 * sub-blobs 1.6 apart.  A kernel narrow enough to give every sub-blob its
 * own equilibrium, with a C that keeps the segment between a pair inside
 * the domain f >= 0, must find six or more equilibria but three clusters:
 * the test joined each pair, and left the pairs 6 apart alone.
 */
static void
test_paper_joins_equilibria(void)
{
	static const double centres[] = {0.0, 0.0, 1.6, 0.0, 8.0, 0.0, 9.6, 0.0,
	4.0, 7.0, 5.6, 7.0};
	SvcRng		r;
	Data		D;
	SvcModel	m;
	int32_t    *lab;

	svc_rng_seed(&r, 9);
	make_blobs(&D, &r, centres, 6, 80, 0.35);
	for (int64_t i = 0; i < D.n; i++)
		D.truth[i] = (D.truth[i] + 1) / 2;	/* sub-blobs 1,2 -> 1, ... */
	lab = malloc(sizeof(int32_t) * (size_t) D.n);
	make_model(&m, &D, 1, 100.0, 30.0, SVC_LABELING_PAPER);
	expect_classes("paper joins pairs", &m, &D, 3, lab);
	CHECK(m.n_eq >= 6, "paper joins pairs: %d equilibria, expected one per sub-blob", m.n_eq);
	free_model(&m);
	free(lab);
	data_free(&D);
}

/*
 * svc_label_fill_nearest as svc_assign uses it (pending 0, NULL rows -1):
 * pending rows take their nearest source's label, ties to the lower row,
 * rows below pending stay as they are, and with no source nothing moves.
 */
/*
 * A row so far away that every kernel underflows (its squared distances
 * overflow) has no step to take: it stays put and gets its nearest
 * equilibrium, here the one at 0, not the weighted centre of the support
 * vectors (which the floored exponents would make of equal zeros).
 */
static void
test_far_row_freezes(void)
{
	SvcModel	m;
	SvcError	err;
	SvcLabelWork w = {0};
	const double far_left = -1e200;
	const double near_left = -1e160;

	memset(&m, 0, sizeof(m));
	svc_options_default(&m.opt);
	CHECK(svc_model_alloc(&svc_env_malloc, &m, 1, 2, 2, 2, 1, &err) == SVC_OK, "alloc");
	m.gamma = 1.0;
	m.offset = 0.5;
	m.mul[0] = 1.0;
	m.sv[0] = 0.0;
	m.sv[1] = 20.0;
	m.alpha[0] = 1.0;
	m.alpha[1] = 1.2;			/* the centre of the weights is near 20 */
	m.eq[0] = 0.0;
	m.eq[1] = 20.0;
	m.eq_cluster[0] = 1;
	m.eq_cluster[1] = 2;
	CHECK(svc_label_work_init(&svc_env_malloc, &m, &w, &err) == SVC_OK, "work");
	CHECK(svc_label_predict(&m, &far_left, &w, NULL) == 1 && w.x[0] == far_left,
		  "a row at -1e200 stays put and takes the equilibrium at 0 (at %g)", w.x[0]);
	CHECK(svc_label_predict(&m, &near_left, &w, NULL) == 1, "a row at -1e160 too");
	svc_label_work_free(&svc_env_malloc, &w);
	svc_model_free(&svc_env_malloc, &m);
}

/*
 * assign_rule "auto": a row at the edge of a small cluster whose
 * trajectory climbs to a heavier neighbour (the weights' centre pulls it
 * across) takes the small cluster when its equilibrium is the nearer by
 * more than SVC_ASSIGN_MARGIN (gamma x squared distance), above two
 * columns; in two columns, under "trajectory", or nearer the middle, the
 * trajectory's cluster.  The scorer gives what svc_label_assign gives.
 */
static void
assign_rule_case(int32_t d, SvcAssignRule rule, double x0, int32_t want_traj, int32_t want)
{
	SvcModel	m;
	SvcError	err;
	SvcLabelWork w = {0};
	SvcScorer	s;
	double		x[3] = {x0, 0.0, 0.0};
	double		f;
	int32_t		c_traj,
				c,
				c_scorer;

	memset(&m, 0, sizeof(m));
	svc_options_default(&m.opt);
	m.opt.assign_rule = rule;
	CHECK(svc_model_alloc(&svc_env_malloc, &m, d, 2, 2, 2, 1, &err) == SVC_OK, "alloc");
	m.gamma = 0.5;
	m.offset = 0.5;
	for (int32_t j = 0; j < d; j++)
		m.mul[j] = 1.0;
	/* a light cluster at 0 and a heavy one at 3 on the first axis */
	m.sv[0] = 0.0;
	m.sv[d] = 3.0;
	m.alpha[0] = 0.1;
	m.alpha[1] = 0.9;
	m.eq[0] = 0.0;
	m.eq[d] = 3.0;
	m.eq_cluster[0] = 1;
	m.eq_cluster[1] = 2;
	m.n_clusters = 2;
	CHECK(svc_label_work_init(&svc_env_malloc, &m, &w, &err) == SVC_OK, "work");
	c_traj = svc_label_predict(&m, x, &w, NULL);
	c = svc_label_assign(&m, x, &w, NULL);
	CHECK(svc_scorer_init(&svc_env_malloc, &m, &s, &err) == SVC_OK, "scorer");
	c_scorer = svc_scorer_predict(&s, x, &f);
	CHECK(c_traj == want_traj, "%d-D, %s, row at %g: the trajectory climbs to %d (got %d)", d,
		  svc_assign_rule_name(rule), x0, want_traj, c_traj);
	CHECK(c == want, "%d-D, %s, row at %g: assigned %d (got %d)", d, svc_assign_rule_name(rule),
		  x0, want, c);
	CHECK(c_scorer == c, "%d-D, %s, row at %g: the scorer gives %d as svc_label_assign (got %d)",
		  d, svc_assign_rule_name(rule), x0, c, c_scorer);
	svc_scorer_free(&svc_env_malloc, &s);
	svc_label_work_free(&svc_env_malloc, &w);
	svc_model_free(&svc_env_malloc, &m);
}

static void
test_assign_rule(void)
{
	/* at 1: squared distances 1 and 4, margin 0.5 x 3 = 1.5 */
	assign_rule_case(3, SVC_ASSIGN_AUTO, 1.0, 2, 1);
	assign_rule_case(3, SVC_ASSIGN_TRAJECTORY, 1.0, 2, 2);
	assign_rule_case(2, SVC_ASSIGN_AUTO, 1.0, 2, 2);
	/* at 1.3: 1.69 and 2.89, margin 0.6: the trajectory's */
	assign_rule_case(3, SVC_ASSIGN_AUTO, 1.3, 2, 2);
	/* near the light one's equilibrium: its own either way */
	assign_rule_case(3, SVC_ASSIGN_AUTO, 0.1, 1, 1);
}

static void
test_fill_nearest(void)
{
	/* 1-D rows: sources at 0 (label 5) and 10 (label 7) and 20 (label 5) */
	const double x[] = {0.0, 4.0, 5.0, 6.0, 10.0, 99.0, 20.0, 16.0};
	int32_t		lab[] = {5, 0, 0, 0, 7, -1, 5, 0};
	const int32_t want[] = {5, 5, 5, 7, 7, -1, 5, 5};
	int32_t		none[] = {0, -1, 0};
	int64_t		ns;
	SvcError	err;
	bool		same = true;

	CHECK(svc_label_fill_nearest(&svc_env_malloc, x, 8, 1, lab, 0, &ns, &err) == SVC_OK && ns == 3,
		  "fill: %lld sources", (long long) ns);
	for (int i = 0; i < 8; i++)
		same = same && lab[i] == want[i];
	CHECK(same, "fill: nearest source's label (5 at the tie at 5.0), -1 left alone");
	CHECK(svc_label_fill_nearest(&svc_env_malloc, x, 3, 1, none, 0, &ns, &err) == SVC_OK && ns == 0 &&
		  none[0] == 0 && none[1] == -1 && none[2] == 0, "fill: no source, nothing filled");
}

/*
 * Step 10 of Algorithm 3: each row outside B_eps has the cluster of its
 * nearest B_eps row (checked by brute force against the k-d tree).  With
 * f < 0 everywhere every equilibrium is its own cluster, so the labels
 * are fine-grained and a wrong neighbour would show.
 */
static void
test_paper_nearest_beps(void)
{
	SvcRng		r;
	Data		D;
	SvcModel	m;
	SvcError	err;
	int32_t    *lab;
	bool	   *in;
	int64_t		n_in = 0,
				wrong = 0;

	svc_rng_seed(&r, 12);
	make_moons(&D, &r, 300, 0.1);
	lab = malloc(sizeof(int32_t) * (size_t) D.n);
	in = malloc(sizeof(bool) * (size_t) D.n);
	make_model(&m, &D, 2, 256.0, 1.0, SVC_LABELING_PAPER);
	CHECK(svc_label_train(&svc_env_malloc, &m, D.x, D.n, lab, &err) == SVC_OK, "%s", err.message);
	CHECK(ids_consistent(&m, lab, D.n), "paper moons: inconsistent");
	for (int64_t i = 0; i < D.n; i++)
	{
		in[i] = fabs(svc_model_decision_scaled(&m, D.x + i * 2)) <= m.epsilon;
		n_in += in[i];
	}
	CHECK(n_in >= (int64_t) (0.3 * D.n) && n_in < D.n, "B_eps holds %lld of %lld rows",
		  (long long) n_in, (long long) D.n);
	for (int64_t i = 0; i < D.n; i++)
	{
		double		bd = INFINITY;
		int64_t		bi = -1;

		if (in[i])
			continue;
		for (int64_t j = 0; j < D.n; j++)
		{
			double		t = svc_sqdist(D.x + i * 2, D.x + j * 2, 2);

			if (in[j] && t < bd)
			{
				bd = t;
				bi = j;
			}
		}
		if (lab[i] != lab[bi])
			wrong++;
	}
	CHECK(wrong == 0, "paper moons: %lld rows not labelled as their nearest B_eps row", (long long) wrong);
	printf("  paper moons f<0: %d clusters from %d equilibria, %lld rows in B_eps, predict agrees %.3f\n",
		   m.n_clusters, m.n_eq, (long long) n_in, agreement(&m, &D, lab));
	free_model(&m);
	free(lab);
	free(in);
	data_free(&D);
}

/* The labels of a set do not depend on anything but the inputs. */
static void
test_deterministic(void)
{
	SvcRng		r;
	Data		D;
	SvcModel	m1,
				m2;
	int32_t    *l1,
			   *l2;
	SvcError	err;

	svc_rng_seed(&r, 4);
	make_moons(&D, &r, 200, 0.1);
	l1 = malloc(sizeof(int32_t) * (size_t) D.n);
	l2 = malloc(sizeof(int32_t) * (size_t) D.n);
	make_model(&m1, &D, 2, 64.0, 8.0, SVC_LABELING_TREE);
	make_model(&m2, &D, 2, 64.0, 8.0, SVC_LABELING_TREE);
	CHECK(svc_label_train(&svc_env_malloc, &m1, D.x, D.n, l1, &err) == SVC_OK, "%s", err.message);
	CHECK(svc_label_train(&svc_env_malloc, &m2, D.x, D.n, l2, &err) == SVC_OK, "%s", err.message);
	CHECK(m1.n_eq == m2.n_eq && m1.n_clusters == m2.n_clusters &&
		  memcmp(l1, l2, sizeof(int32_t) * (size_t) D.n) == 0 &&
		  memcmp(m1.eq, m2.eq, sizeof(double) * (size_t) m1.n_eq * 2) == 0,
		  "two runs differ");
	/* Labelling again replaces the arrays without leaking them. */
	CHECK(svc_label_train(&svc_env_malloc, &m1, D.x, D.n, l1, &err) == SVC_OK, "%s", err.message);
	CHECK(memcmp(l1, l2, sizeof(int32_t) * (size_t) D.n) == 0, "relabelling differs");

	/* The labelling survives the model's bytes: same ids after decoding. */
	{
		SvcModel	back;
		uint8_t    *bytes;
		size_t		len;
		SvcLabelWork w;
		int64_t		same = 0;

		m1.solver = SVC_SOLVER_BSGD;
		m1.boundary = SVC_BOUNDARY_HYPERPLANE;
		m1.rows_seen = m1.rows_used = D.n;
		m1.shift = calloc(2, sizeof(double));
		m1.mul = malloc(2 * sizeof(double));
		m1.mul[0] = m1.mul[1] = 1.0;
		len = svc_model_encoded_size(&m1);
		bytes = malloc(len);
		svc_model_encode(&m1, bytes);
		CHECK(svc_model_decode(&svc_env_malloc, bytes, len, &back, &err) == SVC_OK,
			  "decode of a labelled model: %s", err.message);
		svc_label_work_init(&svc_env_malloc, &back, &w, &err);
		for (int64_t i = 0; i < D.n; i++)
			same += svc_label_predict(&back, D.x + i * 2, &w, NULL) == l1[i];
		CHECK(same == D.n, "decoded model: %lld of %lld ids agree", (long long) same, (long long) D.n);
		svc_label_work_free(&svc_env_malloc, &w);
		svc_model_free(&svc_env_malloc, &back);
		free(bytes);
	}
	free_model(&m1);
	free_model(&m2);
	free(l1);
	free(l2);
	data_free(&D);
}

/* Inputs with nothing to separate give one cluster, and nothing breaks. */
static void
test_degenerate(void)
{
	SvcModel	m;
	SvcError	err;
	SvcLabelWork w;
	Data		D;
	int32_t		lab[64];
	double		f;
	SvcRng		r;

	/* One row. */
	data_alloc(&D, 1, 3);
	D.x[0] = 1;
	D.x[1] = 2;
	D.x[2] = 3;
	D.truth[0] = 1;
	make_model(&m, &D, 1, 64.0, 8.0, SVC_LABELING_TREE);
	CHECK(svc_label_train(&svc_env_malloc, &m, D.x, 1, lab, &err) == SVC_OK, "n=1: %s", err.message);
	CHECK(m.n_clusters == 1 && m.n_eq == 1 && lab[0] == 1, "n=1: %d clusters", m.n_clusters);
	svc_label_work_init(&svc_env_malloc, &m, &w, &err);
	CHECK(svc_label_predict(&m, D.x, &w, &f) == 1, "n=1: predict");
	CHECK(fabs(f - (8.0 - 1.0)) < 1e-12, "n=1: decision %g, expected 7", f);
	svc_label_work_free(&svc_env_malloc, &w);
	free_model(&m);
	make_model(&m, &D, 1, 64.0, 8.0, SVC_LABELING_PAPER);
	CHECK(svc_label_train(&svc_env_malloc, &m, D.x, 1, lab, &err) == SVC_OK, "n=1 paper: %s", err.message);
	CHECK(m.n_clusters == 1 && lab[0] == 1, "n=1 paper: %d clusters", m.n_clusters);
	free_model(&m);
	data_free(&D);

	/* All rows identical (median distance 0: gamma falls back to 1). */
	data_alloc(&D, 40, 2);
	for (int i = 0; i < 40; i++)
	{
		D.x[2 * i] = 5;
		D.x[2 * i + 1] = -1;
		D.truth[i] = 1;
	}
	for (int lbl = SVC_LABELING_TREE; lbl <= SVC_LABELING_PAPER; lbl++)
	{
		make_model(&m, &D, 1, 64.0, 8.0, (SvcLabeling) lbl);
		CHECK(svc_label_train(&svc_env_malloc, &m, D.x, D.n, lab, &err) == SVC_OK, "identical: %s", err.message);
		CHECK(m.n_clusters == 1 && m.n_eq == 1 && ids_consistent(&m, lab, D.n),
			  "identical rows (%d): %d clusters, %d equilibria", lbl, m.n_clusters, m.n_eq);
		free_model(&m);
	}
	data_free(&D);

	/* One support vector: one equilibrium at it. */
	svc_rng_seed(&r, 5);
	make_blobs(&D, &r, blob_centres, 3, 20, 0.6);
	make_model(&m, &D, 60, 64.0, 8.0, SVC_LABELING_TREE);
	CHECK(m.n_sv == 1, "one sv: %d", m.n_sv);
	CHECK(svc_label_train(&svc_env_malloc, &m, D.x, D.n, lab, &err) == SVC_OK, "one sv: %s", err.message);
	CHECK(m.n_clusters == 1 && ids_consistent(&m, lab, D.n), "one sv: %d clusters", m.n_clusters);
	CHECK(m.n_eq == 1 && svc_sqdist(m.eq, m.sv, 2) < 1e-12, "one sv: %d equilibria", m.n_eq);
	free_model(&m);

	/* Tiny alphas: the shifted exponents keep the steps exact. */
	make_model(&m, &D, 1, 64.0, 1e-300, SVC_LABELING_TREE);
	CHECK(svc_label_train(&svc_env_malloc, &m, D.x, D.n, lab, &err) == SVC_OK, "tiny alpha: %s", err.message);
	CHECK(ids_consistent(&m, lab, D.n), "tiny alpha: inconsistent");
	printf("  tiny alphas: %d clusters from %d equilibria\n", m.n_clusters, m.n_eq);
	free_model(&m);

	/* Negative alphas (projection makes some): no crash, consistent. */
	make_model(&m, &D, 1, 64.0, 8.0, SVC_LABELING_TREE);
	for (int i = 0; i < m.n_sv; i += 3)
		m.alpha[i] = -m.alpha[i] * 1.5;
	CHECK(svc_label_train(&svc_env_malloc, &m, D.x, D.n, lab, &err) == SVC_OK, "negative alpha: %s", err.message);
	CHECK(ids_consistent(&m, lab, D.n), "negative alpha: inconsistent");
	printf("  negative alphas: %d clusters from %d equilibria, predict agrees %.3f\n",
		   m.n_clusters, m.n_eq, agreement(&m, &D, lab));
	free_model(&m);
	make_model(&m, &D, 1, 64.0, 8.0, SVC_LABELING_TREE);
	for (int i = 0; i < m.n_sv; i++)
		m.alpha[i] = -m.alpha[i];	/* all negative: every step is refused */
	CHECK(svc_label_train(&svc_env_malloc, &m, D.x, D.n, lab, &err) == SVC_OK, "all negative: %s", err.message);
	CHECK(ids_consistent(&m, lab, D.n), "all negative: inconsistent");
	free_model(&m);
	data_free(&D);

	/* One dimension: two groups on a line. */
	data_alloc(&D, 60, 1);
	for (int i = 0; i < 60; i++)
	{
		D.x[i] = (i < 30 ? 0.0 : 10.0) + 0.01 * i;
		D.truth[i] = i < 30 ? 1 : 2;
	}
	make_model(&m, &D, 1, 64.0, 8.0, SVC_LABELING_TREE);
	CHECK(svc_label_train(&svc_env_malloc, &m, D.x, D.n, lab, &err) == SVC_OK, "1-d: %s", err.message);
	CHECK(m.n_clusters == 2 && ids_consistent(&m, lab, D.n) &&
		  purity(lab, D.truth, D.n, m.n_clusters, 2) == 1.0, "1-d: %d clusters", m.n_clusters);
	free_model(&m);
	data_free(&D);
}

/* Bad inputs are refused with an error, not a crash. */
static void
test_bad_inputs(void)
{
	SvcModel	m;
	SvcError	err;
	Data		D;
	SvcRng		r;

	svc_rng_seed(&r, 6);
	make_blobs(&D, &r, blob_centres, 3, 10, 0.6);
	make_model(&m, &D, 1, 64.0, 8.0, SVC_LABELING_TREE);
	CHECK(svc_label_train(&svc_env_malloc, &m, D.x, 0, NULL, &err) == SVC_ERR_INVALID_INPUT, "n=0 accepted");
	D.x[7] = NAN;
	CHECK(svc_label_train(&svc_env_malloc, &m, D.x, D.n, NULL, &err) == SVC_ERR_INVALID_INPUT, "NaN accepted");
	D.x[7] = 0;
	m.gamma = 0;
	CHECK(svc_label_train(&svc_env_malloc, &m, D.x, D.n, NULL, &err) == SVC_ERR_INTERNAL, "gamma 0 accepted");
	CHECK(m.n_eq == 0 && m.eq == NULL, "a failed call changed the model");
	free_model(&m);
	data_free(&D);
}

/* A labelling job for the failure tests: a data set and a model recipe. */
typedef struct Job
{
	const char *name;
	Data	   *D;
	int			stride;			/* support vectors on every stride-th row */
	double		factor;
	double		C;
	double		gamma;			/* overrides factor when > 0 */
	double		share;			/* min_cluster_share */
	SvcLabeling labeling;
} Job;

static void
job_model(const Job *j, SvcModel *m)
{
	make_model(m, j->D, j->stride, j->factor, j->C, j->labeling);
	if (j->gamma > 0)
		m->gamma = j->gamma;
	m->opt.min_cluster_share = j->share;
	m->opt.min_cluster_size = 0;	/* the share decides */
}

/*
 * Run the job with the interrupt hook firing at check k (fail_alloc
 * false) or the allocator failing at allocation k (true), for k = 0, 1,
 * ... until it succeeds; each failure must report the right status, free
 * every block and leave the model alone.  Returns the number of checks
 * or allocations, or -1 when one went wrong.
 */
/* FNV-1a over n bytes, continuing from h. */
static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * UINT64_C(1099511628211);
	return h;
}

/* A labelling's arrays (their addresses and contents) and counts. */
static uint64_t
labelling_hash(const SvcModel *m)
{
	size_t		ne = (size_t) m->n_eq,
				nk = (size_t) m->n_clusters,
				ned = (size_t) m->n_edges;
	const void *ptrs[8] = {m->eq, m->eq_cluster, m->eq_f, m->eq_rows, m->cluster_size,
	m->edge_a, m->edge_b, m->edge_f};
	uint64_t	h = UINT64_C(14695981039346656037);

	h = fnv(h, ptrs, sizeof(ptrs));
	h = fnv(h, &m->n_eq, sizeof(m->n_eq));
	h = fnv(h, &nk, sizeof(nk));
	h = fnv(h, &ned, sizeof(ned));
	h = fnv(h, &m->epsilon, sizeof(m->epsilon));
	h = fnv(h, m->eq, sizeof(double) * ne * (size_t) m->dims);
	h = fnv(h, m->eq_cluster, sizeof(int32_t) * ne);
	h = fnv(h, m->eq_f, sizeof(double) * ne);
	h = fnv(h, m->eq_rows, sizeof(int64_t) * ne);
	h = fnv(h, m->cluster_size, sizeof(int64_t) * nk);
	h = fnv(h, m->edge_a, sizeof(int32_t) * ned);
	h = fnv(h, m->edge_b, sizeof(int32_t) * ned);
	return fnv(h, m->edge_f, sizeof(double) * ned);
}

/*
 * With relabel, the model is first labelled with no limit, and the failing
 * call labels it again: it must keep its first labelling, arrays and all
 * (label.h's promise), rather than come back empty.
 */
static long
fail_everywhere(const Job *j, bool fail_alloc, bool relabel)
{
	SvcError	err;
	bool		bad = false;
	long		k;

	for (k = 0;; k++)
	{
		UnitBudget	b = {LONG_MAX, 0};
		SvcEnv		env = {.alloc = unit_counted_alloc, .release = unit_counted_free, .interrupt = unit_stop_after, .realloc = unit_counted_realloc, .ctx = &b};
		SvcModel	m;
		SvcStatus	st;
		uint64_t	before = 0;
		long		live_before = 0;

		if (fail_alloc)
		{
			env.alloc = unit_fail_after_alloc;
			env.realloc = unit_fail_after_realloc;
			env.interrupt = NULL;
		}
		job_model(j, &m);
		if (relabel)
		{
			if (svc_label_train(&env, &m, j->D->x, j->D->n, NULL, &err) != SVC_OK || m.n_eq < 1)
			{
				free_model(&m);
				return -1;
			}
			live_before = b.live;
		}
		before = labelling_hash(&m);
		b.left = k;
		st = svc_label_train(&env, &m, j->D->x, j->D->n, NULL, &err);
		if (st == SVC_OK)
		{
			svc_model_free_labelling(&env, &m);
			free_model(&m);
			if (b.live != 0)
				bad = true;
			break;
		}
		if (st != (fail_alloc ? SVC_ERR_NOMEM : SVC_ERR_INTERRUPTED) ||
			b.live != live_before || labelling_hash(&m) != before ||
			(!relabel && (m.eq != NULL || m.n_eq != 0)))
			bad = true;
		svc_model_free_labelling(&env, &m);
		free_model(&m);
		if (b.live != 0)
			bad = true;
	}
	return bad ? -1 : k;
}

/*
 * Interrupting at every possible point, and failing every possible
 * allocation, on jobs that between them run every path: the moons
 * tree, the 72-blob tree with its connecting step, Algorithm 3
 * with its k-d tree.  ASan checks the frees as well as the live count.
 */
static void
test_interrupt_and_nomem(void)
{
	SvcRng		r;
	Data		moons,
				grid;
	double		centres[2 * 72];
	int			k = 0;

	svc_rng_seed(&r, 7);
	make_moons(&moons, &r, 100, 0.08);
	for (int g = 0; g < 2; g++)
		for (int i = 0; i < 6; i++)
			for (int j = 0; j < 6; j++, k++)
			{
				centres[2 * k] = 10.0 * i + 1000.0 * g;
				centres[2 * k + 1] = 10.0 * j;
			}
	make_blobs(&grid, &r, centres, 72, 6, 0.3);
	{
		const Job	jobs[] = {
			{"tree, moons", &moons, 1, 64.0, 8.0, 0, 0.03, SVC_LABELING_TREE},
			/* one support vector per blob keeps this one cheap */
			{"tree, connecting step", &grid, 6, 64.0, 8.0, 2.0, 0.6, SVC_LABELING_TREE},
			{"paper, k-d tree", &moons, 1, 256.0, 1.0, 0, 0.03, SVC_LABELING_PAPER},
		};

		for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
		{
			long		checks = fail_everywhere(&jobs[i], false, false);
			long		allocs = fail_everywhere(&jobs[i], true, false);
			long		rechecks = fail_everywhere(&jobs[i], false, true);
			long		reallocs = fail_everywhere(&jobs[i], true, true);

			CHECK(checks > 0, "%s: an interrupt leaked or misreported (%ld)", jobs[i].name, checks);
			CHECK(allocs > 0, "%s: a failed allocation leaked or misreported (%ld)", jobs[i].name, allocs);
			CHECK(rechecks == checks && reallocs == allocs,
				  "%s: labelling again, a failure lost the first labelling or leaked (%ld, %ld)",
				  jobs[i].name, rechecks, reallocs);
			printf("  %s: stops cleanly at each of %ld interrupt checks and %ld allocations, "
				   "and keeps an earlier labelling\n", jobs[i].name, checks, allocs);
		}
	}
	{
		/* The hook of the brief: always true. */
		UnitBudget	b = {0, 0};
		SvcEnv		env = {.alloc = unit_counted_alloc, .release = unit_counted_free, .interrupt = unit_stop_after, .realloc = unit_counted_realloc, .ctx = &b};
		SvcModel	m;
		SvcError	err;

		make_model(&m, &moons, 1, 64.0, 8.0, SVC_LABELING_TREE);
		CHECK(svc_label_train(&env, &m, moons.x, moons.n, NULL, &err) == SVC_ERR_INTERRUPTED,
			  "always-true hook not obeyed");
		CHECK(b.live == 0, "always-true hook: %ld blocks live", b.live);
		free_model(&m);
	}
	data_free(&moons);
	data_free(&grid);
}

static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * The size svc_assign meets on the paper's largest set: 43,500 rows,
 * 9 dimensions, 100 support vectors.  Prints the speed, asserts only that
 * predict agrees with training.  (These tests build at -O1 with
 * sanitizers: the server build is several times faster.)
 */
static void
bench_predict(void)
{
	const int	n = under_valgrind() ? 4350 : 43500,
				d = 9,
				k = 7,
				n_train = n < 10000 ? n : 10000,
				n_sv = 100;
	SvcRng		r;
	Data		D,
				T;
	SvcModel	m;
	SvcLabelWork w;
	SvcError	err;
	int32_t    *lab;
	double	   *centre;
	double		t0,
				t1,
				t2,
				sink = 0;
	int64_t		same = 0;

	svc_rng_seed(&r, 8);
	data_alloc(&D, n, d);
	centre = malloc(sizeof(double) * k * d);
	for (int c = 0; c < k; c++)
		for (int j = 0; j < d; j++)
			centre[c * d + j] = 4.0 * gauss(&r);
	for (int64_t i = 0; i < n; i++)
	{
		/* unequal cluster shares, as real data have */
		int			c = (int) (svc_rng_below(&r, 100) < 60 ? 0 : svc_rng_below(&r, k));

		for (int j = 0; j < d; j++)
			D.x[i * d + j] = centre[c * d + j] + (0.5 + 0.2 * c) * gauss(&r);
		D.truth[i] = c + 1;
	}
	/* Train on the first n_train rows, support vectors every 100th. */
	T = D;
	T.n = n_train;
	make_model(&m, &T, n_train / n_sv, 64.0, 8.0, SVC_LABELING_TREE);
	lab = malloc(sizeof(int32_t) * (size_t) n);
	t0 = now_sec();
	CHECK(svc_label_train(&svc_env_malloc, &m, T.x, T.n, lab, &err) == SVC_OK, "bench: %s", err.message);
	t1 = now_sec();
	svc_label_work_init(&svc_env_malloc, &m, &w, &err);
	for (int64_t i = 0; i < n; i++)
	{
		double		f;
		int32_t		c = svc_label_predict(&m, D.x + i * d, &w, &f);

		sink += f;
		if (i < n_train && c == lab[i])
			same++;
		lab[i] = c;
	}
	t2 = now_sec();
	svc_label_work_free(&svc_env_malloc, &w);
	CHECK((double) same / n_train >= 0.99, "bench: predict agrees on %.4f", (double) same / n_train);
	printf("  bench: train-label %d rows %.3f s (%d eq, %d clusters, nmi %.3f); "
		   "predict %d rows x %d dims x %d SVs: %.3f s, %.0f ns/row (agree %.4f)%s\n",
		   n_train, t1 - t0, m.n_eq, m.n_clusters,
		   nmi(lab, D.truth, n, m.n_clusters, k), n, d, n_sv, t2 - t1,
		   (t2 - t1) * 1e9 / n, (double) same / n_train, sink == 0 ? " " : "");
	free(lab);
	free(centre);
	free_model(&m);
	data_free(&D);
}

/*
 * smo with labelled anomalies that form a small tight cluster of their own
 * below three blobs: the anomalies' terms push the sphere's f below 0
 * there, and the blobs must still come out as three clusters (the
 * label-blind density of the sphere's tree once joined them all through
 * that region).  Each blob's cluster is that of the equilibrium nearest
 * its centre.
 */
static void
test_labelled_anomaly_cluster(void)
{
	static const double centres[] = {0.0, 0.0, 5.0, 0.0, 2.5, 4.3};
	const int	per = 950,
				n_anom = 150;
	const int64_t n = 3 * per + n_anom;
	const uint64_t seeds = under_valgrind() ? VALGRIND_SEEDS : LAB_CLUSTER_SEEDS;

	for (uint64_t seed = 1; seed <= seeds; seed++)
	{
		SvcRng		r;
		Data		D;
		int8_t	   *lab = calloc((size_t) n, 1);
		SvcOptions	opt;
		SvcModel	m;
		SvcError	err;
		int32_t		cl[3];

		svc_rng_seed(&r, seed);
		make_blobs(&D, &r, centres, 3, per, 0.5);
		D.x = realloc(D.x, sizeof(double) * (size_t) n * 2);
		for (int64_t i = 3 * per; i < n; i++)
		{
			D.x[i * 2] = 2.5 + 0.3 * gauss(&r);
			D.x[i * 2 + 1] = -2.8 + 0.3 * gauss(&r);
		}
		/* 2%: three anomalies and every 50th normal row */
		for (int64_t i = 0; i < 3 * per; i += 50)
			lab[i] = 1;
		for (int64_t i = 3 * per; i < 3 * per + 3; i++)
			lab[i] = -1;
		svc_options_default(&opt);
		CHECK(svc_options_parse("{\"solver\": \"smo\"}", 17, &opt, &err) == SVC_OK,
			  "options: %s", err.message);
		CHECK(svc_fit_rows_labelled(&svc_env_malloc, D.x, lab, n, 2, &opt, &m, &err) == SVC_OK,
			  "labelled fit: %s", err.message);
		for (int c = 0; c < 3; c++)
		{
			double		best = INFINITY;

			cl[c] = -1;
			for (int32_t e = 0; e < m.n_eq; e++)
			{
				double		dx = m.eq[2 * e] / m.mul[0] + m.shift[0] - centres[2 * c];
				double		dy = m.eq[2 * e + 1] / m.mul[1] + m.shift[1] - centres[2 * c + 1];

				if (dx * dx + dy * dy < best)
				{
					best = dx * dx + dy * dy;
					cl[c] = m.eq_cluster[e];
				}
			}
		}
		CHECK(m.n_clusters >= 3 && cl[0] != cl[1] && cl[0] != cl[2] && cl[1] != cl[2],
			  "seed %llu: three blobs and a labelled anomalous cluster give %d clusters, "
			  "the blobs' %d %d %d", (unsigned long long) seed, m.n_clusters, cl[0], cl[1], cl[2]);
		svc_model_free(&svc_env_malloc, &m);
		data_free(&D);
		free(lab);
	}
}

/*
 * Share of rows [lo, hi) in their most common predicted cluster (the
 * model's scaling applied to each row first).
 */
static double
modal_share(const SvcModel *m, const double *x, int64_t lo, int64_t hi)
{
	SvcLabelWork w;
	SvcError	err;
	int64_t		cnt[64] = {0},
				best = 0;

	CHECK(svc_label_work_init(&svc_env_malloc, m, &w, &err) == SVC_OK, "work");
	for (int64_t i = lo; i < hi; i++)
	{
		double		xs[2];
		int32_t		c;

		svc_model_scale_row(m, x + i * 2, xs);
		c = svc_label_predict(m, xs, &w, NULL);
		if (c >= 0 && c < 64)
			best = ++cnt[c] > best ? cnt[c] : best;
	}
	svc_label_work_free(&svc_env_malloc, &w);
	return (double) best / (double) (hi - lo);
}

/*
 * smo, two blobs and a ring of anomalies around the first, 8 of them and
 * every 20th normal row labelled: neither blob splits more than without
 * the labels.  The sphere's tree once set every row with f < 0 to height
 * 0, the tail rows of the far blob too, whose basins then split off (seed
 * 3: the far blob 1.000 -> 0.979 in one cluster); only the labelled
 * anomalies' share of a row's kernel sum now lowers its density.
 */
static void
test_labelled_ring_keeps_blobs(void)
{
	const int	per = 1425,
				n_anom = 150;
	const int64_t n = 2 * per + n_anom;
	const uint64_t seeds = under_valgrind() ? VALGRIND_SEEDS : LAB_RING_SEEDS;

	for (uint64_t seed = 1; seed <= seeds; seed++)
	{
		SvcRng		r;
		double	   *x = malloc(sizeof(double) * (size_t) n * 2);
		int8_t	   *lab = calloc((size_t) n, 1);
		SvcOptions	opt;
		SvcModel	m;
		SvcError	err;
		double		unl[2],
					with[2];

		svc_rng_seed(&r, seed);
		for (int64_t i = 0; i < 2 * per; i++)
		{
			x[i * 2] = (i < per ? 0.0 : 6.0) + 0.5 * gauss(&r);
			x[i * 2 + 1] = 0.5 * gauss(&r);
		}
		for (int64_t i = 2 * per; i < n; i++)
		{
			double		rad = 1.3 + 0.6 * svc_rng_unit(&r);
			double		t = 2.0 * M_PI * svc_rng_unit(&r);

			x[i * 2] = rad * cos(t);
			x[i * 2 + 1] = rad * sin(t);
		}
		for (int64_t i = 0; i < 2 * per; i += 20)
			lab[i] = 1;
		for (int64_t i = 2 * per; i < 2 * per + 8; i++)
			lab[i] = -1;
		svc_options_default(&opt);
		CHECK(svc_options_parse("{\"solver\": \"smo\"}", 17, &opt, &err) == SVC_OK,
			  "options: %s", err.message);
		for (int pass = 0; pass < 2; pass++)
		{
			double	   *share = pass ? with : unl;

			CHECK(svc_fit_rows_labelled(&svc_env_malloc, x, pass ? lab : NULL, n, 2, &opt,
										&m, &err) == SVC_OK, "fit: %s", err.message);
			share[0] = modal_share(&m, x, 0, per);
			share[1] = modal_share(&m, x, per, 2 * per);
			svc_model_free(&svc_env_malloc, &m);
		}
		CHECK(with[0] >= unl[0] && with[1] >= unl[1],
			  "seed %llu: a labelled ring splits the blobs: %.4f %.4f in one cluster, "
			  "%.4f %.4f without labels", (unsigned long long) seed, with[0], with[1],
			  unl[0], unl[1]);
		free(x);
		free(lab);
	}
}

int
main(void)
{
	test_tree_finds_three_blobs();
	test_tree_rings_and_moons();
	test_tree_many_modes();
	test_tree_cut_rule();
	test_paper_finds_three_blobs();
	test_paper_joins_equilibria();
	test_paper_nearest_beps();
	test_fill_nearest();
	test_far_row_freezes();
	test_assign_rule();
	test_deterministic();
	test_degenerate();
	test_bad_inputs();
	test_interrupt_and_nomem();
	test_labelled_anomaly_cluster();
	test_labelled_ring_keeps_blobs();
	bench_predict();
	return unit_summary("test_label");
}
