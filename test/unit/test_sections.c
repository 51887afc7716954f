/*
 * test_sections.c - model format 5: tagged sections, and the extended
 * options that the first of them carries
 */
#include "bytes.h"
#include "fit.h"
#include "model.h"
#include "model_codec.h"
#include "options.h"
#include "unit.h"
#include "unit_data.h"

#include <stdlib.h>
#include <string.h>

#define OFF_VERSION 4

/* Decode a copy of buf[0, len) with its checksum redone. */
static SvcStatus
decode_fixed(const uint8_t *buf, size_t len, SvcError *err)
{
	uint8_t    *copy = malloc(len);
	SvcModel	m;
	SvcStatus	st;

	memcpy(copy, buf, len);
	svc_store_u32(copy + len - 4, svc_crc32c(copy, len - 4));
	st = svc_model_decode(&svc_env_malloc, copy, len, &m, err);
	svc_model_free(&svc_env_malloc, &m);
	free(copy);
	return st;
}

static void
test_extended_options(const double *x, int64_t n)
{
	SvcOptions	opt;
	SvcError	err;
	uint8_t		ext[SVC_OPTIONS_EXT_SIZE],
				full[SVC_OPTIONS_WIRE_FULL];
	SvcOptions	back;
	bool		zero = true;

	svc_options_default(&opt);
	CHECK(svc_options_ext_default(&opt), "the defaults are the default block");
	svc_options_encode_ext(&opt, ext);
	for (int i = 0; i < SVC_OPTIONS_EXT_SIZE; i++)
		zero = zero && ext[i] == 0;
	CHECK(zero, "the defaults encode as zeros");

	CHECK(parse("{\"aid_gap\": 1e-6, \"label_radius\": 0.3, \"label_sample\": 50}",
				&opt, &err) == SVC_OK, "the extended keys parse: %s", err.message);
	CHECK(!svc_options_ext_default(&opt), "not the default block");
	svc_options_encode_full(&opt, full);
	CHECK(svc_options_decode_full(full, &back, &err) == SVC_OK &&
		  back.aid_gap == 1e-6 && back.label_radius == 0.3 && back.label_sample == 50,
		  "the block round-trips: %s", err.message);
	/* the base wire alone gives the defaults */
	CHECK(svc_options_decode(full, &back, &err) == SVC_OK && svc_options_ext_default(&back),
		  "the base wire decodes to default extended options");

	CHECK(parse("{\"label_radius\": 1}", &opt, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strstr(err.message, "label_radius") != NULL, "label_radius 1 refused");
	CHECK(parse("{\"aid_gap\": 0}", &opt, &err) == SVC_ERR_INVALID_PARAMETER,
		  "aid_gap 0 refused");
	CHECK(parse("{\"label_sample\": 0}", &opt, &err) == SVC_ERR_INVALID_PARAMETER,
		  "label_sample 0 refused");

	/* anomaly_bound: bytes 32-39, 0 for the default */
	CHECK(parse("{\"anomaly_bound\": 2.5}", &opt, &err) == SVC_OK, "anomaly_bound parses: %s",
		  err.message);
	svc_options_encode_full(&opt, full);
	CHECK(svc_load_f64(full + SVC_OPTIONS_WIRE_SIZE + 32) == 2.5 &&
		  svc_options_decode_full(full, &back, &err) == SVC_OK && back.anomaly_bound == 2.5,
		  "anomaly_bound round-trips at byte 32: %s", err.message);
	svc_store_f64(full + SVC_OPTIONS_WIRE_SIZE + 32, SVC_ANOMALY_BOUND_DEFAULT);
	CHECK(svc_options_decode_full(full, &back, &err) == SVC_ERR_INVALID_PARAMETER,
		  "the default anomaly_bound stored as itself refused");
	svc_store_f64(full + SVC_OPTIONS_WIRE_SIZE + 32, -1.0);
	CHECK(svc_options_decode_full(full, &back, &err) == SVC_ERR_INVALID_PARAMETER,
		  "a negative anomaly_bound refused");
	CHECK(parse("{\"anomaly_bound\": 0}", &opt, &err) == SVC_ERR_INVALID_PARAMETER,
		  "anomaly_bound 0 refused");

	/*
	 * keep_isolated and min_cluster_size_rows: bits 1 and 2-3 of the base
	 * wire's byte 121, whose 0 is what options before 0.5.0 meant; the
	 * extended block stays all zeros (byte 28, keep_isolated's before
	 * 0.5.0 was released, is reserved again)
	 */
	svc_options_default(&opt);
	CHECK(opt.keep_isolated == 1 && opt.min_size_rows == SVC_SIZE_ROWS_SEPARATED &&
		  svc_options_ext_default(&opt), "defaults: keep_isolated, sizes \"separated\"");
	svc_options_encode_full(&opt, full);
	CHECK(full[121] == (SVC_OPTIONS_BIT_GAMMA_AUTO | SVC_OPTIONS_BIT_KEEP_ISOLATED |
						SVC_OPTIONS_BIT_SIZE_SEPARATED | SVC_OPTIONS_BIT_ASSIGN_AUTO) &&
		  full[SVC_OPTIONS_WIRE_SIZE + 28] == 0 &&
		  svc_options_decode_full(full, &back, &err) == SVC_OK && back.keep_isolated == 1 &&
		  back.min_size_rows == SVC_SIZE_ROWS_SEPARATED, "the defaults round-trip: %s", err.message);
	full[121] |= SVC_OPTIONS_BIT_SIZE_SAMPLE;
	CHECK(svc_options_decode_full(full, &back, &err) == SVC_ERR_INVALID_PARAMETER,
		  "sample and separated together are refused");
	CHECK(parse("{\"min_cluster_size_rows\": \"sample\"}", &opt, &err) == SVC_OK &&
		  opt.min_size_rows == SVC_SIZE_ROWS_SAMPLE, "sample rows parse: %s", err.message);
	svc_options_encode_full(&opt, full);
	CHECK(full[121] == (SVC_OPTIONS_BIT_GAMMA_AUTO | SVC_OPTIONS_BIT_KEEP_ISOLATED |
						SVC_OPTIONS_BIT_SIZE_SAMPLE | SVC_OPTIONS_BIT_ASSIGN_AUTO) &&
		  svc_options_decode_full(full, &back, &err) == SVC_OK && back.keep_isolated == 1 &&
		  back.min_size_rows == SVC_SIZE_ROWS_SAMPLE, "sample rows round-trip: %s", err.message);
	full[SVC_OPTIONS_WIRE_SIZE + 28] = 1;
	CHECK(svc_options_decode_full(full, &back, &err) == SVC_ERR_INVALID_PARAMETER,
		  "extended byte 28 is reserved");
	CHECK(parse("{\"keep_isolated\": false, \"min_cluster_size_rows\": \"labelled\","
				" \"assign_rule\": \"trajectory\"}", &opt,
				&err) == SVC_OK && opt.keep_isolated == 0 &&
		  opt.min_size_rows == SVC_SIZE_ROWS_LABELLED, "both off parse: %s", err.message);
	svc_options_encode_full(&opt, full);
	CHECK(full[121] == SVC_OPTIONS_BIT_GAMMA_AUTO &&
		  svc_options_decode_full(full, &back, &err) == SVC_OK && back.keep_isolated == 0 &&
		  back.min_size_rows == SVC_SIZE_ROWS_LABELLED, "both off round-trip: %s", err.message);
	/* bit 4 is the complete graph's (refused here), 5 assign_rule's */
	full[121] = (uint8_t) (SVC_OPTIONS_BIT_GAMMA_AUTO | SVC_OPTIONS_BIT_ASSIGN_AUTO);
	CHECK(svc_options_decode_full(full, &back, &err) == SVC_OK &&
		  back.assign_rule == SVC_ASSIGN_AUTO, "byte 121 bit 5: assign_rule \"auto\"");
	for (int bit = 4; bit < 8; bit++)
	{
		if (bit == 5)
			continue;
		full[121] = (uint8_t) (SVC_OPTIONS_BIT_GAMMA_AUTO | (1 << bit));
		CHECK(svc_options_decode_full(full, &back, &err) == SVC_ERR_INVALID_PARAMETER,
			  "byte 121 bit %d refused", bit);
	}
	CHECK(parse("{\"solver\": \"smo\"}", &opt, &err) == SVC_OK && opt.keep_isolated == 0,
		  "smo leaves the default keep_isolated out: %s", err.message);
	CHECK(parse("{\"keep_isolated\": true, \"solver\": \"smo\"}", &opt, &err) ==
		  SVC_ERR_INVALID_PARAMETER && strstr(err.message, "keep_isolated") != NULL,
		  "smo refuses keep_isolated named: %s", err.message);
	CHECK(parse("{\"keep_isolated\": 1}", &opt, &err) == SVC_ERR_INVALID_PARAMETER,
		  "keep_isolated takes a boolean");
	CHECK(parse("{\"min_cluster_size_rows\": \"rows\"}", &opt, &err) ==
		  SVC_ERR_INVALID_PARAMETER, "min_cluster_size_rows takes sample or labelled");

	/* damaged blocks */
	svc_options_default(&opt);
	opt.label_radius = 0.5;
	svc_options_encode_full(&opt, full);
	full[SVC_OPTIONS_WIRE_SIZE + 40] = 1;
	CHECK(svc_options_decode_full(full, &back, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strstr(err.message, "does not know") != NULL, "a reserved byte: %s", err.message);
	svc_options_encode_full(&opt, full);
	svc_store_f64(full + SVC_OPTIONS_WIRE_SIZE, SVC_AID_GAP_DEFAULT);
	CHECK(svc_options_decode_full(full, &back, &err) == SVC_ERR_INVALID_PARAMETER,
		  "a default written as itself (two encodings of one option)");
	svc_store_f64(full + SVC_OPTIONS_WIRE_SIZE, -1.0);
	CHECK(svc_options_decode_full(full, &back, &err) == SVC_ERR_INVALID_PARAMETER,
		  "a stored aid_gap out of range");
	(void) x;
	(void) n;
}

static void
test_format5(const double *x, int64_t n)
{
	SvcModel	plain = train("{\"budget\": 40}", x, n);
	SvcModel	ext = train("{\"budget\": 40, \"label_radius\": 0.25}", x, n);
	SvcModel	back;
	SvcError	err;
	size_t		plain_len,
				len;
	uint8_t    *plain_buf = encode(&plain, &plain_len);
	uint8_t    *buf = encode(&ext, &len);
	size_t		sec;			/* offset of the section header */
	uint8_t    *work;

	CHECK(svc_load_u16(plain_buf + OFF_VERSION) == SVC_MODEL_FORMAT_ONE_WIDTH,
		  "a model of default extended options keeps version 2");
	CHECK(svc_load_u16(buf + OFF_VERSION) == SVC_MODEL_FORMAT_SECTIONS,
		  "a model of a non-default extended option is version 5");
	/* the same f: the option does not touch the training */
	CHECK(plain.n_sv == ext.n_sv && memcmp(plain.alpha, ext.alpha, sizeof(double) * plain.n_sv) == 0,
		  "an extended option of labelled rows changes nothing without them");
	/* v5 = v2 + the solver report (32 bytes) + one section (8 + 64) */
	CHECK(len == plain_len + 32 + 8 + SVC_OPTIONS_EXT_SIZE, "the v5 length: %zu against %zu",
		  len, plain_len);

	CHECK(svc_model_decode(&svc_env_malloc, buf, len, &back, &err) == SVC_OK,
		  "v5 decodes: %s", err.detail);
	CHECK(back.opt.label_radius == 0.25 && back.opt.aid_gap == SVC_AID_GAP_DEFAULT,
		  "its extended options come back");
	{
		size_t		len2;
		uint8_t    *again = encode(&back, &len2);

		CHECK(len2 == len && memcmp(again, buf, len) == 0, "v5 re-encodes to its bytes");
		free(again);
	}
	svc_model_free(&svc_env_malloc, &back);

	sec = len - 4 - SVC_OPTIONS_EXT_SIZE - 8;
	CHECK(svc_load_u16(buf + sec) == 1 && svc_load_u32(buf + sec + 4) == SVC_OPTIONS_EXT_SIZE,
		  "the section header: tag 1, 64 bytes");

	work = malloc(len);
	/* an unknown tag: refused, never skipped */
	memcpy(work, buf, len);
	svc_store_u16(work + sec, 999);
	CHECK(decode_fixed(work, len, &err) == SVC_ERR_CORRUPT &&
		  strstr(err.message, "does not know (tag 999)") != NULL, "unknown tag: %s", err.message);
	memcpy(work, buf, len);
	svc_store_u16(work + sec, 0);
	CHECK(decode_fixed(work, len, &err) == SVC_ERR_CORRUPT, "tag 0: %s", err.detail);
	memcpy(work, buf, len);
	svc_store_u16(work + sec + 2, 1);
	CHECK(decode_fixed(work, len, &err) == SVC_ERR_CORRUPT, "non-zero pad: %s", err.detail);
	for (uint32_t l = 0; l < 200; l += (l < 70 ? 1 : 50))
	{
		if (l == SVC_OPTIONS_EXT_SIZE)
			continue;
		memcpy(work, buf, len);
		svc_store_u32(work + sec + 4, l);
		CHECK(decode_fixed(work, len, &err) == SVC_ERR_CORRUPT, "section length %u: accepted", l);
	}
	/* the section's block holding only defaults: two encodings of one model */
	memcpy(work, buf, len);
	memset(work + sec + 8, 0, SVC_OPTIONS_EXT_SIZE);
	CHECK(decode_fixed(work, len, &err) == SVC_ERR_CORRUPT &&
		  strstr(err.detail, "only defaults") != NULL, "a default block: %s", err.detail);
	/* version 5 with the section cut off */
	memcpy(work, buf, sec);
	CHECK(decode_fixed(work, sec + 4, &err) == SVC_ERR_CORRUPT, "v5 without a section: %s",
		  err.detail);
	/* version 2 with a section after it */
	memcpy(work, buf, len);
	svc_store_u16(work + OFF_VERSION, 2);
	CHECK(decode_fixed(work, len, &err) == SVC_ERR_CORRUPT, "v2 with trailing bytes: %s",
		  err.detail);
	/* the same section twice */
	{
		size_t		len2 = len + 8 + SVC_OPTIONS_EXT_SIZE;
		uint8_t    *two = malloc(len2);

		memcpy(two, buf, len - 4);
		memcpy(two + len - 4, buf + sec, 8 + SVC_OPTIONS_EXT_SIZE);
		CHECK(decode_fixed(two, len2, &err) == SVC_ERR_CORRUPT &&
			  strstr(err.detail, "repeated") != NULL, "a repeated section: %s", err.detail);
		free(two);
	}
	/* every truncation refused */
	{
		bool		all = true;

		for (size_t cut = 0; cut < len; cut++)
		{
			SvcModel	t;

			if (svc_model_decode(&svc_env_malloc, buf, cut, &t, &err) != SVC_ERR_CORRUPT)
				all = false;
			svc_model_free(&svc_env_malloc, &t);
		}
		CHECK(all, "every truncation of a v5 model is refused");
	}
	/* a bsgd model of version 5 must carry an empty solver report */
	memcpy(work, buf, len);
	svc_store_f64(work + 16 + SVC_OPTIONS_WIRE_SIZE + 72, 1.0);
	CHECK(decode_fixed(work, len, &err) == SVC_ERR_CORRUPT &&
		  strstr(err.detail, "report") != NULL, "bsgd with an objective: %s", err.detail);

	free(work);
	free(buf);
	free(plain_buf);
	svc_model_free(&svc_env_malloc, &plain);
	svc_model_free(&svc_env_malloc, &ext);
}

/* An smo model with an extended option: version 5, its report kept. */
static void
test_smo_format5(const double *x, int64_t n)
{
	SvcModel	m = train("{\"solver\": \"smo\", \"aid_gap\": 0.01}", x, n);
	SvcModel	back;
	SvcError	err;
	size_t		len;
	uint8_t    *buf = encode(&m, &len);

	CHECK(svc_load_u16(buf + OFF_VERSION) == SVC_MODEL_FORMAT_SECTIONS, "smo + section: v5");
	CHECK(svc_model_decode(&svc_env_malloc, buf, len, &back, &err) == SVC_OK &&
		  back.objective == m.objective && back.cache_misses == m.cache_misses &&
		  back.opt.aid_gap == 0.01, "its report and option come back: %s", err.detail);
	svc_model_free(&svc_env_malloc, &back);
	free(buf);
	svc_model_free(&svc_env_malloc, &m);
}

/*
 * Section 9, bsgd's automatic width widened (fit.c): it round-trips, is the
 * only section of a default model that carries it (so at the end), and
 * every damaged value is refused, as is the section on a model it cannot
 * belong to (a gamma given, the exact solver).
 */
static void
widen_refused(const uint8_t *buf, size_t len, size_t at, double value, const char *what)
{
	uint8_t    *work = malloc(len);
	SvcError	err;

	memcpy(work, buf, len);
	svc_store_f64(work + at, value);
	CHECK(decode_fixed(work, len, &err) == SVC_ERR_CORRUPT &&
		  strstr(err.detail, "widened width is invalid") != NULL, "%s: %s", what, err.detail);
	free(work);
}

static void
test_widen_section(const double *x, int64_t n)
{
	const char *foreign[] = {"{\"budget\": 40, \"gamma\": 2}", "{\"solver\": \"smo\"}"};
	SvcModel	m = train("{\"budget\": 40}", x, n);
	SvcModel	back;
	SvcError	err;
	size_t		len,
				sec;
	uint8_t    *buf;

	m.gamma_widen = 0.625;
	m.gamma_cover = 0.41;
	buf = encode(&m, &len);
	sec = len - 4 - 16 - 8;
	CHECK(svc_load_u16(buf + OFF_VERSION) == SVC_MODEL_FORMAT_SECTIONS &&
		  svc_load_u16(buf + sec) == 9 && svc_load_u32(buf + sec + 4) == 16,
		  "a widened model: version 5, section 9 of 16 bytes last");
	CHECK(svc_model_decode(&svc_env_malloc, buf, len, &back, &err) == SVC_OK &&
		  back.gamma_widen == 0.625 && back.gamma_cover == 0.41, "section 9 round-trips: %s",
		  err.detail);
	svc_model_free(&svc_env_malloc, &back);
	widen_refused(buf, len, sec + 8, 1.0, "factor 1");
	widen_refused(buf, len, sec + 8, 0.0, "factor 0");
	widen_refused(buf, len, sec + 8, NAN, "factor NaN");
	widen_refused(buf, len, sec + 16, -0.5, "a negative cover");
	widen_refused(buf, len, sec + 16, INFINITY, "an infinite cover");
	free(buf);
	svc_model_free(&svc_env_malloc, &m);

	for (int i = 0; i < 2; i++)
	{
		SvcModel	f = train(foreign[i], x, n);

		f.gamma_widen = 0.5;
		buf = encode(&f, &len);
		CHECK(decode_fixed(buf, len, &err) == SVC_ERR_CORRUPT &&
			  strstr(err.detail, "widened width is invalid") != NULL,
			  "section 9 on %s: %s", foreign[i], err.detail);
		free(buf);
		svc_model_free(&svc_env_malloc, &f);
	}
}

int
main(void)
{
	int64_t		n = 300;
	double	   *x = blobs(n, 7);

	test_extended_options(x, n);
	test_format5(x, n);
	test_smo_format5(x, n);
	test_widen_section(x, n);
	free(x);
	return unit_summary("test_sections");
}
