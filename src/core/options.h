/*
 * options.h - training options: defaults, parsing from JSON, validation
 */
#ifndef SVC_OPTIONS_H
#define SVC_OPTIONS_H

#include "svc_core.h"

typedef enum SvcStrategy
{
	SVC_STRATEGY_REMOVAL = 1,
	SVC_STRATEGY_PROJECT_KNN = 2,
	SVC_STRATEGY_PROJECT_RANDOM = 3,
	SVC_STRATEGY_UNBUDGETED = 4
} SvcStrategy;

typedef enum SvcScale
{
	SVC_SCALE_NONE = 0,
	SVC_SCALE_STANDARD = 1,
	SVC_SCALE_MINMAX = 2
} SvcScale;

/* How training turns equilibria into clusters. */
typedef enum SvcLabeling
{
	SVC_LABELING_TREE = 1,		/* saddle tree, merge by ratio (default) */
	SVC_LABELING_PAPER = 2		/* Algorithm 3: B_eps starts, f >= 0 test */
} SvcLabeling;

typedef struct SvcOptions
{
	int32_t		budget;			/* B: most support vectors kept */
	SvcStrategy strategy;
	int32_t		k;				/* neighbours for projection */
	double		gamma;			/* RBF width; 0 means "auto" */
	double		c;				/* trade-off C */
	double		epsilon;		/* B_eps half width; 0 means "auto" */
	double		tol;			/* stop when ||w_{t+1} - w_t|| <= tol */
	int64_t		max_iter;		/* at most this many SGD steps */
	uint64_t	seed;
	SvcScale	scale;
	int64_t		sample;			/* most rows the aggregate keeps */
	SvcLabeling labeling;
	double		merge_ratio;	/* tree cut: saddle/peak ratio that merges */
	double		min_cluster_share;	/* tree cut: smaller clusters merge */
	double		nu;				/* share of training rows left outside the
								 * domain; 0 keeps the paper's threshold 1 */
} SvcOptions;

/* Multiplier of the "auto" gamma: gamma = GAMMA_AUTO_FACTOR / median d^2. */
#ifndef SVC_GAMMA_AUTO_FACTOR
#define SVC_GAMMA_AUTO_FACTOR 256.0
#endif

void		svc_options_default(SvcOptions *opt);

/*
 * Parse a flat JSON object of options over the defaults.  Unknown keys,
 * wrongly typed and out-of-range values are SVC_ERR_INVALID_PARAMETER with
 * a message naming the key (and listing the valid keys, for unknown ones).
 * json need not be NUL-terminated.
 */
SvcStatus	svc_options_parse(const char *json, size_t len, SvcOptions *opt,
							  SvcError *err);

/* Range checks on a filled struct (also used on decoded models/states). */
SvcStatus	svc_options_validate(const SvcOptions *opt, SvcError *err);

const char *svc_strategy_name(SvcStrategy s);
const char *svc_scale_name(SvcScale s);
const char *svc_labeling_name(SvcLabeling l);

/* Fixed-size little-endian encoding, shared by the model and the state. */
#define SVC_OPTIONS_WIRE_SIZE 104
void		svc_options_encode(const SvcOptions *opt, uint8_t *out);
SvcStatus	svc_options_decode(const uint8_t *in, SvcOptions *opt, SvcError *err);

#endif							/* SVC_OPTIONS_H */
