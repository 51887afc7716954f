/* model_report.c - the model's description as a JSON object (svc_model_info) */
#include "model_report.h"
#include "fit.h"
#include "label_cut.h"
#include "label_lineage.h"
#include "model_codec.h"
#include "solver.h"

#include <stdarg.h>
#include <stdio.h>

/* Text that grows as it is appended to; a failed grow stops it. */
typedef struct TextBuf
{
	const SvcEnv *env;
	SvcError   *err;
	SvcStatus	status;
	char	   *buf;
	int64_t		cap;
	size_t		pos;
	char		num[8][SVC_DOUBLE_TEXT_LEN];	/* the last doubles formatted */
	int			next_num;
} TextBuf;

static void
emit(TextBuf *t, const char *fmt,...)
__attribute__((format(printf, 2, 3)));

static void
emit(TextBuf *t, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (t->status != SVC_OK)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
	{
		t->status = svc_fail(t->err, SVC_ERR_INTERNAL, "cannot format the model report");
		return;
	}
	t->status = svc_grow(t->env, (void **) &t->buf, &t->cap,
						 (int64_t) t->pos + n + 1, 1, t->err);
	if (t->status != SVC_OK)
		return;
	va_start(ap, fmt);
	vsnprintf(t->buf + t->pos, (size_t) (t->cap - (int64_t) t->pos), fmt, ap);
	va_end(ap);
	t->pos += (size_t) n;
}

/* A double as its shortest exact text, valid until eight more are made. */
static const char *
num(TextBuf *t, double v)
{
	char	   *s = t->num[t->next_num++ % 8];

	svc_double_text(s, v);
	return s;
}

/* The cut in effect: what svc_cut_apply does with these options. */
static const char *
cut_rule_name(const SvcModel *m)
{
	if (m->opt.labeling != SVC_LABELING_TREE)
		return svc_labeling_name(m->opt.labeling);
	return svc_cut_by_name(svc_cut_by(&m->opt));
}

/*
 * The ids' lineage (label_lineage.h): per cluster, in the model's order,
 * its id, status and the old clusters it came from (its parent first,
 * then those merged into it, by old id) with what each shares;
 * then the old clusters that ended, and the next id.
 */
static void
lineage_report(TextBuf *t, const SvcModel *m)
{
	SvcLineageStatus *status;
	bool		first = true;

	status = svc_alloc(t->env, sizeof(SvcLineageStatus) * (size_t) m->n_clusters, t->err);
	if (status == NULL)
	{
		t->status = SVC_ERR_NOMEM;
		return;
	}
	if (t->status == SVC_OK)
		t->status = svc_lineage_statuses(t->env, m, status, t->err);
	emit(t, ", \"lineage\": {\"clusters\": [");
	for (int32_t k = 1; k <= m->n_clusters && t->status == SVC_OK; k++)
	{
		bool		any = false;

		emit(t, "%s{\"id\": %d, \"status\": \"%s\", \"from\": [", k > 1 ? ", " : "",
			 svc_cluster_id(m, k), svc_lineage_status_name(status[k - 1]));
		/* the links are by cluster, then kind: the parent comes first */
		for (int pass = 0; pass < 2; pass++)
		{
			for (int32_t l = 0; l < m->n_links; l++)
				if (m->links[l].cluster == k)
				{
					if (pass == 0)
						emit(t, "%s%d", any ? ", " : "", m->links[l].old_id);
					else
						emit(t, "%s%lld", any ? ", " : "", (long long) m->links[l].shared);
					any = true;
				}
			emit(t, pass == 0 ? "], \"shared\": [" : "]}");
			any = false;
		}
	}
	emit(t, "], \"ended\": [");
	for (int32_t l = 0; l < m->n_links; l++)
		if (m->links[l].kind == SVC_LINK_ENDED)
		{
			emit(t, "%s%d", first ? "" : ", ", m->links[l].old_id);
			first = false;
		}
	emit(t, "], \"next_id\": %d}", m->next_id);
	svc_free(t->env, status);
}

char *
svc_model_info_json(const SvcEnv *env, const SvcModel *m, SvcError *err)
{
	TextBuf		t;
	double	   *stability = NULL;
	double		cut_level = 0.0;
	bool		has_cut_level = false;

	if (m->n_edges > 0)
	{
		/* stability[K], then K doubles of scratch for the peaks */
		stability = svc_alloc(env, sizeof(double) * 2 * (size_t) m->n_clusters, err);
		if (stability == NULL)
			return NULL;
		has_cut_level = svc_cut_summary(m, &cut_level, stability,
										stability + m->n_clusters);
	}
	t.env = env;
	t.err = err;
	t.status = SVC_OK;
	t.buf = NULL;
	t.cap = 0;
	t.pos = 0;
	t.next_num = 0;
	emit(&t, "{\"format_version\": %d, \"solver\": \"%s\", \"boundary\": \"%s\", ",
		 svc_model_format_version(m), svc_solver_name(m->solver),
		 m->boundary == SVC_BOUNDARY_SPHERE ? "sphere" : "hyperplane");
	emit(&t, "\"dims\": %d, \"budget\": %d, \"strategy\": \"%s\", \"k\": %d, ",
		 m->dims, m->opt.budget, svc_strategy_name(m->opt.strategy), m->opt.k);
	/* the budget maintenance's rule: bsgd's only */
	if (m->solver == SVC_SOLVER_BSGD)
		emit(&t, "\"keep_isolated\": %s, ", m->opt.keep_isolated ? "true" : "false");
	emit(&t, "\"n_support_vectors\": %d, \"gamma\": %s, \"gamma_auto\": %s, ",
		 m->n_sv, num(&t, m->gamma), m->opt.gamma == 0 ? "true" : "false");
	emit(&t, "\"gamma_rule\": \"%s\", ", svc_gamma_rule_name(&m->opt));
	if (m->opt.gamma == 0)
	{
		/* the width's reason: the median it read, from the width itself */
		double		f = svc_gamma_dims_factor(m->dims, m->opt.gamma_rule);
		/*
		 * the exact sphere's share of that width: known for the rule of
		 * 0.5.0 on; a sphere by "auto-d" may be 0.4.0's, at the full width
		 */
		double		ratio = m->boundary == SVC_BOUNDARY_SPHERE &&
			m->opt.gamma_rule == SVC_GAMMA_RULE_AUTO ?
			svc_sphere_width_ratio(&m->opt, m->dims) : 1.0;

		/* bsgd's widening (fit.c), undone to read the median */
		double		widen = m->gamma_widen > 0 ? m->gamma_widen : 1.0;

		emit(&t, "\"gamma_reason\": \"256 / median squared distance of the scaled rows (%s)",
			 num(&t, SVC_GAMMA_AUTO_FACTOR * f * widen / (m->gamma * ratio)));
		if (m->dims > 2)
			emit(&t, " x %s (%s at %d dims)", num(&t, f),
				 m->opt.gamma_rule == SVC_GAMMA_RULE_AUTO ? "max(2/d, 1/8)" : "2/d", m->dims);
		if (ratio != 1.0)
			emit(&t, " / %s (the exact sphere's share of the budgeted width)", num(&t, ratio));
		if (m->gamma_widen > 0)
			emit(&t, " x %s (the rows sat %s x d kernel units from the nearest support vector at that width, at least %s)",
				 num(&t, m->gamma_widen), num(&t, m->gamma_cover), num(&t, SVC_GAMMA_COVER_GATE));
		emit(&t, "\", ");
	}
	emit(&t, "\"c\": %s, \"epsilon\": %s, \"tol\": %s, ",
		 num(&t, m->opt.c), num(&t, m->epsilon), num(&t, m->opt.tol));
	/* 0 is smo's automatic cap (options.h) */
	if (m->opt.max_iter == 0)
		emit(&t, "\"max_iter\": \"auto\", ");
	else
		emit(&t, "\"max_iter\": %lld, ", (long long) m->opt.max_iter);
	emit(&t, "\"seed\": %llu, \"scale\": \"%s\", \"sample\": %lld, \"labeling\": \"%s\", ",
		 (unsigned long long) m->opt.seed, svc_scale_name(m->opt.scale),
		 (long long) m->opt.sample, svc_labeling_name(m->opt.labeling));
	if (m->opt.labeling == SVC_LABELING_COMPLETE_GRAPH)
	{
		if (m->opt.segment_points == SVC_SEGMENT_POINTS_AUTO)
			emit(&t, "\"segment_points\": \"auto\", ");
		else
			emit(&t, "\"segment_points\": %d, ", m->opt.segment_points);
	}
	emit(&t, "\"outlier_fraction\": %s, \"offset\": %s, \"bandwidth_k\": %d, ",
		 num(&t, m->opt.nu), num(&t, m->offset), m->opt.bandwidth_k);
	emit(&t, "\"cut\": \"%s\", \"merge_ratio\": %s, \"min_cluster_share\": %s, "
		 "\"min_cluster_size\": %lld, \"min_cluster_size_rows\": \"%s\", ",
		 cut_rule_name(m), num(&t, m->opt.merge_ratio), num(&t, m->opt.min_cluster_share),
		 (long long) m->opt.min_cluster_size, svc_size_rows_name(m->opt.min_size_rows));
	emit(&t, "\"assign_rule\": \"%s\", ", svc_assign_rule_name(m->opt.assign_rule));
	if (m->opt.has_level)
		emit(&t, "\"level\": %s, ", num(&t, m->opt.level));
	else
		emit(&t, "\"level\": null, ");
	emit(&t, "\"n_clusters\": %d, \"n_equilibria\": %d, \"n_tree_edges\": %d, ",
		 m->n_clusters, m->n_eq, m->n_edges);
	if (has_cut_level)
		emit(&t, "\"cut_level\": %s, ", num(&t, cut_level));
	else
		emit(&t, "\"cut_level\": null, ");
	emit(&t, "\"cluster_ids\": [");
	for (int32_t i = 0; i < m->n_clusters; i++)
		emit(&t, "%s%d", i ? ", " : "", svc_cluster_id(m, i + 1));
	emit(&t, "], \"cluster_sizes\": [");
	for (int32_t i = 0; i < m->n_clusters; i++)
		emit(&t, "%s%lld", i ? ", " : "", (long long) m->cluster_size[i]);
	emit(&t, "], \"stability\": ");
	if (stability)
	{
		emit(&t, "[");
		for (int32_t i = 0; i < m->n_clusters; i++)
			emit(&t, "%s%.6g", i ? ", " : "", stability[i]);
		emit(&t, "], ");
	}
	else
		emit(&t, "null, ");
	emit(&t, "\"rows_seen\": %lld, \"rows_used\": %lld, \"iterations\": %lld, "
		 "\"converged\": %s",
		 (long long) m->rows_seen, (long long) m->rows_used,
		 (long long) m->iterations, m->converged ? "true" : "false");
	if (m->solver == SVC_SOLVER_SMO || m->solver == SVC_SOLVER_AID ||
		m->solver == SVC_SOLVER_INCREMENTAL)
		emit(&t, ", \"objective\": %s, \"gap\": %s, \"cache_hits\": %lld, "
			 "\"cache_misses\": %lld, \"cache_mb\": %d",
			 num(&t, m->objective), num(&t, m->gap), (long long) m->cache_hits,
			 (long long) m->cache_misses, m->opt.cache_mb);
	if (m->solver == SVC_SOLVER_AID)
	{
		emit(&t, ", \"aid_gap\": %s, \"aid_rounds\": %d, \"aid_aggregates\": [",
			 num(&t, m->opt.aid_gap), m->aid_rounds);
		for (int32_t i = 0; i < m->aid_rounds; i++)
			emit(&t, "%s%lld", i ? ", " : "", (long long) m->aid_aggregates[i]);
		emit(&t, "], \"aid_final_gap\": %s, \"aid_share_aggregated\": %s",
			 num(&t, m->aid_final_gap), num(&t, m->aid_share));
	}
	if (m->lab_seen_normal > 0 || m->lab_seen_anomaly > 0)
	{
		/* labelled rows: on the wrong side means counted, not hidden */
		emit(&t, ", \"labelled\": {\"normal\": %lld, \"anomaly\": %lld, "
			 "\"seen_normal\": %lld, \"seen_anomaly\": %lld, \"sampled\": %s, ",
			 (long long) m->lab_normal, (long long) m->lab_anomaly,
			 (long long) m->lab_seen_normal, (long long) m->lab_seen_anomaly,
			 m->lab_normal + m->lab_anomaly < m->lab_seen_normal + m->lab_seen_anomaly ?
			 "true" : "false");
		emit(&t, "\"wrong_side_normal\": %lld, \"wrong_side_anomaly\": %lld, "
			 "\"weight_min\": %s, ",
			 (long long) m->lab_wrong_normal, (long long) m->lab_wrong_anomaly,
			 num(&t, m->lab_weight_min));
		emit(&t, "\"weight_max\": %s, \"label_radius\": %s, \"label_sample\": %lld, "
			 "\"label_interpolation\": \"%s\", ",
			 num(&t, m->lab_weight_max), num(&t, m->opt.label_radius),
			 (long long) m->opt.label_sample, svc_label_curve_name(m->opt.label_curve));
		emit(&t, "\"anomaly_bound\": %s, \"label_spread\": %s", num(&t, m->opt.anomaly_bound),
			 m->opt.label_spread ? "true" : "false");
		/* the labelled normals' kernel width: the solver's gamma before 0.5.0's wider lift */
		if (m->opt.label_spread)
			emit(&t, ", \"lift_gamma\": %s", num(&t, m->lab_wide > 0 ? m->lab_gamma : m->gamma));
		emit(&t, "}");
	}
	if (m->warm_starts > 0)
	{
		/* the share of new rows outside the init's range: drift (fit.h) */
		emit(&t, ", \"warm_start\": {\"count\": %lld, \"rows_before\": %lld, "
			 "\"steps_before\": %lld, \"rows_new\": %lld, \"rows_outside\": %lld, ",
			 (long long) m->warm_starts, (long long) m->warm_rows_before,
			 (long long) m->warm_steps_before, (long long) m->warm_rows_new,
			 (long long) m->warm_rows_outside);
		emit(&t, "\"outside_share\": %s}",
			 num(&t, (double) m->warm_rows_outside / (double) m->warm_rows_new));
	}
	if (m->keep_n > 0)
	{
		/* the window of kept rows (keep.h): by arrival counter */
		emit(&t, ", \"kept_rows\": {\"rows\": %lld, \"window\": \"%s\", \"sample\": %lld, "
			 "\"oldest\": %lld, \"newest\": %lld, \"rows_passed\": %lld, ",
			 (long long) m->keep_n, svc_window_name(m->opt.window), (long long) m->opt.sample,
			 (long long) m->keep_counter[0], (long long) m->keep_counter[m->keep_n - 1],
			 (long long) (m->keep_next - 1));
		emit(&t, "\"added\": %lld, \"removed\": %lld}",
			 (long long) m->keep_added, (long long) m->keep_removed);
	}
	if (m->cluster_id != NULL)
		lineage_report(&t, m);
	emit(&t, "}");
	svc_free(env, stability);
	if (t.status != SVC_OK)
	{
		svc_free(env, t.buf);
		return NULL;
	}
	return t.buf;
}
