/*
 * cvi_state.c - svc_cvi_agg's growing, mergeable state of rows
 */
#include "cvi_state.h"
#include "bytes.h"

#include <math.h>
#include <string.h>

/* Offsets into the header. */
#define OFF_MAGIC		0
#define OFF_VERSION		4
#define OFF_FLAGS		6
#define OFF_DIMS		8
#define OFF_CAPACITY	16
#define OFF_N			24
#define OFF_N_LAB		32
#define OFF_UNASSIGNED	40
#define OFF_X			48

_Static_assert(OFF_X == SVC_CVI_STATE_HEADER_SIZE, "the header size matches its offsets");

#define FLAG_HAS_CLASS	1

/* Where each array starts in a state of these sizes. */
typedef struct Layout
{
	size_t		x;
	size_t		cluster;
	size_t		lab_cluster;
	size_t		lab_class;
	size_t		end;
} Layout;

static Layout
layout_of(int32_t dims, int64_t capacity, bool has_class)
{
	Layout		l;
	size_t		cap = (size_t) capacity;

	l.x = OFF_X;
	l.cluster = l.x + 8 * (size_t) dims * cap;
	l.lab_cluster = l.cluster + 4 * cap;
	l.lab_class = l.lab_cluster + (has_class ? 4 * cap : 0);
	l.end = l.lab_class + (has_class ? 4 * cap : 0);
	return l;
}

static Layout
layout(const uint8_t *buf)
{
	return layout_of(svc_cvi_state_dims(buf), svc_cvi_state_capacity(buf),
					 svc_cvi_state_has_class(buf));
}

size_t
svc_cvi_state_size(int32_t dims, int64_t capacity, bool has_class, size_t max_bytes)
{
	uint64_t	per_row;
	uint64_t	room;

	if (dims < 0 || dims > SVC_MAX_DIMS || capacity < 0 || (dims == 0 && capacity > 0))
		return 0;
	if (max_bytes < SVC_CVI_STATE_HEADER_SIZE)
		return 0;
	per_row = 8 * (uint64_t) dims + (has_class ? 12 : 4);
	room = (uint64_t) (max_bytes - SVC_CVI_STATE_HEADER_SIZE);
	if ((uint64_t) capacity > room / per_row)
		return 0;
	return SVC_CVI_STATE_HEADER_SIZE + (size_t) (per_row * (uint64_t) capacity);
}

void
svc_cvi_state_init(uint8_t *buf, bool has_class)
{
	memset(buf, 0, SVC_CVI_STATE_HEADER_SIZE);
	memcpy(buf + OFF_MAGIC, SVC_CVI_STATE_MAGIC, 4);
	buf[OFF_VERSION] = SVC_CVI_STATE_VERSION;
	buf[OFF_FLAGS] = has_class ? FLAG_HAS_CLASS : 0;
}

bool
svc_cvi_state_has_class(const uint8_t *buf)
{
	return (buf[OFF_FLAGS] & FLAG_HAS_CLASS) != 0;
}

int32_t
svc_cvi_state_dims(const uint8_t *buf)
{
	return (int32_t) svc_load_u32(buf + OFF_DIMS);
}

int64_t
svc_cvi_state_capacity(const uint8_t *buf)
{
	return (int64_t) svc_load_u64(buf + OFF_CAPACITY);
}

int64_t
svc_cvi_state_rows(const uint8_t *buf)
{
	return (int64_t) svc_load_u64(buf + OFF_N);
}

static SvcStatus
bad_state(SvcError *err, const char *detail)
{
	return svc_corrupt(err, "svc_cvi_state value", detail);
}

SvcStatus
svc_cvi_state_check(const uint8_t *buf, size_t len, SvcError *err)
{
	int32_t		dims;
	int64_t		capacity,
				n,
				n_lab,
				n_unassigned;
	bool		has_class;
	Layout		l;

	if (svc_check_signature(buf, len, SVC_CVI_STATE_HEADER_SIZE, SVC_CVI_STATE_MAGIC,
							SVC_CVI_STATE_VERSION, "svc_cvi_state value", err) != SVC_OK)
		return SVC_ERR_CORRUPT;
	if ((buf[OFF_FLAGS] & ~FLAG_HAS_CLASS) != 0 || buf[OFF_FLAGS + 1] != 0 ||
		svc_load_u32(buf + OFF_DIMS + 4) != 0)
		return bad_state(err, "Reserved header bytes are not zero.");
	has_class = svc_cvi_state_has_class(buf);
	dims = svc_cvi_state_dims(buf);
	capacity = svc_cvi_state_capacity(buf);
	n = svc_cvi_state_rows(buf);
	n_lab = (int64_t) svc_load_u64(buf + OFF_N_LAB);
	n_unassigned = (int64_t) svc_load_u64(buf + OFF_UNASSIGNED);
	if (dims < 0 || dims > SVC_MAX_DIMS)
		return bad_state(err, "The dimension is out of range.");
	if (capacity < 0 || n < 0 || n > capacity || n_lab < 0 || n_lab > n ||
		(!has_class && n_lab > 0) || n_unassigned < 0 ||
		n_unassigned > SVC_MAX_SEEN || (dims == 0 && (capacity > 0 || n_unassigned > 0)))
		return bad_state(err, "The row counts are inconsistent.");
	if (svc_cvi_state_size(dims, capacity, has_class, len) != len)
		return bad_state(err, "The length does not match the header.");
	l = layout(buf);
	for (size_t i = 0; i < (size_t) n * (size_t) dims; i++)
		if (!isfinite(svc_load_f64(buf + l.x + 8 * i)))
			return bad_state(err, "A row holds a value that is not finite.");
	return SVC_OK;
}

bool
svc_cvi_state_add(uint8_t *buf, const double *x, int32_t dims,
				  bool has_cluster, int32_t cluster, bool has_class, int32_t klass)
{
	int64_t		n = svc_cvi_state_rows(buf);
	int64_t		n_lab;
	Layout		l;

	if (!has_cluster)
	{
		/* the dims a capacity-0 state takes cost no bytes */
		if (svc_cvi_state_dims(buf) == 0)
			svc_store_u32(buf + OFF_DIMS, (uint32_t) dims);
		/* 2^62 rows are out of reach; the bound keeps a state checkable */
		if (svc_load_u64(buf + OFF_UNASSIGNED) < (uint64_t) SVC_MAX_SEEN)
			svc_store_u64(buf + OFF_UNASSIGNED, svc_load_u64(buf + OFF_UNASSIGNED) + 1);
		return true;
	}
	if (n >= svc_cvi_state_capacity(buf))
		return false;
	l = layout(buf);
	for (int32_t j = 0; j < dims; j++)
		svc_store_f64(buf + l.x + 8 * ((size_t) n * (size_t) dims + (size_t) j), x[j]);
	svc_store_u32(buf + l.cluster + 4 * (size_t) n, (uint32_t) cluster);
	svc_store_u64(buf + OFF_N, (uint64_t) (n + 1));
	if (has_class && svc_cvi_state_has_class(buf))
	{
		n_lab = (int64_t) svc_load_u64(buf + OFF_N_LAB);
		svc_store_u32(buf + l.lab_cluster + 4 * (size_t) n_lab, (uint32_t) cluster);
		svc_store_u32(buf + l.lab_class + 4 * (size_t) n_lab, (uint32_t) klass);
		svc_store_u64(buf + OFF_N_LAB, (uint64_t) (n_lab + 1));
	}
	return true;
}

int64_t
svc_cvi_state_next_capacity(int64_t capacity, int64_t need)
{
	int64_t		next = capacity > 0 ? capacity : SVC_CVI_STATE_FIRST_CAPACITY;

	while (next < need && next <= INT64_MAX / 2)
		next *= 2;
	return next < need ? need : next;
}

void
svc_cvi_state_copy(const uint8_t *src, uint8_t *dst, int32_t dims, int64_t capacity)
{
	Layout		from = layout(src);
	Layout		to = layout_of(dims, capacity, svc_cvi_state_has_class(src));
	size_t		n = (size_t) svc_cvi_state_rows(src);
	size_t		n_lab = (size_t) svc_load_u64(src + OFF_N_LAB);

	memcpy(dst, src, SVC_CVI_STATE_HEADER_SIZE);
	svc_store_u32(dst + OFF_DIMS, (uint32_t) dims);
	svc_store_u64(dst + OFF_CAPACITY, (uint64_t) capacity);
	/* the bytes past the kept rows are part of the value: zero them */
	memset(dst + SVC_CVI_STATE_HEADER_SIZE, 0, to.end - SVC_CVI_STATE_HEADER_SIZE);
	if (n > 0)
	{
		memcpy(dst + to.x, src + from.x, 8 * n * (size_t) dims);
		memcpy(dst + to.cluster, src + from.cluster, 4 * n);
	}
	if (n_lab > 0)
	{
		memcpy(dst + to.lab_cluster, src + from.lab_cluster, 4 * n_lab);
		memcpy(dst + to.lab_class, src + from.lab_class, 4 * n_lab);
	}
}

SvcStatus
svc_cvi_state_merge(uint8_t *a, const uint8_t *b, SvcError *err)
{
	Layout		la = layout(a);
	Layout		lb = layout(b);
	size_t		na = (size_t) svc_cvi_state_rows(a);
	size_t		nb = (size_t) svc_cvi_state_rows(b);
	size_t		lab_a = (size_t) svc_load_u64(a + OFF_N_LAB);
	size_t		lab_b = (size_t) svc_load_u64(b + OFF_N_LAB);
	int32_t		dims_a = svc_cvi_state_dims(a);
	int32_t		dims_b = svc_cvi_state_dims(b);
	int32_t		dims = dims_a > 0 ? dims_a : dims_b;

	if (svc_cvi_state_has_class(a) != svc_cvi_state_has_class(b))
		return svc_fail(err, SVC_ERR_INVALID_INPUT,
						"cannot merge svc_cvi_state values with and without classes");
	if (dims_a > 0 && dims_b > 0 && dims_a != dims_b)
		return svc_fail(err, SVC_ERR_INTERNAL, "svc_cvi_state dimensions differ");
	if (svc_load_u64(a + OFF_UNASSIGNED) + svc_load_u64(b + OFF_UNASSIGNED) > (uint64_t) SVC_MAX_SEEN)
		return svc_fail(err, SVC_ERR_LIMIT, "too many rows for the clustering validity indices");
	if (nb > 0 && (size_t) svc_cvi_state_capacity(a) - na < nb)
		return svc_fail(err, SVC_ERR_INTERNAL, "svc_cvi_state has no room to merge");
	if (nb > 0)
	{
		memcpy(a + la.x + 8 * na * (size_t) dims, b + lb.x, 8 * nb * (size_t) dims);
		memcpy(a + la.cluster + 4 * na, b + lb.cluster, 4 * nb);
	}
	if (lab_b > 0)
	{
		memcpy(a + la.lab_cluster + 4 * lab_a, b + lb.lab_cluster, 4 * lab_b);
		memcpy(a + la.lab_class + 4 * lab_a, b + lb.lab_class, 4 * lab_b);
	}
	if (dims_a == 0)
		svc_store_u32(a + OFF_DIMS, (uint32_t) dims_b);
	svc_store_u64(a + OFF_N, (uint64_t) (na + nb));
	svc_store_u64(a + OFF_N_LAB, (uint64_t) (lab_a + lab_b));
	svc_store_u64(a + OFF_UNASSIGNED,
				  svc_load_u64(a + OFF_UNASSIGNED) + svc_load_u64(b + OFF_UNASSIGNED));
	return SVC_OK;
}

/* Row i before row j: by cluster, then feature by feature (finite values). */
static int
row_cmp(const uint8_t *buf, const Layout *l, int32_t dims, int64_t i, int64_t j)
{
	int32_t		ci = (int32_t) svc_load_u32(buf + l->cluster + 4 * (size_t) i);
	int32_t		cj = (int32_t) svc_load_u32(buf + l->cluster + 4 * (size_t) j);
	const uint8_t *xi = buf + l->x + 8 * (size_t) i * (size_t) dims;
	const uint8_t *xj = buf + l->x + 8 * (size_t) j * (size_t) dims;

	if (ci != cj)
		return ci < cj ? -1 : 1;
	for (int32_t k = 0; k < dims; k++)
	{
		double		a = svc_load_f64(xi + 8 * (size_t) k);
		double		b = svc_load_f64(xj + 8 * (size_t) k);

		if (a != b)
			return a < b ? -1 : 1;
	}
	return 0;
}

/*
 * Stable bottom-up merge sort of the row numbers idx[0..n) by row_cmp;
 * tmp has room for n.  Rows that compare equal are interchangeable for
 * every index, so stability only keeps the result tidy.
 */
static void
sort_rows(const uint8_t *buf, const Layout *l, int32_t dims, int64_t *idx,
		  int64_t *tmp, int64_t n)
{
	int64_t    *from = idx;
	int64_t    *to = tmp;

	for (int64_t width = 1; width < n; width *= 2)
	{
		for (int64_t lo = 0; lo < n; lo += 2 * width)
		{
			int64_t		mid = lo + width < n ? lo + width : n;
			int64_t		hi = lo + 2 * width < n ? lo + 2 * width : n;
			int64_t		a = lo,
						b = mid,
						k = lo;

			while (a < mid && b < hi)
				to[k++] = row_cmp(buf, l, dims, from[b], from[a]) < 0 ? from[b++] : from[a++];
			while (a < mid)
				to[k++] = from[a++];
			while (b < hi)
				to[k++] = from[b++];
		}
		{
			int64_t    *swap = from;

			from = to;
			to = swap;
		}
	}
	if (from != idx)
		memcpy(idx, from, sizeof(int64_t) * (size_t) n);
}

SvcStatus
svc_cvi_state_input(const SvcEnv *env, const uint8_t *buf, SvcCviInput *in,
					SvcError *err)
{
	Layout		l = layout(buf);
	int32_t		dims = svc_cvi_state_dims(buf);
	int64_t		n = svc_cvi_state_rows(buf);
	int64_t		n_lab = (int64_t) svc_load_u64(buf + OFF_N_LAB);
	double	   *x = NULL;
	int32_t    *cluster = NULL;
	int32_t    *lab_cluster = NULL;
	int32_t    *lab_class = NULL;
	int64_t    *idx = NULL;
	int64_t    *tmp = NULL;

	memset(in, 0, sizeof(*in));
	in->has_class = svc_cvi_state_has_class(buf);
	in->n_unassigned = (int64_t) svc_load_u64(buf + OFF_UNASSIGNED);
	in->dims = dims;
	if (n > 0)
	{
		x = svc_alloc(env, sizeof(double) * (size_t) n * (size_t) dims, err);
		cluster = x ? svc_alloc(env, sizeof(int32_t) * (size_t) n, err) : NULL;
		idx = cluster ? svc_alloc(env, sizeof(int64_t) * (size_t) n, err) : NULL;
		tmp = idx ? svc_alloc(env, sizeof(int64_t) * (size_t) n, err) : NULL;
		if (!tmp)
			goto nomem;
		for (int64_t i = 0; i < n; i++)
			idx[i] = i;
		sort_rows(buf, &l, dims, idx, tmp, n);
		svc_free(env, tmp);
		tmp = NULL;
		for (int64_t i = 0; i < n; i++)
		{
			const uint8_t *src = buf + l.x + 8 * (size_t) idx[i] * (size_t) dims;

			for (int32_t k = 0; k < dims; k++)
				x[(size_t) i * (size_t) dims + (size_t) k] = svc_load_f64(src + 8 * (size_t) k);
			cluster[i] = (int32_t) svc_load_u32(buf + l.cluster + 4 * (size_t) idx[i]);
		}
		svc_free(env, idx);
		idx = NULL;
	}
	if (n_lab > 0)
	{
		/* the contingency table does not depend on the pairs' order */
		lab_cluster = svc_alloc(env, sizeof(int32_t) * (size_t) n_lab, err);
		lab_class = lab_cluster ? svc_alloc(env, sizeof(int32_t) * (size_t) n_lab, err) : NULL;
		if (!lab_class)
			goto nomem;
		for (int64_t i = 0; i < n_lab; i++)
		{
			lab_cluster[i] = (int32_t) svc_load_u32(buf + l.lab_cluster + 4 * (size_t) i);
			lab_class[i] = (int32_t) svc_load_u32(buf + l.lab_class + 4 * (size_t) i);
		}
	}
	in->n = n;
	in->x = x;
	in->cluster = cluster;
	in->n_labelled = n_lab;
	in->lab_cluster = lab_cluster;
	in->lab_class = lab_class;
	return SVC_OK;

nomem:
	svc_free(env, x);
	svc_free(env, cluster);
	svc_free(env, idx);
	svc_free(env, tmp);
	svc_free(env, lab_cluster);
	svc_free(env, lab_class);
	return SVC_ERR_NOMEM;
}

void
svc_cvi_state_input_free(const SvcEnv *env, SvcCviInput *in)
{
	svc_free(env, (void *) in->x);
	svc_free(env, (void *) in->cluster);
	svc_free(env, (void *) in->lab_cluster);
	svc_free(env, (void *) in->lab_class);
	in->x = NULL;
	in->cluster = NULL;
	in->lab_cluster = NULL;
	in->lab_class = NULL;
}
