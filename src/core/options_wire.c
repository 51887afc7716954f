/*
 * options_wire.c - the options' wire encoding: the fixed 128-byte block
 * models and states store, and the extended block after it
 *
 * Decoding validates the whole struct (svc_options_validate), so options
 * read back from bytes meet the same ranges as options read from JSON.
 */
#include "options.h"
#include "bytes.h"

#include <string.h>

/* The layout is fixed: state.c reads "sample" at byte 60 on every row. */
void
svc_options_encode(const SvcOptions *o, uint8_t *out)
{
	SvcWriter	w;
	bool		graph = o->labeling == SVC_LABELING_COMPLETE_GRAPH;

	memset(out, 0, SVC_OPTIONS_WIRE_SIZE);
	svc_writer_init(&w, out, SVC_OPTIONS_WIRE_SIZE);
	svc_put_u32(&w, (uint32_t) o->budget);
	svc_put_u8(&w, (uint8_t) o->strategy);
	svc_put_u8(&w, (uint8_t) o->scale);
	svc_put_u8(&w, (uint8_t) o->labeling);
	svc_put_u8(&w, (uint8_t) o->cut);
	svc_put_u32(&w, (uint32_t) o->k);
	svc_put_f64(&w, o->gamma);
	svc_put_f64(&w, o->c);
	svc_put_f64(&w, o->epsilon);
	svc_put_f64(&w, o->tol);
	svc_put_u64(&w, (uint64_t) o->max_iter);
	svc_put_u64(&w, o->seed);
	svc_put_u64(&w, (uint64_t) o->sample);
	svc_put_f64(&w, o->merge_ratio);
	svc_put_f64(&w, o->min_cluster_share);
	svc_put_f64(&w, o->nu);
	svc_put_u64(&w, (uint64_t) o->min_cluster_size);
	svc_put_u32(&w, (uint32_t) o->n_clusters);
	svc_put_u32(&w, o->has_level ? 1 : 0);
	svc_put_f64(&w, o->level);
	svc_put_u32(&w, (uint32_t) o->bandwidth_k);
	/* byte 120: 0 for the default bsgd, so older options keep their bytes */
	svc_put_u8(&w, o->solver == SVC_SOLVER_BSGD ? 0 : (uint8_t) o->solver);
	/*
	 * byte 121: bits whose 0 is what options from before 0.5.0 meant, so
	 * that they keep meaning it (options.h)
	 */
	svc_put_u8(&w, (uint8_t) ((o->gamma == 0.0 && o->gamma_rule == SVC_GAMMA_RULE_AUTO ?
							   SVC_OPTIONS_BIT_GAMMA_AUTO : 0) |
							  (o->keep_isolated ? SVC_OPTIONS_BIT_KEEP_ISOLATED : 0) |
							  (o->min_size_rows == SVC_SIZE_ROWS_SAMPLE ?
							   SVC_OPTIONS_BIT_SIZE_SAMPLE : 0) |
							  (o->min_size_rows == SVC_SIZE_ROWS_SEPARATED ?
							   SVC_OPTIONS_BIT_SIZE_SEPARATED : 0) |
							  (graph && o->segment_points == SVC_SEGMENT_POINTS_AUTO ?
							   SVC_OPTIONS_BIT_SEGMENT_AUTO : 0) |
							  (o->assign_rule == SVC_ASSIGN_AUTO ?
							   SVC_OPTIONS_BIT_ASSIGN_AUTO : 0)));

	/*
	 * segment_points at its fixed offset (122): 0 for the complete graph's
	 * 20 (its default before "auto") and for the other labellings' "auto",
	 * so that the bytes of every configuration that predates "auto" stay
	 * the same; cache_mb at 124.
	 */
	svc_store_u16(out + SVC_OPTIONS_WIRE_SEGMENT_POINTS,
				  graph && o->segment_points == SVC_SEGMENT_POINTS_FLOOR ? 0 :
				  (uint16_t) o->segment_points);
	svc_store_u32(out + SVC_OPTIONS_WIRE_CACHE_MB, (uint32_t) o->cache_mb);
}

SvcStatus
svc_options_decode(const uint8_t *in, SvcOptions *o, SvcError *err)
{
	SvcReader	r;
	uint32_t	has_level;
	uint8_t		solver,
				bits;

	svc_reader_init(&r, in, SVC_OPTIONS_WIRE_SIZE);
	o->budget = (int32_t) svc_get_u32(&r);
	o->strategy = (SvcStrategy) svc_get_u8(&r);
	o->scale = (SvcScale) svc_get_u8(&r);
	o->labeling = (SvcLabeling) svc_get_u8(&r);
	o->cut = (SvcCutRule) svc_get_u8(&r);
	o->k = (int32_t) svc_get_u32(&r);
	o->gamma = svc_get_f64(&r);
	o->c = svc_get_f64(&r);
	o->epsilon = svc_get_f64(&r);
	o->tol = svc_get_f64(&r);
	o->max_iter = (int64_t) svc_get_u64(&r);
	o->seed = svc_get_u64(&r);
	o->sample = (int64_t) svc_get_u64(&r);
	o->merge_ratio = svc_get_f64(&r);
	o->min_cluster_share = svc_get_f64(&r);
	o->nu = svc_get_f64(&r);
	o->min_cluster_size = (int64_t) svc_get_u64(&r);
	o->n_clusters = (int32_t) svc_get_u32(&r);
	has_level = svc_get_u32(&r);
	o->level = svc_get_f64(&r);
	o->bandwidth_k = (int32_t) svc_get_u32(&r);
	solver = svc_get_u8(&r);
	bits = svc_get_u8(&r);
	o->segment_points = svc_load_u16(in + SVC_OPTIONS_WIRE_SEGMENT_POINTS);
	o->cache_mb = (int32_t) svc_load_u32(in + SVC_OPTIONS_WIRE_CACHE_MB);
	if (has_level > 1)
		return svc_options_bad_value(err, "level", SVC_OPTIONS_LEVEL_EXPECT);
	/* bsgd is written as 0 only: one set of options has one encoding */
	if (solver == SVC_SOLVER_BSGD)
		return svc_options_bad_value(err, "solver", "one of \"bsgd\", \"smo\", \"aid\", \"incremental\"");
	if (bits & ~SVC_OPTIONS_BITS_KNOWN)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "the options hold an option this build does not know");
		svc_error_hint(err, "Read the value with the version of svclust that wrote it.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	/* the rule's bit only with gamma "auto" (a given gamma is written with 0) */
	if ((bits & SVC_OPTIONS_BIT_GAMMA_AUTO) && o->gamma != 0.0)
		return svc_options_bad_value(err, "gamma", "a positive number or \"auto\"");
	o->gamma_rule = (bits & SVC_OPTIONS_BIT_GAMMA_AUTO) || o->gamma != 0.0 ?
		SVC_GAMMA_RULE_AUTO : SVC_GAMMA_RULE_DIM;
	o->keep_isolated = (bits & SVC_OPTIONS_BIT_KEEP_ISOLATED) ? 1 : 0;
	o->assign_rule = (bits & SVC_OPTIONS_BIT_ASSIGN_AUTO) ? SVC_ASSIGN_AUTO : SVC_ASSIGN_TRAJECTORY;
	/* segment_points: see options.h; "auto" is the bit, with 0, for the graph only */
	if (o->labeling == SVC_LABELING_COMPLETE_GRAPH && (bits & SVC_OPTIONS_BIT_SEGMENT_AUTO))
	{
		if (o->segment_points != 0)
			return svc_options_bad_value(err, "segment_points", SVC_SEGMENT_POINTS_EXPECT);
	}
	else if (bits & SVC_OPTIONS_BIT_SEGMENT_AUTO)
		return svc_options_bad_value(err, "segment_points", SVC_SEGMENT_POINTS_EXPECT);
	else if (o->labeling == SVC_LABELING_COMPLETE_GRAPH && o->segment_points == 0)
		o->segment_points = SVC_SEGMENT_POINTS_FLOOR;
	if ((bits & SVC_OPTIONS_BIT_SIZE_SAMPLE) && (bits & SVC_OPTIONS_BIT_SIZE_SEPARATED))
		return svc_options_bad_value(err, "min_cluster_size_rows",
									 "one of \"sample\", \"labelled\", \"separated\"");
	o->min_size_rows = (bits & SVC_OPTIONS_BIT_SIZE_SAMPLE) ? SVC_SIZE_ROWS_SAMPLE :
		(bits & SVC_OPTIONS_BIT_SIZE_SEPARATED) ? SVC_SIZE_ROWS_SEPARATED :
		SVC_SIZE_ROWS_LABELLED;
	o->solver = solver == 0 ? SVC_SOLVER_BSGD : (SvcSolver) solver;
	o->has_level = has_level == 1;
	o->aid_gap = SVC_AID_GAP_DEFAULT;
	o->label_radius = SVC_LABEL_RADIUS_DEFAULT;
	o->label_sample = SVC_LABEL_SAMPLE_DEFAULT;
	o->label_curve = SVC_LABEL_CURVE_GEOMETRIC;
	o->anomaly_bound = SVC_ANOMALY_BOUND_DEFAULT;
	o->label_spread = 1;
	o->keep_rows = 0;
	o->window = SVC_WINDOW_OLDEST;
	return svc_options_validate(o, err);
}

bool
svc_options_ext_default(const SvcOptions *o)
{
	return o->aid_gap == SVC_AID_GAP_DEFAULT &&
		o->label_radius == SVC_LABEL_RADIUS_DEFAULT &&
		o->label_sample == SVC_LABEL_SAMPLE_DEFAULT &&
		o->label_curve == SVC_LABEL_CURVE_GEOMETRIC &&
		o->anomaly_bound == SVC_ANOMALY_BOUND_DEFAULT && o->label_spread == 1 &&
		o->keep_rows == 0 && o->window == SVC_WINDOW_OLDEST;
}

void
svc_options_encode_ext(const SvcOptions *o, uint8_t *out)
{
	SvcWriter	w;

	memset(out, 0, SVC_OPTIONS_EXT_SIZE);
	svc_writer_init(&w, out, SVC_OPTIONS_EXT_SIZE);
	svc_put_f64(&w, o->aid_gap == SVC_AID_GAP_DEFAULT ? 0.0 : o->aid_gap);
	svc_put_f64(&w, o->label_radius == SVC_LABEL_RADIUS_DEFAULT ? 0.0 : o->label_radius);
	svc_put_u64(&w, o->label_sample == SVC_LABEL_SAMPLE_DEFAULT ? 0 :
				(uint64_t) o->label_sample);
	svc_put_u8(&w, o->label_curve == SVC_LABEL_CURVE_GEOMETRIC ? 0 : (uint8_t) o->label_curve);
	svc_put_u8(&w, (uint8_t) o->keep_rows);
	svc_put_u8(&w, (uint8_t) o->window);
	svc_put_u8(&w, o->label_spread ? 0 : 1);
	svc_store_f64(out + SVC_OPTIONS_EXT_ANOMALY_BOUND,
				  o->anomaly_bound == SVC_ANOMALY_BOUND_DEFAULT ? 0.0 : o->anomaly_bound);
}

/*
 * A stored 0 is the default; so is the default's own value, which no
 * encoder writes (one set of options has one encoding): refuse it, as the
 * base wire refuses bsgd written as 1.
 */
SvcStatus
svc_options_decode_ext(const uint8_t *in, SvcOptions *o, SvcError *err)
{
	SvcReader	r;
	double		aid_gap,
				label_radius,
				anomaly_bound;
	uint64_t	label_sample;
	uint8_t		curve,
				keep,
				window,
				bounds;

	svc_reader_init(&r, in, SVC_OPTIONS_EXT_SIZE);
	aid_gap = svc_get_f64(&r);
	label_radius = svc_get_f64(&r);
	label_sample = svc_get_u64(&r);
	curve = svc_get_u8(&r);
	keep = svc_get_u8(&r);
	window = svc_get_u8(&r);
	bounds = svc_get_u8(&r);
	anomaly_bound = svc_load_f64(in + SVC_OPTIONS_EXT_ANOMALY_BOUND);
	for (size_t i = 28; i < SVC_OPTIONS_EXT_SIZE; i++)
		if (in[i] != 0 &&
			(i < SVC_OPTIONS_EXT_ANOMALY_BOUND || i >= SVC_OPTIONS_EXT_ANOMALY_BOUND + 8))
		{
			svc_fail(err, SVC_ERR_INVALID_PARAMETER,
					 "the options hold an extended option this build does not know");
			svc_error_hint(err, "Read the value with the version of svclust that wrote it.");
			return SVC_ERR_INVALID_PARAMETER;
		}
	if (aid_gap == SVC_AID_GAP_DEFAULT)
		return svc_options_bad_value(err, "aid_gap", "stored as 0 when it is the default");
	if (label_radius == SVC_LABEL_RADIUS_DEFAULT)
		return svc_options_bad_value(err, "label_radius", "stored as 0 when it is the default");
	if (label_sample == (uint64_t) SVC_LABEL_SAMPLE_DEFAULT || label_sample > (uint64_t) INT64_MAX)
		return svc_options_bad_value(err, "label_sample", "stored as 0 when it is the default");
	o->aid_gap = aid_gap == 0.0 ? SVC_AID_GAP_DEFAULT : aid_gap;
	o->label_radius = label_radius == 0.0 ? SVC_LABEL_RADIUS_DEFAULT : label_radius;
	if (curve != 0 && curve != SVC_LABEL_CURVE_LINEAR)
		return svc_options_bad_value(err, "label_interpolation", "one of \"geometric\", \"linear\"");
	o->label_sample = label_sample == 0 ? SVC_LABEL_SAMPLE_DEFAULT : (int64_t) label_sample;
	o->label_curve = curve == 0 ? SVC_LABEL_CURVE_GEOMETRIC : (SvcLabelCurve) curve;
	if (anomaly_bound == SVC_ANOMALY_BOUND_DEFAULT)
		return svc_options_bad_value(err, "anomaly_bound", "stored as 0 when it is the default");
	o->anomaly_bound = anomaly_bound == 0.0 ? SVC_ANOMALY_BOUND_DEFAULT : anomaly_bound;
	if (keep > 1)
		return svc_options_bad_value(err, "keep_rows", "true or false");
	if (window > SVC_WINDOW_RESERVOIR)
		return svc_options_bad_value(err, "window", "one of \"oldest\", \"reservoir\"");
	if (bounds > 1)
		return svc_options_bad_value(err, "label_spread", "true or false");
	o->keep_rows = keep;
	o->window = (SvcWindow) window;
	o->label_spread = bounds ? 0 : 1;
	return svc_options_validate(o, err);
}

void
svc_options_encode_full(const SvcOptions *o, uint8_t *out)
{
	svc_options_encode(o, out);
	svc_options_encode_ext(o, out + SVC_OPTIONS_WIRE_SIZE);
}

SvcStatus
svc_options_decode_full(const uint8_t *in, SvcOptions *o, SvcError *err)
{
	SvcStatus	st = svc_options_decode(in, o, err);

	if (st != SVC_OK)
		return st;
	return svc_options_decode_ext(in + SVC_OPTIONS_WIRE_SIZE, o, err);
}
