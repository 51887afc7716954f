/*
 * test_model_bytes.c - the model bytes of every configuration the
 * benchmark trains, pinned by a hash
 *
 * A refactor must not change what users get.  Each configuration below
 * is trained on generated rows through the aggregate's state (rows added
 * to a state, and to two states merged, as parallel workers do), encoded,
 * and hashed; the hashes are compared with the table.  A change that is
 * meant to alter model bytes regenerates the table with
 *     SVC_PRINT_HASHES=1 ./build/plain/test_model_bytes
 * and says so in its commit message.
 *
 * The hashes hold for the unit tests' build (the core at -O1 without
 * -ffast-math); the extension's kernel loops are built with vector maths,
 * whose last bits may differ from one machine to the next.
 */
#include "fit.h"
#include "model.h"
#include "model_codec.h"
#include "options.h"
#include "options_text.h"
#include "state.h"
#include "unit.h"
#include "unit_state.h"
#include "unit_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Dataset
{
	const char *name;
	int32_t		dims;
	int64_t		n;
	double	   *rows;
} Dataset;

/* Three round blobs in 2-D, one of them small. */
static void
make_blobs(Dataset *ds)
{
	static const double centre[3][2] = {{0, 0}, {5, 0}, {2, 4}};
	SvcRng		rng;

	ds->name = "blobs";
	ds->dims = 2;
	ds->n = 450;
	ds->rows = malloc(sizeof(double) * 2 * ds->n);
	svc_rng_seed(&rng, 11);
	for (int64_t i = 0; i < ds->n; i++)
	{
		int			c = i % 9 < 4 ? 0 : (i % 9 < 7 ? 1 : 2);

		ds->rows[2 * i] = centre[c][0] + 0.6 * unit_normal(&rng);
		ds->rows[2 * i + 1] = centre[c][1] + 0.6 * unit_normal(&rng);
	}
}

/* A ring around a blob, with a few far outliers. */
static void
make_ring(Dataset *ds)
{
	SvcRng		rng;

	ds->name = "ring";
	ds->dims = 2;
	ds->n = 400;
	ds->rows = malloc(sizeof(double) * 2 * ds->n);
	svc_rng_seed(&rng, 12);
	for (int64_t i = 0; i < ds->n; i++)
	{
		double		t = 2 * M_PI * svc_rng_unit(&rng);

		if (i % 20 == 19)
		{
			ds->rows[2 * i] = 12 * (svc_rng_unit(&rng) - 0.5);
			ds->rows[2 * i + 1] = 12 * (svc_rng_unit(&rng) - 0.5);
		}
		else if (i % 2 == 0)
		{
			ds->rows[2 * i] = 4 * cos(t) + 0.2 * unit_normal(&rng);
			ds->rows[2 * i + 1] = 4 * sin(t) + 0.2 * unit_normal(&rng);
		}
		else
		{
			ds->rows[2 * i] = 0.5 * unit_normal(&rng);
			ds->rows[2 * i + 1] = 0.5 * unit_normal(&rng);
		}
	}
}

/* Four blobs in 5-D with unequal spreads per column. */
static void
make_wide(Dataset *ds)
{
	SvcRng		rng;

	ds->name = "wide";
	ds->dims = 5;
	ds->n = 320;
	ds->rows = malloc(sizeof(double) * 5 * ds->n);
	svc_rng_seed(&rng, 13);
	for (int64_t i = 0; i < ds->n; i++)
		for (int j = 0; j < 5; j++)
			ds->rows[5 * i + j] = (double) ((i % 4) == j) * 6 * (j + 1)
				+ (j + 1) * 0.7 * unit_normal(&rng);
}

/* FNV-1a, 64 bits. */
static uint64_t
fnv1a(const uint8_t *p, size_t n)
{
	uint64_t	h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < n; i++)
	{
		h ^= p[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/*
 * A state of the given rows, as the transition function builds it; stream
 * 3 adds them in reverse order.
 */
static uint8_t *
state_of(const Dataset *ds, int64_t from, int64_t to, const SvcOptions *opt,
		 uint64_t stream)
{
	uint8_t    *st = unit_state_new(ds->dims, 4, opt, NULL, 0);

	if (stream > 0)
		svc_state_set_stream(st, stream);
	for (int64_t i = from; i < to; i++)
	{
		const double *row = ds->rows + (stream == 3 ? from + to - 1 - i : i) * ds->dims;

		if (unit_state_add(&st, row, 0) < 0)
		{
			free(st);
			return NULL;		/* cannot happen: room for the row */
		}
	}
	return st;
}

/*
 * Train through the state (split into two merged states when split, the
 * rows in reverse order when reversed) and hash the model's bytes; 0 when
 * training fails.
 */
static uint64_t
model_hash(const Dataset *ds, const char *json, bool split, bool reversed)
{
	SvcOptions	opt;
	SvcError	err;
	SvcModel	m;
	uint8_t    *st,
			   *enc;
	uint64_t	h = 0;
	size_t		len;

	svc_options_default(&opt);
	if (svc_options_parse(json, strlen(json), &opt, &err) != SVC_OK)
	{
		printf("options %s: %s\n", json, err.message);
		return 0;
	}
	if (split)
	{
		int64_t		half = ds->n / 2;
		uint8_t    *a = state_of(ds, 0, half, &opt, 1),
				   *b = state_of(ds, half, ds->n, &opt, 2);
		int64_t		kept = svc_state_merged_kept(a, b);

		st = malloc(svc_state_size(ds->dims, kept));
		svc_state_copy(a, st, kept);
		if (svc_state_merge(st, b, &err) != SVC_OK)
		{
			free(a);
			free(b);
			free(st);
			return 0;
		}
		free(a);
		free(b);
	}
	else
		st = state_of(ds, 0, ds->n, &opt, reversed ? 3 : 0);

	memset(&m, 0, sizeof(m));
	if (svc_fit_state(&svc_env_malloc, st, &m, &err) == SVC_OK)
	{
		len = svc_model_encoded_size(&m);
		enc = malloc(len);
		svc_model_encode(&m, enc);
		h = fnv1a(enc, len);
		free(enc);
	}
	else
		printf("fit %s %s: %s (%s)\n", ds->name, json, err.message, err.detail);
	svc_model_free(&svc_env_malloc, &m);
	free(st);
	return h;
}

/* Options the benchmark trains with: its defaults, labelling, tuned and grid sections. */
static const char *const configs[] = {
	"{}",
	"{\"seed\": 2}",
	"{\"seed\": 5}",
	"{\"labeling\": \"paper\"}",
	"{\"scale\": \"none\"}",
	"{\"scale\": \"minmax\"}",
	"{\"gamma\": 3.5}",
	"{\"bandwidth_k\": 15}",
	"{\"scale\": \"none\", \"bandwidth_k\": 15, \"seed\": 3}",
	"{\"strategy\": \"removal\", \"budget\": 50}",
	"{\"strategy\": \"project-knn\", \"budget\": 50}",
	"{\"strategy\": \"project-random\", \"budget\": 50}",
	"{\"strategy\": \"unbudgeted\"}",
	"{\"strategy\": \"removal\", \"budget\": 50, \"gamma\": 8, \"c\": 32}",
	"{\"strategy\": \"project-knn\", \"budget\": 50, \"gamma\": 0.125, \"c\": 0.5}",
	"{\"strategy\": \"project-random\", \"budget\": 50, \"gamma\": 2, \"c\": 2, \"labeling\": \"paper\"}",
	"{\"outlier_fraction\": 0}",
	"{\"outlier_fraction\": 0.2, \"epsilon\": 0.1}",
	"{\"n_clusters\": 3}",
	"{\"level\": 0.05}",
	"{\"cut\": \"eom\"}",
	"{\"merge_ratio\": 0.2, \"min_cluster_size\": 10}",
	"{\"sample\": 200}",
	"{\"tol\": 0.001, \"max_iter\": 5000}",
};
#define N_CONFIGS (sizeof(configs) / sizeof(configs[0]))
#define N_DATASETS 3

/*
 * The hashes: [dataset][config][serial, merged].  Regenerate with
 * SVC_PRINT_HASHES=1 only when a change is meant to alter model bytes.
 */
static const uint64_t expected[N_DATASETS][N_CONFIGS][2] = {
#include "model_hashes.inc"
};

int
main(void)
{
	Dataset		ds[N_DATASETS];
	bool		print = getenv("SVC_PRINT_HASHES") != NULL;
	/* under valgrind, a sample: every fourth configuration of one set */
	bool		few = under_valgrind() && !print;

	make_blobs(&ds[0]);
	make_ring(&ds[1]);
	make_wide(&ds[2]);
	for (int d = 0; d < (few ? 1 : N_DATASETS); d++)
	{
		if (print)
			printf("\t{\t\t\t\t\t\t\t/* %s */\n", ds[d].name);
		for (size_t c = 0; c < N_CONFIGS; c += few ? 4 : 1)
		{
			bool		with_merged = !few || c == 0;
			uint64_t	serial = model_hash(&ds[d], configs[c], false, false),
						merged = with_merged ? model_hash(&ds[d], configs[c], true, false) : 0,
						reversed = with_merged ? model_hash(&ds[d], configs[c], false, true) : 0;

			if (print)
				printf("\t\t{UINT64_C(0x%016llx), UINT64_C(0x%016llx)},\t/* %s */\n",
					   (unsigned long long) serial, (unsigned long long) merged,
					   configs[c]);
			CHECK(serial != 0 && serial == expected[d][c][0],
				  "%s %s: model bytes changed (hash %016llx)", ds[d].name, configs[c],
				  (unsigned long long) serial);
			if (with_merged)
			{
				CHECK(merged != 0 && merged == expected[d][c][1],
					  "%s %s, merged states: model bytes changed (hash %016llx)",
					  ds[d].name, configs[c], (unsigned long long) merged);
				/* the model does not depend on how the rows were split, or their order */
				CHECK(merged == serial && reversed == serial,
					  "%s %s: merged states and the rows reversed give the serial model",
					  ds[d].name, configs[c]);
			}
		}
		if (print)
			printf("\t},\n");
	}
	for (int d = 0; d < N_DATASETS; d++)
		free(ds[d].rows);
	return unit_summary("test_model_bytes");
}
