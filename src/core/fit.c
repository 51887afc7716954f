/*
 * fit.c - from the aggregate's state to a trained, labelled model
 */
#include "fit.h"
#include "label_complete_graph.h"
#include "label.h"
#include "label_lineage.h"
#include "state.h"
#include "solver.h"
#include "supervision.h"
#include "kernel.h"
#include "bsgd_select.h"
#include "kdtree.h"
#include "model_codec.h"
#include "keep.h"
#include "score.h"
#include "threshold.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tags xored into the seed: each draw has its own stream ("GAMMA", "LABEL"). */
#define SVC_SEED_TAG_GAMMA	UINT64_C(0x47414D4D41)
#define SVC_SEED_TAG_LABEL	UINT64_C(0x4C4142454C)

_Static_assert(SVC_GRAPH_MAX_ROWS <= SVC_LABEL_ROWS,
			   "the complete graph labels every row, never a subset");

/* Scaling from the statistics of every row seen (not only the sample). */
static void
set_scaling(SvcModel *m, const double *mean, const double *stddev,
			const double *min, const double *max)
{
	for (int32_t j = 0; j < m->dims; j++)
	{
		switch (m->opt.scale)
		{
			case SVC_SCALE_STANDARD:
				m->shift[j] = mean[j];
				m->mul[j] = stddev[j] > 0 && isfinite(1.0 / stddev[j]) ? 1.0 / stddev[j] : 1.0;
				break;
			case SVC_SCALE_MINMAX:
				m->shift[j] = min[j];
				m->mul[j] = max[j] > min[j] && isfinite(1.0 / (max[j] - min[j]))
					? 1.0 / (max[j] - min[j]) : 1.0;
				break;
			case SVC_SCALE_NONE:
				m->shift[j] = 0.0;
				m->mul[j] = 1.0;
				break;
		}
	}
}

/*
 * Distances concentrate as d grows: a row's neighbours lie ever closer to
 * the median distance, and 256 / median makes every row its own bump in
 * 4-D and up; 2/d measured best of d^0, d^-0.5, d^-1 and d^-1.5 (iris and
 * 4-50-D synthetic sets).  The concentration follows the dimension the
 * data fill, not the columns: embeddings of 64-768 columns (clusters on a
 * 16-D latent space) and digits (64 columns) needed 8-60 times 2/d, and
 * Gaussian blobs in 32 columns 2-4 times; up to 16 columns 2/d is best
 * (doc/design-notes.md).  So the factor stops at 1/8.
 */
double
svc_gamma_dims_factor(int32_t d, SvcGammaRule rule)
{
	double		grow = d > 2 ? (double) d / 2.0 : 1.0;

	if (rule == SVC_GAMMA_RULE_AUTO && grow > 8.0)
		grow = 8.0;
	return 1.0 / grow;
}

double
svc_gamma_auto(const double *x, int64_t n, int32_t d, SvcGammaRule rule, SvcRng *rng)
{
	enum
	{
		MAX_PAIRS = 4096
	};
	double		dist[MAX_PAIRS];
	int64_t		npairs = 0;
	double		median;

	if (n < 2)
		return 1.0 / d;
	if (n * (n - 1) / 2 <= MAX_PAIRS)
	{
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = i + 1; j < n; j++)
				dist[npairs++] = svc_sqdist(x + (size_t) i * d, x + (size_t) j * d, d);
	}
	else
	{
		while (npairs < MAX_PAIRS)
		{
			int64_t		i = (int64_t) svc_rng_below(rng, (uint64_t) n);
			int64_t		j = (int64_t) svc_rng_below(rng, (uint64_t) n - 1);

			if (j >= i)
				j++;
			dist[npairs++] = svc_sqdist(x + (size_t) i * d, x + (size_t) j * d, d);
		}
	}
	median = svc_select_double(dist, npairs, npairs / 2);
	if (npairs % 2 == 0)
	{
		/* the lower middle: the largest of those selection put before */
		double		lower = dist[0];

		for (int64_t i = 1; i < npairs / 2; i++)
			lower = dist[i] > lower ? dist[i] : lower;
		median = 0.5 * (lower + median);
	}
	if (!(median > 0))
	{
		/*
		 * mostly duplicates: fall back to the mean of the non-zero
		 * distances, summed in ascending order as it always was
		 */
		double		s = 0;
		int64_t		c = 0;

		qsort(dist, (size_t) npairs, sizeof(double), svc_cmp_double);

		for (int64_t i = 0; i < npairs; i++)
			if (dist[i] > 0)
			{
				s += dist[i];
				c++;
			}
		if (c == 0)
			return 1.0 / d;
		median = s / (double) c;
	}
	/* the factor's inverse, so that up to 16 dimensions the bytes are those of 2/d */
	if (d > 2)
		median *= fmin((double) d / 2.0, rule == SVC_GAMMA_RULE_AUTO ? 8.0 : HUGE_VAL);
	/* a spread of subnormal distances must not give an infinite width */
	return SVC_GAMMA_AUTO_FACTOR / median < 1e300 ? SVC_GAMMA_AUTO_FACTOR / median : 1e300;
}

double
svc_gamma_sphere(const double *x, int64_t n, int32_t d, const SvcOptions *opt,
				 SvcRng *rng)
{
	return svc_gamma_auto(x, n, d, opt->gamma_rule, rng) / svc_sphere_width_ratio(opt, d);
}

/*
 * bandwidth_k: one width cannot fit clusters of different densities (a
 * sparse ring touching dense blobs; see doc/design-notes.md).  Each support
 * vector's kernel is widened where its k-th nearest support vector is
 * farther than the median such distance r_med:
 *     gamma_i = gamma * min(1, (r_med / r_i)^2),
 * which keeps dense regions at gamma and lets a sparse region's bumps join
 * into one hill instead of breaking into many small ones.
 */
static SvcStatus
set_widths(const SvcEnv *env, SvcModel *m, SvcError *err)
{
	int32_t		n = m->n_sv;
	int32_t		k = m->opt.bandwidth_k < n - 1 ? m->opt.bandwidth_k : n - 1;
	double	   *r = svc_alloc(env, sizeof(double) * (size_t) n, err);
	double	   *sorted = svc_alloc(env, sizeof(double) * (size_t) n, err);
	int64_t		idx[SVC_MAX_K + 1];	/* bandwidth_k <= SVC_MAX_K */
	double		d2[SVC_MAX_K + 1];
	SvcKdTree	tree = {0};		/* freed here even when building fails */
	SvcStatus	st = SVC_ERR_NOMEM;
	double		r_med;

	m->sv_gamma = svc_alloc(env, sizeof(double) * (size_t) n, err);
	if (!r || !sorted || !m->sv_gamma)
		goto done;
	if (k < 1)
	{
		/* a single support vector has no neighbour to measure by */
		for (int32_t i = 0; i < n; i++)
			m->sv_gamma[i] = m->gamma;
		st = SVC_OK;
		goto done;
	}
	st = svc_kd_build(env, m->sv, n, m->dims, &tree, err);
	if (st != SVC_OK)
		goto done;
	for (int32_t i = 0; i < n; i++)
	{
		/* the point itself comes first (or ties with a duplicate at 0) */
		int32_t		found;

		if ((i & 4095) == 0 && svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			goto done;
		}
		found = svc_kd_knearest(&tree, m->sv + (size_t) i * m->dims, k + 1, idx, d2);

		r[i] = sqrt(d2[found - 1]);
	}
	/*
	 * The median of the nonzero distances: support vectors with k copies
	 * of themselves (repeated rows) would otherwise make it 0 and every
	 * other kernel flat.
	 */
	{
		int32_t		nz = 0;

		for (int32_t i = 0; i < n; i++)
			if (r[i] > 0)
				sorted[nz++] = r[i];
		qsort(sorted, (size_t) nz, sizeof(double), svc_cmp_double);
		r_med = nz > 0 ? sorted[nz / 2] : 0.0;
	}
	for (int32_t i = 0; i < n; i++)
	{
		double		ratio = r[i] > r_med ? r_med / r[i] : 1.0;
		double		g = m->gamma * ratio * ratio;

		/* at most 1e12 times smaller (a far outlier); never 0, as the decoder checks */
		if (!(g > 1e-12 * m->gamma))
			g = 1e-12 * m->gamma;
		m->sv_gamma[i] = g > 0 ? g : m->gamma;
	}
	st = SVC_OK;
done:
	svc_kd_free(env, &tree);
	svc_free(env, r);
	svc_free(env, sorted);
	return st;
}

/*
 * The weights of labelled rows for the solver's bounds (supervision.h),
 * their range in the model, and NULL in *weight when no row is labelled or
 * the labelled rows act after the solver ("label_spread", the default):
 * the solver then trains on every row alike and the range is 1.
 */
static SvcStatus
supervise(const SvcEnv *env, const SvcSolverOps *solver, const double *rows,
		  const int8_t *label, int64_t n, double gamma, SvcModel *m, double **weight,
		  SvcError *err)
{
	double		c;
	SvcStatus	st;

	*weight = NULL;
	if (label == NULL || (m->lab_normal == 0 && m->lab_anomaly == 0))
		return SVC_OK;
	if (m->opt.label_spread)
	{
		m->lab_weight_min = m->lab_weight_max = 1.0;
		return SVC_OK;
	}
	if (!solver->takes_weights)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "the solver \"%s\" does not take labelled rows in its bounds", solver->name);
		svc_error_hint(err, "Use the solver \"smo\" or \"bsgd\", or leave \"label_spread\" out.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	/*
	 * The sphere's C = 1 / (nu n), as smo bounds the rows.  The sphere's
	 * dual takes signed bounds (the labelled anomalies' negative alphas)
	 * and needs no neighbourhood; the hyperplane's SGD does (supervision.h).
	 */
	c = m->opt.nu * (double) n > 1.0 ? 1.0 / (m->opt.nu * (double) n) : 1.0;
	*weight = svc_alloc(env, sizeof(double) * (size_t) n, err);
	if (*weight == NULL)
		return SVC_ERR_NOMEM;
	st = svc_supervision_weights(env, rows, label, n, m->dims, gamma, c,
								 m->opt.label_radius, m->opt.label_curve,
								 m->opt.anomaly_bound,
								 solver->boundary != SVC_BOUNDARY_SPHERE, *weight, err);
	if (st != SVC_OK)
	{
		svc_free(env, *weight);
		*weight = NULL;
		return st;
	}
	m->lab_weight_min = HUGE_VAL;
	m->lab_weight_max = -HUGE_VAL;
	/* the bounds C_i / C; a labelled anomaly's signed one is the option's */
	for (int64_t i = 0; i < n; i++)
	{
		if ((*weight)[i] < 0)
			continue;
		m->lab_weight_min = fmin(m->lab_weight_min, (*weight)[i]);
		m->lab_weight_max = fmax(m->lab_weight_max, (*weight)[i]);
	}
	return SVC_OK;
}

/* Labelled rows that end on the wrong side of the domain: counted, not hidden. */
static void
count_wrong_side(SvcModel *m, const double *rows, const int8_t *label, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
	{
		double		f;

		if (label[i] == 0)
			continue;
		f = svc_model_decision_scaled(m, rows + (size_t) i * m->dims);
		if (label[i] > 0 && f < 0)
			m->lab_wrong_normal++;
		else if (label[i] < 0 && f >= 0)
			m->lab_wrong_anomaly++;
	}
}

/*
 * Label the model on n scaled rows; after a warm start (init not NULL)
 * match its clusters to init's on the same rows (label_lineage.h).
 */
static SvcStatus
label_rows(const SvcEnv *env, SvcModel *m, const double *xs, int64_t n,
		   const SvcModel *init, SvcError *err)
{
	int32_t    *labels = NULL;
	SvcStatus	st;

	if (init != NULL)
	{
		labels = svc_alloc(env, sizeof(int32_t) * (size_t) n, err);
		if (labels == NULL)
			return SVC_ERR_NOMEM;
	}
	st = svc_label_train(env, m, xs, n, labels, err);
	if (st == SVC_OK && init != NULL)
		st = svc_lineage_from_rows(env, m, init, xs, labels, n, err);
	svc_free(env, labels);
	return st;
}

/*
 * After the solver: the widths, the threshold and the labelling, on the n
 * scaled rows (label: the labelled rows to count on the wrong side, or
 * NULL; init: the model a warm start continued, or NULL).  spare: rows
 * again when the caller reads them no more (the labelling's subset is then
 * gathered in place, not into a fresh allocation: 18 MB of new pages at
 * 768 columns), else NULL.
 */
static SvcStatus
fit_finish(const SvcEnv *env, const double *rows, double *spare,
		   const int8_t *label, int64_t n, SvcModel *m, const SvcModel *init,
		   SvcError *err)
{
	SvcStatus	st;

	if (m->opt.bandwidth_k > 0)
	{
		st = set_widths(env, m, err);
		if (st != SVC_OK)
			return st;
	}

	/*
	 * The threshold as a quantile of f on the training rows.  Widths change
	 * f, so the SVM's own threshold means nothing then: outlier_fraction 0
	 * puts the threshold at the lowest training row.  The sphere's own
	 * offset does not honour outlier_fraction either: its free support
	 * vectors sit within the solver's tolerance of f = 0, on either side,
	 * and left 18-47% of the rows outside at 0.05 (doc/design-notes.md);
	 * it stays only at outlier_fraction 0, the smallest sphere around
	 * every row.
	 */
	if (label != NULL && m->opt.label_spread)
	{
		/* labelled rows move f around them (supervision.h) */
		st = svc_supervision_spread(env, m, rows, label, n, err);
		if (st != SVC_OK)
			return st;
	}
	else if ((m->opt.nu > 0 && !(label != NULL && m->boundary == SVC_BOUNDARY_SPHERE)) ||
			 m->sv_gamma)
	{
		/*
		 * With the labelled rows in its bounds (label_spread false) the
		 * sphere keeps its own offset, as before 0.5.0: its margins put the
		 * labelled anomalies outside that one.
		 */
		st = svc_threshold_set(env, m, rows, n, err);
		if (st != SVC_OK)
			return st;
	}
	if (label != NULL)
		count_wrong_side(m, rows, label, n);
	m->epsilon = m->opt.epsilon;
	if (env->progress != NULL)
		env->progress(env->ctx, SVC_PROGRESS_LABEL, 0,
					  n < SVC_LABEL_ROWS ? n : SVC_LABEL_ROWS);
	if (n <= SVC_LABEL_ROWS)
		return label_rows(env, m, rows, n, init, err);
	else
	{
		/*
		 * Labelling runs a trajectory per row: a seeded uniform subset of
		 * SVC_LABEL_ROWS rows finds the same equilibria at a fraction of
		 * the cost.  Kept in row order, so the result stays independent of
		 * the scan order when the rows were sorted.
		 */
		SvcRng		rng;
		int64_t    *pick = svc_alloc(env, sizeof(int64_t) * (size_t) n, err);
		double	   *sub = spare != NULL ? spare :
			svc_alloc(env, sizeof(double) * SVC_LABEL_ROWS * (size_t) m->dims, err);

		if (!pick || !sub)
		{
			svc_free(env, pick);
			if (sub != spare)
				svc_free(env, sub);
			return SVC_ERR_NOMEM;
		}
		svc_rng_seed(&rng, m->opt.seed ^ SVC_SEED_TAG_LABEL);
		for (int64_t i = 0; i < n; i++)
			pick[i] = i;
		svc_rng_sample(&rng, pick, n, SVC_LABEL_ROWS);
		qsort(pick, SVC_LABEL_ROWS, sizeof(int64_t), svc_cmp_int64);
		/* in place: pick ascends, so pick[i] >= i and no row is read after it moved */
		for (int64_t i = 0; i < SVC_LABEL_ROWS; i++)
			if (sub != rows || pick[i] != i)
				memcpy(sub + (size_t) i * m->dims, rows + (size_t) pick[i] * m->dims,
					   sizeof(double) * (size_t) m->dims);
		st = label_rows(env, m, sub, SVC_LABEL_ROWS, init, err);
		svc_free(env, pick);
		if (sub != spare)
			svc_free(env, sub);
		return st;
	}
}

/*
 * The factor of the widening (fit.h): SVC_GAMMA_COVER_TARGET / median
 * squared distance as a share of the automatic gamma, within
 * [SVC_GAMMA_COVER_WIDEN, 1].
 */
double
svc_gamma_cover_widen(int32_t d, SvcGammaRule rule)
{
	double		auto_units = SVC_GAMMA_AUTO_FACTOR * svc_gamma_dims_factor(d, rule);
	double		w = SVC_GAMMA_COVER_TARGET / auto_units;

	if (w < SVC_GAMMA_COVER_WIDEN)
		w = SVC_GAMMA_COVER_WIDEN;
	return w < 1.0 ? w : 1.0;
}

/*
 * The cover's first sums in float from this many columns (bsgd's
 * BSGD_FLOAT_DIMS): fewer columns cost a distance about what its bound
 * does.  Coordinates at most SVC_SQDISTF_MAX.
 */
#define COVER_FLOAT_DIMS 64

/*
 * Scratch of the cover's float bounds: the support vectors by column as
 * floats (capf a multiple of 64, the rest zero), their squared norms, the
 * bounds, the row as floats.
 */
typedef struct CoverFloat
{
	size_t		capf;
	float	   *cols;
	double	   *sn2;
	double	   *lo;
	double	   *hi;
	float	   *xf;
} CoverFloat;

static void
cover_float_free(const SvcEnv *env, CoverFloat *cf)
{
	svc_free(env, cf->cols);
	svc_free(env, cf->sn2);
	svc_free(env, cf->lo);
	svc_free(env, cf->hi);
	svc_free(env, cf->xf);
	memset(cf, 0, sizeof(*cf));
}

/* The float columns of m's support vectors; false on a failed allocation. */
static bool
cover_float_init(const SvcEnv *env, const SvcModel *m, CoverFloat *cf, SvcError *err)
{
	size_t		d = (size_t) m->dims,
				b = (size_t) m->n_sv;

	memset(cf, 0, sizeof(*cf));
	cf->capf = (b + 63) / 64 * 64;
	cf->cols = svc_alloc(env, sizeof(float) * cf->capf * d, err);
	cf->sn2 = svc_alloc(env, sizeof(double) * b, err);
	cf->lo = svc_alloc(env, sizeof(double) * b, err);
	cf->hi = svc_alloc(env, sizeof(double) * b, err);
	cf->xf = svc_alloc(env, sizeof(float) * d, err);
	if (!cf->cols || !cf->sn2 || !cf->lo || !cf->hi || !cf->xf)
	{
		cover_float_free(env, cf);
		return false;
	}
	memset(cf->cols, 0, sizeof(float) * cf->capf * d);
	for (size_t i = 0; i < b; i++)
	{
		const double *s = m->sv + i * d;
		double		nn = 0.0;

		for (size_t j = 0; j < d; j++)
		{
			cf->cols[j * cf->capf + i] = (float) s[j];
			nn += s[j] * s[j];
		}
		cf->sn2[i] = nn;
	}
	return true;
}

/*
 * The least svc_sqdist of x to m's support vectors from the float bounds
 * (svc_select_nearest_floatcols, no vector left out), or -1 where they
 * cannot tell.
 */
static double
cover_least_float(const SvcModel *m, CoverFloat *cf, const double *x)
{
	double		xn2 = 0.0,
				best;

	for (int32_t j = 0; j < m->dims; j++)
		xn2 += x[j] * x[j];
	if (svc_select_nearest_floatcols(m->sv, cf->cols, cf->capf, cf->sn2, m->n_sv, m->dims, -1,
									 x, xn2, cf->xf, cf->lo, cf->hi, &best) < 0)
		return -1.0;
	return best;
}

/* The cover of the fitted support vectors over the rows (fit.h). */
SvcStatus
svc_gamma_cover(const SvcEnv *env, const SvcModel *m, const double *rows, int64_t n,
				double *cover, SvcError *err)
{
	int64_t		probe = n < SVC_GAMMA_COVER_PROBE ? n : SVC_GAMMA_COVER_PROBE;
	int32_t		d = m->dims;
	double	   *v,
			   *d2;
	CoverFloat	cf;
	bool		fl;

	*cover = 0.0;
	if (probe < 1 || m->n_sv < 1)
		return SVC_OK;
	v = svc_alloc(env, sizeof(double) * ((size_t) probe + (size_t) m->n_sv), err);
	if (v == NULL)
		return SVC_ERR_NOMEM;
	d2 = v + probe;
	fl = d >= COVER_FLOAT_DIMS &&
		svc_sqdistf_range(m->sv, (size_t) m->n_sv * (size_t) d);
	if (fl && !cover_float_init(env, m, &cf, err))
	{
		svc_free(env, v);
		return SVC_ERR_NOMEM;
	}
	for (int64_t p = 0; p < probe; p++)
	{
		/* p * n / probe < n, and fits: n is at most a sample of rows */
		const double *x = rows + (size_t) (p * n / probe) * (size_t) d;
		double		best = -1.0;	/* not found yet */

		if ((p & 63) == 0 && svc_interrupted(env, err))
		{
			if (fl)
				cover_float_free(env, &cf);
			svc_free(env, v);
			return SVC_ERR_INTERRUPTED;
		}
		if (fl && svc_sqdistf_range(x, (size_t) d))
			best = cover_least_float(m, &cf, x);
		if (best < 0.0)
		{
			/*
			 * svc_sqdist's distances to every support vector, four at a
			 * time (svc_sqdist_many: the same sums); the least in any
			 * order
			 */
			best = HUGE_VAL;
			svc_sqdist_many(m->sv, NULL, m->n_sv, d, x, d2);
			for (int32_t j = 0; j < m->n_sv; j++)
				best = d2[j] < best ? d2[j] : best;
		}
		v[p] = best * m->gamma;
	}
	*cover = svc_select_double(v, probe, probe / 2) / (double) d;
	if (fl)
		cover_float_free(env, &cf);
	svc_free(env, v);
	return SVC_OK;
}

/*
 * The fit again at a wider gamma when the cover (above) is at the gate:
 * bsgd, gamma "auto", above two columns, the default budget or more (a
 * smaller budget a user sets is theirs to pair with a width), no labelled
 * rows in the solver's bounds (the caller's test).  The factor is
 * svc_gamma_cover_widen's: half up to 12 columns, SVC_GAMMA_COVER_TARGET /
 * median squared distance from 16 (fit.h).
 */
static SvcStatus
widen_if_uncovered(const SvcEnv *env, const SvcSolverOps *solver, const double *rows,
				   int64_t n, double *gamma, SvcModel *m, SvcError *err)
{
	double		cover,
				widen;
	SvcStatus	st;

	if (!(m->opt.gamma == 0.0 && m->solver == SVC_SOLVER_BSGD && m->dims > 2 &&
		  m->opt.budget >= SVC_DEFAULT_BUDGET && n > m->n_sv))
		return SVC_OK;
	widen = svc_gamma_cover_widen(m->dims, m->opt.gamma_rule);
	if (!(widen < 1.0))
		return SVC_OK;
	st = svc_gamma_cover(env, m, rows, n, &cover, err);
	if (st != SVC_OK || !(cover >= SVC_GAMMA_COVER_GATE))
		return st;
	svc_free(env, m->sv);
	svc_free(env, m->alpha);
	m->sv = m->alpha = NULL;
	m->n_sv = 0;
	*gamma *= widen;
	m->gamma_widen = widen;
	m->gamma_cover = cover;
	return solver->fit(env, rows, n, m->dims, &m->opt, *gamma, NULL, m, err);
}

/*
 * Scale, train and label; rows are scaled in place.  label is NULL or a
 * label per row (1, -1, or 0 for unknown; m->lab_normal and lab_anomaly
 * count them).
 */
static SvcStatus
fit_scaled(const SvcEnv *env, double *rows, const int8_t *label, int64_t n, SvcModel *m,
		   SvcError *err)
{
	const SvcSolverOps *solver;
	SvcStatus	st;
	double		gamma = m->opt.gamma;
	double	   *weight;
	bool		supervised;

	/* before the solver's work: the graph labels every row or refuses */
	if (m->opt.labeling == SVC_LABELING_COMPLETE_GRAPH)
	{
		st = svc_graph_check_rows(n, err);
		if (st != SVC_OK)
			return st;
	}
	for (int64_t i = 0; i < n; i++)
		svc_model_scale_row(m, rows + (size_t) i * m->dims, rows + (size_t) i * m->dims);

	/*
	 * Rows within SVC_MAX_FEATURE_ABS scaled by their own statistics stay
	 * within it (standard scores are at most sqrt(n)); only a state whose
	 * statistics do not match its rows (made by hand) scales them further,
	 * where distances overflow and training would make an unusable model.
	 */
	for (size_t i = 0; i < (size_t) n * (size_t) m->dims; i++)
		if (!(fabs(rows[i]) <= 2 * SVC_MAX_FEATURE_ABS))
		{
			svc_fail(err, SVC_ERR_CORRUPT, "invalid svclust training state");
			svc_error_detail(err, "Its scaling statistics do not match its rows.");
			return SVC_ERR_CORRUPT;
		}
	solver = svc_solver_find(m->solver);
	if (solver == NULL)
		return svc_fail(err, SVC_ERR_INTERNAL, "solver %d is not available", (int) m->solver);
	if (gamma == 0.0)
	{
		SvcRng		rng;

		/* its own stream: the SGD draws must not depend on it */
		svc_rng_seed(&rng, m->opt.seed ^ SVC_SEED_TAG_GAMMA);
		gamma = solver->boundary == SVC_BOUNDARY_SPHERE ?
			svc_gamma_sphere(rows, n, m->dims, &m->opt, &rng) :
			svc_gamma_auto(rows, n, m->dims, m->opt.gamma_rule, &rng);
	}
	m->boundary = solver->boundary;
	st = supervise(env, solver, rows, label, n, gamma, m, &weight, err);
	if (st != SVC_OK)
		return st;
	supervised = label != NULL && (m->lab_normal > 0 || m->lab_anomaly > 0);
	if (supervised && m->opt.keep_rows)
	{
		svc_free(env, weight);
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "svclust option \"keep_rows\" does not take labelled rows");
		svc_error_hint(err, "Pass NULL labels, or leave \"keep_rows\" out.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	st = solver->fit(env, rows, n, m->dims, &m->opt, gamma, weight, m, err);
	/*
	 * With "label_spread" (weight NULL) the solver trained on every row
	 * alike, labelled or not, so the gate reads the unlabelled fit and a
	 * labelled fit takes the same width as the unlabelled one of the same
	 * rows; the labelled rows act after it (supervision.c).  With the
	 * labelled rows in the bounds the fit is another one: it keeps the
	 * automatic width, as before 0.5.0.
	 */
	if (st == SVC_OK && weight == NULL)
		st = widen_if_uncovered(env, solver, rows, n, &gamma, m, err);
	svc_free(env, weight);
	if (st != SVC_OK)
		return st;
	if (m->opt.keep_rows)
	{
		st = svc_keep_from_fit(env, rows, n, m, err);
		if (st != SVC_OK)
			return st;
	}
	/* every caller of fit_scaled frees rows after it */
	return fit_finish(env, rows, rows, supervised ? label : NULL, n, m, NULL, err);
}

SvcStatus
svc_fit_warm_check(const SvcModel *init, int32_t dims, const SvcOptions *opt, SvcError *err)
{
	const SvcSolverOps *solver = svc_solver_find(init->solver);

	if (solver != NULL && solver->warm_fit != NULL && solver->boundary == SVC_BOUNDARY_SPHERE &&
		init->keep_n == 0)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "a model of the solver \"%s\" without kept rows cannot be warm-started",
				 svc_solver_name(init->solver));
		svc_error_detail(err, "The exact solvers continue from the rows of their fit, which a model keeps only when trained with the option \"keep_rows\".");
		svc_error_hint(err, "Retrain from scratch on all the rows with svc_train(features, options), or train the init model with {\"keep_rows\": true}.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	if (solver == NULL || solver->warm_fit == NULL)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "a model of the solver \"%s\" cannot be warm-started",
				 svc_solver_name(init->solver));
		svc_error_detail(err, "Only \"bsgd\" models, and \"smo\" and \"incremental\" models with kept rows, can be warm-started.");
		svc_error_hint(err, "Retrain from scratch on all the rows with svc_train(features, options), or train the init model with {\"solver\": \"bsgd\"}.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	if (init->dims != dims)
		return svc_fail(err, SVC_ERR_DIMENSION, "expected %d dimensions, not %d",
						init->dims, dims);
	if (init->iterations < 1 || init->rows_seen < init->n_sv)
		return svc_model_corrupt(err, "Its step or row counts cannot be continued.");
	if (init->lab_wide > 0)
	{
		/* the SGD would take them at its own width: f would change */
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "a model whose labelled normals lift at a width of their own cannot be warm-started");
		svc_error_detail(err, "Its labelled normals' support vectors have a wider kernel than the solver's.");
		svc_error_hint(err, "Retrain from scratch on all the rows with svc_train(features, label, options).");
		return SVC_ERR_INVALID_PARAMETER;
	}
	return svc_options_warm_check(&init->opt, opt, err);
}

/*
 * Whether a scaled row lies outside the box of init's support vectors:
 * for a one-class SVM they lie on the rim of the data it was trained on,
 * so their box stands for the range of that data in the stored scaling.
 */
static bool
outside_box(const SvcModel *init, const double *lo, const double *hi, const double *x)
{
	for (int32_t j = 0; j < init->dims; j++)
		if (x[j] < lo[j] || x[j] > hi[j])
			return true;
	return false;
}

/*
 * A warm start (fit.h) on n new rows (unscaled, scaled here in place),
 * of which seen rows were seen by the aggregate.
 */
static SvcStatus
fit_warm(const SvcEnv *env, double *rows, int64_t n, int64_t seen, const SvcOptions *opt,
		 const SvcModel *init, SvcModel *m, SvcError *err)
{
	const SvcSolverOps *solver;
	int32_t		d = init->dims;
	bool		kept = init->keep_n > 0;
	/* the rows labelled: the window of a model with kept rows, else the
	 * new rows and init's support vectors */
	int64_t		n_all = kept ? (init->keep_n + n < opt->sample ? init->keep_n + n : opt->sample) :
		n + init->n_sv;
	double	   *all,
			   *box;
	SvcStatus	st;

	st = svc_fit_warm_check(init, m->dims, opt, err);
	if (st != SVC_OK)
		return st;
	if (n < 1)
		return svc_fail(err, SVC_ERR_INTERNAL, "no rows to train on");
	if (init->rows_seen > SVC_MAX_SEEN - seen)
		return svc_fail(err, SVC_ERR_LIMIT, "a model cannot have seen more than %lld rows",
						(long long) SVC_MAX_SEEN);
	if (m->opt.labeling == SVC_LABELING_COMPLETE_GRAPH)
	{
		st = svc_graph_check_rows(n_all, err);
		if (st != SVC_OK)
			return st;
	}
	solver = svc_solver_find(init->solver);
	m->solver = init->solver;
	m->boundary = solver->boundary;
	memcpy(m->shift, init->shift, sizeof(double) * (size_t) d);
	memcpy(m->mul, init->mul, sizeof(double) * (size_t) d);
	m->rows_seen = init->rows_seen + seen;
	m->rows_used = n_all;
	m->warm_starts = init->warm_starts + 1;
	m->warm_rows_before = init->rows_seen;
	m->warm_steps_before = init->iterations;
	m->warm_rows_new = n;
	/* init's width, and so its reason */
	m->gamma_widen = init->gamma_widen;
	m->gamma_cover = init->gamma_cover;

	/* the stored scaling, so f and the support vectors keep their meaning */
	for (int64_t i = 0; i < n; i++)
		svc_model_scale_row(m, rows + (size_t) i * d, rows + (size_t) i * d);
	for (size_t i = 0; i < (size_t) n * (size_t) d; i++)
		if (!(fabs(rows[i]) <= 2 * SVC_MAX_FEATURE_ABS))
		{
			svc_fail(err, SVC_ERR_INVALID_INPUT,
					 "the new rows lie too far outside the init model's scaling");
			svc_error_hint(err, "The data have drifted: train a new model from scratch with svc_train(features, options).");
			return SVC_ERR_INVALID_INPUT;
		}

	/* drift: the new rows outside the range the init model was trained on */
	box = svc_alloc(env, sizeof(double) * 2 * (size_t) d, err);
	if (box == NULL)
		return SVC_ERR_NOMEM;
	for (int32_t j = 0; j < d; j++)
	{
		box[j] = HUGE_VAL;
		box[d + j] = -HUGE_VAL;
		for (int32_t i = 0; i < init->n_sv; i++)
		{
			box[j] = fmin(box[j], init->sv[(size_t) i * d + j]);
			box[d + j] = fmax(box[d + j], init->sv[(size_t) i * d + j]);
		}
	}
	for (int64_t i = 0; i < n; i++)
		m->warm_rows_outside += outside_box(init, box, box + d, rows + (size_t) i * d);
	svc_free(env, box);

	st = solver->warm_fit(env, rows, n, d, &m->opt, init, m, err);
	if (st != SVC_OK)
		return st;
	if (kept)
	{
		/* the threshold is the solver's; the labelling on the window */
		m->rows_used = m->keep_n;
		return fit_finish(env, m->keep_x, NULL, NULL, m->keep_n, m, init, err);
	}

	/*
	 * The threshold and the labelling on the new rows and the init's
	 * support vectors, which stand for the rows it was trained on.
	 */
	all = svc_alloc(env, sizeof(double) * (size_t) n_all * (size_t) d, err);
	if (all == NULL)
		return SVC_ERR_NOMEM;
	memcpy(all, rows, sizeof(double) * (size_t) n * (size_t) d);
	if (init->n_sv > 0)
		memcpy(all + (size_t) n * d, init->sv, sizeof(double) * (size_t) init->n_sv * (size_t) d);
	st = fit_finish(env, all, NULL, NULL, n_all, m, init, err);
	svc_free(env, all);
	return st;
}

/* Allocate the scaling arrays only; the solver and labelling add the rest. */
static SvcStatus
model_start(const SvcEnv *env, SvcModel *m, int32_t dims, const SvcOptions *opt,
			SvcError *err)
{
	memset(m, 0, sizeof(*m));
	m->dims = dims;
	m->opt = *opt;
	m->solver = opt->solver;
	m->shift = svc_alloc(env, sizeof(double) * (size_t) dims, err);
	m->mul = svc_alloc(env, sizeof(double) * (size_t) dims, err);
	return (m->shift && m->mul) ? SVC_OK : SVC_ERR_NOMEM;
}

/* svc_fit_state for a state with an init model: a warm start. */
static SvcStatus
fit_state_warm(const SvcEnv *env, const uint8_t *state, SvcModel *m, SvcError *err)
{
	int32_t		dims = svc_state_dims(state);
	int64_t		kept = svc_state_train_rows(state);
	SvcModel	init;
	double	   *rows,
			   *stats;
	size_t		nvals;
	SvcStatus	st;

	/* svc_state_check refuses labelled rows in a warm-started state */
	if (svc_state_lab_kept(state) > 0)
		return svc_fail(err, SVC_ERR_INTERNAL, "a warm start has labelled rows");
	st = svc_model_decode(env, svc_state_init_model(state), svc_state_init_len(state),
						  &init, err);
	if (st != SVC_OK)
		return st;
	if (!svc_size_mul((size_t) kept, (size_t) dims, &nvals))
	{
		svc_model_free(env, &init);
		return svc_fail(err, SVC_ERR_LIMIT, "training sample is too large");
	}
	rows = svc_alloc(env, sizeof(double) * nvals, err);
	stats = svc_alloc(env, sizeof(double) * 4 * (size_t) dims, err);
	if (!rows || !stats)
		st = SVC_ERR_NOMEM;
	else
	{
		/*
		 * Taken as for a plain fit (sorted, so the sample does not depend
		 * on the scan order); the statistics are not used: the scaling
		 * stays the init's.
		 */
		st = svc_state_sample(env, state, rows, NULL, stats, stats + dims, stats + 2 * dims,
							  stats + 3 * dims, err);
		/* kept rows count arrivals: the rows in the order they came */
		if (st == SVC_OK && init.keep_n > 0)
			svc_state_rows_stored(state, rows);
		if (st == SVC_OK)
			st = fit_warm(env, rows, kept, svc_state_seen(state), &m->opt, &init, m, err);
	}
	svc_free(env, rows);
	svc_free(env, stats);
	svc_model_free(env, &init);
	return st;
}

SvcStatus
svc_fit_state(const SvcEnv *env, const uint8_t *state, SvcModel *m, SvcError *err)
{
	int32_t		dims = svc_state_dims(state);
	int64_t		kept = svc_state_train_rows(state);
	int64_t		lab_kept = svc_state_train_lab_rows(state);
	int64_t		n = kept + lab_kept;
	SvcOptions	opt;
	double	   *rows,
			   *lab = NULL,
			   *stats;
	int8_t	   *label = NULL;
	size_t		nvals,
				lab_vals = 0;
	SvcStatus	st;

	svc_state_options(state, &opt);
	st = model_start(env, m, dims, &opt, err);
	if (st != SVC_OK)
		return st;
	if (n < 1)
		return svc_fail(err, SVC_ERR_INTERNAL, "no rows to train on");
	if (svc_state_init_len(state) > 0)
		return fit_state_warm(env, state, m, err);
	/*
	 * The labelled rows follow the others, and take their place after it
	 * (svc_supervision_merge_rows, with room for twice the rows: the
	 * second half is its scratch); without them, room for the rows.
	 */
	if (!svc_size_mul((size_t) n * (lab_kept > 0 ? 2 : 1), (size_t) dims, &nvals) ||
		!svc_size_mul((size_t) lab_kept, (size_t) dims + 1, &lab_vals))
		return svc_fail(err, SVC_ERR_LIMIT, "training sample is too large");
	rows = svc_alloc(env, sizeof(double) * nvals, err);
	stats = svc_alloc(env, sizeof(double) * 4 * (size_t) dims, err);
	if (lab_kept > 0)
	{
		lab = svc_alloc(env, sizeof(double) * lab_vals, err);
		label = svc_alloc(env, (size_t) n, err);
	}
	if (!rows || !stats || (lab_kept > 0 && (!lab || !label)))
	{
		svc_free(env, rows);
		svc_free(env, stats);
		svc_free(env, lab);
		svc_free(env, label);
		return SVC_ERR_NOMEM;
	}
	st = svc_state_sample(env, state, rows, lab, stats, stats + dims, stats + 2 * dims,
						  stats + 3 * dims, err);
	if (st != SVC_OK)
	{
		svc_free(env, rows);
		svc_free(env, stats);
		svc_free(env, lab);
		svc_free(env, label);
		return st;
	}
	/* kept rows count arrivals: the rows in the order they came */
	if (opt.keep_rows)
		svc_state_rows_stored(state, rows);
	set_scaling(m, stats, stats + dims, stats + 2 * dims, stats + 3 * dims);
	m->rows_seen = svc_state_rows_seen(state);
	m->rows_used = n;
	if (lab_kept > 0)
	{
		memset(label, 0, (size_t) kept);
		for (int64_t i = 0; i < lab_kept; i++)
		{
			const double *src = lab + (size_t) i * ((size_t) dims + 1);

			memcpy(rows + (size_t) (kept + i) * dims, src, sizeof(double) * (size_t) dims);
			label[kept + i] = src[dims] > 0 ? 1 : -1;
			if (src[dims] > 0)
				m->lab_normal++;
			else
				m->lab_anomaly++;
		}
		m->lab_seen_normal = svc_state_lab_seen(state, 1);
		m->lab_seen_anomaly = svc_state_lab_seen(state, -1);
		/* kept rows stay in arrival order; sorted ones merge (supervision.h) */
		if (!opt.keep_rows)
			st = svc_supervision_merge_rows(env, rows, label, kept, n, dims, err);
	}
	if (st == SVC_OK)
		st = fit_scaled(env, rows, label, n, m, err);
	svc_free(env, rows);
	svc_free(env, stats);
	svc_free(env, lab);
	svc_free(env, label);
	return st;
}

SvcStatus
svc_fit_rows(const SvcEnv *env, const double *rows, int64_t n, int32_t dims,
			 const SvcOptions *opt, SvcModel *m, SvcError *err)
{
	return svc_fit_rows_labelled(env, rows, NULL, n, dims, opt, m, err);
}

SvcStatus
svc_fit_rows_labelled(const SvcEnv *env, const double *rows, const int8_t *label,
					  int64_t n, int32_t dims, const SvcOptions *opt, SvcModel *m,
					  SvcError *err)
{
	double	   *copy,
			   *stats;
	size_t		nvals;
	SvcStatus	st;

	st = model_start(env, m, dims, opt, err);
	if (st != SVC_OK)
		return st;
	if (n < 1)
		return svc_fail(err, SVC_ERR_INTERNAL, "no rows to train on");
	if (!svc_size_mul((size_t) n, (size_t) dims, &nvals))
		return svc_fail(err, SVC_ERR_LIMIT, "training set is too large");
	copy = svc_alloc(env, sizeof(double) * nvals, err);
	stats = svc_alloc(env, sizeof(double) * 4 * (size_t) dims, err);
	if (!copy || !stats)
	{
		svc_free(env, copy);
		svc_free(env, stats);
		return SVC_ERR_NOMEM;
	}
	memcpy(copy, rows, sizeof(double) * nvals);
	for (int32_t j = 0; j < dims; j++)
	{
		double		s = 0,
					ss = 0,
					lo = HUGE_VAL,
					hi = -HUGE_VAL;
		int			e;

		for (int64_t i = 0; i < n; i++)
		{
			double		v = rows[(size_t) i * dims + j];

			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		/* as the state does: any finite column, no square overflows */
		e = svc_scale_exponent(fmax(fabs(lo), fabs(hi)));
		for (int64_t i = 0; i < n; i++)
			s += ldexp(rows[(size_t) i * dims + j], -e);
		s /= (double) n;
		for (int64_t i = 0; i < n; i++)
		{
			double		t = ldexp(rows[(size_t) i * dims + j], -e) - s;

			ss += t * t;
		}
		stats[j] = ldexp(s, e);
		stats[dims + j] = ldexp(sqrt(ss / (double) n), e);
		stats[2 * dims + j] = lo;
		stats[3 * dims + j] = hi;
	}
	set_scaling(m, stats, stats + dims, stats + 2 * dims, stats + 3 * dims);
	m->rows_seen = n;
	m->rows_used = n;
	for (int64_t i = 0; label != NULL && i < n; i++)
	{
		m->lab_normal += label[i] > 0;
		m->lab_anomaly += label[i] < 0;
	}
	m->lab_seen_normal = m->lab_normal;
	m->lab_seen_anomaly = m->lab_anomaly;
	st = fit_scaled(env, copy, label, n, m, err);
	svc_free(env, copy);
	svc_free(env, stats);
	return st;
}

SvcStatus
svc_fit_rows_warm(const SvcEnv *env, const double *rows, int64_t n, int32_t dims,
				  const SvcOptions *opt, const SvcModel *init, SvcModel *m, SvcError *err)
{
	double	   *copy;
	size_t		nvals;
	SvcStatus	st;

	st = model_start(env, m, dims, opt, err);
	if (st != SVC_OK)
		return st;
	if (!svc_size_mul((size_t) n, (size_t) dims, &nvals))
		return svc_fail(err, SVC_ERR_LIMIT, "training set is too large");
	copy = svc_alloc(env, sizeof(double) * (nvals > 0 ? nvals : 1), err);
	if (copy == NULL)
		return SVC_ERR_NOMEM;
	memcpy(copy, rows, sizeof(double) * nvals);
	st = fit_warm(env, copy, n, n, opt, init, m, err);
	svc_free(env, copy);
	return st;
}
