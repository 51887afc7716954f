/* threshold.c - the offset of f from a quantile of f on the training rows (threshold.h) */
#include "threshold.h"
#include "kernel.h"
#include "rowtree.h"
#include "score.h"
#include "state_sample.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What the threshold's full sums need: the model, its columns, the rows. */
typedef struct FullSums
{
	const SvcModel *m;
	const double *cols;			/* the support vectors by column, or NULL */
	const double *rows;
} FullSums;

/* The full kernel sum of row i, the one the threshold is taken from. */
static double
full_sum(void *ctx, int64_t i)
{
	const FullSums *fs = ctx;
	const SvcModel *m = fs->m;
	const double *x = fs->rows + (size_t) i * m->dims;

	return fs->cols ? svc_kernel_sum_cols(fs->cols, (size_t) m->n_sv, m->alpha, m->n_sv,
										  m->dims, m->gamma, x) :
		svc_kernel_sum(m->sv, m->alpha, m->sv_gamma, m->n_sv, m->dims, m->gamma, x);
}

/* One value of the mixture's quantile: a row's sum, or the sum an unseen row beside it would have. */
typedef struct MixValue
{
	double		v;
	bool		own;			/* the full sum (weight w), else without (1 - w) */
} MixValue;

static int
mix_cmp(const void *a, const void *b)
{
	double		x = ((const MixValue *) a)->v,
				y = ((const MixValue *) b)->v;

	if (x < y)
		return -1;
	if (x > y)
		return 1;
	return (int) ((const MixValue *) b)->own - (int) ((const MixValue *) a)->own;
}

/*
 * The first value, in the order of f, with weight target rows below it
 * (weights w on the full sums, 1 - w on the others; w = 1 is the plain
 * quantile), or fallback when the weights do not reach it.
 */
static double
mix_quantile(MixValue *val, int64_t count, double w, double target, double fallback)
{
	double		acc = 0.0;

	qsort(val, (size_t) count, sizeof(MixValue), mix_cmp);
	for (int64_t i = 0; i < count; i++)
	{
		double		wi = val[i].own ? w : 1.0 - w;

		if (wi <= 0)
			continue;
		if (acc >= target)
			return val[i].v;
		acc += wi;
	}
	return fallback;
}

/*
 * The squared distance from row i (x) to its nearest other row, HUGE_VAL
 * when there is none: the least svc_sqdist_many of x over the rows but
 * i, as a scan finds it (both trees give its distances).  Of x's two
 * nearest rows, ties to the lower index, one is not i.
 */
static double
row_tree_nearest_other(const SvcRowTree *t, const double *x, int64_t i)
{
	int64_t		idx[2];
	double		d2[2];
	int32_t		found = svc_rowtree_knearest(t, x, 2, idx, d2);

	if (found > 0 && idx[0] != i)
		return d2[0];
	return found > 1 ? d2[1] : HUGE_VAL;
}

/*
 * A sphere trained on a sample of the table's rows: the rows it did not
 * see have no term of their own in f, where each training row that is a
 * support vector has alpha_i K(x_i, x_i) = alpha_i, and the narrower the
 * kernel, the more that term lifts a training row's f over an unseen
 * neighbour's.  The training rows' quantile then leaves more than
 * outlier_fraction of the table outside (blobs_k100_d16: 10.4% at 0.05,
 * 100,000 rows and a 10,000-row sample).  So the offset is the quantile
 * of a mixture: weight w = trained / seen on the training rows' sums, 1 -
 * w on the same sums with each row's own term (support vectors equal to
 * it) as an unseen row beside it would see it, at its nearest other
 * training row: alpha_i K(x_i, nn_i) (without it, the plain leave-one-out
 * sums over-correct where rows are dense for the kernel: 2-D blobs 7.0%
 * -> 2.5%).  As the plain quantile, from few full sums: the scorer's
 * intervals [lo, hi] bracket the mixture's quantile between the one of
 * their lower ends and the one of their upper ends, and only the rows
 * whose values may fall between those two get their full sum (and their
 * nearest other row, from a tree of the rows made for the first of them).
 */
static SvcStatus
threshold_mixture(const SvcEnv *env, SvcModel *m, const double *rows, int64_t n,
				  const double *cols, const double *lo, const double *hi, double w,
				  double *q_out, SvcError *err)
{
	int32_t		d = m->dims;
	int64_t		cap = 1;
	int64_t    *slot;
	MixValue   *val;
	double	   *own;
	SvcRowTree	tree = {0};
	bool		tree_made = false;
	double		target = floor(m->opt.nu * (double) n),
				top = 0.0,
				q_lo,
				q_hi;
	SvcStatus	st = SVC_OK;

	while (cap < 2 * (int64_t) m->n_sv + 2)
		cap *= 2;
	slot = svc_alloc(env, sizeof(int64_t) * (size_t) cap, err);
	val = svc_alloc(env, sizeof(MixValue) * 2 * (size_t) n, err);
	own = svc_alloc(env, sizeof(double) * (size_t) n, err);
	if (!slot || !val || !own)
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}
	/*
	 * the support vectors by their values (open addressing on the sample's
	 * row key: the exact solvers' support vectors are copies of training
	 * rows), each row's own term
	 */
	for (int64_t k = 0; k < cap; k++)
		slot[k] = -1;
	for (int64_t j = 0; j < m->n_sv; j++)
	{
		uint64_t	k = svc_sample_key(m->sv + (size_t) j * d, d, 0) & (uint64_t) (cap - 1);

		while (slot[k] >= 0)
			k = (k + 1) & (uint64_t) (cap - 1);
		slot[k] = j;
	}
	for (int64_t i = 0; i < n; i++)
	{
		const double *x = rows + (size_t) i * d;

		own[i] = 0.0;
		for (uint64_t k = svc_sample_key(x, d, 0) & (uint64_t) (cap - 1); slot[k] >= 0;
			 k = (k + 1) & (uint64_t) (cap - 1))
			if (memcmp(m->sv + (size_t) slot[k] * d, x, sizeof(double) * (size_t) d) == 0)
				own[i] += m->alpha[slot[k]];
		top = fmax(top, hi[i] < HUGE_VAL ? hi[i] : 0.0);
	}
	/* the bracket: every value at its interval's lower end, then its upper end */
	for (int64_t i = 0; i < n; i++)
	{
		val[2 * i] = (MixValue) {lo[i], true};
		val[2 * i + 1] = (MixValue) {lo[i] - own[i], false};
	}
	q_lo = mix_quantile(val, 2 * n, w, target, HUGE_VAL);
	for (int64_t i = 0; i < n; i++)
	{
		val[2 * i] = (MixValue) {hi[i], true};
		val[2 * i + 1] = (MixValue) {hi[i], false};
	}
	q_hi = mix_quantile(val, 2 * n, w, target, HUGE_VAL);
	for (int64_t i = 0; i < n; i++)
	{
		const double *x = rows + (size_t) i * d;
		bool		need_t = lo[i] <= q_hi && hi[i] >= q_lo,
					need_l = own[i] > 0 && lo[i] - own[i] <= q_hi && hi[i] >= q_lo;
		double		t = lo[i],
					l = lo[i] - own[i];

		if ((i & 1023) == 0 && svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			goto done;
		}
		/* a value whose interval lies on one side of the bracket keeps its lower end */
		if (need_t || need_l)
		{
			t = cols ? svc_kernel_sum_cols(cols, (size_t) m->n_sv, m->alpha, m->n_sv, d, m->gamma, x) :
				svc_kernel_sum(m->sv, m->alpha, NULL, m->n_sv, d, m->gamma, x);
			top = fmax(top, t);
			l = t;
			if (own[i] > 0)
				l = t - own[i];
		}
		if (need_l)
		{
			double		nn;

			if (!tree_made)
			{
				tree_made = true;
				st = svc_rowtree_build(env, rows, n, d, NULL, &tree, err);
				if (st != SVC_OK)
					goto done;
			}
			nn = row_tree_nearest_other(&tree, x, i);
			l = t - own[i] * (1.0 - (nn < HUGE_VAL ? exp(-m->gamma * nn) : 0.0));
		}
		val[2 * i] = (MixValue) {t, true};
		val[2 * i + 1] = (MixValue) {l, false};
	}
	*q_out = mix_quantile(val, 2 * n, w, target, top);
	/* never 0: f must stay negative where every kernel term underflows */
	if (!(*q_out > 1e-12 * top) || !(*q_out > 0))
		*q_out = top > 0 ? 1e-12 * top : 1e-300;
done:
	svc_free(env, slot);
	svc_free(env, val);
	svc_free(env, own);
	svc_rowtree_free(env, &tree);
	return st;
}

/*
 * The threshold of f from the data: with the
 * paper's fixed threshold 1 the domain f >= 0 is empty at the widths that
 * separate clusters, so the offset is the nu-quantile of the kernel sums
 * over the training rows, which leaves a share nu of them outside, as in
 * a nu-one-class SVM.  Far from the data the sum vanishes and f < 0.
 *
 * It is the full sums' quantile, from few of them: the scorer's pruned
 * sum of each row comes with a bound on its distance from the full one
 * (doubled here, which also covers rounding the interval's ends), and
 * svc_select_bounded computes the full sums only where those intervals
 * leave the quantile or the largest sum open.
 */
SvcStatus
svc_threshold_set(const SvcEnv *env, SvcModel *m, const double *rows, int64_t n,
				  SvcError *err)
{
	double	   *lo = svc_alloc(env, sizeof(double) * (size_t) n, err);
	double	   *hi = svc_alloc(env, sizeof(double) * (size_t) n, err);
	double	   *work = svc_alloc(env, sizeof(double) * (size_t) n, err);
	SvcScorer	scorer;
	bool		scorer_made = false;
	SvcStatus	st = SVC_ERR_NOMEM;
	FullSums	fs;
	double		q,
				top;
	int64_t		idx,
				asked;

	if (!lo || !hi || !work)
		goto done;
	st = svc_scorer_init(env, m, &scorer, err);
	if (st != SVC_OK)
		goto done;
	scorer_made = true;
	for (int64_t i = 0; i < n; i++)
	{
		double		bound,
					mid = svc_scorer_sum_bound(&scorer, rows + (size_t) i * m->dims, &bound);

		if ((i & 4095) == 0 && svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			goto done;
		}
		if (!(bound < HUGE_VAL) || isnan(mid))
		{
			/* no bound: the full sum decides wherever this row could be */
			lo[i] = -HUGE_VAL;
			hi[i] = HUGE_VAL;
			continue;
		}
		/*
		 * The bound is relative to the terms; below the normal range
		 * their rounding is absolute, half the least subnormal each (a
		 * C so small that the alphas are subnormal): allow one per term.
		 */
		lo[i] = mid - 2.0 * bound - (double) (m->n_sv + 1) * 0x1p-1074;
		hi[i] = mid + 2.0 * bound + (double) (m->n_sv + 1) * 0x1p-1074;
	}

	/* a cold-trained sphere on a sample of the rows seen: the mixture above */
	if (m->boundary == SVC_BOUNDARY_SPHERE && m->sv_gamma == NULL && m->warm_rows_before == 0 &&
		m->rows_seen > n && n > 0)
	{
		st = threshold_mixture(env, m, rows, n, scorer.full.cols, lo, hi,
							   (double) n / (double) m->rows_seen, &q, err);
		if (st == SVC_OK)
			m->offset = q;
		goto done;
	}
	idx = (int64_t) floor(m->opt.nu * (double) n);
	if (idx >= n)
		idx = n - 1;
	/* the scorer's column copy of the support vectors (one width) */
	fs.m = m;
	fs.cols = scorer.full.cols;
	fs.rows = rows;
	st = svc_select_bounded(env, lo, hi, n, idx, full_sum, &fs, work, &q, &top, &asked, err);
	if (st != SVC_OK)
		goto done;
	/* never 0: f must stay negative where every kernel term underflows */
	if (!(q > 1e-12 * top) || !(q > 0))
		q = top > 0 ? 1e-12 * top : 1e-300;
	m->offset = q;
done:
	if (scorer_made)
		svc_scorer_free(env, &scorer);
	svc_free(env, lo);
	svc_free(env, hi);
	svc_free(env, work);
	return st;
}

