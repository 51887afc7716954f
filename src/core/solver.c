/* solver.c - the table of solvers the fit can run, looked up by id */
#include "solver.h"
#include "train.h"
#include "solver_smo.h"
#include "solver_aid.h"

static const SvcSolverOps solvers[] = {
	{SVC_SOLVER_BSGD, "bsgd", SVC_BOUNDARY_HYPERPLANE, false, svc_train_bsgd},
	{SVC_SOLVER_SMO, "smo", SVC_BOUNDARY_SPHERE, true, svc_train_smo},
	{SVC_SOLVER_AID, "aid", SVC_BOUNDARY_SPHERE, true, svc_train_aid},
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
	}
	return "unknown";
}
