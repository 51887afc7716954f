/*
 * model_funcs.c - inspecting a model and scoring single rows
 *
 * svc_decision and svc_predict run once per row over large tables: the
 * model is decoded once per query and kept in fn_extra with a scorer
 * (score.h: pruned kernel sums, certified trajectories), so a call costs
 * one scaling and the scorer's sums, and allocates nothing.
 */
#include "svclust.h"

#include "label.h"
#include "label_cut.h"
#include "model_report.h"
#include "score.h"

#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include <math.h>

PG_FUNCTION_INFO_V1(svc_model_info);
PG_FUNCTION_INFO_V1(svc_decision);
PG_FUNCTION_INFO_V1(svc_predict);
PG_FUNCTION_INFO_V1(svc_recut);
PG_FUNCTION_INFO_V1(svc_features_support);

/* Workspace kept with a cached model. */
typedef struct ScoreWork
{
	double	   *scaled;			/* [dims] */
	double	   *raw;			/* [dims] a real[] row in double */
	SvcScorer	scorer;
} ScoreWork;

static ScoreWork *
get_work(FunctionCallInfo fcinfo, SvcModelCache *cache)
{
	if (cache->extra == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(cache->mcxt);
		ScoreWork  *w = palloc0(sizeof(ScoreWork));
		SvcError	err;

		w->scaled = palloc(sizeof(double) * cache->model.dims);
		w->raw = palloc(sizeof(double) * cache->model.dims);
		if (svc_scorer_init(&svc_pg_env, &cache->model, &w->scorer, &err) != SVC_OK)
			svc_report(&err);
		MemoryContextSwitchTo(old);
		cache->extra = w;
	}
	return (ScoreWork *) cache->extra;
}

Datum
svc_model_info(PG_FUNCTION_ARGS)
{
	SvcModelCache *cache = svc_get_model(fcinfo, 0);
	SvcError	err;
	char	   *json = svc_model_info_json(&svc_pg_env, &cache->model, &err);

	if (json == NULL)
		svc_report(&err);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

/*
 * The cached model and workspace of a call, with its row scaled into it;
 * fname names the function in the detail of a row of the wrong length.
 */
static SvcModelCache *
scaled_row(FunctionCallInfo fcinfo, ScoreWork **work, const char *fname)
{
	SvcModelCache *cache = svc_get_model(fcinfo, 0);
	SvcArrayCopy copy;
	ArrayType  *arr = svc_getarg_array(fcinfo, 1, &copy);
	int			dims;
	const double *x;
	int			n = svc_array_length(arr);

	if (n > 0 && n <= SVC_MAX_DIMS)	/* else: too many elements, below */
		svc_check_dims_detail(cache->model.dims, n,
							  "Argument 2 of %s (features) has %d element%s; the model (argument 1) has %d dimensions.",
							  fname, n, n == 1 ? "" : "s", cache->model.dims);
	*work = get_work(fcinfo, cache);
	/*
	 * a real[] row that passes every check but the finite one as it is
	 * (one dimension, the model's length, no NULL): scaled from its floats
	 * in one pass; the checks below give the error of a row that fails
	 */
	if (ARR_ELEMTYPE(arr) == FLOAT4OID && ARR_NDIM(arr) == 1 && !ARR_HASNULL(arr) &&
		n == cache->model.dims && n > 0 &&
		svc_model_scale_floats(&cache->model, (const float *) ARR_DATA_PTR(arr),
							   (*work)->scaled))
		return cache;
	if (ARR_ELEMTYPE(arr) == FLOAT4OID)
		x = svc_check_features_float4(arr, cache->model.dims, &dims, "features", (*work)->raw);
	else
		x = svc_check_features(arr, cache->model.dims, &dims, "features");
	svc_model_scale_row(&cache->model, x, (*work)->scaled);
	return cache;
}

Datum
svc_decision(PG_FUNCTION_ARGS)
{
	ScoreWork  *w;
	SvcModelCache *cache = scaled_row(fcinfo, &w, "svc_decision");

	(void) cache;
	PG_RETURN_FLOAT8(svc_scorer_decision(&w->scorer, w->scaled));
}

Datum
svc_predict(PG_FUNCTION_ARGS)
{
	ScoreWork  *w;
	SvcModelCache *cache = scaled_row(fcinfo, &w, "svc_predict");

	MemoryContext old;
	int32		cluster;

	/* the certificates it computes once belong to the cached model */
	old = MemoryContextSwitchTo(cache->mcxt);
	cluster = svc_scorer_predict(&w->scorer, w->scaled, NULL);
	MemoryContextSwitchTo(old);
	PG_RETURN_INT32(svc_cluster_id(&cache->model, cluster));
}

/* The last cut of a cached model: its options as given, and the result. */
typedef struct RecutMemo
{
	SvcCutSaved stored;			/* the model's own cut, as decoded */
	Jsonb	   *options;		/* NULL until a cut succeeded */
	bytea	   *result;
} RecutMemo;

/*
 * The same model cut again at other settings (n_clusters, level, cut,
 * merge_ratio, min_cluster_size, min_cluster_share): no training, only
 * the tree's cut and the cluster ids change.  Called per row, as in
 * svc_predict(svc_recut((SELECT model ...), options), features), the model
 * is decoded once and each distinct options value cut and encoded once.
 */
Datum
svc_recut(PG_FUNCTION_ARGS)
{
	SvcModelCache *cache = svc_get_model(fcinfo, 0);
	Jsonb	   *options = PG_GETARG_JSONB_P(1);
	RecutMemo  *memo = (RecutMemo *) cache->extra;
	MemoryContext old;
	bytea	   *out;

	if (memo == NULL)
	{
		SvcError	err;

		old = MemoryContextSwitchTo(cache->mcxt);
		memo = palloc0(sizeof(RecutMemo));
		if (svc_cut_save(&svc_pg_env, &cache->model, &memo->stored, &err) != SVC_OK)
			svc_report(&err);
		cache->extra = memo;
		MemoryContextSwitchTo(old);
	}
	if (memo->options == NULL || VARSIZE(memo->options) != VARSIZE(options) ||
		memcmp(memo->options, options, VARSIZE(options)) != 0)
	{
		/* the cut's new arrays belong to the cached model */
		old = MemoryContextSwitchTo(cache->mcxt);

		/*
		 * The options apply to the model as stored, not to the last cut:
		 * its own cut back first, so that the new cut's ids come from the
		 * stored clusters
		 */
		if (memo->options != NULL)
		{
			SvcError	err;

			pfree(memo->options);
			pfree(memo->result);
			memo->options = NULL;
			if (svc_cut_restore(&svc_pg_env, &cache->model, &memo->stored, &err) != SVC_OK)
				svc_report(&err);
		}
		svc_cut_model(&cache->model, &memo->stored.opt, options);
		memo->result = svc_model_to_bytea(&cache->model);
		memo->options = (Jsonb *) palloc(VARSIZE(options));
		memcpy(memo->options, options, VARSIZE(options));
		MemoryContextSwitchTo(old);
	}
	out = (bytea *) palloc(VARSIZE(memo->result));
	memcpy(out, memo->result, VARSIZE(memo->result));
	PG_RETURN_BYTEA_P(out);
}

/*
 * Planner support of svc_decision and svc_predict: a call whose features
 * are a real[] cast to float8[] (the implicit cast a real[] column gets)
 * becomes a call of the same C function under the name with a real[]
 * argument (svc_decision_float4, svc_predict_float4), which reads the
 * floats as they are stored.  No overload: a call with integer[],
 * numeric[] or an untyped literal still resolves to the float8[] form.
 */
Datum
svc_features_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	SupportRequestSimplify *req;
	FuncExpr   *call;
	ArrayCoerceExpr *cast;
	Oid			argtypes[2] = {BYTEAOID, FLOAT4ARRAYOID};
	char	   *name;
	Oid			target;
	List	   *qualified;

	if (!IsA(rawreq, SupportRequestSimplify))
		PG_RETURN_POINTER(NULL);
	req = (SupportRequestSimplify *) rawreq;
	call = req->fcall;
	if (list_length(call->args) != 2 || !IsA(lsecond(call->args), ArrayCoerceExpr))
		PG_RETURN_POINTER(NULL);
	cast = (ArrayCoerceExpr *) lsecond(call->args);
	if (exprType((Node *) cast->arg) != FLOAT4ARRAYOID || cast->resulttype != FLOAT8ARRAYOID)
		PG_RETURN_POINTER(NULL);
	name = psprintf("%s_float4", get_func_name(call->funcid));
	qualified = list_make2(makeString(get_namespace_name(get_func_namespace(call->funcid))),
						   makeString(name));
	target = LookupFuncName(qualified, 2, argtypes, true);
	if (!OidIsValid(target))
		PG_RETURN_POINTER(NULL);
	{
		FuncExpr   *nf = makeFuncExpr(target, call->funcresulttype,
									  list_make2(linitial(call->args), cast->arg),
									  call->funccollid, call->inputcollid, call->funcformat);

		nf->location = call->location;
		PG_RETURN_POINTER(nf);
	}
}
