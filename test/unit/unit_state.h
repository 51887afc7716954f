/*
 * unit_state.h - a training state built row by row, grown as
 * svc_train_transfn grows it
 *
 * For the unit tests, the fuzz drivers (fuzz_state.c, make_seeds.c) and
 * the tools (quality_cli.c): they include it by its path.  It uses the
 * core alone, not the unit tests' harness (unit.h), so that every one of
 * those builds can include it; each caller checks the results its own way.
 */
#ifndef SVC_UNIT_STATE_H
#define SVC_UNIT_STATE_H

#include "state.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* The bytes of a state (its rows, its labelled rows and its init model). */
static inline size_t
unit_state_len(const uint8_t *s)
{
	return svc_state_size_warm(svc_state_dims(s), svc_state_capacity(s),
							   svc_state_lab_capacity(s), svc_state_init_len(s));
}

/*
 * An empty state of dims columns with room for cap rows, continuing init
 * (init_len bytes; 0: a state of no warm start); NULL when it cannot be
 * made.  free() it.
 */
static inline uint8_t *
unit_state_new(int32_t dims, int64_t cap, const SvcOptions *opt, const uint8_t *init,
			   size_t init_len)
{
	size_t		len = svc_state_size_warm(dims, cap, 0, init_len);
	uint8_t    *s = len > 0 ? calloc(1, len) : NULL;

	if (s == NULL)
		return NULL;
	svc_state_init(s, dims, cap, opt);
	if (init_len > 0)
		svc_state_set_init(s, init, init_len);
	return s;
}

static inline bool
unit_state_add_once(uint8_t *s, const double *row, int label)
{
	return label ? svc_state_add_labelled(s, row, label) : svc_state_add(s, row);
}

/*
 * Add a row with this label (1 or -1; 0: an unlabelled row).  When the
 * state is full, copies it into a buffer with room for the next capacity
 * of that kind of row (svc_state_next_capacity or _next_lab_capacity),
 * frees the old one and adds the row there.  Returns 0 when the row went
 * in as the state was, 1 when it went into a grown copy, -1 when the
 * state could not grow or its grown copy did not take the row (*s is then
 * a state still, without the row).
 */
static inline int
unit_state_add(uint8_t **s, const double *row, int label)
{
	int64_t		cap = svc_state_capacity(*s),
				lab_cap = svc_state_lab_capacity(*s);
	size_t		len;
	uint8_t    *grown;

	if (unit_state_add_once(*s, row, label))
		return 0;
	if (label)
		lab_cap = svc_state_next_lab_capacity(*s);
	else
		cap = svc_state_next_capacity(*s);
	if (cap <= svc_state_capacity(*s) && lab_cap <= svc_state_lab_capacity(*s))
		return -1;
	len = svc_state_size_warm(svc_state_dims(*s), cap, lab_cap, svc_state_init_len(*s));
	grown = len > 0 ? calloc(1, len) : NULL;
	if (grown == NULL)
		return -1;
	svc_state_copy_labelled(*s, grown, cap, lab_cap);
	free(*s);
	*s = grown;
	return unit_state_add_once(*s, row, label) ? 1 : -1;
}

/*
 * Add n rows x (the state's dims values each) in order, each with its
 * label (labels NULL: none labelled); false when one of them did not go
 * in (the rows after it are not added).
 */
static inline bool
unit_state_add_rows(uint8_t **s, const double *x, int64_t n, const int8_t *labels)
{
	size_t		dims = (size_t) svc_state_dims(*s);

	for (int64_t i = 0; i < n; i++)
		if (unit_state_add(s, x + (size_t) i * dims, labels ? labels[i] : 0) < 0)
			return false;
	return true;
}

#endif							/* SVC_UNIT_STATE_H */
