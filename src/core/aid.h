/*
 * aid.h - the exact SVDD dual of smo.h by aggregation and iterative
 *         disaggregation (AID; the derivation is in doc/aid.md)
 *
 * The rows are grouped into clusters; the dual restricted to alpha constant
 * within each cluster (alpha_i = a_G / |G|) is the same dual over the
 * clusters' mean feature vectors, with kernel Kbar_GH = the mean of K over
 * G x H and bounds 0 <= a_G <= |G| C, which smo.c solves through its kernel
 * callback.  Every row is then checked against the sphere of that solution:
 * a cluster at a_G = 0 passes when all its rows are inside (f >= 0), one at
 * its bound when all are outside (f <= 0), a free one only as a single row.
 * The clusters that fail are split by the sign of f, and the next solve
 * starts from the last solution.  It stops when the relative gap between
 * the bounds on the optimum is at most gap, or when every cluster passes
 * (then alpha is optimal for the rows, to smo's tolerance).
 *
 * In the units of smo.h's F (which the model reports as its objective):
 * upper = F of the aggregated solution, which never increases; lower = the
 * best of -P(c, R) over the rounds, P the sphere's primal at the centre of
 * each round's solution and its best radius, which never decreases; gap =
 * (upper - lower) / -lower, the primal relative gap.
 *
 * Memory: svc_aid_memory(n, d, p) bytes of O(n) vectors besides the
 * aggregated solver's kernel cache (p->cache_bytes, of columns of m
 * doubles).  x is read, not copied.
 */
#ifndef SVC_AID_H
#define SVC_AID_H

#include "svc_core.h"

/* How the rows are grouped at the start. */
typedef enum SvcAidInit
{
	SVC_AID_INIT_KMEANS = 1,	/* Lloyd's k-means on the scaled rows */
	SVC_AID_INIT_GRID = 2		/* cells of a regular grid */
} SvcAidInit;

/* What one round did, as the observer and the report see it. */
typedef struct SvcAidRound
{
	int32_t		round;			/* 0, 1, ... */
	int64_t		aggregates;		/* clusters solved over this round */
	double		upper;			/* F of this round's solution */
	double		lower;			/* best lower bound on F so far */
	double		lower_round;	/* this round's lower bound */
	double		gap;			/* (upper - lower) / -lower, 0 when equal */
	int64_t		smo_iterations; /* of this round's solve */
	int64_t		failed;			/* clusters that failed the check; -1: not
								 * checked (stopped by the gap or the cap) */
} SvcAidRound;

typedef struct SvcAidParams
{
	double		gamma;			/* RBF width, finite and > 0 */
	double		c;				/* per-row bound C (>= 1: no bound) */
	double		eps;			/* smo.h's eps for every aggregated solve */
	double		gap;			/* stop at this relative gap (>= 0) */
	int64_t		max_iter;		/* per solve; 0: smo.h's automatic cap */
	size_t		cache_bytes;	/* the aggregated solver's cache */
	SvcAidInit	init;
	int64_t		init_clusters;	/* clusters at the start; 0: automatic */
	uint64_t	seed;			/* k-means' first centres */
	int32_t		max_rounds;		/* 0: until done (at most n rounds) */
	/*
	 * When the gap stops the rounds: smo on the support vectors alone,
	 * from the rounds' solution with each straddling cluster's weight
	 * gathered on its rows farthest outside (aid.c), so that those
	 * clusters leave no spread of small multipliers; from the rounds'
	 * spread itself where those rows barely overlap at the kernel's width
	 * (nearly every row stays a support vector there).  Then the rows left
	 * outside that sphere by the tolerance join and smo runs again, until
	 * none is: the result stops where smo's would, on every row.
	 */
	bool		polish;
	/* called after every round's bounds, or NULL */
	void		(*observe) (void *ctx, const SvcAidRound *r);
	void	   *observe_ctx;
} SvcAidParams;

typedef struct SvcAidResult
{
	double	   *alpha;			/* n multipliers, allocated from env */
	double		offset;			/* f(x) = sum alpha_i K(x_i, x) - offset */
	double		r2;				/* squared radius */
	double		objective;		/* F(alpha): the last upper bound */
	double		lower;			/* the best lower bound on F */
	double		gap;			/* the final relative gap */
	double		smo_gap;		/* the last solve's KKT gap (smo.h) */
	int32_t		rounds;
	int64_t    *aggregates;		/* [rounds] clusters per round (env) */
	int64_t		final_clusters; /* clusters after the last split, if any */
	double		share_aggregated;	/* rows in clusters of 2+ rows, at the end */
	int64_t		smo_iterations; /* over all solves */
	int64_t		sums_computed;	/* clusters' kernel sums computed (each
								 * |G| n kernel values), evictions included */
	int64_t		cache_hits;
	int64_t		cache_misses;
	int64_t		n_free;			/* rows with 0 < alpha_i < C */
	int64_t		n_bound;		/* rows at C */
	bool		converged;		/* gap reached or every cluster passed */
	bool		all_passed;		/* every cluster passed the row check */
} SvcAidResult;

/* Defaults: eps 1e-3, gap 1e-4, the grid, automatic clusters (n/64), 100
 * MB cache, c 1, the polish; gamma must still be set. */
void		svc_aid_params_default(SvcAidParams *p);

/*
 * Solve smo.h's dual for the n rows of d values in x (row-major) with the
 * RBF of width gamma and bound C for every row.  Errors as smo.h's, and
 * SVC_ERR_INTERRUPTED from the env's hook in every long loop.  On failure
 * nothing is left allocated.
 */
SvcStatus	svc_aid_solve(const SvcEnv *env, const double *x, int64_t n,
						  int32_t d, const SvcAidParams *p,
						  SvcAidResult *out, SvcError *err);

void		svc_aid_result_free(const SvcEnv *env, SvcAidResult *r);

/* Bytes besides the cache budget, SIZE_MAX when that overflows size_t. */
size_t		svc_aid_memory(int64_t n, int32_t d, const SvcAidParams *p);

#endif							/* SVC_AID_H */
