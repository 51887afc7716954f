/* solver.c - the table of solvers the fit can run, looked up by id */
#include "solver.h"
#include "solver_bsgd.h"
#include "solver_smo.h"
#include "solver_aid.h"
#include "solver_incremental.h"
#include "keep.h"

static const SvcSolverOps solvers[] = {
	{.id = SVC_SOLVER_BSGD, .name = "bsgd", .boundary = SVC_BOUNDARY_HYPERPLANE,
	.takes_weights = true, .fit = svc_train_bsgd,
	.warm_fit = svc_train_bsgd_warm},
	{.id = SVC_SOLVER_SMO, .name = "smo", .boundary = SVC_BOUNDARY_SPHERE,
	.takes_weights = true, .fit = svc_train_smo,
	.warm_fit = svc_keep_warm_fit},
	{.id = SVC_SOLVER_AID, .name = "aid", .boundary = SVC_BOUNDARY_SPHERE,
	.takes_weights = false, .fit = svc_train_aid},
	{.id = SVC_SOLVER_INCREMENTAL, .name = "incremental", .boundary = SVC_BOUNDARY_SPHERE,
	.takes_weights = false, .fit = svc_train_incremental,
	.warm_fit = svc_keep_warm_fit},
};

const SvcSolverOps *
svc_solver_find(SvcSolver id)
{
	for (size_t i = 0; i < sizeof(solvers) / sizeof(solvers[0]); i++)
		if (solvers[i].id == id)
			return &solvers[i];
	return NULL;
}

const char *
svc_solver_name(SvcSolver id)
{
	const SvcSolverOps *ops = svc_solver_find(id);

	if (ops)
		return ops->name;
	/* models may name solvers this build does not train */
	switch (id)
	{
		case SVC_SOLVER_BSGD:
			return "bsgd";
		case SVC_SOLVER_SMO:
			return "smo";
		case SVC_SOLVER_AID:
			return "aid";
		case SVC_SOLVER_INCREMENTAL:
			return "incremental";
	}
	return "unknown";
}
