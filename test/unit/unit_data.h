/*
 * unit_data.h - generated data and helpers shared by the core's unit tests
 */
#ifndef SVC_UNIT_DATA_H
#define SVC_UNIT_DATA_H

#include "svc_core.h"
#include "fit.h"
#include "model.h"
#include "model_codec.h"
#include "options.h"
#include "options_text.h"
#include "unit.h"
#include "unit_state.h"

#include <stdio.h>
#include <string.h>

#include <math.h>
#include <stdlib.h>

/* A standard normal draw (Box-Muller, one of the pair). */
static inline double
unit_normal(SvcRng *rng)
{
	double		u1 = svc_rng_unit(rng) + 1e-12,
				u2 = svc_rng_unit(rng);

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* A ring of radius 4 around a blob (every other row), with some noise. */
static inline double *
unit_ring_blob(int64_t n, uint64_t seed)
{
	SvcRng		rng;
	double	   *x = malloc(sizeof(double) * 2 * (size_t) n);

	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < n; i++)
	{
		double		t = 2 * M_PI * svc_rng_unit(&rng);
		double		r = i % 2 == 0 ? 4 + 0.3 * (svc_rng_unit(&rng) - 0.5)
			: 0.6 * svc_rng_unit(&rng);

		x[2 * i] = r * cos(t);
		x[2 * i + 1] = r * sin(t);
	}
	return x;
}

/* n rows of three Gaussian blobs in 2-D (sd 0.5), reproducible from seed. */
static inline double *
blobs(int64_t n, uint64_t seed)
{
	SvcRng		rng;
	double	   *x = malloc(sizeof(double) * 2 * (size_t) n);
	static const double centre[3][2] = {{0, 0}, {6, 0}, {3, 5}};

	svc_rng_seed(&rng, seed);
	for (int64_t i = 0; i < n; i++)
	{
		int			c = (int) (i % 3);
		double		u1 = svc_rng_unit(&rng) + 1e-12,
					u2 = svc_rng_unit(&rng);
		double		r = sqrt(-2 * log(u1)) * 0.5;

		x[2 * i] = centre[c][0] + r * cos(2 * M_PI * u2);
		x[2 * i + 1] = centre[c][1] + r * sin(2 * M_PI * u2);
	}
	return x;
}

/* A model's bytes, malloc'd; *len their count. */
static inline uint8_t *
encode(const SvcModel *m, size_t *len)
{
	uint8_t    *buf;

	*len = svc_model_encoded_size(m);
	buf = malloc(*len);
	svc_model_encode(m, buf);
	return buf;
}

/* Options from JSON text over the defaults. */
static inline SvcStatus
parse(const char *json, SvcOptions *opt, SvcError *err)
{
	svc_options_default(opt);
	return svc_options_parse(json, strlen(json), opt, err);
}

/* A model of n rows of x (2 features) under the options in json; exits on error. */
static inline SvcModel
train(const char *json, const double *x, int64_t n)
{
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;

	if (parse(json, &opt, &err) != SVC_OK ||
		svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &m, &err) != SVC_OK)
	{
		fprintf(stderr, "train %s: %s\n", json, err.message);
		exit(1);
	}
	return m;
}

/*
 * Add a row with this label (0: none) to a state, grown when full
 * (unit_state_add); a check each time it grows, that the grown state
 * takes the row.  Returns the state.
 */
static inline uint8_t *
unit_state_add_checked(uint8_t *s, const double *row, int label)
{
	int			added = unit_state_add(&s, row, label);

	if (added != 0)
		CHECK(added > 0, "the grown state takes the row");
	return s;
}

/*
 * svc_fit_rows of n rows x (d features) under opt, failed at each of its
 * allocations in turn (kinds[0] counts them) and interrupted at each of its
 * checks (kinds[1]): every failure must return NOMEM or INTERRUPTED and
 * leave no block behind.  Stops at the first success of each kind.
 */
static inline void
unit_fit_fails_cleanly(const double *x, int64_t n, int32_t d, const SvcOptions *opt,
					   int kinds[2])
{
	SvcError	err;

	kinds[0] = kinds[1] = 0;
	for (int kind = 0; kind < 2; kind++)
	{
		for (long left = 0;; left++)
		{
			UnitBudget	b = {left, 0};
			SvcEnv		fail_alloc = {.alloc = unit_fail_after_alloc, .release = unit_counted_free,
			.realloc = unit_fail_after_realloc, .ctx = &b};
			SvcEnv		stop = {.alloc = unit_counted_alloc, .release = unit_counted_free,
			.interrupt = unit_stop_after, .realloc = unit_counted_realloc, .ctx = &b};
			SvcModel	m;
			SvcStatus	st = svc_fit_rows(kind ? &stop : &fail_alloc, x, n, d, opt, &m, &err);

			svc_model_free(kind ? &stop : &fail_alloc, &m);
			if (b.live != 0)
			{
				CHECK(false, "kind %d at %ld: %ld blocks left", kind, left, b.live);
				break;
			}
			if (st == SVC_OK)
				break;
			if (st != (kind ? SVC_ERR_INTERRUPTED : SVC_ERR_NOMEM))
			{
				CHECK(false, "kind %d at %ld: status %d (%s)", kind, left, st, err.message);
				break;
			}
			kinds[kind]++;
		}
	}
}

#endif							/* SVC_UNIT_DATA_H */
