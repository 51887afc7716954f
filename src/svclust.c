/*
 * svclust.c - module magic, the palloc environment, errors and the
 * checks shared by every SQL function (the model cache: model_cache.c;
 * the user's queries: query.c)
 */
#include "svclust.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/builtins.h"
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

/*
 * The checks every features array takes whatever its element type (elem,
 * named type_name in the message): one dimension, not empty, no NULL, at
 * most SVC_MAX_DIMS elements, and expected_dims of them when that is
 * positive.  Returns the number of elements.
 */
static int
check_features_shape(ArrayType *arr, Oid elem, const char *type_name, int expected_dims,
					 const char *what)
{
	int			n;

	if (ARR_ELEMTYPE(arr) != elem)
		ereport(ERROR,
				errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("%s must be of type %s", what, type_name));
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
	return n;
}

/* The error for element bad (from 0) of a features array, v, not finite. */
static void
pg_attribute_noreturn()
nonfinite_error(const char *what, int bad, double v)
{
	ereport(ERROR,
			errcode(ERRCODE_DATA_EXCEPTION),
			errmsg("%s must not contain NaN or infinity", what),
			errdetail("Element %d is %s.", bad + 1,
					  isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity")));
	pg_unreachable();
}

const double *
svc_check_features(ArrayType *arr, int expected_dims, int *dims, const char *what)
{
	int			n = check_features_shape(arr, FLOAT8OID, "double precision[]", expected_dims,
										 what);
	const double *values = (const double *) ARR_DATA_PTR(arr);
	int			bad = svc_first_nonfinite(values, (size_t) n);

	if (bad >= 0)
		nonfinite_error(what, bad, values[bad]);
	*dims = n;
	return values;
}

/*
 * Whether every float is finite: bit 31 of (exponent bits + one exponent
 * step) is set only for an all-ones exponent (infinity, NaN).  Four values
 * at a time in vector types, which any x86-64 or aarch64 build runs as
 * such: this file is built at -O2, where gcc leaves the plain loop scalar,
 * and isfinite() with a branch per value was a sixth of a wide row's
 * transition.
 */
typedef uint32 SvcU32x4 __attribute__((vector_size(16)));
typedef float SvcF32x2 __attribute__((vector_size(8)));
typedef double SvcF64x2 __attribute__((vector_size(16)));

static bool
floats_finite(const float *v, int n)
{
	SvcU32x4	acc = {0, 0, 0, 0};
	uint32		tail = 0;
	int			j = 0;

	for (; j + 4 <= n; j += 4)
	{
		SvcU32x4	b;

		memcpy(&b, v + j, sizeof(b));
		acc |= (b & 0x7f800000u) + 0x00800000u;
	}
	for (; j < n; j++)
	{
		uint32		b;

		memcpy(&b, v + j, sizeof(b));
		tail |= (b & 0x7f800000u) + 0x00800000u;
	}
	return ((acc[0] | acc[1] | acc[2] | acc[3] | tail) & 0x80000000u) == 0;
}

/* out[j] = v[j], two at a time (one conversion instruction each) */
static void
floats_to_doubles(const float *v, int n, double *out)
{
	int			j = 0;

	for (; j + 2 <= n; j += 2)
	{
		SvcF32x2	f;
		SvcF64x2	o;

		memcpy(&f, v + j, sizeof(f));
		o = __builtin_convertvector(f, SvcF64x2);
		memcpy(out + j, &o, sizeof(o));
	}
	for (; j < n; j++)
		out[j] = (double) v[j];
}

const double *
svc_check_features_float4(ArrayType *arr, int expected_dims, int *dims, const char *what,
						  double *out)
{
	int			n = check_features_shape(arr, FLOAT4OID, "real[]", expected_dims, what);
	const float *values = (const float *) ARR_DATA_PTR(arr);
	int			bad;

	if (!floats_finite(values, n))
	{
		for (bad = 0; bad < n && isfinite(values[bad]); bad++)
			;
		nonfinite_error(what, bad, values[bad]);
	}
	floats_to_doubles(values, n, out);
	*dims = n;
	return out;
}

const double *
svc_check_features_any(ArrayType *arr, int expected_dims, int *dims, const char *what,
					   double *out)
{
	if (ARR_ELEMTYPE(arr) == FLOAT4OID)
		return svc_check_features_float4(arr, expected_dims, dims, what, out);
	return svc_check_features(svc_to_float8_array(arr), expected_dims, dims, what);
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
