/*
 * model_cache.c - models as the SQL functions take and return them: the
 * decoded model of an argument, cached for the query; a model decoded or
 * encoded as a bytea; a decoded model cut again with a jsonb's options
 */
#include "svclust.h"

#include "label_cut.h"
#include "model_codec.h"

#include "utils/memutils.h"

void
svc_decode_model(bytea *raw, SvcModel *model)
{
	SvcError	err;

	if (svc_model_decode(&svc_pg_env, (const uint8_t *) VARDATA_ANY(raw),
						 VARSIZE_ANY_EXHDR(raw), model, &err) != SVC_OK)
		svc_report(&err);
}

bytea *
svc_model_to_bytea(const SvcModel *model)
{
	size_t		len = svc_model_encoded_size(model);
	bytea	   *result;

	/* 0: counts past what the model format holds */
	if (len == 0 || len > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("svclust model would be larger than 1 GB"),
				errdetail("It has %d support vectors and %d equilibria of %d features.",
						  model->n_sv, model->n_eq, model->dims),
				errhint("Lower the \"budget\", or use a budgeted strategy."));
	result = (bytea *) palloc(len + VARHDRSZ);
	SET_VARSIZE(result, len + VARHDRSZ);
	svc_model_encode(model, (uint8_t *) VARDATA(result));
	return result;
}

void
svc_cut_model(SvcModel *model, const SvcOptions *base, Jsonb *options)
{
	SvcOptions	opt = *base;
	SvcError	err;

	svc_parse_options(options, true, &opt);
	if (svc_model_recut(&svc_pg_env, model, &opt, &err) != SVC_OK)
		svc_report(&err);
}

SvcModelCache *
svc_get_model(FunctionCallInfo fcinfo, int argno)
{
	/*
	 * Compare the argument as it came, before any detoasting: for a model
	 * stored out of line that is the small toast pointer, whose value id is
	 * unique, so a model read from a table is detoasted and decoded once
	 * per query rather than once per row.  Inline values are compared
	 * byte for byte (a pointer alone can be reused for another value).
	 */
	struct varlena *arg = (struct varlena *) PG_GETARG_POINTER(argno);
	Size		arglen = VARSIZE_ANY(arg);
	SvcModelCache *cache = (SvcModelCache *) fcinfo->flinfo->fn_extra;
	MemoryContext ctx,
				old;
	bytea	   *raw;

	if (cache != NULL && cache->raw != NULL && VARSIZE_ANY(cache->raw) == arglen &&
		memcmp(cache->raw, arg, arglen) == 0)
		return cache;

	/*
	 * A new model: everything of the old one (its arrays, the caller's
	 * workspace) goes with its memory context, so a query that alternates
	 * between models decodes each time but never grows.
	 */
	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(SvcModelCache));
		fcinfo->flinfo->fn_extra = cache;
	}
	else if (cache->mcxt != NULL)
		MemoryContextDelete(cache->mcxt);
	cache->mcxt = NULL;
	cache->raw = NULL;			/* half-built until decoded */
	cache->extra = NULL;
	memset(&cache->model, 0, sizeof(cache->model));

	ctx = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "svclust model cache",
								ALLOCSET_SMALL_SIZES);
	/* owned by the cache at once: a model that fails to decode leaves its
	 * context for the next call to delete, not behind in fn_mcxt */
	cache->mcxt = ctx;
	old = MemoryContextSwitchTo(ctx);
	raw = (bytea *) pg_detoast_datum_packed(arg);
	svc_decode_model(raw, &cache->model);
	if ((Pointer) raw != (Pointer) arg)
		pfree(raw);
	cache->raw = palloc(arglen);
	memcpy(cache->raw, arg, arglen);
	MemoryContextSwitchTo(old);
	return cache;
}
