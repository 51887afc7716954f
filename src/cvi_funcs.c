/*
 * cvi_funcs.c - clustering validity indices in SQL: svc_cvi, svc_cvi_agg
 * and its state type svc_cvi_state
 *
 * Both keep only what the indices need, in the state of cvi_state.h: the
 * features and cluster of each row that has a cluster (Davies-Bouldin,
 * compactness and silhouette need the rows themselves), and the (cluster,
 * class) pair of each row that has both.  svc_cvi(query) fills one state
 * through a read-only cursor in batches; svc_cvi_agg fills one per group,
 * in place, and merges the states of parallel workers or Citus nodes with
 * its combine function.  The indices are computed by the core
 * (src/core/cvi.c) on the rows in a canonical order, so the answer does
 * not depend on how the rows arrived; doc/cvi.md defines them and every
 * NULL rule.
 */
#include "svclust.h"

#include "cvi.h"
#include "cvi_state.h"

#include <math.h>

#include "common/shortest_dec.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(svc_cvi);
PG_FUNCTION_INFO_V1(svc_cvi_state_in);
PG_FUNCTION_INFO_V1(svc_cvi_state_out);
PG_FUNCTION_INFO_V1(svc_cvi_state_recv);
PG_FUNCTION_INFO_V1(svc_cvi_state_send);
PG_FUNCTION_INFO_V1(svc_cvi_agg_transfn);
PG_FUNCTION_INFO_V1(svc_cvi_agg_combinefn);
PG_FUNCTION_INFO_V1(svc_cvi_agg_final);
PG_FUNCTION_INFO_V1(svc_cvi_agg_final_class);

/* Rows fetched from the cursor at a time. */
#define CVI_BATCH 1000

/* The column types of an svc_cvi query, checked once. */
typedef struct CviColumns
{
	int			natts;
	Oid			cluster_type;
	Oid			class_type;
} CviColumns;

/* Where svc_cvi is in its query, for the CONTEXT line of an error. */
typedef struct CviProgress
{
	int64		row;
} CviProgress;

#define CVI_STATE_DATA(s)	((uint8_t *) VARDATA(s))
#define CVI_STATE_LEN(s)	(VARSIZE(s) - VARHDRSZ)

/* The most bytes a state holds: one varlena value. */
#define CVI_STATE_MAX_BYTES (MaxAllocSize - VARHDRSZ)

/* Raise an error unless a state from outside is well formed. */
static void
cvi_state_check(const bytea *s)
{
	SvcError	err;

	if (svc_cvi_state_check((const uint8_t *) VARDATA(s), CVI_STATE_LEN(s), &err) != SVC_OK)
		svc_report(&err);
}

/* An empty state (no rows, no dims) in cxt. */
static bytea *
cvi_state_new(MemoryContext cxt, bool has_class)
{
	bytea	   *s = MemoryContextAlloc(cxt, VARHDRSZ + SVC_CVI_STATE_HEADER_SIZE);

	SET_VARSIZE(s, VARHDRSZ + SVC_CVI_STATE_HEADER_SIZE);
	svc_cvi_state_init(CVI_STATE_DATA(s), has_class);
	return s;
}

/*
 * A copy of s in cxt with room for need rows of dims features (s's own
 * dims, or the first row's when s has none).  The rows must fit in one
 * value: past 1 GB the error says how to get the indices anyway.
 */
static bytea *
cvi_state_grow(MemoryContext cxt, const bytea *s, int32 dims, int64 need)
{
	const uint8_t *data = (const uint8_t *) VARDATA(s);
	bool		has_class = svc_cvi_state_has_class(data);
	int64		capacity = svc_cvi_state_next_capacity(svc_cvi_state_capacity(data), need);
	size_t		len = svc_cvi_state_size(dims, capacity, has_class, CVI_STATE_MAX_BYTES);
	bytea	   *grown;

	/* near the bound, take just what is needed rather than double */
	if (len == 0)
	{
		capacity = need;
		len = svc_cvi_state_size(dims, capacity, has_class, CVI_STATE_MAX_BYTES);
	}
	if (len == 0)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("too many rows for the clustering validity indices"),
				errdetail("%lld rows of %d features do not fit in 1 GB.",
						  (long long) need, dims),
				errhint("Compute the indices on a sample of the rows, for example with TABLESAMPLE."));
	grown = MemoryContextAlloc(cxt, VARHDRSZ + len);
	SET_VARSIZE(grown, VARHDRSZ + len);
	svc_cvi_state_copy(data, CVI_STATE_DATA(grown), dims, capacity);
	return grown;
}

/*
 * Add one row to the state s and return it, or a grown copy made in cxt
 * (the caller frees s if it owns it).  x (dims values, already checked
 * finite) may be NULL for a row whose features are NULL: it is skipped.
 * A row without a cluster only counts as unassigned; a row without a
 * class is left out of the class-based indices.
 */
static bytea *
cvi_state_add(MemoryContext cxt, bytea *s, const double *x, int dims,
			  bool cluster_null, int32 cluster, bool class_null, int32 klass)
{
	int32		state_dims = svc_cvi_state_dims(CVI_STATE_DATA(s));

	if (x == NULL)
		return s;
	if (state_dims > 0)
		svc_check_dims_detail(state_dims, dims,
							  "This row has %d feature%s; the earlier rows have %d.",
							  dims, dims == 1 ? "" : "s", state_dims);
	if (!svc_cvi_state_add(CVI_STATE_DATA(s), x, dims, !cluster_null, cluster,
						   !class_null, klass))
	{
		s = cvi_state_grow(cxt, s, dims, svc_cvi_state_rows(CVI_STATE_DATA(s)) + 1);
		if (!svc_cvi_state_add(CVI_STATE_DATA(s), x, dims, !cluster_null, cluster,
							   !class_null, klass))
			elog(ERROR, "svc_cvi_state has no room after growing");
	}
	return s;
}

/* Compute the indices of a state, in CurrentMemoryContext. */
static void
cvi_state_compute(const bytea *s, SvcCviResult *result)
{
	SvcCviInput in;
	SvcError	err;

	if (svc_cvi_state_input(&svc_pg_env, (const uint8_t *) VARDATA(s), &in, &err) != SVC_OK)
		svc_report(&err);
	in.limit = SVC_CVI_EXACT_LIMIT;
	if (svc_cvi_compute(&svc_pg_env, &in, result, &err) != SVC_OK)
		svc_report(&err);
	svc_cvi_state_input_free(&svc_pg_env, &in);
}

/* Check the query's columns: (numeric array, integer [, integer]). */
static void
cvi_check_columns(TupleDesc desc, CviColumns *cols)
{
	cols->natts = desc->natts;
	if (desc->natts != 2 && desc->natts != 3)
		ereport(ERROR,
				errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("svc_cvi query must return 2 or 3 columns (features, cluster [, class]), not %d",
					   desc->natts));
	svc_query_feature_column(desc, 1, "svc_cvi");
	cols->cluster_type = svc_query_int_column(desc, 2, "svc_cvi", "an integer cluster id",
											  "Return an integer, smallint or bigint cluster id.");
	cols->class_type = InvalidOid;
	if (desc->natts == 3)
		cols->class_type = svc_query_int_column(desc, 3, "svc_cvi", "an integer class id",
												"Return an integer, smallint or bigint class id, for example with a CASE over text labels.");
}

/* A cluster or class id of type type as int32, range-checked. */
static int32
cvi_id(Datum d, Oid type, const char *what)
{
	int64		v = svc_int_datum(d, type);

	if (v < PG_INT32_MIN || v > PG_INT32_MAX)
		ereport(ERROR,
				errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				errmsg("%s id %lld is out of range for integer", what,
					   (long long) v));
	return (int32) v;
}

/* Add one row of the svc_cvi query to the state *s, made in cxt. */
static void
cvi_add_tuple(MemoryContext cxt, bytea **s, const CviColumns *cols,
			  HeapTuple tuple, TupleDesc desc)
{
	bool		fnull,
				cnull,
				knull = true;
	Datum		fd = SPI_getbinval(tuple, desc, 1, &fnull);
	Datum		cd = SPI_getbinval(tuple, desc, 2, &cnull);
	Datum		kd = 0;
	const double *x = NULL;
	int			dims = 0;
	bytea	   *added;

	if (cols->natts == 3)
		kd = SPI_getbinval(tuple, desc, 3, &knull);
	if (!fnull)
		x = svc_check_features(svc_to_float8_array(DatumGetArrayTypeP(fd)), 0,
							   &dims, "features");
	added = cvi_state_add(cxt, *s, x, dims,
						  cnull, cnull ? 0 : cvi_id(cd, cols->cluster_type, "cluster"),
						  knull, knull ? 0 : cvi_id(kd, cols->class_type, "class"));
	if (added != *s)
	{
		pfree(*s);
		*s = added;
	}
}

/* CONTEXT line of an error raised while svc_cvi reads its query. */
static void
cvi_error_context(void *arg)
{
	CviProgress *p = (CviProgress *) arg;

	errcontext("svc_cvi reading row %lld of its query", (long long) p->row);
}

/* Run the query and return the state of its rows, made in cxt. */
static bytea *
cvi_read_query(const char *sql, MemoryContext cxt)
{
	MemoryContext batchctx = AllocSetContextCreate(CurrentMemoryContext,
												   "svc_cvi batch",
												   ALLOCSET_DEFAULT_SIZES);
	ErrorContextCallback errctx;
	CviProgress progress = {0};
	CviColumns	cols;
	Portal		portal;
	bytea	   *s;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	portal = svc_open_query(sql, "svc_cvi", "(features, cluster [, class])");
	cvi_check_columns(portal->tupDesc, &cols);
	s = cvi_state_new(cxt, cols.natts == 3);

	errctx.callback = cvi_error_context;
	errctx.arg = &progress;
	for (;;)
	{
		SPITupleTable *tt;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, CVI_BATCH);
		tt = SPI_tuptable;
		if (SPI_processed == 0)
			break;
		/* the row number goes with errors about a row, not the query's own */
		errctx.previous = error_context_stack;
		error_context_stack = &errctx;
		old = MemoryContextSwitchTo(batchctx);
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			progress.row++;
			cvi_add_tuple(cxt, &s, &cols, tt->vals[i], tt->tupdesc);
		}
		MemoryContextSwitchTo(old);
		error_context_stack = errctx.previous;
		MemoryContextReset(batchctx);
		SPI_freetuptable(tt);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	MemoryContextDelete(batchctx);
	return s;
}

/*
 * svc_cvi(query text) RETURNS TABLE (cvi text, value float8): the validity
 * indices of the rows (features, cluster [, class]) a query returns, one
 * row per index in the order of SvcCviIndex, NULL where undefined.
 */
Datum
svc_cvi(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	MemoryContext rowsctx;
	MemoryContext old;
	bytea	   *s;
	bool		has_class;
	SvcCviResult result;

	InitMaterializedSRF(fcinfo, 0);
	rowsctx = AllocSetContextCreate(CurrentMemoryContext, "svc_cvi rows",
									ALLOCSET_DEFAULT_SIZES);
	s = cvi_read_query(sql, rowsctx);
	has_class = svc_cvi_state_has_class(CVI_STATE_DATA(s));

	old = MemoryContextSwitchTo(rowsctx);
	cvi_state_compute(s, &result);
	MemoryContextSwitchTo(old);

	for (int i = 0; i < svc_cvi_count(has_class); i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, !result.defined[i]};

		values[0] = CStringGetTextDatum(svc_cvi_name((SvcCviIndex) i));
		values[1] = Float8GetDatum(result.value[i]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	MemoryContextDelete(rowsctx);
	return (Datum) 0;
}

Datum
svc_cvi_state_in(PG_FUNCTION_ARGS)
{
	bytea	   *s = svc_varlena_from_hex(PG_GETARG_CSTRING(0), "svc_cvi_state");

	cvi_state_check(s);
	PG_RETURN_POINTER(s);
}

Datum
svc_cvi_state_out(PG_FUNCTION_ARGS)
{
	PG_RETURN_CSTRING(svc_varlena_to_hex(PG_GETARG_BYTEA_PP(0)));
}

Datum
svc_cvi_state_recv(PG_FUNCTION_ARGS)
{
	bytea	   *s = svc_varlena_recv((StringInfo) PG_GETARG_POINTER(0));

	cvi_state_check(s);
	PG_RETURN_POINTER(s);
}

Datum
svc_cvi_state_send(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P(svc_varlena_send(PG_GETARG_BYTEA_PP(0)));
}

/*
 * Transition function of svc_cvi_agg(features, cluster [, class]): adds the
 * row to the group's state in place (a grown state is made in the calling
 * context, and the executor copies it into the aggregate's).  Not strict:
 * NULLs have meanings.
 */
Datum
svc_cvi_agg_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	bytea	   *s;
	bool		has_class = PG_NARGS() > 3;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "svc_cvi_agg_transfn called in non-aggregate context");
	if (PG_ARGISNULL(0))
		s = cvi_state_new(CurrentMemoryContext, has_class);
	else
		s = (bytea *) PG_DETOAST_DATUM(PG_GETARG_DATUM(0));

	if (!PG_ARGISNULL(1))
	{
		int			dims;
		const double *x = svc_check_features(PG_GETARG_ARRAYTYPE_P(1), 0, &dims,
											 "features");
		bool		knull = !has_class || PG_ARGISNULL(3);

		s = cvi_state_add(CurrentMemoryContext, s, x, dims, PG_ARGISNULL(2),
						  PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2),
						  knull, knull ? 0 : PG_GETARG_INT32(3));
	}
	PG_RETURN_POINTER(s);
}

/*
 * Combine function of svc_cvi_agg: appends the second state's rows to the
 * first.  Rows are only appended, never dropped, so the merged state of
 * any split of the rows holds the same rows as the serial one, and the
 * final function sorts them.
 */
Datum
svc_cvi_agg_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	bytea	   *a;
	bytea	   *b;
	int32		dims_a,
				dims_b;
	int64		need;
	SvcError	err;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "svc_cvi_agg_combinefn called in non-aggregate context");
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	b = (bytea *) PG_DETOAST_DATUM(PG_GETARG_DATUM(1));
	cvi_state_check(b);
	if (PG_ARGISNULL(0))
	{
		bytea	   *copy = palloc(VARSIZE(b));

		memcpy(copy, b, VARSIZE(b));
		PG_RETURN_POINTER(copy);
	}
	a = (bytea *) PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	dims_a = svc_cvi_state_dims(CVI_STATE_DATA(a));
	dims_b = svc_cvi_state_dims(CVI_STATE_DATA(b));
	if (dims_a > 0 && dims_b > 0)
		svc_check_dims_detail(dims_a, dims_b,
							  "Two partial states of one group hold rows of %d and %d features.",
							  dims_a, dims_b);
	need = svc_cvi_state_rows(CVI_STATE_DATA(a)) + svc_cvi_state_rows(CVI_STATE_DATA(b));
	if (need > svc_cvi_state_capacity(CVI_STATE_DATA(a)))
		a = cvi_state_grow(CurrentMemoryContext, a, dims_a > 0 ? dims_a : dims_b, need);
	if (svc_cvi_state_merge(CVI_STATE_DATA(a), CVI_STATE_DATA(b), &err) != SVC_OK)
		svc_report(&err);
	PG_RETURN_POINTER(a);
}

/* Append "key": value to a JSON object under construction. */
static void
cvi_json_value(StringInfo buf, const char *key, bool defined, double v,
			   bool integral)
{
	char		num[DOUBLE_SHORTEST_DECIMAL_LEN];

	if (buf->len > 1)
		appendStringInfoString(buf, ", ");
	appendStringInfo(buf, "\"%s\": ", key);
	if (!defined || !isfinite(v))
		appendStringInfoString(buf, "null");
	else if (integral)
		appendStringInfo(buf, "%lld", (long long) v);
	else
	{
		double_to_shortest_decimal_buf(v, num);
		appendStringInfoString(buf, num);
	}
}

/* The indices of an aggregate state (NULL: no rows) as a jsonb object. */
static Datum
cvi_agg_result(FunctionCallInfo fcinfo, bool has_class)
{
	bytea	   *s;
	SvcCviResult result;
	StringInfoData buf;

	/*
	 * Read only: the state may go on to take more rows (a window).  Not
	 * checked again: every svc_cvi_state comes from the transition or
	 * combine function or from input, which checks it.
	 */
	if (PG_ARGISNULL(0))
		s = cvi_state_new(CurrentMemoryContext, has_class);
	else
		s = (bytea *) PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	cvi_state_compute(s, &result);

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int i = 0; i < svc_cvi_count(has_class); i++)
		cvi_json_value(&buf, svc_cvi_name((SvcCviIndex) i), result.defined[i],
					   result.value[i],
					   i == SVC_CVI_N_ROWS || i == SVC_CVI_N_CLUSTERS ||
					   i == SVC_CVI_N_CLASSES);
	appendStringInfoChar(&buf, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

/* Final function of svc_cvi_agg(features, cluster). */
Datum
svc_cvi_agg_final(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(cvi_agg_result(fcinfo, false));
}

/* Final function of svc_cvi_agg(features, cluster, class). */
Datum
svc_cvi_agg_final_class(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(cvi_agg_result(fcinfo, true));
}
