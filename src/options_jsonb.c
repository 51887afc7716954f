/*
 * options_jsonb.c - options from a jsonb: walk its flat object and hand
 * each key to the core's typed setters
 */
#include "svclust.h"

#include "options.h"

#include <math.h>

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"

/*
 * A jsonb number as the setters take it.  Its double is numeric -> float8
 * without the overflow error (past the doubles it is +-HUGE_VAL, which
 * every range refuses).  It is written as an integer when its scale is 0,
 * as the text of the jsonb writes it with no fraction digits: then an
 * integer option takes it only if it is exact, so the largest seed is
 * exact and 3.0 is still taken as 3 (see SvcOptionsNumber).
 */
static SvcOptionsNumber
number_of(Numeric n)
{
	SvcOptionsNumber num;
	Datum		d = NumericGetDatum(n);

	memset(&num, 0, sizeof(num));
	/* a jsonb never holds NaN or infinity; taken as out of range if one did */
	if (numeric_is_nan(n) || numeric_is_inf(n))
	{
		num.value = NAN;
		return num;
	}
	num.value = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, d));
	num.integer = DatumGetInt32(DirectFunctionCall1(numeric_scale, d)) == 0;
	if (!num.integer)
		return num;

	/*
	 * Whether it is within int64, before numeric_int8 would raise its own
	 * error.  Its double is rounded, so only a double of exactly 2^63 in
	 * magnitude leaves the answer to an exact comparison.
	 */
	if (fabs(num.value) < 9223372036854775808.0)
		num.exact = true;
	else if (fabs(num.value) == 9223372036854775808.0)
	{
		Numeric		bound = int64_to_numeric(num.value > 0 ? PG_INT64_MAX : PG_INT64_MIN);
		int			cmp = DatumGetInt32(DirectFunctionCall2(numeric_cmp, d,
															NumericGetDatum(bound)));

		num.exact = num.value > 0 ? cmp <= 0 : cmp >= 0;
	}
	if (num.exact)
		num.int_value = DatumGetInt64(DirectFunctionCall1(numeric_int8, d));
	return num;
}

static SvcStatus
set_value(SvcOptionsSetter *s, const JsonbValue *key, const JsonbValue *v, SvcError *err)
{
	const char *name = key->val.string.val;
	size_t		len = key->val.string.len;
	SvcOptionsNumber num;

	switch (v->type)
	{
		case jbvNumeric:
			num = number_of(v->val.numeric);
			return svc_options_set_number(s, name, len, &num, err);
		case jbvString:
			return svc_options_set_string(s, name, len, v->val.string.val,
										  v->val.string.len, err);
		case jbvBool:
			return svc_options_set_bool(s, name, len, v->val.boolean, err);
		case jbvNull:
			return svc_options_set_null(s, name, len, err);
		default:
			/* jbvBinary: an object or array, which the iterator does not enter */
			return svc_options_set_nested(s, name, len, err);
	}
}

void
svc_parse_options(Jsonb *options, bool cut_only, SvcOptions *opt)
{
	SvcOptionsSetter s;
	SvcError	err;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	key;
	JsonbValue	v;

	/* a scalar is stored as a one-element array: neither is an object */
	if (!JB_ROOT_IS_OBJECT(options))
	{
		svc_options_not_object(&err);
		svc_report(&err);
	}

	/*
	 * The keys in the order the jsonb stores them (by length, then bytes),
	 * the last of duplicate keys only: the order its text shows, so the
	 * first bad key reported is the first one that text shows.  skipNested
	 * hands an object or array value over whole, as one jbvBinary value.
	 */
	svc_options_begin(&s, opt, cut_only);
	memset(&key, 0, sizeof(key));
	it = JsonbIteratorInit(&options->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
			key = v;
		else if (tok == WJB_VALUE && set_value(&s, &key, &v, &err) != SVC_OK)
			svc_report(&err);
	}
	if (svc_options_finish(&s, &err) != SVC_OK)
		svc_report(&err);
}
