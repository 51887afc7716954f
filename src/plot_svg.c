/*
 * plot_svg.c - svc_plot_svg: an SVG picture of a model and the rows of a query
 *
 * The query runs through a cursor as svc_assign's does; each row is
 * clustered as svc_predict clusters it (all its dimensions, not only the
 * two drawn), counted, and offered to a seeded reservoir of at most
 * max_points rows, the rows drawn.  The picture itself (grid, marching
 * squares, colours, layout) is the core's (plot.h).
 */
#include "svclust.h"

#include "label.h"
#include "plot.h"
#include "score.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

PG_FUNCTION_INFO_V1(svc_plot_svg_sql);

#define PLOT_BATCH 1000
#define PLOT_MAX_POINTS_DEFAULT 5000
#define PLOT_MAX_POINTS_LIMIT 1000000
#define PLOT_SEED UINT64_C(0x504C4F54)	/* "PLOT" */

static const char *const plot_keys =
	"width, height, dims, grid, levels, max_points, title, x_label, y_label, support_vectors, equilibria, slice, extent";

/* Whether key is one of plot_keys. */
static bool
known_key(const char *key)
{
	size_t		n = strlen(key);

	for (const char *p = plot_keys; (p = strstr(p, key)) != NULL; p += n)
		if ((p == plot_keys || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

static void
plot_option_error(const char *key, const char *detail)
{
	ereport(ERROR,
			errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			errmsg("invalid value for plot option \"%s\"", key),
			errdetail("%s", detail));
}

static int32
option_int(const char *key, const JsonbValue *v, int32 lo, int32 hi)
{
	double		d;

	if (v->type != jbvNumeric)
		plot_option_error(key, "Expected a number.");
	d = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
										   NumericGetDatum(v->val.numeric)));
	if (!(d >= lo && d <= hi) || d != floor(d))
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("invalid value for plot option \"%s\"", key),
				errdetail("Expected an integer from %d to %d.", lo, hi));
	return (int32) d;
}

static char *
option_text(const char *key, const JsonbValue *v)
{
	if (v->type != jbvString)
		plot_option_error(key, "Expected a string.");
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* One of two words, as 0 or 1. */
static int32
option_choice(const char *key, const JsonbValue *v, const char *zero, const char *one)
{
	char	   *word;

	if (v->type == jbvString)
	{
		word = pnstrdup(v->val.string.val, v->val.string.len);
		if (strcmp(word, zero) == 0)
			return 0;
		if (strcmp(word, one) == 0)
			return 1;
	}
	ereport(ERROR,
			errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			errmsg("invalid value for plot option \"%s\"", key),
			errdetail("Expected \"%s\" or \"%s\".", zero, one));
	return 0;
}

static bool
option_bool(const char *key, const JsonbValue *v)
{
	if (v->type != jbvBool)
		plot_option_error(key, "Expected true or false.");
	return v->val.boolean;
}

/* The options of the picture from a flat jsonb object (NULL: defaults). */
static void
parse_plot_options(Jsonb *options, SvcPlotOptions *po, int32 *max_points)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;
	int			depth = 0;
	int			ndims = 0;

	svc_plot_default(po);
	*max_points = PLOT_MAX_POINTS_DEFAULT;
	if (options == NULL)
		return;
	if (!JB_ROOT_IS_OBJECT(options))
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("svc_plot_svg options must be a JSON object"));
	it = JsonbIteratorInit(&options->root);
	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		switch (tok)
		{
			case WJB_BEGIN_OBJECT:
				if (++depth > 1)
					plot_option_error(key, "Expected a scalar, or an array of two dimensions for \"dims\".");
				break;
			case WJB_END_OBJECT:
				depth--;
				break;
			case WJB_KEY:
				key = pnstrdup(v.val.string.val, v.val.string.len);
				if (!known_key(key))
					ereport(ERROR,
							errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("unknown svc_plot_svg option \"%s\"", key),
							errdetail("Valid options are: %s.", plot_keys));
				break;
			case WJB_BEGIN_ARRAY:
				if (strcmp(key, "dims") != 0 || depth > 1)
					plot_option_error(key, "Expected a scalar.");
				depth++;
				ndims = 0;
				break;
			case WJB_ELEM:
				/* dims: 1-based, as the features array is indexed */
				if (ndims >= 2)
					plot_option_error("dims", "Expected two dimensions, as in [1, 2].");
				if (ndims == 0)
					po->dim_x = option_int("dims", &v, 1, SVC_MAX_DIMS) - 1;
				else
					po->dim_y = option_int("dims", &v, 1, SVC_MAX_DIMS) - 1;
				ndims++;
				break;
			case WJB_END_ARRAY:
				depth--;
				if (ndims != 2)
					plot_option_error("dims", "Expected two dimensions, as in [1, 2].");
				break;
			case WJB_VALUE:
				if (strcmp(key, "width") == 0)
					po->width = option_int(key, &v, SVC_PLOT_MIN_SIZE, SVC_PLOT_MAX_SIZE);
				else if (strcmp(key, "height") == 0)
					po->height = option_int(key, &v, SVC_PLOT_MIN_SIZE, SVC_PLOT_MAX_SIZE);
				else if (strcmp(key, "grid") == 0)
					po->grid = option_int(key, &v, SVC_PLOT_MIN_GRID, SVC_PLOT_MAX_GRID);
				else if (strcmp(key, "levels") == 0)
					po->levels = option_int(key, &v, 0, SVC_PLOT_MAX_LEVELS);
				else if (strcmp(key, "max_points") == 0)
					*max_points = option_int(key, &v, 0, PLOT_MAX_POINTS_LIMIT);
				else if (strcmp(key, "title") == 0)
					po->title = option_text(key, &v);
				else if (strcmp(key, "x_label") == 0)
					po->x_label = option_text(key, &v);
				else if (strcmp(key, "y_label") == 0)
					po->y_label = option_text(key, &v);
				else if (strcmp(key, "support_vectors") == 0)
					po->support_vectors = option_bool(key, &v);
				else if (strcmp(key, "equilibria") == 0)
					po->equilibria = option_bool(key, &v);
				else if (strcmp(key, "slice") == 0)
					po->slice = option_choice(key, &v, "clusters", "mean") == 0 ?
						SVC_PLOT_SLICE_CLUSTERS : SVC_PLOT_SLICE_MEAN;
				else if (strcmp(key, "extent") == 0)
					po->extent = option_choice(key, &v, "robust", "all") == 0 ?
						SVC_PLOT_EXTENT_ROBUST : SVC_PLOT_EXTENT_ALL;
				else
					plot_option_error(key, "Expected two dimensions, as in [1, 2].");
				break;
			case WJB_DONE:
				break;
		}
	}
}

Datum
svc_plot_svg_sql(PG_FUNCTION_ARGS)
{
	SvcModel	model;
	SvcPlotOptions po;
	int32		max_points;
	SvcScorer	scorer;
	SvcError	err;
	SvcRng		rng;
	Portal		portal;
	MemoryContext fnctx = CurrentMemoryContext,
				batchctx,
				old;
	SvcPlotRow *drawn;
	int64		n_drawn = 0,
				n_total = 0,
				n_outliers = 0;
	int64	   *cluster_rows;
	double	   *sum,
			   *scaled,
			   *at;
	int			fcol;
	char	   *svg;
	size_t		len;
	text	   *result;
	Oid			idtype = InvalidOid;
	SvcRowContext rc;

	/* not STRICT, so that NULL options mean the defaults */
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	svc_decode_model(PG_GETARG_BYTEA_PP(0), &model);
	parse_plot_options(PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2), &po, &max_points);
	if (svc_plot_check(&po, model.dims, &err) != SVC_OK)
		svc_report(&err);
	if (svc_scorer_init(&svc_pg_env, &model, &scorer, &err) != SVC_OK)
		svc_report(&err);
	drawn = palloc_extended(sizeof(SvcPlotRow) * Max(max_points, 1), MCXT_ALLOC_HUGE);
	cluster_rows = palloc0(sizeof(int64) * Max(model.n_clusters, 1));
	sum = palloc0(sizeof(double) * model.dims);
	scaled = palloc(sizeof(double) * model.dims);
	at = palloc(sizeof(double) * model.dims);
	svc_rng_seed(&rng, PLOT_SEED);
	batchctx = AllocSetContextCreate(CurrentMemoryContext, "svc_plot_svg batch",
									 ALLOCSET_DEFAULT_SIZES);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	portal = svc_open_query(text_to_cstring(PG_GETARG_TEXT_PP(1)), "svc_plot_svg",
							"(features) or (id, features)");
	if (portal->tupDesc->natts < 1 || portal->tupDesc->natts > 2)
		ereport(ERROR,
				errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("svc_plot_svg query must return 1 or 2 columns ((features) or (id, features)), not %d",
					   portal->tupDesc->natts));
	fcol = portal->tupDesc->natts;
	svc_query_feature_column(portal->tupDesc, fcol, "svc_plot_svg");
	/* an integer id names a row in errors (the picture does not use it) */
	if (fcol == 2)
	{
		Oid			t = getBaseType(SPI_gettypeid(portal->tupDesc, 1));

		if (t == INT2OID || t == INT4OID || t == INT8OID)
			idtype = t;
	}
	svc_row_context_push(&rc, "svc_plot_svg", false);

	for (;;)
	{
		SPITupleTable *tt;
		uint64		n;

		CHECK_FOR_INTERRUPTS();
		rc.active = false;
		SPI_cursor_fetch(portal, true, PLOT_BATCH);
		tt = SPI_tuptable;
		n = SPI_processed;
		if (n == 0)
			break;
		old = MemoryContextSwitchTo(batchctx);
		for (uint64 i = 0; i < n; i++)
		{
			bool		isnull;
			Datum		d = SPI_getbinval(tt->vals[i], tt->tupdesc, fcol, &isnull);
			const double *x;
			int			dims;
			double		f;
			SvcPlotRow	r;
			int64		slot;

			rc.rowno++;
			rc.active = false;
			/* a NULL feature array has no place in the picture */
			if (isnull)
				continue;
			if (OidIsValid(idtype))
			{
				bool		idnull;
				Datum		idd = SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &idnull);

				rc.has_id = !idnull;
				rc.id = idnull ? 0 : svc_int_datum(idd, idtype);
			}
			rc.active = true;
			x = svc_check_features(svc_to_float8_array(DatumGetArrayTypeP(d)), 0, &dims,
								   "features");
			if (dims != model.dims)
			{
				rc.active = false;
				if (rc.has_id)
					svc_check_dims_detail(model.dims, dims,
										  "The svc_plot_svg query row with id " INT64_FORMAT " has %d feature%s; the model has %d dimensions.",
										  rc.id, dims, dims == 1 ? "" : "s", model.dims);
				else
					svc_check_dims_detail(model.dims, dims,
										  "Row " INT64_FORMAT " of the svc_plot_svg query has %d feature%s; the model has %d dimensions.",
										  rc.rowno, dims, dims == 1 ? "" : "s", model.dims);
			}
			svc_model_scale_row(&model, x, scaled);
			r.x = x[po.dim_x];
			r.y = x[po.dim_y];
			/*
			 * svc_assign's cluster and outlier flag, from the same scorer;
			 * what it allocates on the way (certificates, workspace) must
			 * outlive the batch
			 */
			MemoryContextSwitchTo(fnctx);
			r.cluster = svc_scorer_predict(&scorer, scaled, &f);
			MemoryContextSwitchTo(batchctx);
			r.outlier = f < 0;
			for (int j = 0; j < model.dims; j++)
				sum[j] += x[j];
			if (r.cluster >= 1 && r.cluster <= model.n_clusters)
				cluster_rows[r.cluster - 1]++;
			n_outliers += r.outlier;
			n_total++;
			/* a uniform reservoir of the rows drawn (Algorithm R) */
			if (n_drawn < max_points)
				drawn[n_drawn++] = r;
			else if (max_points > 0 &&
					 (slot = (int64) svc_rng_below(&rng, (uint64) n_total)) < max_points)
				drawn[slot] = r;
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(batchctx);
		SPI_freetuptable(tt);
	}
	svc_row_context_pop(&rc);
	SPI_cursor_close(portal);
	SPI_finish();

	/* the dimensions not drawn are held at the mean of the rows */
	for (int j = 0; j < model.dims; j++)
		at[j] = n_total > 0 ? sum[j] / n_total : model.shift[j];
	if (svc_plot_svg(&svc_pg_env, &model, &po, at, drawn, n_drawn, n_total,
					 cluster_rows, n_outliers, &svg, &len, &err) != SVC_OK)
		svc_report(&err);
	result = cstring_to_text_with_len(svg, (int) len);
	pfree(svg);
	MemoryContextDelete(batchctx);
	PG_RETURN_TEXT_P(result);
}
