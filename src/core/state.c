/*
 * state.c - the training aggregate's bounded reservoir state: its layout
 * and check, the reservoirs and their merge, and the rows taken out
 *
 * The running scaling statistics, a block of the state, are
 * state_stats.c's.
 */
#include "state.h"
#include "state_stats.h"
#include "bytes.h"
#include "model.h"

#include <stdlib.h>
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
 * The sample size inside the encoded options: svc_state_add reads it
 * without decoding them.  test_state checks that svc_options_encode puts
 * it there.
 */
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

size_t
svc_state_size_warm(int32_t dims, int64_t capacity, int64_t lab_capacity, size_t init_len)
{
	uint64_t	d = (uint64_t) dims;
	uint64_t	total;

	if (dims < 1 || dims > SVC_MAX_DIMS || capacity < 0 || capacity > SVC_MAX_SAMPLE ||
		lab_capacity < 0 || lab_capacity > SVC_MAX_SAMPLE || init_len > SVC_STATE_MAX_INIT)
		return 0;
	total = SVC_STATE_HEADER_SIZE + 8 * N_STATS * d + 8 * d * (uint64_t) capacity +
		8 * (d + 1) * (uint64_t) lab_capacity + (uint64_t) init_len;
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

static uint8_t *
row_ptr(uint8_t *buf, int32_t dims, int64_t i)
{
	return buf + OFF_STATS + (size_t) 8 * dims * N_STATS + (size_t) 8 * dims * (size_t) i;
}

static const uint8_t *
row_cptr(const uint8_t *buf, int32_t dims, int64_t i)
{
	return buf + OFF_STATS + (size_t) 8 * dims * N_STATS + (size_t) 8 * dims * (size_t) i;
}

/* Labelled row i: dims features, then its label (+1 or -1) as a double. */
static uint8_t *
lab_ptr(uint8_t *buf, int32_t dims, int64_t i)
{
	return row_ptr(buf, dims, svc_state_capacity(buf)) + (size_t) 8 * (dims + 1) * (size_t) i;
}

static const uint8_t *
lab_cptr(const uint8_t *buf, int32_t dims, int64_t i)
{
	return row_cptr(buf, dims, svc_state_capacity(buf)) + (size_t) 8 * (dims + 1) * (size_t) i;
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

size_t
svc_state_init_len(const uint8_t *buf)
{
	return (size_t) svc_load_u64(buf + OFF_INIT_LEN);
}

/* The tail: after the labelled rows' area. */
const uint8_t *
svc_state_init_model(const uint8_t *buf)
{
	return lab_cptr(buf, svc_state_dims(buf), svc_state_lab_capacity(buf));
}

static uint8_t *
init_ptr(uint8_t *buf)
{
	return lab_ptr(buf, svc_state_dims(buf), svc_state_lab_capacity(buf));
}

void
svc_state_set_init(uint8_t *buf, const uint8_t *init, size_t len)
{
	svc_store_u64(buf + OFF_INIT_LEN, (uint64_t) len);
	memcpy(init_ptr(buf), init, len);
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
	SvcRng		rng;

	memset(buf, 0, SVC_STATE_HEADER_SIZE);
	memcpy(buf + OFF_MAGIC, SVC_STATE_MAGIC, 4);
	buf[OFF_VERSION] = SVC_STATE_VERSION;
	svc_store_u32(buf + OFF_DIMS, (uint32_t) dims);
	svc_store_u64(buf + OFF_CAPACITY, (uint64_t) capacity);
	/* a stream of its own, so the sample and the SGD draws are independent */
	svc_rng_seed(&rng, opt->seed ^ UINT64_C(0x5245534552564F49));
	store_rng(buf, &rng);
	svc_options_encode_full(opt, buf + OFF_OPTIONS);
	svc_stats_init(buf + OFF_STATS, dims);
}

void
svc_state_set_stream(uint8_t *buf, uint64_t stream)
{
	SvcRng		rng;
	SvcOptions	opt;

	svc_state_options(buf, &opt);
	svc_rng_seed(&rng, opt.seed ^ UINT64_C(0x5245534552564F49) ^
				 (stream * UINT64_C(0x9E3779B97F4A7C15)));
	store_rng(buf, &rng);
}

static SvcStatus
bad_state(SvcError *err, const char *detail)
{
	return svc_corrupt(err, "svclust training state", detail);
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
				kept_normal = 0,
				total;
	uint64_t	init_len;
	SvcOptions	opt;
	SvcError	opt_err;
	const char *stats_err;

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
	if (capacity < 0 || capacity > opt.sample || kept < 0 || kept > capacity ||
		seen < kept || (seen > kept && kept != opt.sample) || seen < 0 ||
		seen > SVC_MAX_SEEN)
		return bad_state(err, "The row counts are inconsistent.");
	if (lab_capacity < 0 || lab_capacity > opt.label_sample || lab_kept < 0 ||
		lab_kept > lab_capacity || lab_normal < 0 || lab_anomaly < 0 ||
		lab_normal > SVC_MAX_SEEN || lab_anomaly > SVC_MAX_SEEN - lab_normal ||
		lab_normal + lab_anomaly < lab_kept ||
		(lab_normal + lab_anomaly > lab_kept && lab_kept != opt.label_sample) ||
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

	/* the statistics, of every row counted */
	stats_err = svc_stats_check(buf + OFF_STATS, dims, total);
	if (stats_err != NULL)
		return bad_state(err, stats_err);
	for (int64_t i = 0; i < lab_kept; i++)
	{
		double		label = svc_load_f64(lab_cptr(buf, dims, i) + 8 * (size_t) dims);

		if (label != 1.0 && label != -1.0)
			return bad_state(err, "A labelled row's label is neither 1 nor -1.");
		kept_normal += label > 0;
	}
	for (int32_t j = 0; j < dims; j++)
	{
		/* every row seen lies within its column's minimum and maximum */
		double		lo,
					hi;

		svc_stats_range(buf + OFF_STATS, dims, j, &lo, &hi);
		for (int64_t i = 0; i < kept; i++)
		{
			double		v = svc_load_f64(row_cptr(buf, dims, i) + 8 * j);

			if (!(v >= lo && v <= hi))
				return bad_state(err, "A sampled row is not finite or lies outside the minimum and maximum.");
		}
		for (int64_t i = 0; i < lab_kept; i++)
		{
			double		v = svc_load_f64(lab_cptr(buf, dims, i) + 8 * j);

			if (!(v >= lo && v <= hi))
				return bad_state(err, "A labelled row is not finite or lies outside the minimum and maximum.");
		}
	}
	if (kept_normal > lab_normal || lab_kept - kept_normal > lab_anomaly)
		return bad_state(err, "The labelled row counts are inconsistent.");
	return SVC_OK;
}

static void
store_row(uint8_t *dst, const double *row, int32_t dims)
{
	for (size_t j = 0; j < (size_t) dims; j++)
		svc_store_f64(dst + 8 * j, row[j]);
}

/*
 * A model that keeps its rows with the window "oldest" keeps the newest
 * sample rows: row number t (from 0) in slot t % sample, so a call that
 * brings more rows than the window holds hands on its last ones.
 */
static bool
ring_sample(const uint8_t *buf)
{
	return buf[OFF_KEEP_ROWS] != 0 && buf[OFF_WINDOW] == (uint8_t) SVC_WINDOW_OLDEST;
}

bool
svc_state_add(uint8_t *buf, const double *row)
{
	int32_t		dims = svc_state_dims(buf);
	int64_t		capacity = svc_state_capacity(buf);
	int64_t		kept = svc_state_kept(buf);
	int64_t		seen = svc_state_seen(buf);
	int64_t		sample = (int64_t) svc_load_u64(buf + OFF_SAMPLE);

	if (kept < sample)
	{
		/* filling up: keep every row */
		if (kept >= capacity)
			return false;
		store_row(row_ptr(buf, dims, kept), row, dims);
		svc_store_u64(buf + OFF_KEPT, (uint64_t) (kept + 1));
	}
	else if (ring_sample(buf))
	{
		/* a sliding window: the new row replaces the oldest */
		store_row(row_ptr(buf, dims, seen % sample), row, dims);
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
			store_row(row_ptr(buf, dims, (int64_t) j), row, dims);
	}
	svc_store_u64(buf + OFF_SEEN, (uint64_t) (seen + 1));
	svc_stats_add(buf + OFF_STATS, dims, seen + 1 + lab_seen_total(buf), row);
	return true;
}

bool
svc_state_add_labelled(uint8_t *buf, const double *row, int label)
{
	int32_t		dims = svc_state_dims(buf);
	int64_t		capacity = svc_state_lab_capacity(buf);
	int64_t		kept = svc_state_lab_kept(buf);
	int64_t		seen = lab_seen_total(buf);
	int64_t		sample = lab_sample(buf);
	uint8_t    *dst = NULL;

	if (kept < sample)
	{
		if (kept >= capacity)
			return false;
		dst = lab_ptr(buf, dims, kept);
		svc_store_u64(buf + OFF_LAB_KEPT, (uint64_t) (kept + 1));
	}
	else
	{
		/* Algorithm R, as for the unlabelled rows */
		SvcRng		rng;
		uint64_t	j;

		load_rng(buf, &rng);
		j = svc_rng_below(&rng, (uint64_t) seen + 1);
		store_rng(buf, &rng);
		if (j < (uint64_t) sample)
			dst = lab_ptr(buf, dims, (int64_t) j);
	}
	if (dst != NULL)
	{
		store_row(dst, row, dims);
		svc_store_f64(dst + 8 * (size_t) dims, label > 0 ? 1.0 : -1.0);
	}
	svc_store_u64(buf + (label > 0 ? OFF_LAB_NORMAL : OFF_LAB_ANOMALY),
				  (uint64_t) (svc_state_lab_seen(buf, label) + 1));
	svc_stats_add(buf + OFF_STATS, dims, svc_state_seen(buf) + seen + 1, row);
	return true;
}

int64_t
svc_state_next_capacity(const uint8_t *buf)
{
	SvcOptions	opt;
	int64_t		cap = svc_state_capacity(buf);
	int64_t		next = cap < 16 ? 16 : cap * 2;

	svc_state_options(buf, &opt);
	return next > opt.sample ? opt.sample : next;
}

int64_t
svc_state_next_lab_capacity(const uint8_t *buf)
{
	int64_t		cap = svc_state_lab_capacity(buf);
	int64_t		next = cap < 16 ? 16 : cap * 2;
	int64_t		sample = lab_sample(buf);

	return next > sample ? sample : next;
}

void
svc_state_copy_labelled(const uint8_t *src, uint8_t *dst, int64_t new_capacity,
						int64_t new_lab_capacity)
{
	int32_t		dims = svc_state_dims(src);
	int64_t		kept = svc_state_kept(src);
	int64_t		lab_kept = svc_state_lab_kept(src);

	/*
	 * The header, the statistics and the kept rows; then the labelled
	 * rows; then the init model, at the tail of the new layout.
	 */
	memcpy(dst, src, svc_state_size(dims, kept));
	svc_store_u64(dst + OFF_CAPACITY, (uint64_t) new_capacity);
	svc_store_u64(dst + OFF_LAB_CAPACITY, (uint64_t) new_lab_capacity);
	if (lab_kept > 0)
		memcpy(lab_ptr(dst, dims, 0), lab_cptr(src, dims, 0),
			   (size_t) 8 * (dims + 1) * (size_t) lab_kept);
	if (svc_state_init_len(src) > 0)
		memcpy(init_ptr(dst), svc_state_init_model(src), svc_state_init_len(src));
}

void
svc_state_copy(const uint8_t *src, uint8_t *dst, int64_t new_capacity)
{
	svc_state_copy_labelled(src, dst, new_capacity, svc_state_lab_capacity(src));
}

int64_t
svc_state_merged_kept(const uint8_t *a, const uint8_t *b)
{
	SvcOptions	opt;
	int64_t		total = svc_state_kept(a) + svc_state_kept(b);

	svc_state_options(a, &opt);
	return total < opt.sample ? total : opt.sample;
}

int64_t
svc_state_merged_lab_kept(const uint8_t *a, const uint8_t *b)
{
	int64_t		total = svc_state_lab_kept(a) + svc_state_lab_kept(b);
	int64_t		sample = lab_sample(a);

	return total < sample ? total : sample;
}

/*
 * Merge reservoir b (kept_b rows of rowsz bytes, a uniform sample of seen_b
 * rows) into reservoir a (likewise), which has room for the result: all
 * rows while the two sides have seen at most sample, else a uniform sample
 * of sample rows of the union.  Returns the rows a then holds.
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
	return take_a + take_b;
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
	SvcRng		rng;
	int64_t		stat_n_a = svc_state_rows_seen(a),
				stat_n_b = svc_state_rows_seen(b);

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
	if (stat_n_a > SVC_MAX_SEEN - stat_n_b)
		return svc_fail(err, SVC_ERR_LIMIT, "cannot merge svclust states of more than %lld rows",
						(long long) SVC_MAX_SEEN);

	/* a's staged rows into its statistics; b's are added below, unchanged */
	svc_stats_flush(a + OFF_STATS, dims, stat_n_a);
	load_rng(a, &rng);
	kept = merge_reservoir(row_ptr(a, dims, 0), kept_a, seen_a, row_cptr(b, dims, 0), kept_b,
						   seen_b, (size_t) 8 * dims, opt_a.sample, &rng);
	/* the labelled rows likewise, in their own reservoir */
	lab_kept = merge_reservoir(lab_ptr(a, dims, 0), svc_state_lab_kept(a), lab_seen_total(a),
							   lab_cptr(b, dims, 0), svc_state_lab_kept(b), lab_seen_total(b),
							   (size_t) 8 * (dims + 1), opt_a.label_sample, &rng);
	store_rng(a, &rng);

	svc_stats_merge(a + OFF_STATS, b + OFF_STATS, dims, stat_n_a, stat_n_b);
	svc_store_u64(a + OFF_KEPT, (uint64_t) kept);
	svc_store_u64(a + OFF_SEEN, (uint64_t) (seen_a + seen_b));
	svc_store_u64(a + OFF_LAB_KEPT, (uint64_t) lab_kept);
	svc_store_u64(a + OFF_LAB_NORMAL,
				  (uint64_t) (svc_state_lab_seen(a, 1) + svc_state_lab_seen(b, 1)));
	svc_store_u64(a + OFF_LAB_ANOMALY,
				  (uint64_t) (svc_state_lab_seen(a, -1) + svc_state_lab_seen(b, -1)));
	return SVC_OK;
}

/* Lexicographic order of two rows of d values. */
static int
cmp_rows(const double *a, const double *b, int32_t d)
{
	for (int32_t j = 0; j < d; j++)
	{
		if (a[j] < b[j])
			return -1;
		if (a[j] > b[j])
			return 1;
	}
	return 0;
}

/* Sort n rows of d doubles lexicographically; tmp has room for n rows. */
static void
sort_rows(double *rows, int64_t n, int32_t d, double *tmp)
{
	/* bottom-up merge sort: stable, no global state, no qsort_r */
	size_t		rowsz = sizeof(double) * (size_t) d;
	double	   *src = rows,
			   *dst = tmp;

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
				if (cmp_rows(src + (size_t) j * d, src + (size_t) i * d, d) < 0)
					memcpy(dst + (size_t) (k++) * d, src + (size_t) (j++) * d, rowsz);
				else
					memcpy(dst + (size_t) (k++) * d, src + (size_t) (i++) * d, rowsz);
			}
			while (i < mid)
				memcpy(dst + (size_t) (k++) * d, src + (size_t) (i++) * d, rowsz);
			while (j < hi)
				memcpy(dst + (size_t) (k++) * d, src + (size_t) (j++) * d, rowsz);
		}
		{
			double	   *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != rows)
		memcpy(rows, src, rowsz * (size_t) n);
}

void
svc_state_extract_labelled(const uint8_t *buf, double *rows, double *lab, double *mean,
						   double *stddev, double *min, double *max)
{
	int32_t		dims = svc_state_dims(buf);
	int64_t		kept = svc_state_kept(buf);
	int64_t		seen = svc_state_seen(buf);
	int64_t		lab_kept = svc_state_lab_kept(buf);
	int64_t		lab_seen = lab_seen_total(buf);
	int64_t		total = seen + lab_seen;
	size_t		lab_width = (size_t) dims + 1;

	for (int64_t i = 0; i < kept; i++)
		for (int32_t j = 0; j < dims; j++)
			rows[(size_t) i * dims + j] = svc_load_f64(row_cptr(buf, dims, i) + 8 * j);
	if (lab != NULL)
		for (int64_t i = 0; i < lab_kept; i++)
			for (size_t j = 0; j < lab_width; j++)
				lab[i * lab_width + j] = svc_load_f64(lab_cptr(buf, dims, i) + 8 * j);

	if (seen == kept && lab_seen == lab_kept && total > 0 && (lab != NULL || lab_kept == 0))
	{
		/*
		 * Every row is here: sort them and recompute the statistics with a
		 * fixed summation order (the rows, then the labelled rows), so
		 * serial and parallel plans agree to the last bit.  The second
		 * halves of the buffers are scratch space supplied by the caller.
		 */
		sort_rows(rows, kept, dims, rows + (size_t) kept * dims);
		if (lab_kept > 0)
			sort_rows(lab, lab_kept, (int32_t) lab_width, lab + (size_t) lab_kept * lab_width);
		svc_stats_of_rows(buf + OFF_STATS, dims, total, rows, kept, lab, lab_width,
						  mean, stddev, min, max);
		return;
	}
	svc_stats_running(buf + OFF_STATS, dims, total, mean, stddev, min, max);
}

void
svc_state_rows_stored(const uint8_t *buf, double *rows)
{
	int32_t		dims = svc_state_dims(buf);
	int64_t		kept = svc_state_kept(buf);
	int64_t		seen = svc_state_seen(buf);
	/* a full ring starts at its oldest row, the next one to be replaced */
	int64_t		first = ring_sample(buf) && kept > 0 && seen > kept ? seen % kept : 0;

	for (int64_t i = 0; i < kept; i++)
	{
		int64_t		slot = (first + i) % kept;

		for (int32_t j = 0; j < dims; j++)
			rows[(size_t) i * dims + j] = svc_load_f64(row_cptr(buf, dims, slot) + 8 * j);
	}
}

void
svc_state_extract(const uint8_t *buf, double *rows, double *mean,
				  double *stddev, double *min, double *max)
{
	svc_state_extract_labelled(buf, rows, NULL, mean, stddev, min, max);
}
