/*
 * fuzz_common.h - shared by the fuzz targets (fuzz_*.c)
 *
 * Each target defines LLVMFuzzerTestOneInput.  It is linked either with
 * libFuzzer (-fsanitize=fuzzer, by run.sh) or with replay.c, whose main()
 * feeds it files (by replay.sh), both under ASan and UBSan.  A broken
 * invariant aborts, which both drivers report as a failure.
 */
#ifndef SVC_FUZZ_COMMON_H
#define SVC_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "svc_core.h"

#define FUZZ_CHECK(cond) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", \
					#cond, __FILE__, __LINE__); \
			abort(); \
		} \
	} while (0)

/* An error the core reported must say something. */
#define FUZZ_CHECK_ERROR(st, err) \
	FUZZ_CHECK((st) != SVC_OK && (err).status == (st) && (err).message[0] != '\0')

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif							/* SVC_FUZZ_COMMON_H */
