/*
 * state_sample.h - the training state's sample: the distinct rows of
 * smallest key, each with its count (state_sample.c, for state.c)
 *
 * A row's key is a 64-bit hash of its values' bits and the seed
 * (svc_sample_key).  The sample keeps the `limit` distinct rows of
 * smallest (key, bytes) and, for each, the number of rows equal to it.
 * Keys never change and the largest key kept only falls, so a row kept
 * at the end was kept from its first copy on: its count is exact.  The
 * sample is therefore a function of the multiset of rows, not of their
 * order, and two samples merge into the sample of the union, in any
 * order, by adding counts (a row one side dropped is out of the union's
 * sample too: that side's `limit` rows are all below it).
 *
 * An area of the state holds `capacity` slots (capacity <= limit, grown
 * by the caller up to limit): each a row of `width` doubles, its key and
 * count (u64 each), a max-heap of the slots used (u64 key and u32 slot
 * number an entry, the largest (key, bytes) first) with each slot's place
 * in it (u32), and an open-addressing table from keys to
 * slots (u32 slot + 1, 0 for empty, linear probing, a power of two of at
 * least twice the capacity).  Everything little-endian, as the rest of
 * the state; a slot's row is stored with -0.0 as 0.0.
 */
#ifndef SVC_STATE_SAMPLE_H
#define SVC_STATE_SAMPLE_H

#include "svc_core.h"
#include "bytes.h"

typedef struct SvcSampleArea
{
	uint8_t    *base;			/* the area's first byte: the rows */
	int32_t		width;			/* doubles per row */
	int64_t		capacity;		/* slots */
	/* its parts (svc_sample_area sets them) */
	uint8_t    *keys;
	uint8_t    *counts;
	uint8_t    *heap;
	uint8_t    *pos;
	uint8_t    *table;
	uint64_t	tmask;			/* buckets - 1 */
} SvcSampleArea;

/* The area of capacity slots of width doubles at base. */
SvcSampleArea svc_sample_area(uint8_t *base, int32_t width, int64_t capacity);

/* Buckets of the table of an area of capacity slots (0 for capacity 0). */
uint64_t	svc_sample_table_size(int64_t capacity);

/* Bytes of an area of capacity slots of width doubles; 0 on overflow. */
size_t		svc_sample_area_size(int32_t width, int64_t capacity);

/* Pointers into an area (i a slot number). */
uint8_t    *svc_sample_row(const SvcSampleArea *a, int64_t i);
uint64_t	svc_sample_key_at(const SvcSampleArea *a, int64_t i);
uint64_t	svc_sample_count_at(const SvcSampleArea *a, int64_t i);

/*
 * The key of a row: its values' IEEE bits (-0.0 as 0.0), a word at a time
 * through 64 x 64 -> 128-bit multiplications with constants of their own,
 * folded and finished with the seed: integer arithmetic only, the same on
 * every platform.  Inline: the transition keys every row.
 */
static inline uint64_t
svc_sample_mum(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	unsigned __int128 r = (unsigned __int128) a * b;

	return (uint64_t) r ^ (uint64_t) (r >> 64);
#else
	uint64_t	al = a & 0xffffffffu,
				ah = a >> 32,
				bl = b & 0xffffffffu,
				bh = b >> 32;
	uint64_t	ll = al * bl,
				lh = al * bh,
				hl = ah * bl,
				hh = ah * bh;
	uint64_t	mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
	uint64_t	lo = (ll & 0xffffffffu) | (mid << 32);
	uint64_t	hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);

	return lo ^ hi;
#endif
}

/* A value's bits as the key and the stored row see them: -0.0 is 0.0. */
static inline uint64_t
svc_sample_bits(double v)
{
	uint64_t	b;

	memcpy(&b, &v, sizeof(b));
	return b == UINT64_C(0x8000000000000000) ? 0 : b;
}

/*
 * The key from a row's values (row, -0.0 allowed; with a label, the
 * features then the label as its last value, labelled true) or from its
 * stored bytes (bytes != NULL: width little-endian words, as a slot holds
 * them).
 */
static inline uint64_t
svc_sample_key_of(const double *row, const uint8_t *bytes, int32_t width, bool labelled,
				  double label, uint64_t seed)
{
	/* odd constants: the fractional parts of sqrt(2), sqrt(3), ... in hex */
	static const uint64_t k[4] = {
		UINT64_C(0x6a09e667f3bcc909), UINT64_C(0xbb67ae8584caa73b),
		UINT64_C(0x3c6ef372fe94f82b), UINT64_C(0xa54ff53a5f1d36f1)
	};
	uint64_t	acc = (uint64_t) width * UINT64_C(0x9e3779b97f4a7c15);
	int32_t		j = 0;

#define SVC_SAMPLE_WORD(i) \
	(bytes ? svc_load_u64(bytes + 8 * (size_t) (i)) : \
	 svc_sample_bits(labelled && (i) == width - 1 ? label : row[i]))
	/* pairs of values, each pair's product independent of the others */
	for (; j + 1 < width; j += 2)
		acc += svc_sample_mum(SVC_SAMPLE_WORD(j) ^ k[j & 2],
							  SVC_SAMPLE_WORD(j + 1) ^ k[(j & 2) + 1] ^ (uint64_t) j);
	if (j < width)
		acc += svc_sample_mum(SVC_SAMPLE_WORD(j) ^ k[2], k[3] ^ (uint64_t) j);
#undef SVC_SAMPLE_WORD
	acc = svc_sample_mum(acc ^ seed, UINT64_C(0xe7037ed1a0b428db));
	return svc_sample_mum(acc, UINT64_C(0x8ebc6af09c88c6e3) ^ seed);
}

static inline uint64_t
svc_sample_key(const double *row, int32_t width, uint64_t seed)
{
	return svc_sample_key_of(row, NULL, width, false, 0.0, seed);
}

/* What svc_sample_offer did with a row. */
typedef enum SvcSampleOffer
{
	SVC_SAMPLE_COUNTED,			/* equal to a kept row: its count grew */
	SVC_SAMPLE_ADDED,			/* kept in a free slot, or in the place of
								 * the largest kept row, which left */
	SVC_SAMPLE_DROPPED,			/* its (key, bytes) is above the limit's */
	SVC_SAMPLE_FULL				/* to be kept, but every slot is used and
								 * capacity < limit: grow and offer again */
} SvcSampleOffer;

/*
 * Offer count rows equal to row (width values, -0.0 allowed), of key key,
 * to an area with *kept slots used and at most limit rows kept.
 */
SvcSampleOffer svc_sample_offer(const SvcSampleArea *a, int64_t *kept, int64_t limit,
								const double *row, uint64_t key, uint64_t count);

/* The same for a labelled row: its features (width - 1) and its label. */
SvcSampleOffer svc_sample_offer_labelled(const SvcSampleArea *a, int64_t *kept, int64_t limit,
										 const double *features, double label, uint64_t key,
										 uint64_t count);

/* The same with the row, its key and count from slot of another area. */
SvcSampleOffer svc_sample_offer_slot(const SvcSampleArea *a, int64_t *kept, int64_t limit,
									 const SvcSampleArea *src, int64_t slot);

/*
 * The largest key kept (the heap's top), for the transition's quick
 * refusal: a row of a larger key is dropped once the area holds limit
 * rows.  kept must be > 0.  The heap's first entry starts with it, at
 * capacity * (8 * width + 16) bytes into the area (svc_state_add reads it
 * there).
 */
static inline uint64_t
svc_sample_top_key(const SvcSampleArea *a, int64_t kept)
{
	(void) kept;
	return svc_load_u64(a->heap);
}

/*
 * Copy kept slots from src into dst (capacity >= kept, same width) and
 * build dst's heap and table.
 */
void		svc_sample_copy(const SvcSampleArea *src, const SvcSampleArea *dst, int64_t kept);

/* Empty an area: every byte 0. */
void		svc_sample_clear(const SvcSampleArea *a);

/*
 * Checks of an area received from outside: every key is its row's,
 * counts are positive and sum to *total, rows are finite, distinct and
 * stored without -0.0, the table finds each slot and only those, the
 * heap holds each slot once in heap order, and unused slots are zero.
 * NULL when consistent, else the error's detail.
 */
const char *svc_sample_check(const SvcSampleArea *a, int64_t kept, uint64_t seed,
							 uint64_t *total);

/*
 * The slots in their canonical order, (key, bytes) ascending: order
 * receives kept slot numbers.
 */
void		svc_sample_order(const SvcSampleArea *a, int64_t kept, uint32_t *order);

#endif							/* SVC_STATE_SAMPLE_H */
