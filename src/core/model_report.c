/* model_report.c - the model's description as a JSON object (svc_model_info) */
#include "model_report.h"
#include "cut.h"
#include "solver.h"

#include <stdarg.h>
#include <stdio.h>

/* Append formatted text to a fixed buffer, truncating safely. */
typedef struct TextBuf
{
	char	   *buf;
	size_t		cap;
	size_t		pos;
} TextBuf;

static void
emit(TextBuf *t, const char *fmt,...)
__attribute__((format(printf, 2, 3)));

static void
emit(TextBuf *t, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (t->pos + 1 >= t->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->pos, t->cap - t->pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->pos = ((size_t) n < t->cap - t->pos) ? t->pos + (size_t) n : t->cap - 1;
}

/* The cut in effect: what svc_cut_apply does with these options. */
static const char *
cut_rule_name(const SvcModel *m)
{
	if (m->opt.labeling != SVC_LABELING_TREE)
		return "paper";
	return svc_cut_by_name(svc_cut_by(&m->opt));
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
	t.cap = 2560 + (size_t) m->n_clusters * 56;
	t.pos = 0;
	t.buf = svc_alloc(env, t.cap, err);
	if (t.buf == NULL)
	{
		svc_free(env, stability);
		return NULL;
	}
	t.buf[0] = '\0';
	emit(&t, "{\"format_version\": %d, \"solver\": \"%s\", \"boundary\": \"%s\", ",
		 svc_model_format_version(m), svc_solver_name(m->solver),
		 m->boundary == SVC_BOUNDARY_SPHERE ? "sphere" : "hyperplane");
	emit(&t, "\"dims\": %d, \"budget\": %d, \"strategy\": \"%s\", \"k\": %d, ",
		 m->dims, m->opt.budget, svc_strategy_name(m->opt.strategy), m->opt.k);
	emit(&t, "\"n_support_vectors\": %d, \"gamma\": %.17g, \"gamma_auto\": %s, ",
		 m->n_sv, m->gamma, m->opt.gamma == 0 ? "true" : "false");
	emit(&t, "\"c\": %.17g, \"epsilon\": %.17g, \"tol\": %.17g, \"max_iter\": %lld, ",
		 m->opt.c, m->epsilon, m->opt.tol, (long long) m->opt.max_iter);
	emit(&t, "\"seed\": %llu, \"scale\": \"%s\", \"sample\": %lld, \"labeling\": \"%s\", ",
		 (unsigned long long) m->opt.seed, svc_scale_name(m->opt.scale),
		 (long long) m->opt.sample, svc_labeling_name(m->opt.labeling));
	emit(&t, "\"outlier_fraction\": %.17g, \"offset\": %.17g, \"bandwidth_k\": %d, ",
		 m->opt.nu, m->offset, m->opt.bandwidth_k);
	emit(&t, "\"cut\": \"%s\", \"merge_ratio\": %.17g, \"min_cluster_share\": %.17g, "
		 "\"min_cluster_size\": %lld, ",
		 cut_rule_name(m), m->opt.merge_ratio, m->opt.min_cluster_share,
		 (long long) m->opt.min_cluster_size);
	if (m->opt.has_level)
		emit(&t, "\"level\": %.17g, ", m->opt.level);
	else
		emit(&t, "\"level\": null, ");
	emit(&t, "\"n_clusters\": %d, \"n_equilibria\": %d, \"n_tree_edges\": %d, ",
		 m->n_clusters, m->n_eq, m->n_edges);
	if (has_cut_level)
		emit(&t, "\"cut_level\": %.17g, ", cut_level);
	else
		emit(&t, "\"cut_level\": null, ");
	emit(&t, "\"cluster_sizes\": [");
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
		 "\"converged\": %s}",
		 (long long) m->rows_seen, (long long) m->rows_used,
		 (long long) m->iterations, m->converged ? "true" : "false");
	svc_free(env, stability);
	return t.buf;
}
