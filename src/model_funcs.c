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
#include "model_report.h"
#include "score.h"

#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(svc_model_info);
PG_FUNCTION_INFO_V1(svc_decision);
PG_FUNCTION_INFO_V1(svc_predict);
PG_FUNCTION_INFO_V1(svc_recut);

/* Workspace kept with a cached model. */
typedef struct ScoreWork
{
	double	   *scaled;			/* [dims] */
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

/* The cached model and workspace of a call, with its row scaled into it. */
static SvcModelCache *
scaled_row(FunctionCallInfo fcinfo, ScoreWork **work)
{
	SvcModelCache *cache = svc_get_model(fcinfo, 0);
	SvcArrayCopy copy;
	ArrayType  *arr = svc_getarg_array(fcinfo, 1, &copy);
	int			dims;
	const double *x = svc_check_features(arr, cache->model.dims, &dims, "features");

	*work = get_work(fcinfo, cache);
	svc_model_scale_row(&cache->model, x, (*work)->scaled);
	return cache;
}

Datum
svc_decision(PG_FUNCTION_ARGS)
{
	ScoreWork  *w;
	SvcModelCache *cache = scaled_row(fcinfo, &w);

	(void) cache;
	PG_RETURN_FLOAT8(svc_scorer_decision(&w->scorer, w->scaled));
}

Datum
svc_predict(PG_FUNCTION_ARGS)
{
	ScoreWork  *w;
	SvcModelCache *cache = scaled_row(fcinfo, &w);

	MemoryContext old;
	int32		cluster;

	/* the certificates it computes once belong to the cached model */
	old = MemoryContextSwitchTo(cache->mcxt);
	cluster = svc_scorer_predict(&w->scorer, w->scaled, NULL);
	MemoryContextSwitchTo(old);
	PG_RETURN_INT32(cluster);
}

/* The last cut of a cached model: its options as given, and the result. */
typedef struct RecutMemo
{
	SvcOptions	stored;			/* the model's own options, as decoded */
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
		memo = MemoryContextAllocZero(cache->mcxt, sizeof(RecutMemo));
		memo->stored = cache->model.opt;
		cache->extra = memo;
	}
	if (memo->options == NULL || VARSIZE(memo->options) != VARSIZE(options) ||
		memcmp(memo->options, options, VARSIZE(options)) != 0)
	{
		/* the options apply to the model's own, not to the last cut's */
		if (memo->options != NULL)
		{
			pfree(memo->options);
			pfree(memo->result);
			memo->options = NULL;
		}
		/* the cut's new arrays belong to the cached model */
		old = MemoryContextSwitchTo(cache->mcxt);
		svc_cut_model(&cache->model, &memo->stored, options);
		memo->result = svc_model_to_bytea(&cache->model);
		memo->options = (Jsonb *) palloc(VARSIZE(options));
		memcpy(memo->options, options, VARSIZE(options));
		MemoryContextSwitchTo(old);
	}
	out = (bytea *) palloc(VARSIZE(memo->result));
	memcpy(out, memo->result, VARSIZE(memo->result));
	PG_RETURN_BYTEA_P(out);
}
