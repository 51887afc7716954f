/*
 * fuzz_model.c - fuzz target: svc_model_decode on arbitrary bytes
 *
 * Every input is decoded twice: as it is (which, but for a CRC-32C
 * collision, only a valid model passes) and with its last four bytes
 * replaced by the checksum of the rest, so that the fuzzer reaches the
 * checks behind the checksum (lengths, counts, finiteness, ranges).
 *
 * A decode must either fail with SVC_ERR_CORRUPT and a message, or give a
 * model that
 *   - encodes back to the same bytes (with the reserved bytes, which the
 *     decoder ignores, zeroed and the checksum recomputed), and decodes
 *     again;
 *   - describes itself as one complete JSON object;
 *   - scores and predicts a few points with a decision value that is not
 *     NaN for finite scaled input, and a cluster id in 1..n_clusters.
 * ASan and UBSan watch every step; LeakSanitizer checks that the error
 * paths free what they allocate (with svc_model_free).
 */
#include "fuzz_common.h"

#include <math.h>
#include <string.h>

#include "bytes.h"
#include "label.h"
#include "model.h"
#include "model_codec.h"
#include "model_report.h"

/* Offsets of the bytes the decoder reads but ignores (see model.c). */
#define MODEL_OPTIONS_OFFSET 16
static const size_t reserved_model_bytes[] = {
	6, 7,						/* u16 flags */
	14, 15						/* u16 0 after solver, boundary */
};

static const SvcEnv *env = &svc_env_malloc;

/* The bytes a correct encoder must give for a model decoded from data. */
static uint8_t *
canonical_bytes(const uint8_t *data, size_t size)
{
	uint8_t    *c = malloc(size);

	FUZZ_CHECK(c != NULL);
	memcpy(c, data, size);
	for (size_t i = 0; i < sizeof(reserved_model_bytes) / sizeof(reserved_model_bytes[0]); i++)
		c[reserved_model_bytes[i]] = 0;
	/* the complete graph's segment_points 20 is written as 0 (options.h) */
	if (c[MODEL_OPTIONS_OFFSET + 6] == SVC_LABELING_COMPLETE_GRAPH &&
		svc_load_u16(c + MODEL_OPTIONS_OFFSET + SVC_OPTIONS_WIRE_SEGMENT_POINTS) ==
		SVC_SEGMENT_POINTS_FLOOR)
		svc_store_u16(c + MODEL_OPTIONS_OFFSET + SVC_OPTIONS_WIRE_SEGMENT_POINTS, 0);
	svc_store_u32(c + size - 4, svc_crc32c(c, size - 4));
	return c;
}

/* Score and predict one scaled point; check what can be checked. */
static void
score_point(const SvcModel *m, SvcLabelWork *w, const double *xs)
{
	double		f = svc_model_decision_scaled(m, xs);
	double		f2;
	int32_t		c;
	bool		finite = true;

	for (int32_t j = 0; j < m->dims; j++)
		finite = finite && isfinite(xs[j]);
	c = svc_label_predict(m, xs, w, &f2);
	FUZZ_CHECK(c >= 0 && c <= m->n_clusters);
	/* every finite row gets a cluster (README: "Every row gets a cluster") */
	FUZZ_CHECK(c >= 1 || !finite);
	(void) f;
	(void) f2;
}

static void
exercise_model(const SvcModel *m)
{
	SvcLabelWork w;
	SvcError	err;
	size_t		d = (size_t) m->dims;
	double	   *xs = malloc(sizeof(double) * d);
	double	   *raw = malloc(sizeof(double) * d);
	char	   *json;
	size_t		jlen;
	static const double raws[] = {0.0, 1.0, -3.5, 1e6, -1e300, 1e300};

	FUZZ_CHECK(xs && raw);
	json = svc_model_info_json(env, m, &err);
	FUZZ_CHECK(json != NULL);
	jlen = strlen(json);
	FUZZ_CHECK(jlen > 2 && json[0] == '{' && json[jlen - 1] == '}');
	svc_free(env, json);

	FUZZ_CHECK(svc_label_work_init(env, m, &w, &err) == SVC_OK);

	/* points in scaled space: the origin, a support vector, an equilibrium */
	memset(xs, 0, sizeof(double) * d);
	score_point(m, &w, xs);
	score_point(m, &w, m->sv);
	score_point(m, &w, m->eq + (size_t) (m->n_eq - 1) * d);

	/* raw points, scaled as svc_decision and svc_predict scale them */
	for (size_t k = 0; k < sizeof(raws) / sizeof(raws[0]); k++)
	{
		for (size_t j = 0; j < d; j++)
			raw[j] = raws[k] * (double) ((j % 3) + 1) - (j % 2 ? raws[k] : 0.0);
		svc_model_scale_row(m, raw, xs);
		score_point(m, &w, xs);
	}
	svc_label_work_free(env, &w);
	free(xs);
	free(raw);
}

static void
check_model(const uint8_t *data, size_t size)
{
	SvcModel	m,
				m2;
	SvcError	err;
	SvcStatus	st;
	uint8_t    *out,
			   *out2,
			   *canon;
	size_t		len;

	memset(&err, 0, sizeof(err));
	st = svc_model_decode(env, data, size, &m, &err);
	if (st != SVC_OK)
	{
		FUZZ_CHECK(st == SVC_ERR_CORRUPT);
		FUZZ_CHECK_ERROR(st, err);
		svc_model_free(env, &m);
		return;
	}

	/* encode(decode(x)) == x, but for the bytes the decoder ignores */
	len = svc_model_encoded_size(&m);
	FUZZ_CHECK(len == size);
	out = malloc(len);
	FUZZ_CHECK(out != NULL);
	svc_model_encode(&m, out);
	canon = canonical_bytes(data, size);
	FUZZ_CHECK(memcmp(out, canon, len) == 0);
	free(canon);

	/* and the re-encoded bytes decode to the same model */
	FUZZ_CHECK(svc_model_decode(env, out, len, &m2, &err) == SVC_OK);
	out2 = malloc(len);
	FUZZ_CHECK(out2 != NULL && svc_model_encoded_size(&m2) == len);
	svc_model_encode(&m2, out2);
	FUZZ_CHECK(memcmp(out, out2, len) == 0);
	svc_model_free(env, &m2);
	free(out);
	free(out2);

	exercise_model(&m);
	svc_model_free(env, &m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t    *fixed;

	check_model(data, size);
	if (size < 8)
		return 0;
	if (svc_crc32c(data, size - 4) == svc_load_u32(data + size - 4))
		return 0;				/* already checked as it is */
	fixed = malloc(size);
	FUZZ_CHECK(fixed != NULL);
	memcpy(fixed, data, size);
	svc_store_u32(fixed + size - 4, svc_crc32c(fixed, size - 4));
	check_model(fixed, size);
	free(fixed);
	return 0;
}
