/*
 * cvi_state.h - svc_cvi_agg's state: the rows the validity indices need
 *
 * Davies-Bouldin, compactness and silhouette need the rows themselves, so
 * unlike the training state this one grows with the group: it keeps the
 * features and cluster of every row that has a cluster, the (cluster,
 * class) pair of every row that also has a class, and a count of rows
 * that have features but no cluster.  It is one flat little-endian byte
 * buffer (the payload of a varlena), so PostgreSQL updates it in place
 * row by row, parallel workers and Citus nodes ship it as an ordinary
 * value, and two states of disjoint rows merge by appending.
 *
 * Layout (one capacity for every array; n_lab <= n <= capacity):
 *   "SVCC" u16 version u16 flags u32 dims u32 0
 *   u64 capacity u64 n u64 n_lab u64 n_unassigned
 *   f64 x[capacity * dims]
 *   i32 cluster[capacity]
 *   i32 lab_cluster[capacity] i32 lab_class[capacity]   (with a class only)
 * dims is 0 until the first row with features, and capacity 0 with it.
 */
#ifndef SVC_CVI_STATE_H
#define SVC_CVI_STATE_H

#include "svc_core.h"
#include "cvi.h"

#define SVC_CVI_STATE_MAGIC "SVCC"
#define SVC_CVI_STATE_VERSION 1
#define SVC_CVI_STATE_HEADER_SIZE (4 + 2 + 2 + 4 + 4 + 4 * 8)

/* The first capacity a state grows to: a small group pays for few rows. */
#define SVC_CVI_STATE_FIRST_CAPACITY 16

/*
 * Bytes of a state of dims features (0 only with capacity 0) and room for
 * capacity rows; 0 when that overflows or passes max_bytes.
 */
size_t		svc_cvi_state_size(int32_t dims, int64_t capacity, bool has_class,
							   size_t max_bytes);

/* Initialise an empty state (no rows, dims 0, capacity 0) in buf. */
void		svc_cvi_state_init(uint8_t *buf, bool has_class);

/* Validate a state received from outside (text input, a worker, a node). */
SvcStatus	svc_cvi_state_check(const uint8_t *buf, size_t len, SvcError *err);

bool		svc_cvi_state_has_class(const uint8_t *buf);
int32_t		svc_cvi_state_dims(const uint8_t *buf);
int64_t		svc_cvi_state_capacity(const uint8_t *buf);
int64_t		svc_cvi_state_rows(const uint8_t *buf);	/* rows with a cluster */

/*
 * Add one row: x holds dims finite values, dims the state's (checked by
 * the caller, who reports a mismatch in its own words) or any when the
 * state has none yet.  A row without a cluster is only counted; a row
 * without a class (or in a state without classes) has no pair.  Returns
 * false, changing nothing, when the row must be kept but the state is
 * full: the caller grows it with svc_cvi_state_copy and calls again.
 */
bool		svc_cvi_state_add(uint8_t *buf, const double *x, int32_t dims,
							  bool has_cluster, int32_t cluster,
							  bool has_class, int32_t klass);

/* The capacity to grow to for need rows: doubling, from the first capacity. */
int64_t		svc_cvi_state_next_capacity(int64_t capacity, int64_t need);

/*
 * Copy a state into dst, a buffer of svc_cvi_state_size(dims, capacity)
 * bytes with capacity >= the rows kept; dims is the state's, or the one it
 * is about to take when it has none.
 */
void		svc_cvi_state_copy(const uint8_t *src, uint8_t *dst, int32_t dims,
							   int64_t capacity);

/*
 * Append state b to state a, which has room for the rows of both (and the
 * same dims, or either has none: the caller checks and reports).  Both
 * must be states of the same aggregate form (with or without a class).
 */
SvcStatus	svc_cvi_state_merge(uint8_t *a, const uint8_t *b, SvcError *err);

/*
 * The indices' input from a state, with the rows sorted by cluster and
 * then by their features, so the indices (their floating-point sums and
 * the samples taken past the exact limit) do not depend on the order in
 * which the rows arrived or on how parallel workers split them.  Arrays
 * are allocated from env; free them with svc_cvi_state_input_free.
 */
SvcStatus	svc_cvi_state_input(const SvcEnv *env, const uint8_t *buf,
								SvcCviInput *in, SvcError *err);
void		svc_cvi_state_input_free(const SvcEnv *env, SvcCviInput *in);

#endif							/* SVC_CVI_STATE_H */
