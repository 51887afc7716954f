/*
 * state_sample.h - the training state's sample: the distinct rows of
 * smallest key, each with its count (state_sample.c, for state.c)
 *
 * A row's key is a 64-bit hash of its values' bits and the seed
 * (svc_sample_key).  The sample stands for the `limit` distinct rows of
 * smallest (key, bytes), each with the number of rows equal to it.  It
 * holds a few more between compactions: every row at or below a bound
 * tau, which only falls.  When the area is full, a compaction keeps the
 * limit smallest and lowers tau to the largest of them; a row above tau
 * is dropped at once (most rows, once the sample is full), without being
 * looked at further.
 *
 * A row among the limit smallest of all rows is below every tau there
 * ever was, so it was kept from its first copy on: its count is exact, and
 * the limit smallest of what the sample holds are those of every row.
 * They are therefore a function of the multiset of rows, not of their
 * order, and two samples merge into one of the union, in any order, by
 * offering one's rows to the other with their counts.  (A row one side
 * dropped is not among the limit smallest of the union: that side holds
 * limit rows below it.  It may stay in the merge, with a count short of
 * its copies, but always above the limit smallest.)
 *
 * An area of the state holds a header (u64 tau, UINT64_MAX before the
 * first compaction; u64 the slot of tau's row + 1, or 0) and `capacity`
 * slots (grown by the caller up to svc_sample_max_capacity(limit)): each a
 * row of `width` doubles, its key and its count (u64 each); then an
 * open-addressing table from keys to slots (u32 slot + 1, 0 for empty,
 * linear probing, a power of two of at least twice the capacity).  Every
 * value little-endian, as the rest of the state; rows are stored with
 * -0.0 as 0.0; unused slots are zero.
 */
#ifndef SVC_STATE_SAMPLE_H
#define SVC_STATE_SAMPLE_H

#include "svc_core.h"
#include "bytes.h"

typedef struct SvcSampleArea
{
	uint8_t    *base;			/* the area's first byte: its header */
	int32_t		width;			/* doubles per row */
	int64_t		capacity;		/* slots */
	/* its parts (svc_sample_area sets them) */
	uint8_t    *rows;
	uint8_t    *keys;
	uint8_t    *counts;
	uint8_t    *table;
	uint64_t	tmask;			/* buckets - 1 */
} SvcSampleArea;

/* The area of capacity slots of width doubles at base. */
SvcSampleArea svc_sample_area(uint8_t *base, int32_t width, int64_t capacity);

/* Buckets of the table of an area of capacity slots (0 for capacity 0). */
uint64_t	svc_sample_table_size(int64_t capacity);

/* Bytes of an area of capacity slots of width doubles; 0 on overflow. */
size_t		svc_sample_area_size(int32_t width, int64_t capacity);

/* The most slots an area of this limit grows to: a quarter more, for compactions. */
int64_t		svc_sample_max_capacity(int64_t limit);

/* Initialise an empty area (its bytes zero but tau). */
void		svc_sample_init(const SvcSampleArea *a);

/* A slot's row, key and count. */
uint8_t    *svc_sample_row(const SvcSampleArea *a, int64_t i);
uint64_t	svc_sample_key_at(const SvcSampleArea *a, int64_t i);
uint64_t	svc_sample_count_at(const SvcSampleArea *a, int64_t i);

/*
 * The bound tau: a row of a larger key is dropped.  At the area's first
 * byte, so that the transition reads it without the area's pointers.
 */
static inline uint64_t
svc_sample_tau(const uint8_t *area)
{
	return svc_load_u64(area);
}

/*
 * The key of a row: its values' IEEE bits (-0.0 as 0.0), a pair at a time
 * through 64 x 64 -> 128-bit multiplications with constants of their own,
 * summed and finished with the seed: integer arithmetic only, the same on
 * every platform.  Inline: the transition keys every row.
 */
static inline uint64_t
svc_sample_mum(uint64_t a, uint64_t b)
{
#if defined(__x86_64__) && defined(__BMI2__) && defined(__GNUC__)
	/*
	 * gcc stores half of an __int128 product (or _mulx_u64's) to the
	 * stack and reads it back: a third of the key's time
	 */
	uint64_t	lo,
				hi;

	__asm__("mulx %3, %0, %1" : "=r"(lo), "=r"(hi) : "d"(a), "rm"(b));
	return lo ^ hi;
#elif defined(__SIZEOF_INT128__)
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
	/*
	 * A row's values (the transition's case): two pairs a step into two
	 * sums, which the key adds (modulo 2^64, so in any order), without
	 * the stored bytes' and the label's tests in the loop.
	 */
	if (bytes == NULL && !labelled)
	{
		uint64_t	acc2 = 0;

		for (; j + 3 < width; j += 4)
		{
			acc += svc_sample_mum(svc_sample_bits(row[j]) ^ k[0],
								  svc_sample_bits(row[j + 1]) ^ k[1] ^ (uint64_t) j);
			acc2 += svc_sample_mum(svc_sample_bits(row[j + 2]) ^ k[2],
								   svc_sample_bits(row[j + 3]) ^ k[3] ^ (uint64_t) (j + 2));
		}
		acc += acc2;
	}
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

/*
 * svc_sample_key of a row that holds no -0.0 (svc_state_floats_to_row's
 * rows): the same key, the same products added modulo 2^64, without the
 * test of every value and in four sums, so that the multiplications
 * overlap (a third less time a row at 128 values).
 */
static inline uint64_t
svc_sample_word(const double *p)
{
	uint64_t	b;

	memcpy(&b, p, sizeof(b));
	return b;
}

static inline uint64_t
svc_sample_key_canonical(const double *row, int32_t width, uint64_t seed)
{
	static const uint64_t k[4] = {
		UINT64_C(0x6a09e667f3bcc909), UINT64_C(0xbb67ae8584caa73b),
		UINT64_C(0x3c6ef372fe94f82b), UINT64_C(0xa54ff53a5f1d36f1)
	};
	uint64_t	acc = (uint64_t) width * UINT64_C(0x9e3779b97f4a7c15),
				acc1 = 0,
				acc2 = 0,
				acc3 = 0;
	int32_t		j = 0;

	/* pairs (j, j + 1) with the constants of j & 2, as svc_sample_key_of */
	for (; j + 7 < width; j += 8)
	{
		const double *r = row + j;

		acc += svc_sample_mum(svc_sample_word(r) ^ k[0],
							  svc_sample_word(r + 1) ^ k[1] ^ (uint64_t) j);
		acc1 += svc_sample_mum(svc_sample_word(r + 2) ^ k[2],
							   svc_sample_word(r + 3) ^ k[3] ^ (uint64_t) (j + 2));
		acc2 += svc_sample_mum(svc_sample_word(r + 4) ^ k[0],
							   svc_sample_word(r + 5) ^ k[1] ^ (uint64_t) (j + 4));
		acc3 += svc_sample_mum(svc_sample_word(r + 6) ^ k[2],
							   svc_sample_word(r + 7) ^ k[3] ^ (uint64_t) (j + 6));
	}
	acc += acc1 + acc2 + acc3;
	for (; j + 1 < width; j += 2)
		acc += svc_sample_mum(svc_sample_word(row + j) ^ k[j & 2],
							  svc_sample_word(row + j + 1) ^ k[(j & 2) + 1] ^ (uint64_t) j);
	if (j < width)
		acc += svc_sample_mum(svc_sample_word(row + j) ^ k[2], k[3] ^ (uint64_t) j);
	acc = svc_sample_mum(acc ^ seed, UINT64_C(0xe7037ed1a0b428db));
	return svc_sample_mum(acc, UINT64_C(0x8ebc6af09c88c6e3) ^ seed);
}

/* What svc_sample_offer did with a row. */
typedef enum SvcSampleOffer
{
	SVC_SAMPLE_COUNTED,			/* equal to a kept row: its count grew */
	SVC_SAMPLE_ADDED,			/* kept in a free slot (after a compaction,
								 * perhaps) */
	SVC_SAMPLE_DROPPED,			/* its (key, bytes) is above tau's */
	SVC_SAMPLE_FULL				/* to be kept, but every slot is used and
								 * capacity < svc_sample_max_capacity(limit):
								 * grow and offer again */
} SvcSampleOffer;

/*
 * Offer count rows equal to row (width values, -0.0 allowed), of key key,
 * to an area with *kept slots used and limit rows to stand for.
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
 * Copy the header and kept slots from src into dst (capacity >= kept,
 * same width) and build dst's table; the rest of dst's area zeroed, so
 * every byte of it is written.
 */
void		svc_sample_copy(const SvcSampleArea *src, const SvcSampleArea *dst, int64_t kept);

/*
 * svc_sample_copy where dst is src's area grown in place (the same base,
 * a larger capacity; the bytes up to dst's end writable): the rows stay
 * where they are, the keys and counts move up, and the area's bytes end
 * as svc_sample_copy would leave them.
 */
void		svc_sample_grow(const SvcSampleArea *src, const SvcSampleArea *dst, int64_t kept);

/*
 * Checks of an area received from outside: a consistent tau, every key
 * its row's and at most tau, counts positive and summing to *total, rows
 * finite, distinct and stored without -0.0, the table finding each slot
 * and only those, unused slots zero.  NULL when consistent, else the
 * error's detail.
 */
const char *svc_sample_check(const SvcSampleArea *a, int64_t kept, uint64_t seed,
							 uint64_t *total);

/*
 * The slots in their canonical order, (key, bytes) ascending: order
 * receives kept slot numbers, of which the first min(kept, limit) are the
 * rows the sample stands for.
 */
void		svc_sample_order(const SvcSampleArea *a, int64_t kept, uint32_t *order);

#endif							/* SVC_STATE_SAMPLE_H */
