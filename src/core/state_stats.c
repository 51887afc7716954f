/*
 * state_stats.c - the training state's range of every column, its checks,
 * and the scaling statistics a fit takes from a state (state_stats.h)
 *
 * Built like state.c (the Makefile): at -O3 for the host CPU, without
 * fast-math or contraction, so the loops over columns vectorise and the
 * bytes are those of any build.
 */
#include "state_stats.h"

#include <math.h>
#include <string.h>

void
svc_stats_init(uint8_t *st, int32_t dims)
{
	for (int32_t j = 0; j < dims; j++)
	{
		svc_store_f64(st + 8 * (size_t) j, HUGE_VAL);
		svc_store_f64(st + 8 * ((size_t) dims + (size_t) j), -HUGE_VAL);
	}
}

void
svc_stats_merge(uint8_t *a, const uint8_t *b, int32_t dims)
{
	for (size_t j = 0; j < 2 * (size_t) dims; j++)
	{
		double		x = svc_load_f64(a + 8 * j),
					y = svc_load_f64(b + 8 * j);

		/* the minima, then the maxima */
		svc_store_f64(a + 8 * j, j < (size_t) dims ? (y < x ? y : x) : (y > x ? y : x));
	}
}

void
svc_stats_range(const uint8_t *st, int32_t dims, int32_t j, double *lo, double *hi)
{
	*lo = svc_load_f64(st + 8 * (size_t) j);
	*hi = svc_load_f64(st + 8 * ((size_t) dims + (size_t) j));
}

const char *
svc_stats_check(const uint8_t *st, int32_t dims, int64_t total)
{
	for (int32_t j = 0; j < dims; j++)
	{
		double		lo,
					hi;

		svc_stats_range(st, dims, j, &lo, &hi);
		if (total > 0 && !(isfinite(lo) && isfinite(hi) && lo <= hi))
			return "The minimum and maximum are inconsistent.";
		/* an empty state has the range svc_stats_init gave it */
		if (total == 0 && !(lo == HUGE_VAL && hi == -HUGE_VAL))
			return "The range of an empty state is not empty.";
	}
	return NULL;
}

/* Column j's scale exponent: of its largest magnitude over every row. */
static int
column_exp(const uint8_t *st, int32_t dims, int32_t j)
{
	double		lo,
				hi;

	svc_stats_range(st, dims, j, &lo, &hi);
	/* no row yet: the empty range, and nothing to scale */
	if (!(lo <= hi))
		return 0;
	return svc_scale_exponent(fmax(fabs(lo), fabs(hi)));
}

/*
 * A value scaled by 2^-e: by a multiplication when 2^-e is a normal
 * double, which rounds as ldexp does (both round the exact product once),
 * else by ldexp.
 */
static inline double
scaled(double v, double factor, int e)
{
	return factor != 0.0 ? v * factor : ldexp(v, -e);
}

/*
 * Where the statistics' rows are: doubles one after another (rows, lab),
 * or slots of stored little-endian doubles (bytes, lab_bytes: row i at
 * slot[i] * 8 * width bytes), each loaded into scratch before it is read.
 */
typedef struct StatsSrc
{
	const double *rows;
	const uint8_t *bytes;
	const uint32_t *slot;
	const uint64_t *count;
	int64_t		n;
	const double *lab;
	const uint8_t *lab_bytes;
	const uint32_t *lab_slot;
	const uint64_t *lab_count;
	size_t		lab_width;
	double	   *scratch;
} StatsSrc;

/* The first dims values of stored row slot (of width values) into out. */
static inline const double *
stats_load(const uint8_t *bytes, uint32_t slot, size_t width, int32_t dims, double *out)
{
	const uint8_t *p = bytes + 8 * width * (size_t) slot;

	for (size_t j = 0; j < (size_t) dims; j++)
		out[j] = svc_load_f64(p + 8 * j);
	return out;
}

/* Row i of the sample's rows then its labelled rows, and its count. */
static inline const double *
stats_row(const StatsSrc *s, int32_t dims, int64_t i, double *c)
{
	if (i < s->n)
	{
		*c = (double) (s->count ? s->count[i] : 1);
		if (s->bytes)
			return stats_load(s->bytes, s->slot[i], (size_t) dims, dims, s->scratch);
		return s->rows + (size_t) i * dims;
	}
	*c = (double) (s->lab_count ? s->lab_count[i - s->n] : 1);
	if (s->lab_bytes)
		return stats_load(s->lab_bytes, s->lab_slot[i - s->n], s->lab_width, dims, s->scratch);
	return s->lab + (size_t) (i - s->n) * s->lab_width;
}

static void
stats_of(const uint8_t *st, int32_t dims, const StatsSrc *src, int64_t n_lab,
		 double *mean, double *stddev, double *min, double *max)
{
	int64_t		n = src->n;
	double		total = 0.0;
	bool		by_product = true;

	/*
	 * A row at a time, each column's sums in mean[] and stddev[] (and its
	 * scale factor and exponent in min[] and max[] until the end): every
	 * column takes its values in the order of the rows, as a column at a
	 * time did, so the sums are the same; a wide sample is read twice
	 * instead of twice per column.
	 */
	for (int32_t j = 0; j < dims; j++)
	{
		int			e = column_exp(st, dims, j);

		min[j] = e >= -1022 && e <= 1022 ? ldexp(1.0, -e) : 0.0;
		max[j] = (double) e;
		mean[j] = 0.0;
		stddev[j] = 0.0;
		by_product &= min[j] != 0.0;
	}
	/*
	 * A row of count 1 with every column scaled by a multiplication (the
	 * usual case) in a loop without tests, which vectorises: the same
	 * operations, each column's in the same order.
	 */
	for (int64_t i = 0; i < n + n_lab; i++)
	{
		double		c;
		const double *r = stats_row(src, dims, i, &c);

		if (by_product && c == 1.0)
			for (size_t j = 0; j < (size_t) dims; j++)
				mean[j] += r[j] * min[j];
		else
			for (int32_t j = 0; j < dims; j++)
			{
				double		v = scaled(r[j], min[j], (int) max[j]);

				mean[j] += c == 1.0 ? v : c * v;
			}
		total += c;
	}
	/* no row: 0 for both, as an empty state's statistics have always been */
	for (int32_t j = 0; j < dims; j++)
		mean[j] = total > 0 ? mean[j] / total : 0.0;
	for (int64_t i = 0; i < n + n_lab; i++)
	{
		double		c;
		const double *r = stats_row(src, dims, i, &c);

		if (by_product && c == 1.0)
			for (size_t j = 0; j < (size_t) dims; j++)
			{
				double		t = r[j] * min[j] - mean[j];

				stddev[j] += t * t;
			}
		else
			for (int32_t j = 0; j < dims; j++)
			{
				double		t = scaled(r[j], min[j], (int) max[j]) - mean[j];

				stddev[j] += c == 1.0 ? t * t : c * (t * t);
			}
	}
	for (int32_t j = 0; j < dims; j++)
	{
		int			e = (int) max[j];

		mean[j] = ldexp(mean[j], e);
		stddev[j] = total > 0 ? ldexp(sqrt(stddev[j] / total), e) : 0.0;
		svc_stats_range(st, dims, j, &min[j], &max[j]);
	}
}

void
svc_stats_of_rows(const uint8_t *st, int32_t dims, const double *rows, int64_t n,
				  const double *lab, int64_t n_lab, size_t lab_width, double *mean,
				  double *stddev, double *min, double *max)
{
	StatsSrc	src = {0};

	src.rows = rows;
	src.n = n;
	src.lab = lab;
	src.lab_width = lab_width;
	stats_of(st, dims, &src, n_lab, mean, stddev, min, max);
}

void
svc_stats_of_counted(const uint8_t *st, int32_t dims, const uint8_t *rows,
					 const uint32_t *slot, const uint64_t *count, int64_t n,
					 const uint8_t *lab, const uint32_t *lab_slot, const uint64_t *lab_count,
					 int64_t n_lab, size_t lab_width, double *scratch, double *mean,
					 double *stddev, double *min, double *max)
{
	StatsSrc	src = {0};

	src.bytes = rows;
	src.slot = slot;
	src.count = count;
	src.n = n;
	src.lab_bytes = lab;
	src.lab_slot = lab_slot;
	src.lab_count = lab_count;
	src.lab_width = lab_width;
	src.scratch = scratch;
	stats_of(st, dims, &src, n_lab, mean, stddev, min, max);
}
