/*
 * test_state.c - the aggregate state: the sample and its independence of
 * the rows' order, its uniformity, the range and statistics, merges, checks
 */
#include "bytes.h"
#include "options.h"
#include "state.h"
#include "state_sample.h"
#include "unit.h"
#include "unit_state.h"
#include "unit_data.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *
new_state(int32_t dims, const SvcOptions *opt)
{
	return unit_state_new(dims, 4, opt, NULL, 0);
}

/* Build a state of the given sample size and feed it rows first..last. */
static uint8_t *
state_with_rows(int64_t sample, int64_t first, int64_t last, size_t *len)
{
	SvcOptions	opt;
	uint8_t    *buf;

	svc_options_default(&opt);
	opt.sample = sample;
	buf = new_state(2, &opt);
	for (int64_t i = first; i <= last; i++)
	{
		double		row[2] = {(double) i, (double) (i % 7)};

		buf = unit_state_add_checked(buf, row, 0);
	}
	*len = unit_state_len(buf);
	return buf;
}

/* A state of dims columns fed rows[n][dims] in the order given by perm (NULL: as they are). */
static uint8_t *
state_of(const double *rows, int64_t n, int32_t dims, const SvcOptions *opt, const int64_t *perm)
{
	uint8_t    *buf = new_state(dims, opt);

	for (int64_t i = 0; i < n; i++)
		buf = unit_state_add_checked(buf, rows + (size_t) (perm ? perm[i] : i) * dims, 0);
	return buf;
}

/* The rows to train on and the statistics, as a fit takes them (malloc'd rows). */
static double *
sample_of(const uint8_t *buf, int64_t *n, double *stats)
{
	int32_t		d = svc_state_dims(buf);
	int64_t		rows = svc_state_train_rows(buf);
	double	   *out = malloc(sizeof(double) * (size_t) (2 * rows + 1) * (size_t) d);
	SvcError	err;

	CHECK(svc_state_sample(&svc_env_malloc, buf, out, NULL, stats, stats + d, stats + 2 * d,
						   stats + 3 * d, &err) == SVC_OK, "sample: %s", err.message);
	*n = rows;
	return out;
}

/* b merged into a copy of a with room; a is freed, the merged state returned. */
static uint8_t *
merge_into(uint8_t *a, const uint8_t *b)
{
	int64_t		need = svc_state_merged_kept(a, b);
	int64_t		cap = need > svc_state_capacity(a) ? need : svc_state_capacity(a);
	int64_t		lab = svc_state_merged_lab_kept(a, b);
	int64_t		lab_cap = lab > svc_state_lab_capacity(a) ? lab : svc_state_lab_capacity(a);
	uint8_t    *m = calloc(1, svc_state_size_labelled(svc_state_dims(a), cap, lab_cap));
	SvcError	err;

	svc_state_copy_labelled(a, m, cap, lab_cap);
	CHECK(svc_state_merge(m, b, &err) == SVC_OK, "merge: %s", err.message);
	free(a);
	return m;
}

static void
shuffle(int64_t *perm, int64_t n, SvcRng *rng)
{
	for (int64_t i = 0; i < n; i++)
		perm[i] = i;
	for (int64_t i = n - 1; i > 0; i--)
	{
		int64_t		j = (int64_t) svc_rng_below(rng, (uint64_t) i + 1);
		int64_t		t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* The state reads the sample size and the seed from the encoded options. */
static void
test_option_offsets(void)
{
	SvcOptions	opt;
	uint8_t		wire[SVC_OPTIONS_WIRE_SIZE];

	svc_options_default(&opt);
	opt.sample = INT64_C(0x0102030405);
	opt.seed = UINT64_C(0x1122334455667788);
	svc_options_encode(&opt, wire);
	CHECK(svc_load_u64(wire + SVC_OPTIONS_WIRE_SAMPLE) == (uint64_t) opt.sample,
		  "the encoded options hold the sample at SVC_OPTIONS_WIRE_SAMPLE");
	CHECK(svc_load_u64(wire + SVC_OPTIONS_WIRE_SEED) == opt.seed,
		  "the encoded options hold the seed at SVC_OPTIONS_WIRE_SEED");
}

static void
test_fill_and_stats(void)
{
	size_t		len;
	uint8_t    *s = state_with_rows(100, 1, 50, &len);
	SvcError	err;
	int64_t		n;
	double		st[8];
	double	   *rows;

	CHECK(svc_state_check(s, len, &err) == SVC_OK, "a built state checks: %s", err.detail);
	CHECK(svc_state_kept(s) == 50 && svc_state_seen(s) == 50, "below the sample every row is kept");
	CHECK(svc_state_capacity(s) >= 50 && svc_state_capacity(s) <= 100, "capacity grew within the sample");
	rows = sample_of(s, &n, st);
	CHECK(n == 50, "50 rows to train on");
	CHECK(fabs(st[0] - 25.5) < 1e-12, "mean of 1..50");
	CHECK(fabs(st[2] - sqrt((50.0 * 50.0 - 1) / 12.0)) < 1e-9, "population sd of 1..50");
	CHECK(st[4] == 1 && st[6] == 50, "min and max");
	CHECK(rows[0] == 1 && rows[2 * 49] == 50, "rows come back sorted");
	free(rows);
	free(s);
}

/*
 * Repeated rows, -0.0 and 0.0: a row repeated is one slot with its count,
 * -0.0 is 0.0, and the rows to train on are every row while they fit.
 */
static void
test_duplicates_counted(void)
{
	SvcOptions	opt;
	uint8_t    *s;
	double		rows[6][2] = {{1, 2}, {-0.0, 3}, {1, 2}, {0.0, 3}, {1, 2}, {4, -0.0}};
	double		st[8];
	double	   *out;
	int64_t		n;
	SvcError	err;

	svc_options_default(&opt);
	opt.sample = 10;
	s = state_of(&rows[0][0], 6, 2, &opt, NULL);
	CHECK(svc_state_kept(s) == 3 && svc_state_seen(s) == 6,
		  "3 distinct rows of 6 (-0.0 and 0.0 are one): %lld", (long long) svc_state_kept(s));
	CHECK(svc_state_check(s, unit_state_len(s), &err) == SVC_OK, "checks: %s", err.detail);
	out = sample_of(s, &n, st);
	CHECK(n == 6 && out[0] == 0 && !signbit(out[0]) && out[2] == 0 && out[4] == 1 &&
		  out[10] == 4 && !signbit(out[11]), "every row back, -0.0 as 0.0, sorted");
	CHECK(st[4] == 0 && !signbit(st[4]) && st[7] == 3, "the range with 0.0 for -0.0");
	free(out);
	free(s);
}

/*
 * Rows at magnitude 1e300 and 1e-300 (their squares overflow and
 * underflow): the state takes them, checks, and its statistics are the
 * statistics of the same rows at magnitude 1 times the magnitude, both
 * when every row is kept and when the sample stands for them.
 */
static void
test_extreme_magnitudes(void)
{
	static const double mags[] = {1e300, 1e-300, 0x1p1000, 0x1p-1000};
	double		base[80];
	SvcError	err;

	for (int i = 0; i < 40; i++)
	{
		base[2 * i] = (double) (i % 5) - 1.5;
		base[2 * i + 1] = 0.5 + (double) (i % 3);
	}
	for (size_t k = 0; k < sizeof(mags) / sizeof(mags[0]); k++)
		for (int sample = 10; sample <= 100; sample += 90)
		{
			double		x[80],
						st[8],
						ref[8];
			double	   *r1,
					   *r2;
			int64_t		n1,
						n2;
			SvcOptions	opt;
			uint8_t    *s,
					   *one;

			svc_options_default(&opt);
			opt.sample = sample;
			for (int i = 0; i < 80; i++)
				x[i] = base[i] * mags[k];
			s = state_of(x, 40, 2, &opt, NULL);
			one = state_of(base, 40, 2, &opt, NULL);
			CHECK(svc_state_check(s, unit_state_len(s), &err) == SVC_OK,
				  "state of rows at %g checks: %s", mags[k], err.detail);
			r1 = sample_of(s, &n1, st);
			r2 = sample_of(one, &n2, ref);
			if (sample == 100)
				for (int j = 0; j < 8; j++)
					CHECK(isfinite(st[j]) && st[j] != 0 &&
						  fabs(st[j] / mags[k] - ref[j]) <= 1e-12 * fabs(ref[j]),
						  "every row kept: statistic %d at %g is the one at 1 scaled (%g vs %g)",
						  j, mags[k], st[j] / mags[k], ref[j]);
			else
			{
				/*
				 * Sampled (15 distinct rows for 10 places): other rows are
				 * sampled at another scale (their keys differ), so compare
				 * with the rows' own statistics, in long double.
				 */
				for (int j = 0; j < 2; j++)
				{
					long double sum = 0, ss = 0, m;

					for (int64_t i = 0; i < n1; i++)
						sum += (long double) r1[2 * i + j] / mags[k];
					m = sum / n1;
					for (int64_t i = 0; i < n1; i++)
						ss += ((long double) r1[2 * i + j] / mags[k] - m) *
							((long double) r1[2 * i + j] / mags[k] - m);
					(void) ss;
					CHECK(isfinite(st[j]) && isfinite(st[2 + j]) && st[2 + j] > 0 &&
						  st[4 + j] == ref[4 + j] * mags[k] && st[6 + j] == ref[6 + j] * mags[k],
						  "sampled: statistics of column %d at %g finite, the range every row's",
						  j, mags[k]);
				}
			}
			free(r1);
			free(r2);
			free(s);
			free(one);
		}
}

/*
 * Rows with many repeated ones: (x % 37, x % 11) for x drawn from 0..range
 * with -0.0 for some zeros, n of them.
 */
static double *
repeated_rows(int64_t n, int64_t range, uint64_t seed)
{
	double	   *x = malloc(sizeof(double) * 2 * (size_t) n);
	SvcRng		rng;

	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		v = (int64_t) svc_rng_below(&rng, (uint64_t) range);

		x[2 * i] = (double) (v % 37) * 0.25;
		x[2 * i + 1] = (double) (v / 37) - 3.0;
		if (x[2 * i] == 0 && v % 2)
			x[2 * i] = -0.0;
	}
	return x;
}

/*
 * The promise: the same rows give the same sample and statistics,
 * to the bit, in any order, split into any number of partial states
 * merged in any order.  Past the sample (sample 300 of 5,000 rows) with
 * and without repeated rows (the distinct rows more and fewer than the
 * sample), and labelled rows in a sample of their own.
 */
static void
test_order_free(void)
{
	static const int64_t ranges[] = {100000, 200, 5000};
	SvcRng		rng;

	svc_rng_seed(&rng, 77);
	for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++)
	{
		int64_t		n = 5000;
		double	   *x = repeated_rows(n, ranges[r], 5 + r);
		int64_t    *perm = malloc(sizeof(int64_t) * (size_t) n);
		SvcOptions	opt;
		uint8_t    *ref;
		double		ref_st[8];
		double	   *ref_rows;
		int64_t		ref_n;
		size_t		ref_len;
		bool		same = true;

		svc_options_default(&opt);
		opt.sample = 300;
		ref = state_of(x, n, 2, &opt, NULL);
		ref_rows = sample_of(ref, &ref_n, ref_st);
		ref_len = unit_state_len(ref);
		CHECK(svc_state_check(ref, ref_len, &(SvcError) {0}) == SVC_OK, "reference checks");
		CHECK(ref_n == 300, "range %lld: 300 rows to train on of %lld seen", (long long) ranges[r],
			  (long long) svc_state_seen(ref));

		for (int trial = 0; trial < 12; trial++)
		{
			int			parts = trial < 2 ? 1 : 2 + trial;
			uint8_t   **part = calloc((size_t) parts, sizeof(uint8_t *));
			uint8_t    *all;
			int		   *merge_order = malloc(sizeof(int) * (size_t) parts);
			double		st[8];
			double	   *rows;
			int64_t		rn;

			shuffle(perm, n, &rng);
			for (int p = 0; p < parts; p++)
				part[p] = new_state(2, &opt);
			/* rows dealt to the parts unevenly: part p gets about p + 1 shares */
			for (int64_t i = 0; i < n; i++)
			{
				int			p = (int) (svc_rng_below(&rng, (uint64_t) (parts * (parts + 1) / 2)));
				int			q = 0;

				while (p >= q + 1)
				{
					p -= q + 1;
					q++;
				}
				part[q] = unit_state_add_checked(part[q], x + 2 * (size_t) perm[i], 0);
			}
			for (int p = 0; p < parts; p++)
				merge_order[p] = p;
			for (int p = parts - 1; p > 0; p--)
			{
				int			j = (int) svc_rng_below(&rng, (uint64_t) p + 1);
				int			t = merge_order[p];

				merge_order[p] = merge_order[j];
				merge_order[j] = t;
			}
			all = part[merge_order[0]];
			if (trial % 3 == 2 && parts > 2)
			{
				/* a tree of merges: pairs first, then the pairs into the first */
				for (int p = 1; p + 1 < parts; p += 2)
				{
					part[merge_order[p]] = merge_into(part[merge_order[p]], part[merge_order[p + 1]]);
					free(part[merge_order[p + 1]]);
					part[merge_order[p + 1]] = NULL;
				}
				for (int p = 1; p < parts; p += 2)
				{
					all = merge_into(all, part[merge_order[p]]);
					free(part[merge_order[p]]);
				}
			}
			else
				for (int p = 1; p < parts; p++)
				{
					all = merge_into(all, part[merge_order[p]]);
					free(part[merge_order[p]]);
				}
			CHECK(svc_state_check(all, unit_state_len(all), &(SvcError) {0}) == SVC_OK,
				  "trial %d: the merged state checks", trial);
			rows = sample_of(all, &rn, st);
			same &= rn == ref_n && svc_state_seen(all) == n &&
				memcmp(rows, ref_rows, sizeof(double) * 2 * (size_t) rn) == 0 &&
				memcmp(st, ref_st, sizeof(st)) == 0;
			free(rows);
			free(all);
			free(part);
			free(merge_order);
		}
		CHECK(same, "range %lld: 12 orders and splits into up to 13 states give the same rows "
			  "and statistics, to the bit", (long long) ranges[r]);
		free(ref_rows);
		free(ref);
		free(perm);
		free(x);
	}
}

/*
 * Labelled rows: their sample too is order-free (features and label), and
 * a label makes two equal feature rows two rows.
 */
static void
test_labelled_order_free(void)
{
	SvcOptions	opt;
	int64_t		n = 3000;
	double	   *x = repeated_rows(n, 4000, 9);
	int64_t    *perm = malloc(sizeof(int64_t) * (size_t) n);
	SvcRng		rng;
	uint8_t    *ref_lab = NULL;
	size_t		ref_len = 0;
	bool		same = true;

	svc_options_default(&opt);
	opt.sample = 50;
	opt.label_sample = 200;
	svc_rng_seed(&rng, 3);
	for (int trial = 0; trial < 4; trial++)
	{
		uint8_t    *a = new_state(2, &opt),
				   *b = new_state(2, &opt);
		uint8_t    *m;
		int64_t		lab_rows;
		double	   *rows,
				   *lab;
		double		st[8];
		SvcError	err;

		shuffle(perm, n, &rng);
		for (int64_t i = 0; i < n; i++)
		{
			uint8_t   **s = i % 3 == 0 ? &a : &b;
			const double *row = x + 2 * (size_t) perm[i];
			int			label = perm[i] % 5 == 0 ? 0 : (perm[i] % 2 ? 1 : -1);

			*s = unit_state_add_checked(*s, row, label);
		}
		{
			int64_t		cap = svc_state_merged_kept(a, b);
			int64_t		lab_cap = svc_state_merged_lab_kept(a, b);

			cap = cap > svc_state_capacity(a) ? cap : svc_state_capacity(a);
			lab_cap = lab_cap > svc_state_lab_capacity(a) ? lab_cap : svc_state_lab_capacity(a);
			/* the copy writes every byte (the transition grows states unzeroed) */
			for (int64_t extra = 0; extra <= 7; extra += 7)
			{
				size_t		sz = svc_state_size_labelled(2, cap + extra, lab_cap + extra);
				uint8_t    *zero = calloc(1, sz),
						   *dirty = malloc(sz);

				memset(dirty, 0xa5, sz);
				svc_state_copy_labelled(trial % 2 ? a : b, zero, cap + extra, lab_cap + extra);
				svc_state_copy_labelled(trial % 2 ? a : b, dirty, cap + extra, lab_cap + extra);
				CHECK(memcmp(zero, dirty, sz) == 0,
					  "a copy over 0xa5 bytes equals the copy over zeros (%lld spare slots)",
					  (long long) extra);
				free(zero);
				free(dirty);
			}
			m = calloc(1, svc_state_size_labelled(2, cap, lab_cap));
			svc_state_copy_labelled(trial % 2 ? a : b, m, cap, lab_cap);
			CHECK(svc_state_merge(m, trial % 2 ? b : a, &err) == SVC_OK, "labelled merge");
		}
		CHECK(svc_state_check(m, svc_state_size_labelled(2, svc_state_capacity(m),
														 svc_state_lab_capacity(m)), &err) == SVC_OK,
			  "the labelled merge checks: %s", err.detail);
		lab_rows = svc_state_train_lab_rows(m);
		rows = malloc(sizeof(double) * 2 * (size_t) (2 * svc_state_train_rows(m)));
		lab = malloc(sizeof(double) * 3 * (size_t) (2 * lab_rows));
		CHECK(svc_state_sample(&svc_env_malloc, m, rows, lab, st, st + 2, st + 4, st + 6, &err) ==
			  SVC_OK, "labelled sample");
		CHECK(lab_rows == 200, "200 labelled rows to train on");
		if (ref_lab == NULL)
		{
			ref_len = sizeof(double) * 3 * (size_t) lab_rows;
			ref_lab = malloc(ref_len);
			memcpy(ref_lab, lab, ref_len);
		}
		else
			same &= memcmp(ref_lab, lab, ref_len) == 0;
		free(rows);
		free(lab);
		free(m);
		free(a);
		free(b);
	}
	CHECK(same, "the labelled rows to train on do not depend on the order or the split");
	free(ref_lab);
	free(perm);
	free(x);
}

/*
 * Chi-square of the sampled rows' strata against their shares of the
 * table, over seeds: the statistic of each seed's sample (m - 1 degrees of
 * freedom), summed.  rows: stratum s has shares[s] rows; rep copies of
 * each row value.  Returns the summed statistic; *df its degrees.
 */
static double
strata_chi2(const int *shares, int m, int rep, int64_t sample, int seeds, int *df)
{
	int64_t		n = 0;
	double		total = 0;

	for (int s = 0; s < m; s++)
		n += shares[s];
	*df = 0;
	for (int seed = 1; seed <= seeds; seed++)
	{
		SvcOptions	opt;
		uint8_t    *buf;
		double	   *rows,
					st[8];
		int64_t		got;
		double		counts[64] = {0};
		double		chi = 0;

		svc_options_default(&opt);
		opt.sample = sample;
		opt.seed = (uint64_t) seed;
		buf = new_state(2, &opt);
		for (int s = 0; s < m; s++)
			for (int i = 0; i < shares[s]; i++)
			{
				/* the stratum in the first column, a value shared by rep rows */
				double		row[2] = {(double) s, (double) (i / rep)};

				buf = unit_state_add_checked(buf, row, 0);
			}
		rows = sample_of(buf, &got, st);
		for (int64_t i = 0; i < got; i++)
			counts[(int) rows[2 * i]]++;
		for (int s = 0; s < m; s++)
		{
			double		e = (double) got * shares[s] / (double) n;

			chi += (counts[s] - e) * (counts[s] - e) / e;
		}
		total += chi;
		*df += m - 1;
		free(rows);
		free(buf);
	}
	return total;
}

/* The upper 0.001 point of chi-square with df degrees (Wilson-Hilferty). */
static double
chi2_crit(int df)
{
	double		z = 3.090232;
	double		t = 1.0 - 2.0 / (9.0 * df) + z * sqrt(2.0 / (9.0 * df));

	return df * t * t * t;
}

/*
 * The sample is uniform over rows: 12 strata of 500 to 6,000 rows (39,000
 * in all) sampled to 2,000, 30 seeds.  Distinct rows: the summed
 * chi-square is below the 0.001 point and near its degrees of freedom.
 * Rows repeated 4 times, their distinct values more than the sample: each
 * value is in or out with all its copies, which widens the spread (about
 * 2x the statistic's mean, measured: see doc/design-notes.md) but not the
 * shares.  Rows repeated 50 times, the distinct values fewer than the
 * sample: uniform again (every distinct value is kept with its count).
 */
static void
test_uniform_strata(void)
{
	static const int shares[12] = {500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000,
	5500, 6000};
	int			df;
	double		chi;

	chi = strata_chi2(shares, 12, 1, 2000, 30, &df);
	CHECK(chi < chi2_crit(df) && chi > 0.5 * df,
		  "distinct rows: chi-square %.1f on %d degrees (0.001 point %.1f)", chi, df, chi2_crit(df));
	printf("uniformity: distinct rows, chi-square %.1f on %d degrees\n", chi, df);
	chi = strata_chi2(shares, 12, 4, 2000, 30, &df);
	CHECK(chi < 4 * df, "rows repeated 4 times: chi-square %.1f on %d degrees, the shares kept",
		  chi, df);
	printf("uniformity: rows 4 times each, chi-square %.1f on %d degrees\n", chi, df);
	chi = strata_chi2(shares, 12, 50, 2000, 30, &df);
	CHECK(chi < chi2_crit(df) && chi > 0.5 * df,
		  "rows repeated 50 times, fewer distinct than the sample: chi-square %.1f on %d degrees",
		  chi, df);
	printf("uniformity: rows 50 times each, chi-square %.1f on %d degrees\n", chi, df);
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
	uint8_t    *m = calloc(1, svc_state_size(2, need));
	SvcError	err;
	double	   *r1,
			   *r2;
	int64_t		n1,
				n2;
	double		s1[8],
				s2[8];

	svc_state_copy(a, m, need);
	CHECK(svc_state_merge(m, b, &err) == SVC_OK, "merge succeeds");
	CHECK(svc_state_check(m, svc_state_size(2, need), &err) == SVC_OK, "merged state checks");
	CHECK(svc_state_kept(m) == 80 && svc_state_seen(m) == 80, "merge below the sample keeps all");
	r1 = sample_of(m, &n1, s1);
	r2 = sample_of(serial, &n2, s2);
	CHECK(n1 == n2 && memcmp(r1, r2, sizeof(double) * 160) == 0 && memcmp(s1, s2, sizeof(s1)) == 0,
		  "merged = serial, bit for bit, when every row is kept");
	free(r1);
	free(r2);
	free(m);

	{
		/* a full merge: sample 20 of 30 + 50 rows, the serial state's sample */
		size_t		l1,
					l2,
					l3;
		uint8_t    *x = state_with_rows(20, 1, 30, &l1);
		uint8_t    *y = state_with_rows(20, 31, 80, &l2);
		uint8_t    *z = state_with_rows(20, 1, 80, &l3);

		x = merge_into(x, y);
		CHECK(svc_state_kept(x) >= 20 && svc_state_kept(x) <= 25 && svc_state_seen(x) == 80,
			  "a full merge keeps the sample and its room");
		r1 = sample_of(x, &n1, s1);
		r2 = sample_of(z, &n2, s2);
		CHECK(n1 == 20 && n2 == 20 && memcmp(r1, r2, sizeof(double) * 40) == 0 &&
			  memcmp(s1, s2, sizeof(s1)) == 0, "full merge = serial, bit for bit");
		free(r1);
		free(r2);
		free(x);
		free(y);
		free(z);
	}
	{
		SvcOptions	opt;
		uint8_t    *c = calloc(1, svc_state_size(3, 4));

		svc_options_default(&opt);
		opt.sample = 1000;
		svc_state_init(c, 3, 4, &opt);
		CHECK(svc_state_merge(a, c, &err) == SVC_ERR_DIMENSION, "merging different dims fails");
		free(c);
	}
	{
		/* the same dims, other options: refused, and a is left as it was */
		SvcOptions	opt;
		uint8_t    *c = calloc(1, svc_state_size(2, 4));
		uint8_t    *before = malloc(la);

		svc_options_default(&opt);
		opt.sample = 1000;
		opt.budget = 7;
		svc_state_init(c, 2, 4, &opt);
		memcpy(before, a, la);
		CHECK(svc_state_merge(a, c, &err) == SVC_ERR_INVALID_PARAMETER &&
			  strstr(err.message, "different options") != NULL,
			  "merging states of different options fails: %s", err.message);
		CHECK(memcmp(before, a, la) == 0, "a refused merge changes nothing");
		free(before);
		free(c);
	}
	free(a);
	free(b);
	free(serial);
}

/*
 * The range and statistics of a sampled state: the range is of every row
 * (the sample's rows may miss the extremes), the mean and deviation are
 * the sample's rows', weighed by their counts.
 */
static void
test_sampled_statistics(void)
{
	size_t		len;
	uint8_t    *s = state_with_rows(10, 1, 100, &len);
	double		st[8];
	double	   *rows;
	int64_t		n;
	double		mean = 0,
				ss = 0;

	CHECK(svc_state_kept(s) >= 10 && svc_state_kept(s) <= 12 && svc_state_seen(s) == 100,
		  "kept stays within the sample and its room for compactions");
	rows = sample_of(s, &n, st);
	CHECK(n == 10, "10 rows to train on");
	for (int64_t i = 0; i < n; i++)
		mean += rows[2 * i] / 10;
	for (int64_t i = 0; i < n; i++)
		ss += (rows[2 * i] - mean) * (rows[2 * i] - mean);
	CHECK(fabs(st[0] - mean) < 1e-12 && fabs(st[2] - sqrt(ss / 10)) < 1e-12,
		  "mean and deviation of the sampled rows");
	CHECK(st[4] == 1 && st[6] == 100, "the range of every row");
	free(rows);
	free(s);
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
		/* what passes: options that decode to other valid ones, a wider range */
		CHECK(ok < (int) len / 12, "byte flips are caught (%d of %zu pass)", ok, len);
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
	SF_LENGTH, SF_MIN_ABOVE_MAX, SF_EMPTY_RANGE, SF_ROW_NAN, SF_ROW_OUTSIDE,
	SF_KEY, SF_COUNT_ZERO, SF_NEG_ZERO, SF_TABLE, SF_TABLE_PAST, SF_UNUSED, SF_TWICE,
	SF_RESERVED, SF_TAU, SF_ABOVE_TAU
} StateField;

static void
expect_state_rejected(StateField field, const char *detail)
{
	size_t		len;
	/* past the sample for the bound's damages: compacted, tau set */
	bool		full = field == SF_ABOVE_TAU;
	uint8_t    *s = state_with_rows(full ? 10 : 100, 1, field == SF_EMPTY_RANGE ? 0 : (full ? 60 : 20), &len);
	uint8_t    *copy = calloc(1, len + 8);
	size_t		copy_len = len;
	int64_t		cap = svc_state_capacity(s);
	int64_t		kept = svc_state_kept(s);
	/* the range (min then max, 2 columns), then the sample: its bound, rows, keys, counts, table */
	size_t		stats = SVC_STATE_HEADER_SIZE;
	size_t		area = stats + 8 * 2 * 2;
	size_t		rows = area + 16;
	size_t		keys = rows + (size_t) cap * 16;
	size_t		counts = keys + (size_t) cap * 8;
	size_t		table = counts + (size_t) cap * 8;
	uint64_t	tsize = 1;
	SvcError	err;

	while (tsize < 2 * (uint64_t) cap)
		tsize *= 2;
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
			svc_store_u64(copy + 16, 1000); /* more than the sample's room */
			break;
		case SF_LENGTH:
			copy_len = len + 8;
			break;
		case SF_MIN_ABOVE_MAX:
			svc_store_f64(copy + stats, 1e6);
			break;
		case SF_EMPTY_RANGE:
			svc_store_f64(copy + stats, 1.0);
			break;
		case SF_ROW_NAN:
			svc_store_f64(copy + rows + 8 * 2 * 7 + 8, NAN);
			break;
		case SF_ROW_OUTSIDE:
			svc_store_f64(copy + stats + 16, 5.0);	/* column 0's maximum, rows go to 20 */
			break;
		case SF_KEY:
			svc_store_u64(copy + keys + 8 * 3, svc_load_u64(copy + keys + 8 * 3) ^ 1);
			break;
		case SF_COUNT_ZERO:
			svc_store_u64(copy + counts + 8 * 5, 0);
			break;
		case SF_NEG_ZERO:
			svc_store_u64(copy + rows + 8 * 2 * 7 + 8, UINT64_C(0x8000000000000000));
			break;
		case SF_TABLE:
			for (size_t b = table;; b += 4)
				if (svc_load_u32(copy + b) != 0)
				{
					svc_store_u32(copy + b, 0);
					break;
				}
			break;
		case SF_TABLE_PAST:
			for (size_t b = table;; b += 4)
				if (svc_load_u32(copy + b) != 0)
				{
					svc_store_u32(copy + b, 1000);
					break;
				}
			break;
		case SF_UNUSED:
			copy[rows + 8 * 2 * 25] = 1;	/* a byte of slot 25 of 20 used */
			break;
		case SF_TWICE:
			/* slot 5 made slot 4's row, key and all, and the table built again */
			memcpy(copy + rows + 16 * 5, copy + rows + 16 * 4, 16);
			memcpy(copy + keys + 8 * 5, copy + keys + 8 * 4, 8);
			memset(copy + table, 0, 4 * tsize);
			for (int64_t i = 0; i < kept; i++)
			{
				uint64_t	key = svc_load_u64(copy + keys + 8 * (size_t) i);
				uint64_t	bkt = (key >> 20 ^ key) & (tsize - 1);

				while (svc_load_u32(copy + table + 4 * bkt) != 0)
					bkt = (bkt + 1) & (tsize - 1);
				svc_store_u32(copy + table + 4 * bkt, (uint32_t) i + 1);
			}
			break;
		case SF_RESERVED:
			copy[40] = 1;		/* the draws' state, unused without keep_rows */
			break;
		case SF_TAU:
			svc_store_u64(copy + area, 12345);	/* a bound of no row's key */
			break;
		case SF_ABOVE_TAU:
			{
				/* tau lowered to the smallest kept key: the others lie above it */
				int64_t		low = 0;

				for (int64_t i = 1; i < kept; i++)
					if (svc_load_u64(copy + keys + 8 * (size_t) i) <
						svc_load_u64(copy + keys + 8 * (size_t) low))
						low = i;
				svc_store_u64(copy + area, svc_load_u64(copy + keys + 8 * (size_t) low));
				svc_store_u64(copy + area + 8, (uint64_t) low + 1);
			}
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
	expect_state_rejected(SF_MIN_ABOVE_MAX, "minimum and maximum are inconsistent");
	expect_state_rejected(SF_EMPTY_RANGE, "range of an empty state is not empty");
	expect_state_rejected(SF_ROW_NAN, "sampled row is not finite");
	expect_state_rejected(SF_ROW_OUTSIDE, "lies outside the minimum and maximum");
	expect_state_rejected(SF_KEY, "key is not its own");
	expect_state_rejected(SF_COUNT_ZERO, "count is out of range");
	expect_state_rejected(SF_NEG_ZERO, "holds -0");
	expect_state_rejected(SF_TABLE, "table does not hold each row once");
	expect_state_rejected(SF_TABLE_PAST, "table points past its rows");
	expect_state_rejected(SF_UNUSED, "unused slot of the sample is not zero");
	expect_state_rejected(SF_TWICE, "holds a row twice");
	expect_state_rejected(SF_RESERVED, "reserved byte of the header is not zero");
	expect_state_rejected(SF_TAU, "bound is not one of its rows");
	expect_state_rejected(SF_ABOVE_TAU, "lies above the sample's bound");
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
		opt.keep_isolated = 0;	/* bsgd's: the parser leaves it off for the others */
		opt.keep_rows = 1;
		opt.window = w == 0 ? SVC_WINDOW_OLDEST : SVC_WINDOW_RESERVOIR;
		opt.sample = 5;
		buf = calloc(1, svc_state_size(2, 5));
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
		CHECK(svc_state_check(buf, svc_state_size(2, 5), &(SvcError) {0}) == SVC_OK,
			  "window %d: the state checks", w);
		if (w == 0)
			CHECK(last, "oldest: the state keeps the last 5 rows, oldest first");
		else
			CHECK(!last, "reservoir: the state keeps a uniform sample, not the last rows");
		free(buf);
	}
}

/* Every allocation of svc_state_sample failing in turn: an error, nothing leaked. */
static void
test_sample_fails_cleanly(void)
{
	size_t		len;
	uint8_t    *s = state_with_rows(50, 1, 400, &len);
	double	   *rows = malloc(sizeof(double) * 2 * 2 * 50);
	double		st[8];
	bool		done = false;

	for (long left = 0; left < 100 && !done; left++)
	{
		UnitBudget	b = {left, 0};
		SvcEnv		env = {.alloc = unit_fail_after_alloc, .release = unit_counted_free,
		.realloc = unit_fail_after_realloc, .ctx = &b};
		SvcError	err;
		SvcStatus	st_ok = svc_state_sample(&env, s, rows, NULL, st, st + 2, st + 4, st + 6, &err);

		CHECK(st_ok == SVC_OK || st_ok == SVC_ERR_NOMEM, "left %ld: ok or out of memory", left);
		CHECK(b.live == 0, "left %ld: %ld blocks leaked", left, b.live);
		done = st_ok == SVC_OK;
	}
	CHECK(done, "the sample is taken with enough memory");
	free(rows);
	free(s);
}

/*
 * A row's sample key: the transition's loop over its values (two sums)
 * gives the key of the stored bytes' loop, and the key the one loop gave
 * before (pinned: the sample, and so every model, depends on it).
 */
static void
test_key_forms(void)
{
	static const int widths[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 128, 129, 768};
	static const uint64_t pinned[] = {
		UINT64_C(0xf3ca43c131fe2e5c), UINT64_C(0x3d2db62b90443eff), UINT64_C(0x59e51249239f2009),
		UINT64_C(0x263eab12a8da1472), UINT64_C(0xb75be42a0275d4ee), UINT64_C(0x1bc2d40ccc1432d3),
		UINT64_C(0x762239d9aa6f5165), UINT64_C(0x5f86a53f2c6d3e0f), UINT64_C(0xfff5a41e3156d5fa),
		UINT64_C(0xebd1e13f50bc1575), UINT64_C(0x7c5d1b571066da4d), UINT64_C(0x9fccba8e7a97eb27),
		UINT64_C(0x988eebcf4af6692c)
	};
	static double row[768];
	static uint8_t bytes[8 * 768];

	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
	{
		int			n = widths[w];
		uint64_t	seed = UINT64_C(0x1234567890abcdef);

		for (int j = 0; j < n; j++)
		{
			row[j] = j % 5 == 3 ? -0.0 : ldexp((double) ((j * 37 + n * 11) % 201 - 100) / 8.0, j % 7 - 3);
			svc_store_u64(bytes + 8 * (size_t) j, svc_sample_bits(row[j]));
		}
		CHECK(svc_sample_key(row, n, seed) == pinned[w], "width %d: the pinned key", n);
		CHECK(svc_sample_key(row, n, seed) == svc_sample_key_of(NULL, bytes, n, false, 0.0, seed),
			  "width %d: the row's key is its stored bytes' key", n);
		/* the transition's form for rows whose -0.0 were made 0.0 */
		for (int j = 0; j < n; j++)
			row[j] += 0.0;
		CHECK(svc_sample_key_canonical(row, n, seed) == pinned[w],
			  "width %d: the canonical row's key is the pinned key", n);
	}
}

/*
 * A real[] row as the transition reads it: each float as a double, -0.0
 * as 0.0, and whether every value is finite (any position, any length).
 */
static void
test_floats_to_row(void)
{
	static float v[37];
	static double out[37];

	for (int n = 1; n <= 37; n++)
	{
		bool		same = true;

		for (int j = 0; j < n; j++)
			v[j] = j % 4 == 1 ? -0.0f : (float) ldexp((double) (j * 7 % 23) - 11.0, j % 9 - 60);
		CHECK(svc_state_floats_to_row(v, n, out), "%d finite floats are finite", n);
		for (int j = 0; j < n; j++)
			same &= out[j] == (double) v[j] && !signbit(out[j]) == !(v[j] < 0);
		CHECK(same, "%d floats: their values, -0.0 as 0.0", n);
		for (int bad = 0; bad < n; bad++)
		{
			float		keep = v[bad];

			v[bad] = bad % 3 == 0 ? INFINITY : bad % 3 == 1 ? -INFINITY : NAN;
			CHECK(!svc_state_floats_to_row(v, n, out), "%d floats, %d not finite", n, bad);
			v[bad] = keep;
		}
		v[n - 1] = FLT_MAX;
		CHECK(svc_state_floats_to_row(v, n, out), "%d floats, the largest finite last", n);
	}
}

/*
 * A state grown where it is (the transition's held state) has the bytes
 * of its copy into a new buffer: with labelled rows and an init model
 * after the sample, for the sample of distinct rows and for kept rows,
 * whatever the grown buffer held past the old state's bytes.
 */
static void
test_grow_in_place(void)
{
	static const uint8_t init[13] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};

	for (int keep = 0; keep < 2; keep++)
	{
		SvcOptions	opt;
		uint8_t    *s;
		int			grown = 0;

		svc_options_default(&opt);
		opt.sample = 40;
		opt.keep_rows = keep;
		s = unit_state_new(3, 4, &opt, init, sizeof(init));
		for (int i = 0; i < 300; i++)
		{
			double		row[3] = {(double) (i % 17), (double) ((i * 7) % 11) - 5.0,
			i % 3 == 0 ? -0.0 : 0.5 * i};
			int			label = keep ? 0 : (i % 10 == 3 ? (i % 20 == 3 ? 1 : -1) : 0);
			int64_t		cap;
			size_t		len;
			uint8_t    *copy,
					   *in_place;

			if (unit_state_add_once(s, row, label))
				continue;
			if (label != 0)
			{
				CHECK(unit_state_add(&s, row, label) == 1, "keep %d, row %d: labelled row", keep, i);
				continue;
			}
			cap = svc_state_next_capacity(s);
			len = svc_state_size_warm(3, cap, svc_state_lab_capacity(s), svc_state_init_len(s));
			copy = calloc(1, len);
			in_place = malloc(len);
			memset(in_place, 0xa5, len);
			memcpy(in_place, s, unit_state_len(s));
			svc_state_copy_labelled(s, copy, cap, svc_state_lab_capacity(s));
			svc_state_grow_in_place(in_place, cap);
			CHECK(memcmp(copy, in_place, len) == 0, "keep %d, row %d: grown in place as copied",
				  keep, i);
			grown++;
			free(s);
			free(copy);
			s = in_place;
			CHECK(unit_state_add_once(s, row, 0), "keep %d, row %d: the grown state takes it", keep, i);
		}
		CHECK(grown >= 3, "keep %d: %d growths", keep, grown);
		CHECK(keep || svc_state_lab_kept(s) > 16, "the labelled area grew too");
		free(s);
	}
}

/* FNV-1a over n bytes, from h. */
static uint64_t
fnv_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * UINT64_C(0x100000001b3);
	return h;
}

/*
 * The rows, labelled rows and statistics svc_state_sample gives, pinned to
 * the bytes of the build that copied every kept slot's row out before
 * sorting and summing (main at cbd9dd6): the sample is now sorted and its
 * statistics summed where the area stores the rows, which must change no
 * bit.  Samples that stand for more rows than they hold (the statistics
 * weighed by the slots' counts), with repeated rows, at 3, 70 and 2 + a
 * label columns, and one that holds every row.
 */
static void
test_sample_pinned(void)
{
	static const struct
	{
		int32_t		dims;
		int64_t		n;
		int64_t		sample;
		int64_t		label_sample;	/* 0: no labelled rows */
		uint64_t	seed;
		uint64_t	hash;
	}			cases[] = {
		{3, 2000, 50, 0, 11, UINT64_C(0xe697448067c99456)},
		{70, 600, 40, 0, 12, UINT64_C(0x85c4a20ee7b10718)},
		{2, 1500, 50, 30, 13, UINT64_C(0xcfa6aedeed08b611)},
		{5, 80, 100, 0, 14, UINT64_C(0x605ecfb4d5c367bc)},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		int32_t		d = cases[c].dims;
		SvcOptions	opt;
		SvcRng		rng;
		uint8_t    *s;
		double	   *row = malloc(sizeof(double) * (size_t) d);
		double	   *st = malloc(sizeof(double) * 4 * (size_t) d);
		double	   *rows,
				   *lab = NULL;
		int64_t		n_rows,
					n_lab = 0;
		uint64_t	h = UINT64_C(0xcbf29ce484222325);
		SvcError	err;

		svc_options_default(&opt);
		opt.sample = cases[c].sample;
		if (cases[c].label_sample > 0)
			opt.label_sample = cases[c].label_sample;
		s = new_state(d, &opt);
		svc_rng_seed(&rng, cases[c].seed);
		for (int64_t i = 0; i < cases[c].n; i++)
		{
			/* few distinct values: rows repeat, and some zeros are -0.0 */
			uint64_t	v = svc_rng_below(&rng, 40);
			int			label = 0;

			for (int32_t j = 0; j < d; j++)
				row[j] = (double) ((v * (uint64_t) (j + 3)) % 11) * 0.37 - (double) (v % 5);
			if (row[0] == 0 && v % 2)
				row[0] = -0.0;
			if (cases[c].label_sample > 0 && i % 4 == 0)
				label = v % 3 ? 1 : -1;
			s = unit_state_add_checked(s, row, label);
		}
		n_rows = svc_state_train_rows(s);
		rows = malloc(sizeof(double) * (size_t) (n_rows + 1) * (size_t) d);
		if (cases[c].label_sample > 0)
		{
			n_lab = svc_state_train_lab_rows(s);
			lab = malloc(sizeof(double) * (size_t) (n_lab + 1) * (size_t) (d + 1));
		}
		CHECK(svc_state_sample(&svc_env_malloc, s, rows, lab, st, st + d, st + 2 * d, st + 3 * d,
							   &err) == SVC_OK, "case %zu: sample: %s", c, err.message);
		h = fnv_bytes(h, rows, sizeof(double) * (size_t) n_rows * (size_t) d);
		if (lab != NULL)
			h = fnv_bytes(h, lab, sizeof(double) * (size_t) n_lab * (size_t) (d + 1));
		h = fnv_bytes(h, st, sizeof(double) * 4 * (size_t) d);
		CHECK(svc_state_seen(s) > n_rows || c == 3, "case %zu: the sample stands for more rows", c);
		if (getenv("SVC_PRINT_PINS"))
			printf("case %zu: %lld rows, %lld labelled, hash 0x%016llx\n", c, (long long) n_rows,
				   (long long) n_lab, (unsigned long long) h);
		CHECK(h == cases[c].hash, "case %zu: the rows and statistics of the pinned build "
			  "(0x%016llx)", c, (unsigned long long) h);
		free(row);
		free(st);
		free(rows);
		free(lab);
		free(s);
	}
}

int
main(void)
{
	test_sample_pinned();
	test_option_offsets();
	test_key_forms();
	test_floats_to_row();
	test_grow_in_place();
	test_fill_and_stats();
	test_duplicates_counted();
	test_extreme_magnitudes();
	test_sampled_statistics();
	test_order_free();
	test_labelled_order_free();
	test_uniform_strata();
	test_merge();
	test_ring_for_oldest_window();
	test_sample_fails_cleanly();
	test_check_rejects_damage();
	test_check_names_each_damage();
	return unit_summary("test_state");
}
