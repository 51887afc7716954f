/*
 * test_state.c - the aggregate state: reservoir, statistics, merge, checks
 */
#include "bytes.h"
#include "options.h"
#include "state.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Build a state of the given sample size and feed it rows first..last. */
static uint8_t *
state_with_rows(int64_t sample, int64_t first, int64_t last, size_t *len)
{
	SvcOptions	opt;
	int64_t		cap = 4;
	uint8_t    *buf;

	svc_options_default(&opt);
	opt.sample = sample;
	buf = malloc(svc_state_size(2, cap));
	svc_state_init(buf, 2, cap, &opt);
	for (int64_t i = first; i <= last; i++)
	{
		double		row[2] = {(double) i, (double) (i % 7)};

		if (!svc_state_add(buf, row))
		{
			int64_t		next = svc_state_next_capacity(buf);
			uint8_t    *grown = malloc(svc_state_size(2, next));

			svc_state_copy(buf, grown, next);
			free(buf);
			buf = grown;
			svc_state_add(buf, row);
		}
	}
	*len = svc_state_size(2, svc_state_capacity(buf));
	return buf;
}

/* A state of 2 columns fed rows[n][2] one by one (room for all). */
static uint8_t *
state_of(const double *rows, int n, int64_t sample)
{
	SvcOptions	opt;
	uint8_t    *buf;

	svc_options_default(&opt);
	opt.sample = sample;
	buf = malloc(svc_state_size(2, sample));
	svc_state_init(buf, 2, sample, &opt);
	for (int i = 0; i < n; i++)
		svc_state_add(buf, rows + 2 * i);
	return buf;
}

/*
 * Rows at magnitude 1e300 and 1e-300 (their squares overflow and
 * underflow): the state takes them, checks, and its statistics are the
 * statistics of the same rows at magnitude 1 times the magnitude; merged
 * from parts of different scales they are the same.
 */
static void
test_extreme_magnitudes(void)
{
	static const double mags[] = {1e300, 1e-300, 0x1p1000, 0x1p-1000};
	double		base[40];
	SvcError	err;

	for (int i = 0; i < 20; i++)
	{
		base[2 * i] = (double) (i % 5) - 1.5;
		base[2 * i + 1] = 0.5 + (double) (i % 3);
	}
	for (size_t k = 0; k < sizeof(mags) / sizeof(mags[0]); k++)
	{
		double		x[40],
					rows[80],
					st[8],
					ref[8];
		uint8_t    *s,
				   *a,
				   *b,
				   *one;

		for (int i = 0; i < 40; i++)
			x[i] = base[i] * mags[k];
		/* sample 10 < 20 rows: the running statistics are what is returned */
		s = state_of(x, 20, 10);
		one = state_of(base, 20, 10);
		CHECK(svc_state_check(s, svc_state_size(2, 10), &err) == SVC_OK,
			  "state of rows at %g checks: %s", mags[k], err.detail);
		svc_state_extract(s, rows, st, st + 2, st + 4, st + 6);
		svc_state_extract(one, rows, ref, ref + 2, ref + 4, ref + 6);
		for (int j = 0; j < 8; j++)
			CHECK(isfinite(st[j]) && st[j] != 0 && fabs(st[j] / mags[k] - ref[j]) <= 1e-12 * fabs(ref[j]),
				  "statistic %d at %g is the one at 1 scaled (%g vs %g)", j, mags[k], st[j] / mags[k], ref[j]);

		/* a direct computation in long double */
		{
			long double sum = 0, ss = 0, m;

			for (int i = 0; i < 20; i++)
				sum += (long double) base[2 * i];
			m = sum / 20;
			for (int i = 0; i < 20; i++)
				ss += ((long double) base[2 * i] - m) * ((long double) base[2 * i] - m);
			CHECK(fabs(st[2] / mags[k] - (double) sqrtl(ss / 20)) <= 1e-12,
				  "stddev at %g equals a direct computation", mags[k]);
		}

		/* merge: a has rows at magnitude 1, b the extreme rows */
		/* sample 10 of 20: the merged running statistics are returned */
		a = malloc(svc_state_size(2, 10));
		{
			SvcOptions	opt;

			svc_options_default(&opt);
			opt.sample = 10;
			svc_state_init(a, 2, 10, &opt);
			for (int i = 0; i < 10; i++)
				svc_state_add(a, base + 2 * i);
			b = state_of(x + 20, 10, 10);
			svc_state_set_stream(b, 1);
			CHECK(svc_state_merge(a, b, &err) == SVC_OK, "merge of states of different scales");
			CHECK(svc_state_check(a, svc_state_size(2, 10), &err) == SVC_OK,
				  "merged state of different scales checks: %s", err.detail);
			/* and the reverse order gives the same statistics */
			{
				uint8_t    *c = state_of(x + 20, 10, 10);
				uint8_t    *d = state_of(base, 10, 10);
				double		s1[8],
							s2[8],
							direct[8];

				CHECK(svc_state_merge(c, d, &err) == SVC_OK, "reverse merge");
				/* compare the running statistics: make both look sampled */
				for (int j = 0; j < 2; j++)
				{
					long double sum = 0, ss = 0, m;

					for (int i = 0; i < 20; i++)
					{
						double		v = i < 10 ? base[2 * i + j] : x[2 * i + j];

						sum += v;
					}
					m = sum / 20;
					for (int i = 0; i < 20; i++)
					{
						double		v = i < 10 ? base[2 * i + j] : x[2 * i + j];

						ss += ((long double) v - m) * ((long double) v - m);
					}
					direct[j] = (double) m;
					direct[2 + j] = (double) sqrtl(ss / 20);
				}
				svc_state_extract(a, rows, s1, s1 + 2, s1 + 4, s1 + 6);
				svc_state_extract(c, rows, s2, s2 + 2, s2 + 4, s2 + 6);
				for (int j = 0; j < 4; j++)
					CHECK(fabs(s1[j] - direct[j]) <= 1e-12 * fabs(direct[j]) + 1e-300 &&
						  fabs(s2[j] - direct[j]) <= 1e-12 * fabs(direct[j]) + 1e-300,
						  "merged statistic %d at %g equals a direct computation (%g, %g vs %g)",
						  j, mags[k], s1[j], s2[j], direct[j]);
				free(c);
				free(d);
			}
		}
		free(a);
		free(b);
		free(s);
		free(one);
	}
}

/* The state reads the sample size at SVC_OPTIONS_WIRE_SAMPLE unencoded. */
static void
test_sample_offset(void)
{
	SvcOptions	opt;
	uint8_t		wire[SVC_OPTIONS_WIRE_SIZE];

	svc_options_default(&opt);
	opt.sample = INT64_C(0x0102030405);
	svc_options_encode(&opt, wire);
	CHECK(svc_load_u64(wire + SVC_OPTIONS_WIRE_SAMPLE) == (uint64_t) opt.sample,
		  "the encoded options hold the sample at SVC_OPTIONS_WIRE_SAMPLE");
}

static void
test_fill_and_stats(void)
{
	size_t		len;
	uint8_t    *s = state_with_rows(100, 1, 50, &len);
	SvcError	err;
	double	   *rows = malloc(sizeof(double) * 2 * 50 * 2);
	double		mean[2],
				sd[2],
				lo[2],
				hi[2];

	CHECK(svc_state_check(s, len, &err) == SVC_OK, "a built state checks: %s", err.message);
	CHECK(svc_state_kept(s) == 50 && svc_state_seen(s) == 50, "below the sample every row is kept");
	CHECK(svc_state_capacity(s) >= 50 && svc_state_capacity(s) <= 100, "capacity grew within the sample");
	svc_state_extract(s, rows, mean, sd, lo, hi);
	CHECK(fabs(mean[0] - 25.5) < 1e-12, "mean of 1..50");
	CHECK(fabs(sd[0] - sqrt((50.0 * 50.0 - 1) / 12.0)) < 1e-9, "population sd of 1..50");
	CHECK(lo[0] == 1 && hi[0] == 50, "min and max");
	CHECK(rows[0] == 1 && rows[2 * 49] == 50, "rows come back sorted");
	free(rows);
	free(s);
}

static void
test_reservoir_bounded_and_uniform(void)
{
	/* 200 runs of a 10-row reservoir over 100 rows: each row ~ 20 times */
	int			hits[100] = {0};
	int			runs = 200;

	for (int r = 0; r < runs; r++)
	{
		SvcOptions	opt;
		uint8_t    *buf;
		double	   *rows = malloc(sizeof(double) * 2 * 10 * 2);
		double		st[8];

		svc_options_default(&opt);
		opt.sample = 10;
		opt.seed = (uint64_t) r;
		buf = malloc(svc_state_size(2, 10));
		svc_state_init(buf, 2, 10, &opt);
		for (int i = 0; i < 100; i++)
		{
			double		row[2] = {(double) i, 0};

			svc_state_add(buf, row);
		}
		if (r == 0)
		{
			CHECK(svc_state_kept(buf) == 10 && svc_state_seen(buf) == 100,
				  "kept stays at the sample size");
		}
		svc_state_extract(buf, rows, st, st + 2, st + 4, st + 6);
		if (r == 0)
			CHECK(fabs(st[0] - 49.5) < 1e-9, "statistics cover every row, not just the sample");
		for (int i = 0; i < 10; i++)
			hits[(int) rows[2 * i]]++;
		free(rows);
		free(buf);
	}
	{
		int			lo = runs,
					hi = 0;

		for (int i = 0; i < 100; i++)
		{
			lo = hits[i] < lo ? hits[i] : lo;
			hi = hits[i] > hi ? hits[i] : hi;
		}
		/* expected 20 per row; binomial sd ~4.2 */
		CHECK(lo >= 4 && hi <= 40, "reservoir inclusion is near uniform (min %d, max %d)", lo, hi);
	}
}

static void
test_merge(void)
{
	size_t		la,
				lb,
				ls;
	uint8_t    *a = state_with_rows(1000, 1, 30, &la);
	uint8_t    *b = state_with_rows(1000, 31, 80, &lb);
	uint8_t    *serial = state_with_rows(1000, 1, 80, &ls);
	int64_t		need = svc_state_merged_kept(a, b);
	uint8_t    *m = malloc(svc_state_size(2, need));
	SvcError	err;
	double	   *r1 = malloc(sizeof(double) * 2 * 80 * 2),
			   *r2 = malloc(sizeof(double) * 2 * 80 * 2);
	double		s1[8],
				s2[8];

	svc_state_copy(a, m, need);
	CHECK(svc_state_merge(m, b, &err) == SVC_OK, "merge succeeds");
	CHECK(svc_state_check(m, svc_state_size(2, need), &err) == SVC_OK, "merged state checks");
	CHECK(svc_state_kept(m) == 80 && svc_state_seen(m) == 80, "merge below the sample keeps all");
	svc_state_extract(m, r1, s1, s1 + 2, s1 + 4, s1 + 6);
	svc_state_extract(serial, r2, s2, s2 + 2, s2 + 4, s2 + 6);
	CHECK(memcmp(r1, r2, sizeof(double) * 160) == 0 && memcmp(s1, s2, sizeof(s1)) == 0,
		  "merged = serial, bit for bit, when every row is kept");
	free(m);

	{
		/* a full merge: sample 20 of 30 + 50 rows; a's share ~ 30/80 */
		size_t		l1,
					l2;
		int			from_a = 0,
					total = 0;

		for (int r = 0; r < 100; r++)
		{
			uint8_t    *x = state_with_rows(20, 1, 30, &l1);
			uint8_t    *y = state_with_rows(20, 31, 80, &l2);
			uint8_t    *z;
			double		rows[2 * 20 * 2],
						st[8];

			/* vary the merge stream */
			x[40] ^= (uint8_t) r;
			z = malloc(svc_state_size(2, 20));
			svc_state_copy(x, z, 20);
			svc_state_merge(z, y, &err);
			CHECK(svc_state_kept(z) == 20 && svc_state_seen(z) == 80, "full merge keeps the sample size");
			svc_state_extract(z, rows, st, st + 2, st + 4, st + 6);
			for (int i = 0; i < 20; i++)
				from_a += rows[2 * i] <= 30;
			total += 20;
			free(x);
			free(y);
			free(z);
		}
		CHECK(fabs((double) from_a / total - 30.0 / 80.0) < 0.05,
			  "merged sample draws from each side in proportion (%.3f)", (double) from_a / total);
	}
	{
		SvcOptions	opt;
		uint8_t    *c = malloc(svc_state_size(3, 4));

		svc_options_default(&opt);
		opt.sample = 1000;
		svc_state_init(c, 3, 4, &opt);
		CHECK(svc_state_merge(a, c, &err) == SVC_ERR_DIMENSION, "merging different dims fails");
		free(c);
	}
	{
		/* the same dims, other options: refused, and a is left as it was */
		SvcOptions	opt;
		uint8_t    *c = malloc(svc_state_size(2, 4));
		uint8_t    *before = malloc(la);

		svc_options_default(&opt);
		opt.sample = 1000;
		opt.budget = 7;
		svc_state_init(c, 2, 4, &opt);
		/* the header, statistics and kept rows; the rest is unused room */
		size_t		used = svc_state_size(2, svc_state_kept(a));

		memcpy(before, a, used);
		CHECK(svc_state_merge(a, c, &err) == SVC_ERR_INVALID_PARAMETER &&
			  strstr(err.message, "different options") != NULL,
			  "merging states of different options fails: %s", err.message);
		CHECK(memcmp(before, a, used) == 0, "a refused merge changes nothing");
		free(before);
		free(c);
	}
	free(a);
	free(b);
	free(serial);
	free(r1);
	free(r2);
}

static void
test_check_rejects_damage(void)
{
	size_t		len;
	uint8_t    *s = state_with_rows(100, 1, 20, &len);
	SvcError	err;
	uint8_t    *copy = malloc(len);

	CHECK(svc_state_check(s, len - 1, &err) == SVC_ERR_CORRUPT, "truncated state rejected");
	CHECK(svc_state_check(s, 10, &err) == SVC_ERR_CORRUPT, "tiny state rejected");
	memcpy(copy, s, len);
	copy[0] = 'X';
	CHECK(svc_state_check(copy, len, &err) == SVC_ERR_CORRUPT, "bad magic rejected");
	memcpy(copy, s, len);
	copy[24] = 0xFF;			/* kept far beyond capacity */
	CHECK(svc_state_check(copy, len, &err) == SVC_ERR_CORRUPT, "bad counts rejected");
	{
		/* every single-byte flip gives OK or CORRUPT, never a crash */
		int			ok = 0;

		for (size_t i = 0; i < len; i++)
		{
			memcpy(copy, s, len);
			copy[i] ^= 0x5A;
			ok += svc_state_check(copy, len, &err) == SVC_OK;
		}
		CHECK(ok < (int) len, "byte flips are caught somewhere (%d of %zu pass)", ok, len);
	}
	free(copy);
	free(s);
}

/*
 * One damage per rejection of svc_state_check, each aimed at that check
 * alone: the state must be refused with that check's detail, so a check
 * that goes missing (and lets a later one, or none, catch the damage)
 * fails here.
 */
typedef enum StateField
{
	SF_VERSION, SF_DIMS, SF_BUDGET, SF_SEEN_LOW, SF_SEEN_HIGH, SF_CAPACITY,
	SF_LENGTH, SF_MEAN_NAN, SF_M2_NEGATIVE, SF_M2_HUGE, SF_MIN_ABOVE_MAX, SF_EMPTY_MEAN,
	SF_ROW_NAN, SF_EXP, SF_PENDING, SF_STAGED_NAN
} StateField;

static void
expect_state_rejected(StateField field, const char *detail)
{
	size_t		len;
	uint8_t    *s = state_with_rows(100, 1, field == SF_EMPTY_MEAN ? 0 : 20, &len);
	uint8_t    *copy = calloc(1, len + 8);
	size_t		copy_len = len;
	/*
	 * Per column of 2: mean, m2, min, max, exp, the staged count (first
	 * column), 16 staged rows; then the sample.  20 rows: 4 staged.
	 */
	size_t		stats = SVC_STATE_HEADER_SIZE;
	size_t		sample = stats + 8 * 2 * (6 + 16);
	SvcError	err;

	memcpy(copy, s, len);
	CHECK(svc_state_check(copy, len, &err) == SVC_OK, "undamaged state checks");
	switch (field)
	{
		case SF_VERSION:
			copy[4] = 99;
			break;
		case SF_DIMS:
			svc_store_u32(copy + 8, 0);
			break;
		case SF_BUDGET:
			svc_store_u32(copy + 72, 0);	/* options start at 72, budget first */
			break;
		case SF_SEEN_LOW:
			svc_store_u64(copy + 32, 5);	/* seen below kept */
			break;
		case SF_SEEN_HIGH:
			svc_store_u64(copy + 32, 21);	/* rows dropped below the sample */
			break;
		case SF_CAPACITY:
			svc_store_u64(copy + 16, 1000); /* more than the sample */
			break;
		case SF_LENGTH:
			copy_len = len + 8;
			break;
		case SF_MEAN_NAN:
			svc_store_f64(copy + stats, NAN);
			break;
		case SF_M2_NEGATIVE:
			svc_store_f64(copy + stats + 16, -1.0);
			break;
		case SF_M2_HUGE:		/* 1e300 > 1e10 * 1e200 * 20 rows */
			svc_store_f64(copy + stats + 16, 1e300);
			break;
		case SF_MIN_ABOVE_MAX:
			svc_store_f64(copy + stats + 32, 1e6);
			break;
		case SF_EMPTY_MEAN:
			svc_store_f64(copy + stats, 1.0);
			break;
		case SF_EXP:
			svc_store_u64(copy + stats + 64, 5);	/* column 0's exponent */
			break;
		case SF_ROW_NAN:
			svc_store_f64(copy + sample + 8 * 2 * 7 + 8, NAN);
			break;
		case SF_PENDING:
			svc_store_u64(copy + stats + 80, 16);
			break;
		case SF_STAGED_NAN:
			svc_store_f64(copy + stats + 96 + 16 * 3 + 8, NAN);	/* staged row 3 */
			break;
	}
	memset(&err, 0, sizeof(err));
	CHECK(svc_state_check(copy, copy_len, &err) == SVC_ERR_CORRUPT &&
		  strstr(err.detail, detail) != NULL,
		  "damage %d refused with \"%s\" (got \"%s\")", (int) field, detail, err.detail);
	free(copy);
	free(s);
}

static void
test_check_names_each_damage(void)
{
	expect_state_rejected(SF_VERSION, "version is not supported");
	expect_state_rejected(SF_DIMS, "dimension is out of range");
	expect_state_rejected(SF_BUDGET, "stored options are invalid");
	expect_state_rejected(SF_SEEN_LOW, "row counts are inconsistent");
	expect_state_rejected(SF_SEEN_HIGH, "row counts are inconsistent");
	expect_state_rejected(SF_CAPACITY, "row counts are inconsistent");
	expect_state_rejected(SF_LENGTH, "length does not match");
	expect_state_rejected(SF_MEAN_NAN, "scaling statistics are not finite");
	expect_state_rejected(SF_M2_NEGATIVE, "scaling statistics are not finite");
	expect_state_rejected(SF_M2_HUGE, "scaling statistics are not finite");
	expect_state_rejected(SF_MIN_ABOVE_MAX, "minimum and maximum are inconsistent");
	expect_state_rejected(SF_EMPTY_MEAN, "empty state are not empty");
	expect_state_rejected(SF_ROW_NAN, "sampled row is not finite");
	expect_state_rejected(SF_EXP, "scale of the statistics does not match");
	expect_state_rejected(SF_PENDING, "count of staged rows is out of range");
	expect_state_rejected(SF_STAGED_NAN, "staged row is not finite");
}

/*
 * A model that keeps its rows with the window "oldest": the state keeps
 * the newest sample rows, read back oldest first; with "reservoir" it
 * keeps its uniform reservoir.
 */
static void
test_ring_for_oldest_window(void)
{
	for (int w = 0; w < 2; w++)
	{
		SvcOptions	opt;
		uint8_t    *buf;
		double		rows[2 * 5];
		bool		last = true;

		svc_options_default(&opt);
		opt.solver = SVC_SOLVER_INCREMENTAL;
		opt.keep_rows = 1;
		opt.window = w == 0 ? SVC_WINDOW_OLDEST : SVC_WINDOW_RESERVOIR;
		opt.sample = 5;
		buf = malloc(svc_state_size(2, 5));
		svc_state_init(buf, 2, 5, &opt);
		for (int i = 1; i <= 23; i++)
		{
			double		row[2] = {(double) i, (double) -i};

			svc_state_add(buf, row);
			if (i == 3)
			{
				svc_state_rows_stored(buf, rows);
				CHECK(rows[0] == 1 && rows[2] == 2 && rows[4] == 3,
					  "window %d: before it fills, the rows in arrival order", w);
			}
		}
		svc_state_rows_stored(buf, rows);
		for (int i = 0; i < 5; i++)
			last &= rows[2 * i] == 19 + i && rows[2 * i + 1] == -(19 + i);
		CHECK(svc_state_kept(buf) == 5 && svc_state_seen(buf) == 23,
			  "window %d: 5 rows kept of 23 seen", w);
		if (w == 0)
			CHECK(last, "oldest: the state keeps the last 5 rows, oldest first");
		else
			CHECK(!last, "reservoir: the state keeps a uniform sample, not the last rows");
		free(buf);
	}
}

/*
 * The statistics of rows staged and added STAGE_ROWS at a time are those of
 * Welford's update one row at a time, to the last bit: a model's scaling
 * must not depend on where a scan stops.  The rows are more than the
 * sample (so the running statistics are used), at every count from 1 to
 * 70 (staged rows and flushed ones), and after a merge of two such states.
 */
static void
test_staged_stats_exact(void)
{
	for (int64_t n = 1; n <= 70; n++)
	{
		size_t		len;
		uint8_t    *s = state_with_rows(5, 1, n, &len);
		double		rows[2 * 10],
					mean[2],
					sd[2],
					lo[2],
					hi[2];
		bool		exact = true;

		svc_state_extract(s, rows, mean, sd, lo, hi);
		for (int j = 0; j < 2; j++)
		{
			double		m = 0.0,
						m2 = 0.0;

			for (int64_t i = 1; i <= n; i++)
			{
				double		v = j == 0 ? (double) i : (double) (i % 7);
				double		delta = v - m;

				m += delta * (1.0 / (double) i);
				m2 += delta * (v - m);
			}
			if (n > 5)
				exact &= mean[j] == m && sd[j] == sqrt(m2 / (double) n);
			exact &= lo[j] == (j == 0 ? 1.0 : (n >= 7 ? 0.0 : 1.0));
		}
		CHECK(exact, "staged statistics of %lld rows equal Welford's row by row", (long long) n);
		CHECK(svc_state_check(s, len, &(SvcError) {0}) == SVC_OK, "state of %lld rows checks",
			  (long long) n);
		free(s);
	}
}

/*
 * The same with a column whose magnitude jumps to 1e300 at row 20, in the
 * middle of a staged batch: the flush takes the scaling path, and must
 * still give the row-by-row update with its rescaling, bit for bit.
 */
static double
jump_value(int64_t i)
{
	return i < 20 ? (double) (i % 7) : 1e300 * (double) (i % 5 + 1);
}

static void
test_staged_stats_rescaled_exact(void)
{
	SvcOptions	opt;

	svc_options_default(&opt);
	opt.sample = 5;
	for (int64_t n = 18; n <= 50; n++)
	{
		uint8_t    *s = malloc(svc_state_size(1, 5));
		double		rows[10],
					mean,
					sd,
					lo,
					hi;
		double		m = 0.0,
					m2 = 0.0,
					rlo = HUGE_VAL,
					rhi = -HUGE_VAL;
		int			e = 0;

		svc_state_init(s, 1, 5, &opt);
		for (int64_t i = 1; i <= n; i++)
		{
			double		x = jump_value(i);
			double		v,
						delta;
			int			e_new;

			svc_state_add(s, &x);
			/* the reference: one row at a time, rescaled when the scale moves */
			rlo = x < rlo ? x : rlo;
			rhi = x > rhi ? x : rhi;
			e_new = svc_scale_exponent(fmax(fabs(rlo), fabs(rhi)));
			if (e_new != e)
			{
				m = ldexp(m, e - e_new);
				m2 = ldexp(m2, 2 * (e - e_new));
				e = e_new;
			}
			v = ldexp(x, -e);
			delta = v - m;
			m += delta * (1.0 / (double) i);
			m2 += delta * (v - m);
		}
		svc_state_extract(s, rows, &mean, &sd, &lo, &hi);
		CHECK(mean == ldexp(m, e) && sd == ldexp(sqrt(m2 / (double) n), e) &&
			  lo == rlo && hi == rhi,
			  "rescaled staged statistics of %lld rows equal the row-by-row update",
			  (long long) n);
		free(s);
	}
}

int
main(void)
{
	test_sample_offset();
	test_fill_and_stats();
	test_staged_stats_exact();
	test_staged_stats_rescaled_exact();
	test_extreme_magnitudes();
	test_reservoir_bounded_and_uniform();
	test_merge();
	test_ring_for_oldest_window();
	test_check_rejects_damage();
	test_check_names_each_damage();
	return unit_summary("test_state");
}
