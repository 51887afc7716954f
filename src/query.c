/*
 * query.c - the user's queries of the functions that run one (svc_assign,
 * svc_cvi, svc_plot_svg): a read-only cursor on a single SELECT, the
 * checks of its columns, and feature arrays of any numeric element type
 * as float8[]
 */
#include "svclust.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"

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

static void
row_context_callback(void *arg)
{
	SvcRowContext *rc = (SvcRowContext *) arg;

	if (!rc->active)
		return;
	if (rc->has_id)
		errcontext("%s reading the row with id " INT64_FORMAT " of its query", rc->fname, rc->id);
	else
		errcontext("%s reading row " INT64_FORMAT " of its query", rc->fname, rc->rowno);
}

void
svc_row_context_push(SvcRowContext *rc, const char *fname, bool has_id)
{
	rc->fname = fname;
	rc->active = false;
	rc->has_id = has_id;
	rc->id = 0;
	rc->rowno = 0;
	rc->cb.callback = row_context_callback;
	rc->cb.arg = rc;
	rc->cb.previous = error_context_stack;
	error_context_stack = &rc->cb;
}

void
svc_row_context_pop(SvcRowContext *rc)
{
	error_context_stack = rc->cb.previous;
}
