/*
 * make_seeds.c - writes the seed corpus of fuzz_model and fuzz_state
 *
 *     make_seeds CORPUS_DIR
 *
 * writes models trained by the core on tiny deterministic data sets into
 * CORPUS_DIR/model/ and aggregate states (empty, filling, full reservoir)
 * into CORPUS_DIR/state/.  The option seeds are plain JSON text
 * files kept in corpus/options/ by hand.  run.sh does not regenerate the
 * committed seeds; run this after a format change:
 *     bash test/fuzz/run.sh --seeds
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "label_cut.h"
#include "model.h"
#include "options.h"
#include "options_text.h"
#include "state.h"
#include "cvi_state.h"
#include "model_codec.h"
#include "../unit/unit_state.h"

static const SvcEnv *env = &svc_env_malloc;

static void
die(const char *what, const SvcError *err)
{
	fprintf(stderr, "make_seeds: %s: %s %s\n", what,
			err ? err->message : "", err ? err->detail : "");
	exit(1);
}

static void
write_file(const char *dir, const char *sub, const char *name,
		   const uint8_t *data, size_t len)
{
	char		path[4096];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0)
	{
		fprintf(stderr, "make_seeds: cannot write %s\n", path);
		exit(1);
	}
	printf("%s (%zu bytes)\n", path, len);
}

/* n rows of d values in k blobs on a circle of radius 4, seeded. */
static double *
blobs(int64_t n, int32_t d, int k, uint64_t seed)
{
	double	   *x = malloc(sizeof(double) * (size_t) n * (size_t) d);
	SvcRng		rng;

	if (x == NULL)
		die("out of memory", NULL);
	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
		{
			int			c = (int) (i % k);
			double		centre = (j == 0 ? 4.0 : 0.0) * (c % 2 ? -1.0 : 1.0) + (j == 1 ? 4.0 * c : 0.0);

			x[i * d + j] = centre + (svc_rng_unit(&rng) - 0.5) * 2.0;
		}
	return x;
}

/* When set, the seeds label rows: every 7th normal, every 11th an anomaly. */
static bool seed_labels = false;

static int8_t
seed_label(int64_t i)
{
	return i % 7 == 0 ? 1 : i % 11 == 0 ? -1 : 0;
}

static void
model_seed(const char *dir, const char *name, int64_t n, int32_t d, int k,
		   const char *json)
{
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	double	   *x = blobs(n, d, k, (uint64_t) n * 31 + (uint64_t) d);
	uint8_t    *bytes;
	size_t		len;

	svc_options_default(&opt);
	if (svc_options_parse(json, strlen(json), &opt, &err) != SVC_OK)
		die(json, &err);
	if (seed_labels)
	{
		int8_t	   *lab = calloc((size_t) n, 1);

		for (int64_t i = 0; i < n; i++)
			lab[i] = seed_label(i);
		if (svc_fit_rows_labelled(env, x, lab, n, d, &opt, &m, &err) != SVC_OK)
			die(name, &err);
		free(lab);
	}
	else if (svc_fit_rows(env, x, n, d, &opt, &m, &err) != SVC_OK)
		die(name, &err);
	len = svc_model_encoded_size(&m);
	bytes = malloc(len);
	if (bytes == NULL)
		die("out of memory", NULL);
	svc_model_encode(&m, bytes);
	write_file(dir, "model", name, bytes, len);
	free(bytes);
	svc_model_free(env, &m);
	free(x);
}

/* A model of n rows trained with json, then warm-started on n_new more (section 5). */
static void
warm_model_seed(const char *dir, const char *name, int64_t n, int64_t n_new, int32_t d,
				const char *json, uint8_t **init_out, size_t *init_len)
{
	SvcOptions	opt;
	SvcModel	init,
				m;
	SvcError	err;
	double	   *x = blobs(n + n_new, d, 3, (uint64_t) n * 13 + (uint64_t) d);
	uint8_t    *bytes;
	size_t		len;

	svc_options_default(&opt);
	if (svc_options_parse(json, strlen(json), &opt, &err) != SVC_OK)
		die(json, &err);
	if (svc_fit_rows(env, x, n, d, &opt, &init, &err) != SVC_OK)
		die(name, &err);
	if (svc_fit_rows_warm(env, x + n * d, n_new, d, &opt, &init, &m, &err) != SVC_OK)
		die(name, &err);
	len = svc_model_encoded_size(&m);
	bytes = malloc(len);
	if (bytes == NULL)
		die("out of memory", NULL);
	svc_model_encode(&m, bytes);
	write_file(dir, "model", name, bytes, len);
	free(bytes);
	*init_len = svc_model_encoded_size(&init);
	*init_out = malloc(*init_len);
	if (*init_out == NULL)
		die("out of memory", NULL);
	svc_model_encode(&init, *init_out);
	svc_model_free(env, &init);
	svc_model_free(env, &m);
	free(x);
}

/*
 * A model cut again twice (section 7, the clusters' ids and links): to
 * n_clusters 2 (a merge), then to 3 (a split, with an id never used).
 */
static void
recut_model_seed(const char *dir, const char *name)
{
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	double	   *x = blobs(60, 2, 3, 60 * 31 + 2);
	uint8_t    *bytes;
	size_t		len;
	const char *json = "{\"budget\": 12, \"max_iter\": 2000, \"min_cluster_size\": 3}";

	svc_options_default(&opt);
	if (svc_options_parse(json, strlen(json), &opt, &err) != SVC_OK ||
		svc_fit_rows(env, x, 60, 2, &opt, &m, &err) != SVC_OK)
		die(name, &err);
	opt.n_clusters = 2;
	if (svc_model_recut(env, &m, &opt, &err) != SVC_OK)
		die(name, &err);
	opt.n_clusters = 3;
	if (svc_model_recut(env, &m, &opt, &err) != SVC_OK)
		die(name, &err);
	len = svc_model_encoded_size(&m);
	bytes = malloc(len);
	if (bytes == NULL)
		die("out of memory", NULL);
	svc_model_encode(&m, bytes);
	write_file(dir, "model", name, bytes, len);
	free(bytes);
	svc_model_free(env, &m);
	free(x);
}

/* The state of a warm start of init (init_len bytes) on n rows. */
static void
warm_state_seed(const char *dir, const char *name, int64_t n, int32_t d,
				const uint8_t *init, size_t init_len)
{
	SvcModel	m;
	SvcError	err;
	double	   *x = blobs(n, d, 3, (uint64_t) n * 19 + (uint64_t) d);
	uint8_t    *s;

	if (svc_model_decode(env, init, init_len, &m, &err) != SVC_OK)
		die(name, &err);
	s = unit_state_new(d, 16, &m.opt, init, init_len);
	if (s == NULL)
		die("out of memory", NULL);
	if (!unit_state_add_rows(&s, x, n, NULL))
		die("state did not grow", NULL);
	if (svc_state_check(s, unit_state_len(s), &err) != SVC_OK)
		die(name, &err);
	write_file(dir, "state", name, s, unit_state_len(s));
	svc_model_free(env, &m);
	free(s);
	free(x);
}

static void
state_seed(const char *dir, const char *name, int64_t n, int32_t d,
		   const char *json)
{
	SvcOptions	opt;
	SvcError	err;
	double	   *x = blobs(n > 0 ? n : 1, d, 2, (uint64_t) n * 17 + (uint64_t) d);
	int64_t		cap = 16;
	uint8_t    *s;

	svc_options_default(&opt);
	if (svc_options_parse(json, strlen(json), &opt, &err) != SVC_OK)
		die(json, &err);
	if (cap > opt.sample)
		cap = opt.sample;
	s = unit_state_new(d, cap, &opt, NULL, 0);
	if (s == NULL)
		die("out of memory", NULL);
	for (int64_t i = 0; i < n; i++)
		if (unit_state_add(&s, x + i * d, seed_labels ? seed_label(i) : 0) < 0)
			die("state did not grow", NULL);
	if (svc_state_check(s, unit_state_len(s), &err) != SVC_OK)
		die(name, &err);
	write_file(dir, "state", name, s, unit_state_len(s));
	free(s);
	free(x);
}

/* An svc_cvi_agg state of n rows of d features (every 7th without a
 * cluster, every 5th without a class), grown as the transition function
 * grows it. */
static void
cvi_state_seed(const char *dir, const char *name, int64_t n, int32_t d, bool has_class)
{
	double	   *x = blobs(n > 0 ? n : 1, d, 3, (uint64_t) n * 31 + (uint64_t) d);
	size_t		len = SVC_CVI_STATE_HEADER_SIZE;
	uint8_t    *s = malloc(len);
	SvcError	err;

	if (s == NULL)
		die("out of memory", NULL);
	svc_cvi_state_init(s, has_class);
	for (int64_t i = 0; i < n; i++)
	{
		bool		has_cluster = i % 7 != 0;
		int32_t		cluster = (int32_t) (i % 3) - 1;

		if (!svc_cvi_state_add(s, x + i * d, d, has_cluster, cluster, i % 5 != 0, (int32_t) (i % 4)))
		{
			int64_t		cap = svc_cvi_state_next_capacity(svc_cvi_state_capacity(s),
														  svc_cvi_state_rows(s) + 1);
			uint8_t    *g;

			len = svc_cvi_state_size(d, cap, has_class, SIZE_MAX);
			g = malloc(len);
			if (g == NULL)
				die("out of memory", NULL);
			svc_cvi_state_copy(s, g, d, cap);
			free(s);
			s = g;
			if (!svc_cvi_state_add(s, x + i * d, d, has_cluster, cluster, i % 5 != 0, (int32_t) (i % 4)))
				die("state did not grow", NULL);
		}
	}
	if (svc_cvi_state_check(s, len, &err) != SVC_OK)
		die(name, &err);
	write_file(dir, "cvi_state", name, s, len);
	free(s);
	free(x);
}

int
main(int argc, char **argv)
{
	const char *dir;

	if (argc != 2)
	{
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	model_seed(dir, "blobs2d.bin", 60, 2, 2, "{\"budget\": 12, \"max_iter\": 2000}");
	model_seed(dir, "paper3d.bin", 45, 3, 3,
			   "{\"budget\": 8, \"strategy\": \"removal\", \"labeling\": \"paper\", \"max_iter\": 1000}");
	model_seed(dir, "line1d.bin", 24, 1, 2,
			   "{\"budget\": 6, \"scale\": \"minmax\", \"gamma\": 4, \"nu\": 0, \"max_iter\": 500}");
	model_seed(dir, "random4d.bin", 40, 4, 1,
			   "{\"budget\": 5, \"strategy\": \"project-random\", \"k\": 2, \"max_iter\": 500}");
	/* the other cuts of the stored tree */
	model_seed(dir, "eom3blobs.bin", 60, 2, 3,
			   "{\"budget\": 12, \"max_iter\": 2000, \"cut\": \"eom\", \"min_cluster_size\": 4}");
	model_seed(dir, "level2d.bin", 60, 2, 3, "{\"budget\": 12, \"max_iter\": 2000, \"level\": 0}");
	model_seed(dir, "count2d.bin", 60, 2, 3, "{\"budget\": 12, \"max_iter\": 2000, \"n_clusters\": 2}");
	/* format version 3: a width per support vector */
	model_seed(dir, "widths2d.bin", 60, 2, 3, "{\"budget\": 12, \"max_iter\": 2000, \"bandwidth_k\": 4}");
	/* format version 4: the exact solver's report, without and with widths */
	model_seed(dir, "smo2d.bin", 60, 2, 3, "{\"solver\": \"smo\"}");
	model_seed(dir, "smowidths2d.bin", 60, 2, 3,
			   "{\"solver\": \"smo\", \"bandwidth_k\": 4, \"cache_mb\": 1, \"nu\": 0.2}");
	/* format version 5: a section (the extended options), bsgd and smo */
	model_seed(dir, "ext2d.bin", 60, 2, 3,
			   "{\"budget\": 12, \"max_iter\": 2000, \"label_radius\": 0.3}");
	model_seed(dir, "smoext2d.bin", 60, 2, 3,
			   "{\"solver\": \"smo\", \"aid_gap\": 0.001, \"label_sample\": 7}");
	/* format version 5 with aid's report (section 2), and with both sections */
	model_seed(dir, "aid2d.bin", 60, 2, 3, "{\"solver\": \"aid\"}");
	model_seed(dir, "aidext2d.bin", 60, 2, 3, "{\"solver\": \"aid\", \"aid_gap\": 1e-9}");
	/* format version 4 with solver id 4 (incremental) */
	model_seed(dir, "incr2d.bin", 60, 2, 3, "{\"solver\": \"incremental\"}");
	state_seed(dir, "empty2d.bin", 0, 2, "{}");
	state_seed(dir, "one1d.bin", 1, 1, "{\"budget\": 3}");
	state_seed(dir, "filling2d.bin", 20, 2, "{\"budget\": 10, \"max_iter\": 500}");
	state_seed(dir, "full3d.bin", 40, 3, "{\"sample\": 8, \"budget\": 4, \"labeling\": \"paper\"}");
	cvi_state_seed(dir, "empty.bin", 0, 2, true);
	cvi_state_seed(dir, "class2d.bin", 40, 2, true);
	cvi_state_seed(dir, "plain3d.bin", 20, 3, false);
	cvi_state_seed(dir, "one1d.bin", 1, 1, true);
	state_seed(dir, "smo2d.bin", 30, 2, "{\"solver\": \"smo\", \"sample\": 24}");
	state_seed(dir, "ext2d.bin", 12, 2, "{\"budget\": 6, \"label_radius\": 0.5}");
	/* section 7: the ids of a model cut again (a warm start's too, below) */
	recut_model_seed(dir, "recut2d.bin");
	/* a warm start: section 5 of the model, the init model in the state's tail */
	{
		uint8_t    *init;
		size_t		init_len;

		warm_model_seed(dir, "warm2d.bin", 60, 30, 2, "{\"budget\": 12, \"max_iter\": 2000}",
						&init, &init_len);
		warm_state_seed(dir, "warm2d.bin", 20, 2, init, init_len);
		free(init);
	}
	/* kept rows (section 6, extended options bytes 25-26): a fit, a warm
	 * start whose window overflows, and a state carrying such an init */
	model_seed(dir, "keep2d.bin", 60, 2, 3,
			   "{\"solver\": \"incremental\", \"keep_rows\": true, \"sample\": 80}");
	{
		uint8_t    *init;
		size_t		init_len;

		warm_model_seed(dir, "keepwarm2d.bin", 40, 30, 2,
						"{\"solver\": \"smo\", \"keep_rows\": true, \"window\": \"reservoir\", "
						"\"sample\": 50}", &init, &init_len);
		warm_state_seed(dir, "keepwarm2d.bin", 20, 2, init, init_len);
		free(init);
	}
	/* labelled rows: section 3 of the model, the labelled area of the state */
	seed_labels = true;
	model_seed(dir, "labelled2d.bin", 60, 2, 3, "{\"budget\": 12, \"max_iter\": 2000}");
	model_seed(dir, "smolabelled2d.bin", 60, 2, 3, "{\"solver\": \"smo\"}");
	/* negative alphas (labelled anomalies in smo's dual), anomaly_bound at byte 32 */
	model_seed(dir, "smoanomaly2d.bin", 60, 2, 3, "{\"solver\": \"smo\", \"anomaly_bound\": 5}");
	state_seed(dir, "labelled2d.bin", 40, 2, "{\"budget\": 6, \"sample\": 20, \"label_sample\": 5}");
	seed_labels = false;
	return 0;
}
