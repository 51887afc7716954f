/*
 * train_agg.c - the svc_train aggregate and its state type svc_state
 *
 * The state is a varlena of svclust's own type (text and binary I/O), so
 * parallel query and Citus can ship it between processes and nodes.  The
 * transition function updates it in place when called as an aggregate
 * (held between rows as an expanded object, StateHolder): a row costs its
 * key, the columns' range and, for a few, a sample write.  The buffer
 * grows geometrically up to the sample size, so a group of five rows does
 * not pay for a 10,000-row reservoir.
 */
#include "svclust.h"

#include <math.h>

#include "fit.h"
#include "state.h"

#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/expandeddatum.h"
#include "utils/lsyscache.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(svc_state_in);
PG_FUNCTION_INFO_V1(svc_state_out);
PG_FUNCTION_INFO_V1(svc_state_recv);
PG_FUNCTION_INFO_V1(svc_state_send);
PG_FUNCTION_INFO_V1(svc_train_transfn);
PG_FUNCTION_INFO_V1(svc_train_labelled_transfn);
PG_FUNCTION_INFO_V1(svc_train_warm_transfn);
PG_FUNCTION_INFO_V1(svc_train_combinefn);
PG_FUNCTION_INFO_V1(svc_train_finalfn);

#define STATE_DATA(s)	((uint8_t *) VARDATA(s))
#define STATE_LEN(s)	(VARSIZE(s) - VARHDRSZ)

/*
 * The options of the jsonb values a call has seen, each parsed once.  They
 * are kept by value, not just the last one: under a hashed GROUP BY the rows
 * of the groups interleave, so with options that differ by group (a seed
 * per group, say) a cache of the previous row's value alone would parse the
 * jsonb again on nearly every row.  The key is the jsonb's bytes as passed
 * (header included), so that a hit costs a hash and a memcmp of a few dozen
 * bytes; two spellings of the same options are two entries with equal wire
 * bytes, which the state check treats alike.
 */
typedef struct OptionsKey
{
	const char *bytes;			/* the jsonb datum as passed */
	Size		len;			/* its VARSIZE_ANY */
} OptionsKey;

typedef struct OptionsEntry
{
	OptionsKey	key;			/* first, as dynahash requires */
	SvcOptions	opt;
	uint8_t		wire[SVC_OPTIONS_WIRE_FULL];
} OptionsEntry;

typedef struct OptionsCache
{
	OptionsEntry defaults;		/* NULL options and the one-argument form */
	OptionsEntry *last;			/* the previous row's entry, tried first so
								 * that one group (or a sorted plan) pays no
								 * hashing; NULL after a reset */
	/*
	 * The state the previous row returned, its rows seen after that row,
	 * and the entry it was checked against (options and no init model):
	 * the next row of the same group, with the same entry, skips
	 * comparing the options' bytes.  A state the executor copies or frees
	 * is never the one recorded (it records what it returns, and a freed
	 * address comes back only as a copy of a later return), and the
	 * count guards the rest.  Cleared with the table.
	 */
	const bytea *checked_state;
	int64		checked_seen;
	const OptionsEntry *checked_entry;
	MemoryContext mcxt;			/* the table and its keys; NULL until the
								 * first non-NULL options */
	HTAB	   *table;
} OptionsCache;

/*
 * Bound on the entries kept.  Past it the table starts over: only a query
 * passing thousands of distinct options values gets here, and it then
 * parses as often as without a cache, but its memory does not grow.
 */
#define OPTIONS_CACHE_MAX 1024

/* Raise an error unless a received state is well formed. */
static void
check_state(const bytea *s)
{
	SvcError	err;

	if (svc_state_check((const uint8_t *) VARDATA(s), STATE_LEN(s), &err) != SVC_OK)
		svc_report(&err);
}

/*
 * The bytes of a state of those capacities; an error past what a value
 * holds, which names the sample sizes of the options (sample, lab_sample)
 * the capacities make room for.
 */
static size_t
checked_state_size(int32 dims, int64 capacity, int64 lab_capacity, size_t init_len,
				   int64 sample, int64 lab_sample)
{
	size_t		len = svc_state_size_warm(dims, capacity, lab_capacity, init_len);

	if (init_len > 0 && (len == 0 || len > MaxAllocSize - VARHDRSZ))
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("svc_train sample would need more than 1 GB"),
				errdetail("%lld rows of %d features and an init model of %zu bytes do not fit in one aggregate state.",
						  (long long) sample, dims, init_len),
				errhint("Lower the \"sample\" option of the init model, or its \"budget\"."));

	if ((len == 0 || len > MaxAllocSize - VARHDRSZ) && lab_capacity == 0)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("svc_train sample would need more than 1 GB"),
				errdetail("%lld rows of %d features do not fit in one aggregate state.",
						  (long long) sample, dims),
				errhint("Lower the \"sample\" option."));
	if (len == 0 || len > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("svc_train sample would need more than 1 GB"),
				errdetail("%lld rows and %lld labelled rows of %d features do not fit in one aggregate state.",
						  (long long) sample, (long long) lab_sample, dims),
				errhint("Lower the \"sample\" or \"label_sample\" option."));
	return len;
}

/*
 * Allocate a state of the given capacities and room for an init model of
 * init_len bytes in CurrentMemoryContext.  Zeroed (the rows past the kept
 * ones are part of the value's bytes) unless for svc_state_copy_labelled,
 * which writes every byte: a wide state's growth zeroed tens of MB twice.
 */
static bytea *
new_state_in(MemoryContext mcxt, int32 dims, int64 capacity, int64 lab_capacity,
			 size_t init_len, bool zeroed)
{
	size_t		len = checked_state_size(dims, capacity, lab_capacity, init_len, capacity,
										 lab_capacity);
	bytea	   *s;

	s = (bytea *) (zeroed ? MemoryContextAllocZero(mcxt, len + VARHDRSZ) :
				   MemoryContextAlloc(mcxt, len + VARHDRSZ));
	SET_VARSIZE(s, len + VARHDRSZ);
	return s;
}

static bytea *
new_state(int32 dims, int64 capacity, int64 lab_capacity, size_t init_len, bool zeroed)
{
	return new_state_in(CurrentMemoryContext, dims, capacity, lab_capacity, init_len, zeroed);
}

/*
 * A large state between rows: an expanded object (the state's bytes,
 * flat) in a context of its own under the aggregate's.  Returned as the
 * same read-write pointer row after row, the executor adopts it without
 * copying it, and it grows in place, where a plain value that grows is
 * copied twice (into the per-row context, then by the executor into the
 * aggregate's: at 768 features, tens of MB each time and a fifth of the
 * transition).  Any other reader (the final and combine functions,
 * output, a worker's tuple) gets the flat bytes (svc_state_bytes, or the
 * detoasting that flattens expanded values).
 *
 * A state becomes held only when it grows to STATE_HOLD_BYTES: a context
 * per group costs a block (8 kB) and hash aggregation walks every child
 * context of its own each time it makes a group (its memory limit), so
 * holders for the many small groups of a GROUP BY made that quadratic
 * (20,000 groups of 5 rows: 21 s against 0.07 s).  Large states are few
 * (the aggregate's memory bounds them) and copying small ones is cheap.
 */
#define STATE_HOLD_BYTES (256 * 1024)
typedef struct StateHolder
{
	ExpandedObjectHeader hdr;
	bytea	   *flat;			/* in hdr.eoh_context */
} StateHolder;

static Size
holder_flat_size(ExpandedObjectHeader *eohptr)
{
	return VARSIZE(((StateHolder *) eohptr)->flat);
}

static void
holder_flatten_into(ExpandedObjectHeader *eohptr, void *result, Size allocated_size)
{
	const bytea *flat = ((StateHolder *) eohptr)->flat;

	Assert(allocated_size == VARSIZE(flat));
	memcpy(result, flat, allocated_size);
}

static const ExpandedObjectMethods holder_methods = {
	holder_flat_size,
	holder_flatten_into
};

/* The holder a datum points at (read-write or read-only), or NULL. */
static StateHolder *
holder_of(Datum d)
{
	if (VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(d)))
	{
		ExpandedObjectHeader *eoh = DatumGetEOHP(d);

		if (eoh->eoh_methods == &holder_methods)
			return (StateHolder *) eoh;
	}
	return NULL;
}

/* An empty holder in a context of its own under aggctx. */
static StateHolder *
holder_new(MemoryContext aggctx)
{
	MemoryContext mcxt = AllocSetContextCreate(aggctx, "svc_train state",
											   ALLOCSET_SMALL_SIZES);
	StateHolder *h = MemoryContextAllocZero(mcxt, sizeof(StateHolder));

	EOH_init_header(&h->hdr, &holder_methods, mcxt);
	return h;
}

/*
 * A state argument's bytes, read in place: a holder's, else the value
 * detoasted (a copy for any other expanded or toasted value).
 */
static bytea *
svc_state_bytes(Datum d)
{
	StateHolder *h = holder_of(d);

	return h != NULL ? h->flat : (bytea *) PG_DETOAST_DATUM(d);
}

/*
 * The transition functions' state argument (NULL for the first row):
 * its bytes, and *holder when it is a holder this transition owns
 * (read-write).
 */
static bytea *
transition_state(FunctionCallInfo fcinfo, StateHolder **holder)
{
	Datum		d;

	*holder = NULL;
	if (PG_ARGISNULL(0))
		return NULL;
	d = PG_GETARG_DATUM(0);
	if (VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(d)) && holder_of(d) != NULL)
	{
		*holder = holder_of(d);
		return (*holder)->flat;
	}
	return (bytea *) PG_DETOAST_DATUM(d);
}

/* What the transition returns: the holder (its flat bytes now result), or result. */
static Datum
transition_result(StateHolder *holder, bytea *result)
{
	if (holder == NULL)
		return PointerGetDatum(result);
	if (holder->flat != result)
	{
		if (holder->flat != NULL)
			pfree(holder->flat);
		holder->flat = result;
	}
	return EOHPGetRWDatum(&holder->hdr);
}

Datum
svc_state_in(PG_FUNCTION_ARGS)
{
	bytea	   *s = svc_varlena_from_hex(PG_GETARG_CSTRING(0), "svc_state");

	check_state(s);
	PG_RETURN_POINTER(s);
}

Datum
svc_state_out(PG_FUNCTION_ARGS)
{
	PG_RETURN_CSTRING(svc_varlena_to_hex(PG_GETARG_BYTEA_PP(0)));
}

Datum
svc_state_recv(PG_FUNCTION_ARGS)
{
	bytea	   *s = svc_varlena_recv((StringInfo) PG_GETARG_POINTER(0));

	check_state(s);
	PG_RETURN_POINTER(s);
}

Datum
svc_state_send(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P(svc_varlena_send(PG_GETARG_BYTEA_PP(0)));
}

static uint32
options_key_hash(const void *key, Size keysize)
{
	const OptionsKey *k = (const OptionsKey *) key;

	(void) keysize;
	return hash_bytes((const unsigned char *) k->bytes, (int) k->len);
}

static int
options_key_match(const void *key1, const void *key2, Size keysize)
{
	const OptionsKey *a = (const OptionsKey *) key1;
	const OptionsKey *b = (const OptionsKey *) key2;

	(void) keysize;
	return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0 ? 0 : 1;
}

/*
 * The options of this row: the defaults for NULL options, else the entry
 * of its jsonb value, parsed the first time the value is seen.
 */
static const OptionsEntry *
get_options_in(FunctionCallInfo fcinfo, OptionsCache **slot, int argno)
{
	OptionsCache *cache = *slot;
	OptionsKey	key;
	OptionsEntry *entry;
	SvcOptions	opt;
	bool		found;

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(OptionsCache));
		svc_options_default(&cache->defaults.opt);
		svc_options_encode_full(&cache->defaults.opt, cache->defaults.wire);
		*slot = cache;
	}
	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return &cache->defaults;

	key.bytes = (const char *) PG_GETARG_POINTER(argno);
	key.len = VARSIZE_ANY(key.bytes);
	if (cache->last != NULL && options_key_match(&cache->last->key, &key, 0) == 0)
		return cache->last;
	if (cache->table != NULL)
	{
		entry = (OptionsEntry *) hash_search(cache->table, &key, HASH_FIND, NULL);
		if (entry != NULL)
		{
			cache->last = entry;
			return entry;
		}
	}

	/* a new value: parsed before it has an entry, so an error leaves none */
	svc_options_default(&opt);
	svc_parse_options(DatumGetJsonbP(PG_GETARG_DATUM(argno)), false, &opt);

	if (cache->table != NULL && hash_get_num_entries(cache->table) >= OPTIONS_CACHE_MAX)
	{
		MemoryContextDelete(cache->mcxt);
		cache->mcxt = NULL;
		cache->table = NULL;
		cache->last = NULL;
		cache->checked_state = NULL;
		cache->checked_entry = NULL;
	}
	if (cache->table == NULL)
	{
		HASHCTL		ctl;

		cache->mcxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt,
											"svc_train options",
											ALLOCSET_SMALL_SIZES);
		ctl.keysize = sizeof(OptionsKey);
		ctl.entrysize = sizeof(OptionsEntry);
		ctl.hash = options_key_hash;
		ctl.match = options_key_match;
		ctl.hcxt = cache->mcxt;
		cache->table = hash_create("svc_train options", 16, &ctl,
								   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
	}

	/* the key must outlive the row's datum: it points at a copy */
	key.bytes = memcpy(MemoryContextAlloc(cache->mcxt, key.len), key.bytes, key.len);
	entry = (OptionsEntry *) hash_search(cache->table, &key, HASH_ENTER, &found);
	Assert(!found);
	entry->opt = opt;
	svc_options_encode_full(&entry->opt, entry->wire);
	cache->last = entry;
	return entry;
}

/* get_options_in with the cache in fn_extra (the forms without init) */
static const OptionsEntry *
get_options(FunctionCallInfo fcinfo, int argno)
{
	return get_options_in(fcinfo, (OptionsCache **) &fcinfo->flinfo->fn_extra, argno);
}

/*
 * A real[] training row into buf: the common case (one dimension, no
 * NULL, finite, not too long) in one pass, which also writes -0.0 as 0.0
 * (*canonical: the state keys such a row faster); any other row through
 * svc_check_features_float4, for its checks and messages.
 */
static const double *
train_real_row(ArrayType *arr, int *dims, double *buf, bool *canonical)
{
	int			n = ARR_NDIM(arr) == 1 ? ARR_DIMS(arr)[0] : 0;

	if (ARR_NDIM(arr) == 1 && !ARR_HASNULL(arr) && n >= 1 && n <= SVC_MAX_DIMS &&
		svc_state_floats_to_row((const float *) ARR_DATA_PTR(arr), n, buf))
	{
		*dims = n;
		*canonical = true;
		return buf;
	}
	return svc_check_features_float4(arr, 0, dims, "features", buf);
}

/*
 * A training row's features as doubles, with svc_check_features' checks
 * and messages: a float8[] read in place; a real[] converted into a
 * buffer the backend keeps (no allocation per row); integer and numeric
 * arrays converted as PostgreSQL's casts to float8[] convert them.  So
 * every overload of svc_train gives the model of
 * svc_train(features::float8[]) on the same rows.
 */
static const double *
train_features(ArrayType *arr, int *dims, bool *canonical)
{
	static double *buf;			/* SVC_MAX_DIMS values, in TopMemoryContext */
	Oid			elem = ARR_ELEMTYPE(arr);

	*canonical = false;
	if (elem == FLOAT8OID)
		return svc_check_features(arr, 0, dims, "features");
	if (elem == FLOAT4OID)
	{
		if (buf == NULL)
			buf = MemoryContextAlloc(TopMemoryContext, sizeof(double) * SVC_MAX_DIMS);
		return train_real_row(arr, dims, buf, canonical);
	}
	/* the transition functions on anyarray can be given any array */
	if (!svc_is_feature_elem(elem))
		ereport(ERROR,
				errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("features must be double precision[], not %s",
					   format_type_be(get_array_type(elem))),
				errdetail("Arrays of double precision, real, numeric, bigint, integer and smallint are accepted."));
	return svc_check_features(svc_to_float8_array(arr), 0, dims, "features");
}

/*
 * Add one row to the group's state (NULL: the first row): label 0 for an
 * unlabelled row, 1 or -1 for a labelled one (labelled: the form that
 * takes labels).  opts are the row's options; init (init_len bytes, 0:
 * none) the model a warm start continues, carried in the state's tail.
 */
static bytea *
add_row_opts(FunctionCallInfo fcinfo, bytea *state, int featarg, const OptionsEntry *opts,
			 OptionsCache *oc, int label, bool labelled, const uint8_t *init,
			 size_t init_len, bool init_checked, MemoryContext aggctx, StateHolder **holderp)
{
	StateHolder *holder = *holderp;
	ArrayType  *arr;
	const double *values;
	int			dims;
	bool		added;
	bool		canonical;
	int64		counted = 0;	/* the rows the state counted before this one */
	SvcArrayCopy copy;

	arr = svc_getarg_array(fcinfo, featarg, &copy);
	values = train_features(arr, &dims, &canonical);
	svc_check_train_row(&opts->opt, values, dims);

	if (state == NULL)
	{
		int64		first = Min(16, opts->opt.sample);

		/*
		 * Fail now, not after a long scan, if the full sample cannot fit.
		 * The state is built in the per-row context: the executor copies a
		 * new state value into the aggregate context itself.  The labelled
		 * area is made when the first labelled row comes.
		 */
		(void) checked_state_size(dims, svc_state_max_capacity(&opts->opt),
								  labelled ? svc_state_max_lab_capacity(&opts->opt) : 0,
								  init_len, opts->opt.sample,
								  labelled ? opts->opt.label_sample : 0);
		state = new_state(dims, first, 0, init_len, true);
		svc_state_init(STATE_DATA(state), dims, first, &opts->opt);
		if (init_len > 0)
			svc_state_set_init(STATE_DATA(state), init, init_len);
		/*
		 * The workers of one parallel scan draw from streams of their own,
		 * so that their samples are independent; a serial scan keeps
		 * stream 0.  States built elsewhere (Citus shards, partitionwise
		 * aggregation) start on stream 0 too: each still samples its own
		 * rows uniformly, which is all the merge needs.
		 */
		if (ParallelWorkerNumber >= 0)
			svc_state_set_stream(STATE_DATA(state), (uint64) ParallelWorkerNumber + 1);
	}
	else
	{
		int32		state_dims = svc_state_dims(STATE_DATA(state));
		bool		checked;

		counted = svc_state_rows_seen(STATE_DATA(state));
		checked = oc != NULL && state == oc->checked_state &&
			opts == oc->checked_entry && counted == oc->checked_seen;

		svc_check_dims_detail(state_dims, dims,
							  "This row has %d feature%s; the group's earlier rows have %d.",
							  dims, dims == 1 ? "" : "s", state_dims);
		if (!checked)
		{
			/* the init first: another init brings other options with it */
			if (!init_checked && !svc_state_init_equal(STATE_DATA(state), init, init_len))
				ereport(ERROR,
						errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("svc_train init model must be the same for every row of a group"),
						errhint("Pass one stored model per group, e.g. from a scalar subquery."));
			if (!svc_state_options_equal(STATE_DATA(state), opts->wire))
				ereport(ERROR,
						errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("svc_train options must be the same for every row of a group"));
		}
	}

	added = label != 0 ? svc_state_add_labelled(STATE_DATA(state), values, label) :
		canonical ? svc_state_add_canonical(STATE_DATA(state), values) :
		svc_state_add(STATE_DATA(state), values);
	if (!added)
	{
		const uint8_t *old = STATE_DATA(state);
		int64		capacity = svc_state_capacity(old);
		int64		lab_capacity = svc_state_lab_capacity(old);
		bytea	   *grown;

		if (label == 0)
			capacity = svc_state_next_capacity(old);
		else
			lab_capacity = svc_state_next_lab_capacity(old);
		if (holder != NULL && state == holder->flat && label == 0)
		{
			/*
			 * A held state grows where it is: its rows stay in place (a
			 * large block's realloc need not copy them), the parts after
			 * them move up.
			 */
			size_t		len = checked_state_size(dims, capacity, lab_capacity,
												 svc_state_init_len(old), capacity,
												 lab_capacity);

			grown = (bytea *) repalloc(state, len + VARHDRSZ);
			holder->flat = grown;
			SET_VARSIZE(grown, len + VARHDRSZ);
			svc_state_grow_in_place(STATE_DATA(grown), capacity);
		}
		else
		{
			MemoryContext mcxt = CurrentMemoryContext;

			/* a large grown state goes into a holder (see StateHolder) */
			if (holder == NULL &&
				checked_state_size(dims, capacity, lab_capacity, svc_state_init_len(old),
								   capacity, lab_capacity) >= STATE_HOLD_BYTES)
				*holderp = holder = holder_new(aggctx);
			if (holder != NULL)
				mcxt = holder->hdr.eoh_context;
			grown = new_state_in(mcxt, dims, capacity, lab_capacity, svc_state_init_len(old),
								 false);
			svc_state_copy_labelled(old, STATE_DATA(grown), capacity, lab_capacity);
		}
		state = grown;
		added = label != 0 ? svc_state_add_labelled(STATE_DATA(state), values, label) :
			canonical ? svc_state_add_canonical(STATE_DATA(state), values) :
			svc_state_add(STATE_DATA(state), values);
		if (!added)
			elog(ERROR, "svclust state did not grow. Please report a bug.");
	}
	if (oc != NULL)
	{
		oc->checked_state = state;
		/* each add counts one row, in the grown copy too */
		oc->checked_seen = counted + 1;
		oc->checked_entry = opts;
	}
	if (svc_progress_on)
		svc_progress_tick("svc_train", "rows scanned", svc_state_seen(STATE_DATA(state)));
	return state;
}

/* add_row_opts with the options of argument optarg and no init model */
static bytea *
add_row(FunctionCallInfo fcinfo, bytea *state, int featarg, int optarg, int label,
		MemoryContext aggctx, StateHolder **holderp)
{
	const OptionsEntry *opts = get_options(fcinfo, optarg);

	return add_row_opts(fcinfo, state, featarg, opts, (OptionsCache *) fcinfo->flinfo->fn_extra,
						label, PG_NARGS() > 3, NULL, 0, false, aggctx, holderp);
}

Datum
svc_train_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx;
	StateHolder *holder;
	bytea	   *state;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		elog(ERROR, "svc_train_transfn called in non-aggregate context");
	state = transition_state(fcinfo, &holder);

	/* a NULL feature array is skipped, like avg() skips NULL */
	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_DATUM(transition_result(holder, state));
	}
	state = add_row(fcinfo, state, 1, 2, 0, aggctx, &holder);
	PG_RETURN_DATUM(transition_result(holder, state));
}

/*
 * svc_train(features, label, options): label 1 (normal), -1 (anomaly) or
 * NULL (unknown, an ordinary row).  Labelled rows are kept apart from the
 * sample (state.h) and steer the bounds of the rows near them.
 */
Datum
svc_train_labelled_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx;
	StateHolder *holder;
	bytea	   *state;
	int			label = 0;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		elog(ERROR, "svc_train_labelled_transfn called in non-aggregate context");
	state = transition_state(fcinfo, &holder);
	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_DATUM(transition_result(holder, state));
	}
	if (!PG_ARGISNULL(2))
	{
		int32		given = PG_GETARG_INT32(2);

		if (given != 1 && given != -1)
			ereport(ERROR,
					errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					errmsg("svc_train label must be 1, -1 or NULL"),
					errdetail("The label is %d.", given),
					errhint("Pass 1 for a row known to be normal, -1 for a known anomaly, NULL for an unknown row."));
		label = given;
	}
	state = add_row(fcinfo, state, 1, 3, label, aggctx, &holder);
	PG_RETURN_DATUM(transition_result(holder, state));
}

/*
 * The warm start's cache, in fn_extra: the options of the rows without an
 * init model (plain svc_train), the init model decoded once per value
 * (svc_get_model, which keeps its cache in fn_extra: swapped in around the
 * call), and the options of the last (options, init) pair, read over the
 * init model's and checked against them.
 */
typedef struct WarmCache
{
	OptionsCache *plain;
	SvcModelCache *model;
	bytea	   *init;			/* the init's bytes as the state stores them,
								 * for model->raw (in model->mcxt) */
	/*
	 * The state last seen to hold init (made or compared on the previous
	 * row), so that a group's rows compare the init's bytes once, not on
	 * every row.  Any state the transition function makes or grows takes
	 * this place at once, and a new init value clears it, so a freed
	 * state's address never vouches for another.
	 */
	const bytea *checked_state;
	const bytea *pair_raw;		/* model->raw the entry below was made for */
	char	   *pair_options;	/* ... and a copy of the options' jsonb,
								 * NULL for NULL options */
	OptionsEntry pair;
} WarmCache;

/*
 * svc_train(features, options, init): a warm start of init on the
 * group's rows (fit.h).  NULL init is the two-argument svc_train, to the
 * byte; the init model's options apply, but for the cut options of
 * options, and naming another value of any other option is an error.
 */
Datum
svc_train_warm_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx;
	StateHolder *holder;
	bytea	   *state;
	WarmCache  *wc = (WarmCache *) fcinfo->flinfo->fn_extra;
	SvcModelCache *mc;
	const char *optbytes;
	Size		optlen = 0;
	SvcError	err;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		elog(ERROR, "svc_train_warm_transfn called in non-aggregate context");
	state = transition_state(fcinfo, &holder);
	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_DATUM(transition_result(holder, state));
	}
	if (wc == NULL)
	{
		wc = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(WarmCache));
		fcinfo->flinfo->fn_extra = wc;
	}
	if (PG_ARGISNULL(3))
	{
		const OptionsEntry *opts = get_options_in(fcinfo, &wc->plain, 2);

		wc->checked_state = NULL;
		state = add_row_opts(fcinfo, state, 1, opts, wc->plain, 0, false, NULL, 0, false,
							 aggctx, &holder);
		PG_RETURN_DATUM(transition_result(holder, state));
	}

	/* the init model, decoded (and refused if damaged) once per value */
	fcinfo->flinfo->fn_extra = wc->model;
	mc = svc_get_model(fcinfo, 3);
	wc->model = mc;
	fcinfo->flinfo->fn_extra = wc;
	if (mc->extra == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(mc->mcxt);
		bytea	   *raw = (bytea *) PG_DETOAST_DATUM(PG_GETARG_DATUM(3));

		wc->init = raw == (bytea *) PG_GETARG_POINTER(3) ?
			(bytea *) memcpy(palloc(VARSIZE(raw)), raw, VARSIZE(raw)) : raw;
		mc->extra = wc->init;
		/* a new model's raw copy may reuse the old one's address */
		wc->checked_state = NULL;
		wc->pair_raw = NULL;
		MemoryContextSwitchTo(old);
	}

	/* the options of this (options, init) pair */
	optbytes = PG_ARGISNULL(2) ? NULL : (const char *) PG_GETARG_POINTER(2);
	if (optbytes != NULL)
		optlen = VARSIZE_ANY(optbytes);
	if (wc->pair_raw != mc->raw || (optbytes == NULL) != (wc->pair_options == NULL) ||
		(optbytes != NULL && (VARSIZE_ANY(wc->pair_options) != optlen ||
							  memcmp(wc->pair_options, optbytes, optlen) != 0)))
	{
		SvcOptions	opt = mc->model.opt;
		int			dims;
		bool		canonical;

		wc->pair_raw = NULL;
		if (optbytes != NULL)
			svc_parse_options(DatumGetJsonbP(PG_GETARG_DATUM(2)), false, &opt);
		(void) train_features(PG_GETARG_ARRAYTYPE_P(1), &dims, &canonical);
		if (svc_fit_warm_check(&mc->model, dims, &opt, &err) != SVC_OK)
			svc_report(&err);
		if (wc->pair_options != NULL)
			pfree(wc->pair_options);
		wc->pair_options = optbytes == NULL ? NULL :
			memcpy(MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, optlen), optbytes, optlen);
		wc->pair.opt = opt;
		svc_options_encode_full(&opt, wc->pair.wire);
		wc->pair_raw = mc->raw;
	}
	{
		bytea	   *result;

		result = add_row_opts(fcinfo, state, 1, &wc->pair, NULL, 0, false,
							  (const uint8_t *) VARDATA(wc->init),
							  VARSIZE(wc->init) - VARHDRSZ,
							  state != NULL && state == wc->checked_state, aggctx, &holder);
		wc->checked_state = result;
		PG_RETURN_DATUM(transition_result(holder, result));
	}
}

Datum
svc_train_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx;
	bytea	   *a;
	bytea	   *b;
	int64		need,
				need_lab;
	SvcError	err;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		elog(ERROR, "svc_train_combinefn called in non-aggregate context");
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	b = svc_state_bytes(PG_GETARG_DATUM(1));
	check_state(b);
	if (PG_ARGISNULL(0))
	{
		bytea	   *copy = (bytea *) palloc(VARSIZE(b));

		memcpy(copy, b, VARSIZE(b));
		PG_RETURN_POINTER(copy);
	}
	a = (bytea *) PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	svc_check_dims_detail(svc_state_dims(STATE_DATA(a)), svc_state_dims(STATE_DATA(b)),
						  "Two partial states of one group hold rows of %d and %d features.",
						  svc_state_dims(STATE_DATA(a)), svc_state_dims(STATE_DATA(b)));
	need = svc_state_merged_kept(STATE_DATA(a), STATE_DATA(b));
	need_lab = svc_state_merged_lab_kept(STATE_DATA(a), STATE_DATA(b));
	if (need > svc_state_capacity(STATE_DATA(a)) ||
		need_lab > svc_state_lab_capacity(STATE_DATA(a)))
	{
		int64		cap = Max(need, svc_state_capacity(STATE_DATA(a)));
		int64		lab_cap = Max(need_lab, svc_state_lab_capacity(STATE_DATA(a)));
		bytea	   *grown = new_state(svc_state_dims(STATE_DATA(a)), cap, lab_cap,
										  svc_state_init_len(STATE_DATA(a)), false);

		svc_state_copy_labelled(STATE_DATA(a), STATE_DATA(grown), cap, lab_cap);
		a = grown;
	}
	if (svc_state_merge(STATE_DATA(a), STATE_DATA(b), &err) != SVC_OK)
		svc_report(&err);
	PG_RETURN_POINTER(a);
}

Datum
svc_train_finalfn(PG_FUNCTION_ARGS)
{
	bytea	   *state;
	MemoryContext fitctx,
				old;
	SvcModel	model;
	SvcError	err;
	SvcStatus	st;
	bytea	   *result;
	SvcEnv		env = svc_pg_env;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = svc_state_bytes(PG_GETARG_DATUM(0));
	if (svc_state_rows_seen(STATE_DATA(state)) == 0)
		PG_RETURN_NULL();

	/* training allocates a lot of scratch: give it a context of its own */
	fitctx = AllocSetContextCreate(CurrentMemoryContext, "svclust training",
								   ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(fitctx);
	/*
	 * The exact solver's memory (its kernel cache above all) is bounded by
	 * maintenance_work_mem unless the options give cache_mb, as index
	 * builds such as pgvector's HNSW are: a fit is maintenance work.
	 */
	env.solver_memory = (size_t) maintenance_work_mem * 1024;
	svc_progress_env(&env, "svc_train");
	if (svc_progress_on)
		svc_progress_notice("svc_train", "training on %lld of %lld rows",
							(long long) svc_state_train_rows(STATE_DATA(state)),
							(long long) svc_state_seen(STATE_DATA(state)));
	st = svc_fit_state(&env, STATE_DATA(state), &model, &err);
	if (st != SVC_OK)
		svc_report(&err);
	MemoryContextSwitchTo(old);
	if (svc_progress_on)
		svc_progress_notice("svc_train", "trained: %d clusters, %d support vectors, %lld steps",
							model.n_clusters, model.n_sv, (long long) model.iterations);

	/* encoded straight into the caller's context, then the scratch goes */
	result = svc_model_to_bytea(&model);
	MemoryContextDelete(fitctx);
	PG_RETURN_BYTEA_P(result);
}
