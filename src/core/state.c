/*
 * state.c - the training aggregate's bounded state: its layout and check,
 * the sample and its merge, the rows a fit trains on
 *
 * The range of the columns is state_stats.c's; the sample of distinct
 * rows of smallest key, state_sample.c's.
 */
#include "state.h"
#include "state_sample.h"
#include "state_stats.h"
#include "bytes.h"
#include "model.h"

#include <math.h>
#include <string.h>

/* Offsets into the header. */
#define OFF_MAGIC		0
#define OFF_VERSION		4
#define OFF_DIMS		8
#define OFF_CAPACITY	16
#define OFF_KEPT		24
#define OFF_SEEN		32
#define OFF_RNG			40
#define OFF_OPTIONS		72
#define OFF_LAB			(OFF_OPTIONS + SVC_OPTIONS_WIRE_FULL)
#define OFF_LAB_CAPACITY	OFF_LAB
#define OFF_LAB_KEPT	(OFF_LAB + 8)
#define OFF_LAB_NORMAL	(OFF_LAB + 16)	/* labelled normal rows seen */
#define OFF_LAB_ANOMALY (OFF_LAB + 24)	/* labelled anomalies seen */
#define OFF_INIT_LEN	(OFF_LAB + 32)	/* bytes of the init model in the tail */
#define OFF_STATS		(OFF_LAB + 40)

/*
 * Options inside the encoded options, read without decoding them:
 * test_state checks that svc_options_encode puts them there.
 */
#define OFF_SEED		(OFF_OPTIONS + SVC_OPTIONS_WIRE_SEED)
#define OFF_SAMPLE		(OFF_OPTIONS + SVC_OPTIONS_WIRE_SAMPLE)
/* label_sample in the extended options: 0 there is the default */
#define OFF_LAB_SAMPLE	(OFF_OPTIONS + SVC_OPTIONS_WIRE_SIZE + 16)
/* keep_rows and window in the extended options (options.h) */
#define OFF_KEEP_ROWS	(OFF_OPTIONS + SVC_OPTIONS_WIRE_SIZE + 25)
#define OFF_WINDOW		(OFF_OPTIONS + SVC_OPTIONS_WIRE_SIZE + 26)

_Static_assert(OFF_STATS == SVC_STATE_HEADER_SIZE, "the header size matches its offsets");
_Static_assert(SVC_OPTIONS_WIRE_SAMPLE + 8 <= SVC_OPTIONS_WIRE_SIZE,
			   "the sample lies within the encoded options");
_Static_assert(OFF_OPTIONS == OFF_RNG + 4 * 8, "the options follow the random state");

/*
 * The keys' seed: the options' seed, on a stream of its own, so that the
 * sample and the SGD draws are independent.  A draw among the sample's
 * rows (svc_state_sample) has a third.
 */
#define KEY_STREAM		UINT64_C(0x53414D504C454B59)	/* "SAMPLEKY" */
#define DRAW_STREAM		UINT64_C(0x53414D504C445257)	/* "SAMPLDRW" */
#define RESERVOIR_STREAM UINT64_C(0x5245534552564F49)	/* "RESERVOI" */

static uint64_t
key_seed(const uint8_t *buf)
{
	return svc_load_u64(buf + OFF_SEED) ^ KEY_STREAM;
}

/* A model that keeps its rows: rows as they come, one slot each. */
static bool
keeps_rows(const uint8_t *buf)
{
	return buf[OFF_KEEP_ROWS] != 0;
}

/*
 * The window "oldest" of a model that keeps its rows: the newest sample
 * rows, row number t (from 0) in slot t % sample, so a call that brings
 * more rows than the window holds hands on its last ones.
 */
static bool
ring_sample(const uint8_t *buf)
{
	return keeps_rows(buf) && buf[OFF_WINDOW] == (uint8_t) SVC_WINDOW_OLDEST;
}

size_t
svc_state_size_warm(int32_t dims, int64_t capacity, int64_t lab_capacity, size_t init_len)
{
	size_t		area,
				lab_area;
	uint64_t	total;

	if (dims < 1 || dims > SVC_MAX_DIMS || capacity < 0 ||
		capacity > svc_sample_max_capacity(SVC_MAX_SAMPLE) || lab_capacity < 0 ||
		lab_capacity > svc_sample_max_capacity(SVC_MAX_SAMPLE) || init_len > SVC_STATE_MAX_INIT)
		return 0;
	area = svc_sample_area_size(dims, capacity);
	lab_area = svc_sample_area_size(dims + 1, lab_capacity);
	if ((area == 0 && capacity > 0) || (lab_area == 0 && lab_capacity > 0))
		return 0;
	total = SVC_STATE_HEADER_SIZE + (uint64_t) SVC_STATS_SIZE(dims) + (uint64_t) area +
		(uint64_t) lab_area + (uint64_t) init_len;
	if (total > SIZE_MAX)
		return 0;
	return (size_t) total;
}

size_t
svc_state_size_labelled(int32_t dims, int64_t capacity, int64_t lab_capacity)
{
	return svc_state_size_warm(dims, capacity, lab_capacity, 0);
}

size_t
svc_state_size(int32_t dims, int64_t capacity)
{
	return svc_state_size_labelled(dims, capacity, 0);
}

int32_t
svc_state_dims(const uint8_t *buf)
{
	return (int32_t) svc_load_u32(buf + OFF_DIMS);
}

int64_t
svc_state_capacity(const uint8_t *buf)
{
	return (int64_t) svc_load_u64(buf + OFF_CAPACITY);
}

int64_t
svc_state_kept(const uint8_t *buf)
{
	return (int64_t) svc_load_u64(buf + OFF_KEPT);
}

int64_t
svc_state_seen(const uint8_t *buf)
{
	return (int64_t) svc_load_u64(buf + OFF_SEEN);
}

void
svc_state_options(const uint8_t *buf, SvcOptions *opt)
{
	SvcError	err;

	/* validated when the state was made or checked */
	(void) svc_options_decode_full(buf + OFF_OPTIONS, opt, &err);
}

bool
svc_state_options_equal(const uint8_t *buf, const uint8_t *wire)
{
	return memcmp(buf + OFF_OPTIONS, wire, SVC_OPTIONS_WIRE_FULL) == 0;
}

int64_t
svc_state_lab_capacity(const uint8_t *buf)
{
	return (int64_t) svc_load_u64(buf + OFF_LAB_CAPACITY);
}

int64_t
svc_state_lab_kept(const uint8_t *buf)
{
	return (int64_t) svc_load_u64(buf + OFF_LAB_KEPT);
}

int64_t
svc_state_lab_seen(const uint8_t *buf, int label)
{
	return (int64_t) svc_load_u64(buf + (label > 0 ? OFF_LAB_NORMAL : OFF_LAB_ANOMALY));
}

/* The unlabelled rows' sample, and the labelled rows'. */
static SvcSampleArea
area_of(const uint8_t *buf)
{
	int32_t		dims = svc_state_dims(buf);

	return svc_sample_area((uint8_t *) buf + OFF_STATS + SVC_STATS_SIZE(dims), dims,
						   svc_state_capacity(buf));
}

static SvcSampleArea
lab_area_of(const uint8_t *buf)
{
	SvcSampleArea a = area_of(buf);

	return svc_sample_area(a.base + svc_sample_area_size(a.width, a.capacity), a.width + 1,
						   svc_state_lab_capacity(buf));
}

size_t
svc_state_init_len(const uint8_t *buf)
{
	return (size_t) svc_load_u64(buf + OFF_INIT_LEN);
}

/* The tail: after the labelled rows' area. */
const uint8_t *
svc_state_init_model(const uint8_t *buf)
{
	SvcSampleArea lab = lab_area_of(buf);

	return lab.base + svc_sample_area_size(lab.width, lab.capacity);
}

void
svc_state_set_init(uint8_t *buf, const uint8_t *init, size_t len)
{
	svc_store_u64(buf + OFF_INIT_LEN, (uint64_t) len);
	memcpy((uint8_t *) svc_state_init_model(buf), init, len);
}

bool
svc_state_init_equal(const uint8_t *buf, const uint8_t *init, size_t len)
{
	return svc_state_init_len(buf) == len &&
		(len == 0 || memcmp(svc_state_init_model(buf), init, len) == 0);
}

static int64_t
lab_seen_total(const uint8_t *buf)
{
	return svc_state_lab_seen(buf, 1) + svc_state_lab_seen(buf, -1);
}

int64_t
svc_state_rows_seen(const uint8_t *buf)
{
	return svc_state_seen(buf) + lab_seen_total(buf);
}

static int64_t
sample_size(const uint8_t *buf)
{
	return (int64_t) svc_load_u64(buf + OFF_SAMPLE);
}

static int64_t
lab_sample(const uint8_t *buf)
{
	uint64_t	s = svc_load_u64(buf + OFF_LAB_SAMPLE);

	return s == 0 ? SVC_LABEL_SAMPLE_DEFAULT : (int64_t) s;
}

static void
load_rng(const uint8_t *buf, SvcRng *rng)
{
	for (int i = 0; i < 4; i++)
		rng->s[i] = svc_load_u64(buf + OFF_RNG + 8 * i);
}

static void
store_rng(uint8_t *buf, const SvcRng *rng)
{
	for (int i = 0; i < 4; i++)
		svc_store_u64(buf + OFF_RNG + 8 * i, rng->s[i]);
}

void
svc_state_init(uint8_t *buf, int32_t dims, int64_t capacity, const SvcOptions *opt)
{
	memset(buf, 0, svc_state_size(dims, capacity));
	memcpy(buf + OFF_MAGIC, SVC_STATE_MAGIC, 4);
	buf[OFF_VERSION] = SVC_STATE_VERSION;
	svc_store_u32(buf + OFF_DIMS, (uint32_t) dims);
	svc_store_u64(buf + OFF_CAPACITY, (uint64_t) capacity);
	svc_options_encode_full(opt, buf + OFF_OPTIONS);
	{
		SvcSampleArea a = area_of(buf),
					lab = lab_area_of(buf);

		svc_sample_init(&a);
		svc_sample_init(&lab);
	}
	if (opt->keep_rows)
	{
		SvcRng		rng;

		/* a stream of its own, so the reservoir and the SGD draws are independent */
		svc_rng_seed(&rng, opt->seed ^ RESERVOIR_STREAM);
		store_rng(buf, &rng);
	}
	svc_stats_init(buf + OFF_STATS, dims);
}

void
svc_state_set_stream(uint8_t *buf, uint64_t stream)
{
	SvcRng		rng;

	if (!keeps_rows(buf))
		return;
	svc_rng_seed(&rng, svc_load_u64(buf + OFF_SEED) ^ RESERVOIR_STREAM ^
				 (stream * UINT64_C(0x9E3779B97F4A7C15)));
	store_rng(buf, &rng);
}

static SvcStatus
bad_state(SvcError *err, const char *detail)
{
	return svc_corrupt(err, "svclust training state", detail);
}

/*
 * A model's kept rows: finite rows in kept slots, every other byte zero
 * but the header's bound, which stays none.
 */
static const char *
check_kept_rows(const SvcSampleArea *a, int64_t kept)
{
	size_t		rows_len = (size_t) kept * 8 * (size_t) a->width;
	size_t		len = svc_sample_area_size(a->width, a->capacity) - (size_t) (a->rows - a->base);

	if (svc_sample_tau(a->base) != UINT64_MAX || svc_load_u64(a->base + 8) != 0)
		return "An unused byte of the kept rows is not zero.";
	for (size_t i = 0; i < rows_len; i += 8)
	{
		uint64_t	b = svc_load_u64(a->rows + i);
		double		v;

		memcpy(&v, &b, 8);
		if (!isfinite(v))
			return "A kept row is not finite.";
	}
	for (size_t i = rows_len; i < len; i++)
		if (a->rows[i] != 0)
			return "An unused byte of the kept rows is not zero.";
	return NULL;
}

/* Every row of an area lies within the columns' ranges (dims features). */
static bool
within_range(const uint8_t *st, int32_t dims, const SvcSampleArea *a, int64_t kept)
{
	for (int32_t j = 0; j < dims; j++)
	{
		double		lo,
					hi;

		svc_stats_range(st, dims, j, &lo, &hi);
		for (int64_t i = 0; i < kept; i++)
		{
			double		v = svc_load_f64(svc_sample_row(a, i) + 8 * (size_t) j);

			if (!(v >= lo && v <= hi))
				return false;
		}
	}
	return true;
}

SvcStatus
svc_state_check(const uint8_t *buf, size_t len, SvcError *err)
{
	int32_t		dims;
	int64_t		capacity,
				kept,
				seen,
				lab_capacity,
				lab_kept,
				lab_normal,
				lab_anomaly,
				total;
	uint64_t	init_len,
				stood = 0,
				lab_stood = 0;
	SvcOptions	opt;
	SvcError	opt_err;
	SvcSampleArea area,
				lab;
	const char *bad;

	/* an older state's layout is not this one's: refuse it, never misread */
	if (len >= 6 && memcmp(buf, SVC_STATE_MAGIC, 4) == 0 &&
		(buf[4] | (buf[5] << 8)) < SVC_STATE_VERSION)
	{
		bad_state(err, "The state was made by an older version of svclust.");
		svc_error_hint(err, "Aggregate the rows again with this version's svc_train_state.");
		return SVC_ERR_CORRUPT;
	}
	if (svc_check_signature(buf, len, SVC_STATE_HEADER_SIZE, SVC_STATE_MAGIC,
							SVC_STATE_VERSION, "svclust training state", err) != SVC_OK)
		return SVC_ERR_CORRUPT;
	dims = (int32_t) svc_load_u32(buf + OFF_DIMS);
	capacity = (int64_t) svc_load_u64(buf + OFF_CAPACITY);
	kept = (int64_t) svc_load_u64(buf + OFF_KEPT);
	seen = (int64_t) svc_load_u64(buf + OFF_SEEN);
	lab_capacity = (int64_t) svc_load_u64(buf + OFF_LAB_CAPACITY);
	lab_kept = (int64_t) svc_load_u64(buf + OFF_LAB_KEPT);
	lab_normal = (int64_t) svc_load_u64(buf + OFF_LAB_NORMAL);
	lab_anomaly = (int64_t) svc_load_u64(buf + OFF_LAB_ANOMALY);
	init_len = svc_load_u64(buf + OFF_INIT_LEN);
	if (dims < 1 || dims > SVC_MAX_DIMS)
		return bad_state(err, "The dimension is out of range.");
	if (svc_options_decode_full(buf + OFF_OPTIONS, &opt, &opt_err) != SVC_OK)
		return bad_state(err, "The stored options are invalid.");
	/* the header's unused bytes are zero, and the draws' state but with keep_rows */
	if (svc_load_u16(buf + 6) != 0 || svc_load_u32(buf + 12) != 0)
		return bad_state(err, "A reserved byte of the header is not zero.");
	if (!opt.keep_rows)
		for (int i = 0; i < 32; i++)
			if (buf[OFF_RNG + i] != 0)
				return bad_state(err, "A reserved byte of the header is not zero.");
	if (capacity < 0 ||
		capacity > (opt.keep_rows ? opt.sample : svc_sample_max_capacity(opt.sample)) ||
		kept < 0 || kept > capacity || seen < kept || seen < 0 || seen > SVC_MAX_SEEN)
		return bad_state(err, "The row counts are inconsistent.");
	if (lab_capacity < 0 || lab_capacity > svc_sample_max_capacity(opt.label_sample) ||
		lab_kept < 0 ||
		lab_kept > lab_capacity || lab_normal < 0 || lab_anomaly < 0 ||
		lab_normal > SVC_MAX_SEEN || lab_anomaly > SVC_MAX_SEEN - lab_normal ||
		lab_normal + lab_anomaly < lab_kept ||
		seen > SVC_MAX_SEEN - (lab_normal + lab_anomaly))
		return bad_state(err, "The labelled row counts are inconsistent.");
	total = seen + lab_normal + lab_anomaly;
	if (init_len > SVC_STATE_MAX_INIT ||
		svc_state_size_warm(dims, capacity, lab_capacity, (size_t) init_len) != len)
		return bad_state(err, "The length does not match the header.");
	/* the fit decodes and checks the init model in full (fit.h) */
	if (init_len > 0 && (init_len < 4 ||
						 memcmp(svc_state_init_model(buf), SVC_MODEL_MAGIC, 4) != 0))
		return bad_state(err, "The init model does not start with the model signature.");
	if (init_len > 0 && lab_normal + lab_anomaly > 0)
		return bad_state(err, "A warm-started state has labelled rows.");

	bad = svc_stats_check(buf + OFF_STATS, dims, total);
	if (bad != NULL)
		return bad_state(err, bad);
	area = area_of(buf);
	lab = lab_area_of(buf);
	if (opt.keep_rows)
	{
		/* rows as they came: a full reservoir once rows went past it */
		bad = check_kept_rows(&area, kept);
		if (bad != NULL)
			return bad_state(err, bad);
		if (seen > kept && kept != opt.sample)
			return bad_state(err, "The row counts are inconsistent.");
	}
	else
	{
		bad = svc_sample_check(&area, kept, key_seed(buf), &stood);
		if (bad != NULL)
			return bad_state(err, bad);
		/* rows dropped only from a full sample, which stays full */
		if (stood > (uint64_t) seen || (stood < (uint64_t) seen && kept < opt.sample))
			return bad_state(err, "The row counts are inconsistent.");
	}
	bad = svc_sample_check(&lab, lab_kept, key_seed(buf), &lab_stood);
	if (bad != NULL)
		return bad_state(err, bad);
	if (lab_stood > (uint64_t) (lab_normal + lab_anomaly) ||
		(lab_stood < (uint64_t) (lab_normal + lab_anomaly) && lab_kept < opt.label_sample))
		return bad_state(err, "The labelled row counts are inconsistent.");
	{
		uint64_t	normal = 0,
					anomaly = 0;

		for (int64_t i = 0; i < lab_kept; i++)
		{
			double		label = svc_load_f64(svc_sample_row(&lab, i) + 8 * (size_t) dims);

			if (label == 1.0)
				normal += svc_sample_count_at(&lab, i);
			else if (label == -1.0)
				anomaly += svc_sample_count_at(&lab, i);
			else
				return bad_state(err, "A labelled row's label is neither 1 nor -1.");
		}
		if (normal > (uint64_t) lab_normal || anomaly > (uint64_t) lab_anomaly)
			return bad_state(err, "The labelled row counts are inconsistent.");
	}
	/* every row seen lies within its column's minimum and maximum */
	if (!within_range(buf + OFF_STATS, dims, &area, kept))
		return bad_state(err, "A sampled row is not finite or lies outside the minimum and maximum.");
	if (!within_range(buf + OFF_STATS, dims, &lab, lab_kept))
		return bad_state(err, "A labelled row is not finite or lies outside the minimum and maximum.");
	return SVC_OK;
}

/* A model's kept row i: its values as stored. */
static void
store_kept_row(const SvcSampleArea *a, int64_t i, const double *row)
{
	uint8_t    *dst = svc_sample_row(a, i);

	for (size_t j = 0; j < (size_t) a->width; j++)
		svc_store_f64(dst + 8 * j, row[j]);
}

/* svc_state_add for a model that keeps its rows: rows as they come. */
static bool
add_kept(uint8_t *buf, const double *row)
{
	SvcSampleArea a = area_of(buf);
	int64_t		kept = svc_state_kept(buf);
	int64_t		seen = svc_state_seen(buf);
	int64_t		sample = sample_size(buf);

	if (kept < sample)
	{
		/* filling up: keep every row */
		if (kept >= a.capacity)
			return false;
		store_kept_row(&a, kept, row);
		svc_store_u64(buf + OFF_KEPT, (uint64_t) (kept + 1));
	}
	else if (ring_sample(buf))
	{
		/* a sliding window: the new row replaces the oldest */
		store_kept_row(&a, seen % sample, row);
	}
	else
	{
		/* Algorithm R: the new row replaces a random one w.p. sample/seen */
		SvcRng		rng;
		uint64_t	j;

		load_rng(buf, &rng);
		j = svc_rng_below(&rng, (uint64_t) seen + 1);
		store_rng(buf, &rng);
		if (j < (uint64_t) sample)
			store_kept_row(&a, (int64_t) j, row);
	}
	return true;
}

bool
svc_state_floats_to_row(const float *v, int32_t n, double *out)
{
	typedef float f8 __attribute__((vector_size(8 * sizeof(float))));
	typedef uint32_t u8 __attribute__((vector_size(8 * sizeof(uint32_t))));
	u8			acc = {0};
	uint32_t	tail = 0;
	int32_t		j = 0;

	/*
	 * Finite: an exponent below all ones, so that adding one to it leaves
	 * the top bit clear.  + 0.0 turns -0.0 into 0.0 (round to nearest).
	 */
	for (; j + 8 <= n; j += 8)
	{
		u8			b;
		f8			f;
		v8			o;

		memcpy(&b, v + j, sizeof(b));
		acc |= (b & 0x7f800000u) + 0x00800000u;
		memcpy(&f, v + j, sizeof(f));
		o = __builtin_convertvector(f, v8) + 0.0;
		memcpy(out + j, &o, sizeof(o));
	}
	for (; j < n; j++)
	{
		uint32_t	b;

		memcpy(&b, v + j, sizeof(b));
		tail |= (b & 0x7f800000u) + 0x00800000u;
		out[j] = (double) v[j] + 0.0;
	}
	for (int k = 0; k < 8; k++)
		tail |= acc[k];
	return (tail & 0x80000000u) == 0;
}

/* svc_state_add, for a row without -0.0 when canonical */
static inline bool
add_row(uint8_t *buf, const double *row, bool canonical)
{
	int32_t		dims = svc_state_dims(buf);
	int64_t		seen = svc_state_seen(buf);

	if (keeps_rows(buf))
	{
		if (!add_kept(buf, row))
			return false;
	}
	else
	{
		int64_t		kept = svc_state_kept(buf);
		int64_t		sample = sample_size(buf);
		uint64_t	key = canonical ? svc_sample_key_canonical(row, dims, key_seed(buf)) :
			svc_sample_key(row, dims, key_seed(buf));

		/* most rows, once the sample is full: a key above the area's bound */
		if (key <= svc_sample_tau(buf + OFF_STATS + SVC_STATS_SIZE(dims)))
		{
			SvcSampleArea a = area_of(buf);

			if (svc_sample_offer(&a, &kept, sample, row, key, 1) == SVC_SAMPLE_FULL)
				return false;
			svc_store_u64(buf + OFF_KEPT, (uint64_t) kept);
		}
	}
	svc_store_u64(buf + OFF_SEEN, (uint64_t) (seen + 1));
	svc_stats_add(buf + OFF_STATS, dims, row);
	return true;
}

bool
svc_state_add(uint8_t *buf, const double *row)
{
	return add_row(buf, row, false);
}

bool
svc_state_add_canonical(uint8_t *buf, const double *row)
{
	return add_row(buf, row, true);
}

bool
svc_state_add_labelled(uint8_t *buf, const double *row, int label)
{
	int32_t		dims = svc_state_dims(buf);
	SvcSampleArea lab = lab_area_of(buf);
	int64_t		kept = svc_state_lab_kept(buf);
	double		value = label > 0 ? 1.0 : -1.0;
	uint64_t	key = svc_sample_key_of(row, NULL, dims + 1, true, value, key_seed(buf));

	/* the features and the label, one value more, as one row of the sample */
	if (svc_sample_offer_labelled(&lab, &kept, lab_sample(buf), row, value, key, 1) ==
		SVC_SAMPLE_FULL)
		return false;
	svc_store_u64(buf + OFF_LAB_KEPT, (uint64_t) kept);
	svc_store_u64(buf + (label > 0 ? OFF_LAB_NORMAL : OFF_LAB_ANOMALY),
				  (uint64_t) (svc_state_lab_seen(buf, label) + 1));
	svc_stats_add(buf + OFF_STATS, dims, row);
	return true;
}

/* The most slots of the unlabelled rows: the sample and room for compactions. */
static int64_t
max_capacity(const uint8_t *buf)
{
	return keeps_rows(buf) ? sample_size(buf) : svc_sample_max_capacity(sample_size(buf));
}

int64_t
svc_state_max_capacity(const SvcOptions *opt)
{
	return opt->keep_rows ? opt->sample : svc_sample_max_capacity(opt->sample);
}

int64_t
svc_state_max_lab_capacity(const SvcOptions *opt)
{
	return svc_sample_max_capacity(opt->label_sample);
}

int64_t
svc_state_next_capacity(const uint8_t *buf)
{
	int64_t		cap = svc_state_capacity(buf);
	int64_t		next = cap < 16 ? 16 : cap * 2;
	int64_t		most = max_capacity(buf);

	return next > most ? most : next;
}

int64_t
svc_state_next_lab_capacity(const uint8_t *buf)
{
	int64_t		cap = svc_state_lab_capacity(buf);
	int64_t		next = cap < 16 ? 16 : cap * 2;
	int64_t		most = svc_sample_max_capacity(lab_sample(buf));

	return next > most ? most : next;
}

void
svc_state_copy_labelled(const uint8_t *src, uint8_t *dst, int64_t new_capacity,
						int64_t new_lab_capacity)
{
	int32_t		dims = svc_state_dims(src);
	int64_t		kept = svc_state_kept(src);
	SvcSampleArea from,
				to,
				lab_from,
				lab_to;

	/* the header and the range, then each area in the new layout, then the init */
	memcpy(dst, src, OFF_STATS + SVC_STATS_SIZE(dims));
	svc_store_u64(dst + OFF_CAPACITY, (uint64_t) new_capacity);
	svc_store_u64(dst + OFF_LAB_CAPACITY, (uint64_t) new_lab_capacity);
	from = area_of(src);
	to = area_of(dst);
	lab_from = lab_area_of(src);
	lab_to = lab_area_of(dst);
	if (keeps_rows(src))
	{
		svc_sample_init(&to);
		memcpy(to.rows, from.rows, (size_t) kept * 8 * (size_t) dims);
	}
	else
		svc_sample_copy(&from, &to, kept);
	svc_sample_copy(&lab_from, &lab_to, svc_state_lab_kept(src));
	if (svc_state_init_len(src) > 0)
		memcpy((uint8_t *) svc_state_init_model(dst), svc_state_init_model(src),
			   svc_state_init_len(src));
}

void
svc_state_grow_in_place(uint8_t *buf, int64_t new_capacity)
{
	int64_t		kept = svc_state_kept(buf);
	size_t		init_len = svc_state_init_len(buf);
	const uint8_t *init_from = svc_state_init_model(buf);
	SvcSampleArea from = area_of(buf),
				lab_from = lab_area_of(buf),
				to,
				lab_to;

	svc_store_u64(buf + OFF_CAPACITY, (uint64_t) new_capacity);
	to = area_of(buf);
	lab_to = lab_area_of(buf);
	/* the parts after the area move up, the last first */
	if (init_len > 0)
		memmove((uint8_t *) svc_state_init_model(buf), init_from, init_len);
	memmove(lab_to.base, lab_from.base, svc_sample_area_size(lab_from.width, lab_from.capacity));
	if (keeps_rows(buf))
	{
		size_t		rowsz = 8 * (size_t) from.width;

		/* rows as they came, the rest of the area zero (svc_sample_init's) */
		memset(to.rows + (size_t) kept * rowsz, 0,
			   svc_sample_area_size(to.width, to.capacity) - (size_t) (to.rows - to.base) -
			   (size_t) kept * rowsz);
	}
	else
		svc_sample_grow(&from, &to, kept);
}

void
svc_state_copy(const uint8_t *src, uint8_t *dst, int64_t new_capacity)
{
	svc_state_copy_labelled(src, dst, new_capacity, svc_state_lab_capacity(src));
}

int64_t
svc_state_merged_kept(const uint8_t *a, const uint8_t *b)
{
	int64_t		total = svc_state_kept(a) + svc_state_kept(b);
	int64_t		most = max_capacity(a);

	return total < most ? total : most;
}

int64_t
svc_state_merged_lab_kept(const uint8_t *a, const uint8_t *b)
{
	int64_t		total = svc_state_lab_kept(a) + svc_state_lab_kept(b);
	int64_t		most = svc_sample_max_capacity(lab_sample(a));

	return total < most ? total : most;
}

/*
 * Merge the kept rows of b (kept_b of rowsz bytes, a uniform sample of
 * seen_b rows) into a's (likewise), which has room for the result: all
 * rows while the two sides have seen at most sample, else a uniform sample
 * of sample rows of the union.  Returns the rows a then holds.  For the
 * models that keep their rows only.
 */
static int64_t
merge_reservoir(uint8_t *a, int64_t kept_a, int64_t seen_a, const uint8_t *b,
				int64_t kept_b, int64_t seen_b, size_t rowsz, int64_t sample, SvcRng *rng)
{
	int64_t		take_a = 0,
				take_b = 0;

	if (seen_a + seen_b <= sample)
	{
		/* neither side has dropped a row: keep everything */
		take_a = kept_a;
		take_b = kept_b;
	}
	else
	{
		/*
		 * Sequential draws without replacement from the union of the rows
		 * seen: the count from each side is hypergeometric, which makes
		 * the result a uniform sample of the union.
		 */
		int64_t		left_a = seen_a,
					left_b = seen_b;
		int64_t		target = kept_a + kept_b < sample ? kept_a + kept_b : sample;

		for (int64_t i = 0; i < target; i++)
		{
			if (svc_rng_below(rng, (uint64_t) (left_a + left_b)) < (uint64_t) left_a)
			{
				take_a++;
				left_a--;
			}
			else
			{
				take_b++;
				left_b--;
			}
		}
	}

	/* a uniform subset of each reservoir is a uniform subset of its side */
	for (int64_t i = 0; i < take_a; i++)
	{
		int64_t		j = i + (int64_t) svc_rng_below(rng, (uint64_t) (kept_a - i));

		if (j != i)
		{
			uint8_t    *pi = a + rowsz * (size_t) i,
					   *pj = a + rowsz * (size_t) j;

			for (size_t k = 0; k < rowsz; k++)
			{
				uint8_t		t = pi[k];

				pi[k] = pj[k];
				pj[k] = t;
			}
		}
	}
	{
		/* partial Fisher-Yates over b's indices without touching b */
		int64_t		chosen = 0;
		int64_t		need = take_b;

		for (int64_t i = 0; i < kept_b && need > 0; i++)
		{
			/* select row i with probability need / (kept_b - i) */
			if (svc_rng_below(rng, (uint64_t) (kept_b - i)) < (uint64_t) need)
			{
				memcpy(a + rowsz * (size_t) (take_a + chosen), b + rowsz * (size_t) i, rowsz);
				chosen++;
				need--;
			}
		}
	}
	/* the rows past the result are unused: zero, as a fresh state's */
	if (take_a + take_b < kept_a)
		memset(a + rowsz * (size_t) (take_a + take_b), 0,
			   rowsz * (size_t) (kept_a - take_a - take_b));
	return take_a + take_b;
}

/* Offer every slot of src to dst (kept_dst slots used, at most limit). */
static int64_t
merge_sample(const SvcSampleArea *dst, int64_t kept_dst, const SvcSampleArea *src,
			 int64_t kept_src, int64_t limit)
{
	for (int64_t i = 0; i < kept_src; i++)
		(void) svc_sample_offer_slot(dst, &kept_dst, limit, src, i);
	return kept_dst;
}

SvcStatus
svc_state_merge(uint8_t *a, const uint8_t *b, SvcError *err)
{
	int32_t		dims = svc_state_dims(a);
	SvcOptions	opt_a,
				opt_b;
	uint8_t		wa[SVC_OPTIONS_WIRE_FULL],
				wb[SVC_OPTIONS_WIRE_FULL];
	int64_t		kept_a = svc_state_kept(a),
				kept_b = svc_state_kept(b);
	int64_t		seen_a = svc_state_seen(a),
				seen_b = svc_state_seen(b);
	int64_t		target = svc_state_merged_kept(a, b);
	int64_t		kept,
				lab_kept;
	SvcSampleArea area_a,
				area_b,
				lab_a,
				lab_b;

	if (svc_state_dims(b) != dims)
	{
		/* the glue's wording for a row of the wrong length */
		return svc_fail(err, SVC_ERR_DIMENSION, "expected %d dimensions, not %d",
						dims, svc_state_dims(b));
	}
	svc_state_options(a, &opt_a);
	svc_state_options(b, &opt_b);
	svc_options_encode_full(&opt_a, wa);
	svc_options_encode_full(&opt_b, wb);
	if (memcmp(wa, wb, sizeof(wa)) != 0)
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
						"cannot merge svclust states trained with different options");
	if (!svc_state_init_equal(a, svc_state_init_model(b), svc_state_init_len(b)))
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "cannot merge svclust states warm-started from different init models");
		svc_error_detail(err, "Their init models are %zu and %zu bytes%s.",
						 svc_state_init_len(a), svc_state_init_len(b),
						 svc_state_init_len(a) == svc_state_init_len(b) ? " and differ" : "");
		svc_error_hint(err, "Pass the same init model to every row of a group.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	if (target > svc_state_capacity(a) ||
		svc_state_merged_lab_kept(a, b) > svc_state_lab_capacity(a))
		return svc_fail(err, SVC_ERR_INTERNAL, "merge target has no room");
	if (svc_state_rows_seen(a) > SVC_MAX_SEEN - svc_state_rows_seen(b))
		return svc_fail(err, SVC_ERR_LIMIT, "cannot merge svclust states of more than %lld rows",
						(long long) SVC_MAX_SEEN);

	area_a = area_of(a);
	area_b = area_of(b);
	lab_a = lab_area_of(a);
	lab_b = lab_area_of(b);
	if (opt_a.keep_rows)
	{
		SvcRng		rng;

		load_rng(a, &rng);
		kept = merge_reservoir(area_a.rows, kept_a, seen_a, area_b.rows, kept_b, seen_b,
							   (size_t) 8 * dims, opt_a.sample, &rng);
		store_rng(a, &rng);
	}
	else
		kept = merge_sample(&area_a, kept_a, &area_b, kept_b, opt_a.sample);
	lab_kept = merge_sample(&lab_a, svc_state_lab_kept(a), &lab_b, svc_state_lab_kept(b),
							opt_a.label_sample);

	svc_stats_merge(a + OFF_STATS, b + OFF_STATS, dims);
	svc_store_u64(a + OFF_KEPT, (uint64_t) kept);
	svc_store_u64(a + OFF_SEEN, (uint64_t) (seen_a + seen_b));
	svc_store_u64(a + OFF_LAB_KEPT, (uint64_t) lab_kept);
	svc_store_u64(a + OFF_LAB_NORMAL,
				  (uint64_t) (svc_state_lab_seen(a, 1) + svc_state_lab_seen(b, 1)));
	svc_store_u64(a + OFF_LAB_ANOMALY,
				  (uint64_t) (svc_state_lab_seen(a, -1) + svc_state_lab_seen(b, -1)));
	return SVC_OK;
}

/* The rows an area's sample stands for (the sum of its counts). */
static uint64_t
stood_for(const SvcSampleArea *a, int64_t kept)
{
	uint64_t	n = 0;

	for (int64_t i = 0; i < kept; i++)
		n += svc_sample_count_at(a, i);
	return n;
}

/*
 * The rows an area's limit smallest stand for, at most limit: more slots
 * than limit stand for limit rows at least (a count is at least 1).
 */
static int64_t
train_rows(const SvcSampleArea *a, int64_t kept, int64_t limit)
{
	uint64_t	n;

	if (kept >= limit)
		return limit;
	n = stood_for(a, kept);
	return n < (uint64_t) limit ? (int64_t) n : limit;
}

int64_t
svc_state_train_rows(const uint8_t *buf)
{
	SvcSampleArea a = area_of(buf);

	if (keeps_rows(buf))
		return svc_state_kept(buf);
	return train_rows(&a, svc_state_kept(buf), sample_size(buf));
}

int64_t
svc_state_train_lab_rows(const uint8_t *buf)
{
	SvcSampleArea a = lab_area_of(buf);

	return train_rows(&a, svc_state_lab_kept(buf), lab_sample(buf));
}

/* Slot i's row into out (width values). */
static void
load_row(const SvcSampleArea *a, int64_t i, double *out)
{
	const uint8_t *p = svc_sample_row(a, i);

	for (int32_t j = 0; j < a->width; j++)
		out[j] = svc_load_f64(p + 8 * (size_t) j);
}

/* svc_state_row_cmp of two slots' rows, read where the area stores them */
static inline int
slot_row_cmp(const SvcSampleArea *a, uint32_t x, uint32_t y)
{
	const uint8_t *p = svc_sample_row(a, x),
			   *q = svc_sample_row(a, y);

	for (size_t j = 0; j < (size_t) a->width; j++)
	{
		double		u = svc_load_f64(p + 8 * j),
					v = svc_load_f64(q + 8 * j);

		if (u < v)
			return -1;
		if (u > v)
			return 1;
	}
	return 0;
}

/*
 * The rows of slots slot[pick[k]], k < n (a->width doubles each), sorted
 * lexicographically into out.  The merge sort runs on the row numbers and
 * each row is then loaded once, from the area: on wide rows, moving the
 * rows was most of the cost (a 10,000 x 768 sample is 61 MB), and so was
 * writing them out first (unsorted, then a copy of the distinct rows: at
 * 768 columns the fresh pages of that copy alone were about 7% of
 * svc_train).  Stable, so the order is the one a merge sort of the rows as
 * listed gives (rows equal by the comparison but not in their bytes keep
 * it).
 */
static SvcStatus
sort_picked(const SvcEnv *env, const SvcSampleArea *a, const uint32_t *slot,
			const int64_t *pick, int64_t n, double *out, SvcError *err)
{
	/* bottom-up merge sort: stable, no global state, no qsort_r */
	size_t		d = (size_t) a->width;
	int64_t	   *idx,
			   *src,
			   *dst;

	if (n < 1)
		return SVC_OK;
	idx = svc_alloc(env, sizeof(int64_t) * 2 * (size_t) n, err);
	if (idx == NULL)
		return SVC_ERR_NOMEM;
	src = idx;
	dst = idx + n;
	memcpy(src, pick, sizeof(int64_t) * (size_t) n);
	for (int64_t width = 1; width < n; width *= 2)
	{
		for (int64_t lo = 0; lo < n; lo += 2 * width)
		{
			int64_t		mid = lo + width < n ? lo + width : n;
			int64_t		hi = lo + 2 * width < n ? lo + 2 * width : n;
			int64_t		i = lo,
						j = mid,
						k = lo;

			while (i < mid && j < hi)
			{
				if (slot_row_cmp(a, slot[src[j]], slot[src[i]]) < 0)
					dst[k++] = src[j++];
				else
					dst[k++] = src[i++];
			}
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		{
			int64_t    *t = src;

			src = dst;
			dst = t;
		}
	}
	for (int64_t k = 0; k < n; k++)
		load_row(a, slot[src[k]], out + (size_t) k * d);
	svc_free(env, idx);
	return SVC_OK;
}

/*
 * An area's rows to train on: every row it stands for when they are at
 * most limit, else limit of them drawn uniformly (without replacement)
 * from the rows it stands for, listed in the slots' canonical order.
 * The limit smallest slots and their counts in canonical order (slot,
 * counts: room for kept each; *n_distinct of them), for the statistics;
 * the rows to train on as their places in slot, unsorted, in pick (room
 * for limit); *n of them.  The rows stay where the area keeps them.
 */
static SvcStatus
area_rows(const SvcEnv *env, const SvcSampleArea *a, int64_t kept, int64_t limit,
		  uint64_t seed, int64_t *pick, int64_t *n, uint32_t *slot, uint64_t *counts,
		  int64_t *n_distinct, SvcError *err)
{
	uint64_t   *upto = NULL;
	uint64_t   *set = NULL;
	uint64_t	total = 0;

	svc_sample_order(a, kept, slot);
	/* the limit smallest: what the sample stands for */
	if (kept > limit)
		kept = limit;
	for (int64_t i = 0; i < kept; i++)
	{
		counts[i] = svc_sample_count_at(a, slot[i]);
		total += counts[i];
	}
	*n_distinct = kept;
	*n = 0;
	if (total <= (uint64_t) limit)
	{
		for (int64_t i = 0; i < kept; i++)
			for (uint64_t c = 0; c < counts[i]; c++)
				pick[(*n)++] = i;
		return SVC_OK;
	}

	/*
	 * limit of the total rows, uniformly: Floyd's draw of a limit-subset of
	 * [0, total) (integer draws only, the same on every platform), then
	 * each index to the slot whose copies it falls among.
	 */
	{
		uint64_t	tsize = 1;
		SvcRng		rng;

		while (tsize < 2 * (uint64_t) limit)
			tsize *= 2;
		upto = svc_alloc(env, sizeof(uint64_t) * (size_t) kept, err);
		set = svc_alloc(env, sizeof(uint64_t) * (size_t) tsize, err);
		if (upto == NULL || set == NULL)
		{
			svc_free(env, upto);
			svc_free(env, set);
			return SVC_ERR_NOMEM;
		}
		/* the set holds index + 1; 0 is empty */
		memset(set, 0, sizeof(uint64_t) * (size_t) tsize);
		svc_rng_seed(&rng, seed ^ DRAW_STREAM);
		for (uint64_t j = total - (uint64_t) limit; j < total; j++)
		{
			uint64_t	t = svc_rng_below(&rng, j + 1);
			uint64_t	pick = t;

			for (int pass = 0; pass < 2; pass++)
			{
				uint64_t	b = (pick * UINT64_C(0x9E3779B97F4A7C15) >> 20) & (tsize - 1);
				bool		found = false;

				while (set[b] != 0)
				{
					if (set[b] == pick + 1)
					{
						found = true;
						break;
					}
					b = (b + 1) & (tsize - 1);
				}
				if (!found)
				{
					set[b] = pick + 1;
					break;
				}
				/* t was drawn before: take j, which cannot have been */
				pick = j;
			}
		}
		upto[0] = counts[0];
		for (int64_t i = 1; i < kept; i++)
			upto[i] = upto[i - 1] + counts[i];
		for (uint64_t b = 0; b < tsize; b++)
		{
			uint64_t	idx;
			int64_t		lo = 0,
						hi = kept - 1;

			if (set[b] == 0)
				continue;
			idx = set[b] - 1;
			/* the first slot whose copies reach past idx */
			while (lo < hi)
			{
				int64_t		mid = lo + (hi - lo) / 2;

				if (upto[mid] > idx)
					hi = mid;
				else
					lo = mid + 1;
			}
			pick[(*n)++] = lo;
		}
		svc_free(env, upto);
		svc_free(env, set);
	}
	return SVC_OK;
}

SvcStatus
svc_state_sample(const SvcEnv *env, const uint8_t *buf, double *rows, double *lab,
				 double *mean, double *stddev, double *min, double *max, SvcError *err)
{
	int32_t		dims = svc_state_dims(buf);
	int64_t		kept = svc_state_kept(buf);
	int64_t		lab_kept = lab != NULL ? svc_state_lab_kept(buf) : 0;
	int64_t		seen = svc_state_seen(buf);
	int64_t		lab_seen = lab_seen_total(buf);
	size_t		lab_width = (size_t) dims + 1;
	const uint8_t *st = buf + OFF_STATS;
	SvcSampleArea area = area_of(buf),
				lab_area = lab_area_of(buf);
	uint32_t   *slot = NULL,
			   *lab_slot = NULL;
	double	   *scratch = NULL;
	uint64_t   *counts = NULL,
			   *lab_counts = NULL;
	int64_t    *pick = NULL,
			   *lab_pick = NULL;
	int64_t		n = 0,
				n_lab = 0,
				n_distinct = 0,
				n_lab_distinct = 0;
	uint64_t	stood,
				lab_stood;
	SvcStatus	st_ok = SVC_OK;

	slot = svc_alloc(env, sizeof(uint32_t) * (size_t) (kept > 0 ? kept : 1), err);
	scratch = svc_alloc(env, sizeof(double) * (size_t) dims, err);
	counts = svc_alloc(env, sizeof(uint64_t) * (size_t) (kept > 0 ? kept : 1), err);
	/* at most one a slot, or the sample's size (area_rows) */
	pick = svc_alloc(env, sizeof(int64_t) * (size_t) (kept > 0 ? kept : 1) +
					 sizeof(int64_t) * (size_t) sample_size(buf), err);
	if (lab != NULL)
	{
		lab_slot = svc_alloc(env, sizeof(uint32_t) * (size_t) (lab_kept > 0 ? lab_kept : 1), err);
		lab_counts = svc_alloc(env, sizeof(uint64_t) * (size_t) (lab_kept > 0 ? lab_kept : 1), err);
		lab_pick = svc_alloc(env, sizeof(int64_t) * (size_t) (lab_kept > 0 ? lab_kept : 1) +
							 sizeof(int64_t) * (size_t) lab_sample(buf), err);
	}
	if (slot == NULL || scratch == NULL || counts == NULL || pick == NULL ||
		(lab != NULL && (lab_slot == NULL || lab_counts == NULL || lab_pick == NULL)))
		st_ok = SVC_ERR_NOMEM;
	if (st_ok == SVC_OK && keeps_rows(buf))
	{
		/* a model's kept rows, as they came, each its own */
		for (int64_t i = 0; i < kept; i++)
		{
			slot[i] = (uint32_t) i;
			counts[i] = 1;
			pick[i] = i;
		}
		n = n_distinct = kept;
	}
	else if (st_ok == SVC_OK)
		st_ok = area_rows(env, &area, kept, sample_size(buf), key_seed(buf), pick, &n, slot,
						  counts, &n_distinct, err);
	if (st_ok == SVC_OK && lab != NULL)
		st_ok = area_rows(env, &lab_area, lab_kept, lab_sample(buf), key_seed(buf) ^ 1, lab_pick,
						  &n_lab, lab_slot, lab_counts, &n_lab_distinct, err);
	/* one order whatever the order rows came in */
	if (st_ok == SVC_OK)
		st_ok = sort_picked(env, &area, slot, pick, n, rows, err);
	if (st_ok == SVC_OK && n_lab > 0)
		st_ok = sort_picked(env, &lab_area, lab_slot, lab_pick, n_lab, lab, err);
	svc_free(env, pick);
	svc_free(env, lab_pick);
	if (st_ok != SVC_OK)
	{
		svc_free(env, slot);
		svc_free(env, scratch);
		svc_free(env, counts);
		svc_free(env, lab_slot);
		svc_free(env, lab_counts);
		return st_ok;
	}

	stood = 0;
	for (int64_t i = 0; i < n_distinct; i++)
		stood += counts[i];
	lab_stood = 0;
	for (int64_t i = 0; i < n_lab_distinct; i++)
		lab_stood += lab_counts[i];
	if (stood == (uint64_t) seen && (lab == NULL ? lab_seen == 0 : lab_stood == (uint64_t) lab_seen) &&
		n == seen && n_lab == lab_seen)
	{
		/*
		 * Every row is here, once each: the statistics of the sorted rows,
		 * as this state's format has always computed them.
		 */
		svc_stats_of_rows(st, dims, rows, n, lab, n_lab, lab_width, mean, stddev, min, max);
	}
	else
	{
		/* of the rows the sample stands for, each slot weighed by its count */
		svc_stats_of_counted(st, dims, area.rows, slot, counts, n_distinct, lab_area.rows, lab_slot,
							 lab_counts, n_lab_distinct, lab_width, scratch, mean, stddev, min,
							 max);
	}
	svc_free(env, slot);
	svc_free(env, scratch);
	svc_free(env, counts);
	svc_free(env, lab_slot);
	svc_free(env, lab_counts);
	return SVC_OK;
}

void
svc_state_rows_stored(const uint8_t *buf, double *rows)
{
	SvcSampleArea a = area_of(buf);
	int32_t		dims = svc_state_dims(buf);
	int64_t		kept = svc_state_kept(buf);
	int64_t		seen = svc_state_seen(buf);
	/* a full ring starts at its oldest row, the next one to be replaced */
	int64_t		first = ring_sample(buf) && kept > 0 && seen > kept ? seen % kept : 0;

	for (int64_t i = 0; i < kept; i++)
		load_row(&a, (first + i) % kept, rows + (size_t) i * dims);
}
