/*
 * state_stats.h - the training state's running scaling statistics
 * (state_stats.c), for state.c
 *
 * The statistics are one block of the state (state.h's layout): per
 * column Welford's running mean and m2 of its values times 2^-exp, its
 * minimum and maximum, and exp (an i64 per column: exp =
 * svc_scale_exponent(the largest magnitude), so no square overflows; 0
 * for ordinary data), then the count of staged rows (a u64, the first
 * word of its row of dims words) and STAGE_ROWS staged rows: the last
 * rows counted, not yet in the mean and m2.  A row is staged, and the
 * staged rows are added to the statistics column by column once
 * STAGE_ROWS of them wait, which gives the bytes of adding them one at a
 * time.  Every function takes the block (st) and the number of columns;
 * total is the count of every row counted, the staged ones the last.
 */
#ifndef SVC_STATE_STATS_H
#define SVC_STATE_STATS_H

#include "svc_core.h"
#include "bytes.h"

#define STAT_MEAN	0
#define STAT_M2		1
#define STAT_MIN	2
#define STAT_MAX	3
#define STAT_EXP	4			/* i64 per column: statistics are of x * 2^-exp */
#define STAT_PENDING 5			/* u64 (the first of the row): rows staged */
#define STAT_STAGE	6			/* STAGE_ROWS rows not yet in the statistics */
#define STAGE_ROWS	16
#define STAGE_COLUMNS 32		/* columns flushed together */
#define N_STATS		(STAT_STAGE + STAGE_ROWS)	/* rows of dims words in the block */

/* The empty statistics: every word 0, the minima +inf and the maxima -inf. */
void		svc_stats_init(uint8_t *st, int32_t dims);

/* Add the staged rows to the statistics (rows before them: total - staged). */
void		svc_stats_flush(uint8_t *st, int32_t dims, int64_t total);

/*
 * A new row for the statistics, the total-th counted: staged, and the
 * statistics brought up to date once STAGE_ROWS rows wait.  Inline: the
 * aggregate's transition adds every row.
 */
static inline void
svc_stats_add(uint8_t *st, int32_t dims, int64_t total, const double *row)
{
	int64_t		pending = (int64_t) svc_load_u64(st + (size_t) 8 * dims * STAT_PENDING);
	uint8_t    *dst = st + (size_t) 8 * dims * (STAT_STAGE + (int) pending);

	for (size_t j = 0; j < (size_t) dims; j++)
		svc_store_f64(dst + 8 * j, row[j]);
	svc_store_u64(st + (size_t) 8 * dims * STAT_PENDING, (uint64_t) (pending + 1));
	if (pending + 1 == STAGE_ROWS)
		svc_stats_flush(st, dims, total);
}

/*
 * Chan et al.'s exact merge of b's statistics (of n_b rows, staged ones
 * included) into a's (of n_a rows, none staged: flushed first).
 */
void		svc_stats_merge(uint8_t *a, const uint8_t *b, int32_t dims, int64_t n_a,
							int64_t n_b);

/*
 * The checks of a state received from outside (svc_state_check): NULL when
 * the block is consistent for total rows counted, else the error's detail.
 */
const char *svc_stats_check(const uint8_t *st, int32_t dims, int64_t total);

/* Column j's minimum and maximum over every row counted, staged ones too. */
void		svc_stats_range(const uint8_t *st, int32_t dims, int32_t j, double *lo,
							double *hi);

/*
 * The scaling statistics (mean, standard deviation, min, max; dims each)
 * of the total rows counted: from the running statistics, or, with
 * svc_stats_of_rows, recomputed from every row (rows: kept rows of dims
 * values, then lab: total - kept rows of lab_width values whose first
 * dims are the features) with a fixed summation order.
 */
void		svc_stats_running(const uint8_t *st, int32_t dims, int64_t total,
							  double *mean, double *stddev, double *min, double *max);
void		svc_stats_of_rows(const uint8_t *st, int32_t dims, int64_t total,
							  const double *rows, int64_t kept, const double *lab,
							  size_t lab_width, double *mean, double *stddev,
							  double *min, double *max);

#endif							/* SVC_STATE_STATS_H */
