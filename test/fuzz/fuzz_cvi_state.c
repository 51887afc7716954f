/*
 * fuzz_cvi_state.c - fuzz target: svc_cvi_state_check on arbitrary bytes
 *
 * svc_cvi_state_check is the door for every svc_cvi_agg state that comes
 * from outside (svc_cvi_state text and binary input, parallel workers,
 * Citus nodes).  A check must either fail with SVC_ERR_CORRUPT and a
 * message, or pass a state on which everything the aggregate does
 * afterwards is safe:
 *   - svc_cvi_state_add of a row (with and without a cluster), growing the
 *     buffer the way the transition function does when it is full; the
 *     result passes the check;
 *   - svc_cvi_state_merge of the state with itself, into a buffer with
 *     room for both: the result passes the check and holds twice the
 *     rows, or the merge fails with SVC_ERR_LIMIT (past 2^62 rows);
 *   - for small states, svc_cvi_state_input and svc_cvi_compute, whose
 *     defined indices are finite.
 */
#include "fuzz_common.h"

#include <math.h>
#include <string.h>

#include "cvi.h"
#include "cvi_state.h"

#define MAX_BYTES ((size_t) 1 << 30)
#define COMPUTE_MAX_ROWS 512

static const SvcEnv *env = &svc_env_malloc;

/* Add a row as svc_cvi_agg_transfn does; returns the (maybe grown) state. */
static uint8_t *
add_row(uint8_t *s, size_t *len, int32_t dims, bool has_cluster)
{
	double	   *row = malloc(sizeof(double) * (size_t) dims);
	SvcError	err;

	FUZZ_CHECK(row != NULL);
	for (int32_t j = 0; j < dims; j++)
		row[j] = 0.5 * j - 1.0;
	if (!svc_cvi_state_add(s, row, dims, has_cluster, 7, true, 3))
	{
		int64_t		need = svc_cvi_state_rows(s) + 1;
		int64_t		cap = svc_cvi_state_next_capacity(svc_cvi_state_capacity(s), need);
		size_t		grown_len = svc_cvi_state_size(dims, cap, svc_cvi_state_has_class(s),
												   MAX_BYTES);
		uint8_t    *grown;

		FUZZ_CHECK(cap >= need && grown_len > 0);
		grown = malloc(grown_len);
		FUZZ_CHECK(grown != NULL);
		svc_cvi_state_copy(s, grown, dims, cap);
		free(s);
		s = grown;
		*len = grown_len;
		FUZZ_CHECK(svc_cvi_state_add(s, row, dims, has_cluster, 7, true, 3));
	}
	FUZZ_CHECK(svc_cvi_state_check(s, *len, &err) == SVC_OK);
	free(row);
	return s;
}

static void
check_add(const uint8_t *data, size_t size)
{
	uint8_t    *s = malloc(size);
	size_t		len = size;
	int32_t		dims = svc_cvi_state_dims(data);

	FUZZ_CHECK(s != NULL);
	memcpy(s, data, size);
	if (dims == 0)
		dims = 3;
	s = add_row(s, &len, dims, false);
	s = add_row(s, &len, dims, true);
	free(s);
}

static void
check_merge(const uint8_t *data, size_t size)
{
	int64_t		n = svc_cvi_state_rows(data);
	int32_t		dims = svc_cvi_state_dims(data);
	size_t		len = svc_cvi_state_size(dims, 2 * n, svc_cvi_state_has_class(data), SIZE_MAX);
	uint8_t    *a;
	SvcError	err;
	SvcStatus	st;

	FUZZ_CHECK(len > 0);
	a = malloc(len);
	FUZZ_CHECK(a != NULL);
	svc_cvi_state_copy(data, a, dims, 2 * n);
	st = svc_cvi_state_merge(a, data, &err);
	if (st != SVC_OK)
	{
		/* only the count of unassigned rows can pass its bound */
		FUZZ_CHECK(st == SVC_ERR_LIMIT);
		FUZZ_CHECK_ERROR(st, err);
	}
	else
	{
		FUZZ_CHECK(svc_cvi_state_rows(a) == 2 * n);
		FUZZ_CHECK(svc_cvi_state_check(a, len, &err) == SVC_OK);
	}
	free(a);
	(void) size;
}

static void
check_compute(const uint8_t *data)
{
	SvcCviInput in;
	SvcCviResult r;
	SvcError	err;
	SvcStatus	st;

	if (svc_cvi_state_rows(data) > COMPUTE_MAX_ROWS)
		return;
	FUZZ_CHECK(svc_cvi_state_input(env, data, &in, &err) == SVC_OK);
	in.limit = 64;				/* reach the sampled paths with few rows */
	st = svc_cvi_compute(env, &in, &r, &err);
	if (st != SVC_OK)
		FUZZ_CHECK_ERROR(st, err);
	else
		for (int i = 0; i < SVC_CVI_COUNT; i++)
			FUZZ_CHECK(!r.defined[i] || isfinite(r.value[i]));
	svc_cvi_state_input_free(env, &in);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SvcError	err;
	SvcStatus	st;

	memset(&err, 0, sizeof(err));
	st = svc_cvi_state_check(data, size, &err);
	if (st != SVC_OK)
	{
		FUZZ_CHECK(st == SVC_ERR_CORRUPT);
		FUZZ_CHECK_ERROR(st, err);
		return 0;
	}
	FUZZ_CHECK(svc_cvi_state_rows(data) <= svc_cvi_state_capacity(data));
	check_add(data, size);
	check_merge(data, size);
	check_compute(data);
	return 0;
}
