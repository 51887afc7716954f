/*
 * bytes.h - little-endian reading and writing, independent of the host
 *
 * The reader never reads past its end: every get checks the remaining
 * length first and latches a failure, so a decoder can read a whole
 * header and check once.
 */
#ifndef SVC_BYTES_H
#define SVC_BYTES_H

#include "svc_core.h"

typedef struct SvcReader
{
	const uint8_t *p;
	size_t		left;
	bool		failed;
} SvcReader;

typedef struct SvcWriter
{
	uint8_t    *p;
	size_t		left;
	bool		failed;
} SvcWriter;

void		svc_reader_init(SvcReader *r, const uint8_t *data, size_t len);
uint8_t		svc_get_u8(SvcReader *r);
uint16_t	svc_get_u16(SvcReader *r);
uint32_t	svc_get_u32(SvcReader *r);
uint64_t	svc_get_u64(SvcReader *r);
double		svc_get_f64(SvcReader *r);
/* Returns a pointer to n raw bytes inside the buffer, or NULL. */
const uint8_t *svc_get_raw(SvcReader *r, size_t n);

void		svc_writer_init(SvcWriter *w, uint8_t *data, size_t len);
void		svc_put_u8(SvcWriter *w, uint8_t v);
void		svc_put_u16(SvcWriter *w, uint16_t v);
void		svc_put_u32(SvcWriter *w, uint32_t v);
void		svc_put_u64(SvcWriter *w, uint64_t v);
void		svc_put_f64(SvcWriter *w, double v);
void		svc_put_raw(SvcWriter *w, const void *src, size_t n);

/* Unaligned little-endian access to a buffer of doubles. */
double		svc_load_f64(const uint8_t *p);
void		svc_store_f64(uint8_t *p, double v);
uint64_t	svc_load_u64(const uint8_t *p);
void		svc_store_u64(uint8_t *p, uint64_t v);
uint32_t	svc_load_u32(const uint8_t *p);
void		svc_store_u32(uint8_t *p, uint32_t v);

/* CRC-32C (Castagnoli) of a buffer, for the model's self-check. */
uint32_t	svc_crc32c(const uint8_t *data, size_t len);

#endif							/* SVC_BYTES_H */
