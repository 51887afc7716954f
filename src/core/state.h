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
 * Rows given a label (the three-argument aggregate) are kept apart, in a
 * reservoir of their own of at most opt.label_sample rows, so that a few
 * labelled rows among millions are not sampled away.  They count in the
 * scaling statistics like every row; "seen" and "kept" are of the
 * unlabelled rows.
 *
 * Layout:
 *   "SVCS" u16 version u16 0 u32 dims u32 0
 *   u64 capacity u64 kept u64 seen
 *   u64 rng[4]
 *   options (SVC_OPTIONS_WIRE_FULL bytes: the base and the extended block)
 *   u64 lab_capacity u64 lab_kept u64 normal_seen u64 anomaly_seen
 *   u64 init_len
 *   f64 mean[dims] m2[dims] min[dims] max[dims] i64 exp[dims]   (the
 *     statistics block, with its staged rows: state_stats.h)
 *   f64 rows[capacity * dims]
 *   f64 labelled[lab_capacity * (dims + 1)]   (features, then 1 or -1)
 *   u8 init[init_len]    (the init model's bytes: svc_train(f, o, init))
 *
 * A warm start (svc_train(features, options, init)) carries its init
 * model whole in the tail, so that a state shipped to another process
 * still knows what it continues, and a merge can refuse states of two
 * different init models.  Its options are the init model's, with the cut
 * options of the call (fit.h).  A warm-started state has no labelled rows.
 */
#ifndef SVC_STATE_H
#define SVC_STATE_H

#include "svc_core.h"
#include "options.h"

#define SVC_STATE_MAGIC "SVCS"
#define SVC_STATE_VERSION 6	/* 3: per-column scale exponents; 4: the
								 * extended options and labelled rows; 5:
								 * the init model of a warm start; 6: rows
								 * staged for the statistics */
#define SVC_STATE_HEADER_SIZE (4 + 2 + 2 + 4 + 4 + 3 * 8 + 4 * 8 + SVC_OPTIONS_WIRE_FULL + 5 * 8)
/* Most bytes of an init model a state carries. */
#define SVC_STATE_MAX_INIT ((size_t) 512 * 1024 * 1024)

/* Bytes of a state of dims columns and room for capacity rows; 0 on overflow. */
size_t		svc_state_size(int32_t dims, int64_t capacity);
/* ... and for lab_capacity labelled rows (svc_state_size has room for none). */
size_t		svc_state_size_labelled(int32_t dims, int64_t capacity, int64_t lab_capacity);

/* ... and an init model of init_len bytes in the tail. */
size_t		svc_state_size_warm(int32_t dims, int64_t capacity, int64_t lab_capacity,
								size_t init_len);

/* Initialise an empty state in buf (of svc_state_size bytes). */
void		svc_state_init(uint8_t *buf, int32_t dims, int64_t capacity,
						   const SvcOptions *opt);

/*
 * Give a state its own random stream (stream > 0), for states built side
 * by side from disjoint rows (parallel workers): with one seed their
 * replacement draws would be the same sequence.
 */
void		svc_state_set_stream(uint8_t *buf, uint64_t stream);

/*
 * The init model of a warm start: its bytes in the tail (len 0: none).
 * set_init stores them into a state sized by svc_state_size_warm for len,
 * before any labelled row; copies and merges keep them.
 */
size_t		svc_state_init_len(const uint8_t *buf);
const uint8_t *svc_state_init_model(const uint8_t *buf);
void		svc_state_set_init(uint8_t *buf, const uint8_t *init, size_t len);
bool		svc_state_init_equal(const uint8_t *buf, const uint8_t *init, size_t len);

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

/* Copy a state into a buffer with room for new_capacity >= kept rows
 * (and its labelled rows' capacity and init model unchanged). */
void		svc_state_copy(const uint8_t *src, uint8_t *dst, int64_t new_capacity);

/*
 * The labelled rows.  label is 1 (normal) or -1 (anomaly); add returns
 * false, changing nothing, when the row must be kept and the labelled
 * area is full: grow it with svc_state_copy_labelled (to
 * svc_state_next_lab_capacity) and call again.
 */
bool		svc_state_add_labelled(uint8_t *buf, const double *row, int label);
int64_t		svc_state_lab_capacity(const uint8_t *buf);
int64_t		svc_state_lab_kept(const uint8_t *buf);
int64_t		svc_state_lab_seen(const uint8_t *buf, int label);
/* Every row the state has counted, labelled or not. */
int64_t		svc_state_rows_seen(const uint8_t *buf);
int64_t		svc_state_next_lab_capacity(const uint8_t *buf);
void		svc_state_copy_labelled(const uint8_t *src, uint8_t *dst, int64_t new_capacity,
									int64_t new_lab_capacity);
/* The labelled rows a merge of b into a keeps (a needs room for them). */
int64_t		svc_state_merged_lab_kept(const uint8_t *a, const uint8_t *b);

/*
 * Merge state b into state a (same dims, options and init model, else an
 * error).
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

/*
 * The kept rows as stored, unsorted (kept * dims doubles), in the order
 * they came: the state of a model that keeps its rows with the window
 * "oldest" keeps the newest sample rows (a ring, read from its oldest);
 * any other keeps a uniform reservoir, in the order they came while no
 * row was replaced (seen <= sample), else in the sample's slot order.
 * The arrival order of a model that keeps its rows (keep.h).  After a
 * merge (a parallel scan) the order is the merge's.
 */
void		svc_state_rows_stored(const uint8_t *buf, double *rows);

/*
 * The same with the labelled rows: lab receives lab_kept rows of dims + 1
 * values (features, then the label) and has room for twice that (scratch
 * for the sort).  With every row kept, both sets come sorted and the
 * statistics are recomputed over both.  svc_state_extract alone (lab
 * NULL) recomputes only when there are no labelled rows, and otherwise
 * returns the running statistics, which count them too.
 */
void		svc_state_extract_labelled(const uint8_t *buf, double *rows, double *lab,
									   double *mean, double *stddev, double *min,
									   double *max);

#endif							/* SVC_STATE_H */
