/*
 * state_stats.c - the training state's running scaling statistics:
 * Welford's mean and m2 per column, staged rows, Chan's merge, their
 * checks and the statistics a fit scales by (state_stats.h)
 *
 * Built like state.c (the Makefile): at -O3 for the host CPU, without
 * fast-math or contraction, so the loops over columns vectorise and the
 * bytes are those of any build.
 */
#include "state_stats.h"

#include <math.h>
#include <string.h>

static int
stat_exp(const uint8_t *st, int32_t dims, int32_t j)
{
	return (int) (int64_t) svc_load_u64(st + (size_t) 8 * dims * STAT_EXP + 8 * (size_t) j);
}

static void
set_stat_exp(uint8_t *st, int32_t dims, int32_t j, int e)
{
	svc_store_u64(st + (size_t) 8 * dims * STAT_EXP + 8 * (size_t) j,
				  (uint64_t) (int64_t) e);
}

static uint8_t *
stat_ptr(uint8_t *st, int32_t dims, int which)
{
	return st + (size_t) 8 * dims * which;
}

static const uint8_t *
stat_cptr(const uint8_t *st, int32_t dims, int which)
{
	return st + (size_t) 8 * dims * which;
}

static int64_t
stats_pending(const uint8_t *st, int32_t dims)
{
	return (int64_t) svc_load_u64(stat_cptr(st, dims, STAT_PENDING));
}

static const uint8_t *
staged_cptr(const uint8_t *st, int32_t dims, int64_t r)
{
	return stat_cptr(st, dims, STAT_STAGE + (int) r);
}

/* 1 / n for staged row r of pending, the last of total rows counted. */
static inline double
staged_inv(int64_t total, int64_t pending, int64_t r)
{
	return 1.0 / (double) (total - pending + r + 1);
}

void
svc_stats_init(uint8_t *st, int32_t dims)
{
	memset(st, 0, (size_t) 8 * N_STATS * dims);
	for (int32_t j = 0; j < dims; j++)
	{
		svc_store_f64(stat_ptr(st, dims, STAT_MIN) + 8 * j, HUGE_VAL);
		svc_store_f64(stat_ptr(st, dims, STAT_MAX) + 8 * j, -HUGE_VAL);
	}
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
column_load(const uint8_t *st, int32_t dims, int32_t j, ColumnStats *c)
{
	c->mean = svc_load_f64(stat_cptr(st, dims, STAT_MEAN) + 8 * j);
	c->m2 = svc_load_f64(stat_cptr(st, dims, STAT_M2) + 8 * j);
	c->lo = svc_load_f64(stat_cptr(st, dims, STAT_MIN) + 8 * j);
	c->hi = svc_load_f64(stat_cptr(st, dims, STAT_MAX) + 8 * j);
	c->exp = stat_exp(st, dims, j);
}

static void
column_store(uint8_t *st, int32_t dims, int32_t j, const ColumnStats *c)
{
	svc_store_f64(stat_ptr(st, dims, STAT_MEAN) + 8 * j, c->mean);
	svc_store_f64(stat_ptr(st, dims, STAT_M2) + 8 * j, c->m2);
	svc_store_f64(stat_ptr(st, dims, STAT_MIN) + 8 * j, c->lo);
	svc_store_f64(stat_ptr(st, dims, STAT_MAX) + 8 * j, c->hi);
	set_stat_exp(st, dims, j, c->exp);
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
column_current(const uint8_t *st, int32_t dims, int32_t j, int64_t total, ColumnStats *c)
{
	int64_t		pending = stats_pending(st, dims);

	column_load(st, dims, j, c);
	for (int64_t r = 0; r < pending; r++)
		column_add(c, svc_load_f64(staged_cptr(st, dims, r) + 8 * j),
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
void
svc_stats_flush(uint8_t *st, int32_t dims, int64_t total)
{
	int64_t		pending = stats_pending(st, dims);
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
		uint8_t    *pmin = stat_ptr(st, dims, STAT_MIN) + 8 * j0;
		uint8_t    *pmax = stat_ptr(st, dims, STAT_MAX) + 8 * j0;
		uint8_t    *pmean = stat_ptr(st, dims, STAT_MEAN) + 8 * j0;
		uint8_t    *pm2 = stat_ptr(st, dims, STAT_M2) + 8 * j0;

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
			const uint8_t *row = staged_cptr(st, dims, r) + 8 * j0;

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

			plain &= stat_exp(st, dims, (int32_t) (j0 + k)) == 0 && svc_scale_plain(maxabs);
		}
		if (!plain)
		{
			/* the general update, column by column, in the rows' order */
			for (size_t k = 0; k < width; k++)
			{
				ColumnStats c;

				column_load(st, dims, (int32_t) (j0 + k), &c);
				for (int64_t r = 0; r < pending; r++)
					column_add(&c, svc_load_f64(staged_cptr(st, dims, r) + 8 * (j0 + k)),
							   inv[r]);
				column_store(st, dims, (int32_t) (j0 + k), &c);
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
			const uint8_t *row = staged_cptr(st, dims, r) + 8 * j0;
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
	svc_store_u64(stat_ptr(st, dims, STAT_PENDING), 0);
}

void
svc_stats_merge(uint8_t *a, const uint8_t *b, int32_t dims, int64_t n_a, int64_t n_b)
{
	/*
	 * Chan et al.'s exact merge of means and squared deviations, both
	 * sides first brought to the scale of the merged largest magnitude;
	 * the statistics are of every row, labelled or not.
	 */
	for (int32_t j = 0; j < dims && n_b > 0; j++)
	{
		double		na = (double) n_a,
					nb = (double) n_b,
					n = na + nb;
		ColumnStats ca,
					cb;
		double		lo,
					hi;
		int			e;
		double		delta,
					m2;

		column_load(a, dims, j, &ca);
		column_current(b, dims, j, n_b, &cb);
		lo = cb.lo < ca.lo ? cb.lo : ca.lo;
		hi = cb.hi > ca.hi ? cb.hi : ca.hi;
		e = svc_scale_exponent(fmax(fabs(lo), fabs(hi)));
		rescale_stats(&ca.mean, &ca.m2, ca.exp, e);
		rescale_stats(&cb.mean, &cb.m2, cb.exp, e);
		delta = cb.mean - ca.mean;
		m2 = ca.m2 + cb.m2 + delta * delta * na * nb / n;
		svc_store_f64(stat_ptr(a, dims, STAT_MEAN) + 8 * j, ca.mean + delta * nb / n);
		svc_store_f64(stat_ptr(a, dims, STAT_M2) + 8 * j, m2);
		svc_store_f64(stat_ptr(a, dims, STAT_MIN) + 8 * j, lo);
		svc_store_f64(stat_ptr(a, dims, STAT_MAX) + 8 * j, hi);
		set_stat_exp(a, dims, j, e);
	}
}

const char *
svc_stats_check(const uint8_t *st, int32_t dims, int64_t total)
{
	uint64_t	pending;

	/*
	 * The staged rows are the last ones counted, finite; the statistics
	 * checked below are of the rows before them (total of them).
	 */
	pending = (uint64_t) stats_pending(st, dims);
	if (pending >= STAGE_ROWS || pending > (uint64_t) total)
		return "The count of staged rows is out of range.";
	total -= (int64_t) pending;
	for (uint64_t r = 0; r < pending; r++)
		for (int32_t j = 0; j < dims; j++)
			if (!isfinite(svc_load_f64(staged_cptr(st, dims, (int64_t) r) + 8 * j)))
				return "A staged row is not finite.";
	for (int32_t j = 0; j < dims; j++)
	{
		double		mean = svc_load_f64(stat_cptr(st, dims, STAT_MEAN) + 8 * j);
		double		m2 = svc_load_f64(stat_cptr(st, dims, STAT_M2) + 8 * j);
		double		lo = svc_load_f64(stat_cptr(st, dims, STAT_MIN) + 8 * j);
		double		hi = svc_load_f64(stat_cptr(st, dims, STAT_MAX) + 8 * j);
		int64_t		e = (int64_t) svc_load_u64(stat_cptr(st, dims, STAT_EXP) + 8 * j);

		if (total > 0 && !(isfinite(lo) && isfinite(hi) && lo <= hi))
			return "The minimum and maximum are inconsistent.";
		/* an empty state has the statistics svc_stats_init gave it */
		if (total == 0 && !(mean == 0 && m2 == 0 && lo == HUGE_VAL && hi == -HUGE_VAL && e == 0))
			return "The statistics of an empty state are not empty.";
		if (total > 0 && e != svc_scale_exponent(fmax(fabs(lo), fabs(hi))))
			return "The scale of the statistics does not match the largest value.";

		/*
		 * The statistics are of values scaled to at most 2^400 (see
		 * svc_scale_exponent): their mean is within 2^401 even rounded,
		 * and m2 at most seen times 2^802; the bounds allow 4 times that.
		 * Bounds proportional to seen stay valid when rows are added or
		 * states merged.
		 */
		if (!(fabs(mean) <= 0x1p402) || !(m2 >= 0 && m2 <= 0x1p804 * (double) total))
			return "The scaling statistics are not finite or out of range.";

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
				return "The scaling statistics do not fit the minimum and maximum.";
		}
	}
	return NULL;
}

void
svc_stats_range(const uint8_t *st, int32_t dims, int32_t j, double *lo, double *hi)
{
	uint64_t	pending = (uint64_t) stats_pending(st, dims);
	double		l = svc_load_f64(stat_cptr(st, dims, STAT_MIN) + 8 * j);
	double		h = svc_load_f64(stat_cptr(st, dims, STAT_MAX) + 8 * j);

	for (uint64_t r = 0; r < pending; r++)
	{
		double		v = svc_load_f64(staged_cptr(st, dims, (int64_t) r) + 8 * j);

		l = v < l ? v : l;
		h = v > h ? v : h;
	}
	*lo = l;
	*hi = h;
}

void
svc_stats_of_rows(const uint8_t *st, int32_t dims, int64_t total, const double *rows,
				  int64_t kept, const double *lab, size_t lab_width, double *mean,
				  double *stddev, double *min, double *max)
{
	for (int32_t j = 0; j < dims; j++)
	{
		double		s = 0.0,
					ss = 0.0,
					lo = HUGE_VAL,
					hi = -HUGE_VAL,
					m;
		ColumnStats c;
		int			e;

		column_current(st, dims, j, total, &c);
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
}

void
svc_stats_running(const uint8_t *st, int32_t dims, int64_t total, double *mean,
				  double *stddev, double *min, double *max)
{
	for (int32_t j = 0; j < dims; j++)
	{
		ColumnStats c;

		column_current(st, dims, j, total, &c);
		mean[j] = ldexp(c.mean, c.exp);
		stddev[j] = total > 0 ? ldexp(sqrt(c.m2 / (double) total), c.exp) : 0.0;
		min[j] = c.lo;
		max[j] = c.hi;
	}
}
