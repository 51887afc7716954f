/*
 * state_stats.h - the training state's range of every column, and the
 * scaling statistics a fit takes from a state (state_stats.c, for state.c)
 *
 * The block of the state (state.h's layout) holds each column's minimum
 * (dims f64) then maximum (dims f64) over every row counted, labelled or
 * not: order-free, so any plan gives its bytes.  The mean and the
 * standard deviation are computed when the state is fitted, from the
 * rows it sampled (state_sample.h), in a fixed order: exact when the
 * sample holds every row, an estimate from the sample otherwise.  The
 * sums are of the values times 2^-exp, exp = svc_scale_exponent(the
 * column's largest magnitude), so that no square overflows; 0 for
 * ordinary data.
 */
#ifndef SVC_STATE_STATS_H
#define SVC_STATE_STATS_H

#include "svc_core.h"
#include "bytes.h"
#include "vec8.h"

/* Bytes of the block for dims columns. */
#define SVC_STATS_SIZE(dims) ((size_t) 16 * (size_t) (dims))

/* The empty block: the minima +inf and the maxima -inf. */
void		svc_stats_init(uint8_t *st, int32_t dims);

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * Whether every value of the row lies within the range already, eight
 * columns a step (the block's words are the host's doubles here).
 */
static inline bool
svc_stats_within(const uint8_t *st, int32_t dims, const double *row)
{
	const uint8_t *pmin = st,
			   *pmax = st + 8 * (size_t) dims;
	vi8			out = {0};
	size_t		j = 0;

	for (; j + 8 <= (size_t) dims; j += 8)
	{
		v8			x = load8(row + j),
					lo,
					hi;

		memcpy(&lo, pmin + 8 * j, sizeof(lo));
		memcpy(&hi, pmax + 8 * j, sizeof(hi));
		out |= (x < lo) | (x > hi);
	}
	for (; j < (size_t) dims; j++)
		out[0] |= row[j] < svc_load_f64(pmin + 8 * j) || row[j] > svc_load_f64(pmax + 8 * j);
	return ((out[0] | out[1] | out[2] | out[3]) | (out[4] | out[5] | out[6] | out[7])) == 0;
}
#endif

/* A row counted: its values widen the range.  Inline: every row comes here. */
static inline void
svc_stats_add(uint8_t *st, int32_t dims, const double *row)
{
	uint8_t    *pmin = st,
			   *pmax = st + 8 * (size_t) dims;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/*
	 * Most rows, once a few have come, change nothing: read the range
	 * only, a third of the time of the update on 128 columns.  (-0.0
	 * within the range leaves it as 0.0 would.)
	 */
	if (svc_stats_within(st, dims, row))
		return;
#endif
	/* unsigned indices, so that the loop vectorises under -fwrapv */
	for (size_t j = 0; j < (size_t) dims; j++)
	{
		/* + 0.0 makes -0.0 0.0: the range is the same in any order */
		double		lo = svc_load_f64(pmin + 8 * j),
					hi = svc_load_f64(pmax + 8 * j),
					x = row[j] + 0.0;

		svc_store_f64(pmin + 8 * j, x < lo ? x : lo);
		svc_store_f64(pmax + 8 * j, x > hi ? x : hi);
	}
}

/* b's range into a's. */
void		svc_stats_merge(uint8_t *a, const uint8_t *b, int32_t dims);

/*
 * The checks of a state received from outside (svc_state_check): NULL when
 * the block is consistent for total rows counted, else the error's detail.
 */
const char *svc_stats_check(const uint8_t *st, int32_t dims, int64_t total);

/* Column j's minimum and maximum over every row counted. */
void		svc_stats_range(const uint8_t *st, int32_t dims, int32_t j, double *lo,
							double *hi);

/*
 * The scaling statistics (mean, standard deviation, min, max; dims each).
 * svc_stats_of_rows: of n rows (dims values each), then n_lab rows of
 * lab_width values whose first dims are the features, summed in that
 * order.  svc_stats_of_counted: the same where row i stands for count[i]
 * rows (lab_count[i] for the labelled ones) and is read where a sample
 * area stores it: the little-endian doubles at rows + 8 * dims * slot[i]
 * (lab + 8 * lab_width * lab_slot[i]), each loaded into scratch (dims
 * values) first, so that no copy of the sample is made.  The range is the
 * block's, of every row counted.
 */
void		svc_stats_of_rows(const uint8_t *st, int32_t dims, const double *rows, int64_t n,
							  const double *lab, int64_t n_lab, size_t lab_width,
							  double *mean, double *stddev, double *min, double *max);
void		svc_stats_of_counted(const uint8_t *st, int32_t dims, const uint8_t *rows,
								 const uint32_t *slot, const uint64_t *count, int64_t n,
								 const uint8_t *lab, const uint32_t *lab_slot,
								 const uint64_t *lab_count, int64_t n_lab, size_t lab_width,
								 double *scratch, double *mean, double *stddev, double *min,
								 double *max);

#endif							/* SVC_STATE_STATS_H */
