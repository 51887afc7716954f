/*
 * state_sample.c - the training state's sample of distinct rows of
 * smallest key, with their counts (state_sample.h)
 *
 * Built like state.c (the Makefile): at -O3 for the host CPU, without
 * fast-math or contraction.
 */
#include "state_sample.h"

#include <math.h>
#include <string.h>

/* A heap entry: the slot's key, then its number (u32), then 4 zero bytes. */
#define HEAP_ENTRY 16

uint64_t
svc_sample_table_size(int64_t capacity)
{
	uint64_t	need = 2 * (uint64_t) capacity;

	if (capacity <= 0)
		return 0;
	/* the power of two at or above need (need >= 2) */
	return UINT64_C(1) << (64 - __builtin_clzll(need - 1));
}

size_t
svc_sample_area_size(int32_t width, int64_t capacity)
{
	uint64_t	total;

	if (width < 1 || capacity < 0 || capacity > SVC_MAX_SAMPLE)
		return 0;
	total = (uint64_t) capacity * (8 * (uint64_t) width + 16 + HEAP_ENTRY + 4) +
		4 * svc_sample_table_size(capacity);
	/* whole words, so that what follows stays aligned */
	total = (total + 7) & ~(uint64_t) 7;
	if (total > SIZE_MAX)
		return 0;
	return (size_t) total;
}

SvcSampleArea
svc_sample_area(uint8_t *base, int32_t width, int64_t capacity)
{
	SvcSampleArea a;

	a.base = base;
	a.width = width;
	a.capacity = capacity;
	a.keys = base + (size_t) capacity * 8 * (size_t) width;
	a.counts = a.keys + (size_t) capacity * 8;
	a.heap = a.counts + (size_t) capacity * 8;
	a.pos = a.heap + (size_t) capacity * HEAP_ENTRY;
	a.table = a.pos + (size_t) capacity * 4;
	a.tmask = capacity > 0 ? svc_sample_table_size(capacity) - 1 : 0;
	return a;
}

uint8_t *
svc_sample_row(const SvcSampleArea *a, int64_t i)
{
	return a->base + (size_t) i * 8 * (size_t) a->width;
}

uint64_t
svc_sample_key_at(const SvcSampleArea *a, int64_t i)
{
	return svc_load_u64(a->keys + 8 * (size_t) i);
}

uint64_t
svc_sample_count_at(const SvcSampleArea *a, int64_t i)
{
	return svc_load_u64(a->counts + 8 * (size_t) i);
}

static void
set_key(const SvcSampleArea *a, int64_t i, uint64_t key)
{
	svc_store_u64(a->keys + 8 * (size_t) i, key);
}

static void
set_count(const SvcSampleArea *a, int64_t i, uint64_t count)
{
	svc_store_u64(a->counts + 8 * (size_t) i, count);
}

/* The slot at heap place h, and its key. */
static uint32_t
heap_at(const SvcSampleArea *a, int64_t h)
{
	return svc_load_u32(a->heap + HEAP_ENTRY * (size_t) h + 8);
}

static uint64_t
heap_key(const SvcSampleArea *a, int64_t h)
{
	return svc_load_u64(a->heap + HEAP_ENTRY * (size_t) h);
}

static uint32_t
pos_at(const SvcSampleArea *a, int64_t slot)
{
	return svc_load_u32(a->pos + 4 * (size_t) slot);
}

/* Put slot (of key) at heap place h, and record the place. */
static void
set_heap(const SvcSampleArea *a, int64_t h, uint32_t slot, uint64_t key)
{
	svc_store_u64(a->heap + HEAP_ENTRY * (size_t) h, key);
	svc_store_u32(a->heap + HEAP_ENTRY * (size_t) h + 8, slot);
	svc_store_u32(a->pos + 4 * (size_t) slot, (uint32_t) h);
}

static uint32_t
table_at(const SvcSampleArea *a, uint64_t b)
{
	return svc_load_u32(a->table + 4 * (size_t) b);
}

static void
set_table(const SvcSampleArea *a, uint64_t b, uint32_t v)
{
	svc_store_u32(a->table + 4 * (size_t) b, v);
}

/*
 * A row offered: its values (row, -0.0 allowed) or its stored bytes
 * (bytes: width little-endian words, as a slot of another area holds it).
 */
typedef struct Src
{
	const double *row;
	const uint8_t *bytes;
	bool		labelled;		/* row holds width - 1 values, then label */
	double		label;
} Src;

static inline uint64_t
src_word(const Src *r, int32_t width, int32_t j)
{
	if (r->bytes)
		return svc_load_u64(r->bytes + 8 * (size_t) j);
	return svc_sample_bits(r->labelled && j == width - 1 ? r->label : r->row[j]);
}

/* Whether slot i holds the row. */
static bool
row_equal(const SvcSampleArea *a, int64_t i, const Src *r)
{
	const uint8_t *p = svc_sample_row(a, i);

	if (r->bytes)
		return memcmp(p, r->bytes, 8 * (size_t) a->width) == 0;
	for (int32_t j = 0; j < a->width; j++)
		if (svc_load_u64(p + 8 * (size_t) j) != src_word(r, a->width, j))
			return false;
	return true;
}

/* (key, bytes) of slot i against slot k: <0, 0, >0. */
static int
slot_cmp(const SvcSampleArea *a, int64_t i, int64_t k)
{
	uint64_t	ki = svc_sample_key_at(a, i),
				kk = svc_sample_key_at(a, k);

	if (ki != kk)
		return ki < kk ? -1 : 1;
	return memcmp(svc_sample_row(a, i), svc_sample_row(a, k), 8 * (size_t) a->width);
}

/* (key, bytes) of a row not stored yet against slot k. */
static int
row_cmp(const SvcSampleArea *a, uint64_t key, const Src *r, int64_t k)
{
	uint64_t	kk = svc_sample_key_at(a, k);
	const uint8_t *p = svc_sample_row(a, k);

	if (key != kk)
		return key < kk ? -1 : 1;
	if (r->bytes)
		return memcmp(r->bytes, p, 8 * (size_t) a->width);
	/* word by word as the stored bytes would compare */
	for (int32_t j = 0; j < a->width; j++)
	{
		uint8_t		w[8];
		int			c;

		svc_store_u64(w, src_word(r, a->width, j));
		c = memcmp(w, p + 8 * (size_t) j, 8);
		if (c != 0)
			return c;
	}
	return 0;
}

/*
 * (key, bytes) of heap place h against heap place g: the keys in the heap,
 * the bytes only for equal keys.
 */
static int
heap_cmp(const SvcSampleArea *a, int64_t h, int64_t g)
{
	uint64_t	kh = heap_key(a, h),
				kg = heap_key(a, g);

	if (kh != kg)
		return kh < kg ? -1 : 1;
	return memcmp(svc_sample_row(a, heap_at(a, h)), svc_sample_row(a, heap_at(a, g)),
				  8 * (size_t) a->width);
}

static void
swap_heap(const SvcSampleArea *a, int64_t h, int64_t g)
{
	uint32_t	sh = heap_at(a, h),
				sg = heap_at(a, g);
	uint64_t	kh = heap_key(a, h),
				kg = heap_key(a, g);

	set_heap(a, h, sg, kg);
	set_heap(a, g, sh, kh);
}

static void
sift_up(const SvcSampleArea *a, int64_t h)
{
	while (h > 0)
	{
		int64_t		p = (h - 1) / 2;

		if (heap_cmp(a, p, h) >= 0)
			break;
		swap_heap(a, p, h);
		h = p;
	}
}

static void
sift_down(const SvcSampleArea *a, int64_t n, int64_t h)
{
	for (;;)
	{
		int64_t		c = 2 * h + 1;

		if (c >= n)
			break;
		if (c + 1 < n && heap_cmp(a, c + 1, c) > 0)
			c++;
		if (heap_cmp(a, c, h) <= 0)
			break;
		swap_heap(a, c, h);
		h = c;
	}
}

/* The bucket of slot i's key, or of the row: the table finds it there or after. */
static uint64_t
home(uint64_t key, uint64_t tsize)
{
	/* the key's high bits: its low ones order the heap's near ties */
	return (key >> 20 ^ key) & (tsize - 1);
}

/* The slot holding the row (of key), or -1. */
static int64_t
find(const SvcSampleArea *a, uint64_t key, const Src *row)
{
	uint64_t	b = home(key, a->tmask + 1);

	for (;;)
	{
		uint32_t	v = table_at(a, b);

		if (v == 0)
			return -1;
		if (svc_sample_key_at(a, v - 1) == key && row_equal(a, v - 1, row))
			return v - 1;
		b = (b + 1) & a->tmask;
	}
}

static void
table_insert(const SvcSampleArea *a, int64_t slot)
{
	uint64_t	b = home(svc_sample_key_at(a, slot), a->tmask + 1);

	while (table_at(a, b) != 0)
		b = (b + 1) & a->tmask;
	set_table(a, b, (uint32_t) slot + 1);
}

/*
 * Remove slot from the table, moving back each entry after it whose home
 * bucket is not between the hole and the entry (backward-shift deletion,
 * so that no tombstone is left and every probe still finds its entry).
 */
static void
table_remove(const SvcSampleArea *a, int64_t slot)
{
	uint64_t	tsize = a->tmask + 1;
	uint64_t	mask = a->tmask;
	uint64_t	hole = home(svc_sample_key_at(a, slot), tsize);
	uint64_t	j;

	while (table_at(a, hole) != (uint32_t) slot + 1)
		hole = (hole + 1) & mask;
	j = hole;
	for (;;)
	{
		uint32_t	v;
		uint64_t	h;

		j = (j + 1) & mask;
		v = table_at(a, j);
		if (v == 0)
			break;
		h = home(svc_sample_key_at(a, v - 1), tsize);
		/* its home lies in (hole, j]: it stays */
		if (((j - h) & mask) < ((j - hole) & mask))
			continue;
		set_table(a, hole, v);
		hole = j;
	}
	set_table(a, hole, 0);
}

static void
store_row(const SvcSampleArea *a, int64_t i, const Src *r)
{
	uint8_t    *p = svc_sample_row(a, i);

	if (r->bytes)
		memcpy(p, r->bytes, 8 * (size_t) a->width);
	else
		for (int32_t j = 0; j < a->width; j++)
			svc_store_u64(p + 8 * (size_t) j, src_word(r, a->width, j));
}

static SvcSampleOffer
offer(const SvcSampleArea *a, int64_t *kept, int64_t limit, const Src *row, uint64_t key,
	  uint64_t count)
{
	int64_t		n = *kept;
	int64_t		slot;

	if (n >= limit && n > 0 && key > heap_key(a, 0))
		return SVC_SAMPLE_DROPPED;	/* full: only a row below the largest may enter */
	slot = n > 0 ? find(a, key, row) : -1;
	if (slot >= 0)
	{
		set_count(a, slot, svc_sample_count_at(a, slot) + count);
		return SVC_SAMPLE_COUNTED;
	}
	if (n >= limit)
	{
		int64_t		top = heap_at(a, 0);

		/* above the largest kept (only a tie of keys needs the bytes) */
		if (n == 0 || row_cmp(a, key, row, top) > 0)
			return SVC_SAMPLE_DROPPED;
		/* the largest leaves; the row takes its slot */
		table_remove(a, top);
		store_row(a, top, row);
		set_key(a, top, key);
		set_count(a, top, count);
		table_insert(a, top);
		set_heap(a, 0, (uint32_t) top, key);
		sift_down(a, n, 0);
		return SVC_SAMPLE_ADDED;
	}
	if (n >= a->capacity)
		return SVC_SAMPLE_FULL;
	store_row(a, n, row);
	set_key(a, n, key);
	set_count(a, n, count);
	table_insert(a, n);
	set_heap(a, n, (uint32_t) n, key);
	sift_up(a, n);
	*kept = n + 1;
	return SVC_SAMPLE_ADDED;
}

SvcSampleOffer
svc_sample_offer(const SvcSampleArea *a, int64_t *kept, int64_t limit, const double *row,
				 uint64_t key, uint64_t count)
{
	Src			r = {row, NULL, false, 0.0};

	return offer(a, kept, limit, &r, key, count);
}

SvcSampleOffer
svc_sample_offer_labelled(const SvcSampleArea *a, int64_t *kept, int64_t limit,
						  const double *features, double label, uint64_t key, uint64_t count)
{
	Src			r = {features, NULL, true, label};

	return offer(a, kept, limit, &r, key, count);
}

SvcSampleOffer
svc_sample_offer_slot(const SvcSampleArea *a, int64_t *kept, int64_t limit,
					  const SvcSampleArea *src, int64_t slot)
{
	Src			r = {NULL, svc_sample_row(src, slot), false, 0.0};

	return offer(a, kept, limit, &r, svc_sample_key_at(src, slot),
				 svc_sample_count_at(src, slot));
}

void
svc_sample_clear(const SvcSampleArea *a)
{
	memset(a->base, 0, svc_sample_area_size(a->width, a->capacity));
}

void
svc_sample_copy(const SvcSampleArea *src, const SvcSampleArea *dst, int64_t kept)
{
	svc_sample_clear(dst);
	memcpy(dst->base, src->base, (size_t) kept * 8 * (size_t) src->width);
	memcpy(dst->keys, src->keys, (size_t) kept * 8);
	memcpy(dst->counts, src->counts, (size_t) kept * 8);
	/* the heap's order is kept (its slots are the same); the table is sized anew */
	memcpy(dst->heap, src->heap, (size_t) kept * HEAP_ENTRY);
	memcpy(dst->pos, src->pos, (size_t) kept * 4);
	for (int64_t i = 0; i < kept; i++)
		table_insert(dst, i);
}

const char *
svc_sample_check(const SvcSampleArea *a, int64_t kept, uint64_t seed, uint64_t *total)
{
	uint64_t	tsize = a->capacity > 0 ? a->tmask + 1 : 0;
	uint64_t	sum = 0,
				entries = 0;

	*total = 0;
	if (kept < 0 || kept > a->capacity)
		return "The sample's row count is out of range.";
	for (int64_t i = 0; i < kept; i++)
	{
		const uint8_t *p = svc_sample_row(a, i);
		uint64_t	c = svc_sample_count_at(a, i);

		if (c == 0 || c > (uint64_t) SVC_MAX_SEEN || sum > (uint64_t) SVC_MAX_SEEN - c)
			return "A sampled row's count is out of range.";
		sum += c;
		for (int32_t j = 0; j < a->width; j++)
		{
			uint64_t	b = svc_load_u64(p + 8 * (size_t) j);
			double		v;

			memcpy(&v, &b, 8);
			if (!isfinite(v) || b == UINT64_C(0x8000000000000000))
				return "A sampled row is not finite or holds -0.";
		}
		if (svc_sample_key_of(NULL, p, a->width, false, 0.0, seed) != svc_sample_key_at(a, i))
			return "A sampled row's key is not its own.";
	}
	/* the heap: each slot once (its recorded place says so) with its key, in order */
	for (int64_t h = 0; h < kept; h++)
	{
		uint32_t	s = heap_at(a, h);

		if (s >= (uint64_t) kept || pos_at(a, s) != (uint64_t) h ||
			svc_load_u32(a->heap + HEAP_ENTRY * (size_t) h + 12) != 0)
			return "The sample's heap does not hold each row once.";
		if (heap_key(a, h) != svc_sample_key_at(a, s))
			return "The sample's heap does not hold each row's key.";
		/* strictly: the rows are distinct (checked below) */
		if (h > 0 && heap_cmp(a, (h - 1) / 2, h) <= 0)
			return "The sample's heap is out of order.";
	}
	/* the table: kept entries, each a used slot found from its key */
	for (uint64_t b = 0; b < tsize; b++)
	{
		uint32_t	v = table_at(a, b);

		if (v == 0)
			continue;
		if (v > (uint64_t) kept)
			return "The sample's table points past its rows.";
		entries++;
	}
	if (entries != (uint64_t) kept)
		return "The sample's table does not hold each row once.";
	for (int64_t i = 0; i < kept; i++)
	{
		uint64_t	b = home(svc_sample_key_at(a, i), tsize);

		for (;;)
		{
			uint32_t	v = table_at(a, b);

			if (v == 0)
				return "The sample's table does not find a row.";
			if (v - 1 == (uint64_t) i)
				break;
			/* an equal row met first would be the one found: not distinct */
			if (slot_cmp(a, v - 1, i) == 0)
				return "The sample holds a row twice.";
			b = (b + 1) & (tsize - 1);
		}
	}
	/* unused slots are zero, so that equal samples have equal bytes */
	for (int64_t i = kept; i < a->capacity; i++)
	{
		const uint8_t *p = svc_sample_row(a, i);

		for (size_t j = 0; j < 8 * (size_t) a->width; j++)
			if (p[j] != 0)
				return "An unused slot of the sample is not zero.";
		if (svc_sample_key_at(a, i) != 0 || svc_sample_count_at(a, i) != 0 ||
			heap_at(a, i) != 0 || heap_key(a, i) != 0 || pos_at(a, i) != 0)
			return "An unused slot of the sample is not zero.";
	}
	*total = sum;
	return NULL;
}

/* Sift place h of a max-heap of n slot numbers, by (key, bytes). */
static void
order_sift(const SvcSampleArea *a, uint32_t *order, int64_t n, int64_t h)
{
	uint32_t	s = order[h];

	for (;;)
	{
		int64_t		c = 2 * h + 1;

		if (c >= n)
			break;
		if (c + 1 < n && slot_cmp(a, order[c + 1], order[c]) > 0)
			c++;
		if (slot_cmp(a, order[c], s) <= 0)
			break;
		order[h] = order[c];
		h = c;
	}
	order[h] = s;
}

/* Slot numbers by (key, bytes) ascending: a heapsort, no scratch. */
void
svc_sample_order(const SvcSampleArea *a, int64_t kept, uint32_t *order)
{
	int64_t		n = kept;

	for (int64_t i = 0; i < kept; i++)
		order[i] = (uint32_t) i;
	for (int64_t start = n / 2 - 1; start >= 0; start--)
		order_sift(a, order, n, start);
	for (int64_t end = n - 1; end > 0; end--)
	{
		uint32_t	t = order[end];

		order[end] = order[0];
		order[0] = t;
		order_sift(a, order, end, 0);
	}
}
