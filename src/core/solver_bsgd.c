/* solver_bsgd.c - the solver "bsgd": budgeted SGD (bsgd.h) behind the fit's seam */
#include "solver_bsgd.h"
#include "bsgd.h"

SvcStatus
svc_train_bsgd(const SvcEnv *env, const double *x, int64_t n, int32_t d,
			   const SvcOptions *opt, double gamma, const double *weight, SvcModel *m,
			   SvcError *err)
{
	return svc_bsgd_run(env, x, n, d, opt, gamma, weight, NULL, m, err);
}

SvcStatus
svc_train_bsgd_warm(const SvcEnv *env, const double *x, int64_t n, int32_t d,
					const SvcOptions *opt, const SvcModel *init, SvcModel *m,
					SvcError *err)
{
	return svc_bsgd_run(env, x, n, d, opt, init->gamma, NULL, init, m, err);
}
