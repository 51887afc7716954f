/*
 * options.h - training options: defaults, typed setters, a JSON text reader,
 * validation and the wire encoding (options.c, options_text.c,
 * options_wire.c)
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

/* The solver that trains f (solver.h); the model records it too. */
typedef enum SvcSolver
{
	SVC_SOLVER_BSGD = 1,		/* budgeted SGD, the large-margin hyperplane */
	SVC_SOLVER_SMO = 2,			/* exact SMO, the smallest enclosing sphere */
	SVC_SOLVER_AID = 3,			/* exact SMO by aggregation (aid.h): the same
								 * sphere */
	SVC_SOLVER_INCREMENTAL = 4	/* exact, a row at a time (incremental.h):
								 * the same sphere */
} SvcSolver;

/* How training turns equilibria into clusters. */
typedef enum SvcLabeling
{
	SVC_LABELING_TREE = 1,		/* saddle tree, merge by ratio (default) */
	SVC_LABELING_PAPER = 2,		/* Algorithm 3: B_eps starts, f >= 0 test */
	SVC_LABELING_COMPLETE_GRAPH = 3 /* Ben-Hur's: f >= 0 test on every pair
									 * of rows (label_complete_graph.h) */
} SvcLabeling;

/*
 * Points tested on each segment by the complete graph.  The default, 0
 * ("auto"), follows the segment's length (label_complete_graph.h), with
 * SVC_SEGMENT_POINTS_FLOOR at least; a number 1 to SVC_SEGMENT_POINTS_MAX
 * is that many on every segment.  Before "auto" the default was 20 on
 * every segment, and complete-graph options that predate it keep that
 * (svc_options_decode).
 */
#define SVC_SEGMENT_POINTS_AUTO 0
#define SVC_SEGMENT_POINTS_FLOOR 20
#define SVC_SEGMENT_POINTS_MAX 1000
#define SVC_SEGMENT_POINTS_EXPECT "an integer between 1 and 1000 or \"auto\""

/* How a row's bound moves from C to a labelled row's (supervision.h). */
typedef enum SvcLabelCurve
{
	SVC_LABEL_CURVE_GEOMETRIC = 1,	/* linear in log C_i (the default) */
	SVC_LABEL_CURVE_LINEAR = 2	/* linear in C_i, as the authors' code */
} SvcLabelCurve;

/* Which kept rows leave when a warm start overflows "sample" (keep.h). */
typedef enum SvcWindow
{
	SVC_WINDOW_OLDEST = 0,		/* the lowest arrival counters (the default) */
	SVC_WINDOW_RESERVOIR = 1	/* a seeded reservoir over every row passed */
} SvcWindow;

/*
 * What min_cluster_size counts.  The tree labels at most SVC_LABEL_ROWS
 * rows of the sample; counted in rows of the sample, the floor is scaled
 * to them (15 of a 10,000-row sample is 4.5 of 3,000 labelled rows), so
 * a cluster's size does not depend on how many rows label.  Rows of the
 * sample alone split plain 2-D tables of a few equal blobs (tail fragments
 * of a broad cluster stand as clusters), so the default, "separated",
 * counts rows of the sample only for a part that lies well apart from
 * the cluster it would join (label_cut.c), labelled rows otherwise
 * (doc/design-notes.md).  Options from before 0.5.0 count labelled rows.
 */
typedef enum SvcSizeRows
{
	SVC_SIZE_ROWS_LABELLED = 0,	/* rows that label */
	SVC_SIZE_ROWS_SAMPLE = 1,	/* rows of the sample */
	SVC_SIZE_ROWS_SEPARATED = 2	/* sample rows when apart (the default) */
} SvcSizeRows;

/*
 * Which cluster svc_assign and svc_predict give a row (assign_rule;
 * label_trajectory.h, svc_label_assign).  "trajectory": the cluster of the
 * equilibrium its trajectory climbs to, alone (options from before 0.5.0
 * mean it).  "auto" (the default): the same, except that above two columns
 * a row whose nearest equilibrium has another cluster and is clearly the
 * nearer (its kernel value over e times that of the nearest equilibrium of
 * the trajectory's cluster) takes that one's cluster: in a wide kernel in
 * many columns the rows at a cluster's edge climb to a larger neighbour
 * (doc/design-notes.md).
 */
typedef enum SvcAssignRule
{
	SVC_ASSIGN_TRAJECTORY = 0,
	SVC_ASSIGN_AUTO = 1
} SvcAssignRule;

/*
 * Which rule "auto" gamma follows (svc_gamma_auto): both are
 * 256 / median squared distance of the scaled rows, times a factor for
 * the dimension d.  AUTO (0.5.0 on): max(2/d, 1/8) above two dimensions,
 * the default; DIM (before 0.5.0, the option value "auto-d"): 2/d.  They
 * differ only above 16 dimensions.
 */
typedef enum SvcGammaRule
{
	SVC_GAMMA_RULE_DIM = 0,		/* 2/d: what models before 0.5.0 used */
	SVC_GAMMA_RULE_AUTO = 1		/* max(2/d, 1/8): the default */
} SvcGammaRule;

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
	double		tol;			/* bsgd: stop when ||w_{t+1} - w_t|| <= tol;
								 * smo: KKT violation gap in libsvm's scale */
	int64_t		max_iter;		/* at most this many steps; 0 (smo only):
								 * automatic */
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
	int32_t		segment_points; /* complete-graph labelling: points tested
								 * on each segment; 0: "auto", by its
								 * length */

	/* The cut of the saddle tree: these may change after training. */
	SvcCutRule	cut;
	double		merge_ratio;	/* persistence: saddle/peak ratio that merges */
	double		min_cluster_share;	/* smaller clusters merge ... */
	int64_t		min_cluster_size;	/* ... or smaller than this; 0 = share */
	SvcSizeRows min_size_rows;	/* what min_cluster_size counts */
	SvcAssignRule assign_rule;	/* which cluster a scored row gets (on the
								 * base wire, byte 121) */
	int32_t		n_clusters;		/* > 0: cut into this many clusters */
	bool		has_level;		/* cut at a level of f instead */
	double		level;

	SvcSolver	solver;			/* bsgd (the default) or smo */
	int32_t		cache_mb;		/* smo's memory budget in MB; 0: the
								 * environment's (SvcEnv.solver_memory) */

	/* The extended options (SVC_OPTIONS_EXT_SIZE bytes on the wire). */
	double		aid_gap;		/* aid: stop at this relative gap */
	double		label_radius;	/* labelled rows: the kernel neighbourhood
								 * k(x, x_l) >= label_radius they weigh */
	int64_t		label_sample;	/* most labelled rows the aggregate keeps */
	SvcLabelCurve label_curve;	/* how a bound moves from C to a labelled
								 * row's (supervision.h) */
	double		anomaly_bound;	/* a labelled anomaly's bound, times C */
	int32_t		label_spread;	/* 1: labelled rows act after the solver,
								 * as support vectors of their own
								 * (supervision.h); 0: through the
								 * solver's bounds, as before 0.5.0 */
	int32_t		keep_rows;		/* 1: the model keeps its rows (exact
								 * solvers; keep.h), 0: not */
	SvcWindow	window;			/* keep_rows: which rows leave a full window */
	int32_t		keep_isolated;	/* 1: bsgd's budget maintenance weighs an
								 * isolated support vector's alpha twice
								 * (bsgd.c), 0: by |alpha| alone (on the
								 * base wire, byte 121, not here) */
	SvcGammaRule gamma_rule;	/* gamma 0: which "auto" rule; with a
								 * given gamma always SVC_GAMMA_RULE_AUTO,
								 * so one set of options has one encoding */
} SvcOptions;

#define SVC_AID_GAP_DEFAULT 1e-4
#define SVC_LABEL_RADIUS_DEFAULT 0.1353352832366127	/* e^-2: a radius of
														 * 2 sigma */
#define SVC_LABEL_SAMPLE_DEFAULT 1000
#define SVC_ANOMALY_BOUND_DEFAULT 30.0
/* The smallest cluster, in rows that label by default (SvcSizeRows). */
#define SVC_MIN_CLUSTER_SIZE_DEFAULT 15

/* Multiplier of the "auto" gamma: gamma = GAMMA_AUTO_FACTOR / median d^2
 * (times a factor of the dimension; see SvcGammaRule and svc_gamma_auto). */
#ifndef SVC_GAMMA_AUTO_FACTOR
#define SVC_GAMMA_AUTO_FACTOR 256.0
#endif

/*
 * The exact solvers' sphere is this many times wider in gamma than the
 * budgeted solver's automatic width (svc_gamma_sphere), and the heights
 * of its saddle tree come from a budgeted model at this many times the
 * sphere's gamma (label.c): doc/design-notes.md has the measurements.
 * Above SVC_SPHERE_WIDE_DIMS columns, with gamma "auto" by
 * SVC_GAMMA_RULE_AUTO, the ratio is SVC_SPHERE_WIDTH_RATIO_WIDE
 * (svc_sphere_width_ratio below).
 */
#ifndef SVC_SPHERE_WIDTH_RATIO
#define SVC_SPHERE_WIDTH_RATIO 4.0
#endif
#define SVC_SPHERE_WIDTH_RATIO_WIDE 2.0
#define SVC_SPHERE_WIDE_DIMS 16

/*
 * How many times the budgeted solver's automatic gamma is the sphere's:
 * SVC_SPHERE_WIDTH_RATIO, or SVC_SPHERE_WIDTH_RATIO_WIDE above
 * SVC_SPHERE_WIDE_DIMS columns with gamma "auto" by SVC_GAMMA_RULE_AUTO.
 * label.c's density tree uses the same ratio, so that at gamma "auto" its
 * width is the budgeted solver's own.
 */
double		svc_sphere_width_ratio(const SvcOptions *opt, int32_t d);

void		svc_options_default(SvcOptions *opt);

/*
 * Setting options one key at a time, as a reader of a JSON object meets
 * them.  The text reader (options_text.h) and the glue's jsonb walker both
 * call these setters, so the two take the same keys and values and fail
 * with the same messages.  Use: svc_options_begin, one svc_options_set_* per key in the
 * order the object holds them, then svc_options_finish; stop at the first
 * error (opt may then hold some of the values).
 *
 * Every error is SVC_ERR_INVALID_PARAMETER with a message naming the key
 * as given (so "nu" when nu was given): an unknown key lists the valid
 * keys; with cut_only, any key a trained model cannot change (unknown ones
 * too) is refused before its value is looked at; a key longer than
 * SVC_OPTIONS_KEY_SHOWN bytes is unknown, and shown cut to that length
 * (at a UTF-8 character boundary) with "...".  A later key overrides an
 * earlier one of the same name or alias.
 */
#define SVC_OPTIONS_KEY_SHOWN 63

typedef struct SvcOptionsSetter
{
	SvcOptions *opt;
	bool		cut_only;		/* only the cut keys: a recut of a model */
	bool		saw_n_clusters; /* what svc_options_finish settles */
	bool		saw_level;
	bool		saw_rule;		/* cut or merge_ratio */
	bool		saw_solver;
	bool		saw_tol;
	bool		saw_max_iter;
	bool		saw_share;		/* min_cluster_share */
	bool		saw_size;		/* min_cluster_size */
	bool		saw_isolated;	/* keep_isolated */
} SvcOptionsSetter;

/*
 * A JSON number.  An integer option takes a number written as an integer
 * (no fraction digits and no exponent in text; scale 0 for a numeric) only
 * if it is exact, within int64; it takes any other number whose double is
 * whole and below 2^53 in magnitude, so 3.0 and 1e2 are integers and 3.5
 * is not.  The other options take the double.
 */
typedef struct SvcOptionsNumber
{
	double		value;			/* nearest double; +-HUGE_VAL past them */
	bool		integer;		/* written as an integer */
	bool		exact;			/* integer and within int64 */
	int64_t		int_value;		/* its value, when exact */
} SvcOptionsNumber;

void		svc_options_begin(SvcOptionsSetter *s, SvcOptions *opt, bool cut_only);
SvcStatus	svc_options_set_number(SvcOptionsSetter *s, const char *key, size_t keylen,
								   const SvcOptionsNumber *value, SvcError *err);
/* value need not be NUL-terminated; it is compared byte for byte */
SvcStatus	svc_options_set_string(SvcOptionsSetter *s, const char *key, size_t keylen,
								   const char *value, size_t len, SvcError *err);
/* Only "keep_rows", "keep_isolated" and "label_spread" take a boolean; others refuse it as a value of the wrong type. */
SvcStatus	svc_options_set_bool(SvcOptionsSetter *s, const char *key, size_t keylen,
								 bool value, SvcError *err);
/* Only "level" takes null (no level). */
SvcStatus	svc_options_set_null(SvcOptionsSetter *s, const char *key, size_t keylen,
								 SvcError *err);
/* An object or an array as the value: options are one flat object. */
SvcStatus	svc_options_set_nested(SvcOptionsSetter *s, const char *key, size_t keylen,
								   SvcError *err);

/*
 * After the last key: n_clusters and level are two ways to name one cut,
 * so giving one clears the other and giving both is an error; naming an
 * automatic rule (cut, merge_ratio) without either clears both.  Naming
 * solver "smo" without tol or max_iter gives them smo's defaults
 * (SVC_SMO_DEFAULT_TOL, 0 = automatic).  min_cluster_size (when above 0)
 * wins over min_cluster_share, and has a default: naming the share
 * without the size sets the size to 0, so the share is what counts.
 * Then svc_options_validate on the whole struct.
 */
SvcStatus	svc_options_finish(SvcOptionsSetter *s, SvcError *err);

/* The error for options that are not one JSON object. */
SvcStatus	svc_options_not_object(SvcError *err);

/*
 * The error for a value out of the key's range: "key" must be expect.
 * For the setters and the wire decoders.
 */
SvcStatus	svc_options_bad_value(SvcError *err, const char *key, const char *expect);
/* What the errors say a level must be (null: no level). */
#define SVC_OPTIONS_LEVEL_EXPECT "a finite number or null"

/* Range checks on a filled struct (also used on decoded models/states). */
SvcStatus	svc_options_validate(const SvcOptions *opt, SvcError *err);

/*
 * A warm start's options (fit.h): given are the call's options read over
 * the init model's, so they differ from init only where the call names
 * another value.  Any difference but in a cut option is an error naming
 * the first such key with both values.
 */
SvcStatus	svc_options_warm_check(const SvcOptions *init, const SvcOptions *given,
								   SvcError *err);

const char *svc_strategy_name(SvcStrategy s);
const char *svc_scale_name(SvcScale s);
const char *svc_labeling_name(SvcLabeling l);
const char *svc_cut_name(SvcCutRule c);
const char *svc_label_curve_name(SvcLabelCurve c);
const char *svc_window_name(SvcWindow w);
const char *svc_size_rows_name(SvcSizeRows r);
const char *svc_assign_rule_name(SvcAssignRule r);
/* "auto", "auto-d", or "given" for a gamma given as a number. */
const char *svc_gamma_rule_name(const SvcOptions *opt);

/* smo's tol when the options name the solver without one: libsvm's -e. */
#define SVC_SMO_DEFAULT_TOL 1e-3
/* Most cache_mb: 1 TB. */
#define SVC_MAX_CACHE_MB 1048576

/*
 * Fixed-size little-endian encoding, shared by the model and the state.
 * Byte 120 is the solver (0 for bsgd, so that the bytes of options made
 * before solvers were options stay the same; 2 for smo), 121 holds bits
 * (SVC_OPTIONS_BIT_*), 122-123 are segment_points (0 for 20, or for
 * "auto" outside the complete graph),
 * 124-127 are cache_mb.  Byte 121's bits are 0 in options from before
 * 0.5.0, which meant what a 0 means now (builds before 0.5.0 refuse any
 * other byte); a build refuses a bit it does not know:
 *   bit 0: gamma "auto" by SVC_GAMMA_RULE_AUTO (else a given gamma, or
 *          "auto-d", the "auto" of before 0.5.0)
 *   bit 1: keep_isolated true (bsgd's budget maintenance)
 *   bit 2: min_cluster_size in rows of the sample (else labelled rows)
 *   bit 3: min_cluster_size in rows of the sample for a part apart from
 *          its neighbour ("separated"; never with bit 2)
 *   bit 4: segment_points "auto" with the complete graph (bytes 122-123
 *          then 0); without it, 0 there is 20 with the complete graph, the
 *          default before "auto", and "auto" with the other labellings,
 *          which ignore it
 *   bit 5: assign_rule "auto" (else "trajectory")
 */
#define SVC_OPTIONS_BIT_GAMMA_AUTO 0x01
#define SVC_OPTIONS_BIT_KEEP_ISOLATED 0x02
#define SVC_OPTIONS_BIT_SIZE_SAMPLE 0x04
#define SVC_OPTIONS_BIT_SIZE_SEPARATED 0x08
#define SVC_OPTIONS_BIT_SEGMENT_AUTO 0x10
#define SVC_OPTIONS_BIT_ASSIGN_AUTO 0x20
#define SVC_OPTIONS_BITS_KNOWN 0x3f
#define SVC_OPTIONS_WIRE_SIZE 128
#define SVC_OPTIONS_WIRE_SEED 52	/* offset of the u64 seed in it */
#define SVC_OPTIONS_WIRE_SAMPLE 60	/* offset of the u64 sample in it */
#define SVC_OPTIONS_WIRE_SEGMENT_POINTS 122 /* u16 segment_points (bit 4) */
#define SVC_OPTIONS_WIRE_CACHE_MB 124	/* u32 cache_mb */
void		svc_options_encode(const SvcOptions *opt, uint8_t *out);
/* Decodes the base wire; the extended options get their defaults. */
SvcStatus	svc_options_decode(const uint8_t *in, SvcOptions *opt, SvcError *err);

/*
 * The extended options: a second fixed-size block for options added after
 * the base wire was full.  Every field is stored as 0 when it has its
 * default, so a block of zeros is "all defaults", and a model or state of
 * such options keeps the bytes it had before the block existed (the model
 * stores a non-zero block in a section of format 5).  Layout:
 *   0: f64 aid_gap  8: f64 label_radius  16: u64 label_sample
 *   24: u8 label_interpolation (0 geometric, 2 linear)
 *   25: u8 keep_rows (0 false, 1 true)  26: u8 window (0 oldest, 1 reservoir)
 *   27: u8 label_spread (0 true, 1 false)
 *   32: f64 anomaly_bound
 *   28-31, 40-63: 0 (reserved: a build that reads a non-zero byte there refuses
 *   the options rather than ignore an option it does not know)
 */
#define SVC_OPTIONS_EXT_SIZE 64
#define SVC_OPTIONS_EXT_ANOMALY_BOUND 32
/* Both blocks, base then extended: what a state stores and compares. */
#define SVC_OPTIONS_WIRE_FULL (SVC_OPTIONS_WIRE_SIZE + SVC_OPTIONS_EXT_SIZE)
bool		svc_options_ext_default(const SvcOptions *opt);
void		svc_options_encode_ext(const SvcOptions *opt, uint8_t *out);
/* Decodes the block over opt (decoded from its base wire) and validates. */
SvcStatus	svc_options_decode_ext(const uint8_t *in, SvcOptions *opt, SvcError *err);
void		svc_options_encode_full(const SvcOptions *opt, uint8_t *out);
SvcStatus	svc_options_decode_full(const uint8_t *in, SvcOptions *opt, SvcError *err);

#endif							/* SVC_OPTIONS_H */
