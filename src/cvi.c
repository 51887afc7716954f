/*
 * cvi.c - clustering validity indices in SQL: svc_cvi and svc_cvi_agg
 *
 * svc_cvi(query) reads (features, cluster [, class]) rows through a
 * read-only cursor in batches and keeps only what the indices need: the
 * features and cluster of each row that has a cluster (Davies-Bouldin,
 * compactness and silhouette need the rows themselves), and the (cluster,
 * class) pair of each row that has both.  svc_cvi_agg keeps the same for
 * each group.  The indices are computed by the core (src/core/cvi.c);
 * doc/cvi.md defines them and every NULL rule.
 */
#include "svclust.h"

#include "cvi.h"

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
PG_FUNCTION_INFO_V1(svc_cvi_agg_transfn);
PG_FUNCTION_INFO_V1(svc_cvi_agg_final);
PG_FUNCTION_INFO_V1(svc_cvi_agg_final_class);

/* Rows fetched from the cursor at a time. */
#define CVI_BATCH 1000

/* The rows kept for the indices; every array lives in cxt. */
typedef struct CviRows
{
	MemoryContext cxt;
	bool		has_class;
	int32		dims;			/* 0 until the first row with features */
	int64		n;				/* rows with a cluster */
	int64		cap;
	double	   *x;				/* [cap * dims] */
	int32	   *cluster;		/* [cap] */
	int64		n_unassigned;	/* rows with features but no cluster */
	int64		n_lab;			/* rows with a cluster and a class */
	int64		cap_lab;
	int32	   *lab_cluster;	/* [cap_lab] */
	int32	   *lab_class;		/* [cap_lab] */
} CviRows;

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

/* Start an empty set of rows whose arrays will live in cxt. */
static void
cvi_rows_init(CviRows *rows, MemoryContext cxt, bool has_class)
{
	memset(rows, 0, sizeof(*rows));
	rows->cxt = cxt;
	rows->has_class = has_class;
}

/* Grow an array of elem-byte elements to hold at least need of them. */
static void *
cvi_grow(MemoryContext cxt, void *ptr, int64 need, Size elem)
{
	if ((Size) need > MaxAllocHugeSize / elem)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("too many rows for the clustering validity indices"));
	if (ptr == NULL)
		return MemoryContextAllocHuge(cxt, (Size) need * elem);
	return repalloc_huge(ptr, (Size) need * elem);
}

/* The next capacity for cap, at least need: doubling, from 1024. */
static int64
cvi_next_cap(int64 cap, int64 need)
{
	int64		next = cap > 0 ? cap : 1024;

	while (next < need)
		next *= 2;
	return next;
}

/*
 * Keep one row.  x (dims values, already checked finite) may be NULL for a
 * row whose features are NULL: it is skipped.  A row without a cluster
 * only counts as unassigned; a row without a class is left out of the
 * class-based indices.
 */
static void
cvi_rows_add(CviRows *rows, const double *x, int dims, bool cluster_null,
			 int32 cluster, bool class_null, int32 klass)
{
	if (x == NULL)
		return;
	if (rows->dims == 0)
		rows->dims = dims;
	else
		svc_check_dims(rows->dims, dims);
	if (cluster_null)
	{
		rows->n_unassigned++;
		return;
	}
	if (rows->n == rows->cap)
	{
		int64		cap = cvi_next_cap(rows->cap, rows->n + 1);

		rows->x = cvi_grow(rows->cxt, rows->x, cap, sizeof(double) * rows->dims);
		rows->cluster = cvi_grow(rows->cxt, rows->cluster, cap, sizeof(int32));
		rows->cap = cap;
	}
	memcpy(rows->x + rows->n * rows->dims, x, sizeof(double) * rows->dims);
	rows->cluster[rows->n++] = cluster;

	if (!rows->has_class || class_null)
		return;
	if (rows->n_lab == rows->cap_lab)
	{
		int64		cap = cvi_next_cap(rows->cap_lab, rows->n_lab + 1);

		rows->lab_cluster = cvi_grow(rows->cxt, rows->lab_cluster, cap, sizeof(int32));
		rows->lab_class = cvi_grow(rows->cxt, rows->lab_class, cap, sizeof(int32));
		rows->cap_lab = cap;
	}
	rows->lab_cluster[rows->n_lab] = cluster;
	rows->lab_class[rows->n_lab++] = klass;
}

/* Compute the indices of the kept rows, in CurrentMemoryContext. */
static void
cvi_rows_compute(const CviRows *rows, SvcCviResult *result)
{
	SvcCviInput in;
	SvcError	err;

	memset(&in, 0, sizeof(in));
	in.n = rows->n;
	in.dims = rows->dims;
	in.x = rows->x;
	in.cluster = rows->cluster;
	in.n_unassigned = rows->n_unassigned;
	in.has_class = rows->has_class;
	in.n_labelled = rows->n_lab;
	in.lab_cluster = rows->lab_cluster;
	in.lab_class = rows->lab_class;
	in.limit = SVC_CVI_EXACT_LIMIT;
	if (svc_cvi_compute(&svc_pg_env, &in, result, &err) != SVC_OK)
		svc_report(&err);
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

/* Add one row of the svc_cvi query to rows. */
static void
cvi_add_tuple(CviRows *rows, const CviColumns *cols, HeapTuple tuple,
			  TupleDesc desc)
{
	bool		fnull,
				cnull,
				knull = true;
	Datum		fd = SPI_getbinval(tuple, desc, 1, &fnull);
	Datum		cd = SPI_getbinval(tuple, desc, 2, &cnull);
	Datum		kd = 0;
	const double *x = NULL;
	int			dims = 0;

	if (cols->natts == 3)
		kd = SPI_getbinval(tuple, desc, 3, &knull);
	if (!fnull)
		x = svc_check_features(svc_to_float8_array(DatumGetArrayTypeP(fd)), 0,
							   &dims, "features");
	cvi_rows_add(rows, x, dims, cnull, cnull ? 0 : cvi_id(cd, cols->cluster_type, "cluster"),
				 knull, knull ? 0 : cvi_id(kd, cols->class_type, "class"));
}

/* CONTEXT line of an error raised while svc_cvi reads its query. */
static void
cvi_error_context(void *arg)
{
	CviProgress *p = (CviProgress *) arg;

	errcontext("svc_cvi reading row %lld of its query", (long long) p->row);
}

/* Run the query and keep its rows in rows (whose context outlives SPI). */
static void
cvi_read_query(const char *sql, CviRows *rows)
{
	MemoryContext batchctx = AllocSetContextCreate(CurrentMemoryContext,
												   "svc_cvi batch",
												   ALLOCSET_DEFAULT_SIZES);
	ErrorContextCallback errctx;
	CviProgress progress = {0};
	CviColumns	cols;
	Portal		portal;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	portal = svc_open_query(sql, "svc_cvi", "(features, cluster [, class])");
	cvi_check_columns(portal->tupDesc, &cols);
	rows->has_class = cols.natts == 3;

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
			cvi_add_tuple(rows, &cols, tt->vals[i], tt->tupdesc);
		}
		MemoryContextSwitchTo(old);
		error_context_stack = errctx.previous;
		MemoryContextReset(batchctx);
		SPI_freetuptable(tt);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	MemoryContextDelete(batchctx);
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
	CviRows		rows;
	SvcCviResult result;

	InitMaterializedSRF(fcinfo, 0);
	rowsctx = AllocSetContextCreate(CurrentMemoryContext, "svc_cvi rows",
									ALLOCSET_DEFAULT_SIZES);
	cvi_rows_init(&rows, rowsctx, false);
	cvi_read_query(sql, &rows);

	old = MemoryContextSwitchTo(rowsctx);
	cvi_rows_compute(&rows, &result);
	MemoryContextSwitchTo(old);

	for (int i = 0; i < svc_cvi_count(rows.has_class); i++)
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

/*
 * Transition function of svc_cvi_agg(features, cluster [, class]): keeps
 * the row in the group's state.  Not strict: NULLs have meanings.
 */
Datum
svc_cvi_agg_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	CviRows    *rows;
	bool		has_class = PG_NARGS() > 3;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "svc_cvi_agg_transfn called in non-aggregate context");
	if (PG_ARGISNULL(0))
	{
		rows = MemoryContextAlloc(aggcxt, sizeof(CviRows));
		cvi_rows_init(rows, aggcxt, has_class);
	}
	else
		rows = (CviRows *) PG_GETARG_POINTER(0);

	if (!PG_ARGISNULL(1))
	{
		int			dims;
		const double *x = svc_check_features(PG_GETARG_ARRAYTYPE_P(1), 0, &dims,
											 "features");
		bool		knull = !has_class || PG_ARGISNULL(3);

		cvi_rows_add(rows, x, dims, PG_ARGISNULL(2),
					 PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2),
					 knull, knull ? 0 : PG_GETARG_INT32(3));
	}
	PG_RETURN_POINTER(rows);
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
	CviRows		empty;
	CviRows    *rows;
	SvcCviResult result;
	StringInfoData buf;

	if (PG_ARGISNULL(0))
	{
		cvi_rows_init(&empty, CurrentMemoryContext, has_class);
		rows = &empty;
	}
	else
		rows = (CviRows *) PG_GETARG_POINTER(0);
	cvi_rows_compute(rows, &result);

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
