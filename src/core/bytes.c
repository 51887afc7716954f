/*
 * bytes.c - little-endian encoding and the CRC-32C checksum
 */
#include "bytes.h"

#include <string.h>

SvcStatus
svc_corrupt(SvcError *err, const char *what, const char *detail)
{
	svc_fail(err, SVC_ERR_CORRUPT, "invalid %s", what);
	svc_error_detail(err, "%s", detail);
	return SVC_ERR_CORRUPT;
}

SvcStatus
svc_check_signature(const uint8_t *buf, size_t len, size_t header_size,
					const char *magic, uint16_t version, const char *what,
					SvcError *err)
{
	if (len < header_size || len < 6)
		return svc_corrupt(err, what, "The value is too short.");
	if (memcmp(buf, magic, 4) != 0)
		return svc_corrupt(err, what, "The value does not start with the state signature.");
	if (buf[4] != (uint8_t) version || buf[5] != (uint8_t) (version >> 8))
		return svc_corrupt(err, what, "The state version is not supported.");
	return SVC_OK;
}

void
svc_reader_init(SvcReader *r, const uint8_t *data, size_t len)
{
	r->p = data;
	r->left = len;
	r->failed = false;
}

/* Claim n bytes, or latch failure and return NULL. */
static const uint8_t *
take(SvcReader *r, size_t n)
{
	const uint8_t *p;

	if (r->failed || r->left < n)
	{
		r->failed = true;
		return NULL;
	}
	p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}

uint8_t
svc_get_u8(SvcReader *r)
{
	const uint8_t *p = take(r, 1);

	return p ? p[0] : 0;
}

uint16_t
svc_get_u16(SvcReader *r)
{
	const uint8_t *p = take(r, 2);

	return p ? (uint16_t) (p[0] | (p[1] << 8)) : 0;
}

uint32_t
svc_get_u32(SvcReader *r)
{
	const uint8_t *p = take(r, 4);

	return p ? svc_load_u32(p) : 0;
}

uint64_t
svc_get_u64(SvcReader *r)
{
	const uint8_t *p = take(r, 8);

	return p ? svc_load_u64(p) : 0;
}

double
svc_get_f64(SvcReader *r)
{
	const uint8_t *p = take(r, 8);

	return p ? svc_load_f64(p) : 0.0;
}

const uint8_t *
svc_get_raw(SvcReader *r, size_t n)
{
	return take(r, n);
}

void
svc_writer_init(SvcWriter *w, uint8_t *data, size_t len)
{
	w->p = data;
	w->left = len;
	w->failed = false;
}

static uint8_t *
claim(SvcWriter *w, size_t n)
{
	uint8_t    *p;

	if (w->failed || w->left < n)
	{
		w->failed = true;
		return NULL;
	}
	p = w->p;
	w->p += n;
	w->left -= n;
	return p;
}

void
svc_put_u8(SvcWriter *w, uint8_t v)
{
	uint8_t    *p = claim(w, 1);

	if (p)
		p[0] = v;
}

void
svc_put_u16(SvcWriter *w, uint16_t v)
{
	uint8_t    *p = claim(w, 2);

	if (p)
	{
		p[0] = (uint8_t) v;
		p[1] = (uint8_t) (v >> 8);
	}
}

void
svc_put_u32(SvcWriter *w, uint32_t v)
{
	uint8_t    *p = claim(w, 4);

	if (p)
		svc_store_u32(p, v);
}

void
svc_put_u64(SvcWriter *w, uint64_t v)
{
	uint8_t    *p = claim(w, 8);

	if (p)
		svc_store_u64(p, v);
}

void
svc_put_f64(SvcWriter *w, double v)
{
	uint8_t    *p = claim(w, 8);

	if (p)
		svc_store_f64(p, v);
}

void
svc_put_raw(SvcWriter *w, const void *src, size_t n)
{
	uint8_t    *p = claim(w, n);

	if (p && n > 0)
		memcpy(p, src, n);
}

/* Table-driven CRC-32C; the table is built on first use. */
static uint32_t crc_table[256];
static bool crc_table_ready = false;

static void
crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++)
	{
		uint32_t	c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ UINT32_C(0x82F63B78) : c >> 1;
		crc_table[i] = c;
	}
	crc_table_ready = true;
}

uint32_t
svc_crc32c(const uint8_t *data, size_t len)
{
	uint32_t	crc = UINT32_C(0xFFFFFFFF);

	if (!crc_table_ready)
		crc_init();
	for (size_t i = 0; i < len; i++)
		crc = crc_table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
	return crc ^ UINT32_C(0xFFFFFFFF);
}
