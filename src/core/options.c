/*
 * options.c - training options: defaults, a flat JSON parser, validation
 *
 * The parser accepts one JSON object whose values are numbers, strings,
 * booleans or null; it is small on purpose, since the glue hands it the
 * text of a jsonb and the fuzzer hands it anything.
 */
#include "options.h"
#include "bytes.h"

#include <ctype.h>
#include <errno.h>
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
	opt->budget = 300;
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
	opt->cut = SVC_CUT_PERSISTENCE;
	opt->merge_ratio = 0.4;
	opt->min_cluster_share = 0.03;
	opt->min_cluster_size = 0;
	opt->n_clusters = 0;
	opt->has_level = false;
	opt->level = 0.0;
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

static const OptChoice *
choice_by_name(const OptChoice *choices, const char *name)
{
	for (; choices->name != NULL; choices++)
		if (strcmp(choices->name, name) == 0)
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

/* ---------------------------------------------------------------------
 * A JSON value as the parser hands it to the option setters.
 */
typedef enum JsonKind
{
	JV_NUMBER,
	JV_STRING,
	JV_BOOL,
	JV_NULL,
	JV_COMPOSITE				/* object or array: never valid here */
} JsonKind;

typedef struct JsonValue
{
	JsonKind	kind;
	double		number;
	bool		integral;		/* the literal had no fraction or exponent */
	bool		negative;
	uint64_t	magnitude;		/* exact value of an integral literal */
	bool		magnitude_ok;	/* it fitted in 64 bits */
	char		str[64];		/* string value, truncated */
	bool		str_truncated;
} JsonValue;

typedef struct JsonCursor
{
	const char *p;
	const char *end;
} JsonCursor;

static void
skip_ws(JsonCursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' ||
							 *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool
peek_is(JsonCursor *c, char ch)
{
	return c->p < c->end && *c->p == ch;
}

/* Parse a string literal; decoded into out (truncated to outlen - 1). */
static bool
parse_string(JsonCursor *c, char *out, size_t outlen, bool *truncated)
{
	size_t		n = 0;

	*truncated = false;
	if (!peek_is(c, '"'))
		return false;
	c->p++;
	while (c->p < c->end && *c->p != '"')
	{
		char		ch = *c->p++;

		if ((unsigned char) ch < 0x20)
			return false;
		if (ch == '\\')
		{
			if (c->p >= c->end)
				return false;
			ch = *c->p++;
			switch (ch)
			{
				case '"':
				case '\\':
				case '/':
					break;
				case 'b':
					ch = '\b';
					break;
				case 'f':
					ch = '\f';
					break;
				case 'n':
					ch = '\n';
					break;
				case 'r':
					ch = '\r';
					break;
				case 't':
					ch = '\t';
					break;
				case 'u':
					/* keep escapes opaque: no valid key or value uses them */
					for (int i = 0; i < 4; i++)
					{
						if (c->p >= c->end || !isxdigit((unsigned char) *c->p))
							return false;
						c->p++;
					}
					ch = '?';
					break;
				default:
					return false;
			}
		}
		if (n + 1 < outlen)
			out[n++] = ch;
		else
			*truncated = true;
	}
	if (!peek_is(c, '"'))
		return false;
	c->p++;
	out[n] = '\0';
	return true;
}

static bool
parse_number(JsonCursor *c, JsonValue *v)
{
	const char *start = c->p;
	char		buf[128];
	size_t		len;
	char	   *endp;

	v->integral = true;
	v->negative = false;
	v->magnitude = 0;
	v->magnitude_ok = true;
	if (peek_is(c, '-'))
	{
		v->negative = true;
		c->p++;
	}
	if (c->p >= c->end || !isdigit((unsigned char) *c->p))
		return false;
	if (*c->p == '0' && c->p + 1 < c->end && isdigit((unsigned char) c->p[1]))
		return false;			/* no leading zeros in JSON */
	while (c->p < c->end && isdigit((unsigned char) *c->p))
	{
		unsigned	digit = (unsigned) (*c->p - '0');

		if (v->magnitude > (UINT64_MAX - digit) / 10)
			v->magnitude_ok = false;
		else
			v->magnitude = v->magnitude * 10 + digit;
		c->p++;
	}
	if (peek_is(c, '.'))
	{
		v->integral = false;
		c->p++;
		if (c->p >= c->end || !isdigit((unsigned char) *c->p))
			return false;
		while (c->p < c->end && isdigit((unsigned char) *c->p))
			c->p++;
	}
	if (peek_is(c, 'e') || peek_is(c, 'E'))
	{
		v->integral = false;
		c->p++;
		if (peek_is(c, '+') || peek_is(c, '-'))
			c->p++;
		if (c->p >= c->end || !isdigit((unsigned char) *c->p))
			return false;
		while (c->p < c->end && isdigit((unsigned char) *c->p))
			c->p++;
	}
	len = (size_t) (c->p - start);
	if (len >= sizeof(buf))
	{
		/* absurdly long literal: its value is out of every range anyway */
		v->number = v->negative ? -HUGE_VAL : HUGE_VAL;
		v->magnitude_ok = false;
		return true;
	}
	memcpy(buf, start, len);
	buf[len] = '\0';
	errno = 0;
	v->number = strtod(buf, &endp);
	if (v->integral && !v->magnitude_ok)
		v->integral = true;		/* still integral, just too large */
	/* jsonb writes 1.0 for an integral numeric: treat x.0 as integral */
	if (!v->integral && isfinite(v->number) && v->number == floor(v->number) &&
		fabs(v->number) < 9007199254740992.0)
	{
		v->integral = true;
		v->magnitude = (uint64_t) fabs(v->number);
		v->magnitude_ok = true;
	}
	return true;
}

static bool
match_word(JsonCursor *c, const char *word)
{
	size_t		n = strlen(word);

	if ((size_t) (c->end - c->p) < n || memcmp(c->p, word, n) != 0)
		return false;
	c->p += n;
	return true;
}

/* Skip a nested object or array (balanced, strings respected). */
static bool
skip_composite(JsonCursor *c)
{
	int			depth = 0;

	do
	{
		char		ch;

		if (c->p >= c->end)
			return false;
		ch = *c->p;
		if (ch == '"')
		{
			char		tmp[2];
			bool		tr;

			if (!parse_string(c, tmp, sizeof(tmp), &tr))
				return false;
			continue;
		}
		if (ch == '{' || ch == '[')
		{
			if (++depth > 64)
				return false;
		}
		else if (ch == '}' || ch == ']')
			depth--;
		c->p++;
	} while (depth > 0);
	return true;
}

static bool
parse_value(JsonCursor *c, JsonValue *v)
{
	memset(v, 0, sizeof(*v));
	skip_ws(c);
	if (c->p >= c->end)
		return false;
	switch (*c->p)
	{
		case '"':
			v->kind = JV_STRING;
			return parse_string(c, v->str, sizeof(v->str), &v->str_truncated);
		case '{':
		case '[':
			v->kind = JV_COMPOSITE;
			return skip_composite(c);
		case 't':
			v->kind = JV_BOOL;
			return match_word(c, "true");
		case 'f':
			v->kind = JV_BOOL;
			return match_word(c, "false");
		case 'n':
			v->kind = JV_NULL;
			return match_word(c, "null");
		default:
			v->kind = JV_NUMBER;
			return parse_number(c, v);
	}
}

/* ---------------------------------------------------------------------
 * The keys.  Each row is all there is to know about one: its names, the
 * field it sets, its range and whether a trained model may change it.  The
 * parser's setters, svc_options_validate and the lists of keys in the
 * error details all read this table, so a range or a key is written once.
 */
typedef enum OptKind
{
	OPT_INT,					/* an integer in [ilo, ihi] */
	OPT_REAL,					/* a finite number in [lo, hi] or (lo, hi] */
	OPT_REAL_AUTO,				/* the same, or "auto", stored as 0 */
	OPT_ENUM,					/* one of the names in choices */
	OPT_LEVEL					/* a finite number in [lo, hi], or null;
								 * also sets has_level */
} OptKind;

typedef struct OptKey
{
	const char *name;
	const char *alias;			/* another name the parser takes, or NULL */
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
	{.name = "outlier_fraction", .alias = "nu", .kind = OPT_REAL, FIELD(nu), .lo = 0.0, .hi = 0.99},
	{.name = "bandwidth_k", .kind = OPT_INT, FIELD(bandwidth_k), .ilo = 0, .ihi = SVC_MAX_K},
	{.name = "cut", .kind = OPT_ENUM, FIELD(cut), .choices = cut_choices, .cut = true},
	{.name = "merge_ratio", .kind = OPT_REAL, FIELD(merge_ratio), .lo = 0.0, .hi = 1.0,
	.cut = true},
	{.name = "min_cluster_share", .kind = OPT_REAL, FIELD(min_cluster_share), .lo = 0.0,
	.hi = 0.5, .cut = true},
	{.name = "min_cluster_size", .kind = OPT_INT, FIELD(min_cluster_size), .ilo = 0,
	.ihi = SVC_MAX_SAMPLE, .cut = true},
	{.name = "n_clusters", .kind = OPT_INT, FIELD(n_clusters), .ilo = 0, .ihi = MAX_N_CLUSTERS,
	.cut = true},
	{.name = "level", .kind = OPT_LEVEL, FIELD(level), .lo = -1e300, .hi = 1e300, .cut = true},
};

#undef FIELD

#define N_KEYS (sizeof(option_table) / sizeof(option_table[0]))

/* OPT_ENUM fields are read and written as int32_t. */
_Static_assert(sizeof(SvcStrategy) == sizeof(int32_t) && sizeof(SvcScale) == sizeof(int32_t) &&
			   sizeof(SvcLabeling) == sizeof(int32_t) && sizeof(SvcCutRule) == sizeof(int32_t),
			   "the enum options are int32_t-sized");

/* What the details say of values that "auto" and null also name. */
#define AUTO_EXPECT "a positive number or \"auto\""
#define LEVEL_EXPECT "a finite number or null"
/* ... and of a stored level: has_level also rules out n_clusters. */
#define LEVEL_STORED_EXPECT LEVEL_EXPECT ", not set with n_clusters"

static const OptKey *
find_key(const char *key)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strcmp(key, option_table[i].name) == 0 ||
			(option_table[i].alias != NULL && strcmp(key, option_table[i].alias) == 0))
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
			snprintf(buf, len, "%s", LEVEL_EXPECT);
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
 * The parser's errors, and its setters: one per kind of key, the range and
 * the message from its row.  key is the name as given, so that the error
 * names "nu" when nu was given.
 */
static SvcStatus
bad_value(SvcError *err, const char *key, const char *expect)
{
	svc_fail(err, SVC_ERR_INVALID_PARAMETER, "invalid value for svclust option \"%s\"", key);
	svc_error_detail(err, "\"%s\" must be %s.", key, expect);
	return SVC_ERR_INVALID_PARAMETER;
}

static SvcStatus
syntax_error(SvcError *err)
{
	svc_fail(err, SVC_ERR_INVALID_PARAMETER, "svclust options must be a JSON object");
	svc_error_hint(err, "Pass options such as '{\"budget\": 50, \"gamma\": \"auto\"}'.");
	return SVC_ERR_INVALID_PARAMETER;
}

/* truncated: the key was longer than the parser keeps; show it cut. */
static SvcStatus
unknown_key(SvcError *err, const char *key, bool truncated)
{
	char		keys[SVC_ERRMSG_LEN];

	svc_fail(err, SVC_ERR_INVALID_PARAMETER, "unknown svclust option \"%s%s\"", key,
			 truncated ? "..." : "");
	svc_error_detail(err, "Valid options are: %s.", list_keys(false, keys, sizeof(keys)));
	return SVC_ERR_INVALID_PARAMETER;
}

/* Any key but a cut key, unknown ones too, when recutting a model. */
static SvcStatus
fixed_after_training(SvcError *err, const char *key)
{
	char		keys[SVC_ERRMSG_LEN];

	svc_fail(err, SVC_ERR_INVALID_PARAMETER,
			 "svclust option \"%s\" cannot change after training", key);
	svc_error_detail(err, "Only the cut of the tree can change: %s.",
					 list_keys(true, keys, sizeof(keys)));
	svc_error_hint(err, "Train a new model with svc_train() to change \"%s\".", key);
	return SVC_ERR_INVALID_PARAMETER;
}

/* Whether v is an integer in [lo, hi]; its value in *out if so. */
static bool
json_int(const JsonValue *v, int64_t lo, int64_t hi, int64_t *out)
{
	if (v->kind != JV_NUMBER || !v->integral || !v->magnitude_ok ||
		v->magnitude > (uint64_t) INT64_MAX)
		return false;
	if (v->negative)
	{
		/* -0 is 0; every other negative is below every range */
		*out = 0;
		return v->magnitude == 0 && lo <= 0 && hi >= 0;
	}
	*out = (int64_t) v->magnitude;
	return *out >= lo && *out <= hi;
}

static SvcStatus
set_int(SvcOptions *opt, const OptKey *k, const char *key, const JsonValue *v,
		SvcError *err)
{
	char		expect[SVC_ERRMSG_LEN];
	int64_t		iv;

	if (!json_int(v, k->ilo, k->ihi, &iv))
		return bad_value(err, key, describe(k, expect, sizeof(expect)));
	put_int(opt, k, iv);
	return SVC_OK;
}

static SvcStatus
set_real(SvcOptions *opt, const OptKey *k, const char *key, const JsonValue *v,
		 SvcError *err)
{
	char		expect[SVC_ERRMSG_LEN];

	if (v->kind != JV_NUMBER || !real_in_range(k, v->number))
		return bad_value(err, key, describe(k, expect, sizeof(expect)));
	put_real(opt, k, v->number);
	return SVC_OK;
}

/* "auto" is 0; other non-numbers get the message that mentions "auto". */
static SvcStatus
set_real_auto(SvcOptions *opt, const OptKey *k, const char *key, const JsonValue *v,
			  SvcError *err)
{
	if (v->kind == JV_STRING && strcmp(v->str, "auto") == 0 && !v->str_truncated)
	{
		put_real(opt, k, 0.0);
		return SVC_OK;
	}
	if (v->kind != JV_NUMBER)
		return bad_value(err, key, AUTO_EXPECT);
	return set_real(opt, k, key, v, err);
}

static SvcStatus
set_enum(SvcOptions *opt, const OptKey *k, const char *key, const JsonValue *v,
		 SvcError *err)
{
	char		expect[SVC_ERRMSG_LEN];
	const OptChoice *c = NULL;

	if (v->kind == JV_STRING)
		c = choice_by_name(k->choices, v->str);
	if (c == NULL)
		return bad_value(err, key, describe(k, expect, sizeof(expect)));
	put_int(opt, k, c->value);
	return SVC_OK;
}

/* null is no level; parse_object settles a level given with n_clusters. */
static SvcStatus
set_level(SvcOptions *opt, const OptKey *k, const char *key, const JsonValue *v,
		  SvcError *err)
{
	if (v->kind == JV_NULL)
	{
		opt->has_level = false;
		opt->level = 0.0;
		return SVC_OK;
	}
	if (v->kind != JV_NUMBER || !real_in_range(k, v->number))
		return bad_value(err, key, LEVEL_EXPECT);
	opt->has_level = true;
	opt->level = v->number;
	return SVC_OK;
}

static SvcStatus
set_option(SvcOptions *opt, const OptKey *k, const char *key, const JsonValue *v,
		   SvcError *err)
{
	switch (k->kind)
	{
		case OPT_INT:
			return set_int(opt, k, key, v, err);
		case OPT_REAL:
			return set_real(opt, k, key, v, err);
		case OPT_REAL_AUTO:
			return set_real_auto(opt, k, key, v, err);
		case OPT_ENUM:
			return set_enum(opt, k, key, v, err);
		case OPT_LEVEL:
			return set_level(opt, k, key, v, err);
	}
	/* every kind returns above: a row of no kind names no option */
	return unknown_key(err, key, false);
}

/*
 * The object's keys in order over opt.  cut_only refuses keys that a
 * trained model cannot change.  n_clusters and level are two ways to name
 * one cut: giving one clears the other, giving both is an error.  Naming
 * an automatic rule (cut, merge_ratio) without either clears both, or a
 * stored n_clusters or level, which take precedence, would silently keep
 * the model's cut.
 */
static SvcStatus
parse_object(const char *json, size_t len, SvcOptions *opt, bool cut_only,
			 SvcError *err)
{
	JsonCursor	c = {json, json + len};
	bool		saw_n_clusters = false;
	bool		saw_level = false;
	bool		saw_rule = false;

	skip_ws(&c);
	if (!peek_is(&c, '{'))
		return syntax_error(err);
	c.p++;
	skip_ws(&c);
	if (peek_is(&c, '}'))
		c.p++;
	else
	{
		for (;;)
		{
			char		key[64];
			bool		truncated;
			JsonValue	v;
			const OptKey *k;
			SvcStatus	st;

			skip_ws(&c);
			if (!parse_string(&c, key, sizeof(key), &truncated))
				return syntax_error(err);
			skip_ws(&c);
			if (!peek_is(&c, ':'))
				return syntax_error(err);
			c.p++;
			if (!parse_value(&c, &v))
				return syntax_error(err);
			if (truncated)
				return unknown_key(err, key, true);
			k = find_key(key);
			if (cut_only && (k == NULL || !k->cut))
				return fixed_after_training(err, key);
			if (k == NULL)
				return unknown_key(err, key, false);
			st = set_option(opt, k, key, &v, err);
			if (st != SVC_OK)
				return st;
			if (strcmp(key, "n_clusters") == 0)
				saw_n_clusters = true;
			if (strcmp(key, "level") == 0)
				saw_level = true;
			if (strcmp(key, "cut") == 0 || strcmp(key, "merge_ratio") == 0)
				saw_rule = true;
			skip_ws(&c);
			if (peek_is(&c, ','))
			{
				c.p++;
				continue;
			}
			if (peek_is(&c, '}'))
			{
				c.p++;
				break;
			}
			return syntax_error(err);
		}
	}
	skip_ws(&c);
	if (c.p != c.end)
		return syntax_error(err);
	if (saw_n_clusters && saw_level && opt->n_clusters > 0 && opt->has_level)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER,
				 "svclust options \"n_clusters\" and \"level\" cannot both be set");
		svc_error_detail(err, "Each names a cut of the tree; give one of them.");
		return SVC_ERR_INVALID_PARAMETER;
	}
	if (saw_n_clusters && opt->n_clusters > 0)
	{
		opt->has_level = false;
		opt->level = 0.0;
	}
	if (saw_level && opt->has_level)
		opt->n_clusters = 0;
	if (saw_rule && !saw_n_clusters && !saw_level)
	{
		opt->n_clusters = 0;
		opt->has_level = false;
		opt->level = 0.0;
	}
	return svc_options_validate(opt, err);
}

SvcStatus
svc_options_parse(const char *json, size_t len, SvcOptions *opt, SvcError *err)
{
	return parse_object(json, len, opt, false, err);
}

SvcStatus
svc_options_parse_cut(const char *json, size_t len, SvcOptions *opt, SvcError *err)
{
	return parse_object(json, len, opt, true, err);
}

/*
 * Whether a filled field is in its key's range.  0 is "auto" for the
 * OPT_REAL_AUTO keys; a stored level must be 0 without has_level, and
 * has_level rules out n_clusters (the parser clears one for the other).
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
			return iv >= k->ilo && iv <= k->ihi;
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
			return bad_value(err, k->name, AUTO_EXPECT);
		if (k->kind == OPT_LEVEL)
			return bad_value(err, k->name, LEVEL_STORED_EXPECT);
		return bad_value(err, k->name, describe(k, expect, sizeof(expect)));
	}
	return SVC_OK;
}

/* The layout is fixed: state.c reads "sample" at byte 60 on every row. */
void
svc_options_encode(const SvcOptions *o, uint8_t *out)
{
	SvcWriter	w;

	memset(out, 0, SVC_OPTIONS_WIRE_SIZE);
	svc_writer_init(&w, out, SVC_OPTIONS_WIRE_SIZE);
	svc_put_u32(&w, (uint32_t) o->budget);
	svc_put_u8(&w, (uint8_t) o->strategy);
	svc_put_u8(&w, (uint8_t) o->scale);
	svc_put_u8(&w, (uint8_t) o->labeling);
	svc_put_u8(&w, (uint8_t) o->cut);
	svc_put_u32(&w, (uint32_t) o->k);
	svc_put_f64(&w, o->gamma);
	svc_put_f64(&w, o->c);
	svc_put_f64(&w, o->epsilon);
	svc_put_f64(&w, o->tol);
	svc_put_u64(&w, (uint64_t) o->max_iter);
	svc_put_u64(&w, o->seed);
	svc_put_u64(&w, (uint64_t) o->sample);
	svc_put_f64(&w, o->merge_ratio);
	svc_put_f64(&w, o->min_cluster_share);
	svc_put_f64(&w, o->nu);
	svc_put_u64(&w, (uint64_t) o->min_cluster_size);
	svc_put_u32(&w, (uint32_t) o->n_clusters);
	svc_put_u32(&w, o->has_level ? 1 : 0);
	svc_put_f64(&w, o->level);
	svc_put_u32(&w, (uint32_t) o->bandwidth_k);
}

SvcStatus
svc_options_decode(const uint8_t *in, SvcOptions *o, SvcError *err)
{
	SvcReader	r;
	uint32_t	has_level;

	svc_reader_init(&r, in, SVC_OPTIONS_WIRE_SIZE);
	o->budget = (int32_t) svc_get_u32(&r);
	o->strategy = (SvcStrategy) svc_get_u8(&r);
	o->scale = (SvcScale) svc_get_u8(&r);
	o->labeling = (SvcLabeling) svc_get_u8(&r);
	o->cut = (SvcCutRule) svc_get_u8(&r);
	o->k = (int32_t) svc_get_u32(&r);
	o->gamma = svc_get_f64(&r);
	o->c = svc_get_f64(&r);
	o->epsilon = svc_get_f64(&r);
	o->tol = svc_get_f64(&r);
	o->max_iter = (int64_t) svc_get_u64(&r);
	o->seed = svc_get_u64(&r);
	o->sample = (int64_t) svc_get_u64(&r);
	o->merge_ratio = svc_get_f64(&r);
	o->min_cluster_share = svc_get_f64(&r);
	o->nu = svc_get_f64(&r);
	o->min_cluster_size = (int64_t) svc_get_u64(&r);
	o->n_clusters = (int32_t) svc_get_u32(&r);
	has_level = svc_get_u32(&r);
	o->level = svc_get_f64(&r);
	o->bandwidth_k = (int32_t) svc_get_u32(&r);
	if (has_level > 1)
		return bad_value(err, "level", LEVEL_EXPECT);
	o->has_level = has_level == 1;
	return svc_options_validate(o, err);
}
