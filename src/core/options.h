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

/* How the saddle tree is cut when neither n_clusters nor level is given. */
typedef enum SvcCutRule
{
	SVC_CUT_PERSISTENCE = 1,	/* merge unless saddle < merge_ratio * peak */
	SVC_CUT_EOM = 2				/* HDBSCAN's excess of mass on the tree */
} SvcCutRule;

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
	double		nu;				/* outlier_fraction: share of training rows
								 * left outside the domain; 0 keeps the
								 * paper's threshold 1 */
	int32_t		bandwidth_k;	/* > 0: each support vector's width from
								 * its k-th nearest support vector (widen
								 * only); 0: one width gamma for all */

	/* The cut of the saddle tree: these may change after training. */
	SvcCutRule	cut;
	double		merge_ratio;	/* persistence: saddle/peak ratio that merges */
	double		min_cluster_share;	/* smaller clusters merge ... */
	int64_t		min_cluster_size;	/* ... or smaller than this; 0 = share */
	int32_t		n_clusters;		/* > 0: cut into this many clusters */
	bool		has_level;		/* cut at a level of f instead */
	double		level;
} SvcOptions;

/* Multiplier of the "auto" gamma: gamma = GAMMA_AUTO_FACTOR / median d^2
 * (times 2/d above two dimensions; see svc_gamma_auto). */
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

/*
 * Parse options that only change the cut of a trained model's tree
 * (cut, merge_ratio, min_cluster_share, min_cluster_size, n_clusters,
 * level) over opt; any other key is SVC_ERR_INVALID_PARAMETER.  Giving
 * n_clusters or level clears the other one; giving cut or merge_ratio
 * without either clears both.
 */
SvcStatus	svc_options_parse_cut(const char *json, size_t len, SvcOptions *opt,
								  SvcError *err);

/* Range checks on a filled struct (also used on decoded models/states). */
SvcStatus	svc_options_validate(const SvcOptions *opt, SvcError *err);

const char *svc_strategy_name(SvcStrategy s);
const char *svc_scale_name(SvcScale s);
const char *svc_labeling_name(SvcLabeling l);
const char *svc_cut_name(SvcCutRule c);

/* Fixed-size little-endian encoding, shared by the model and the state. */
#define SVC_OPTIONS_WIRE_SIZE 128
#define SVC_OPTIONS_WIRE_SAMPLE 60	/* offset of the u64 sample in it */
void		svc_options_encode(const SvcOptions *opt, uint8_t *out);
SvcStatus	svc_options_decode(const uint8_t *in, SvcOptions *opt, SvcError *err);

#endif							/* SVC_OPTIONS_H */
