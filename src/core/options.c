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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const option_keys =
"budget, strategy, k, gamma, c, epsilon, tol, max_iter, seed, scale, "
"sample, labeling, outlier_fraction (or nu), cut, merge_ratio, "
"min_cluster_share, min_cluster_size, n_clusters, level";

static const char *const cut_keys =
"cut, merge_ratio, min_cluster_share, min_cluster_size, n_clusters, level";

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
	opt->cut = SVC_CUT_PERSISTENCE;
	opt->merge_ratio = 0.4;
	opt->min_cluster_share = 0.03;
	opt->min_cluster_size = 0;
	opt->n_clusters = 0;
	opt->has_level = false;
	opt->level = 0.0;
}

const char *
svc_strategy_name(SvcStrategy s)
{
	switch (s)
	{
		case SVC_STRATEGY_REMOVAL:
			return "removal";
		case SVC_STRATEGY_PROJECT_KNN:
			return "project-knn";
		case SVC_STRATEGY_PROJECT_RANDOM:
			return "project-random";
		case SVC_STRATEGY_UNBUDGETED:
			return "unbudgeted";
	}
	return "unknown";
}

const char *
svc_scale_name(SvcScale s)
{
	switch (s)
	{
		case SVC_SCALE_NONE:
			return "none";
		case SVC_SCALE_STANDARD:
			return "standard";
		case SVC_SCALE_MINMAX:
			return "minmax";
	}
	return "unknown";
}

const char *
svc_labeling_name(SvcLabeling l)
{
	switch (l)
	{
		case SVC_LABELING_TREE:
			return "tree";
		case SVC_LABELING_PAPER:
			return "paper";
	}
	return "unknown";
}

const char *
svc_cut_name(SvcCutRule c)
{
	switch (c)
	{
		case SVC_CUT_PERSISTENCE:
			return "persistence";
		case SVC_CUT_EOM:
			return "eom";
	}
	return "unknown";
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
 * Setters: one per key, each with its range and its message.
 */
static SvcStatus
bad_value(SvcError *err, const char *key, const char *expect)
{
	svc_fail(err, SVC_ERR_INVALID_PARAMETER, "invalid value for svclust option \"%s\"", key);
	svc_error_detail(err, "\"%s\" must be %s.", key, expect);
	return SVC_ERR_INVALID_PARAMETER;
}

static SvcStatus
set_int(const JsonValue *v, const char *key, int64_t lo, int64_t hi, int64_t *out,
		SvcError *err)
{
	char		expect[128];

	snprintf(expect, sizeof(expect), "an integer between %lld and %lld",
			 (long long) lo, (long long) hi);
	if (v->kind != JV_NUMBER || !v->integral || !v->magnitude_ok ||
		v->magnitude > (uint64_t) INT64_MAX)
		return bad_value(err, key, expect);
	if (v->negative)
	{
		if (v->magnitude == 0 && lo <= 0 && hi >= 0)
		{
			*out = 0;
			return SVC_OK;
		}
		return bad_value(err, key, expect);
	}
	if ((int64_t) v->magnitude < lo || (int64_t) v->magnitude > hi)
		return bad_value(err, key, expect);
	*out = (int64_t) v->magnitude;
	return SVC_OK;
}

/* A finite number in (lo, hi] or [lo, hi] (lo_open says which). */
static SvcStatus
set_real(const JsonValue *v, const char *key, double lo, bool lo_open, double hi,
		 double *out, SvcError *err)
{
	char		expect[128];

	snprintf(expect, sizeof(expect), "a number %s %g and at most %g",
			 lo_open ? "greater than" : "of at least", lo, hi);
	if (v->kind != JV_NUMBER || !isfinite(v->number) ||
		(lo_open ? !(v->number > lo) : !(v->number >= lo)) || !(v->number <= hi))
		return bad_value(err, key, expect);
	*out = v->number;
	return SVC_OK;
}

static SvcStatus
set_option(SvcOptions *opt, const char *key, const JsonValue *v, SvcError *err)
{
	int64_t		iv;
	SvcStatus	st;

	if (strcmp(key, "budget") == 0)
	{
		st = set_int(v, key, 1, SVC_MAX_BUDGET, &iv, err);
		opt->budget = (int32_t) iv;
		return st;
	}
	if (strcmp(key, "k") == 0)
	{
		st = set_int(v, key, 1, SVC_MAX_K, &iv, err);
		opt->k = (int32_t) iv;
		return st;
	}
	if (strcmp(key, "max_iter") == 0)
	{
		st = set_int(v, key, 1, SVC_MAX_ITER, &iv, err);
		opt->max_iter = iv;
		return st;
	}
	if (strcmp(key, "sample") == 0)
	{
		st = set_int(v, key, 2, SVC_MAX_SAMPLE, &iv, err);
		opt->sample = iv;
		return st;
	}
	if (strcmp(key, "seed") == 0)
	{
		st = set_int(v, key, 0, INT64_MAX, &iv, err);
		opt->seed = (uint64_t) iv;
		return st;
	}
	if (strcmp(key, "gamma") == 0)
	{
		if (v->kind == JV_STRING && strcmp(v->str, "auto") == 0 && !v->str_truncated)
		{
			opt->gamma = 0.0;
			return SVC_OK;
		}
		if (v->kind != JV_NUMBER)
			return bad_value(err, key, "a positive number or \"auto\"");
		return set_real(v, key, 0.0, true, 1e12, &opt->gamma, err);
	}
	if (strcmp(key, "epsilon") == 0)
	{
		if (v->kind == JV_STRING && strcmp(v->str, "auto") == 0 && !v->str_truncated)
		{
			opt->epsilon = 0.0;
			return SVC_OK;
		}
		if (v->kind != JV_NUMBER)
			return bad_value(err, key, "a positive number or \"auto\"");
		return set_real(v, key, 0.0, true, 1e6, &opt->epsilon, err);
	}
	if (strcmp(key, "c") == 0)
		return set_real(v, key, 0.0, true, 1e6, &opt->c, err);
	if (strcmp(key, "tol") == 0)
		return set_real(v, key, 0.0, true, 1e6, &opt->tol, err);
	if (strcmp(key, "merge_ratio") == 0)
		return set_real(v, key, 0.0, false, 1.0, &opt->merge_ratio, err);
	if (strcmp(key, "min_cluster_share") == 0)
		return set_real(v, key, 0.0, false, 0.5, &opt->min_cluster_share, err);
	if (strcmp(key, "outlier_fraction") == 0 || strcmp(key, "nu") == 0)
		return set_real(v, key, 0.0, false, 0.99, &opt->nu, err);
	if (strcmp(key, "min_cluster_size") == 0)
	{
		st = set_int(v, key, 0, SVC_MAX_SAMPLE, &iv, err);
		opt->min_cluster_size = iv;
		return st;
	}
	if (strcmp(key, "n_clusters") == 0)
	{
		st = set_int(v, key, 0, MAX_N_CLUSTERS, &iv, err);
		opt->n_clusters = (int32_t) iv;
		return st;
	}
	if (strcmp(key, "level") == 0)
	{
		if (v->kind == JV_NULL)
		{
			opt->has_level = false;
			opt->level = 0.0;
			return SVC_OK;
		}
		if (v->kind != JV_NUMBER || !isfinite(v->number) || fabs(v->number) > 1e300)
			return bad_value(err, key, "a finite number or null");
		opt->has_level = true;
		opt->level = v->number;
		return SVC_OK;
	}
	if (strcmp(key, "cut") == 0)
	{
		if (v->kind == JV_STRING && strcmp(v->str, "persistence") == 0)
			opt->cut = SVC_CUT_PERSISTENCE;
		else if (v->kind == JV_STRING && strcmp(v->str, "eom") == 0)
			opt->cut = SVC_CUT_EOM;
		else
			return bad_value(err, key, "one of \"persistence\", \"eom\"");
		return SVC_OK;
	}
	if (strcmp(key, "strategy") == 0)
	{
		static const SvcStrategy all[] = {SVC_STRATEGY_REMOVAL, SVC_STRATEGY_PROJECT_KNN,
		SVC_STRATEGY_PROJECT_RANDOM, SVC_STRATEGY_UNBUDGETED};

		for (size_t i = 0; v->kind == JV_STRING && i < sizeof(all) / sizeof(all[0]); i++)
			if (strcmp(v->str, svc_strategy_name(all[i])) == 0)
			{
				opt->strategy = all[i];
				return SVC_OK;
			}
		return bad_value(err, key,
						 "one of \"removal\", \"project-knn\", \"project-random\", \"unbudgeted\"");
	}
	if (strcmp(key, "scale") == 0)
	{
		static const SvcScale all[] = {SVC_SCALE_STANDARD, SVC_SCALE_MINMAX, SVC_SCALE_NONE};

		for (size_t i = 0; v->kind == JV_STRING && i < sizeof(all) / sizeof(all[0]); i++)
			if (strcmp(v->str, svc_scale_name(all[i])) == 0)
			{
				opt->scale = all[i];
				return SVC_OK;
			}
		return bad_value(err, key, "one of \"standard\", \"minmax\", \"none\"");
	}
	if (strcmp(key, "labeling") == 0)
	{
		if (v->kind == JV_STRING && strcmp(v->str, "tree") == 0)
			opt->labeling = SVC_LABELING_TREE;
		else if (v->kind == JV_STRING && strcmp(v->str, "paper") == 0)
			opt->labeling = SVC_LABELING_PAPER;
		else
			return bad_value(err, key, "one of \"tree\", \"paper\"");
		return SVC_OK;
	}
	svc_fail(err, SVC_ERR_INVALID_PARAMETER, "unknown svclust option \"%s\"", key);
	svc_error_detail(err, "Valid options are: %s.", option_keys);
	return SVC_ERR_INVALID_PARAMETER;
}

static SvcStatus
syntax_error(SvcError *err)
{
	svc_fail(err, SVC_ERR_INVALID_PARAMETER, "svclust options must be a JSON object");
	svc_error_hint(err, "Pass options such as '{\"budget\": 50, \"gamma\": \"auto\"}'.");
	return SVC_ERR_INVALID_PARAMETER;
}

static bool
is_cut_key(const char *key)
{
	return strcmp(key, "cut") == 0 || strcmp(key, "merge_ratio") == 0 ||
		strcmp(key, "min_cluster_share") == 0 ||
		strcmp(key, "min_cluster_size") == 0 ||
		strcmp(key, "n_clusters") == 0 || strcmp(key, "level") == 0;
}

/*
 * The object's keys in order over opt.  cut_only refuses keys that a
 * trained model cannot change.  n_clusters and level are two ways to name
 * one cut: giving one clears the other, giving both is an error.
 */
static SvcStatus
parse_object(const char *json, size_t len, SvcOptions *opt, bool cut_only,
			 SvcError *err)
{
	JsonCursor	c = {json, json + len};
	bool		saw_n_clusters = false;
	bool		saw_level = false;

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
			{
				svc_fail(err, SVC_ERR_INVALID_PARAMETER, "unknown svclust option \"%s...\"", key);
				svc_error_detail(err, "Valid options are: %s.", option_keys);
				return SVC_ERR_INVALID_PARAMETER;
			}
			if (cut_only && !is_cut_key(key))
			{
				svc_fail(err, SVC_ERR_INVALID_PARAMETER,
						 "svclust option \"%s\" cannot change after training", key);
				svc_error_detail(err, "Only the cut of the tree can change: %s.", cut_keys);
				svc_error_hint(err, "Train a new model with svc_train() to change \"%s\".", key);
				return SVC_ERR_INVALID_PARAMETER;
			}
			st = set_option(opt, key, &v, err);
			if (st != SVC_OK)
				return st;
			if (strcmp(key, "n_clusters") == 0)
				saw_n_clusters = true;
			if (strcmp(key, "level") == 0)
				saw_level = true;
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



SvcStatus
svc_options_validate(const SvcOptions *o, SvcError *err)
{
	if (o->budget < 1 || o->budget > SVC_MAX_BUDGET)
		return bad_value(err, "budget", "an integer between 1 and 100000");
	if (o->strategy < SVC_STRATEGY_REMOVAL || o->strategy > SVC_STRATEGY_UNBUDGETED)
		return bad_value(err, "strategy", "a known strategy");
	if (o->k < 1 || o->k > SVC_MAX_K)
		return bad_value(err, "k", "an integer between 1 and 64");
	if (!isfinite(o->gamma) || o->gamma < 0 || o->gamma > 1e12)
		return bad_value(err, "gamma", "a positive number or \"auto\"");
	if (!isfinite(o->c) || !(o->c > 0) || o->c > 1e6)
		return bad_value(err, "c", "a number greater than 0 and at most 1e+06");
	if (!isfinite(o->epsilon) || o->epsilon < 0 || o->epsilon > 1e6)
		return bad_value(err, "epsilon", "a positive number or \"auto\"");
	if (!isfinite(o->tol) || !(o->tol > 0) || o->tol > 1e6)
		return bad_value(err, "tol", "a number greater than 0 and at most 1e+06");
	if (o->max_iter < 1 || o->max_iter > SVC_MAX_ITER)
		return bad_value(err, "max_iter", "an integer between 1 and 100000000");
	if (o->seed > (uint64_t) INT64_MAX)
		return bad_value(err, "seed", "a non-negative integer");
	if (o->scale < SVC_SCALE_NONE || o->scale > SVC_SCALE_MINMAX)
		return bad_value(err, "scale", "one of \"standard\", \"minmax\", \"none\"");
	if (o->sample < 2 || o->sample > SVC_MAX_SAMPLE)
		return bad_value(err, "sample", "an integer between 2 and 10000000");
	if (o->labeling < SVC_LABELING_TREE || o->labeling > SVC_LABELING_PAPER)
		return bad_value(err, "labeling", "one of \"tree\", \"paper\"");
	if (!isfinite(o->merge_ratio) || o->merge_ratio < 0 || o->merge_ratio > 1)
		return bad_value(err, "merge_ratio", "a number of at least 0 and at most 1");
	if (!isfinite(o->min_cluster_share) || o->min_cluster_share < 0 ||
		o->min_cluster_share > 0.5)
		return bad_value(err, "min_cluster_share", "a number of at least 0 and at most 0.5");
	if (!isfinite(o->nu) || o->nu < 0 || o->nu > 0.99)
		return bad_value(err, "outlier_fraction", "a number of at least 0 and at most 0.99");
	if (o->cut < SVC_CUT_PERSISTENCE || o->cut > SVC_CUT_EOM)
		return bad_value(err, "cut", "one of \"persistence\", \"eom\"");
	if (o->min_cluster_size < 0 || o->min_cluster_size > SVC_MAX_SAMPLE)
		return bad_value(err, "min_cluster_size", "an integer between 0 and 10000000");
	if (o->n_clusters < 0 || o->n_clusters > MAX_N_CLUSTERS)
		return bad_value(err, "n_clusters", "an integer between 0 and 1000000");
	if (!isfinite(o->level) || fabs(o->level) > 1e300 ||
		(!o->has_level && o->level != 0.0) || (o->has_level && o->n_clusters > 0))
		return bad_value(err, "level", "a finite number or null, not set with n_clusters");
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
	if (has_level > 1)
		return bad_value(err, "level", "a finite number or null");
	o->has_level = has_level == 1;
	return svc_options_validate(o, err);
}
