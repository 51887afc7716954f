/*
 * unit.h - a tiny test harness for the core's unit tests
 *
 * Each test binary calls CHECK for every assertion and returns
 * unit_summary() from main; the runner adds the counts up.
 */
#ifndef SVC_UNIT_H
#define SVC_UNIT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_passed = 0;
static int unit_failed = 0;

#define CHECK(cond, ...) \
	do { \
		if (cond) \
			unit_passed++; \
		else \
		{ \
			unit_failed++; \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__); \
			printf("\n"); \
		} \
	} while (0)

/*
 * A budget for the failure tests: the SvcEnv hooks below stop (interrupt)
 * or fail (allocation) once `left` calls are used up, and count the blocks
 * still live, so every failure path is checked for leaks.
 */
typedef struct UnitBudget
{
	long		left;			/* interrupt calls / allocations allowed */
	long		live;			/* allocations not yet freed */
} UnitBudget;

static inline bool
unit_stop_after(void *ctx)
{
	UnitBudget *b = ctx;

	return b->left-- <= 0;
}

static inline void *
unit_fail_after_alloc(void *ctx, size_t size)
{
	UnitBudget *b = ctx;

	if (b->left-- <= 0)
		return NULL;
	b->live++;
	return malloc(size);
}

/* a failed grow leaves the old block as it was: live and counted */
static inline void *
unit_fail_after_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
	UnitBudget *b = ctx;

	(void) old_size;
	if (b->left-- <= 0)
		return NULL;
	return realloc(ptr, new_size);
}

static inline void *
unit_counted_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
	(void) ctx;
	(void) old_size;
	return realloc(ptr, new_size);
}

/* counts without failing */
static inline void *
unit_counted_alloc(void *ctx, size_t size)
{
	((UnitBudget *) ctx)->live++;
	return malloc(size);
}

static inline void
unit_counted_free(void *ctx, void *p)
{
	((UnitBudget *) ctx)->live--;
	free(p);
}

/*
 * Under valgrind (which preloads its vgpreload libraries) the heavy loops
 * run a smaller share: exp() is some fifty times slower there, and
 * valgrind is after leaks and bad reads, not speed.
 */
static inline bool
under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p != NULL && strstr(p, "vgpreload") != NULL;
}

/* Prints "file: N passed, N failed" and returns the exit status. */
static inline int
unit_summary(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, unit_passed, unit_failed);
	return unit_failed == 0 ? 0 : 1;
}

#endif
