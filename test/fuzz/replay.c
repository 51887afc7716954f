/*
 * replay.c - a main() that feeds files to a fuzz target, without libFuzzer
 *
 * Linked with one fuzz_*.c and the core, under ASan and UBSan (see
 * replay.sh), it runs the very LLVMFuzzerTestOneInput the fuzzer runs on
 * each file named on the command line, so the seed corpus and the inputs
 * that once crashed stay checked by the normal test suite.  A broken
 * invariant or a sanitizer report aborts with a non-zero status.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <string.h>

static uint8_t *
read_file(const char *path, size_t *size)
{
	FILE	   *f = fopen(path, "rb");
	uint8_t    *buf = NULL;
	size_t		cap = 0,
				len = 0;

	if (f == NULL)
		return NULL;
	for (;;)
	{
		size_t		n;

		if (len == cap)
		{
			uint8_t    *bigger;

			cap = cap ? cap * 2 : 4096;
			bigger = realloc(buf, cap);
			if (bigger == NULL)
			{
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = bigger;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f))
	{
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*size = len;
	return buf;
}

int
main(int argc, char **argv)
{
	int			status = 0;

	if (argc < 2)
	{
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
	{
		size_t		size = 0;
		uint8_t    *data = read_file(argv[i], &size);
		uint8_t    *exact;

		if (data == NULL)
		{
			fprintf(stderr, "%s: cannot read: %s\n", argv[i], strerror(errno));
			status = 1;
			continue;
		}
		/* an exact-size copy, as libFuzzer passes, so ASan sees overreads */
		exact = malloc(size ? size : 1);
		if (exact == NULL)
			abort();
		memcpy(exact, data, size);
		free(data);
		LLVMFuzzerTestOneInput(exact, size);
		free(exact);
	}
	return status;
}
