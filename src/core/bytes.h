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

#include <string.h>

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

/*
 * Unaligned little-endian access.  Inline, because the aggregate's
 * transition function goes through these for every value of every row:
 * on little-endian hosts they compile to plain moves.
 */
static inline uint16_t
svc_load_u16(const uint8_t *p)
{
	return (uint16_t) (p[0] | (p[1] << 8));
}

static inline void
svc_store_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

static inline uint32_t
svc_load_u32(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t	v;

	memcpy(&v, p, sizeof(v));
	return v;
#else
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) |
		((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
#endif
}

static inline void
svc_store_u32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, sizeof(v));
#else
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
	p[2] = (uint8_t) (v >> 16);
	p[3] = (uint8_t) (v >> 24);
#endif
}

/*
 * One 8-byte move each on little-endian hosts: a u64 stored as two 4-byte
 * halves and read back whole (the state's row counts, random state and
 * scale exponents, on every row) cannot be forwarded from the store
 * buffer, and each such read waits for both stores to retire.
 */
static inline uint64_t
svc_load_u64(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t	v;

	memcpy(&v, p, sizeof(v));
	return v;
#else
	return (uint64_t) svc_load_u32(p) | ((uint64_t) svc_load_u32(p + 4) << 32);
#endif
}

static inline void
svc_store_u64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, sizeof(v));
#else
	svc_store_u32(p, (uint32_t) v);
	svc_store_u32(p + 4, (uint32_t) (v >> 32));
#endif
}

static inline double
svc_load_f64(const uint8_t *p)
{
	uint64_t	bits = svc_load_u64(p);
	double		v;

	memcpy(&v, &bits, sizeof(v));
	return v;
}

static inline void
svc_store_f64(uint8_t *p, double v)
{
	uint64_t	bits;

	memcpy(&bits, &v, sizeof(bits));
	svc_store_u64(p, bits);
}

/*
 * The first checks of a stored state: at least header_size bytes, the
 * 4-byte magic, then a u16 version.  On failure err is SVC_ERR_CORRUPT
 * "invalid <what>" with a detail saying which check failed.
 */
SvcStatus	svc_check_signature(const uint8_t *buf, size_t len, size_t header_size,
								const char *magic, uint16_t version,
								const char *what, SvcError *err);

/* SVC_ERR_CORRUPT "invalid <what>" with the detail. */
SvcStatus	svc_corrupt(SvcError *err, const char *what, const char *detail);

/* CRC-32C (Castagnoli) of a buffer, for the model's self-check. */
uint32_t	svc_crc32c(const uint8_t *data, size_t len);

#endif							/* SVC_BYTES_H */
