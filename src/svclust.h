/*
 * svclust.h - shared declarations of the PostgreSQL glue
 *
 * Only the glue (the .c files of src/) includes PostgreSQL headers; the core
 * (src/core/) is reached through an SvcEnv built on palloc.
 */
#ifndef SVCLUST_H
#define SVCLUST_H

#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/portal.h"

#include "utils/jsonb.h"

#include "svc_core.h"
#include "model.h"
#include "label_lineage.h"

/* An SvcEnv whose allocations come from CurrentMemoryContext at call
 * time and whose interrupt hook runs CHECK_FOR_INTERRUPTS(). */
extern const SvcEnv svc_pg_env;

/* ereport(ERROR) the core's error, with the SQLSTATE of its status. */
pg_attribute_noreturn() void svc_report(const SvcError *err);

/* Call a core function and report its error, if any. */
#define SVC_CHECK(call, errp) \
	do { \
		if ((call) != SVC_OK) \
			svc_report(errp); \
	} while (0)

/*
 * The one error for a row of the wrong length (the model's, a group's
 * earlier rows' or another state's): "expected %d dimensions, not %d".
 */
void		svc_check_dims(int expected_dims, int dims);

/*
 * The same error with a detail that says which row or argument has the
 * wrong length, and against what: errdetail's format and arguments.
 */
#define svc_check_dims_detail(expected_dims, dims, ...) \
	do { \
		if ((dims) != (expected_dims)) \
			ereport(ERROR, \
					errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR), \
					errmsg("expected %d dimensions, not %d", (expected_dims), (dims)), \
					errdetail(__VA_ARGS__)); \
	} while (0)

/*
 * The number of elements of a one-dimensional array, -1 for any other
 * shape: to say which row or argument has the wrong length before its
 * values are read (the checks of svc_check_features refuse the rest).
 */
static inline int
svc_array_length(ArrayType *arr)
{
	return ARR_NDIM(arr) == 1 ? ARR_DIMS(arr)[0] : -1;
}

/*
 * An error context that names the row of a user's query being read
 * ("svc_assign reading the row with id 17 of its query", or "... row 17
 * ..." without an id column, as svc_cvi's own context says): push it
 * around the loop over the rows, and set active only
 * while a row is being checked, so that an error of the query itself
 * gets no such line.
 */
typedef struct SvcRowContext
{
	ErrorContextCallback cb;
	const char *fname;
	bool		active;
	bool		has_id;
	int64		id;				/* the row's id, if has_id */
	int64		rowno;			/* 1-based, in the order the query returned */
} SvcRowContext;

void		svc_row_context_push(SvcRowContext *rc, const char *fname, bool has_id);
void		svc_row_context_pop(SvcRowContext *rc);

/*
 * Check a float8[] feature array: one dimension, not empty, no NULLs, all
 * finite, and (when expected_dims > 0) of that length.  Returns a pointer
 * to its values and sets *dims.  what names the argument in messages.
 */
const double *svc_check_features(ArrayType *arr, int expected_dims, int *dims,
								 const char *what);

/*
 * Refuse a training row that scale "none" cannot take (beyond
 * SVC_MAX_FEATURE_ABS), as svc_train does.
 */
void		svc_check_train_row(const SvcOptions *opt, const double *values, int dims);

/*
 * svc_check_features for a real[] array: the same checks and messages,
 * its values converted into out[] (room for expected_dims values when
 * expected_dims > 0, else for SVC_MAX_DIMS), which it returns.
 */
const double *svc_check_features_float4(ArrayType *arr, int expected_dims, int *dims,
										const char *what, double *out);

/*
 * The features of a query's column of any type svc_is_feature_elem
 * accepts: a real[] array read into out[] (room for expected_dims values)
 * as svc_check_features_float4 does, others through svc_to_float8_array.
 */
const double *svc_check_features_any(ArrayType *arr, int expected_dims, int *dims,
									 const char *what, double *out);

/*
 * Room for a one-dimensional array stored with a one-byte header (127
 * bytes at most: up to 13 float8s), aligned as ArrayType wants.
 */
typedef union SvcArrayCopy
{
	char		bytes[VARHDRSZ + 128];
	double		align;
} SvcArrayCopy;

/*
 * Argument argno as an array, for functions called on every row: an array
 * stored in the row with a one-byte header (up to 13 float8s) is copied
 * into *copy, where PG_GETARG_ARRAYTYPE_P would palloc a copy per row;
 * other arrays (a TOAST pointer, an expanded array) are detoasted.
 * Inline: the training's transition function calls it on every row.
 */
static inline ArrayType *
svc_getarg_array(FunctionCallInfo fcinfo, int argno, SvcArrayCopy *copy)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);

	if (VARATT_IS_SHORT(raw) && !VARATT_IS_EXTERNAL(raw))
	{
		Size		len = VARSIZE_SHORT(raw) - VARHDRSZ_SHORT;
		const char *src = VARDATA_SHORT(raw);
		char	   *dst = VARDATA(copy->bytes);

		SET_VARSIZE(copy->bytes, len + VARHDRSZ);
		/*
		 * In 16-byte moves, the last one overlapping: a memcpy of a
		 * variable length becomes "rep movs", whose start-up cost was most
		 * of the training's per-row time.
		 */
		if (len >= 16)
		{
			for (Size i = 0; i + 16 <= len; i += 16)
				memcpy(dst + i, src + i, 16);
			memcpy(dst + len - 16, src + len - 16, 16);
		}
		else
			memcpy(dst, src, len);
		return (ArrayType *) copy->bytes;
	}
	return PG_GETARG_ARRAYTYPE_P(argno);
}

/*
 * The text and binary forms of svclust's state types (svc_state,
 * svc_cvi_state), which are opaque byte strings: \x followed by hex, as
 * bytea prints, and the bytes as they are.  The caller validates the
 * bytes returned.  type_name goes into the syntax error.
 */
bytea	   *svc_varlena_from_hex(const char *str, const char *type_name);
char	   *svc_varlena_to_hex(const bytea *value);
bytea	   *svc_varlena_recv(StringInfo buf);
bytea	   *svc_varlena_send(const bytea *value);

/* ---------- query.c: the user's queries ---------- */

/*
 * Prepare a user's query and open a read-only cursor on it, after
 * SPI_connect.  Anything but one SELECT (several statements, INSERT ...
 * RETURNING, a data-modifying WITH, FOR UPDATE) is an error naming fname
 * and the columns the query must return (shape).
 */
Portal		svc_open_query(const char *sql, const char *fname, const char *shape);

/*
 * Check column attno (1-based, at most 3) of a user's query, looking
 * through domains.  svc_query_int_column wants smallint, integer or bigint
 * and returns that base type; what and hint fill its message ("an integer
 * id", ...).  svc_query_feature_column wants an array svc_is_feature_elem
 * accepts (svc_to_float8_array converts it row by row).  fname names the
 * calling function.
 */
Oid			svc_query_int_column(TupleDesc desc, int attno, const char *fname,
								 const char *what, const char *hint);
void		svc_query_feature_column(TupleDesc desc, int attno, const char *fname);

/* A datum of the base type svc_query_int_column returned, as int64. */
int64		svc_int_datum(Datum d, Oid type);

/*
 * Feature arrays a query may return: double precision, real, numeric,
 * bigint, integer or smallint elements; svc_to_float8_array converts the
 * others to float8[] (NULL elements kept, for svc_check_features to refuse).
 */
bool		svc_is_feature_elem(Oid elem);
ArrayType  *svc_to_float8_array(ArrayType *arr);

/* ---------- model_cache.c: models in and out ---------- */

/*
 * The decoded model of a bytea argument, cached in fn_extra so that a
 * per-row function decodes a constant model once per query.  Raises an
 * error for a damaged or foreign value.
 */
typedef struct SvcModelCache
{
	MemoryContext mcxt;			/* holds raw, model and extra; replaced
								 * whole when the model changes */
	bytea	   *raw;			/* copy of the bytes the model came from */
	SvcModel	model;
	void	   *extra;			/* per-function workspace, in mcxt */
} SvcModelCache;

SvcModelCache *svc_get_model(FunctionCallInfo fcinfo, int argno);

/* Decode a model into CurrentMemoryContext (no caching). */
void		svc_decode_model(bytea *raw, SvcModel *model);

/*
 * Encode a model as a bytea in CurrentMemoryContext, the value every
 * function returning a model returns.  Raises an error for a model larger
 * than a bytea can hold.
 */
bytea	   *svc_model_to_bytea(const SvcModel *model);

/*
 * Cut a decoded model's tree again with the cut options of a jsonb (n_clusters,
 * level, cut, merge_ratio, min_cluster_size, min_cluster_share) given over
 * base (the model's options as stored); errors for other keys, for bad
 * values, and for a change of cut on a model without a tree.  Options that
 * give the model's current cut leave it alone, and so does an error.
 */
void		svc_cut_model(SvcModel *model, const SvcOptions *base, Jsonb *options);

/* ---------- options_jsonb.c ---------- */

/*
 * Parse a jsonb of options over *opt (all keys, or with cut_only the cut
 * keys only); raises the parser's error.
 */
void		svc_parse_options(Jsonb *options, bool cut_only, SvcOptions *opt);

/*
 * Progress (progress.c): svclust.progress and svclust.progress_every.
 * svc_progress_env gives an environment the core's progress hook when
 * the setting is on (NOTICEs prefixed by fname, which must outlive it);
 * svc_progress_tick reports "done what" when done is a multiple of
 * progress_every; svc_progress_notice reports one line.
 */
extern bool svc_progress_on;
extern int	svc_progress_every;
void		svc_progress_env(SvcEnv *env, const char *fname);
void		svc_progress_tick(const char *fname, const char *what, int64 done);
void		svc_progress_notice(const char *fname, const char *fmt,...)
			pg_attribute_printf(2, 3);

#endif							/* SVCLUST_H */
