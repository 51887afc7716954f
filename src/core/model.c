/* model.c - the model in memory: allocation, freeing, scaling and the decision function */
#include "model.h"
#include "kernel.h"

#include <string.h>

SvcStatus
svc_model_alloc(const SvcEnv *env, SvcModel *m, int32_t dims, int32_t n_sv,
				int32_t n_eq, int32_t n_clusters, int32_t n_edges, SvcError *err)
{
	size_t		d = (size_t) dims;

	m->dims = dims;
	m->n_sv = n_sv;
	m->n_eq = n_eq;
	m->n_clusters = n_clusters;
	m->n_edges = n_edges;
	m->shift = svc_alloc0(env, sizeof(double) * d, err);
	m->mul = svc_alloc0(env, sizeof(double) * d, err);
	m->sv = svc_alloc0(env, sizeof(double) * d * (size_t) n_sv, err);
	m->alpha = svc_alloc0(env, sizeof(double) * (size_t) n_sv, err);
	m->eq = svc_alloc0(env, sizeof(double) * d * (size_t) n_eq, err);
	m->eq_cluster = svc_alloc0(env, sizeof(int32_t) * (size_t) n_eq, err);
	m->eq_f = svc_alloc0(env, sizeof(double) * (size_t) n_eq, err);
	m->eq_rows = svc_alloc0(env, sizeof(int64_t) * (size_t) n_eq, err);
	m->cluster_size = svc_alloc0(env, sizeof(int64_t) * (size_t) n_clusters, err);
	m->edge_a = svc_alloc0(env, sizeof(int32_t) * (size_t) n_edges, err);
	m->edge_b = svc_alloc0(env, sizeof(int32_t) * (size_t) n_edges, err);
	m->edge_f = svc_alloc0(env, sizeof(double) * (size_t) n_edges, err);
	if (!m->shift || !m->mul || !m->sv || !m->alpha || !m->eq ||
		!m->eq_cluster || !m->eq_f || !m->eq_rows || !m->cluster_size ||
		!m->edge_a || !m->edge_b || !m->edge_f)
		return SVC_ERR_NOMEM;
	return SVC_OK;
}

void
svc_model_free_labelling(const SvcEnv *env, SvcModel *m)
{
	svc_free(env, m->eq);
	svc_free(env, m->eq_cluster);
	svc_free(env, m->eq_f);
	svc_free(env, m->eq_rows);
	svc_free(env, m->cluster_size);
	svc_free(env, m->edge_a);
	svc_free(env, m->edge_b);
	svc_free(env, m->edge_f);
	m->eq = m->eq_f = m->edge_f = NULL;
	m->eq_cluster = m->edge_a = m->edge_b = NULL;
	m->eq_rows = m->cluster_size = NULL;
	svc_free(env, m->cluster_id);
	svc_free(env, m->links);
	m->cluster_id = NULL;
	m->links = NULL;
	m->next_id = m->n_links = 0;
}

void
svc_model_free(const SvcEnv *env, SvcModel *m)
{
	svc_free(env, m->shift);
	svc_free(env, m->mul);
	svc_free(env, m->sv);
	svc_free(env, m->alpha);
	svc_free(env, m->sv_gamma);
	svc_free(env, m->aid_aggregates);
	m->shift = m->mul = m->sv = m->alpha = m->sv_gamma = NULL;
	m->aid_aggregates = NULL;
	m->aid_rounds = 0;
	svc_free(env, m->keep_x);
	svc_free(env, m->keep_alpha);
	svc_free(env, m->keep_c);
	svc_free(env, m->keep_counter);
	m->keep_x = m->keep_alpha = m->keep_c = NULL;
	m->keep_counter = NULL;
	m->keep_n = 0;
	svc_model_free_labelling(env, m);
}

SvcStatus
svc_model_alloc_kept(const SvcEnv *env, SvcModel *m, int64_t n, SvcError *err)
{
	size_t		d = (size_t) m->dims;

	m->keep_x = svc_alloc(env, sizeof(double) * (size_t) n * d, err);
	m->keep_alpha = svc_alloc(env, sizeof(double) * (size_t) n, err);
	m->keep_c = svc_alloc(env, sizeof(double) * (size_t) n, err);
	m->keep_counter = svc_alloc(env, sizeof(int64_t) * (size_t) n, err);
	if (!m->keep_x || !m->keep_alpha || !m->keep_c || !m->keep_counter)
		return SVC_ERR_NOMEM;
	m->keep_n = n;
	return SVC_OK;
}

SvcStatus
svc_model_corrupt(SvcError *err, const char *what)
{
	svc_fail(err, SVC_ERR_CORRUPT, "invalid svclust model");
	svc_error_detail(err, "%s", what);
	svc_error_hint(err, "The value must be a model made by svc_train(), unchanged.");
	return SVC_ERR_CORRUPT;
}

double
svc_model_decision_scaled(const SvcModel *m, const double *xs)
{
	return svc_kernel_sum(m->sv, m->alpha, m->sv_gamma, m->n_sv, m->dims,
						  m->gamma, xs) - m->offset;
}
