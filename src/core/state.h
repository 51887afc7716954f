/*
 * state.h - the training aggregate's state: a bounded sample that does not
 * depend on the rows' order
 *
 * The state is one flat little-endian byte buffer (the payload of a
 * varlena), so that PostgreSQL can update it in place row by row, ship it
 * between parallel workers and Citus nodes as an ordinary value, and read
 * it back from text.  It holds the options, the range of every column
 * over every row seen, and the sample: the opt.sample distinct rows of
 * smallest key, a hash of the row's values and the seed, each with the
 * number of rows equal to it (state_sample.h).  Its size is bounded by
 * the options, never by the row count.
 *
 * The sample is a function of the multiset of rows, the options and the
 * seed: any order, any split into partial states merged in any order, give
 * the same sample, and so the same model.  The rows a fit trains on are
 * every row the sample stands for when they are at most opt.sample (every
 * table that fits in the sample, the same rows as before this format),
 * else a uniform draw of opt.sample of them (svc_state_sample).  Uniform
 * over the rows while the table's distinct rows fit in the sample; past
 * it, a uniform sample of the distinct rows, each with its copies, thinned
 * to opt.sample rows: a row repeated a large share of the table is in it
 * with all its copies or not at all (README, "Parallel query").
 *
 * Models that keep their rows (option keep_rows) number rows as they come,
 * by design: their state keeps opt.sample rows as they came (a ring for
 * the window "oldest", Algorithm R for "reservoir"), one slot a row.
 *
 * Rows given a label (the three-argument aggregate) are kept apart, in a
 * sample of their own of at most opt.label_sample distinct rows (features
 * and label), so that a few labelled rows among millions are not sampled
 * away.  They count in the range like every row; "seen" and "kept" are of
 * the unlabelled rows.
 *
 * Layout:
 *   "SVCS" u16 version u16 0 u32 dims u32 0
 *   u64 capacity u64 kept u64 seen
 *   u64 rng[4]    (keep_rows only: the reservoir's draws)
 *   options (SVC_OPTIONS_WIRE_FULL bytes: the base and the extended block)
 *   u64 lab_capacity u64 lab_kept u64 normal_seen u64 anomaly_seen
 *   u64 init_len
 *   f64 min[dims] max[dims]    (state_stats.h)
 *   the sample: capacity slots of dims values (state_sample.h's area)
 *   the labelled sample: lab_capacity slots of dims + 1 values (the
 *     features, then 1 or -1)
 *   u8 init[init_len]    (the init model's bytes: svc_train(f, o, init))
 * capacity and kept count slots: distinct rows, or rows with keep_rows.
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
#define SVC_STATE_VERSION 7	/* 3: per-column scale exponents; 4: the
								 * extended options and labelled rows; 5:
								 * the init model of a warm start; 6: rows
								 * staged for the statistics; 7: the sample
								 * of smallest keys, the range only */
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

/*
 * The most slots a state of these options grows to: its sample and room
 * for compactions (a quarter more; the sample exactly for a model that
 * keeps its rows), and likewise for the labelled rows.
 */
int64_t		svc_state_max_capacity(const SvcOptions *opt);
int64_t		svc_state_max_lab_capacity(const SvcOptions *opt);

/* Initialise an empty state in buf (of svc_state_size bytes). */
void		svc_state_init(uint8_t *buf, int32_t dims, int64_t capacity,
						   const SvcOptions *opt);

/*
 * Give a state its own random stream (stream > 0), for states built side
 * by side from disjoint rows (parallel workers).  Only the reservoir of a
 * model that keeps its rows draws from it; the sample of every other state
 * draws nothing.
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
/* Slots: distinct rows (rows, for a model that keeps its rows). */
int64_t		svc_state_capacity(const uint8_t *buf);
int64_t		svc_state_kept(const uint8_t *buf);
/* Unlabelled rows counted. */
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

/*
 * svc_state_add of a row that holds no -0.0, which it does not test for:
 * the same state.  svc_state_floats_to_row gives such rows: n floats as
 * doubles into out, -0.0 as 0.0; whether every one is finite.
 */
bool		svc_state_add_canonical(uint8_t *buf, const double *row);
bool		svc_state_floats_to_row(const float *v, int32_t n, double *out);

/* The capacity to grow to: double, capped at the sample size. */
int64_t		svc_state_next_capacity(const uint8_t *buf);

/* Copy a state into a buffer with room for new_capacity >= kept rows
 * (and its labelled rows' capacity and init model unchanged). */
void		svc_state_copy(const uint8_t *src, uint8_t *dst, int64_t new_capacity);

/*
 * svc_state_copy into the state's own buffer, grown (new_capacity >= its
 * capacity; room for svc_state_size_warm of the new capacities): the same
 * bytes, without moving the rows.
 */
void		svc_state_grow_in_place(uint8_t *buf, int64_t new_capacity);

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
/* Writes every byte of dst, whatever it held (svc_state_size_warm of it). */
void		svc_state_copy_labelled(const uint8_t *src, uint8_t *dst, int64_t new_capacity,
									int64_t new_lab_capacity);
/* The labelled slots a merge of b into a keeps (a needs room for them). */
int64_t		svc_state_merged_lab_kept(const uint8_t *a, const uint8_t *b);

/*
 * Merge state b into state a (same dims, options and init model, else an
 * error): a's sample becomes the sample of the union, the one a single
 * state of every row would hold, whatever the order of merges.  a must
 * have room for min(sample, kept_a + kept_b) slots (see
 * svc_state_merged_kept).  The reservoir of a model that keeps its rows
 * merges as before: a uniform sample of the union, hypergeometric counts.
 */
int64_t		svc_state_merged_kept(const uint8_t *a, const uint8_t *b);
SvcStatus	svc_state_merge(uint8_t *a, const uint8_t *b, SvcError *err);

/*
 * The rows a fit of the state trains on: every row the sample stands for
 * when they are at most opt.sample, else opt.sample of them; likewise the
 * labelled rows with opt.label_sample.  For a model that keeps its rows,
 * its kept rows.
 */
int64_t		svc_state_train_rows(const uint8_t *buf);
int64_t		svc_state_train_lab_rows(const uint8_t *buf);

/*
 * The rows to train on (svc_state_train_rows of dims values, sorted) and
 * the scaling statistics (mean, standard deviation, min, max; dims each).
 * rows must have room for the rows; lab, for svc_state_train_lab_rows
 * rows of dims + 1 values (features, then the label), or NULL when there
 * are none, or to leave them out of the statistics (before 0.5.0 each
 * needed room for twice its rows, the sort's scratch).  The rows come in one
 * order whatever the order they came in (sorted), a draw among them is
 * seeded by the options' seed, and the statistics sum in that order:
 * exact when the sample stands for every row counted, else of the rows
 * the sample stands for (their range is of every row).  Scratch comes
 * from env.
 */
SvcStatus	svc_state_sample(const SvcEnv *env, const uint8_t *buf, double *rows,
							 double *lab, double *mean, double *stddev, double *min,
							 double *max, SvcError *err);

/*
 * The order svc_state_sample sorts its rows in: lexicographic on the d
 * values.  Inline, as the sort calls it n log2(n) times; supervision's
 * merge of labelled rows keeps the same order with it.
 */
static inline int
svc_state_row_cmp(const double *a, const double *b, int32_t d)
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

/*
 * The kept rows of a model that keeps its rows, as stored (kept * dims
 * doubles), in the order they came: with the window "oldest", the newest
 * sample rows (a ring, read from its oldest); with "reservoir", in the
 * order they came while no row was replaced (seen <= sample), else in the
 * sample's slot order.  After a merge (a parallel scan) the order is the
 * merge's.  Any other state: its distinct rows in slot order.
 */
void		svc_state_rows_stored(const uint8_t *buf, double *rows);

#endif							/* SVC_STATE_H */
