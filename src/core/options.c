/*
 * options.c - training options: defaults, the key table, typed setters,
 * validation and the warm start's check
 *
 * One table holds every key.  The setters take one key and a typed value
 * at a time; the glue calls them while walking a jsonb, and the small text
 * reader (options_text.c, for the unit tests and the fuzzer, which hand it
 * anything) calls them too, so that both take the same options with the
 * same errors.  The wire encoding is options_wire.c.
 */
#include "options.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N_CLUSTERS 1000000

void
svc_options_default(SvcOptions *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->budget = SVC_DEFAULT_BUDGET;
	opt->strategy = SVC_STRATEGY_PROJECT_KNN;
	opt->k = 5;
	opt->gamma = 0.0;			/* auto */
	opt->c = 32.0;
	opt->epsilon = 0.0;			/* auto */
	opt->tol = 0.01;
	opt->max_iter = 100000;
	opt->seed = 42;
	opt->scale = SVC_SCALE_STANDARD;
	opt->sample = 10000;
	opt->labeling = SVC_LABELING_TREE;
	opt->nu = 0.05;
	opt->bandwidth_k = 0;
	opt->segment_points = SVC_SEGMENT_POINTS_AUTO;
	opt->cut = SVC_CUT_PERSISTENCE;
	opt->merge_ratio = 0.4;
	opt->min_cluster_share = 0.03;
	opt->min_cluster_size = SVC_MIN_CLUSTER_SIZE_DEFAULT;
	opt->n_clusters = 0;
	opt->has_level = false;
	opt->level = 0.0;
	opt->solver = SVC_SOLVER_BSGD;
	opt->cache_mb = 0;
	opt->aid_gap = SVC_AID_GAP_DEFAULT;
	opt->label_radius = SVC_LABEL_RADIUS_DEFAULT;
	opt->label_sample = SVC_LABEL_SAMPLE_DEFAULT;
	opt->label_curve = SVC_LABEL_CURVE_GEOMETRIC;
	opt->anomaly_bound = SVC_ANOMALY_BOUND_DEFAULT;
	opt->label_spread = 1;
	opt->keep_rows = 0;
	opt->window = SVC_WINDOW_OLDEST;
	opt->keep_isolated = 1;
	opt->min_size_rows = SVC_SIZE_ROWS_SEPARATED;
	opt->assign_rule = SVC_ASSIGN_AUTO;
	opt->gamma_rule = SVC_GAMMA_RULE_AUTO;
}

/* ---------------------------------------------------------------------
 * The names of the enum keys, in the order an error lists them.  They are
 * the only spelling of each name: the svc_*_name functions read them too.
 */
typedef struct OptChoice
{
	const char *name;
	int			value;
} OptChoice;

static const OptChoice strategy_choices[] = {
	{"removal", SVC_STRATEGY_REMOVAL},
	{"project-knn", SVC_STRATEGY_PROJECT_KNN},
	{"project-random", SVC_STRATEGY_PROJECT_RANDOM},
	{"unbudgeted", SVC_STRATEGY_UNBUDGETED},
	{NULL, 0}
};

static const OptChoice scale_choices[] = {
	{"standard", SVC_SCALE_STANDARD},
	{"minmax", SVC_SCALE_MINMAX},
	{"none", SVC_SCALE_NONE},
	{NULL, 0}
};

static const OptChoice labeling_choices[] = {
	{"tree", SVC_LABELING_TREE},
	{"paper", SVC_LABELING_PAPER},
	{"complete-graph", SVC_LABELING_COMPLETE_GRAPH},
	{NULL, 0}
};

static const OptChoice solver_choices[] = {
	{"bsgd", SVC_SOLVER_BSGD},
	{"smo", SVC_SOLVER_SMO},
	{"aid", SVC_SOLVER_AID},
	{"incremental", SVC_SOLVER_INCREMENTAL},
	{NULL, 0}
};

static const OptChoice label_curve_choices[] = {
	{"geometric", SVC_LABEL_CURVE_GEOMETRIC},
	{"linear", SVC_LABEL_CURVE_LINEAR},
	{NULL, 0}
};

static const OptChoice window_choices[] = {
	{"oldest", SVC_WINDOW_OLDEST},
	{"reservoir", SVC_WINDOW_RESERVOIR},
	{NULL, 0}
};

static const OptChoice size_rows_choices[] = {
	{"sample", SVC_SIZE_ROWS_SAMPLE},
	{"labelled", SVC_SIZE_ROWS_LABELLED},
	{"separated", SVC_SIZE_ROWS_SEPARATED},
	{NULL, 0}
};

static const OptChoice assign_rule_choices[] = {
	{"auto", SVC_ASSIGN_AUTO},
	{"trajectory", SVC_ASSIGN_TRAJECTORY},
	{NULL, 0}
};

static const OptChoice cut_choices[] = {
	{"persistence", SVC_CUT_PERSISTENCE},
	{"eom", SVC_CUT_EOM},
	{NULL, 0}
};

/* The choice of that value, or NULL (a damaged model may hold any byte). */
static const OptChoice *
choice_by_value(const OptChoice *choices, int value)
{
	for (; choices->name != NULL; choices++)
		if (choices->value == value)
			return choices;
	return NULL;
}

/* name is len bytes, not NUL-terminated. */
static const OptChoice *
choice_by_name(const OptChoice *choices, const char *name, size_t len)
{
	for (; choices->name != NULL; choices++)
		if (strlen(choices->name) == len && memcmp(choices->name, name, len) == 0)
			return choices;
	return NULL;
}

static const char *
choice_name(const OptChoice *choices, int value)
{
	const OptChoice *c = choice_by_value(choices, value);

	return c != NULL ? c->name : "unknown";
}

const char *
svc_strategy_name(SvcStrategy s)
{
	return choice_name(strategy_choices, (int) s);
}

const char *
svc_scale_name(SvcScale s)
{
	return choice_name(scale_choices, (int) s);
}

const char *
svc_labeling_name(SvcLabeling l)
{
	return choice_name(labeling_choices, (int) l);
}

const char *
svc_cut_name(SvcCutRule c)
{
	return choice_name(cut_choices, (int) c);
}

const char *
svc_label_curve_name(SvcLabelCurve c)
{
	return choice_name(label_curve_choices, (int) c);
}

const char *
svc_window_name(SvcWindow w)
{
	return choice_name(window_choices, (int) w);
}

const char *
svc_size_rows_name(SvcSizeRows r)
{
	return choice_name(size_rows_choices, (int) r);
}

const char *
svc_assign_rule_name(SvcAssignRule r)
{
	return choice_name(assign_rule_choices, (int) r);
}

const char *
svc_gamma_rule_name(const SvcOptions *opt)
{
	if (opt->gamma != 0.0)
		return "given";
	return opt->gamma_rule == SVC_GAMMA_RULE_DIM ? "auto-d" : "auto";
}

/* ---------------------------------------------------------------------
 * The keys.  Each row is all there is to know about one: its names, the
 * field it sets, its range and whether a trained model may change it.  The
 * setters, svc_options_validate and the lists of keys in the error details
 * all read this table, so a range or a key is written once.
 */
typedef enum OptKind
{
	OPT_INT,					/* an integer in [ilo, ihi] */
	OPT_INT_AUTO,				/* the same, or "auto", stored as 0 */
	OPT_REAL,					/* a finite number in [lo, hi] or (lo, hi] */
	OPT_REAL_AUTO,				/* the same, or "auto", stored as 0 */
	OPT_ENUM,					/* one of the names in choices */
	OPT_LEVEL,					/* a finite number in [lo, hi], or null;
								 * also sets has_level */
	OPT_BOOL					/* true or false, an int32_t 1 or 0 */
} OptKind;

typedef struct OptKey
{
	const char *name;
	const char *alias;			/* another name it takes, or NULL */
	OptKind		kind;
	size_t		offset;			/* of the field it sets in SvcOptions */
	size_t		size;			/* of that field (OPT_INT, OPT_ENUM: 4 or 8) */
	int64_t		ilo;			/* OPT_INT: the range, both ends included */
	int64_t		ihi;
	double		lo;				/* the other numeric kinds: the range */
	double		hi;
	bool		lo_open;		/* (lo, hi] rather than [lo, hi] */
	const OptChoice *choices;	/* OPT_ENUM: the names it takes */
	bool		cut;			/* a cut of the tree: may change after
								 * training (svc_options_parse_cut) */
} OptKey;

#define FIELD(f) .offset = offsetof(SvcOptions, f), .size = sizeof(((SvcOptions *) 0)->f)

/*
 * In the order the error details list them; svc_options_validate checks
 * them in this order too and reports the first one out of range.
 */
static const OptKey option_table[] = {
	{.name = "budget", .kind = OPT_INT, FIELD(budget), .ilo = 1, .ihi = SVC_MAX_BUDGET},
	{.name = "strategy", .kind = OPT_ENUM, FIELD(strategy), .choices = strategy_choices},
	{.name = "k", .kind = OPT_INT, FIELD(k), .ilo = 1, .ihi = SVC_MAX_K},
	{.name = "gamma", .kind = OPT_REAL_AUTO, FIELD(gamma), .lo = 0.0, .lo_open = true, .hi = 1e12},
	{.name = "c", .kind = OPT_REAL, FIELD(c), .lo = 0.0, .lo_open = true, .hi = 1e6},
	{.name = "epsilon", .kind = OPT_REAL_AUTO, FIELD(epsilon), .lo = 0.0, .lo_open = true, .hi = 1e6},
	{.name = "tol", .kind = OPT_REAL, FIELD(tol), .lo = 0.0, .lo_open = true, .hi = 1e6},
	{.name = "max_iter", .kind = OPT_INT, FIELD(max_iter), .ilo = 1, .ihi = SVC_MAX_ITER},
	{.name = "seed", .kind = OPT_INT, FIELD(seed), .ilo = 0, .ihi = INT64_MAX},
	{.name = "scale", .kind = OPT_ENUM, FIELD(scale), .choices = scale_choices},
	{.name = "sample", .kind = OPT_INT, FIELD(sample), .ilo = 2, .ihi = SVC_MAX_SAMPLE},
	{.name = "labeling", .kind = OPT_ENUM, FIELD(labeling), .choices = labeling_choices},
	{.name = "segment_points", .kind = OPT_INT_AUTO, FIELD(segment_points), .ilo = 1,
	.ihi = SVC_SEGMENT_POINTS_MAX},
	{.name = "outlier_fraction", .alias = "nu", .kind = OPT_REAL, FIELD(nu), .lo = 0.0, .hi = 0.99},
	{.name = "bandwidth_k", .kind = OPT_INT, FIELD(bandwidth_k), .ilo = 0, .ihi = SVC_MAX_K},
	{.name = "solver", .kind = OPT_ENUM, FIELD(solver), .choices = solver_choices},
	{.name = "cache_mb", .kind = OPT_INT, FIELD(cache_mb), .ilo = 0, .ihi = SVC_MAX_CACHE_MB},
	{.name = "aid_gap", .kind = OPT_REAL, FIELD(aid_gap), .lo = 0.0, .lo_open = true, .hi = 1.0},
	{.name = "label_radius", .kind = OPT_REAL, FIELD(label_radius), .lo = 0.0, .lo_open = true,
	.hi = 0.999},
	{.name = "label_sample", .kind = OPT_INT, FIELD(label_sample), .ilo = 1,
	.ihi = SVC_MAX_SAMPLE},
	{.name = "label_interpolation", .kind = OPT_ENUM, FIELD(label_curve),
	.choices = label_curve_choices},
	{.name = "anomaly_bound", .kind = OPT_REAL, FIELD(anomaly_bound), .lo = 0.0, .lo_open = true,
	.hi = 1e6},
	{.name = "label_spread", .kind = OPT_BOOL, FIELD(label_spread)},
	{.name = "keep_rows", .kind = OPT_BOOL, FIELD(keep_rows)},
	{.name = "window", .kind = OPT_ENUM, FIELD(window), .choices = window_choices},
	{.name = "keep_isolated", .kind = OPT_BOOL, FIELD(keep_isolated)},
	{.name = "cut", .kind = OPT_ENUM, FIELD(cut), .choices = cut_choices, .cut = true},
	{.name = "merge_ratio", .kind = OPT_REAL, FIELD(merge_ratio), .lo = 0.0, .hi = 1.0,
	.cut = true},
	{.name = "min_cluster_share", .kind = OPT_REAL, FIELD(min_cluster_share), .lo = 0.0,
	.hi = 0.5, .cut = true},
	{.name = "min_cluster_size", .kind = OPT_INT, FIELD(min_cluster_size), .ilo = 0,
	.ihi = SVC_MAX_SAMPLE, .cut = true},
	{.name = "min_cluster_size_rows", .kind = OPT_ENUM, FIELD(min_size_rows),
	.choices = size_rows_choices, .cut = true},
	{.name = "assign_rule", .kind = OPT_ENUM, FIELD(assign_rule),
	.choices = assign_rule_choices, .cut = true},
	{.name = "n_clusters", .kind = OPT_INT, FIELD(n_clusters), .ilo = 0, .ihi = MAX_N_CLUSTERS,
	.cut = true},
	{.name = "level", .kind = OPT_LEVEL, FIELD(level), .lo = -1e300, .hi = 1e300, .cut = true},
};

#undef FIELD

#define N_KEYS (sizeof(option_table) / sizeof(option_table[0]))

/* OPT_ENUM fields are read and written as int32_t. */
_Static_assert(sizeof(SvcStrategy) == sizeof(int32_t) && sizeof(SvcScale) == sizeof(int32_t) &&
			   sizeof(SvcLabeling) == sizeof(int32_t) && sizeof(SvcCutRule) == sizeof(int32_t) &&
			   sizeof(SvcLabelCurve) == sizeof(int32_t) && sizeof(SvcWindow) == sizeof(int32_t) &&
			   sizeof(SvcSolver) == sizeof(int32_t) && sizeof(SvcAssignRule) == sizeof(int32_t),
			   "the enum options are int32_t-sized");

/* What the details say of values that "auto" also names (null: options.h). */
#define AUTO_EXPECT "a positive number or \"auto\""

/* ... and of a stored level: has_level also rules out n_clusters. */
#define LEVEL_STORED_EXPECT SVC_OPTIONS_LEVEL_EXPECT ", not set with n_clusters"

static bool
names(const char *name, const char *key, size_t keylen)
{
	return name != NULL && strlen(name) == keylen && memcmp(name, key, keylen) == 0;
}

/* The row of a key of keylen bytes (a NUL byte in it matches no name). */
static const OptKey *
find_key(const char *key, size_t keylen)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (names(option_table[i].name, key, keylen) ||
			names(option_table[i].alias, key, keylen))
			return &option_table[i];
	return NULL;
}

/*
 * The integer fields are int32_t or int64_t; seed is a uint64_t, read as an
 * int64_t so that a stored seed past INT64_MAX reads negative, out of its
 * range.  memcpy, since the enums' own type is the compiler's choice.
 */
static int64_t
get_int(const SvcOptions *o, const OptKey *k)
{
	const char *p = (const char *) o + k->offset;
	int32_t		v32;
	int64_t		v64;

	if (k->size == sizeof(int32_t))
	{
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v64, p, sizeof(v64));
	return v64;
}

/* v is within the key's range, so it fits the field. */
static void
put_int(SvcOptions *o, const OptKey *k, int64_t v)
{
	char	   *p = (char *) o + k->offset;
	int32_t		v32 = (int32_t) v;

	if (k->size == sizeof(int32_t))
		memcpy(p, &v32, sizeof(v32));
	else
		memcpy(p, &v, sizeof(v));
}

static double
get_real(const SvcOptions *o, const OptKey *k)
{
	double		v;

	memcpy(&v, (const char *) o + k->offset, sizeof(v));
	return v;
}

static void
put_real(SvcOptions *o, const OptKey *k, double v)
{
	memcpy((char *) o + k->offset, &v, sizeof(v));
}

static bool
real_in_range(const OptKey *k, double x)
{
	return isfinite(x) && (k->lo_open ? x > k->lo : x >= k->lo) && x <= k->hi;
}

/* Append to the string in buf (len bytes in all), cut if it is full. */
static void
appendf(char *buf, size_t len, const char *fmt,...)
__attribute__((format(printf, 3, 4)));

static void
appendf(char *buf, size_t len, const char *fmt,...)
{
	size_t		n = strlen(buf);
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* The key's range in words, for "\"key\" must be ...". */
static const char *
describe(const OptKey *k, char *buf, size_t len)
{
	switch (k->kind)
	{
		case OPT_INT:
			snprintf(buf, len, "an integer between %lld and %lld",
					 (long long) k->ilo, (long long) k->ihi);
			break;
		case OPT_INT_AUTO:
			snprintf(buf, len, "an integer between %lld and %lld or \"auto\"",
					 (long long) k->ilo, (long long) k->ihi);
			break;
		case OPT_REAL:
		case OPT_REAL_AUTO:
			snprintf(buf, len, "a number %s %g and at most %g",
					 k->lo_open ? "greater than" : "of at least", k->lo, k->hi);
			break;
		case OPT_ENUM:
			snprintf(buf, len, "one of ");
			for (const OptChoice *c = k->choices; c->name != NULL; c++)
				appendf(buf, len, "%s\"%s\"", c == k->choices ? "" : ", ", c->name);
			break;
		case OPT_LEVEL:
			snprintf(buf, len, "%s", SVC_OPTIONS_LEVEL_EXPECT);
			break;
		case OPT_BOOL:
			snprintf(buf, len, "true or false");
			break;
	}
	return buf;
}

/* The keys, all or only the cut ones, as the error details list them. */
static const char *
list_keys(bool cut_only, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < N_KEYS; i++)
	{
		const OptKey *k = &option_table[i];

		if (cut_only && !k->cut)
			continue;
		appendf(buf, len, "%s%s", buf[0] != '\0' ? ", " : "", k->name);
		if (k->alias != NULL)
			appendf(buf, len, " (or %s)", k->alias);
	}
	return buf;
}

/* ---------------------------------------------------------------------
 * The errors, and the setters: one per kind of JSON value, the range and
 * the message from the key's row.  key is the name as given, so that the
 * error names "nu" when nu was given.
 */
SvcStatus
svc_options_bad_value(SvcError *err, const char *key, const char *expect)
{
	svc_fail(err, SVC_ERR_INVALID_PARAMETER, "invalid value for svclust option \"%s\"", key);
	svc_error_detail(err, "\"%s\" must be %s.", key, expect);
	return SVC_ERR_INVALID_PARAMETER;
}

SvcStatus
svc_options_not_object(SvcError *err)
{
	svc_fail(err, SVC_ERR_INVALID_PARAMETER, "svclust options must be a JSON object");
	svc_error_hint(err, "Pass options such as '{\"budget\": 50, \"gamma\": \"auto\"}'.");
	return SVC_ERR_INVALID_PARAMETER;
}

/*
 * The edit distance between a and b (insertions, deletions, substitutions
 * and swaps of two neighbours, each 1), both at most
 * SVC_OPTIONS_KEY_SHOWN bytes.
 */
static int
edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	int			rows[3][SVC_OPTIONS_KEY_SHOWN + 1];
	int		   *prev2 = rows[0],
			   *prev = rows[1],
			   *cur = rows[2];

	for (size_t j = 0; j <= lb; j++)
		prev[j] = (int) j;
	for (size_t i = 1; i <= la; i++)
	{
		int		   *t;

		cur[0] = (int) i;
		for (size_t j = 1; j <= lb; j++)
		{
			int			d = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
				prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

/*
 * The key (or alias) a mistyped key most likely meant: the one nearest in
 * edit distance, if it is the only one that near and the distance is at
 * most 2 and under half the key's length; else NULL.
 */
static const OptKey *
nearest_key(const char *key, size_t keylen, const char **spelled)
{
	const OptKey *best = NULL;
	int			best_d = INT32_MAX;
	bool		tie = false;

	if (keylen > SVC_OPTIONS_KEY_SHOWN)
		return NULL;
	for (size_t i = 0; i < N_KEYS; i++)
		for (int alias = 0; alias < 2; alias++)
		{
			const char *name = alias ? option_table[i].alias : option_table[i].name;
			size_t		len;
			int			d;

			if (name == NULL || (len = strlen(name)) > SVC_OPTIONS_KEY_SHOWN)
				continue;
			d = edit_distance(key, keylen, name, len);
			if (d < best_d)
			{
				best = &option_table[i];
				*spelled = name;
				best_d = d;
				tie = false;
			}
			else if (d == best_d && best != &option_table[i])
				tie = true;
		}
	if (tie || best_d > 2 || 2 * (size_t) best_d >= keylen)
		return NULL;
	return best;
}

/*
 * An unknown key; one too long to be a key is shown cut, never inside a
 * UTF-8 character.  The detail lists the keys that can be given (only
 * the cut's when recutting a model), the hint the key it most likely
 * meant.
 */
static SvcStatus
unknown_key(SvcError *err, const char *key, size_t keylen, bool cut_only)
{
	char		keys[SVC_ERRMSG_LEN];
	size_t		shown = keylen;
	const char *spelled = NULL;
	const OptKey *near = nearest_key(key, keylen, &spelled);

	if (keylen > SVC_OPTIONS_KEY_SHOWN)
	{
		shown = SVC_OPTIONS_KEY_SHOWN;
		while (shown > 0 && ((unsigned char) key[shown] & 0xC0) == 0x80)
			shown--;
	}
	svc_fail(err, SVC_ERR_INVALID_PARAMETER, "unknown svclust option \"%.*s%s\"",
			 (int) shown, key, shown < keylen ? "..." : "");
	if (cut_only)
		svc_error_detail(err, "Only the cut of the tree can change after training: %s.",
						 list_keys(true, keys, sizeof(keys)));
	else
		svc_error_detail(err, "Valid options are: %s.", list_keys(false, keys, sizeof(keys)));
	if (near != NULL && cut_only && !near->cut)
		svc_error_hint(err, "Did you mean \"%s\"? It cannot change after training: train a new model with svc_train().",
					   spelled);
	else if (near != NULL)
		svc_error_hint(err, "Did you mean \"%s\"?", spelled);
	return SVC_ERR_INVALID_PARAMETER;
}

/* A known key but a cut key, when recutting a model. */
static SvcStatus
fixed_after_training(SvcError *err, const char *key, size_t keylen)
{
	char		keys[SVC_ERRMSG_LEN];

	svc_fail(err, SVC_ERR_INVALID_PARAMETER,
			 "svclust option \"%.*s\" cannot change after training", (int) keylen, key);
	svc_error_detail(err, "Only the cut of the tree can change: %s.",
					 list_keys(true, keys, sizeof(keys)));
	svc_error_hint(err, "Train a new model with svc_train() to change \"%.*s\".",
				   (int) keylen, key);
	return SVC_ERR_INVALID_PARAMETER;
}

/*
 * The row of a key the setter may set, or NULL with the error.  The key is
 * copied NUL-terminated into name for the messages about its value.
 */
static const OptKey *
lookup(const SvcOptionsSetter *s, const char *key, size_t keylen,
	   char name[SVC_OPTIONS_KEY_SHOWN + 1], SvcError *err)
{
	const OptKey *k;

	if (keylen > SVC_OPTIONS_KEY_SHOWN)
	{
		unknown_key(err, key, keylen, s->cut_only);
		return NULL;
	}
	k = find_key(key, keylen);
	if (k == NULL)
	{
		unknown_key(err, key, keylen, s->cut_only);
		return NULL;
	}
	if (s->cut_only && !k->cut)
	{
		fixed_after_training(err, key, keylen);
		return NULL;
	}
	memcpy(name, key, keylen);
	name[keylen] = '\0';
	return k;
}

/* A value of a type the key does not take: the detail names those it does. */
static SvcStatus
wrong_type(const OptKey *k, const char *key, SvcError *err)
{
	char		expect[SVC_ERRMSG_LEN];

	if (k->kind == OPT_REAL_AUTO)
		return svc_options_bad_value(err, key, AUTO_EXPECT);
	if (k->kind == OPT_LEVEL)
		return svc_options_bad_value(err, key, SVC_OPTIONS_LEVEL_EXPECT);
	return svc_options_bad_value(err, key, describe(k, expect, sizeof(expect)));
}

/* What svc_options_finish needs to know of a key set. */
static SvcStatus
taken(SvcOptionsSetter *s, const OptKey *k)
{
	if (strcmp(k->name, "n_clusters") == 0)
		s->saw_n_clusters = true;
	else if (strcmp(k->name, "level") == 0)
		s->saw_level = true;
	else if (strcmp(k->name, "cut") == 0 || strcmp(k->name, "merge_ratio") == 0)
		s->saw_rule = true;
	else if (strcmp(k->name, "solver") == 0)
		s->saw_solver = true;
	else if (strcmp(k->name, "tol") == 0)
		s->saw_tol = true;
	else if (strcmp(k->name, "max_iter") == 0)
		s->saw_max_iter = true;
	else if (strcmp(k->name, "min_cluster_share") == 0)
		s->saw_share = true;
	else if (strcmp(k->name, "min_cluster_size") == 0)
		s->saw_size = true;
	else if (strcmp(k->name, "keep_isolated") == 0)
		s->saw_isolated = true;
	else if (strcmp(k->name, "gamma") == 0 && s->opt->gamma != 0.0)
		s->opt->gamma_rule = SVC_GAMMA_RULE_AUTO;	/* one encoding (options.h) */
	return SVC_OK;
}

/* Whether a number is an integer (see SvcOptionsNumber); *out its value. */
static bool
number_as_int(const SvcOptionsNumber *n, int64_t *out)
{
	if (n->integer)
	{
		*out = n->int_value;
		return n->exact;
	}
	if (!isfinite(n->value) || n->value != floor(n->value) ||
		fabs(n->value) >= 9007199254740992.0)
		return false;
	*out = (int64_t) n->value;	/* -0.0 is 0 */
	return true;
}

void
svc_options_begin(SvcOptionsSetter *s, SvcOptions *opt, bool cut_only)
{
	memset(s, 0, sizeof(*s));
	s->opt = opt;
	s->cut_only = cut_only;
}

SvcStatus
svc_options_set_number(SvcOptionsSetter *s, const char *key, size_t keylen,
					   const SvcOptionsNumber *value, SvcError *err)
{
	char		name[SVC_OPTIONS_KEY_SHOWN + 1];
	const OptKey *k = lookup(s, key, keylen, name, err);
	int64_t		iv;

	if (k == NULL)
		return SVC_ERR_INVALID_PARAMETER;
	switch (k->kind)
	{
		case OPT_INT:
		case OPT_INT_AUTO:
			if (!number_as_int(value, &iv) || iv < k->ilo || iv > k->ihi)
				break;
			put_int(s->opt, k, iv);
			return taken(s, k);
		case OPT_REAL:
		case OPT_REAL_AUTO:
			if (!real_in_range(k, value->value))
				break;
			put_real(s->opt, k, value->value);
			return taken(s, k);
		case OPT_LEVEL:
			if (!real_in_range(k, value->value))
				return svc_options_bad_value(err, name, SVC_OPTIONS_LEVEL_EXPECT);
			s->opt->has_level = true;
			s->opt->level = value->value;
			return taken(s, k);
		case OPT_ENUM:
		case OPT_BOOL:
			return wrong_type(k, name, err);
	}
	/* out of range: the detail gives the range, even where "auto" is taken */
	{
		char		expect[SVC_ERRMSG_LEN];

		return svc_options_bad_value(err, name, describe(k, expect, sizeof(expect)));
	}
}

SvcStatus
svc_options_set_string(SvcOptionsSetter *s, const char *key, size_t keylen,
					   const char *value, size_t len, SvcError *err)
{
	char		name[SVC_OPTIONS_KEY_SHOWN + 1];
	const OptKey *k = lookup(s, key, keylen, name, err);
	const OptChoice *c;

	if (k == NULL)
		return SVC_ERR_INVALID_PARAMETER;
	if (k->kind == OPT_INT_AUTO && len == 4 && memcmp(value, "auto", 4) == 0)
	{
		put_int(s->opt, k, 0);
		return taken(s, k);
	}
	if (k->kind == OPT_REAL_AUTO && len == 4 && memcmp(value, "auto", 4) == 0)
	{
		put_real(s->opt, k, 0.0);
		if (k->offset == offsetof(SvcOptions, gamma))
			s->opt->gamma_rule = SVC_GAMMA_RULE_AUTO;
		return taken(s, k);
	}
	/* gamma's rule before 0.5.0 (options.h) */
	if (k->offset == offsetof(SvcOptions, gamma) && len == 6 && memcmp(value, "auto-d", 6) == 0)
	{
		put_real(s->opt, k, 0.0);
		s->opt->gamma_rule = SVC_GAMMA_RULE_DIM;
		return taken(s, k);
	}
	if (k->kind == OPT_ENUM && (c = choice_by_name(k->choices, value, len)) != NULL)
	{
		put_int(s->opt, k, c->value);
		return taken(s, k);
	}
	return wrong_type(k, name, err);
}

SvcStatus
svc_options_set_bool(SvcOptionsSetter *s, const char *key, size_t keylen, bool value,
					 SvcError *err)
{
	char		name[SVC_OPTIONS_KEY_SHOWN + 1];
	const OptKey *k = lookup(s, key, keylen, name, err);

	if (k == NULL)
		return SVC_ERR_INVALID_PARAMETER;
	if (k->kind != OPT_BOOL)
		return wrong_type(k, name, err);
	put_int(s->opt, k, value ? 1 : 0);
	return taken(s, k);
}

SvcStatus
svc_options_set_null(SvcOptionsSetter *s, const char *key, size_t keylen, SvcError *err)
{
	char		name[SVC_OPTIONS_KEY_SHOWN + 1];
	const OptKey *k = lookup(s, key, keylen, name, err);

	if (k == NULL)
		return SVC_ERR_INVALID_PARAMETER;
	if (k->kind != OPT_LEVEL)
		return wrong_type(k, name, err);
	s->opt->has_level = false;
	s->opt->level = 0.0;
	return taken(s, k);
}

SvcStatus
svc_options_set_nested(SvcOptionsSetter *s, const char *key, size_t keylen, SvcError *err)
{
	char		name[SVC_OPTIONS_KEY_SHOWN + 1];
	const OptKey *k = lookup(s, key, keylen, name, err);

	if (k == NULL)
		return SVC_ERR_INVALID_PARAMETER;
	return wrong_type(k, name, err);
}

/*
 * n_clusters and level name one cut each: giving one clears the other,
 * giving both is an error.  Naming an automatic rule (cut, merge_ratio)
 * without either clears both, or a stored n_clusters or level, which take
 * precedence, would silently keep the model's cut.  n_clusters 0 and level
 * null name no cut, so they clear nothing.
 */
SvcStatus
svc_options_finish(SvcOptionsSetter *s, SvcError *err)
{
	SvcOptions *opt = s->opt;

	if (s->saw_n_clusters && s->saw_level && opt->n_clusters > 0 && opt->has_level)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "svclust options \"n_clusters\" and \"level\" cannot both be set");
		svc_error_detail(err, "Each names a cut of the tree; give one of them.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	if (s->saw_n_clusters && opt->n_clusters > 0)
	{
		opt->has_level = false;
		opt->level = 0.0;
	}
	if (s->saw_level && opt->has_level)
		opt->n_clusters = 0;
	if (s->saw_rule && !s->saw_n_clusters && !s->saw_level)
	{
		opt->n_clusters = 0;
		opt->has_level = false;
		opt->level = 0.0;
	}

	/*
	 * tol and max_iter mean different things to each solver, and their
	 * defaults are bsgd's: naming smo without them gives smo's own (its
	 * tol that of libsvm, its cap automatic), in whatever order the keys
	 * come.  Naming bsgd after smo gives bsgd's back.
	 */
	if (s->saw_solver && !s->saw_tol)
		opt->tol = opt->solver != SVC_SOLVER_BSGD ? SVC_SMO_DEFAULT_TOL : 0.01;
	if (s->saw_solver && !s->saw_max_iter)
		opt->max_iter = opt->solver != SVC_SOLVER_BSGD ? 0 : 100000;
	if (s->saw_share && !s->saw_size)
		opt->min_cluster_size = 0;
	/* keep_isolated is on by default, for the only solver with a budget */
	if (opt->solver != SVC_SOLVER_BSGD && !s->saw_isolated)
		opt->keep_isolated = 0;
	return svc_options_validate(opt, err);
}

/*
 * Whether a filled field is in its key's range.  0 is "auto" for the
 * OPT_REAL_AUTO keys; a stored level must be 0 without has_level, and
 * has_level rules out n_clusters (svc_options_finish clears one for the
 * other).
 */
static bool
field_valid(const SvcOptions *o, const OptKey *k)
{
	int64_t		iv;
	double		x;

	switch (k->kind)
	{
		case OPT_INT:
			iv = get_int(o, k);
			/* max_iter 0: smo (and aid's solves) choose their own cap
			 * (set only by omission) */
			if (iv == 0 && k->offset == offsetof(SvcOptions, max_iter) &&
				o->solver != SVC_SOLVER_BSGD)
				return true;
			return iv >= k->ilo && iv <= k->ihi;
		case OPT_INT_AUTO:
			iv = get_int(o, k);
			return iv == 0 || (iv >= k->ilo && iv <= k->ihi);
		case OPT_REAL:
			return real_in_range(k, get_real(o, k));
		case OPT_REAL_AUTO:
			x = get_real(o, k);
			return x == 0.0 || real_in_range(k, x);
		case OPT_ENUM:
			return choice_by_value(k->choices, (int) get_int(o, k)) != NULL;
		case OPT_LEVEL:
			x = get_real(o, k);
			return real_in_range(k, x) &&
				(o->has_level ? o->n_clusters <= 0 : x == 0.0);
		case OPT_BOOL:
			iv = get_int(o, k);
			return iv == 0 || iv == 1;
	}
	return false;
}

SvcStatus
svc_options_validate(const SvcOptions *o, SvcError *err)
{
	char		expect[SVC_ERRMSG_LEN];

	for (size_t i = 0; i < N_KEYS; i++)
	{
		const OptKey *k = &option_table[i];

		if (field_valid(o, k))
			continue;
		if (k->kind == OPT_REAL_AUTO)
			return svc_options_bad_value(err, k->name, AUTO_EXPECT);
		if (k->kind == OPT_LEVEL)
			return svc_options_bad_value(err, k->name, LEVEL_STORED_EXPECT);
		return svc_options_bad_value(err, k->name, describe(k, expect, sizeof(expect)));
	}
	/* a given gamma has no rule: one set of options, one encoding */
	if ((o->gamma_rule != SVC_GAMMA_RULE_AUTO && o->gamma_rule != SVC_GAMMA_RULE_DIM) ||
		(o->gamma != 0.0 && o->gamma_rule != SVC_GAMMA_RULE_AUTO))
		return svc_options_bad_value(err, "gamma", AUTO_EXPECT);
	/* kept rows are an exact solution's: only smo and incremental make one */
	if (o->keep_rows && o->solver != SVC_SOLVER_SMO && o->solver != SVC_SOLVER_INCREMENTAL)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "svclust option \"keep_rows\" needs the solver \"smo\" or \"incremental\"");
		if (o->solver == SVC_SOLVER_BSGD)
		{
			svc_error_detail(err, "The budgeted solver \"bsgd\" keeps no exact solution to continue from.");
			svc_error_hint(err, "Leave \"keep_rows\" out: a \"bsgd\" model is warm-started as it is, by svc_train(features, options, init).");
		}
		else
			svc_error_detail(err, "The solver \"aid\" solves aggregated rows, not the rows themselves.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	if (o->keep_rows && o->bandwidth_k > 0)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "svclust options \"keep_rows\" and \"bandwidth_k\" cannot both be set");
		svc_error_detail(err, "The widths change f after the solver, so the kept solution would not be the model's.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	/* budget maintenance is the budgeted solver's */
	if (o->keep_isolated && o->solver != SVC_SOLVER_BSGD)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "svclust option \"keep_isolated\" needs the solver \"bsgd\"");
		svc_error_detail(err, "It chooses which support vector the budget drops; the other solvers have no budget.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	if (o->window != SVC_WINDOW_OLDEST && !o->keep_rows)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "svclust option \"window\" needs \"keep_rows\": true");
		return SVC_ERR_INVALID_PARAMETER;
	}
	return SVC_OK;
}

/* A field's value as the error of a warm start shows it. */
static void
show_value(const SvcOptions *o, const OptKey *k, char *buf, size_t len)
{
	switch (k->kind)
	{
		case OPT_INT_AUTO:
			if (get_int(o, k) == 0)
			{
				snprintf(buf, len, "\"auto\"");
				break;
			}
			/* FALLTHROUGH */
		case OPT_INT:
			snprintf(buf, len, "%lld", (long long) get_int(o, k));
			break;
		case OPT_ENUM:
			snprintf(buf, len, "\"%s\"", choice_name(k->choices, (int) get_int(o, k)));
			break;
		case OPT_REAL_AUTO:
			if (get_real(o, k) == 0)
			{
				snprintf(buf, len, "\"%s\"", k->offset == offsetof(SvcOptions, gamma) ?
						 svc_gamma_rule_name(o) : "auto");
				break;
			}
			/* FALLTHROUGH */
		case OPT_REAL:
		case OPT_LEVEL:
			snprintf(buf, len, "%.17g", get_real(o, k));
			break;
		case OPT_BOOL:
			snprintf(buf, len, "%s", get_int(o, k) ? "true" : "false");
			break;
	}
}

SvcStatus
svc_options_warm_check(const SvcOptions *init, const SvcOptions *given, SvcError *err)
{
	/* the solver first: naming another one also changes its defaults (tol) */
	for (size_t pass = 0; pass < 2 * N_KEYS; pass++)
	{
		const OptKey *k = &option_table[pass % N_KEYS];
		char		a[64],
					b[64];

		if ((pass < N_KEYS) != (strcmp(k->name, "solver") == 0))
			continue;
		if (k->cut || memcmp((const char *) init + k->offset,
							 (const char *) given + k->offset, k->size) == 0)
			continue;
		show_value(init, k, a, sizeof(a));
		show_value(given, k, b, sizeof(b));
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "option \"%s\" differs from the init model's (%s vs %s)", k->name, a, b);
		svc_error_detail(err, "The init model has %s, the options name %s.  A warm start continues the init model with its options; only the cut options (cut, merge_ratio, min_cluster_share, min_cluster_size, min_cluster_size_rows, assign_rule, n_clusters, level) may change.",
						 a, b);
		svc_error_hint(err, "Leave \"%s\" out of the options, or train a new model from scratch with svc_train(features, options).",
					   k->name);
		return SVC_ERR_INVALID_PARAMETER;
	}
	return SVC_OK;
}

double
svc_sphere_width_ratio(const SvcOptions *opt, int32_t d)
{
	/*
	 * Above 16 columns the quarter width left digits one cluster and
	 * merged embeddings; half of it splits them, and the mixture offset
	 * (threshold.c) keeps sampled fits' shares near outlier_fraction.
	 * Given widths and "auto-d" (models before 0.5.0) keep the quarter.
	 */
	if (opt->gamma == 0.0 && opt->gamma_rule == SVC_GAMMA_RULE_AUTO &&
		d > SVC_SPHERE_WIDE_DIMS)
		return SVC_SPHERE_WIDTH_RATIO_WIDE;
	return SVC_SPHERE_WIDTH_RATIO;
}
