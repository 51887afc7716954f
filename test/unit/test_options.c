/*
 * test_options.c - the option parser: defaults, every key, every error
 */
#include "options.h"
#include "unit.h"

#include <string.h>

static SvcStatus
parse(const char *json, SvcOptions *opt, SvcError *err)
{
	svc_options_default(opt);
	return svc_options_parse(json, strlen(json), opt, err);
}

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
	CHECK(svc_options_parse_cut(train_json, strlen(train_json), &opt, &err) ==
		  SVC_ERR_INVALID_PARAMETER && strstr(err.message, "cannot change after training"),
		  "a training key is refused after training: %s", err.message);
	expect_error("{\"n_clusters\": 2, \"level\": 0}", "cannot both be set");
	expect_error("{\"n_clusters\": -1}", "n_clusters");
	expect_error("{\"n_clusters\": 1000001}", "n_clusters");
	expect_error("{\"min_cluster_size\": -1}", "min_cluster_size");
	expect_error("{\"cut\": \"single\"}", "\"cut\" must be one of");
	expect_error("{\"level\": \"high\"}", "level");
	expect_error("{\"level\": 1e301}", "level");
	expect_error("{\"outlier_fraction\": 1}", "outlier_fraction");
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

int
main(void)
{
	test_defaults_and_keys();
	test_errors();
	test_cut_keys();
	test_wire_round_trip();
	return unit_summary("test_options");
}
