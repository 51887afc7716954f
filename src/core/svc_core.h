/*
 * svc_core.h - common definitions of the svclust core
 *
 * The core is plain C11 with no PostgreSQL header.  It never prints, never
 * exits and never aborts: every fallible function returns an SvcStatus and
 * writes a message into an SvcError the caller owns.  Memory comes from an
 * allocator the caller supplies (the glue passes one built on palloc), and
 * long loops call an interrupt hook so that a query can be cancelled.
 */
#ifndef SVC_CORE_H
#define SVC_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* Status codes; the glue maps each one to a SQLSTATE. */
typedef enum SvcStatus
{
	SVC_OK = 0,
	SVC_ERR_INVALID_PARAMETER,	/* an option key or value is wrong */
	SVC_ERR_INVALID_INPUT,		/* a feature row is wrong (NaN, size) */
	SVC_ERR_DIMENSION,			/* dimension differs from the model's */
	SVC_ERR_CORRUPT,			/* a model or state failed validation */
	SVC_ERR_LIMIT,				/* a size limit would be exceeded */
	SVC_ERR_NOMEM,				/* the allocator returned NULL */
	SVC_ERR_INTERRUPTED,		/* the interrupt hook asked us to stop */
	SVC_ERR_INTERNAL			/* a bug: an invariant does not hold */
} SvcStatus;

#define SVC_ERRMSG_LEN 512

/* An error as the core reports it: a message and an optional detail/hint. */
typedef struct SvcError
{
	SvcStatus	status;
	char		message[SVC_ERRMSG_LEN];
	char		detail[SVC_ERRMSG_LEN];
	char		hint[SVC_ERRMSG_LEN];
} SvcError;

/*
 * The long loops a progress hook hears about (SvcEnv.progress): SGD steps
 * and SMO iterations, with their bound (max_iter, or smo's automatic one),
 * and the start of labelling, with the number of rows it runs.
 */
typedef enum SvcProgressStep
{
	SVC_PROGRESS_SGD = 1,
	SVC_PROGRESS_SMO = 2,
	SVC_PROGRESS_LABEL = 3
} SvcProgressStep;

/*
 * Allocator and interrupt hook.  alloc may return NULL (the core then fails
 * with SVC_ERR_NOMEM) or not return at all (palloc's ereport): the core
 * never holds a resource that only its own free would release, so both are
 * safe.  interrupt returns true when the caller wants the core to stop;
 * the glue's hook calls CHECK_FOR_INTERRUPTS(), which longjmps instead.
 */
typedef struct SvcEnv
{
	void	   *(*alloc) (void *ctx, size_t size);
	void		(*release) (void *ctx, void *ptr);
	bool		(*interrupt) (void *ctx);
	void	   *ctx;
	/* may be NULL (then alloc, copy, release); NULL on failure, ptr intact */
	void	   *(*realloc) (void *ctx, void *ptr, size_t old_size, size_t new_size);

	/*
	 * Bytes the exact solver may hold (its O(n) vectors and kernel cache)
	 * when the options give no cache_mb; 0: SVC_SOLVER_MEMORY_DEFAULT.  The
	 * extension sets it from maintenance_work_mem at each fit.
	 */
	size_t		solver_memory;

	/*
	 * Progress reports: called when a loop's count reaches a multiple of
	 * progress_every (svc_progress), and once as labelling starts.  NULL
	 * when nobody listens, so a loop then pays one pointer test.
	 */
	void		(*progress) (void *ctx, SvcProgressStep step, int64_t done,
							 int64_t bound);
	int64_t		progress_every;
} SvcEnv;

/* Report done units of step to the progress hook, if any, at its cadence. */
static inline void
svc_progress(const SvcEnv *env, SvcProgressStep step, int64_t done, int64_t bound)
{
	if (env->progress != NULL && env->progress_every > 0 &&
		done % env->progress_every == 0)
		env->progress(env->ctx, step, done, bound);
}

#define SVC_SOLVER_MEMORY_DEFAULT ((size_t) 100 << 20)

/* The environment of plain C programs: malloc/free, never interrupted. */
extern const SvcEnv svc_env_malloc;

void	   *svc_alloc(const SvcEnv *env, size_t size, SvcError *err);
void	   *svc_alloc0(const SvcEnv *env, size_t size, SvcError *err);
void		svc_free(const SvcEnv *env, void *ptr);
bool		svc_interrupted(const SvcEnv *env, SvcError *err);

/*
 * Grow *ptr, an array of *cap elements of elem bytes (NULL when *cap is
 * 0), to hold at least need: to twice its capacity, at least need and at
 * least SVC_GROW_MIN.  Contents are kept; *ptr and *cap change only on
 * success.  On failure *ptr is still valid and still owned by the caller
 * (SVC_ERR_NOMEM, or SVC_ERR_LIMIT when the size overflows).
 */
#define SVC_GROW_MIN 16
SvcStatus	svc_grow(const SvcEnv *env, void **ptr, int64_t *cap, int64_t need,
					 size_t elem, SvcError *err);

/* Multiply two sizes, failing instead of wrapping around. */
bool		svc_size_mul(size_t a, size_t b, size_t *result);

/* Record an error; returns status so callers can "return svc_fail(...)". */
SvcStatus	svc_fail(SvcError *err, SvcStatus status, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
void		svc_error_detail(SvcError *err, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));
void		svc_error_hint(SvcError *err, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));
void		svc_error_clear(SvcError *err);

/* Hard limits, checked at the door. */
#define SVC_MAX_DIMS		16000	/* as many as an array we accept sensibly */
#define SVC_MAX_BUDGET		100000
#define SVC_DEFAULT_BUDGET	300
#define SVC_MAX_SAMPLE		10000000
#define SVC_MAX_ITER		100000000
#define SVC_MAX_K			64
/*
 * Largest magnitude of a row as the kernel sees it (after scaling): the
 * squared distances between larger values overflow double precision.
 * Standard and minmax scaling bring any finite data within it; with scale
 * "none" training refuses values beyond it.
 */
#define SVC_MAX_FEATURE_ABS	1e100
/* Most rows a state can count as seen: merging two can never overflow. */
#define SVC_MAX_SEEN		(INT64_C(1) << 62)

/* Cheap per-row loops call the interrupt hook once per this many rows. */
#define SVC_INTERRUPT_EVERY	1024

/* Check that every value is finite; returns index of the first bad or -1. */
int			svc_first_nonfinite(const double *x, size_t n);

/*
 * The k-th smallest (from 0) of v[0..n), n > k, NaN-free: what v[k] would
 * be after sorting, in linear time but for inputs built against its pivot
 * (then a sort of what is left: n log n).  Reorders v so that it is in
 * v[k], with none larger before it and none smaller after.
 */
double		svc_select_double(double *v, int64_t n, int64_t k);

/*
 * svc_select_double with at most `rounds` partitions before it sorts what
 * is left (svc_select_double allows 2 log2 n + 16): tests reach the sort
 * through it without an input built against the pivot.
 */
double		svc_select_double_rounds(double *v, int64_t n, int64_t k, int rounds);

/*
 * The k-th smallest (from 0, k < n) and the largest of n values v_i of
 * which only intervals [lo_i, hi_i] are known (NaN-free; infinite ends
 * allowed), asking value(ctx, i) for v_i only where the intervals leave
 * the answer open.  work holds n doubles; *n_asked counts the calls.
 * SVC_ERR_INTERNAL when an asked value lies outside its interval.
 */
SvcStatus	svc_select_bounded(const SvcEnv *env, const double *lo, const double *hi,
							   int64_t n, int64_t k,
							   double (*value) (void *ctx, int64_t i), void *ctx,
							   double *work, double *kth, double *largest,
							   int64_t *n_asked, SvcError *err);

/*
 * The power of two by which values whose largest magnitude is maxabs are
 * divided before their squares are summed: 0 for maxabs in [2^-400,
 * 2^400] (or 0), else the exponent bringing maxabs into [0.5, 1).
 */
#define SVC_SCALE_PLAIN_MIN	0x1p-400
#define SVC_SCALE_PLAIN_MAX	0x1p400
int			svc_scale_exponent(double maxabs);

/* svc_scale_exponent(maxabs) == 0, inline for the loops over every row. */
static inline bool
svc_scale_plain(double maxabs)
{
	return !(maxabs > SVC_SCALE_PLAIN_MAX || (maxabs > 0 && maxabs < SVC_SCALE_PLAIN_MIN));
}

/*
 * Write v as the shortest of %.15g, %.16g and %.17g that reads back (strtod)
 * to v exactly: 0.4 as "0.4", not "0.40000000000000002".  buf holds
 * SVC_DOUBLE_TEXT_LEN bytes; returns buf.
 */
#define SVC_DOUBLE_TEXT_LEN 32
char	   *svc_double_text(char *buf, double v);

/* qsort comparators: ascending doubles (NaN-free arrays) and int64s. */
int			svc_cmp_double(const void *pa, const void *pb);
int			svc_cmp_int64(const void *pa, const void *pb);

/*
 * PRNG: xoshiro256** seeded through splitmix64.  Its output depends only on
 * the seed, so a seed reproduces a model on every platform.
 */
typedef struct SvcRng
{
	uint64_t	s[4];
} SvcRng;

void		svc_rng_seed(SvcRng *rng, uint64_t seed);
uint64_t	svc_rng_next(SvcRng *rng);
/* Uniform integer in [0, n), n > 0, without modulo bias. */
uint64_t	svc_rng_below(SvcRng *rng, uint64_t n);
/* Uniform double in [0, 1). */
double		svc_rng_unit(SvcRng *rng);
/*
 * Move a uniform sample without replacement of m of the n values of idx
 * into idx[0..m-1] (partial Fisher-Yates); m >= n shuffles all of idx.
 */
void		svc_rng_sample(SvcRng *rng, int64_t *idx, int64_t n, int64_t m);

#endif							/* SVC_CORE_H */
