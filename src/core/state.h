/*
 * state.h - the training aggregate's state: a bounded uniform sample
 *
 * The state is one flat little-endian byte buffer (the payload of a
 * varlena), so that PostgreSQL can update it in place row by row, ship it
 * between parallel workers and Citus nodes as an ordinary value, and read
 * it back from text.  It holds the options, the exact running scaling
 * statistics of every row seen, and a reservoir of at most opt.sample
 * rows; its size is bounded by the options, never by the row count.
 * The running mean and m2 of a column are of its values times 2^-exp,
 * exp = svc_scale_exponent(largest magnitude seen, svc_core.h), so that any finite
 * value trains; for ordinary data exp is 0 and nothing is scaled.
 *
 * Layout:
 *   "SVCS" u16 version u16 0 u32 dims u32 0
 *   u64 capacity u64 kept u64 seen
 *   u64 rng[4]
 *   options (SVC_OPTIONS_WIRE_FULL bytes: the base and the extended block)
 *   f64 mean[dims] m2[dims] min[dims] max[dims] i64 exp[dims]
 *   f64 rows[capacity * dims]
 */
#ifndef SVC_STATE_H
#define SVC_STATE_H

#include "svc_core.h"
#include "options.h"

#define SVC_STATE_MAGIC "SVCS"
#define SVC_STATE_VERSION 4	/* 3: per-column scale exponents; 4: the
								 * extended options */
#define SVC_STATE_HEADER_SIZE (4 + 2 + 2 + 4 + 4 + 3 * 8 + 4 * 8 + SVC_OPTIONS_WIRE_FULL)

/* Bytes of a state of dims columns and room for capacity rows; 0 on overflow. */
size_t		svc_state_size(int32_t dims, int64_t capacity);

/* Initialise an empty state in buf (of svc_state_size bytes). */
void		svc_state_init(uint8_t *buf, int32_t dims, int64_t capacity,
						   const SvcOptions *opt);

/*
 * Give a state its own random stream (stream > 0), for states built side
 * by side from disjoint rows (parallel workers): with one seed their
 * replacement draws would be the same sequence.
 */
void		svc_state_set_stream(uint8_t *buf, uint64_t stream);

/* Validate a state received from outside (text input, a worker, a node). */
SvcStatus	svc_state_check(const uint8_t *buf, size_t len, SvcError *err);

int32_t		svc_state_dims(const uint8_t *buf);
int64_t		svc_state_capacity(const uint8_t *buf);
int64_t		svc_state_kept(const uint8_t *buf);
int64_t		svc_state_seen(const uint8_t *buf);
void		svc_state_options(const uint8_t *buf, SvcOptions *opt);
/* Whether the state was made with these options (encoded, see options.h). */
bool		svc_state_options_equal(const uint8_t *buf, const uint8_t *wire);

/*
 * Add one row (finite, dims values).  Returns false, changing nothing,
 * when the row must be kept but the buffer is full: the caller grows the
 * buffer with svc_state_copy and calls again.
 */
bool		svc_state_add(uint8_t *buf, const double *row);

/* The capacity to grow to: double, capped at the sample size. */
int64_t		svc_state_next_capacity(const uint8_t *buf);

/* Copy a state into a buffer with room for new_capacity >= kept rows. */
void		svc_state_copy(const uint8_t *src, uint8_t *dst, int64_t new_capacity);

/*
 * Merge state b into state a (same dims and options, else an error).
 * The merged reservoir is a uniform sample of the union: the number drawn
 * from a is hypergeometric given the rows each side has seen.  a must
 * have room for min(sample, kept_a + kept_b) rows (see svc_state_merged_kept).
 */
int64_t		svc_state_merged_kept(const uint8_t *a, const uint8_t *b);
SvcStatus	svc_state_merge(uint8_t *a, const uint8_t *b, SvcError *err);

/*
 * Copy out the kept rows (row-major, kept * dims doubles) and the scaling
 * statistics (mean, standard deviation, min, max; dims each).  When every
 * row seen is kept, the rows are sorted and the statistics recomputed
 * from them, so the result does not depend on scan order or on how
 * parallel workers split the rows.  rows must have room for 2 * kept
 * rows: the second half is scratch space for the sort.
 */
void		svc_state_extract(const uint8_t *buf, double *rows, double *mean,
							  double *stddev, double *min, double *max);

#endif							/* SVC_STATE_H */
