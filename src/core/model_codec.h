/* model_codec.h - the model's versioned, self-checking bytes */
#ifndef SVC_MODEL_CODEC_H
#define SVC_MODEL_CODEC_H

#include "svc_core.h"
#include "model.h"

/* Whether m has a section of format 5 (and is written as version 5). */
bool		svc_model_has_sections(const SvcModel *m);

/* The model's format version: 5 with a section, 4 for the solvers smo and
 * incremental, else 3 with a width per support vector, else 2. */
int			svc_model_format_version(const SvcModel *m);

/* Size of the encoded model in bytes; 0 if it is beyond the format's limits. */
size_t		svc_model_encoded_size(const SvcModel *m);

/* Encode into out (of svc_model_encoded_size bytes). */
void		svc_model_encode(const SvcModel *m, uint8_t *out);

/*
 * Decode and validate: magic, version, lengths, counts, finite numbers,
 * cluster ids, the tree (a spanning tree by decreasing height whose cut
 * matches the stored cluster sizes), checksum.  Never reads outside [data, data+len).  On
 * failure returns SVC_ERR_CORRUPT with a message saying what is wrong.
 */
SvcStatus	svc_model_decode(const SvcEnv *env, const uint8_t *data, size_t len,
							 SvcModel *m, SvcError *err);

#endif							/* SVC_MODEL_CODEC_H */
