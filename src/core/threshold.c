/* threshold.c - the offset of f from a quantile of f on the training rows (threshold.h) */
#include "threshold.h"
#include "kernel.h"
#include "score.h"

#include <math.h>

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

