/*
 * options_text.h - a JSON text reader of options, for the unit tests and
 * the fuzzer (options_text.c; not part of the extension)
 */
#ifndef SVC_OPTIONS_TEXT_H
#define SVC_OPTIONS_TEXT_H

#include "options.h"

/*
 * Read a flat JSON object of options as text over opt, through the setters
 * of options.h (the unit tests and the fuzzer use it; the extension walks its
 * jsonb instead).  Text that is not one JSON object is
 * svc_options_not_object's error.  json need not be NUL-terminated.
 *
 * Where text and jsonb differ: the reader sets every key of a duplicate in
 * turn (an earlier bad one is an error) while a jsonb keeps only the last;
 * it meets keys in the text's order while a jsonb sorts them (shorter
 * first), which decides which bad key is reported first; it keeps \u
 * escapes opaque ('?'); and it refuses numbers of 128 characters or more,
 * which a jsonb number converts at their value.
 */
SvcStatus	svc_options_parse(const char *json, size_t len, SvcOptions *opt,
							  SvcError *err);

/* The same with cut_only: the options of a recut of a trained model. */
SvcStatus	svc_options_parse_cut(const char *json, size_t len, SvcOptions *opt,
								  SvcError *err);

#endif							/* SVC_OPTIONS_TEXT_H */
