/* model_report.h - the model's description as a JSON object */
#ifndef SVC_MODEL_REPORT_H
#define SVC_MODEL_REPORT_H

#include "svc_core.h"
#include "model.h"

/*
 * The model's description as a JSON object (NUL-terminated, allocated
 * from env).  Keys: format_version, dims, budget, n_support_vectors,
 * gamma, c, strategy, scale, n_clusters, rows_seen, rows_used,
 * iterations, and more.
 */
char	   *svc_model_info_json(const SvcEnv *env, const SvcModel *m, SvcError *err);

#endif							/* SVC_MODEL_REPORT_H */
