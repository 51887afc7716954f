/*
 * assign.c - svc_assign: the cluster of every row a query returns
 *
 * The query is read through a cursor in batches.  With a model labelled
 * by the saddle tree (the default) memory does not grow with the number of
 * rows: each row is scaled, scored and run to its equilibrium
 * (svc_label_predict, the very routine svc_predict uses, so the two always
 * agree), and its result row goes to a tuplestore, which spills to disk
 * past work_mem.
 *
 * With labeling = paper, Algorithm 3 as written: only rows in the strip
 * B_eps = {|f| <= epsilon} run trajectories, and every other row takes the
 * cluster of its nearest B_eps row, found with a k-d tree rather than the
 * paper's all-pairs scan.  That needs every row before the first answer,
 * so this mode keeps the rows in memory (8 * (dims + 2) bytes each).
 */
#include "svclust.h"

#include "label.h"
#include "score.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(svc_assign);

#define ASSIGN_BATCH 1000

/*
 * Check the shape of the query's result, (id integer-ish, features array),
 * and return the id column's base type.
 */
static Oid
check_assign_columns(TupleDesc desc)
{
	Oid			idtype;

	if (desc->natts != 2)
		ereport(ERROR,
				errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("svc_assign query must return 2 columns (id, features), not %d",
					   desc->natts));
	idtype = svc_query_int_column(desc, 1, "svc_assign", "an integer id",
								  "Return a bigint, integer or smallint id.");
	svc_query_feature_column(desc, 2, "svc_assign");
	return idtype;
}

static int64
get_id(HeapTuple tuple, TupleDesc desc, Oid idtype)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tuple, desc, 1, &isnull);

	if (isnull)
		ereport(ERROR,
				errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				errmsg("svc_assign query returned a NULL id"),
				errhint("Every row needs an id to be reported back."));
	return svc_int_datum(d, idtype);
}

/*
 * The features of a row, checked (a real[] row read into out): the detail
 * of a row of the wrong length names its id (the context line would only
 * repeat it), other errors get the row's context line.
 */
static const double *
row_features(Datum fdatum, const SvcModel *model, SvcRowContext *rc, double *out)
{
	ArrayType  *arr = DatumGetArrayTypeP(fdatum);
	int			n = svc_array_length(arr);
	int			dims;

	/* too many elements stays the error it is (svc_check_features_any) */
	if (n > 0 && n <= SVC_MAX_DIMS && n != model->dims)
	{
		rc->active = false;
		svc_check_dims_detail(model->dims, n,
							  "The svc_assign query row with id " INT64_FORMAT " has %d feature%s; the model has %d dimensions.",
							  rc->id, n, n == 1 ? "" : "s", model->dims);
	}
	return svc_check_features_any(arr, model->dims, &dims, "features", out);
}

/*
 * The row scaled into scaled: a real[] row that passes every check but the
 * finite one as it is (one dimension, the model's length, no NULL) from its
 * floats in one pass; any other row checked by row_features (which raises
 * a bad row's error) and then scaled.
 */
static void
row_scaled(Datum fdatum, const SvcModel *model, SvcRowContext *rc, double *scaled)
{
	ArrayType  *arr = DatumGetArrayTypeP(fdatum);

	if (ARR_ELEMTYPE(arr) == FLOAT4OID && ARR_NDIM(arr) == 1 && !ARR_HASNULL(arr) &&
		svc_array_length(arr) == model->dims && model->dims > 0 &&
		svc_model_scale_floats(model, (const float *) ARR_DATA_PTR(arr), scaled))
		return;
	svc_model_scale_row(model, row_features(PointerGetDatum(arr), model, rc, scaled), scaled);
}

/* Rows held back by the paper's procedure until B_eps is complete. */
typedef struct PaperRows
{
	int64		n;
	int64		cap;
	int32		dims;
	int64	   *id;
	double	   *x;				/* [cap * dims] scaled, or unused for NULL rows */
	double	   *decision;
	int32	   *cluster;		/* codes of svc_alg3_assign_row */
} PaperRows;

static void
paper_push(PaperRows *pr, int64 id, const double *xs, double decision, int32 cluster)
{
	if (pr->n == pr->cap)
	{
		int64		cap = pr->cap ? pr->cap * 2 : 1024;

		if (pr->cap == 0)
		{
			pr->id = palloc_extended(sizeof(int64) * cap, MCXT_ALLOC_HUGE);
			pr->x = palloc_extended(sizeof(double) * cap * pr->dims, MCXT_ALLOC_HUGE);
			pr->decision = palloc_extended(sizeof(double) * cap, MCXT_ALLOC_HUGE);
			pr->cluster = palloc_extended(sizeof(int32) * cap, MCXT_ALLOC_HUGE);
		}
		else
		{
			pr->id = repalloc_huge(pr->id, sizeof(int64) * cap);
			pr->x = repalloc_huge(pr->x, sizeof(double) * cap * pr->dims);
			pr->decision = repalloc_huge(pr->decision, sizeof(double) * cap);
			pr->cluster = repalloc_huge(pr->cluster, sizeof(int32) * cap);
		}
		pr->cap = cap;
	}
	pr->id[pr->n] = id;
	if (xs)
		memcpy(pr->x + pr->n * pr->dims, xs, sizeof(double) * pr->dims);
	pr->decision[pr->n] = decision;
	pr->cluster[pr->n] = cluster;
	pr->n++;
}

/* Algorithm 3's step 10 on the held rows, then all rows in query order. */
static void
paper_finish(PaperRows *pr, const SvcModel *model, SvcLabelWork *work,
			 ReturnSetInfo *rsinfo)
{
	SvcError	err;

	if (svc_alg3_assign_finish(&svc_pg_env, model, pr->x, pr->n, pr->cluster,
							   work, &err) != SVC_OK)
		svc_report(&err);
	for (int64 i = 0; i < pr->n; i++)
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		if (i % SVC_INTERRUPT_EVERY == 0)
			CHECK_FOR_INTERRUPTS();
		values[0] = Int64GetDatum(pr->id[i]);
		if (pr->cluster[i] == SVC_ALG3_NO_ROW)
			nulls[1] = nulls[2] = nulls[3] = true;
		else
		{
			values[1] = Int32GetDatum(svc_cluster_id(model, pr->cluster[i]));
			values[2] = Float8GetDatum(pr->decision[i]);
			values[3] = BoolGetDatum(pr->decision[i] < 0);
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

Datum
svc_assign(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SvcModel	model;
	text	   *query;
	char	   *sql;
	SvcLabelWork work;
	SvcScorer	scorer;
	SvcError	err;
	double	   *scaled;
	Portal		portal;
	MemoryContext batchctx,
				old;
	Oid			idtype;
	bool		paper;
	PaperRows	pr;
	int64		done = 0;		/* rows read, for svclust.progress */
	SvcRowContext rc;

	/*
	 * The three-argument form is not STRICT, so that NULL options mean the
	 * model's own cut; a NULL model or query gives no rows, as the STRICT
	 * two-argument form does.
	 */
	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return (Datum) 0;

	/* the model and workspaces live for the whole call */
	svc_decode_model(PG_GETARG_BYTEA_PP(0), &model);
	if (PG_NARGS() > 2 && !PG_ARGISNULL(2))
		svc_cut_model(&model, &model.opt, PG_GETARG_JSONB_P(2));
	if (svc_label_work_init(&svc_pg_env, &model, &work, &err) != SVC_OK ||
		svc_scorer_init(&svc_pg_env, &model, &scorer, &err) != SVC_OK)
		svc_report(&err);
	scaled = palloc(sizeof(double) * model.dims);
	paper = model.opt.labeling == SVC_LABELING_PAPER;
	memset(&pr, 0, sizeof(pr));
	pr.dims = model.dims;
	query = PG_GETARG_TEXT_PP(1);
	sql = text_to_cstring(query);
	batchctx = AllocSetContextCreate(CurrentMemoryContext, "svc_assign batch",
									 ALLOCSET_DEFAULT_SIZES);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	portal = svc_open_query(sql, "svc_assign", "(id, features)");
	idtype = check_assign_columns(portal->tupDesc);
	svc_row_context_push(&rc, "svc_assign", true);

	for (;;)
	{
		SPITupleTable *tt;
		uint64		n;

		CHECK_FOR_INTERRUPTS();
		rc.active = false;
		SPI_cursor_fetch(portal, true, ASSIGN_BATCH);
		tt = SPI_tuptable;
		n = SPI_processed;
		if (n == 0)
			break;

		old = MemoryContextSwitchTo(batchctx);
		for (uint64 i = 0; i < n; i++)
		{
			HeapTuple	tuple = tt->vals[i];
			Datum		values[4];
			bool		nulls[4] = {false, false, false, false};
			bool		isnull;
			Datum		fdatum;

			rc.active = false;
			if (svc_progress_on)
				svc_progress_tick("svc_assign", "rows scored", ++done);

			values[0] = Int64GetDatum(get_id(tuple, tt->tupdesc, idtype));
			fdatum = SPI_getbinval(tuple, tt->tupdesc, 2, &isnull);
			rc.id = DatumGetInt64(values[0]);
			rc.active = true;
			if (paper)
			{
				double		decision;

				if (isnull)
				{
					MemoryContextSwitchTo(old);
					paper_push(&pr, DatumGetInt64(values[0]), NULL, 0, SVC_ALG3_NO_ROW);
					MemoryContextSwitchTo(batchctx);
					continue;
				}
				row_scaled(fdatum, &model, &rc, scaled);
				decision = svc_scorer_decision(&scorer, scaled);
				MemoryContextSwitchTo(old);
				paper_push(&pr, DatumGetInt64(values[0]), scaled, decision,
						   svc_alg3_assign_row(&model, scaled, decision, &work));
				MemoryContextSwitchTo(batchctx);
				continue;
			}
			if (isnull)
			{
				/* a NULL feature array comes back unassigned */
				nulls[1] = nulls[2] = nulls[3] = true;
			}
			else
			{
				double		decision;
				int32		cluster;

				row_scaled(fdatum, &model, &rc, scaled);
				/*
				 * the same f and cluster as svc_decision and svc_predict;
				 * the certificates it computes once live for the call
				 */
				MemoryContextSwitchTo(old);
				cluster = svc_scorer_predict(&scorer, scaled, &decision);
				MemoryContextSwitchTo(batchctx);
				values[1] = Int32GetDatum(svc_cluster_id(&model, cluster));
				values[2] = Float8GetDatum(decision);
				values[3] = BoolGetDatum(decision < 0);
			}
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(batchctx);
		SPI_freetuptable(tt);
	}
	svc_row_context_pop(&rc);
	SPI_cursor_close(portal);
	if (paper)
		paper_finish(&pr, &model, &work, rsinfo);
	if (svc_progress_on)
		svc_progress_notice("svc_assign", "done: %lld rows", (long long) done);
	SPI_finish();
	MemoryContextDelete(batchctx);
	return (Datum) 0;
}
