/*
 * fuzz_options.c - fuzz target: the text reader of options on arbitrary
 * text, and through it the typed setters the jsonb glue calls
 *
 * The text is not NUL-terminated (the reader takes a length), so ASan
 * sees any read past its end.  A parse, for training or for a recut, must
 * either fail with SVC_ERR_INVALID_PARAMETER and a message, or give
 * options that pass validation and survive the wire encoding the model and
 * the state use: decode(encode(o)) == o, field by field and byte by byte.
 */
#include "fuzz_common.h"

#include <string.h>

#include "options.h"
#include "options_text.h"

static void
check_same(const SvcOptions *a, const SvcOptions *b)
{
	FUZZ_CHECK(a->budget == b->budget);
	FUZZ_CHECK(a->strategy == b->strategy);
	FUZZ_CHECK(a->k == b->k);
	FUZZ_CHECK(memcmp(&a->gamma, &b->gamma, sizeof(double)) == 0);
	FUZZ_CHECK(memcmp(&a->c, &b->c, sizeof(double)) == 0);
	FUZZ_CHECK(memcmp(&a->epsilon, &b->epsilon, sizeof(double)) == 0);
	FUZZ_CHECK(memcmp(&a->tol, &b->tol, sizeof(double)) == 0);
	FUZZ_CHECK(a->max_iter == b->max_iter);
	FUZZ_CHECK(a->seed == b->seed);
	FUZZ_CHECK(a->scale == b->scale);
	FUZZ_CHECK(a->sample == b->sample);
	FUZZ_CHECK(a->labeling == b->labeling);
	FUZZ_CHECK(a->segment_points == b->segment_points);
	FUZZ_CHECK(memcmp(&a->merge_ratio, &b->merge_ratio, sizeof(double)) == 0);
	FUZZ_CHECK(memcmp(&a->min_cluster_share, &b->min_cluster_share, sizeof(double)) == 0);
	FUZZ_CHECK(memcmp(&a->nu, &b->nu, sizeof(double)) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy, so that ASan sees a read one byte too far */
	char	   *text = malloc(size ? size : 1);
	SvcOptions	opt,
				back;
	SvcError	err;
	SvcStatus	st;
	uint8_t		wire[SVC_OPTIONS_WIRE_SIZE],
				wire2[SVC_OPTIONS_WIRE_SIZE];

	FUZZ_CHECK(text != NULL);
	memcpy(text, data, size);
	memset(&err, 0, sizeof(err));
	svc_options_default(&opt);
	/* a recut reads the same text through the same setters, cut keys only */
	svc_options_default(&back);
	st = svc_options_parse_cut(text, size, &back, &err);
	if (st != SVC_OK)
	{
		FUZZ_CHECK(st == SVC_ERR_INVALID_PARAMETER);
		FUZZ_CHECK_ERROR(st, err);
	}
	else
		FUZZ_CHECK(svc_options_validate(&back, &err) == SVC_OK);
	memset(&err, 0, sizeof(err));
	st = svc_options_parse(text, size, &opt, &err);
	free(text);
	if (st != SVC_OK)
	{
		FUZZ_CHECK(st == SVC_ERR_INVALID_PARAMETER);
		FUZZ_CHECK_ERROR(st, err);
		return 0;
	}
	FUZZ_CHECK(svc_options_validate(&opt, &err) == SVC_OK);
	svc_options_encode(&opt, wire);
	memset(&back, 0xA5, sizeof(back));
	FUZZ_CHECK(svc_options_decode(wire, &back, &err) == SVC_OK);
	check_same(&opt, &back);
	svc_options_encode(&back, wire2);
	FUZZ_CHECK(memcmp(wire, wire2, sizeof(wire)) == 0);
	/* the names used in model info are known ones */
	FUZZ_CHECK(strcmp(svc_strategy_name(opt.strategy), "unknown") != 0);
	FUZZ_CHECK(strcmp(svc_scale_name(opt.scale), "unknown") != 0);
	FUZZ_CHECK(strcmp(svc_labeling_name(opt.labeling), "unknown") != 0);
	return 0;
}
