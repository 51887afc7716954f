/*
 * state.c - the training aggregate's bounded reservoir state
 */
#include "state.h"
#include "bytes.h"
#include "model.h"

#include <math.h>
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

#define STAT_MEAN	0
#define STAT_M2		1
#define STAT_MIN	2
#define STAT_MAX	3
#define STAT_EXP	4			/* i64 per column: statistics are of x * 2^-exp */
#define STAT_PENDING 5			/* u64 (the first of the row): rows staged */
#define STAT_STAGE	6			/* STAGE_ROWS rows not yet in the statistics */
#define STAGE_ROWS	16
#define STAGE_COLUMNS 32		/* columns flushed together */
#define N_STATS		(STAT_STAGE + STAGE_ROWS)

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

static int
stat_exp(const uint8_t *buf, int32_t dims, int32_t j)
{
	return (int) (int64_t) svc_load_u64(buf + OFF_STATS + (size_t) 8 * dims * STAT_EXP + 8 * (size_t) j);
}

static void
set_stat_exp(uint8_t *buf, int32_t dims, int32_t j, int e)
{
	svc_store_u64(buf + OFF_STATS + (size_t) 8 * dims * STAT_EXP + 8 * (size_t) j,
				  (uint64_t) (int64_t) e);
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
stat_ptr(uint8_t *buf, int32_t dims, int which)
{
	return buf + OFF_STATS + (size_t) 8 * dims * which;
}

static const uint8_t *
stat_cptr(const uint8_t *buf, int32_t dims, int which)
{
	return buf + OFF_STATS + (size_t) 8 * dims * which;
}

static int64_t
stats_pending(const uint8_t *buf, int32_t dims)
{
	return (int64_t) svc_load_u64(stat_cptr(buf, dims, STAT_PENDING));
}

static const uint8_t *
staged_cptr(const uint8_t *buf, int32_t dims, int64_t r)
{
	return stat_cptr(buf, dims, STAT_STAGE + (int) r);
}

/* 1 / n for staged row r of pending, the last of total rows counted. */
static inline double
staged_inv(int64_t total, int64_t pending, int64_t r)
{
	return 1.0 / (double) (total - pending + r + 1);
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

	memset(buf, 0, SVC_STATE_HEADER_SIZE + (size_t) 8 * N_STATS * dims);
	memcpy(buf + OFF_MAGIC, SVC_STATE_MAGIC, 4);
	buf[OFF_VERSION] = SVC_STATE_VERSION;
	svc_store_u32(buf + OFF_DIMS, (uint32_t) dims);
	svc_store_u64(buf + OFF_CAPACITY, (uint64_t) capacity);
	/* a stream of its own, so the sample and the SGD draws are independent */
	svc_rng_seed(&rng, opt->seed ^ UINT64_C(0x5245534552564F49));
	store_rng(buf, &rng);
	svc_options_encode_full(opt, buf + OFF_OPTIONS);
	for (int32_t j = 0; j < dims; j++)
	{
		svc_store_f64(stat_ptr(buf, dims, STAT_MIN) + 8 * j, HUGE_VAL);
		svc_store_f64(stat_ptr(buf, dims, STAT_MAX) + 8 * j, -HUGE_VAL);
	}
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
	uint64_t	init_len,
				pending;
	SvcOptions	opt;
	SvcError	opt_err;

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

	/*
	 * The staged rows are the last ones counted, finite; the statistics
	 * checked below are of the rows before them (total of them).
	 */
	pending = (uint64_t) stats_pending(buf, dims);
	if (pending >= STAGE_ROWS || pending > (uint64_t) total)
		return bad_state(err, "The count of staged rows is out of range.");
	total -= (int64_t) pending;
	for (uint64_t r = 0; r < pending; r++)
		for (int32_t j = 0; j < dims; j++)
			if (!isfinite(svc_load_f64(staged_cptr(buf, dims, (int64_t) r) + 8 * j)))
				return bad_state(err, "A staged row is not finite.");
	for (int32_t j = 0; j < dims; j++)
	{
		double		mean = svc_load_f64(stat_cptr(buf, dims, STAT_MEAN) + 8 * j);
		double		m2 = svc_load_f64(stat_cptr(buf, dims, STAT_M2) + 8 * j);
		double		lo = svc_load_f64(stat_cptr(buf, dims, STAT_MIN) + 8 * j);
		double		hi = svc_load_f64(stat_cptr(buf, dims, STAT_MAX) + 8 * j);
		int64_t		e = (int64_t) svc_load_u64(stat_cptr(buf, dims, STAT_EXP) + 8 * j);

		if (total > 0 && !(isfinite(lo) && isfinite(hi) && lo <= hi))
			return bad_state(err, "The minimum and maximum are inconsistent.");
		/* an empty state has the statistics svc_state_init gave it */
		if (total == 0 && !(mean == 0 && m2 == 0 && lo == HUGE_VAL && hi == -HUGE_VAL && e == 0))
			return bad_state(err, "The statistics of an empty state are not empty.");
		if (total > 0 && e != svc_scale_exponent(fmax(fabs(lo), fabs(hi))))
			return bad_state(err, "The scale of the statistics does not match the largest value.");

		/*
		 * The statistics are of values scaled to at most 2^400 (see
		 * svc_scale_exponent): their mean is within 2^401 even rounded,
		 * and m2 at most seen times 2^802; the bounds allow 4 times that.
		 * Bounds proportional to seen stay valid when rows are added or
		 * states merged.
		 */
		if (!(fabs(mean) <= 0x1p402) || !(m2 >= 0 && m2 <= 0x1p804 * (double) total))
			return bad_state(err, "The scaling statistics are not finite or out of range.");

		/*
		 * The statistics must fit the range, or scaling would send rows
		 * far out (where distances overflow): the mean lies within it
		 * (half the range of slack for rounding), and m2 is at least
		 * (hi - lo)^2 / 2, the two extremes alone, so that standard
		 * scores stay within 2 sqrt(seen) (half of it allowed, for
		 * rounding), and at most seen (hi - lo)^2 / 4 (allowed 4 times).
		 */
		if (total > 0)
		{
			double		lo_s = ldexp(lo, (int) -e),
						hi_s = ldexp(hi, (int) -e),
						range = hi_s - lo_s;

			if (!(mean >= lo_s - range / 2 && mean <= hi_s + range / 2) ||
				!(m2 >= range * range / 4 && m2 <= range * range * (double) total))
				return bad_state(err, "The scaling statistics do not fit the minimum and maximum.");
		}
	}
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
		double		lo = svc_load_f64(stat_cptr(buf, dims, STAT_MIN) + 8 * j);
		double		hi = svc_load_f64(stat_cptr(buf, dims, STAT_MAX) + 8 * j);

		for (uint64_t r = 0; r < pending; r++)
		{
			double		v = svc_load_f64(staged_cptr(buf, dims, (int64_t) r) + 8 * j);

			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
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

/*
 * Rescale column j's running mean and m2 from scale exponent from to to:
 * exact (powers of two) but for values that fall below the normal range,
 * which are negligible beside the column's new largest value.
 */
static void
rescale_stats(double *mean, double *m2, int from, int to)
{
	if (from != to)
	{
		*mean = ldexp(*mean, from - to);
		*m2 = ldexp(*m2, 2 * (from - to));
	}
}

/*
 * One column's running statistics: Welford's mean and sum of squared
 * deviations of the values scaled by 2^-exp, where exp follows the
 * column's largest magnitude (svc_scale_exponent), so that no square
 * overflows; for ordinary data exp stays 0 and nothing is scaled.
 */
typedef struct ColumnStats
{
	double		mean;
	double		m2;
	double		lo;
	double		hi;
	int			exp;
} ColumnStats;

static void
column_load(const uint8_t *buf, int32_t dims, int32_t j, ColumnStats *c)
{
	c->mean = svc_load_f64(stat_cptr(buf, dims, STAT_MEAN) + 8 * j);
	c->m2 = svc_load_f64(stat_cptr(buf, dims, STAT_M2) + 8 * j);
	c->lo = svc_load_f64(stat_cptr(buf, dims, STAT_MIN) + 8 * j);
	c->hi = svc_load_f64(stat_cptr(buf, dims, STAT_MAX) + 8 * j);
	c->exp = stat_exp(buf, dims, j);
}

static void
column_store(uint8_t *buf, int32_t dims, int32_t j, const ColumnStats *c)
{
	svc_store_f64(stat_ptr(buf, dims, STAT_MEAN) + 8 * j, c->mean);
	svc_store_f64(stat_ptr(buf, dims, STAT_M2) + 8 * j, c->m2);
	svc_store_f64(stat_ptr(buf, dims, STAT_MIN) + 8 * j, c->lo);
	svc_store_f64(stat_ptr(buf, dims, STAT_MAX) + 8 * j, c->hi);
	set_stat_exp(buf, dims, j, c->exp);
}

/* Welford's update by value x, the n-th of the column (inv = 1 / n). */
static void
column_add(ColumnStats *c, double x, double inv)
{
	double		maxabs;
	int			e_new;
	double		v,
				delta;

	if (x < c->lo)
		c->lo = x;
	if (x > c->hi)
		c->hi = x;

	/*
	 * fmax, svc_scale_exponent and ldexp as calls cost much; for ordinary
	 * magnitudes the exponent is 0 and the value stays as it is, which is
	 * what the calls would give.
	 */
	maxabs = fabs(c->lo) > fabs(c->hi) ? fabs(c->lo) : fabs(c->hi);
	e_new = svc_scale_plain(maxabs) ? 0 : svc_scale_exponent(maxabs);
	rescale_stats(&c->mean, &c->m2, c->exp, e_new);
	c->exp = e_new;
	v = e_new == 0 ? x : ldexp(x, -e_new);
	delta = v - c->mean;
	c->mean += delta * inv;
	c->m2 += delta * (v - c->mean);
}

/*
 * Column j's statistics with the staged rows added, the statistics of
 * every row counted (total of them), without changing the state.
 */
static void
column_current(const uint8_t *buf, int32_t dims, int32_t j, int64_t total, ColumnStats *c)
{
	int64_t		pending = stats_pending(buf, dims);

	column_load(buf, dims, j, c);
	for (int64_t r = 0; r < pending; r++)
		column_add(c, svc_load_f64(staged_cptr(buf, dims, r) + 8 * j),
				   staged_inv(total, pending, r));
}

/*
 * Add the staged rows to the statistics, column by column: each column's
 * updates happen in the order the rows came, as they would one row at a
 * time, so the bytes are the same; but a column's statistics stay in
 * registers across the rows, and the scale checks of a column whose
 * values stay ordinary are made once for the lot.  The rows were counted
 * (total is the count of every row, the staged ones the last).
 */
static void
stats_flush(uint8_t *buf, int32_t dims, int64_t total)
{
	int64_t		pending = stats_pending(buf, dims);
	double		inv[STAGE_ROWS];
	double		mean[STAGE_COLUMNS],
				m2[STAGE_COLUMNS],
				lo[STAGE_COLUMNS],
				hi[STAGE_COLUMNS];

	if (pending == 0)
		return;
	for (int64_t r = 0; r < pending; r++)
		inv[r] = staged_inv(total, pending, r);
	/* unsigned indices: with -fwrapv, signed ones kept the loops scalar */
	for (size_t j0 = 0; j0 < (size_t) dims; j0 += STAGE_COLUMNS)
	{
		size_t		width = (size_t) dims - j0 < STAGE_COLUMNS ? (size_t) dims - j0 : STAGE_COLUMNS;
		bool		plain = true;
		uint8_t    *pmin = stat_ptr(buf, dims, STAT_MIN) + 8 * j0;
		uint8_t    *pmax = stat_ptr(buf, dims, STAT_MAX) + 8 * j0;
		uint8_t    *pmean = stat_ptr(buf, dims, STAT_MEAN) + 8 * j0;
		uint8_t    *pm2 = stat_ptr(buf, dims, STAT_M2) + 8 * j0;

		/*
		 * Row by row across the columns, the loops' elementwise operations
		 * vectorised: the range first, then, if every column's values stay
		 * ordinary (exponent 0 before and after), Welford's update as
		 * column_add makes it without scaling.
		 */
		for (size_t k = 0; k < width; k++)
		{
			lo[k] = svc_load_f64(pmin + 8 * k);
			hi[k] = svc_load_f64(pmax + 8 * k);
		}
		for (int64_t r = 0; r < pending; r++)
		{
			const uint8_t *row = staged_cptr(buf, dims, r) + 8 * j0;

			for (size_t k = 0; k < width; k++)
			{
				double		x = svc_load_f64(row + 8 * k);

				lo[k] = x < lo[k] ? x : lo[k];
				hi[k] = x > hi[k] ? x : hi[k];
			}
		}
		for (size_t k = 0; k < width; k++)
		{
			double		maxabs = fabs(lo[k]) > fabs(hi[k]) ? fabs(lo[k]) : fabs(hi[k]);

			plain &= stat_exp(buf, dims, (int32_t) (j0 + k)) == 0 && svc_scale_plain(maxabs);
		}
		if (!plain)
		{
			/* the general update, column by column, in the rows' order */
			for (size_t k = 0; k < width; k++)
			{
				ColumnStats c;

				column_load(buf, dims, (int32_t) (j0 + k), &c);
				for (int64_t r = 0; r < pending; r++)
					column_add(&c, svc_load_f64(staged_cptr(buf, dims, r) + 8 * (j0 + k)),
							   inv[r]);
				column_store(buf, dims, (int32_t) (j0 + k), &c);
			}
			continue;
		}
		for (size_t k = 0; k < width; k++)
		{
			mean[k] = svc_load_f64(pmean + 8 * k);
			m2[k] = svc_load_f64(pm2 + 8 * k);
		}
		for (int64_t r = 0; r < pending; r++)
		{
			const uint8_t *row = staged_cptr(buf, dims, r) + 8 * j0;
			double		w = inv[r];

			for (size_t k = 0; k < width; k++)
			{
				double		v = svc_load_f64(row + 8 * k);
				double		delta = v - mean[k];

				mean[k] += delta * w;
				m2[k] += delta * (v - mean[k]);
			}
		}
		for (size_t k = 0; k < width; k++)
		{
			svc_store_f64(pmean + 8 * k, mean[k]);
			svc_store_f64(pm2 + 8 * k, m2[k]);
			svc_store_f64(pmin + 8 * k, lo[k]);
			svc_store_f64(pmax + 8 * k, hi[k]);
		}
	}
	svc_store_u64(stat_ptr(buf, dims, STAT_PENDING), 0);
}

/*
 * A new row for the statistics, the total-th counted: staged, and the
 * statistics brought up to date once STAGE_ROWS rows wait.
 */
static void
stats_add(uint8_t *buf, int32_t dims, int64_t total, const double *row)
{
	int64_t		pending = stats_pending(buf, dims);
	uint8_t    *dst = stat_ptr(buf, dims, STAT_STAGE + (int) pending);

	for (size_t j = 0; j < (size_t) dims; j++)
		svc_store_f64(dst + 8 * j, row[j]);
	svc_store_u64(stat_ptr(buf, dims, STAT_PENDING), (uint64_t) (pending + 1));
	if (pending + 1 == STAGE_ROWS)
		stats_flush(buf, dims, total);
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
	stats_add(buf, dims, seen + 1 + lab_seen_total(buf), row);
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
	stats_add(buf, dims, svc_state_seen(buf) + seen + 1, row);
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
	stats_flush(a, dims, stat_n_a);
	load_rng(a, &rng);
	kept = merge_reservoir(row_ptr(a, dims, 0), kept_a, seen_a, row_cptr(b, dims, 0), kept_b,
						   seen_b, (size_t) 8 * dims, opt_a.sample, &rng);
	/* the labelled rows likewise, in their own reservoir */
	lab_kept = merge_reservoir(lab_ptr(a, dims, 0), svc_state_lab_kept(a), lab_seen_total(a),
							   lab_cptr(b, dims, 0), svc_state_lab_kept(b), lab_seen_total(b),
							   (size_t) 8 * (dims + 1), opt_a.label_sample, &rng);
	store_rng(a, &rng);

	/*
	 * Chan et al.'s exact merge of means and squared deviations, both
	 * sides first brought to the scale of the merged largest magnitude;
	 * the statistics are of every row, labelled or not.
	 */
	for (int32_t j = 0; j < dims && stat_n_b > 0; j++)
	{
		double		n_a = (double) stat_n_a,
					n_b = (double) stat_n_b,
					n = n_a + n_b;
		ColumnStats ca,
					cb;
		double		lo,
					hi;
		int			e;
		double		delta,
					m2;

		column_load(a, dims, j, &ca);
		column_current(b, dims, j, stat_n_b, &cb);
		lo = cb.lo < ca.lo ? cb.lo : ca.lo;
		hi = cb.hi > ca.hi ? cb.hi : ca.hi;
		e = svc_scale_exponent(fmax(fabs(lo), fabs(hi)));
		rescale_stats(&ca.mean, &ca.m2, ca.exp, e);
		rescale_stats(&cb.mean, &cb.m2, cb.exp, e);
		delta = cb.mean - ca.mean;
		m2 = ca.m2 + cb.m2 + delta * delta * n_a * n_b / n;
		svc_store_f64(stat_ptr(a, dims, STAT_MEAN) + 8 * j, ca.mean + delta * n_b / n);
		svc_store_f64(stat_ptr(a, dims, STAT_M2) + 8 * j, m2);
		svc_store_f64(stat_ptr(a, dims, STAT_MIN) + 8 * j, lo);
		svc_store_f64(stat_ptr(a, dims, STAT_MAX) + 8 * j, hi);
		set_stat_exp(a, dims, j, e);
	}
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
		for (int32_t j = 0; j < dims; j++)
		{
			double		s = 0.0,
						ss = 0.0,
						lo = HUGE_VAL,
						hi = -HUGE_VAL,
						m;
			ColumnStats c;
			int			e;

			column_current(buf, dims, j, total, &c);
			e = c.exp;

			for (int64_t i = 0; i < total; i++)
			{
				double		v = ldexp(i < kept ? rows[(size_t) i * dims + j] :
									  lab[(size_t) (i - kept) * lab_width + j], -e);

				s += v;
				lo = v < lo ? v : lo;
				hi = v > hi ? v : hi;
			}
			m = s / (double) total;
			for (int64_t i = 0; i < total; i++)
			{
				double		t = ldexp(i < kept ? rows[(size_t) i * dims + j] :
									  lab[(size_t) (i - kept) * lab_width + j], -e) - m;

				ss += t * t;
			}
			mean[j] = ldexp(m, e);
			stddev[j] = ldexp(sqrt(ss / (double) total), e);
			min[j] = ldexp(lo, e);
			max[j] = ldexp(hi, e);
		}
		return;
	}
	for (int32_t j = 0; j < dims; j++)
	{
		ColumnStats c;

		column_current(buf, dims, j, total, &c);
		mean[j] = ldexp(c.mean, c.exp);
		stddev[j] = total > 0 ? ldexp(sqrt(c.m2 / (double) total), c.exp) : 0.0;
		min[j] = c.lo;
		max[j] = c.hi;
	}
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
