/*
 * fuzz_state.c - fuzz target: svc_state_check on arbitrary bytes
 *
 * svc_state_check is the door for every state that comes from outside
 * (svc_state text and binary input, parallel workers, Citus nodes).  A
 * check must either fail with SVC_ERR_CORRUPT and a message, or pass a
 * state on which everything the aggregate does afterwards is safe and
 * keeps the state valid:
 *   - svc_state_sample (the rows to train on, the labelled rows and the
 *     scaling statistics);
 *   - svc_state_add of a row, and svc_state_add_labelled of a normal and
 *     of an anomalous one, growing the buffer the way the transition
 *     function does when the state is full; the result passes the check;
 *   - svc_state_merge of the state with itself, into a buffer of the
 *     capacity the combine function gives it; the result passes the check
 *     and holds the same rows, each counted twice (the rows of a model
 *     that keeps its rows: the reservoir's merge);
 *   - for small states, svc_fit_state (with budget and max_iter capped so
 *     that one input stays cheap): it fails with a reported error, or
 *     gives a model whose bytes decode again.
 */
#include "fuzz_common.h"

#include <math.h>
#include <string.h>

#include "bytes.h"
#include "fit.h"
#include "model.h"
#include "state.h"
#include "model_codec.h"
#include "../unit/unit_state.h"

#define STATE_OPTIONS_OFFSET 72		/* see the layout in state.h */
#define FIT_MAX_KEPT 256
#define FIT_MAX_VALUES 1024

static const SvcEnv *env = &svc_env_malloc;

static uint8_t *
copy_bytes(const uint8_t *data, size_t size)
{
	uint8_t    *c = malloc(size ? size : 1);

	FUZZ_CHECK(c != NULL);
	memcpy(c, data, size);
	return c;
}

static void
check_extract(const uint8_t *s, int32_t dims)
{
	size_t		d = (size_t) dims;
	size_t		n = (size_t) svc_state_train_rows(s);
	size_t		lab_n = (size_t) svc_state_train_lab_rows(s);
	double	   *rows = malloc(sizeof(double) * (2 * n * d + 1));
	double	   *lab = malloc(sizeof(double) * (2 * lab_n * (d + 1) + 1));
	double	   *stats = malloc(sizeof(double) * 4 * d);
	SvcError	err;
	SvcStatus	st;

	FUZZ_CHECK(rows && lab && stats);
	st = svc_state_sample(env, s, rows, lab, stats, stats + d, stats + 2 * d, stats + 3 * d,
						  &err);
	FUZZ_CHECK(st == SVC_OK);
	for (size_t i = 0; i < n * d; i++)
		FUZZ_CHECK(isfinite(rows[i]));
	for (size_t i = 0; i < lab_n; i++)
	{
		for (size_t j = 0; j < d; j++)
			FUZZ_CHECK(isfinite(lab[i * (d + 1) + j]));
		FUZZ_CHECK(lab[i * (d + 1) + d] == 1.0 || lab[i * (d + 1) + d] == -1.0);
	}
	for (size_t j = 0; j < d; j++)
		FUZZ_CHECK(!isnan(stats[j]) && !isnan(stats[d + j]) && !(stats[d + j] < 0));
	free(rows);
	free(lab);
	free(stats);
}

/* Add a row with this label (0: unlabelled), growing as svc_train_transfn does. */
static uint8_t *
add_grow(uint8_t *s, const double *row, int label)
{
	FUZZ_CHECK(unit_state_add(&s, row, label) >= 0);
	return s;
}

static void
check_add(const uint8_t *data, size_t size, int32_t dims)
{
	uint8_t    *s = copy_bytes(data, size);
	double	   *row = malloc(sizeof(double) * (size_t) dims);
	SvcError	err;

	FUZZ_CHECK(row != NULL);
	for (int32_t j = 0; j < dims; j++)
		row[j] = 0.25 * (j + 1) - (j % 2 ? 3.0 : 0.0);
	s = add_grow(s, row, 0);
	FUZZ_CHECK(svc_state_check(s, unit_state_len(s), &err) == SVC_OK);
	/* a warm start takes no labelled rows (the glue has no such form) */
	if (svc_state_init_len(s) == 0)
	{
		s = add_grow(s, row, 1);
		s = add_grow(s, row, -1);
		FUZZ_CHECK(svc_state_check(s, unit_state_len(s), &err) == SVC_OK);
	}
	free(row);
	free(s);
}

static void
check_merge(const uint8_t *data, size_t size, int32_t dims)
{
	int64_t		cap = svc_state_capacity(data);
	int64_t		need = svc_state_merged_kept(data, data);
	int64_t		newcap = need > cap ? need : cap;
	int64_t		lab_cap = svc_state_lab_capacity(data);
	int64_t		lab_need = svc_state_merged_lab_kept(data, data);
	int64_t		new_lab_cap = lab_need > lab_cap ? lab_need : lab_cap;
	size_t		len = svc_state_size_warm(dims, newcap, new_lab_cap, svc_state_init_len(data));
	uint8_t    *a;
	SvcError	err;
	SvcStatus	st;

	FUZZ_CHECK(len > 0 && need >= svc_state_kept(data));
	a = calloc(1, len);
	FUZZ_CHECK(a != NULL);
	svc_state_copy_labelled(data, a, newcap, new_lab_cap);
	st = svc_state_merge(a, data, &err);
	if (st != SVC_OK)
		FUZZ_CHECK_ERROR(st, err);
	else
	{
		SvcOptions	opt;

		svc_state_options(data, &opt);
		/* the same rows, twice each: the same slots, or the reservoir's merge */
		FUZZ_CHECK(svc_state_kept(a) == (opt.keep_rows ? need : svc_state_kept(data)));
		FUZZ_CHECK(svc_state_seen(a) == 2 * svc_state_seen(data));
		FUZZ_CHECK(svc_state_check(a, len, &err) == SVC_OK);
	}
	free(a);
}

static void
check_fit(const uint8_t *data, size_t size, int32_t dims, int64_t kept)
{
	uint8_t    *s;
	SvcOptions	opt;
	SvcModel	m,
				m2;
	SvcError	err;
	SvcStatus	st;

	kept += svc_state_train_lab_rows(data);
	if (kept < 1 || kept > FIT_MAX_KEPT || kept * dims > FIT_MAX_VALUES)
		return;
	s = copy_bytes(data, size);
	svc_state_options(s, &opt);
	if (svc_state_init_len(s) > 0)
	{
		/* a warm start must keep its init's options: fit only small ones */
		if (opt.budget > 16 || opt.max_iter > 3000)
		{
			free(s);
			return;
		}
	}
	if (opt.budget > 16)
		opt.budget = 16;
	if (opt.max_iter > 3000 || opt.max_iter == 0)	/* 0: smo's automatic cap */
		opt.max_iter = 3000;
	svc_options_encode_full(&opt, s + STATE_OPTIONS_OFFSET);
	FUZZ_CHECK(svc_state_check(s, size, &err) == SVC_OK);

	memset(&err, 0, sizeof(err));
	st = svc_fit_state(env, s, &m, &err);
	if (st != SVC_OK)
	{
		FUZZ_CHECK(st != SVC_ERR_INTERNAL);
		FUZZ_CHECK_ERROR(st, err);
	}
	else
	{
		size_t		len = svc_model_encoded_size(&m);
		uint8_t    *bytes;

		/* what training returns, every model function must accept */
		FUZZ_CHECK(len > 0);
		bytes = malloc(len);
		FUZZ_CHECK(bytes != NULL);
		svc_model_encode(&m, bytes);
		st = svc_model_decode(env, bytes, len, &m2, &err);
		if (st != SVC_OK)
			fprintf(stderr, "trained model does not decode: %s: %s\n",
					err.message, err.detail);
		FUZZ_CHECK(st == SVC_OK);
		svc_model_free(env, &m2);
		free(bytes);
	}
	svc_model_free(env, &m);
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SvcError	err;
	SvcStatus	st;
	int32_t		dims;
	int64_t		kept;

	memset(&err, 0, sizeof(err));
	st = svc_state_check(data, size, &err);
	if (st != SVC_OK)
	{
		FUZZ_CHECK(st == SVC_ERR_CORRUPT);
		FUZZ_CHECK_ERROR(st, err);
		return 0;
	}
	dims = svc_state_dims(data);
	kept = svc_state_kept(data);
	FUZZ_CHECK(unit_state_len(data) == size);
	FUZZ_CHECK(kept >= 0 && kept <= svc_state_capacity(data) &&
			   svc_state_seen(data) >= kept);

	check_extract(data, dims);
	check_add(data, size, dims);
	check_merge(data, size, dims);
	check_fit(data, size, dims, svc_state_train_rows(data));
	return 0;
}
