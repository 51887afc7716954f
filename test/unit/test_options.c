/*
 * test_options.c - the options: defaults, every key, every error, through
 * the text reader and through the typed setters
 */
#include "options.h"
#include "options_text.h"
#include "unit.h"
#include "unit_data.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static void
test_defaults_and_keys(void)
{
	SvcOptions	opt;
	SvcError	err;

	CHECK(parse("{}", &opt, &err) == SVC_OK, "empty object parses");
	CHECK(opt.budget == 300 && opt.k == 5 && opt.gamma == 0.0 && opt.tol == 0.01,
		  "defaults of budget, k, gamma, tol");
	CHECK(parse(" { \"budget\" : 50, \"strategy\": \"removal\", \"k\": 3, \"gamma\": 2.5,"
				"\"c\": 4, \"epsilon\": 0.2, \"tol\": 1e-3, \"max_iter\": 500, \"seed\": 7,"
				"\"scale\": \"minmax\", \"sample\": 1000, \"labeling\": \"paper\","
				"\"merge_ratio\": 0.5, \"min_cluster_share\": 0.1, \"nu\": 0.2 } ",
				&opt, &err) == SVC_OK, "every key parses: %s", err.message);
	CHECK(opt.budget == 50 && opt.strategy == SVC_STRATEGY_REMOVAL && opt.k == 3 &&
		  opt.gamma == 2.5 && opt.c == 4 && opt.epsilon == 0.2 && opt.tol == 1e-3 &&
		  opt.max_iter == 500 && opt.seed == 7 && opt.scale == SVC_SCALE_MINMAX &&
		  opt.sample == 1000 && opt.labeling == SVC_LABELING_PAPER &&
		  opt.merge_ratio == 0.5 && opt.min_cluster_share == 0.1 && opt.nu == 0.2,
		  "every key takes its value");
	CHECK(parse("{}", &opt, &err) == SVC_OK &&
		  opt.segment_points == SVC_SEGMENT_POINTS_AUTO &&
		  opt.labeling == SVC_LABELING_TREE, "segment_points defaults to \"auto\"");
	CHECK(parse("{\"segment_points\": 20}", &opt, &err) == SVC_OK && opt.segment_points == 20 &&
		  parse("{\"segment_points\": \"auto\"}", &opt, &err) == SVC_OK &&
		  opt.segment_points == SVC_SEGMENT_POINTS_AUTO, "segment_points 20 or \"auto\"");
	CHECK(parse("{\"labeling\": \"complete-graph\", \"segment_points\": 1}", &opt, &err) == SVC_OK &&
		  opt.labeling == SVC_LABELING_COMPLETE_GRAPH && opt.segment_points == 1,
		  "complete-graph with segment_points 1: %s", err.message);
	CHECK(parse("{\"gamma\": \"auto\", \"epsilon\": \"auto\"}", &opt, &err) == SVC_OK &&
		  opt.gamma == 0.0 && opt.epsilon == 0.0, "auto gamma and epsilon");
	CHECK(parse("{\"budget\": 50.0}", &opt, &err) == SVC_OK && opt.budget == 50,
		  "an integral 50.0 is an integer");
	CHECK(parse("{\"strategy\": \"unbudgeted\"}", &opt, &err) == SVC_OK &&
		  opt.strategy == SVC_STRATEGY_UNBUDGETED, "unbudgeted strategy");
	CHECK(parse("{\"strategy\": \"project-random\"}", &opt, &err) == SVC_OK &&
		  opt.strategy == SVC_STRATEGY_PROJECT_RANDOM, "project-random strategy");
}

static void
expect_error(const char *json, const char *fragment)
{
	SvcOptions	opt;
	SvcError	err;
	SvcStatus	st = parse(json, &opt, &err);

	CHECK(st == SVC_ERR_INVALID_PARAMETER, "%s is rejected", json);
	if (st != SVC_OK)
		CHECK(strstr(err.message, fragment) != NULL || strstr(err.detail, fragment) != NULL,
			  "%s: message \"%s\" / \"%s\" mentions \"%s\"", json, err.message,
			  err.detail, fragment);
}

static void
test_errors(void)
{
	expect_error("{\"bogus\": 1}", "unknown svclust option \"bogus\"");
	expect_error("{\"bogus\": 1}", "budget, strategy");
	expect_error("{\"budget\": 0}", "\"budget\" must be an integer between 1 and 100000");
	expect_error("{\"budget\": -5}", "budget");
	expect_error("{\"budget\": 2.5}", "budget");
	expect_error("{\"budget\": \"50\"}", "budget");
	expect_error("{\"budget\": 99999999999999999999999}", "budget");
	expect_error("{\"strategy\": \"fastest\"}", "strategy");
	expect_error("{\"k\": 0}", "\"k\"");
	expect_error("{\"k\": 65}", "\"k\"");
	expect_error("{\"gamma\": 0}", "gamma");
	expect_error("{\"gamma\": -1}", "gamma");
	expect_error("{\"gamma\": \"big\"}", "gamma");
	expect_error("{\"gamma\": 1e400}", "gamma");
	expect_error("{\"c\": 0}", "\"c\"");
	expect_error("{\"tol\": 0}", "tol");
	expect_error("{\"max_iter\": 0}", "max_iter");
	expect_error("{\"seed\": -1}", "seed");
	expect_error("{\"scale\": \"log\"}", "scale");
	expect_error("{\"sample\": 1}", "sample");
	expect_error("{\"labeling\": \"magic\"}", "labeling");
	expect_error("{\"labeling\": \"graph\"}", "\"tree\", \"paper\", \"complete-graph\"");
	expect_error("{\"segment_points\": 0}",
				 "\"segment_points\" must be an integer between 1 and 1000 or \"auto\"");
	expect_error("{\"segment_points\": 1001}", "segment_points");
	expect_error("{\"segment_points\": 2.5}", "segment_points");
	expect_error("{\"segment_points\": \"20\"}", "segment_points");
	expect_error("{\"merge_ratio\": 2}", "merge_ratio");
	expect_error("{\"nu\": 1}", "nu");
	expect_error("{\"budget\": [1]}", "budget");
	expect_error("{\"budget\": {\"a\": 1}}", "budget");
	expect_error("{\"budget\": null}", "budget");
	expect_error("{\"budget\": true}", "budget");
	expect_error("[1, 2]", "JSON object");
	expect_error("{\"budget\": 1", "JSON object");
	expect_error("{\"budget\" 1}", "JSON object");
	expect_error("{\"budget\": 1,}", "JSON object");
	expect_error("{} extra", "JSON object");
	expect_error("", "JSON object");
	expect_error("{\"a_very_long_key_that_is_longer_than_any_buffer_we_have_for_keys_xxxxxxxx\": 1}",
				 "unknown svclust option");
}

/* The cut keys, the alias of nu, and the keys a trained model refuses. */
static void
test_cut_keys(void)
{
	SvcOptions	opt;
	SvcError	err;
	const char *cut_json = "{\"level\": -0.25}";
	const char *train_json = "{\"seed\": 3}";

	CHECK(parse("{\"outlier_fraction\": 0.1, \"cut\": \"eom\", \"min_cluster_size\": 12,"
				" \"n_clusters\": 4}", &opt, &err) == SVC_OK, "cut keys parse: %s", err.message);
	CHECK(opt.nu == 0.1 && opt.cut == SVC_CUT_EOM && opt.min_cluster_size == 12 &&
		  opt.n_clusters == 4 && !opt.has_level, "cut keys take their values");
	CHECK(parse("{}", &opt, &err) == SVC_OK && opt.cut == SVC_CUT_PERSISTENCE &&
		  opt.merge_ratio == 0.4 && opt.n_clusters == 0 && !opt.has_level,
		  "cut defaults: persistence at 0.4, automatic");
	/* giving one of n_clusters and level clears the other */
	CHECK(parse("{\"n_clusters\": 4}", &opt, &err) == SVC_OK &&
		  svc_options_parse_cut(cut_json, strlen(cut_json), &opt, &err) == SVC_OK &&
		  opt.has_level && opt.level == -0.25 && opt.n_clusters == 0, "level clears n_clusters");
	CHECK(svc_options_parse_cut("{\"n_clusters\": 2}", 17, &opt, &err) == SVC_OK &&
		  opt.n_clusters == 2 && !opt.has_level, "n_clusters clears level");
	CHECK(svc_options_parse_cut("{\"level\": null}", 15, &opt, &err) == SVC_OK &&
		  !opt.has_level, "level null is no level");
	/* naming an automatic rule alone clears both; with one of them, keeps it */
	CHECK(parse("{\"n_clusters\": 4}", &opt, &err) == SVC_OK &&
		  svc_options_parse_cut("{\"cut\": \"eom\"}", 14, &opt, &err) == SVC_OK &&
		  opt.cut == SVC_CUT_EOM && opt.n_clusters == 0 && !opt.has_level,
		  "cut alone clears a stored n_clusters");
	CHECK(svc_options_parse_cut(cut_json, strlen(cut_json), &opt, &err) == SVC_OK &&
		  svc_options_parse_cut("{\"merge_ratio\": 0.3}", 20, &opt, &err) == SVC_OK &&
		  opt.merge_ratio == 0.3 && opt.cut == SVC_CUT_EOM && opt.n_clusters == 0 &&
		  !opt.has_level && opt.level == 0.0, "merge_ratio alone clears a stored level");
	CHECK(svc_options_parse_cut("{\"cut\": \"persistence\", \"n_clusters\": 3}", 39, &opt, &err) ==
		  SVC_OK && opt.n_clusters == 3 && opt.cut == SVC_CUT_PERSISTENCE,
		  "a rule with n_clusters keeps n_clusters");
	CHECK(svc_options_parse_cut("{\"min_cluster_size\": 7}", 23, &opt, &err) == SVC_OK &&
		  opt.n_clusters == 3 && opt.min_cluster_size == 7,
		  "min_cluster_size (every rule's) keeps n_clusters");
	CHECK(svc_options_parse_cut(train_json, strlen(train_json), &opt, &err) ==
		  SVC_ERR_INVALID_PARAMETER && strstr(err.message, "cannot change after training"),
		  "a training key is refused after training: %s", err.message);
	expect_error("{\"n_clusters\": 2, \"level\": 0}", "cannot both be set");
	expect_error("{\"n_clusters\": -1}", "n_clusters");
	expect_error("{\"n_clusters\": 1000001}", "n_clusters");
	expect_error("{\"min_cluster_size\": -1}", "min_cluster_size");
	expect_error("{\"cut\": \"single\"}", "\"cut\" must be one of");
	expect_error("{\"assign_rule\": \"nearest\"}", "\"assign_rule\" must be one of");
	expect_error("{\"assign_rule\": 1}", "assign_rule");
	expect_error("{\"level\": \"high\"}", "level");
	expect_error("{\"level\": 1e301}", "level");
	expect_error("{\"outlier_fraction\": 1}", "outlier_fraction");
}

/*
 * The exact error of parsing json over the defaults (cut_only: as a recut
 * does).  The SQL regression outputs quote these texts, so they are pinned
 * byte for byte here, where a change shows without a server.
 */
static void
expect_exact(const char *json, bool cut_only, const char *message,
			 const char *detail, const char *hint)
{
	SvcOptions	opt;
	SvcError	err;
	SvcStatus	st;

	svc_options_default(&opt);
	memset(&err, 0, sizeof(err));
	if (cut_only)
		st = svc_options_parse_cut(json, strlen(json), &opt, &err);
	else
		st = svc_options_parse(json, strlen(json), &opt, &err);
	CHECK(st == SVC_ERR_INVALID_PARAMETER && strcmp(err.message, message) == 0 &&
		  strcmp(err.detail, detail) == 0 && strcmp(err.hint, hint) == 0,
		  "%s%s: got %d \"%s\" / \"%s\" / \"%s\"", cut_only ? "cut " : "", json,
		  (int) st, err.message, err.detail, err.hint);
}

/* The value of key in opt as a double (an oracle apart from options.c). */
static double
field_value(const SvcOptions *o, const char *key)
{
	if (strcmp(key, "budget") == 0)
		return o->budget;
	if (strcmp(key, "k") == 0)
		return o->k;
	if (strcmp(key, "max_iter") == 0)
		return (double) o->max_iter;
	if (strcmp(key, "sample") == 0)
		return (double) o->sample;
	if (strcmp(key, "seed") == 0)
		return (double) o->seed;
	if (strcmp(key, "min_cluster_size") == 0)
		return (double) o->min_cluster_size;
	if (strcmp(key, "n_clusters") == 0)
		return o->n_clusters;
	if (strcmp(key, "gamma") == 0)
		return o->gamma;
	if (strcmp(key, "epsilon") == 0)
		return o->epsilon;
	if (strcmp(key, "c") == 0)
		return o->c;
	if (strcmp(key, "tol") == 0)
		return o->tol;
	if (strcmp(key, "merge_ratio") == 0)
		return o->merge_ratio;
	if (strcmp(key, "min_cluster_share") == 0)
		return o->min_cluster_share;
	if (strcmp(key, "outlier_fraction") == 0 || strcmp(key, "nu") == 0)
		return o->nu;
	if (strcmp(key, "bandwidth_k") == 0)
		return o->bandwidth_k;
	if (strcmp(key, "level") == 0)
		return o->has_level ? o->level : NAN;
	return NAN;
}

/*
 * Every numeric key: both ends of its range are accepted and take their
 * value; one step past either end, a value of the wrong type and (for the
 * integer keys) a fraction are refused, each with the key's own detail.
 */
static void
test_numeric_bounds(void)
{
	static const struct
	{
		const char *key;
		const char *low;		/* the lowest value accepted */
		double		low_value;
		const char *high;		/* the highest */
		double		high_value;
		const char *below;		/* just past each end: refused */
		const char *above;
		const char *expect;		/* the detail's "must be ..." */
		const char *typed;		/* ... for a boolean */
	}			keys[] = {
		{"budget", "1", 1, "100000", 100000, "0", "100001",
		"an integer between 1 and 100000", NULL},
		{"k", "1", 1, "64", 64, "0", "65", "an integer between 1 and 64", NULL},
		{"max_iter", "1", 1, "100000000", 1e8, "0", "100000001",
		"an integer between 1 and 100000000", NULL},
		{"sample", "2", 2, "10000000", 1e7, "1", "10000001",
		"an integer between 2 and 10000000", NULL},
		{"seed", "0", 0, "9223372036854775807", 9223372036854775807.0, "-1",
		"9223372036854775808", "an integer between 0 and 9223372036854775807", NULL},
		{"min_cluster_size", "0", 0, "10000000", 1e7, "-1", "10000001",
		"an integer between 0 and 10000000", NULL},
		{"n_clusters", "0", 0, "1000000", 1e6, "-1", "1000001",
		"an integer between 0 and 1000000", NULL},
		{"gamma", "5e-324", 5e-324, "1e12", 1e12, "0", "1000000000000.001",
		"a number greater than 0 and at most 1e+12", "a positive number or \"auto\""},
		{"epsilon", "5e-324", 5e-324, "1e6", 1e6, "0", "1000000.0000001",
		"a number greater than 0 and at most 1e+06", "a positive number or \"auto\""},
		{"c", "5e-324", 5e-324, "1e6", 1e6, "0", "1000000.0000001",
		"a number greater than 0 and at most 1e+06", NULL},
		{"tol", "5e-324", 5e-324, "1000000", 1e6, "-0", "1000000.0000001",
		"a number greater than 0 and at most 1e+06", NULL},
		{"merge_ratio", "0", 0, "1", 1, "-5e-324", "1.0000000000000002",
		"a number of at least 0 and at most 1", NULL},
		{"min_cluster_share", "-0", 0, "0.5", 0.5, "-1e-9", "0.5000000000000001",
		"a number of at least 0 and at most 0.5", NULL},
		{"outlier_fraction", "0", 0, "0.99", 0.99, "-1e-9", "0.9900000000000001",
		"a number of at least 0 and at most 0.99", NULL},
		{"nu", "0", 0, "0.99", 0.99, "-1", "1", "a number of at least 0 and at most 0.99", NULL},
		{"bandwidth_k", "0", 0, "64", 64, "-1", "65", "an integer between 0 and 64", NULL},
		{"level", "-1e300", -1e300, "1e300", 1e300, "-1.000000000000001e300",
		"1.000000000000001e300", "a finite number or null", NULL},
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
	{
		const char *key = keys[i].key;
		const char *typed = keys[i].typed ? keys[i].typed : keys[i].expect;
		char		json[128];
		char		message[128];
		char		detail[256];
		SvcOptions	opt;
		SvcError	err;

		snprintf(message, sizeof(message), "invalid value for svclust option \"%s\"", key);
		snprintf(json, sizeof(json), "{\"%s\": %s}", key, keys[i].low);
		CHECK(parse(json, &opt, &err) == SVC_OK && field_value(&opt, key) == keys[i].low_value,
			  "%s is accepted: %s / %s", json, err.message, err.detail);
		snprintf(json, sizeof(json), "{\"%s\": %s}", key, keys[i].high);
		CHECK(parse(json, &opt, &err) == SVC_OK && field_value(&opt, key) == keys[i].high_value,
			  "%s is accepted: %s / %s", json, err.message, err.detail);

		snprintf(detail, sizeof(detail), "\"%s\" must be %s.", key, keys[i].expect);
		snprintf(json, sizeof(json), "{\"%s\": %s}", key, keys[i].below);
		expect_exact(json, false, message, detail, "");
		snprintf(json, sizeof(json), "{\"%s\": %s}", key, keys[i].above);
		expect_exact(json, false, message, detail, "");
		snprintf(json, sizeof(json), "{\"%s\": 1e999}", key);
		expect_exact(json, false, message, detail, "");
		if (strncmp(keys[i].expect, "an integer", 10) == 0)
		{
			snprintf(json, sizeof(json), "{\"%s\": 2.5}", key);
			expect_exact(json, false, message, detail, "");
		}

		snprintf(detail, sizeof(detail), "\"%s\" must be %s.", key, typed);
		snprintf(json, sizeof(json), "{\"%s\": true}", key);
		expect_exact(json, false, message, detail, "");
		snprintf(json, sizeof(json), "{\"%s\": \"1\"}", key);
		expect_exact(json, false, message, detail, "");
		snprintf(json, sizeof(json), "{\"%s\": [1]}", key);
		expect_exact(json, false, message, detail, "");
		if (strcmp(key, "level") != 0)
		{
			snprintf(json, sizeof(json), "{\"%s\": null}", key);
			expect_exact(json, false, message, detail, "");
		}
	}
}

/* Integers: -0 is 0 where 0 is allowed; x.0 and 1e2 are integers. */
static void
test_integer_forms(void)
{
	SvcOptions	opt;
	SvcError	err;

	CHECK(parse("{\"seed\": -0, \"n_clusters\": -0}", &opt, &err) == SVC_OK &&
		  opt.seed == 0 && opt.n_clusters == 0, "-0 is 0: %s", err.message);
	expect_exact("{\"budget\": -0}", false, "invalid value for svclust option \"budget\"",
				 "\"budget\" must be an integer between 1 and 100000.", "");
	CHECK(parse("{\"budget\": 1e2, \"k\": 7.0}", &opt, &err) == SVC_OK &&
		  opt.budget == 100 && opt.k == 7, "1e2 and 7.0 are integers: %s", err.message);
	CHECK(parse("{\"seed\": 9223372036854775807}", &opt, &err) == SVC_OK &&
		  opt.seed == UINT64_C(9223372036854775807), "the largest seed is exact");
	expect_exact("{\"seed\": 18446744073709551616}", false,
				 "invalid value for svclust option \"seed\"",
				 "\"seed\" must be an integer between 0 and 9223372036854775807.", "");
	CHECK(parse("{\"gamma\": \"auto\", \"epsilon\": \"auto\", \"gamma\": 3}", &opt, &err) ==
		  SVC_OK && opt.gamma == 3 && opt.epsilon == 0, "a later key wins");
	expect_exact("{\"gamma\": \"Auto\"}", false, "invalid value for svclust option \"gamma\"",
				 "\"gamma\" must be a positive number or \"auto\".", "");
}

/* Every name of every enum key, and a name that is none of them. */
static void
test_enum_keys(void)
{
	static const struct
	{
		const char *json;
		size_t		offset;
		int			value;
	}			names[] = {
		{"{\"strategy\": \"removal\"}", offsetof(SvcOptions, strategy), SVC_STRATEGY_REMOVAL},
		{"{\"strategy\": \"project-knn\"}", offsetof(SvcOptions, strategy), SVC_STRATEGY_PROJECT_KNN},
		{"{\"strategy\": \"project-random\"}", offsetof(SvcOptions, strategy), SVC_STRATEGY_PROJECT_RANDOM},
		{"{\"strategy\": \"unbudgeted\"}", offsetof(SvcOptions, strategy), SVC_STRATEGY_UNBUDGETED},
		{"{\"scale\": \"standard\"}", offsetof(SvcOptions, scale), SVC_SCALE_STANDARD},
		{"{\"scale\": \"minmax\"}", offsetof(SvcOptions, scale), SVC_SCALE_MINMAX},
		{"{\"scale\": \"none\"}", offsetof(SvcOptions, scale), SVC_SCALE_NONE},
		{"{\"labeling\": \"tree\"}", offsetof(SvcOptions, labeling), SVC_LABELING_TREE},
		{"{\"labeling\": \"paper\"}", offsetof(SvcOptions, labeling), SVC_LABELING_PAPER},
		{"{\"labeling\": \"complete-graph\"}", offsetof(SvcOptions, labeling),
		SVC_LABELING_COMPLETE_GRAPH},
		{"{\"cut\": \"persistence\"}", offsetof(SvcOptions, cut), SVC_CUT_PERSISTENCE},
		{"{\"cut\": \"eom\"}", offsetof(SvcOptions, cut), SVC_CUT_EOM},
	};
	static const struct
	{
		const char *key;
		const char *expect;
	}			refused[] = {
		{"strategy", "one of \"removal\", \"project-knn\", \"project-random\", \"unbudgeted\""},
		{"scale", "one of \"standard\", \"minmax\", \"none\""},
		{"labeling", "one of \"tree\", \"paper\", \"complete-graph\""},
		{"cut", "one of \"persistence\", \"eom\""},
	};
	static const char *const bad[] = {"\"unknown\"", "\"\"", "\"Tree\"", "1", "null", "true"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
	{
		SvcOptions	opt;
		SvcError	err;
		int			value;

		/* all four enums have the size of an int (checked in options.c) */
		CHECK(parse(names[i].json, &opt, &err) == SVC_OK, "%s parses: %s", names[i].json,
			  err.message);
		memcpy(&value, (char *) &opt + names[i].offset, sizeof(value));
		CHECK(value == names[i].value, "%s gives %d, not %d", names[i].json, value,
			  names[i].value);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++)
		{
			char		json[64];
			char		message[128];
			char		detail[256];

			snprintf(json, sizeof(json), "{\"%s\": %s}", refused[i].key, bad[j]);
			snprintf(message, sizeof(message), "invalid value for svclust option \"%s\"",
					 refused[i].key);
			snprintf(detail, sizeof(detail), "\"%s\" must be %s.", refused[i].key,
					 refused[i].expect);
			expect_exact(json, false, message, detail, "");
		}

	CHECK(strcmp(svc_strategy_name(SVC_STRATEGY_REMOVAL), "removal") == 0 &&
		  strcmp(svc_strategy_name(SVC_STRATEGY_PROJECT_KNN), "project-knn") == 0 &&
		  strcmp(svc_strategy_name(SVC_STRATEGY_PROJECT_RANDOM), "project-random") == 0 &&
		  strcmp(svc_strategy_name(SVC_STRATEGY_UNBUDGETED), "unbudgeted") == 0 &&
		  strcmp(svc_strategy_name((SvcStrategy) 0), "unknown") == 0 &&
		  strcmp(svc_strategy_name((SvcStrategy) 5), "unknown") == 0, "strategy names");
	CHECK(strcmp(svc_scale_name(SVC_SCALE_NONE), "none") == 0 &&
		  strcmp(svc_scale_name(SVC_SCALE_STANDARD), "standard") == 0 &&
		  strcmp(svc_scale_name(SVC_SCALE_MINMAX), "minmax") == 0 &&
		  strcmp(svc_scale_name((SvcScale) 3), "unknown") == 0, "scale names");
	CHECK(strcmp(svc_labeling_name(SVC_LABELING_TREE), "tree") == 0 &&
		  strcmp(svc_labeling_name(SVC_LABELING_PAPER), "paper") == 0 &&
		  strcmp(svc_labeling_name(SVC_LABELING_COMPLETE_GRAPH), "complete-graph") == 0 &&
		  strcmp(svc_labeling_name((SvcLabeling) 0), "unknown") == 0 &&
		  strcmp(svc_labeling_name((SvcLabeling) 4), "unknown") == 0, "labeling names");
	CHECK(strcmp(svc_cut_name(SVC_CUT_PERSISTENCE), "persistence") == 0 &&
		  strcmp(svc_cut_name(SVC_CUT_EOM), "eom") == 0 &&
		  strcmp(svc_cut_name((SvcCutRule) 0), "unknown") == 0 &&
		  strcmp(svc_cut_name((SvcCutRule) 3), "unknown") == 0, "cut names");
}

/* The lists of keys in the details, the alias nu, and the recut's refusals. */
static void
test_key_lists(void)
{
	static const char *const valid =
		"Valid options are: budget, strategy, k, gamma, c, epsilon, tol, max_iter, seed, "
		"scale, sample, labeling, segment_points, outlier_fraction (or nu), bandwidth_k, solver, "
		"cache_mb, aid_gap, label_radius, label_sample, label_interpolation, anomaly_bound, "
		"label_spread, keep_rows, window, keep_isolated, cut, merge_ratio, min_cluster_share, "
		"min_cluster_size, min_cluster_size_rows, assign_rule, n_clusters, level.";
	static const char *const cut_list =
		"Only the cut of the tree can change: cut, merge_ratio, min_cluster_share, "
		"min_cluster_size, min_cluster_size_rows, assign_rule, n_clusters, level.";
	static const char *const cut_unknown =
		"Only the cut of the tree can change after training: cut, merge_ratio, "
		"min_cluster_share, min_cluster_size, min_cluster_size_rows, assign_rule, n_clusters, level.";
	static const char *const trained[] = {
		"budget", "strategy", "k", "gamma", "c", "epsilon", "tol", "max_iter", "seed",
		"scale", "sample", "labeling", "segment_points", "outlier_fraction", "nu", "bandwidth_k",
	};
	/* unknown keys, to a recut too, and the key each most likely meant */
	static const char *const unknown[][2] = {
		{"bogus", ""}, {"Level", "Did you mean \"level\"?"}, {"", ""},
		{"n_clusterz", "Did you mean \"n_clusters\"?"},
		{"merge_raito", "Did you mean \"merge_ratio\"?"},
		{"gama", "Did you mean \"gamma\"? It cannot change after training: train a new model with svc_train()."},
	};
	static const char *const cut_ok[] = {
		"{\"cut\": \"eom\"}", "{\"merge_ratio\": 0.5}", "{\"min_cluster_share\": 0.1}",
		"{\"min_cluster_size\": 3}", "{\"n_clusters\": 3}", "{\"level\": 0.5}",
		"{\"level\": null}", "{}",
		("{\"cut\": \"persistence\", \"merge_ratio\": 0, \"min_cluster_share\": 0.5,"
		 " \"min_cluster_size\": 0, \"n_clusters\": 0, \"level\": -1}"),
	};
	char		longkey[200];
	char		json[256];
	char		message[256];
	SvcOptions	opt;
	SvcError	err;

	expect_exact("{\"budgett\": 10}", false, "unknown svclust option \"budgett\"", valid,
				 "Did you mean \"budget\"?");
	expect_exact("{\"\": 10}", false, "unknown svclust option \"\"", valid, "");
	expect_exact("{\"budget\": 10, \"Budget\": 10}", false,
				 "unknown svclust option \"Budget\"", valid, "Did you mean \"budget\"?");
	/* near two keys, or too far from any: no guess */
	expect_exact("{\"sampel\": 10}", false, "unknown svclust option \"sampel\"", valid,
				 "Did you mean \"sample\"?");
	expect_exact("{\"cuts\": 1}", false, "unknown svclust option \"cuts\"", valid,
				 "Did you mean \"cut\"?");
	expect_exact("{\"kk\": 1}", false, "unknown svclust option \"kk\"", valid, "");
	expect_exact("{\"learning_rate\": 1}", false, "unknown svclust option \"learning_rate\"",
				 valid, "");
	/* a key longer than the parser keeps is shown cut, with "..." */
	memset(longkey, 'x', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = '\0';
	snprintf(json, sizeof(json), "{\"%s\": 1}", longkey);
	snprintf(message, sizeof(message), "unknown svclust option \"%.63s...\"", longkey);
	expect_exact(json, false, message, valid, "");
	expect_exact(json, true, message, cut_unknown, "");

	CHECK(parse("{\"nu\": 0.25}", &opt, &err) == SVC_OK && opt.nu == 0.25, "nu names nu");
	CHECK(parse("{\"nu\": 0.25, \"outlier_fraction\": 0.5}", &opt, &err) == SVC_OK &&
		  opt.nu == 0.5, "outlier_fraction and nu set one field");
	expect_exact("{\"nu\": 1}", false, "invalid value for svclust option \"nu\"",
				 "\"nu\" must be a number of at least 0 and at most 0.99.", "");

	for (size_t i = 0; i < sizeof(trained) / sizeof(trained[0]); i++)
	{
		char		hint[256];

		snprintf(json, sizeof(json), "{\"%s\": 1}", trained[i]);
		snprintf(message, sizeof(message), "svclust option \"%s\" cannot change after training",
				 trained[i]);
		snprintf(hint, sizeof(hint), "Train a new model with svc_train() to change \"%s\".",
				 trained[i]);
		expect_exact(json, true, message, cut_list, hint);
		/* refused before its value is looked at, after a cut key is taken */
		snprintf(json, sizeof(json), "{\"n_clusters\": 2, \"%s\": }", trained[i]);
		expect_exact(json, true, "svclust options must be a JSON object", "",
					 "Pass options such as '{\"budget\": 50, \"gamma\": \"auto\"}'.");
		snprintf(json, sizeof(json), "{\"n_clusters\": 2, \"%s\": \"x\"}", trained[i]);
		expect_exact(json, true, message, cut_list, hint);
	}
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
	{
		snprintf(json, sizeof(json), "{\"%s\": 1}", unknown[i][0]);
		snprintf(message, sizeof(message), "unknown svclust option \"%s\"", unknown[i][0]);
		expect_exact(json, true, message, cut_unknown, unknown[i][1]);
		snprintf(json, sizeof(json), "{\"n_clusters\": 2, \"%s\": \"x\"}", unknown[i][0]);
		expect_exact(json, true, message, cut_unknown, unknown[i][1]);
	}
	for (size_t i = 0; i < sizeof(cut_ok) / sizeof(cut_ok[0]); i++)
	{
		svc_options_default(&opt);
		CHECK(svc_options_parse_cut(cut_ok[i], strlen(cut_ok[i]), &opt, &err) == SVC_OK,
			  "a recut takes %s: %s / %s", cut_ok[i], err.message, err.detail);
	}
	expect_exact("{\"merge_ratio\": 2}", true, "invalid value for svclust option \"merge_ratio\"",
				 "\"merge_ratio\" must be a number of at least 0 and at most 1.", "");
	expect_exact("{\"n_clusters\": 2, \"level\": 1}", true,
				 "svclust options \"n_clusters\" and \"level\" cannot both be set",
				 "Each names a cut of the tree; give one of them.", "");
	expect_exact("{bogus}", true, "svclust options must be a JSON object", "",
				 "Pass options such as '{\"budget\": 50, \"gamma\": \"auto\"}'.");
}

/*
 * svc_options_validate on a struct with one field damaged, as a decoded
 * model or state may have it: refused with that key's detail.
 */
static void
expect_invalid(const SvcOptions *o, const char *key, const char *expect, const char *what)
{
	SvcError	err;
	char		message[128];
	char		detail[256];

	memset(&err, 0, sizeof(err));
	snprintf(message, sizeof(message), "invalid value for svclust option \"%s\"", key);
	snprintf(detail, sizeof(detail), "\"%s\" must be %s.", key, expect);
	CHECK(svc_options_validate(o, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strcmp(err.message, message) == 0 && strcmp(err.detail, detail) == 0 &&
		  err.hint[0] == '\0', "%s: got \"%s\" / \"%s\"", what, err.message, err.detail);
}

#define DAMAGE(field, value, key, expect) \
	do { \
		SvcOptions	o_; \
		svc_options_default(&o_); \
		o_.field = (value); \
		expect_invalid(&o_, key, expect, #field " = " #value); \
	} while (0)

static void
test_validate(void)
{
	const char *auto_num = "a positive number or \"auto\"";
	const char *level = "a finite number or null, not set with n_clusters";
	const char *strategy =
		"one of \"removal\", \"project-knn\", \"project-random\", \"unbudgeted\"";
	const char *seed = "an integer between 0 and 9223372036854775807";
	SvcOptions	o;
	SvcError	err;

	svc_options_default(&o);
	CHECK(svc_options_validate(&o, &err) == SVC_OK, "the defaults are valid");
	o.gamma = -0.0;
	o.epsilon = 1e6;
	o.seed = (uint64_t) INT64_MAX;
	o.merge_ratio = 1;
	o.min_cluster_share = 0;
	o.nu = 0.99;
	o.has_level = true;
	o.level = -1e300;
	CHECK(svc_options_validate(&o, &err) == SVC_OK, "the ends of the ranges are valid: %s",
		  err.detail);

	DAMAGE(budget, 0, "budget", "an integer between 1 and 100000");
	DAMAGE(budget, 100001, "budget", "an integer between 1 and 100000");
	DAMAGE(strategy, (SvcStrategy) 0, "strategy", strategy);
	DAMAGE(strategy, (SvcStrategy) 5, "strategy", strategy);
	DAMAGE(k, 0, "k", "an integer between 1 and 64");
	DAMAGE(k, 65, "k", "an integer between 1 and 64");
	DAMAGE(gamma, -1e-300, "gamma", auto_num);
	DAMAGE(gamma, 1.0000000000000002e12, "gamma", auto_num);
	DAMAGE(gamma, NAN, "gamma", auto_num);
	DAMAGE(gamma, INFINITY, "gamma", auto_num);
	DAMAGE(c, 0, "c", "a number greater than 0 and at most 1e+06");
	DAMAGE(c, 1e7, "c", "a number greater than 0 and at most 1e+06");
	DAMAGE(c, NAN, "c", "a number greater than 0 and at most 1e+06");
	DAMAGE(epsilon, -1, "epsilon", auto_num);
	DAMAGE(epsilon, 1.0000001e6, "epsilon", auto_num);
	DAMAGE(tol, -0.0, "tol", "a number greater than 0 and at most 1e+06");
	DAMAGE(tol, -INFINITY, "tol", "a number greater than 0 and at most 1e+06");
	DAMAGE(max_iter, 0, "max_iter", "an integer between 1 and 100000000");
	DAMAGE(max_iter, 100000001, "max_iter", "an integer between 1 and 100000000");
	DAMAGE(seed, (uint64_t) INT64_MAX + 1, "seed", seed);
	DAMAGE(seed, UINT64_MAX, "seed", seed);
	DAMAGE(scale, (SvcScale) 3, "scale", "one of \"standard\", \"minmax\", \"none\"");
	DAMAGE(sample, 1, "sample", "an integer between 2 and 10000000");
	DAMAGE(sample, 10000001, "sample", "an integer between 2 and 10000000");
	DAMAGE(labeling, (SvcLabeling) 0, "labeling", "one of \"tree\", \"paper\", \"complete-graph\"");
	DAMAGE(labeling, (SvcLabeling) 4, "labeling", "one of \"tree\", \"paper\", \"complete-graph\"");
	DAMAGE(segment_points, -1, "segment_points", "an integer between 1 and 1000 or \"auto\"");
	DAMAGE(segment_points, 1001, "segment_points", "an integer between 1 and 1000 or \"auto\"");
	DAMAGE(merge_ratio, -1e-300, "merge_ratio", "a number of at least 0 and at most 1");
	DAMAGE(merge_ratio, NAN, "merge_ratio", "a number of at least 0 and at most 1");
	DAMAGE(min_cluster_share, 0.51, "min_cluster_share", "a number of at least 0 and at most 0.5");
	DAMAGE(nu, 1, "outlier_fraction", "a number of at least 0 and at most 0.99");
	DAMAGE(nu, -0.1, "outlier_fraction", "a number of at least 0 and at most 0.99");
	DAMAGE(bandwidth_k, -1, "bandwidth_k", "an integer between 0 and 64");
	DAMAGE(bandwidth_k, 65, "bandwidth_k", "an integer between 0 and 64");
	DAMAGE(cut, (SvcCutRule) 0, "cut", "one of \"persistence\", \"eom\"");
	DAMAGE(cut, (SvcCutRule) 3, "cut", "one of \"persistence\", \"eom\"");
	DAMAGE(min_cluster_size, -1, "min_cluster_size", "an integer between 0 and 10000000");
	DAMAGE(min_cluster_size, 10000001, "min_cluster_size", "an integer between 0 and 10000000");
	DAMAGE(n_clusters, -1, "n_clusters", "an integer between 0 and 1000000");
	DAMAGE(n_clusters, 1000001, "n_clusters", "an integer between 0 and 1000000");
	DAMAGE(level, 1, "level", level);	/* a level while has_level is false */
	DAMAGE(level, NAN, "level", level);

	svc_options_default(&o);
	o.has_level = true;
	o.level = 1.000000000000001e300;
	expect_invalid(&o, "level", level, "level past 1e300");
	o.level = -INFINITY;
	expect_invalid(&o, "level", level, "level -inf");
	o.level = 0.5;
	o.n_clusters = 2;
	expect_invalid(&o, "level", level, "level with n_clusters");
	/* parsing validates the whole struct, keys given or not */
	svc_options_default(&o);
	o.k = 0;
	CHECK(svc_options_parse("{}", 2, &o, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strcmp(err.detail, "\"k\" must be an integer between 1 and 64.") == 0,
		  "parse validates what it was given: %s", err.detail);
}


/*
 * gamma's rules (options.h): "auto" is the default rule, "auto-d" the one
 * before 0.5.0, a number has none; byte 121 of the wire tells them apart,
 * and options from before it (a 0 there) read "auto" as "auto-d".  The
 * smallest cluster: min_cluster_size 15 by default; naming the share alone
 * clears it, in a recut too.
 */
static void
test_gamma_rule_and_smallest_cluster(void)
{
	SvcOptions	o,
				b;
	SvcError	err;
	uint8_t		wire[SVC_OPTIONS_WIRE_SIZE];

	svc_options_default(&o);
	CHECK(o.gamma == 0 && o.gamma_rule == SVC_GAMMA_RULE_AUTO && o.min_cluster_size == 15,
		  "defaults: gamma auto by the 0.5.0 rule, min_cluster_size 15");
	CHECK(strcmp(svc_gamma_rule_name(&o), "auto") == 0, "rule name auto");
	CHECK(parse("{\"gamma\": \"auto-d\"}", &o, &err) == SVC_OK && o.gamma == 0 &&
		  o.gamma_rule == SVC_GAMMA_RULE_DIM && strcmp(svc_gamma_rule_name(&o), "auto-d") == 0,
		  "gamma auto-d: %s", err.message);
	svc_options_encode(&o, wire);
	CHECK(!(wire[121] & SVC_OPTIONS_BIT_GAMMA_AUTO), "auto-d writes 0 at bit 0 of byte 121");
	CHECK(svc_options_decode(wire, &b, &err) == SVC_OK && b.gamma_rule == SVC_GAMMA_RULE_DIM,
		  "auto-d reads back");
	CHECK(parse("{\"gamma\": \"auto-d\", \"gamma\": \"auto\"}", &o, &err) == SVC_OK &&
		  o.gamma_rule == SVC_GAMMA_RULE_AUTO, "a later auto wins");
	svc_options_encode(&o, wire);
	CHECK(wire[121] & SVC_OPTIONS_BIT_GAMMA_AUTO, "auto writes 1 at bit 0 of byte 121");
	CHECK(svc_options_decode(wire, &b, &err) == SVC_OK && b.gamma_rule == SVC_GAMMA_RULE_AUTO,
		  "auto reads back");
	wire[121] = 0;
	CHECK(svc_options_decode(wire, &b, &err) == SVC_OK && b.gamma_rule == SVC_GAMMA_RULE_DIM &&
		  b.keep_isolated == 0 && b.min_size_rows == SVC_SIZE_ROWS_LABELLED,
		  "a 0 at byte 121 (options before 0.5.0) reads auto as auto-d, keep_isolated false, "
		  "min_cluster_size in labelled rows");
	CHECK(parse("{\"gamma\": \"auto-d\", \"gamma\": 2}", &o, &err) == SVC_OK && o.gamma == 2 &&
		  o.gamma_rule == SVC_GAMMA_RULE_AUTO && strcmp(svc_gamma_rule_name(&o), "given") == 0,
		  "a given gamma has no rule");
	svc_options_encode(&o, wire);
	CHECK(!(wire[121] & SVC_OPTIONS_BIT_GAMMA_AUTO), "a given gamma writes 0 at bit 0 of byte 121");
	wire[121] |= SVC_OPTIONS_BIT_GAMMA_AUTO;
	CHECK(svc_options_decode(wire, &b, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strstr(err.detail, "\"gamma\"") != NULL, "a given gamma with the rule's bit is refused");
	o.gamma_rule = SVC_GAMMA_RULE_DIM;
	CHECK(svc_options_validate(&o, &err) == SVC_ERR_INVALID_PARAMETER,
		  "a given gamma with the rule auto-d does not validate");
	expect_error("{\"gamma\": \"auto-D\"}", "gamma");

	CHECK(parse("{\"min_cluster_share\": 0.01}", &o, &err) == SVC_OK &&
		  o.min_cluster_share == 0.01 && o.min_cluster_size == 0, "the share alone clears the size");
	CHECK(parse("{\"min_cluster_share\": 0.01, \"min_cluster_size\": 20}", &o, &err) == SVC_OK &&
		  o.min_cluster_size == 20, "share and size: the size stays");
	CHECK(parse("{\"min_cluster_size\": 20, \"min_cluster_share\": 0.01}", &o, &err) == SVC_OK &&
		  o.min_cluster_size == 20, "in either order");
	svc_options_default(&o);
	CHECK(svc_options_parse_cut("{\"min_cluster_share\": 0.1}", 26, &o, &err) == SVC_OK &&
		  o.min_cluster_size == 0 && o.min_cluster_share == 0.1, "a recut naming the share: %s",
		  err.message);
	svc_options_default(&o);
	CHECK(svc_options_parse_cut("{\"merge_ratio\": 0.3}", 20, &o, &err) == SVC_OK &&
		  o.min_cluster_size == 15, "a recut not naming the share keeps the size");
}

/*
 * The wire bytes of the defaults and of a struct with every field set, as
 * the models and states on disk hold them: they must never change (the
 * defaults' bytes change with the defaults only: 0.5.0 made min_cluster_size
 * 15 and wrote gamma's rule at byte 121, then keep_isolated at its bit 1,
 * then min_cluster_size_rows "separated" at its bit 3; sizes in rows of the
 * sample, bit 2, are an option, set below).
 */
static void
test_wire_golden(void)
{
	static const char *const defaults_hex =
		"2c01000002010101050000000000000000000000000000000000404000000000"
		"000000007b14ae47e17a843fa0860100000000002a0000000000000010270000"
		"000000009a9999999999d93fb81e85eb51b89e3f9a9999999999a93f0f000000"
		"000000000000000000000000000000000000000000000000002b000000000000";
	static const char *const set_hex =
		"4d0000000400020209000000000000000000e03f000000000000004000000000"
		"0000d03f000000000000c03f0010000000000000020100000000000001000100"
		"00000000000000000000e83f000000000000b03f000000000000e03f03000000"
		"00000000000000000100000000000000000000c0140000000006070000000000";
	SvcOptions	o;
	SvcError	err;
	uint8_t		wire[SVC_OPTIONS_WIRE_SIZE];
	char		hex[2 * SVC_OPTIONS_WIRE_SIZE + 1];
	const char *set = "{\"budget\": 77, \"strategy\": \"unbudgeted\", \"k\": 9, \"gamma\": 0.5,"
		" \"c\": 2, \"epsilon\": 0.25, \"tol\": 0.125, \"max_iter\": 4096, \"seed\": 258,"
		" \"scale\": \"none\", \"sample\": 65537, \"labeling\": \"paper\", \"nu\": 0.5,"
		" \"cut\": \"eom\", \"merge_ratio\": 0.75, \"min_cluster_share\": 0.0625,"
		" \"min_cluster_size\": 3, \"min_cluster_size_rows\": \"sample\", \"level\": -2,"
		" \"bandwidth_k\": 20, \"segment_points\": 7, \"assign_rule\": \"trajectory\"}";

	svc_options_default(&o);
	svc_options_encode(&o, wire);
	for (int i = 0; i < SVC_OPTIONS_WIRE_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", wire[i]);
	CHECK(strcmp(hex, defaults_hex) == 0, "the defaults' wire bytes: %s", hex);
	CHECK(parse(set, &o, &err) == SVC_OK, "every key set: %s", err.detail);
	svc_options_encode(&o, wire);
	for (int i = 0; i < SVC_OPTIONS_WIRE_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", wire[i]);
	CHECK(strcmp(hex, set_hex) == 0, "every key's wire bytes: %s", hex);
	/* assign_rule: the defaults' "auto" is bit 5; options without it (every
	 * model stored before the rule) keep the trajectory's cluster */
	svc_options_default(&o);
	svc_options_encode(&o, wire);
	CHECK(svc_options_decode(wire, &o, &err) == SVC_OK && o.assign_rule == SVC_ASSIGN_AUTO,
		  "the defaults decode with assign_rule \"auto\"");
	wire[121] &= (uint8_t) ~SVC_OPTIONS_BIT_ASSIGN_AUTO;
	CHECK(svc_options_decode(wire, &o, &err) == SVC_OK && o.assign_rule == SVC_ASSIGN_TRAJECTORY,
		  "options without bit 5 decode with assign_rule \"trajectory\"");

	/* one damaged field each, decoded: refused with the key's detail */
	svc_options_default(&o);
	svc_options_encode(&o, wire);
	wire[4] = 9;				/* strategy */
	CHECK(svc_options_decode(wire, &o, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strcmp(err.detail, "\"strategy\" must be one of \"removal\", \"project-knn\", "
				 "\"project-random\", \"unbudgeted\".") == 0,
		  "a damaged strategy: %s", err.detail);
	svc_options_default(&o);
	svc_options_encode(&o, wire);
	wire[104] = 2;				/* has_level */
	CHECK(svc_options_decode(wire, &o, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strcmp(err.detail, "\"level\" must be a finite number or null.") == 0,
		  "has_level 2: %s", err.detail);
	svc_options_default(&o);
	svc_options_encode(&o, wire);
	wire[104] = 1;				/* has_level with n_clusters */
	wire[100] = 2;
	CHECK(svc_options_decode(wire, &o, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strcmp(err.detail, "\"level\" must be a finite number or null, not set with n_clusters.") == 0,
		  "a level with n_clusters: %s", err.detail);

	/*
	 * segment_points: u16 at 122; with the complete graph 0 is 20 (the
	 * default before "auto") and "auto" is bit 4 of byte 121 with 0; with
	 * the other labellings 0 is "auto"; past 1000 refused
	 */
	svc_options_default(&o);
	svc_options_encode(&o, wire);
	CHECK(!(wire[121] & SVC_OPTIONS_BIT_SEGMENT_AUTO) && wire[122] == 0 && wire[123] == 0,
		  "the tree's \"auto\" is stored as 0: %02x", wire[121]);
	CHECK(svc_options_decode(wire, &o, &err) == SVC_OK &&
		  o.segment_points == SVC_SEGMENT_POINTS_AUTO, "the tree's stored 0 reads as \"auto\"");
	o.segment_points = 20;
	svc_options_encode(&o, wire);
	CHECK(wire[122] == 20 && wire[123] == 0 && svc_options_decode(wire, &o, &err) == SVC_OK &&
		  o.segment_points == 20, "the tree's 20 is stored as 20");
	svc_options_default(&o);
	o.labeling = SVC_LABELING_COMPLETE_GRAPH;
	svc_options_encode(&o, wire);
	CHECK((wire[121] & SVC_OPTIONS_BIT_SEGMENT_AUTO) && wire[122] == 0 && wire[123] == 0 &&
		  svc_options_decode(wire, &o, &err) == SVC_OK &&
		  o.segment_points == SVC_SEGMENT_POINTS_AUTO, "the graph's \"auto\": bit 4, %02x",
		  wire[121]);
	wire[122] = 5;				/* the bit with a count */
	CHECK(svc_options_decode(wire, &o, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strcmp(err.detail, "\"segment_points\" must be an integer between 1 and 1000 or \"auto\".") == 0,
		  "auto with a count: %s", err.detail);
	wire[122] = 0;
	wire[6] = SVC_LABELING_TREE;	/* the bit without the graph */
	CHECK(svc_options_decode(wire, &o, &err) == SVC_ERR_INVALID_PARAMETER,
		  "the bit of \"auto\" without the complete graph is refused");
	svc_options_default(&o);
	o.labeling = SVC_LABELING_COMPLETE_GRAPH;
	o.segment_points = 20;
	svc_options_encode(&o, wire);
	CHECK(!(wire[121] & SVC_OPTIONS_BIT_SEGMENT_AUTO) && wire[122] == 0 && wire[123] == 0 &&
		  svc_options_decode(wire, &o, &err) == SVC_OK && o.segment_points == 20,
		  "the graph's 20 is stored as 0, as before \"auto\"");
	o.segment_points = 1000;
	svc_options_encode(&o, wire);
	CHECK(wire[122] == 0xe8 && wire[123] == 0x03 &&
		  svc_options_decode(wire, &o, &err) == SVC_OK && o.segment_points == 1000,
		  "segment_points 1000: %02x %02x", wire[122], wire[123]);
	wire[122] = 0xe9;			/* 1001 */
	CHECK(svc_options_decode(wire, &o, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strcmp(err.detail, "\"segment_points\" must be an integer between 1 and 1000 or \"auto\".") == 0,
		  "segment_points 1001: %s", err.detail);
	wire[122] = 0xff;
	wire[123] = 0xff;
	CHECK(svc_options_decode(wire, &o, &err) == SVC_ERR_INVALID_PARAMETER,
		  "segment_points 65535 is refused");
	svc_options_default(&o);
	o.labeling = SVC_LABELING_COMPLETE_GRAPH;
	svc_options_encode(&o, wire);
	wire[121] &= (uint8_t) ~SVC_OPTIONS_BIT_SEGMENT_AUTO;
	CHECK(svc_options_decode(wire, &o, &err) == SVC_OK && o.segment_points == 20,
		  "the graph's stored 0 without the bit (options from before \"auto\") reads as 20");
	/* the bit means "auto" only with 0 stored, and only for the graph */
	wire[121] |= SVC_OPTIONS_BIT_SEGMENT_AUTO;
	wire[122] = 20;
	CHECK(svc_options_decode(wire, &o, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strstr(err.detail, "segment_points") != NULL,
		  "the graph's \"auto\" bit with a count stored is refused: %s", err.detail);
	svc_options_default(&o);
	svc_options_encode(&o, wire);
	wire[121] |= SVC_OPTIONS_BIT_SEGMENT_AUTO;
	CHECK(svc_options_decode(wire, &o, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strstr(err.detail, "segment_points") != NULL,
		  "the \"auto\" bit without the complete graph is refused: %s", err.detail);
}

static void
test_wire_round_trip(void)
{
	SvcOptions	a,
				b;
	SvcError	err;
	uint8_t		wire[SVC_OPTIONS_WIRE_SIZE];
	uint8_t		wire2[SVC_OPTIONS_WIRE_SIZE];

	CHECK(parse("{\"budget\": 77, \"gamma\": 3.25, \"seed\": 123456789012}", &a, &err) == SVC_OK,
		  "parse for round trip");
	svc_options_encode(&a, wire);
	CHECK(svc_options_decode(wire, &b, &err) == SVC_OK, "decode of an encoding");
	svc_options_encode(&b, wire2);
	CHECK(memcmp(wire, wire2, sizeof(wire)) == 0, "encode(decode(x)) == x");
	CHECK(b.budget == 77 && b.gamma == 3.25 && b.seed == UINT64_C(123456789012),
		  "values survive the round trip");
	CHECK(parse("{\"cut\": \"eom\", \"min_cluster_size\": 9, \"level\": 1.5}", &a, &err) == SVC_OK,
		  "parse cut options for round trip");
	svc_options_encode(&a, wire);
	CHECK(svc_options_decode(wire, &b, &err) == SVC_OK && b.cut == SVC_CUT_EOM &&
		  b.min_cluster_size == 9 && b.has_level && b.level == 1.5 && b.n_clusters == 0,
		  "the cut options survive the round trip");
	wire[116 - 12] = 2;			/* has_level is 0 or 1 */
	CHECK(svc_options_decode(wire, &b, &err) == SVC_ERR_INVALID_PARAMETER,
		  "has_level 2 is rejected");
	svc_options_encode(&a, wire);
	wire[0] = 0;				/* budget 0 is out of range */
	wire[1] = 0;
	CHECK(svc_options_decode(wire, &b, &err) == SVC_ERR_INVALID_PARAMETER,
		  "a damaged encoding is rejected");
}

/* ---------------------------------------------------------------------
 * The typed setters, as the glue calls them on a jsonb: the text reader
 * above is one caller of these, so the tests above cover them too; these
 * check what only a direct caller can reach.
 */
static SvcOptionsNumber
integer(int64_t v)
{
	SvcOptionsNumber n = {.value = (double) v, .integer = true, .exact = true, .int_value = v};

	return n;
}

static SvcOptionsNumber
real(double v)
{
	SvcOptionsNumber n = {.value = v};

	return n;
}

/* The error of the last setter call: status, message, detail and hint. */
static void
expect_failed(SvcStatus st, const SvcError *err, const char *what, const char *message,
			  const char *detail, const char *hint)
{
	CHECK(st == SVC_ERR_INVALID_PARAMETER && strcmp(err->message, message) == 0 &&
		  strcmp(err->detail, detail) == 0 && strcmp(err->hint, hint) == 0,
		  "%s: got %d \"%s\" / \"%s\" / \"%s\"", what, (int) st, err->message, err->detail,
		  err->hint);
}

#define KEY(s) (s), strlen(s)

static void
test_setters_each_kind(void)
{
	SvcOptions	opt;
	SvcOptionsSetter s;
	SvcError	err;
	SvcOptionsNumber n;

	svc_options_default(&opt);
	svc_options_begin(&s, &opt, false);
	n = integer(40);
	CHECK(svc_options_set_number(&s, KEY("budget"), &n, &err) == SVC_OK && opt.budget == 40,
		  "an integer sets budget");
	n = real(7.0);
	CHECK(svc_options_set_number(&s, KEY("k"), &n, &err) == SVC_OK && opt.k == 7,
		  "a whole double sets k");
	n = real(-0.0);
	CHECK(svc_options_set_number(&s, KEY("seed"), &n, &err) == SVC_OK && opt.seed == 0,
		  "-0.0 is the integer 0");
	n = integer(INT64_MAX);
	CHECK(svc_options_set_number(&s, KEY("seed"), &n, &err) == SVC_OK &&
		  opt.seed == (uint64_t) INT64_MAX, "an exact integer past 2^53 sets seed exactly");
	n = real(0.125);
	CHECK(svc_options_set_number(&s, KEY("tol"), &n, &err) == SVC_OK && opt.tol == 0.125,
		  "a number sets tol");
	n = integer(3);
	CHECK(svc_options_set_number(&s, KEY("gamma"), &n, &err) == SVC_OK && opt.gamma == 3,
		  "an integer sets a real key");
	CHECK(svc_options_set_string(&s, KEY("gamma"), KEY("auto"), &err) == SVC_OK &&
		  opt.gamma == 0.0, "\"auto\" sets gamma to 0");
	CHECK(svc_options_set_string(&s, KEY("scale"), KEY("none"), &err) == SVC_OK &&
		  opt.scale == SVC_SCALE_NONE, "a name sets an enum");
	/* values and keys are taken by length, not up to a NUL */
	CHECK(svc_options_set_string(&s, "epsilonXY", 7, "autoXY", 4, &err) == SVC_OK &&
		  opt.epsilon == 0.0, "a key and a value by their lengths");
	CHECK(svc_options_set_string(&s, KEY("strategy"), "removal", 6, &err) ==
		  SVC_ERR_INVALID_PARAMETER, "a value cut short is not the name");
	n = real(-2.5);
	CHECK(svc_options_set_number(&s, KEY("level"), &n, &err) == SVC_OK && opt.has_level &&
		  opt.level == -2.5, "a number sets level");
	CHECK(svc_options_set_null(&s, KEY("level"), &err) == SVC_OK && !opt.has_level &&
		  opt.level == 0.0, "null clears level");
	n = real(0.25);
	CHECK(svc_options_set_number(&s, KEY("nu"), &n, &err) == SVC_OK && opt.nu == 0.25,
		  "the alias nu sets outlier_fraction");
	CHECK(svc_options_finish(&s, &err) == SVC_OK, "finish: %s", err.detail);
}

/* Wrong types and numbers that are not the key's, each with the key's detail. */
static void
test_setters_refusals(void)
{
	static const char *const budget = "\"budget\" must be an integer between 1 and 100000.";
	static const char *const seed = "\"seed\" must be an integer between 0 and 9223372036854775807.";
	const char *budget_msg = "invalid value for svclust option \"budget\"";
	const char *seed_msg = "invalid value for svclust option \"seed\"";
	SvcOptions	opt;
	SvcOptionsSetter s;
	SvcError	err;
	SvcOptionsNumber n;

	svc_options_default(&opt);
	svc_options_begin(&s, &opt, false);
	n = real(3.5);
	expect_failed(svc_options_set_number(&s, KEY("budget"), &n, &err), &err, "budget 3.5",
				  budget_msg, budget, "");
	n = real(NAN);
	expect_failed(svc_options_set_number(&s, KEY("budget"), &n, &err), &err, "budget NaN",
				  budget_msg, budget, "");
	n = real(HUGE_VAL);
	expect_failed(svc_options_set_number(&s, KEY("budget"), &n, &err), &err, "budget inf",
				  budget_msg, budget, "");
	/* a whole double of 2^53 or more may be a rounded integer: refused */
	n = real(9007199254740992.0);
	expect_failed(svc_options_set_number(&s, KEY("seed"), &n, &err), &err, "seed 2^53.0",
				  seed_msg, seed, "");
	n = real(9007199254740990.0);
	CHECK(svc_options_set_number(&s, KEY("seed"), &n, &err) == SVC_OK &&
		  opt.seed == UINT64_C(9007199254740990), "a whole double below 2^53 is exact");
	/* an integer past int64 is refused, whatever its double */
	n = integer(5);
	n.exact = false;
	expect_failed(svc_options_set_number(&s, KEY("budget"), &n, &err), &err,
				  "budget inexact integer", budget_msg, budget, "");
	n = integer(-1);
	expect_failed(svc_options_set_number(&s, KEY("seed"), &n, &err), &err, "seed -1",
				  seed_msg, seed, "");
	n = integer(1);
	expect_failed(svc_options_set_number(&s, KEY("strategy"), &n, &err), &err, "strategy 1",
				  "invalid value for svclust option \"strategy\"",
				  "\"strategy\" must be one of \"removal\", \"project-knn\", "
				  "\"project-random\", \"unbudgeted\".", "");
	n = integer(0);
	expect_failed(svc_options_set_number(&s, KEY("gamma"), &n, &err), &err, "gamma 0",
				  "invalid value for svclust option \"gamma\"",
				  "\"gamma\" must be a number greater than 0 and at most 1e+12.", "");
	expect_failed(svc_options_set_string(&s, KEY("budget"), KEY("40"), &err), &err,
				  "budget \"40\"", budget_msg, budget, "");
	expect_failed(svc_options_set_string(&s, KEY("gamma"), KEY("Auto"), &err), &err,
				  "gamma \"Auto\"", "invalid value for svclust option \"gamma\"",
				  "\"gamma\" must be a positive number or \"auto\".", "");
	expect_failed(svc_options_set_string(&s, KEY("level"), KEY("high"), &err), &err,
				  "level \"high\"", "invalid value for svclust option \"level\"",
				  "\"level\" must be a finite number or null.", "");
	expect_failed(svc_options_set_bool(&s, KEY("budget"), true, &err), &err, "budget true",
				  budget_msg, budget, "");
	expect_failed(svc_options_set_bool(&s, KEY("level"), false, &err), &err, "level false",
				  "invalid value for svclust option \"level\"",
				  "\"level\" must be a finite number or null.", "");
	expect_failed(svc_options_set_null(&s, KEY("budget"), &err), &err, "budget null",
				  budget_msg, budget, "");
	expect_failed(svc_options_set_null(&s, KEY("epsilon"), &err), &err, "epsilon null",
				  "invalid value for svclust option \"epsilon\"",
				  "\"epsilon\" must be a positive number or \"auto\".", "");
	expect_failed(svc_options_set_nested(&s, KEY("budget"), &err), &err, "budget nested",
				  budget_msg, budget, "");
	expect_failed(svc_options_set_nested(&s, KEY("cut"), &err), &err, "cut nested",
				  "invalid value for svclust option \"cut\"",
				  "\"cut\" must be one of \"persistence\", \"eom\".", "");
	expect_failed(svc_options_set_nested(&s, KEY("nu"), &err), &err, "nu nested",
				  "invalid value for svclust option \"nu\"",
				  "\"nu\" must be a number of at least 0 and at most 0.99.", "");
	expect_failed(svc_options_not_object(&err), &err, "not an object",
				  "svclust options must be a JSON object", "",
				  "Pass options such as '{\"budget\": 50, \"gamma\": \"auto\"}'.");
	/* nothing refused was set */
	CHECK(opt.budget == 300 && opt.strategy == SVC_STRATEGY_PROJECT_KNN && opt.gamma == 0.0 &&
		  opt.cut == SVC_CUT_PERSISTENCE && !opt.has_level, "refused values leave opt alone");
}

/* Unknown keys, long keys, and the keys a recut refuses. */
static void
test_setters_keys(void)
{
	static const char *const valid =
		"Valid options are: budget, strategy, k, gamma, c, epsilon, tol, max_iter, seed, "
		"scale, sample, labeling, segment_points, outlier_fraction (or nu), bandwidth_k, solver, "
		"cache_mb, aid_gap, label_radius, label_sample, label_interpolation, anomaly_bound, "
		"label_spread, keep_rows, window, keep_isolated, cut, merge_ratio, min_cluster_share, "
		"min_cluster_size, min_cluster_size_rows, assign_rule, n_clusters, level.";
	static const char *const cut_list =
		"Only the cut of the tree can change: cut, merge_ratio, min_cluster_share, "
		"min_cluster_size, min_cluster_size_rows, assign_rule, n_clusters, level.";
	static const char *const cut_unknown =
		"Only the cut of the tree can change after training: cut, merge_ratio, "
		"min_cluster_share, min_cluster_size, min_cluster_size_rows, assign_rule, n_clusters, level.";
	SvcOptions	opt;
	SvcOptionsSetter s;
	SvcError	err;
	SvcOptionsNumber n = integer(2);
	char		key[80];
	char		message[160];

	svc_options_default(&opt);
	svc_options_begin(&s, &opt, false);
	expect_failed(svc_options_set_number(&s, KEY("budgets"), &n, &err), &err, "budgets",
				  "unknown svclust option \"budgets\"", valid, "Did you mean \"budget\"?");
	expect_failed(svc_options_set_number(&s, "budget", 3, &n, &err), &err, "bud",
				  "unknown svclust option \"bud\"", valid, "");
	expect_failed(svc_options_set_bool(&s, "k\0", 2, true, &err), &err, "k and a NUL",
				  "unknown svclust option \"k\"", valid, "");
	expect_failed(svc_options_set_null(&s, KEY("Level"), &err), &err, "Level",
				  "unknown svclust option \"Level\"", valid, "Did you mean \"level\"?");

	/* 63 bytes are shown whole; 64 are cut to 63 and "..." */
	memset(key, 'k', sizeof(key));
	snprintf(message, sizeof(message), "unknown svclust option \"%.63s\"", key);
	expect_failed(svc_options_set_number(&s, key, 63, &n, &err), &err, "63-byte key",
				  message, valid, "");
	snprintf(message, sizeof(message), "unknown svclust option \"%.63s...\"", key);
	expect_failed(svc_options_set_number(&s, key, 64, &n, &err), &err, "64-byte key",
				  message, valid, "");
	expect_failed(svc_options_set_number(&s, key, sizeof(key), &n, &err), &err, "80-byte key",
				  message, valid, "");
	/* ... never inside a UTF-8 character: a two-byte one at bytes 62-63 goes */
	memcpy(key + 62, "\xc3\xa9", 2);
	snprintf(message, sizeof(message), "unknown svclust option \"%.62s...\"", key);
	expect_failed(svc_options_set_number(&s, key, sizeof(key), &n, &err), &err,
				  "a long key cut before a character", message, valid, "");
	memcpy(key + 61, "\xc3\xa9", 2);
	key[63] = 'k';
	snprintf(message, sizeof(message), "unknown svclust option \"%.63s...\"", key);
	expect_failed(svc_options_set_number(&s, key, sizeof(key), &n, &err), &err,
				  "a long key cut after a character", message, valid, "");

	/* a recut refuses training keys and unknown ones before their value */
	svc_options_begin(&s, &opt, true);
	expect_failed(svc_options_set_number(&s, KEY("budget"), &n, &err), &err, "recut budget",
				  "svclust option \"budget\" cannot change after training", cut_list,
				  "Train a new model with svc_train() to change \"budget\".");
	expect_failed(svc_options_set_nested(&s, KEY("nu"), &err), &err, "recut nu",
				  "svclust option \"nu\" cannot change after training", cut_list,
				  "Train a new model with svc_train() to change \"nu\".");
	expect_failed(svc_options_set_string(&s, KEY("bogus"), KEY("x"), &err), &err,
				  "recut bogus", "unknown svclust option \"bogus\"", cut_unknown, "");
	expect_failed(svc_options_set_number(&s, KEY("n_clusterz"), &n, &err), &err,
				  "recut n_clusterz", "unknown svclust option \"n_clusterz\"", cut_unknown,
				  "Did you mean \"n_clusters\"?");
	/* a key too long to be one is unknown, even to a recut */
	expect_failed(svc_options_set_null(&s, key, sizeof(key), &err), &err, "recut long key",
				  message, cut_unknown, "");
	CHECK(svc_options_set_number(&s, KEY("n_clusters"), &n, &err) == SVC_OK &&
		  svc_options_finish(&s, &err) == SVC_OK && opt.n_clusters == 2,
		  "a recut takes n_clusters: %s", err.message);
}

/* What finish settles: n_clusters against level, and validation. */
static void
test_setters_finish(void)
{
	SvcOptions	opt;
	SvcOptionsSetter s;
	SvcError	err;
	SvcOptionsNumber two = integer(2);
	SvcOptionsNumber half = real(0.5);

	svc_options_default(&opt);
	svc_options_begin(&s, &opt, false);
	CHECK(svc_options_set_number(&s, KEY("n_clusters"), &two, &err) == SVC_OK &&
		  svc_options_set_number(&s, KEY("level"), &half, &err) == SVC_OK,
		  "each of n_clusters and level is taken alone");
	expect_failed(svc_options_finish(&s, &err), &err, "n_clusters and level",
				  "svclust options \"n_clusters\" and \"level\" cannot both be set",
				  "Each names a cut of the tree; give one of them.", "");

	svc_options_default(&opt);
	opt.n_clusters = 3;
	svc_options_begin(&s, &opt, true);
	CHECK(svc_options_set_number(&s, KEY("level"), &half, &err) == SVC_OK &&
		  svc_options_finish(&s, &err) == SVC_OK && opt.has_level && opt.n_clusters == 0,
		  "level clears a stored n_clusters at finish");
	svc_options_begin(&s, &opt, true);
	CHECK(svc_options_set_string(&s, KEY("cut"), KEY("eom"), &err) == SVC_OK &&
		  svc_options_finish(&s, &err) == SVC_OK && !opt.has_level && opt.level == 0.0 &&
		  opt.cut == SVC_CUT_EOM, "a rule alone clears a stored level at finish");

	/* finish validates the whole struct, keys given or not */
	svc_options_default(&opt);
	opt.sample = 1;
	svc_options_begin(&s, &opt, false);
	expect_failed(svc_options_finish(&s, &err), &err, "finish validates",
				  "invalid value for svclust option \"sample\"",
				  "\"sample\" must be an integer between 2 and 10000000.", "");
}

int
main(void)
{
	test_gamma_rule_and_smallest_cluster();
	test_defaults_and_keys();
	test_errors();
	test_cut_keys();
	test_numeric_bounds();
	test_integer_forms();
	test_enum_keys();
	test_key_lists();
	test_validate();
	test_wire_golden();
	test_wire_round_trip();
	test_setters_each_kind();
	test_setters_refusals();
	test_setters_keys();
	test_setters_finish();
	return unit_summary("test_options");
}
