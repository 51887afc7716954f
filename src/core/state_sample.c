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

/* The area's header: tau, then tau's slot + 1 (0: none). */
#define AREA_HEADER 16
#define NO_TAU UINT64_MAX

SvcSampleArea
svc_sample_area(uint8_t *base, int32_t width, int64_t capacity)
{
	SvcSampleArea a;

	a.base = base;
	a.width = width;
	a.capacity = capacity;
	a.rows = base + AREA_HEADER;
	a.keys = a.rows + (size_t) capacity * 8 * (size_t) width;
	a.counts = a.keys + (size_t) capacity * 8;
	a.table = a.counts + (size_t) capacity * 8;
	a.tmask = capacity > 0 ? svc_sample_table_size(capacity) - 1 : 0;
	return a;
}

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

	if (width < 1 || capacity < 0 || capacity > 2 * (int64_t) SVC_MAX_SAMPLE)
		return 0;
	total = AREA_HEADER + (uint64_t) capacity * (8 * (uint64_t) width + 16) +
		4 * svc_sample_table_size(capacity);
	/* whole words, so that what follows stays aligned */
	total = (total + 7) & ~(uint64_t) 7;
	if (total > SIZE_MAX)
		return 0;
	return (size_t) total;
}

int64_t
svc_sample_max_capacity(int64_t limit)
{
	return limit + (limit / 4 > 0 ? limit / 4 : 1);
}

void
svc_sample_init(const SvcSampleArea *a)
{
	memset(a->base, 0, svc_sample_area_size(a->width, a->capacity));
	svc_store_u64(a->base, NO_TAU);
}

uint8_t *
svc_sample_row(const SvcSampleArea *a, int64_t i)
{
	return a->rows + (size_t) i * 8 * (size_t) a->width;
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

/*
 * tau's slot, or -1 (before the first compaction); -2 for a stored value
 * no slot could have (a damaged area, which the check refuses).
 */
static int64_t
tau_slot(const SvcSampleArea *a)
{
	uint64_t	v = svc_load_u64(a->base + 8);

	if (v == 0)
		return -1;
	return v - 1 > (uint64_t) INT32_MAX ? -2 : (int64_t) (v - 1);
}

static void
set_tau(const SvcSampleArea *a, uint64_t tau, int64_t slot)
{
	svc_store_u64(a->base, tau);
	svc_store_u64(a->base + 8, (uint64_t) (slot + 1));
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

/* The bytes of a row not stored yet against slot k's (equal keys). */
static int
bytes_cmp(const SvcSampleArea *a, const Src *r, int64_t k)
{
	const uint8_t *p = svc_sample_row(a, k);

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

/* The bucket a key's probe starts at. */
static uint64_t
home(uint64_t key, uint64_t mask)
{
	return (key >> 20 ^ key) & mask;
}

/* The slot holding the row (of key), or -1. */
static int64_t
find(const SvcSampleArea *a, uint64_t key, const Src *row)
{
	uint64_t	b = home(key, a->tmask);

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
	uint64_t	b = home(svc_sample_key_at(a, slot), a->tmask);

	while (table_at(a, b) != 0)
		b = (b + 1) & a->tmask;
	set_table(a, b, (uint32_t) slot + 1);
}

static void
table_rebuild(const SvcSampleArea *a, int64_t kept)
{
	if (a->capacity == 0)
		return;
	memset(a->table, 0, 4 * (size_t) (a->tmask + 1));
	for (int64_t i = 0; i < kept; i++)
		table_insert(a, i);
}

static void
store_row(const SvcSampleArea *a, int64_t i, const Src *r)
{
	uint8_t    *p = svc_sample_row(a, i);

	if (r->bytes)
		memcpy(p, r->bytes, 8 * (size_t) a->width);
	else if (!r->labelled)
	{
		/* the transition's case, without the label's test: a vector loop */
		for (int32_t j = 0; j < a->width; j++)
			svc_store_u64(p + 8 * (size_t) j, svc_sample_bits(r->row[j]));
	}
	else
		for (int32_t j = 0; j < a->width; j++)
			svc_store_u64(p + 8 * (size_t) j, src_word(r, a->width, j));
}

/* Slot from's row, key and count into slot to. */
static void
move_slot(const SvcSampleArea *a, int64_t from, int64_t to)
{
	memcpy(svc_sample_row(a, to), svc_sample_row(a, from), 8 * (size_t) a->width);
	set_key(a, to, svc_sample_key_at(a, from));
	set_count(a, to, svc_sample_count_at(a, from));
}

static void
clear_slot(const SvcSampleArea *a, int64_t i)
{
	memset(svc_sample_row(a, i), 0, 8 * (size_t) a->width);
	set_key(a, i, 0);
	set_count(a, i, 0);
}

/* Word i of the keys' copy (little-endian words, as the rest of the area). */
static inline uint64_t
sk(const uint8_t *v, int64_t i)
{
	return svc_load_u64(v + 8 * (size_t) i);
}

static inline void
set_sk(uint8_t *v, int64_t i, uint64_t x)
{
	svc_store_u64(v + 8 * (size_t) i, x);
}

/*
 * The k-th smallest (from 0) of n keys, reordering them: an iterative
 * selection, median of three pivots, falling back to an insertion sort of
 * what is left should a run of bad pivots take long.
 */
static uint64_t
select_key(uint8_t *v, int64_t n, int64_t k)
{
	int64_t		lo = 0,
				hi = n - 1;
	int			rounds = 0;

	while (lo < hi)
	{
		uint64_t	x = sk(v, lo),
					y = sk(v, lo + (hi - lo) / 2),
					z = sk(v, hi);
		uint64_t	pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
		int64_t		i = lo,
					j = hi;

		if (++rounds > 64)
		{
			for (int64_t p = lo + 1; p <= hi; p++)
			{
				uint64_t	t = sk(v, p);
				int64_t		q = p;

				while (q > lo && sk(v, q - 1) > t)
				{
					set_sk(v, q, sk(v, q - 1));
					q--;
				}
				set_sk(v, q, t);
			}
			return sk(v, k);
		}
		while (i <= j)
		{
			while (sk(v, i) < pivot)
				i++;
			while (sk(v, j) > pivot)
				j--;
			if (i <= j)
			{
				uint64_t	t = sk(v, i);

				set_sk(v, i, sk(v, j));
				set_sk(v, j, t);
				i++;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return sk(v, k);
	}
	return sk(v, k);
}

/*
 * Keep the limit smallest (key, bytes) of the n slots used (n > limit):
 * the others leave (their slots end up zero), tau falls to the largest
 * kept, and the table is built again.  The table's buckets hold a copy of
 * the keys for the selection meanwhile (they have room for twice the
 * slots' keys' words).
 */
static void
compact(const SvcSampleArea *a, int64_t *kept, int64_t limit)
{
	int64_t		n = *kept;
	uint8_t    *scratch = a->table;
	uint64_t	kl;
	int64_t		less = 0,
				equal = 0,
				top = -1;

	memcpy(scratch, a->keys, 8 * (size_t) n);
	kl = select_key(scratch, n, limit - 1);
	for (int64_t i = 0; i < n; i++)
	{
		uint64_t	k = svc_sample_key_at(a, i);

		less += k < kl;
		equal += k == kl;
	}
	/* the rows above the limit's key leave, the last slot taking each place */
	for (int64_t i = 0; i < n;)
	{
		if (svc_sample_key_at(a, i) > kl)
		{
			if (i != n - 1)
				move_slot(a, n - 1, i);
			clear_slot(a, n - 1);
			n--;
		}
		else
			i++;
	}
	/* of rows of the limit's key (a collision of keys), the largest bytes leave */
	while (equal > limit - less)
	{
		int64_t		worst = -1;

		for (int64_t i = 0; i < n; i++)
			if (svc_sample_key_at(a, i) == kl && (worst < 0 || slot_cmp(a, i, worst) > 0))
				worst = i;
		if (worst != n - 1)
			move_slot(a, n - 1, worst);
		clear_slot(a, n - 1);
		n--;
		equal--;
	}
	for (int64_t i = 0; i < n; i++)
		if (svc_sample_key_at(a, i) == kl && (top < 0 || slot_cmp(a, i, top) > 0))
			top = i;
	set_tau(a, kl, top);
	*kept = n;
	table_rebuild(a, n);
}

static SvcSampleOffer
offer(const SvcSampleArea *a, int64_t *kept, int64_t limit, const Src *row, uint64_t key,
	  uint64_t count)
{
	int64_t		n = *kept;
	int64_t		slot;
	uint64_t	tau = svc_sample_tau(a->base);

	/* above tau (only a tie of keys needs the bytes): dropped */
	if (key > tau || (key == tau && tau_slot(a) >= 0 && bytes_cmp(a, row, tau_slot(a)) > 0))
		return SVC_SAMPLE_DROPPED;
	slot = n > 0 ? find(a, key, row) : -1;
	if (slot >= 0)
	{
		set_count(a, slot, svc_sample_count_at(a, slot) + count);
		return SVC_SAMPLE_COUNTED;
	}
	if (n >= a->capacity)
	{
		if (a->capacity < svc_sample_max_capacity(limit))
			return SVC_SAMPLE_FULL;
		compact(a, &n, limit);
		*kept = n;
		tau = svc_sample_tau(a->base);
		if (key > tau || (key == tau && bytes_cmp(a, row, tau_slot(a)) > 0))
			return SVC_SAMPLE_DROPPED;
	}
	store_row(a, n, row);
	set_key(a, n, key);
	set_count(a, n, count);
	table_insert(a, n);
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
svc_sample_copy(const SvcSampleArea *src, const SvcSampleArea *dst, int64_t kept)
{
	size_t		rowsz = 8 * (size_t) src->width;
	size_t		spare = (size_t) (dst->capacity - kept);

	/*
	 * Every byte of dst written once: what is copied, and zeros after it
	 * (zeroing the whole area first doubled the cost of a state's growth).
	 */
	memcpy(dst->base, src->base, AREA_HEADER);
	memcpy(dst->rows, src->rows, (size_t) kept * rowsz);
	memset(dst->rows + (size_t) kept * rowsz, 0, spare * rowsz);
	memcpy(dst->keys, src->keys, (size_t) kept * 8);
	memset(dst->keys + (size_t) kept * 8, 0, spare * 8);
	memcpy(dst->counts, src->counts, (size_t) kept * 8);
	memset(dst->counts + (size_t) kept * 8, 0, spare * 8);
	memset(dst->table, 0,
		   (size_t) (dst->base + svc_sample_area_size(dst->width, dst->capacity) - dst->table));
	for (int64_t i = 0; i < kept; i++)
		table_insert(dst, i);
}

void
svc_sample_grow(const SvcSampleArea *src, const SvcSampleArea *dst, int64_t kept)
{
	size_t		rowsz = 8 * (size_t) src->width;
	size_t		spare = (size_t) (dst->capacity - kept);

	/* each part to a higher offset: the last first */
	memmove(dst->counts, src->counts, (size_t) kept * 8);
	memmove(dst->keys, src->keys, (size_t) kept * 8);
	memset(dst->rows + (size_t) kept * rowsz, 0, spare * rowsz);
	memset(dst->keys + (size_t) kept * 8, 0, spare * 8);
	memset(dst->counts + (size_t) kept * 8, 0, spare * 8);
	memset(dst->table, 0,
		   (size_t) (dst->base + svc_sample_area_size(dst->width, dst->capacity) - dst->table));
	for (int64_t i = 0; i < kept; i++)
		table_insert(dst, i);
}

const char *
svc_sample_check(const SvcSampleArea *a, int64_t kept, uint64_t seed, uint64_t *total)
{
	uint64_t	tsize = a->capacity > 0 ? a->tmask + 1 : 0;
	uint64_t	sum = 0,
				entries = 0;
	uint64_t	tau = svc_sample_tau(a->base);
	int64_t		ts = tau_slot(a);

	*total = 0;
	if (kept < 0 || kept > a->capacity)
		return "The sample's row count is out of range.";
	/* no bound yet, or one that is a kept row's key */
	if (ts < -1 || ts >= kept || (ts == -1 && tau != NO_TAU) ||
		(ts >= 0 && svc_sample_key_at(a, ts) != tau))
		return "The sample's bound is not one of its rows.";
	for (int64_t i = 0; i < kept; i++)
	{
		const uint8_t *p = svc_sample_row(a, i);
		uint64_t	c = svc_sample_count_at(a, i);
		uint64_t	key = svc_sample_key_at(a, i);

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
		if (svc_sample_key_of(NULL, p, a->width, false, 0.0, seed) != key)
			return "A sampled row's key is not its own.";
		if (key > tau || (key == tau && ts >= 0 && slot_cmp(a, i, ts) > 0))
			return "A sampled row lies above the sample's bound.";
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
		uint64_t	b = home(svc_sample_key_at(a, i), a->tmask);

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
			b = (b + 1) & a->tmask;
		}
	}
	/* unused slots are zero, so that equal samples have equal bytes */
	for (int64_t i = kept; i < a->capacity; i++)
	{
		const uint8_t *p = svc_sample_row(a, i);

		for (size_t j = 0; j < 8 * (size_t) a->width; j++)
			if (p[j] != 0)
				return "An unused slot of the sample is not zero.";
		if (svc_sample_key_at(a, i) != 0 || svc_sample_count_at(a, i) != 0)
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
