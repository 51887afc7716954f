/*
 * options_text.c - a JSON text reader of options, for the unit tests and
 * the fuzzer (options_text.h)
 *
 * It hands each key to the setters of options.c, as the glue's jsonb walk
 * does, so both take the same options with the same errors.  The
 * extension never reads options as text: the Makefile leaves this file
 * out of the module; test/unit and test/fuzz build it with the core.
 */
#include "options_text.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* ---------------------------------------------------------------------
 * The text reader: one JSON object whose values are numbers, strings,
 * booleans, null, or (refused by every key) objects and arrays, each key
 * handed to its setter as soon as its value is read.
 */
typedef enum JsonKind
{
	JV_NUMBER,
	JV_STRING,
	JV_BOOL,
	JV_NULL,
	JV_NESTED					/* object or array */
} JsonKind;

/*
 * Strings keep their first KEEP bytes: one more than the longest key shown
 * in a message, so a longer key still reads as too long, and more than any
 * name a key takes, so a longer value still matches none.
 */
#define KEEP (SVC_OPTIONS_KEY_SHOWN + 1)

typedef struct JsonValue
{
	JsonKind	kind;
	SvcOptionsNumber number;
	bool		boolean;
	char		str[KEEP];		/* decoded, not NUL-terminated */
	size_t		len;
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

/* Parse a string literal, decoded; out keeps its first outlen bytes. */
static bool
parse_string(JsonCursor *c, char *out, size_t outlen, size_t *len)
{
	size_t		n = 0;

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
		if (n < outlen)
			out[n++] = ch;
	}
	if (!peek_is(c, '"'))
		return false;
	c->p++;
	*len = n;
	return true;
}

static bool
parse_number(JsonCursor *c, SvcOptionsNumber *v)
{
	const char *start = c->p;
	char		buf[128];
	size_t		len;
	bool		negative = false;
	uint64_t	magnitude = 0;	/* of the integer part */
	bool		magnitude_ok = true;	/* it fitted in 64 bits */

	memset(v, 0, sizeof(*v));
	v->integer = true;
	if (peek_is(c, '-'))
	{
		negative = true;
		c->p++;
	}
	if (c->p >= c->end || !isdigit((unsigned char) *c->p))
		return false;
	if (*c->p == '0' && c->p + 1 < c->end && isdigit((unsigned char) c->p[1]))
		return false;			/* no leading zeros in JSON */
	while (c->p < c->end && isdigit((unsigned char) *c->p))
	{
		unsigned	digit = (unsigned) (*c->p - '0');

		if (magnitude > (UINT64_MAX - digit) / 10)
			magnitude_ok = false;
		else
			magnitude = magnitude * 10 + digit;
		c->p++;
	}
	if (peek_is(c, '.'))
	{
		v->integer = false;
		c->p++;
		if (c->p >= c->end || !isdigit((unsigned char) *c->p))
			return false;
		while (c->p < c->end && isdigit((unsigned char) *c->p))
			c->p++;
	}
	if (peek_is(c, 'e') || peek_is(c, 'E'))
	{
		v->integer = false;
		c->p++;
		if (peek_is(c, '+') || peek_is(c, '-'))
			c->p++;
		if (c->p >= c->end || !isdigit((unsigned char) *c->p))
			return false;
		while (c->p < c->end && isdigit((unsigned char) *c->p))
			c->p++;
	}
	if (v->integer && magnitude_ok &&
		magnitude <= (negative ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX))
	{
		v->exact = true;
		v->int_value = !negative ? (int64_t) magnitude :
			magnitude == (uint64_t) INT64_MAX + 1 ? INT64_MIN : -(int64_t) magnitude;
	}
	len = (size_t) (c->p - start);
	if (len >= sizeof(buf))
	{
		/*
		 * An absurdly long literal is taken as out of every range, even
		 * 0.5 followed by 130 zeros: the jsonb glue, whose numbers come
		 * converted, takes that one at its value.
		 */
		v->value = negative ? -HUGE_VAL : HUGE_VAL;
		v->exact = false;
		return true;
	}
	memcpy(buf, start, len);
	buf[len] = '\0';
	v->value = strtod(buf, NULL);
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
skip_nested(JsonCursor *c)
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
			char		tmp[1];
			size_t		n;

			if (!parse_string(c, tmp, sizeof(tmp), &n))
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
	v->len = 0;
	skip_ws(c);
	if (c->p >= c->end)
		return false;
	switch (*c->p)
	{
		case '"':
			v->kind = JV_STRING;
			return parse_string(c, v->str, sizeof(v->str), &v->len);
		case '{':
		case '[':
			v->kind = JV_NESTED;
			return skip_nested(c);
		case 't':
			v->kind = JV_BOOL;
			v->boolean = true;
			return match_word(c, "true");
		case 'f':
			v->kind = JV_BOOL;
			v->boolean = false;
			return match_word(c, "false");
		case 'n':
			v->kind = JV_NULL;
			return match_word(c, "null");
		default:
			v->kind = JV_NUMBER;
			return parse_number(c, &v->number);
	}
}

static SvcStatus
set_value(SvcOptionsSetter *s, const char *key, size_t keylen, const JsonValue *v,
		  SvcError *err)
{
	switch (v->kind)
	{
		case JV_NUMBER:
			return svc_options_set_number(s, key, keylen, &v->number, err);
		case JV_STRING:
			return svc_options_set_string(s, key, keylen, v->str, v->len, err);
		case JV_BOOL:
			return svc_options_set_bool(s, key, keylen, v->boolean, err);
		case JV_NULL:
			return svc_options_set_null(s, key, keylen, err);
		case JV_NESTED:
			return svc_options_set_nested(s, key, keylen, err);
	}
	return svc_options_not_object(err);
}

/* The object's keys in order over opt; a pair is read whole before it is set. */
static SvcStatus
read_object(const char *json, size_t len, SvcOptions *opt, bool cut_only,
			SvcError *err)
{
	JsonCursor	c = {json, json + len};
	SvcOptionsSetter s;

	svc_options_begin(&s, opt, cut_only);
	skip_ws(&c);
	if (!peek_is(&c, '{'))
		return svc_options_not_object(err);
	c.p++;
	skip_ws(&c);
	if (peek_is(&c, '}'))
		c.p++;
	else
	{
		for (;;)
		{
			char		key[KEEP];
			size_t		keylen;
			JsonValue	v;
			SvcStatus	st;

			skip_ws(&c);
			if (!parse_string(&c, key, sizeof(key), &keylen))
				return svc_options_not_object(err);
			skip_ws(&c);
			if (!peek_is(&c, ':'))
				return svc_options_not_object(err);
			c.p++;
			if (!parse_value(&c, &v))
				return svc_options_not_object(err);
			st = set_value(&s, key, keylen, &v, err);
			if (st != SVC_OK)
				return st;
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
			return svc_options_not_object(err);
		}
	}
	skip_ws(&c);
	if (c.p != c.end)
		return svc_options_not_object(err);
	return svc_options_finish(&s, err);
}

SvcStatus
svc_options_parse(const char *json, size_t len, SvcOptions *opt, SvcError *err)
{
	return read_object(json, len, opt, false, err);
}

SvcStatus
svc_options_parse_cut(const char *json, size_t len, SvcOptions *opt, SvcError *err)
{
	return read_object(json, len, opt, true, err);
}
