/*
 * unit.h - a tiny test harness for the core's unit tests
 *
 * Each test binary calls CHECK for every assertion and returns
 * unit_summary() from main; the runner adds the counts up.
 */
#ifndef SVC_UNIT_H
#define SVC_UNIT_H

#include <stdio.h>

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

/* Prints "file: N passed, N failed" and returns the exit status. */
static inline int
unit_summary(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, unit_passed, unit_failed);
	return unit_failed == 0 ? 0 : 1;
}

#endif
