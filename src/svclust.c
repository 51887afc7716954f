/*
 * svclust.c - module magic, the palloc environment, errors and the
 * checks shared by every SQL function
 */
#include "svclust.h"

#include "cut.h"
#include "model_codec.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/plancache.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

PG_MODULE_MAGIC;

static void *
pg_alloc(void *ctx, size_t size)
{
	(void) ctx;
	if (size > MaxAllocSize)
		return palloc_extended(size, MCXT_ALLOC_HUGE);
	return palloc(size);
}

static void
pg_release(void *ctx, void *ptr)
{
	(void) ctx;
	pfree(ptr);
}

static bool
pg_interrupt(void *ctx)
{
	(void) ctx;
	CHECK_FOR_INTERRUPTS();
	return false;
}

static void *
pg_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
	(void) ctx;
	(void) old_size;
	if (new_size > MaxAllocSize)
		return repalloc_huge(ptr, new_size);
	return repalloc(ptr, new_size);
}

const SvcEnv svc_pg_env = {
	.alloc = pg_alloc,
	.release = pg_release,
	.interrupt = pg_interrupt,
	.realloc = pg_realloc,
};

static int
status_errcode(SvcStatus status)
{
	switch (status)
	{
		case SVC_ERR_INVALID_PARAMETER:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case SVC_ERR_INVALID_INPUT:
			return ERRCODE_DATA_EXCEPTION;
		case SVC_ERR_DIMENSION:
			return ERRCODE_ARRAY_SUBSCRIPT_ERROR;
		case SVC_ERR_CORRUPT:
			return ERRCODE_DATA_CORRUPTED;
		case SVC_ERR_LIMIT:
			return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
		case SVC_ERR_NOMEM:
			return ERRCODE_OUT_OF_MEMORY;
		case SVC_ERR_INTERRUPTED:
			return ERRCODE_QUERY_CANCELED;
		case SVC_OK:
		case SVC_ERR_INTERNAL:
			break;
	}
	return ERRCODE_INTERNAL_ERROR;
}

void
svc_report(const SvcError *err)
{
	if (err->status == SVC_ERR_INTERNAL || err->status == SVC_OK)
		elog(ERROR, "svclust internal error: %s. Please report a bug.",
			 err->message[0] ? err->message : "unknown");
	ereport(ERROR,
			errcode(status_errcode(err->status)),
			errmsg_internal("%s", err->message),
			err->detail[0] ? errdetail_internal("%s", err->detail) : 0,
			err->hint[0] ? errhint("%s", err->hint) : 0);
	pg_unreachable();
}

void
svc_check_dims(int expected_dims, int dims)
{
	if (dims != expected_dims)
		ereport(ERROR,
				errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				errmsg("expected %d dimensions, not %d", expected_dims, dims));
}

bytea *
svc_varlena_from_hex(const char *str, const char *type_name)
{
	size_t		slen = strlen(str);
	size_t		len;
	bytea	   *s;

	if (slen < 2 || str[0] != '\\' || str[1] != 'x' || (slen - 2) % 2 != 0)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				errmsg("invalid input syntax for type %s", type_name),
				errdetail("A state is written as \\x followed by an even number of hex digits."));
	len = (slen - 2) / 2;
	if (len > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("%s value is too large", type_name));
	s = (bytea *) palloc(len + VARHDRSZ);
	SET_VARSIZE(s, len + VARHDRSZ);
	if (hex_decode(str + 2, slen - 2, VARDATA(s)) != len)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				errmsg("invalid input syntax for type %s", type_name));
	return s;
}

char *
svc_varlena_to_hex(const bytea *value)
{
	size_t		len = VARSIZE_ANY_EXHDR(value);
	char	   *out = palloc(2 + 2 * len + 1);

	out[0] = '\\';
	out[1] = 'x';
	hex_encode(VARDATA_ANY(value), len, out + 2);
	out[2 + 2 * len] = '\0';
	return out;
}

bytea *
svc_varlena_recv(StringInfo buf)
{
	int			len = buf->len - buf->cursor;
	bytea	   *s = (bytea *) palloc(len + VARHDRSZ);

	SET_VARSIZE(s, len + VARHDRSZ);
	pq_copymsgbytes(buf, VARDATA(s), len);
	return s;
}

bytea *
svc_varlena_send(const bytea *value)
{
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value));
	return pq_endtypsend(&buf);
}

const double *
svc_check_features(ArrayType *arr, int expected_dims, int *dims, const char *what)
{
	const double *values;
	int			n;

	if (ARR_ELEMTYPE(arr) != FLOAT8OID)
		ereport(ERROR,
				errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("%s must be of type double precision[]", what));
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				errmsg("%s must be a one-dimensional array", what),
				errdetail("The array has %d dimensions.", ARR_NDIM(arr)));
	n = ARR_NDIM(arr) == 1 ? ARR_DIMS(arr)[0] : 0;
	if (n == 0)
		ereport(ERROR,
				errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				errmsg("%s must not be empty", what));
	if (ARR_HASNULL(arr) && array_contains_nulls(arr))
		ereport(ERROR,
				errcode(ERRCODE_ARRAY_ELEMENT_ERROR),
				errmsg("%s must not contain NULL elements", what));
	if (n > SVC_MAX_DIMS)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("%s has too many elements", what),
				errdetail("The array has %d elements; at most %d are supported.",
						  n, SVC_MAX_DIMS));
	if (expected_dims > 0)
		svc_check_dims(expected_dims, n);
	values = (const double *) ARR_DATA_PTR(arr);
	{
		int			bad = svc_first_nonfinite(values, (size_t) n);

		if (bad >= 0)
			ereport(ERROR,
					errcode(ERRCODE_DATA_EXCEPTION),
					errmsg("%s must not contain NaN or infinity", what),
					errdetail("Element %d is %s.", bad + 1,
							  isnan(values[bad]) ? "NaN" :
							  (values[bad] > 0 ? "Infinity" : "-Infinity")));
	}
	*dims = n;
	return values;
}

void
svc_check_train_row(const SvcOptions *opt, const double *values, int dims)
{
	/*
	 * Any finite value trains with standard or minmax scaling (the state's
	 * statistics follow each column's magnitude); unscaled, the distances
	 * between rows beyond SVC_MAX_FEATURE_ABS overflow.
	 */
	if (opt->scale == SVC_SCALE_NONE)
		for (int j = 0; j < dims; j++)
			if (!(fabs(values[j]) <= SVC_MAX_FEATURE_ABS))
				ereport(ERROR,
						errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						errmsg("features must be between %g and %g to train with scale \"none\"",
							   -SVC_MAX_FEATURE_ABS, SVC_MAX_FEATURE_ABS),
						errdetail("Element %d is %g.", j + 1, values[j]),
						errhint("Use scale \"standard\" or \"minmax\": the squared distances between larger values overflow double precision."));
}

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

Portal
svc_open_query(const char *sql, const char *fname, const char *shape)
{
	SPIPlanPtr	plan = SPI_prepare(sql, 0, NULL);
	List	   *sources;
	CachedPlanSource *source;
	ListCell   *lc;

	if (plan == NULL)
		ereport(ERROR,
				errcode(ERRCODE_SYNTAX_ERROR),
				errmsg("%s could not prepare its query: %s", fname,
					   SPI_result_code_string(SPI_result)));
	sources = SPI_plan_get_plan_sources(plan);
	if (list_length(sources) != 1)
		ereport(ERROR,
				errcode(ERRCODE_WRONG_OBJECT_TYPE),
				errmsg("%s query must be a single SELECT returning %s", fname, shape),
				errdetail("The query has %d statements.", list_length(sources)));
	source = (CachedPlanSource *) linitial(sources);
	foreach(lc, source->query_list)
	{
		Query	   *q = lfirst_node(Query, lc);

		if (q->commandType != CMD_SELECT)
			ereport(ERROR,
					errcode(ERRCODE_WRONG_OBJECT_TYPE),
					errmsg("%s query must be a single SELECT returning %s", fname, shape),
					errdetail("The query is %s.", GetCommandTagName(source->commandTag)));
		if (q->hasModifyingCTE)
			ereport(ERROR,
					errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
					errmsg("%s query must be read-only", fname),
					errdetail("A WITH clause of the query modifies rows."));
		if (q->rowMarks != NIL)
			ereport(ERROR,
					errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
					errmsg("%s query must be read-only", fname),
					errdetail("The query locks rows with FOR UPDATE or FOR SHARE."));
	}
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				errcode(ERRCODE_WRONG_OBJECT_TYPE),
				errmsg("%s query must be a single SELECT returning %s", fname, shape));
	return SPI_cursor_open(NULL, plan, NULL, NULL, true);
}

/* "first", "second" or "third", for messages about a query's columns. */
static const char *
column_ordinal(int attno)
{
	static const char *const words[] = {"first", "second", "third"};

	Assert(attno >= 1 && attno <= 3);
	return words[attno - 1];
}

Oid
svc_query_int_column(TupleDesc desc, int attno, const char *fname,
					 const char *what, const char *hint)
{
	Oid			type = getBaseType(SPI_gettypeid(desc, attno));

	if (type != INT2OID && type != INT4OID && type != INT8OID)
		ereport(ERROR,
				errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("%s column of the %s query must be %s, not %s",
					   column_ordinal(attno), fname, what, format_type_be(type)),
				errhint("%s", hint));
	return type;
}

void
svc_query_feature_column(TupleDesc desc, int attno, const char *fname)
{
	Oid			type = getBaseType(SPI_gettypeid(desc, attno));
	Oid			elem = get_element_type(type);

	if (!svc_is_feature_elem(elem))
		ereport(ERROR,
				errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("%s column of the %s query must be double precision[], not %s",
					   column_ordinal(attno), fname, format_type_be(type)),
				errdetail("Arrays of double precision, real, numeric, bigint, integer and smallint are accepted."));
}

int64
svc_int_datum(Datum d, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

bool
svc_is_feature_elem(Oid elem)
{
	return elem == FLOAT8OID || elem == FLOAT4OID || elem == NUMERICOID ||
		elem == INT2OID || elem == INT4OID || elem == INT8OID;
}

/* One array element of type elem as a double. */
static double
elem_float8(Datum d, Oid elem)
{
	switch (elem)
	{
		case FLOAT4OID:
			return (double) DatumGetFloat4(d);
		case INT2OID:
			return (double) DatumGetInt16(d);
		case INT4OID:
			return (double) DatumGetInt32(d);
		case INT8OID:
			return (double) DatumGetInt64(d);
		case NUMERICOID:
			return DatumGetFloat8(DirectFunctionCall1(numeric_float8, d));
		default:
			return DatumGetFloat8(d);
	}
}

/*
 * The storage properties (pg_type's typlen, typbyval, typalign) of the
 * element types svc_is_feature_elem accepts.  They are fixed for these
 * built-in types, and svc_to_float8_array runs once per row of a query:
 * a syscache lookup each time would cost more than the conversion.
 */
static void
feature_elem_storage(Oid elem, int16 *typlen, bool *byval, char *align)
{
	switch (elem)
	{
		case INT2OID:
			*typlen = sizeof(int16);
			*byval = true;
			*align = TYPALIGN_SHORT;
			break;
		case INT4OID:
			*typlen = sizeof(int32);
			*byval = true;
			*align = TYPALIGN_INT;
			break;
		case FLOAT4OID:
			*typlen = sizeof(float4);
			*byval = true;
			*align = TYPALIGN_INT;
			break;
		case INT8OID:
			*typlen = sizeof(int64);
			*byval = FLOAT8PASSBYVAL;
			*align = TYPALIGN_DOUBLE;
			break;
		case FLOAT8OID:
			*typlen = sizeof(float8);
			*byval = FLOAT8PASSBYVAL;
			*align = TYPALIGN_DOUBLE;
			break;
		case NUMERICOID:
			*typlen = -1;
			*byval = false;
			*align = TYPALIGN_INT;
			break;
		default:
			/* not a feature type: callers check first, but stay correct */
			get_typlenbyvalalign(elem, typlen, byval, align);
			break;
	}
}

ArrayType *
svc_to_float8_array(ArrayType *arr)
{
	Oid			elem = ARR_ELEMTYPE(arr);
	int16		typlen;
	bool		byval;
	char		align;
	Datum	   *values;
	bool	   *nulls;
	int			n;

	if (elem == FLOAT8OID)
		return arr;
	feature_elem_storage(elem, &typlen, &byval, &align);
	deconstruct_array(arr, elem, typlen, byval, align, &values, &nulls, &n);
	for (int i = 0; i < n; i++)
		if (!nulls[i])
			values[i] = Float8GetDatum(elem_float8(values[i], elem));
	if (ARR_NDIM(arr) == 0)
		return construct_empty_array(FLOAT8OID);
	return construct_md_array(values, nulls, ARR_NDIM(arr), ARR_DIMS(arr),
							  ARR_LBOUND(arr), FLOAT8OID, sizeof(float8),
							  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}
