/*
 * label.c - the labelling run: trajectories from the training rows, then
 * the saddle tree and its cut, or Algorithm 3's components
 *
 * Every row runs the fixed-point iteration x <- P(x) (a weighted mean
 * shift that climbs f) to an equilibrium.  Training collects the
 * equilibria and labels them, by a saddle tree cut with the model's cut
 * rule or by Algorithm 3 of the budgeted SVC paper; prediction runs a new
 * row's trajectory and takes the cluster of the labelled equilibrium it
 * reaches.  Training and prediction share one trajectory routine, so a
 * training row gets the same id from both.
 *
 * lambda(x) = sum_i alpha_i K(x, s_i) = f(x) + offset is the "height"
 * the tree works on: its ordering is that of f, and it is >= 0 wherever the
 * alphas are positive.
 */
#include "label.h"
#include "label_algorithm3.h"
#include "label_complete_graph.h"
#include "label_cut.h"
#include "fit.h"
#include "kernel.h"
#include "label_saddle.h"
#include "score.h"
#include "solver_bsgd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The saddle tree of a sphere (smo, aid, incremental).  The sphere's kernel
 * sum is flat on its rows: at the optimum every free support vector has
 * f = 0, so the passes between its equilibria stand nearly as high as its
 * peaks (within 4-25% on the nine sets) and tell clusters apart only
 * where the domain breaks.  Its equilibria still split the rows into fine
 * basins, each inside one cluster; the tree joins them by the heights of
 * a density of the same rows (a basin's peak: the densest of its rows or
 * its equilibrium): the kernel sum of the budgeted solver with
 * its default options and the model's seed, at svc_sphere_width_ratio
 * times the sphere's gamma (with gamma "auto", the budgeted solver's own
 * width).  The heights are scaled so that the density's outlier_fraction
 * quantile on the rows stands at the sphere's offset: the tree's f is 0
 * there, as the sphere's is at its boundary, and a level cut reads the
 * same way.  Trajectories, and so prediction, still climb the sphere's f.
 * doc/design-notes.md has the measurements.
 *
 * The density is blind to labelled anomalies: where their terms push the
 * sphere's f below 0, trajectories stop at equilibria the density still
 * sees as dense, or their rows climb out of it to the blobs around, whose
 * basins then meet over dense ground, and the blobs join above any cut.  So
 * in a model trained with labelled anomalies, an equilibrium where the
 * sphere's own f is below 0 stands at height 0 in the tree, and no pass
 * through it is higher; and a row's density keeps the share of the
 * sphere's positive terms that its negative ones (the labelled anomalies')
 * leave (rowlam, the sphere's kernel sum at each row, over the positive
 * part; 0 where rowlam <= 0).  A row outside the sphere far from every
 * labelled anomaly keeps its density, as without labels: setting every
 * row with f < 0 to 0 cut the passes through a blob's own tail and split
 * it (ring shape, smo, NMI on normal rows 0.99 -> 0.93 on one seed).
 */
static SvcStatus
sphere_tree(const SvcEnv *env, const SvcModel *m, SvcEqList *eqs, const double *xs,
			int64_t n, const int32_t *roweq, const double *rowlam, SvcEdge *tree,
			SvcError *err)
{
	int32_t		d = m->dims;
	SvcEnv		quiet = *env;
	SvcModel	dm;
	SvcOptions	o;
	double	   *dens = svc_alloc(env, sizeof(double) * (size_t) n, err);
	double	   *work = svc_alloc(env, sizeof(double) * (size_t) n, err);
	bool	   *out = NULL;		/* equilibria where the sphere's f < 0 */
	double	   *neg_sv = NULL;	/* the sphere's negative terms */
	double	   *neg_alpha = NULL;
	double	   *neg_g = NULL;
	int32_t		n_neg = 0;
	double		q,
				top = 0.0,
				scale;
	int64_t		idx;
	SvcStatus	st = SVC_ERR_NOMEM;

	memset(&dm, 0, sizeof(dm));
	if (!dens || !work)
		goto done;
	if (m->lab_anomaly > 0)
	{
		/* eqs->lambda is still the sphere's kernel sum here */
		out = svc_alloc(env, sizeof(bool) * (size_t) eqs->n, err);
		if (!out)
			goto done;
		for (int32_t e = 0; e < eqs->n; e++)
			out[e] = eqs->lambda[e] < m->offset;
		for (int32_t k = 0; k < m->n_sv; k++)
			n_neg += m->alpha[k] < 0;
		if (n_neg > 0)
		{
			neg_sv = svc_alloc(env, sizeof(double) * (size_t) n_neg * (size_t) d, err);
			neg_alpha = svc_alloc(env, sizeof(double) * (size_t) n_neg, err);
			neg_g = svc_alloc(env, sizeof(double) * (size_t) n_neg, err);
			if (!neg_sv || !neg_alpha || !neg_g)
				goto done;
			for (int32_t k = 0, j = 0; k < m->n_sv; k++)
			{
				if (!(m->alpha[k] < 0))
					continue;
				memcpy(neg_sv + (size_t) j * d, m->sv + (size_t) k * d, sizeof(double) * (size_t) d);
				neg_alpha[j] = m->alpha[k];
				neg_g[j++] = m->sv_gamma ? m->sv_gamma[k] : m->gamma;
			}
		}
	}
	svc_options_default(&o);
	o.seed = m->opt.seed;
	dm.dims = d;
	/* part of the labelling, whose progress the caller reports: no SGD steps */
	quiet.progress = NULL;
	st = svc_train_bsgd(&quiet, xs, n, d, &o, m->gamma * svc_sphere_width_ratio(&m->opt, d), NULL,
						 &dm, err);
	if (st != SVC_OK)
		goto done;
	for (int64_t i = 0; i < n; i++)
	{
		if ((i & 1023) == 0 && svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			goto done;
		}
		dens[i] = svc_kernel_sum(dm.sv, dm.alpha, NULL, dm.n_sv, d, dm.gamma,
								 xs + (size_t) i * d);
		work[i] = dens[i];
		top = fmax(top, dens[i]);
		if (out != NULL)
		{
			double		neg = n_neg > 0 ?
				svc_kernel_sum(neg_sv, neg_alpha, neg_g, n_neg, d, m->gamma,
							   xs + (size_t) i * d) : 0.0;
			double		pos = rowlam[i] - neg;

			dens[i] *= rowlam[i] > 0 && pos > 0 ? fmin(1.0, rowlam[i] / pos) : 0.0;
		}
	}
	for (int32_t e = 0; e < eqs->n; e++)
		eqs->lambda[e] = svc_kernel_sum(dm.sv, dm.alpha, NULL, dm.n_sv, d, dm.gamma,
										eqs->x + (size_t) e * d);
	/*
	 * A basin's peak is the densest of its rows where that is higher: the
	 * sphere's equilibrium need not sit where its basin is densest, and
	 * the persistence cut compares passes with the lower of two peaks.
	 */
	for (int64_t i = 0; i < n; i++)
		eqs->lambda[roweq[i]] = fmax(eqs->lambda[roweq[i]], dens[i]);
	for (int32_t e = 0; out != NULL && e < eqs->n; e++)
		if (out[e])
			eqs->lambda[e] = 0.0;
	st = svc_saddle_tree(env, &dm, eqs, xs, n, roweq, dens, out ? eqs->lambda : NULL,
						 tree, err);
	if (st != SVC_OK)
		goto done;
	idx = (int64_t) floor(m->opt.nu * (double) n);
	q = svc_select_double(work, n, idx < n ? idx : n - 1);
	/* projection can leave the density at or below 0: then by its top */
	if (!(q > 1e-12 * top))
		q = top;
	scale = q > 0 && m->offset > 0 && isfinite(m->offset / q) ? m->offset / q : 1.0;
	for (int32_t e = 0; e < eqs->n; e++)
		eqs->lambda[e] *= scale;
	for (int32_t k = 0; k < eqs->n - 1; k++)
		tree[k].saddle *= scale;
done:
	svc_free(env, dm.sv);
	svc_free(env, dm.alpha);
	svc_free(env, dens);
	svc_free(env, work);
	svc_free(env, out);
	svc_free(env, neg_sv);
	svc_free(env, neg_alpha);
	svc_free(env, neg_g);
	return st;
}

/* Check a model's numbers before labelling with them. */
static SvcStatus
check_inputs(const SvcModel *m, const double *xs, int64_t n, SvcError *err)
{
	if (m->dims < 1 || m->dims > SVC_MAX_DIMS)
		return svc_fail(err, SVC_ERR_INTERNAL, "model dimension %d is out of range", m->dims);
	if (m->n_sv < 0 || (m->n_sv > 0 && (!m->sv || !m->alpha)))
		return svc_fail(err, SVC_ERR_INTERNAL, "model has no support vectors array");
	if (!(isfinite(m->gamma) && m->gamma > 0.0) || !isfinite(m->offset))
		return svc_fail(err, SVC_ERR_INTERNAL, "model kernel parameters are invalid");
	if (!isfinite(m->opt.merge_ratio) || !isfinite(m->opt.min_cluster_share) ||
		!(isfinite(m->opt.epsilon) && m->opt.epsilon >= 0.0))
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER, "labelling options are invalid");
	if (n < 1)
		return svc_fail(err, SVC_ERR_INVALID_INPUT, "no rows to label");
	if (n > INT32_MAX)
		return svc_fail(err, SVC_ERR_LIMIT, "too many rows to label: %lld", (long long) n);
	if (svc_first_nonfinite(xs, (size_t) n * (size_t) m->dims) >= 0)
		return svc_fail(err, SVC_ERR_INVALID_INPUT, "a row to label is not finite");
	return SVC_OK;
}

/*
 * Write the model's labelling (freeing what it held, only on success):
 * the equilibria with their rows, and either the tree (tree[], M - 1
 * edges by decreasing saddle), cut by svc_cut_apply, or the paper's
 * components (comp[i], an equilibrium index per equilibrium) numbered
 * by svc_cut_number.  roweq[r] is the equilibrium of row r.
 */
static SvcStatus
finish_model(const SvcEnv *env, SvcModel *m, const SvcEqList *eqs,
			 const SvcEdge *tree, const int32_t *comp, const int32_t *roweq,
			 int64_t n, int32_t *labels, SvcError *err)
{
	int32_t		M = eqs->n;
	int32_t		n_edges = tree ? M - 1 : 0;
	SvcModel	next = *m;
	SvcStatus	st = SVC_ERR_NOMEM;

	next.n_eq = M;
	next.n_edges = n_edges;
	next.eq = svc_alloc(env, sizeof(double) * (size_t) M * (size_t) eqs->dims, err);
	next.eq_f = svc_alloc(env, sizeof(double) * (size_t) M, err);
	next.eq_rows = svc_alloc0(env, sizeof(int64_t) * (size_t) M, err);
	next.eq_cluster = NULL;
	next.cluster_size = NULL;
	/* a new labelling has no ids yet (a warm start matches them after) */
	next.cluster_id = NULL;
	next.links = NULL;
	next.next_id = next.n_links = 0;
	next.edge_a = svc_alloc(env, sizeof(int32_t) * (size_t) n_edges, err);
	next.edge_b = svc_alloc(env, sizeof(int32_t) * (size_t) n_edges, err);
	next.edge_f = svc_alloc(env, sizeof(double) * (size_t) n_edges, err);
	if (!next.eq || !next.eq_f || !next.eq_rows || !next.edge_a ||
		!next.edge_b || !next.edge_f)
		goto done;
	memcpy(next.eq, eqs->x, sizeof(double) * (size_t) M * (size_t) eqs->dims);
	for (int32_t i = 0; i < M; i++)
		next.eq_f[i] = eqs->lambda[i] - m->offset;
	for (int64_t r = 0; r < n; r++)
		next.eq_rows[roweq[r]]++;
	for (int32_t k = 0; k < n_edges; k++)
	{
		next.edge_a[k] = tree[k].a;
		next.edge_b[k] = tree[k].b;
		next.edge_f[k] = tree[k].saddle - m->offset;
	}

	if (tree)
	{
		st = svc_cut_apply(env, &next, err);
		if (st != SVC_OK)
			goto done;
	}
	else
	{
		next.eq_cluster = svc_alloc(env, sizeof(int32_t) * (size_t) M, err);
		if (!next.eq_cluster)
			goto done;
		st = svc_cut_number(env, M, comp, next.eq_rows, next.eq_cluster,
							&next.n_clusters, &next.cluster_size, err);
		if (st != SVC_OK)
			goto done;
	}
	if (labels)
		for (int64_t r = 0; r < n; r++)
			labels[r] = next.eq_cluster[roweq[r]];

	svc_model_free_labelling(env, m);
	*m = next;
	return SVC_OK;
done:
	svc_model_free_labelling(env, &next);
	return st;
}

SvcStatus
svc_label_train(const SvcEnv *env, SvcModel *m, const double *xs, int64_t n,
				int32_t *labels, SvcError *err)
{
	int32_t		d = m->dims;
	bool		paper = m->opt.labeling == SVC_LABELING_PAPER;
	bool		graph = m->opt.labeling == SVC_LABELING_COMPLETE_GRAPH;
	SvcLabelWork w = {0};
	SvcScorer	sc = {0};
	SvcEqList	eqs = {0};
	double	   *rowlam = NULL;	/* kernel sum at each row (paper) */
	double	   *absf = NULL;
	int32_t    *roweq = NULL;	/* equilibrium of each row, -1 = none yet */
	int32_t    *comp = NULL;
	int32_t    *rowlab = NULL;	/* complete graph: each row's component */
	SvcEdge	   *tree = NULL;
	double		epsilon = 0.0;
	bool		all_rows = true;	/* trajectories from every row */
	int64_t		every = svc_label_units_per_check(m);
	SvcTrajTol	tt;
	SvcStatus	st;
	double	   *pair = NULL;	/* four rows' first steps: next, then work */
	double		pair_lam[4];
	bool		pair_ok[4];
	int64_t		pair_at = -1;	/* the first of the rows, or -1 */
	int64_t		pair_n = 0;		/* how many rows from pair_at */

	st = check_inputs(m, xs, n, err);
	if (st != SVC_OK)
		return st;
	svc_traj_tol(m, &tt);
	eqs.dims = d;

	st = svc_label_work_init(env, m, &w, err);
	if (st != SVC_OK)
		return st;
	/* trajectories through the scorer: the same ends, fewer full sums */
	st = svc_scorer_init(env, m, &sc, err);
	if (st != SVC_OK)
	{
		svc_label_work_free(env, &w);
		return st;
	}
	rowlam = svc_alloc(env, sizeof(double) * (size_t) n, err);
	absf = svc_alloc(env, sizeof(double) * (size_t) n, err);
	roweq = svc_alloc(env, sizeof(int32_t) * (size_t) n, err);
	if (!rowlam || !absf || !roweq)
	{
		st = SVC_ERR_NOMEM;
		goto done;
	}

	/*
	 * Algorithm 3 needs f at every row before it knows where to start
	 * trajectories; the tree gets f free from each trajectory's first step.
	 */
	if (paper)
	{
		st = svc_alg3_strip(env, m, xs, n, rowlam, absf, &epsilon, &all_rows, err);
		if (st != SVC_OK)
			goto done;
	}

	/*
	 * Every row's trajectory starts with a full step at the row, which
	 * reads every support vector twice: with the columns and every row
	 * run, four rows' first steps are taken at once (two for the last
	 * rows; the same values, svc_label_step's), reading the support
	 * vectors once for all of them.
	 */
	if (all_rows && w.cols != NULL && n > 1)
	{
		pair = svc_alloc(env, sizeof(double) * 4 * ((size_t) d + (size_t) m->n_sv), err);
		if (!pair)
		{
			st = SVC_ERR_NOMEM;
			goto done;
		}
	}

	/*
	 * Trajectories, in row order, each snapping to the equilibria found
	 * before it; roweq < 0 marks the rows left for step 10 of Algorithm 3.
	 */
	for (int64_t i = 0, run = 0; i < n; i++)
	{
		SvcTrajEnd	end;

		roweq[i] = -1;
		if (!all_rows && !svc_alg3_in_strip(rowlam[i] - m->offset, epsilon))
			continue;
		if (run++ % every == 0 && svc_interrupted(env, err))
		{
			st = SVC_ERR_INTERRUPTED;
			goto done;
		}
		if (pair != NULL && i >= pair_at + pair_n && i + 1 < n)
		{
			double	   *work = pair + 4 * (size_t) d;

			if (i + 3 < n)
			{
				const double *x4[4];
				double	   *next4[4],
						   *work4[4];

				for (int r = 0; r < 4; r++)
				{
					x4[r] = xs + (size_t) (i + r) * d;
					next4[r] = pair + (size_t) r * d;
					work4[r] = work + (size_t) r * m->n_sv;
				}
				svc_kernel_fixed_point_cols4(w.cols, (size_t) m->n_sv, m->alpha, m->n_sv, d,
											 m->gamma, x4, next4, work4, pair_ok, pair_lam);
				pair_n = 4;
			}
			else
			{
				svc_kernel_fixed_point_cols2(w.cols, (size_t) m->n_sv, m->alpha, m->n_sv, d,
											 m->gamma, xs + (size_t) i * d,
											 xs + (size_t) (i + 1) * d, pair, pair + d, work,
											 work + m->n_sv, &pair_ok[0], &pair_ok[1],
											 &pair_lam[0], &pair_lam[1]);
				pair_n = 2;
			}
			pair_at = i;
		}
		if (pair_at >= 0 && i >= pair_at && i < pair_at + pair_n)
		{
			w.pre_x = xs + (size_t) i * d;
			w.pre_next = pair + (size_t) (i - pair_at) * d;
			w.pre_lam = pair_lam[i - pair_at];
			w.pre_ok = pair_ok[i - pair_at];
		}
		svc_scorer_traj_run(&sc, eqs.x, eqs.n, xs + (size_t) i * d, &w, &tt, &end);
		w.pre_x = NULL;
		if (!paper)
		{
			rowlam[i] = end.lambda0;
			absf[i] = fabs(end.lambda0 - m->offset);
		}
		if (end.snapped)
			roweq[i] = end.near;
		else
		{
			double		lam = svc_kernel_sum(m->sv, m->alpha, m->sv_gamma, m->n_sv, d,
											 m->gamma, w.x);

			st = svc_eqlist_push(env, &eqs, w.x, lam, err);
			if (st != SVC_OK)
				goto done;
			roweq[i] = eqs.n - 1;
		}
	}
	if (!paper)
		epsilon = m->opt.epsilon > 0.0 ? m->opt.epsilon : svc_alg3_auto_epsilon(absf, n);

	if (paper)
	{
		comp = svc_alloc(env, sizeof(int32_t) * (size_t) eqs.n, err);
		if (!comp)
		{
			st = SVC_ERR_NOMEM;
			goto done;
		}
		st = svc_alg3_components(env, m, &eqs, comp, err);
		/* rows outside B_eps have equilibrium -1 until they take one */
		if (st == SVC_OK && !all_rows)
			st = svc_label_fill_nearest(env, xs, n, d, roweq, -1, NULL, err);
	}
	else if (graph)
	{
		/*
		 * Ben-Hur's graph labels the rows; each equilibrium takes the
		 * cluster of most of its rows, so that prediction, which runs a
		 * new row to an equilibrium, works as with the other labellings.
		 */
		comp = svc_alloc(env, sizeof(int32_t) * (size_t) eqs.n, err);
		rowlab = svc_alloc(env, sizeof(int32_t) * (size_t) n, err);
		if (!comp || !rowlab)
		{
			st = SVC_ERR_NOMEM;
			goto done;
		}
		st = svc_graph_label_rows(env, m, xs, n, rowlam, rowlab, NULL, err);
		if (st == SVC_OK)
			st = svc_graph_eq_parts(env, rowlab, roweq, n, eqs.n, comp, err);
	}
	else
	{
		tree = svc_alloc(env, sizeof(SvcEdge) * (size_t) eqs.n, err);
		if (!tree)
		{
			st = SVC_ERR_NOMEM;
			goto done;
		}
		if (m->boundary == SVC_BOUNDARY_SPHERE && eqs.n > 1)
			st = sphere_tree(env, m, &eqs, xs, n, roweq, rowlam, tree, err);
		else
			st = svc_saddle_tree(env, m, &eqs, xs, n, roweq, rowlam, NULL, tree, err);
	}
	if (st != SVC_OK)
		goto done;

	st = finish_model(env, m, &eqs, tree, comp, roweq, n, labels, err);
	if (st == SVC_OK)
		m->epsilon = epsilon;
done:
	svc_free(env, pair);
	svc_label_work_free(env, &w);
	svc_scorer_free(env, &sc);
	svc_eqlist_free(env, &eqs);
	svc_free(env, rowlam);
	svc_free(env, absf);
	svc_free(env, roweq);
	svc_free(env, tree);
	svc_free(env, comp);
	svc_free(env, rowlab);
	return st;
}
