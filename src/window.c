/*
 * window.c - svc_cluster and svc_cluster_row: clustering as a window function
 *
 * svc_cluster(features, options) OVER (PARTITION BY ...) trains one model
 * per partition, at the partition's first row, and returns each row's
 * cluster as svc_predict does.  Training feeds the partition's rows, in
 * the partition's order, to the very state svc_train's transition function
 * builds (state.h: the same reservoir of at most `sample` rows, so memory
 * stays bounded however large the partition), fits it with svc_fit_state
 * as svc_train's final function does, and goes through the model's bytes,
 * so the rows are scored by the model svc_train would return, with
 * svc_predict's scorer: same rows, same order and same options give the
 * same cluster ids and the same f to the last bit.
 *
 * The model lives in the partition's memory (WinGetPartitionLocalMemory's
 * context), freed when the partition ends; the rows stay in the window's
 * own tuplestore, which spills to disk past work_mem.
 */
#include "svclust.h"

#include "fit.h"
#include "label.h"
#include "score.h"
#include "state.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "windowapi.h"

PG_FUNCTION_INFO_V1(svc_cluster);
PG_FUNCTION_INFO_V1(svc_cluster_row);

/* What a partition keeps between the calls of its rows. */
typedef struct PartitionModel
{
	bool		ready;			/* trained (or found empty) */
	bool		empty;			/* every feature array NULL: no model */
	SvcModel	model;
	SvcScorer	scorer;			/* svc_decision's and svc_predict's scoring */
	double	   *scaled;			/* [dims] */
} PartitionModel;

/* The options of one row: NULL (or no argument) means the defaults. */
static void
row_options(Datum d, bool isnull, SvcOptions *opt, uint8_t *wire)
{
	svc_options_default(opt);
	if (!isnull)
		svc_parse_options(DatumGetJsonbP(d), false, opt);
	svc_options_encode_full(opt, wire);
}

/*
 * The training state of the partition's rows, as svc_train's transition
 * function builds it row by row; NULL when every feature array is NULL.
 * Allocated in CurrentMemoryContext; rowctx holds each row's values.
 */
static uint8_t *
partition_state(WindowObject winobj, FunctionCallInfo fcinfo, MemoryContext rowctx)
{
	int64		nrows = WinGetPartitionRowCount(winobj);
	MemoryContext outer = CurrentMemoryContext;
	uint8_t    *state = NULL;
	SvcOptions	opt;
	uint8_t		wire[SVC_OPTIONS_WIRE_FULL];
	bytea	   *first_options = NULL;	/* the first row's jsonb, as passed */
	bool		first_null = false;
	int32		dims = 0;

	for (int64 pos = 0; pos < nrows; pos++)
	{
		bool		isnull,
					isout;
		Datum		d;
		const double *values;
		int			n;

		if (pos % SVC_INTERRUPT_EVERY == 0)
			CHECK_FOR_INTERRUPTS();
		MemoryContextReset(rowctx);
		/* argument expressions are evaluated in the current context */
		MemoryContextSwitchTo(rowctx);
		d = WinGetFuncArgInPartition(winobj, 0, (int) pos, WINDOW_SEEK_HEAD,
									 false, &isnull, &isout);
		if (isnull)
		{
			/* a NULL feature array is skipped, as svc_train skips it */
			MemoryContextSwitchTo(outer);
			continue;
		}
		values = svc_check_features(DatumGetArrayTypeP(d), 0, &n, "features");

		if (PG_NARGS() > 1)
		{
			bool		onull;
			Datum		od = WinGetFuncArgInPartition(winobj, 1, (int) pos, WINDOW_SEEK_HEAD,
													  false, &onull, &isout);

			/*
			 * Parsed at the first row; later rows cost a comparison of
			 * bytes, and are parsed only when their value differs.
			 */
			if (state == NULL)
			{
				MemoryContextSwitchTo(outer);
				row_options(od, onull, &opt, wire);
				first_null = onull;
				if (!onull)
				{
					struct varlena *v = (struct varlena *) DatumGetPointer(od);

					first_options = palloc(VARSIZE_ANY(v));
					memcpy(first_options, v, VARSIZE_ANY(v));
				}
				MemoryContextSwitchTo(rowctx);
			}
			else if (onull != first_null ||
					 (!onull && (VARSIZE_ANY(DatumGetPointer(od)) != VARSIZE_ANY(first_options) ||
								 memcmp(DatumGetPointer(od), first_options,
										VARSIZE_ANY(first_options)) != 0)))
			{
				SvcOptions	other;
				uint8_t		other_wire[SVC_OPTIONS_WIRE_FULL];

				row_options(od, onull, &other, other_wire);
				if (memcmp(wire, other_wire, sizeof(wire)) != 0)
					ereport(ERROR,
							errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("svc_cluster options must be the same for every row of a partition"));
			}
		}
		else if (state == NULL)
			row_options((Datum) 0, true, &opt, wire);
		svc_check_train_row(&opt, values, n);
		MemoryContextSwitchTo(outer);

		if (state == NULL)
		{
			int64		cap = Min(16, opt.sample);
			size_t		full = svc_state_size(n, svc_state_max_capacity(&opt));

			/* refused up front, as svc_train does, if the sample cannot fit */
			if (full == 0 || full > MaxAllocSize)
				ereport(ERROR,
						errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						errmsg("svc_cluster sample would need more than 1 GB"),
						errdetail("%lld rows of %d features do not fit in one training state.",
								  (long long) opt.sample, n),
						errhint("Lower the \"sample\" option."));
			dims = n;
			state = palloc0(svc_state_size(dims, cap));
			svc_state_init(state, dims, cap, &opt);
		}
		else
			svc_check_dims_detail(dims, n,
								  "Row %lld of the window partition has %d feature%s; its earlier rows have %d.",
								  (long long) pos + 1, n, n == 1 ? "" : "s", dims);

		if (!svc_state_add(state, values))
		{
			int64		cap = svc_state_next_capacity(state);
			uint8_t    *grown = palloc0(svc_state_size(dims, cap));

			svc_state_copy(state, grown, cap);
			pfree(state);
			state = grown;
			if (!svc_state_add(state, values))
				elog(ERROR, "svclust state did not grow. Please report a bug.");
		}
		if (svc_progress_on)
			svc_progress_tick("svc_cluster", "rows scanned", svc_state_seen(state));
	}
	MemoryContextReset(rowctx);
	return state;
}

/* Train the partition's model into its own memory, once per partition. */
static PartitionModel *
partition_model(WindowObject winobj, FunctionCallInfo fcinfo)
{
	PartitionModel *pm = WinGetPartitionLocalMemory(winobj, sizeof(PartitionModel));
	MemoryContext partctx,
				fitctx,
				rowctx,
				old;
	uint8_t    *state;
	SvcModel	fitted;
	SvcError	err;
	SvcEnv		env = svc_pg_env;
	bytea	   *raw;

	if (pm->ready)
		return pm;
	/* the partition's local memory lives in a context reset per partition */
	partctx = GetMemoryChunkContext(pm);
	fitctx = AllocSetContextCreate(CurrentMemoryContext, "svc_cluster training",
								   ALLOCSET_DEFAULT_SIZES);
	rowctx = AllocSetContextCreate(fitctx, "svc_cluster row", ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(fitctx);
	state = partition_state(winobj, fcinfo, rowctx);
	if (state == NULL)
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(fitctx);
		pm->empty = true;
		pm->ready = true;
		return pm;
	}
	/* svc_train_finalfn's fit: the same memory bound and progress */
	env.solver_memory = (size_t) maintenance_work_mem * 1024;
	svc_progress_env(&env, "svc_cluster");
	if (svc_progress_on)
		svc_progress_notice("svc_cluster", "training on %lld of %lld rows",
							(long long) svc_state_train_rows(state),
							(long long) svc_state_seen(state));
	if (svc_fit_state(&env, state, &fitted, &err) != SVC_OK)
		svc_report(&err);
	raw = svc_model_to_bytea(&fitted);

	/* decoded from its bytes, as svc_predict decodes svc_train's model */
	MemoryContextSwitchTo(partctx);
	svc_decode_model(raw, &pm->model);
	if (svc_scorer_init(&svc_pg_env, &pm->model, &pm->scorer, &err) != SVC_OK)
		svc_report(&err);
	pm->scaled = palloc(sizeof(double) * pm->model.dims);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(fitctx);
	if (svc_progress_on)
		svc_progress_notice("svc_cluster", "trained: %d clusters, %d support vectors, %lld steps",
							pm->model.n_clusters, pm->model.n_sv,
							(long long) pm->model.iterations);
	pm->ready = true;
	return pm;
}

/*
 * The current row's cluster and f; false for a NULL feature array (or a
 * partition with no model).
 */
static bool
score_current(FunctionCallInfo fcinfo, int32 *cluster, double *decision)
{
	WindowObject winobj = PG_WINDOW_OBJECT();
	PartitionModel *pm = partition_model(winobj, fcinfo);
	bool		isnull;
	Datum		d;
	const double *x;
	int			dims;
	MemoryContext old;

	if (pm->empty)
		return false;
	d = WinGetFuncArgCurrent(winobj, 0, &isnull);
	if (isnull)
		return false;
	x = svc_check_features(DatumGetArrayTypeP(d), pm->model.dims, &dims, "features");
	svc_model_scale_row(&pm->model, x, pm->scaled);
	/* the certificates computed on the way belong to the partition */
	old = MemoryContextSwitchTo(GetMemoryChunkContext(pm));
	*cluster = svc_cluster_id(&pm->model, svc_scorer_predict(&pm->scorer, pm->scaled, decision));
	MemoryContextSwitchTo(old);
	if (svc_progress_on)
		svc_progress_tick("svc_cluster", "rows clustered", WinGetCurrentPosition(winobj) + 1);
	return true;
}

Datum
svc_cluster(PG_FUNCTION_ARGS)
{
	int32		cluster;
	double		decision;

	if (!score_current(fcinfo, &cluster, &decision))
		PG_RETURN_NULL();
	PG_RETURN_INT32(cluster);
}

Datum
svc_cluster_row(PG_FUNCTION_ARGS)
{
	TupleDesc	desc = (TupleDesc) fcinfo->flinfo->fn_extra;
	int32		cluster;
	double		decision;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (desc == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

		if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
			elog(ERROR, "svc_cluster_row must return a composite type");
		desc = BlessTupleDesc(CreateTupleDescCopy(desc));
		MemoryContextSwitchTo(old);
		fcinfo->flinfo->fn_extra = desc;
	}
	if (!score_current(fcinfo, &cluster, &decision))
		PG_RETURN_NULL();
	values[0] = Int32GetDatum(cluster);
	values[1] = Float8GetDatum(decision);
	values[2] = BoolGetDatum(decision < 0);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
