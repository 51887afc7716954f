/*
 * model_codec.c - the model's versioned, self-checking bytes
 *
 * Layout (all little-endian, see README "Model format"):
 *   "SVCM" u16 version u16 flags u32 dims u8 solver u8 boundary u16 0
 *   options (SVC_OPTIONS_WIRE_SIZE bytes)
 *   f64 gamma epsilon offset; u64 rows_seen rows_used iterations
 *   u32 converged u32 n_sv u32 n_eq u32 n_clusters u32 n_edges u32 0
 *   f64 objective gap; u64 cache_hits cache_misses   (versions 4 and 5)
 *   f64 shift[dims] mul[dims]
 *   f64 sv[n_sv*dims] alpha[n_sv]
 *   f64 sv_gamma[n_sv]       (version 3, and versions 4 and 5 with bandwidth_k > 0)
 *   f64 eq[n_eq*dims]; u32 eq_cluster[n_eq]; f64 eq_f[n_eq]; u64 eq_rows[n_eq]
 *   u64 cluster_size[n_clusters]
 *   u32 edge_a[n_edges] edge_b[n_edges]; f64 edge_f[n_edges]
 *   sections (version 5 only): u16 tag u16 0 u32 length, length bytes
 *   u32 crc32c of everything before it
 *
 * Version 5 is written only for a model that has a section (model.h), so
 * every other model keeps the bytes of version 2, 3 or 4.  Its solver
 * report block is there for every solver (zero for bsgd).  A section is a
 * row of the table below; the tags of a model are strictly increasing,
 * each at most once, and a tag this build does not know is refused, never
 * skipped: a section may change what the model's f or clusters mean.
 */
#include "model_codec.h"
#include "bytes.h"
#include "label_cut.h"
#include "label_lineage.h"

#include <math.h>
#include <string.h>

#define MODEL_FIXED_SIZE (4 + 2 + 2 + 4 + 4 + SVC_OPTIONS_WIRE_SIZE + 3 * 8 + 3 * 8 + 6 * 4)
#define MODEL_MAX_SV SVC_MAX_SAMPLE	/* unbudgeted: one per kept row */
#define MODEL_MAX_EQ 10000000
#define MODEL_STATS_SIZE (2 * 8 + 2 * 8)

/* Encoded size, or 0 if it would overflow size_t. */
static size_t
encoded_size(uint64_t dims, uint64_t n_sv, bool widths, bool stats, uint64_t n_eq,
			 uint64_t n_clusters, uint64_t n_edges)
{
	uint64_t	total;

	if (dims > SVC_MAX_DIMS || n_sv > MODEL_MAX_SV || n_eq > MODEL_MAX_EQ ||
		n_clusters > MODEL_MAX_EQ || n_edges > MODEL_MAX_EQ)
		return 0;
	total = MODEL_FIXED_SIZE + (stats ? MODEL_STATS_SIZE : 0);
	total += 8 * 2 * dims;
	total += 8 * n_sv * (dims + (widths ? 2 : 1));
	total += n_eq * (8 * dims + 4 + 8 + 8);
	total += 8 * n_clusters;
	total += n_edges * (4 + 4 + 8);
	total += 4;
	if (total > SIZE_MAX)
		return 0;
	return (size_t) total;
}

/* ---------------------------------------------------------------------
 * Sections of format 5.  A section's decode reads exactly len bytes from r
 * (the codec checks that it did) after every array of the model has been
 * read and checked, so it may refer to them (n_eq, dims, ...).
 */
#define SECTION_HEADER_SIZE 8

/* widths in the arrays: bandwidth_k's (section 8 holds the labelled rows') */
static bool
base_widths(const SvcModel *m)
{
	return m->sv_gamma != NULL && m->opt.bandwidth_k > 0;
}

typedef struct ModelSection
{
	uint16_t	tag;
	bool		(*present) (const SvcModel *m);
	size_t		(*size) (const SvcModel *m);	/* payload bytes */
	void		(*encode) (const SvcModel *m, SvcWriter *w);
	SvcStatus	(*decode) (const SvcEnv *env, SvcReader *r, size_t len, SvcModel *m,
						   SvcError *err);
} ModelSection;

/* Tag 1: the extended options, when one of them is not its default. */
static bool
ext_options_present(const SvcModel *m)
{
	return !svc_options_ext_default(&m->opt);
}

static size_t
ext_options_size(const SvcModel *m)
{
	(void) m;
	return SVC_OPTIONS_EXT_SIZE;
}

static void
ext_options_encode(const SvcModel *m, SvcWriter *w)
{
	uint8_t		buf[SVC_OPTIONS_EXT_SIZE];

	svc_options_encode_ext(&m->opt, buf);
	svc_put_raw(w, buf, sizeof(buf));
}

static SvcStatus
ext_options_decode(const SvcEnv *env, SvcReader *r, size_t len, SvcModel *m, SvcError *err)
{
	const uint8_t *buf;

	(void) env;
	if (len != SVC_OPTIONS_EXT_SIZE)
		return svc_model_corrupt(err, "The extended options have the wrong length.");
	buf = svc_get_raw(r, SVC_OPTIONS_EXT_SIZE);
	if (r->failed || svc_options_decode_ext(buf, &m->opt, err) != SVC_OK)
		return svc_model_corrupt(err, "The stored options are invalid.");
	/* all defaults are no section at all: one model, one encoding */
	if (svc_options_ext_default(&m->opt))
		return svc_model_corrupt(err, "The extended options section holds only defaults.");
	return SVC_OK;
}

/*
 * Tag 2: aid's report, in every model of solver aid:
 *   u32 rounds, u32 0, f64 final gap, f64 share aggregated,
 *   u64 aggregates[rounds]
 * Each round splits at least one cluster, so the counts rise strictly and
 * there are at most rows_used of each.
 */
#define AID_REPORT_FIXED 24

static bool
aid_report_present(const SvcModel *m)
{
	return m->solver == SVC_SOLVER_AID;
}

static size_t
aid_report_size(const SvcModel *m)
{
	return AID_REPORT_FIXED + 8 * (size_t) m->aid_rounds;
}

static void
aid_report_encode(const SvcModel *m, SvcWriter *w)
{
	svc_put_u32(w, (uint32_t) m->aid_rounds);
	svc_put_u32(w, 0);
	svc_put_f64(w, m->aid_final_gap);
	svc_put_f64(w, m->aid_share);
	for (int32_t i = 0; i < m->aid_rounds; i++)
		svc_put_u64(w, (uint64_t) m->aid_aggregates[i]);
}

static SvcStatus
aid_report_decode(const SvcEnv *env, SvcReader *r, size_t len, SvcModel *m, SvcError *err)
{
	uint32_t	rounds,
				zero;

	if (m->solver != SVC_SOLVER_AID)
		return svc_model_corrupt(err, "A model of another solver has aid's report.");
	if (len < AID_REPORT_FIXED)
		return svc_model_corrupt(err, "aid's report has the wrong length.");
	rounds = svc_get_u32(r);
	zero = svc_get_u32(r);
	m->aid_final_gap = svc_get_f64(r);
	m->aid_share = svc_get_f64(r);
	if (r->failed || zero != 0 || rounds < 1 || (uint64_t) rounds > (uint64_t) m->rows_used ||
		len != AID_REPORT_FIXED + 8 * (size_t) rounds)
		return svc_model_corrupt(err, "aid's report has the wrong length or round count.");
	if (!(m->aid_final_gap >= 0 && m->aid_final_gap <= 1) ||
		!(m->aid_share >= 0 && m->aid_share <= 1))
		return svc_model_corrupt(err, "aid's gap or share is out of range.");
	m->aid_aggregates = svc_alloc(env, sizeof(int64_t) * rounds, err);
	if (m->aid_aggregates == NULL)
		return SVC_ERR_NOMEM;
	m->aid_rounds = (int32_t) rounds;
	for (uint32_t i = 0; i < rounds; i++)
	{
		uint64_t	v = svc_get_u64(r);

		if (r->failed || v < 1 || v > (uint64_t) m->rows_used ||
			(i > 0 && v <= (uint64_t) m->aid_aggregates[i - 1]))
			return svc_model_corrupt(err, "aid's aggregate counts are out of range.");
		m->aid_aggregates[i] = (int64_t) v;
	}
	return SVC_OK;
}

/*
 * Tag 3: the labelled rows' report, when the aggregate saw labelled rows:
 * u64 normal, anomaly (trained on), seen_normal, seen_anomaly,
 * wrong_normal, wrong_anomaly; f64 weight_min, weight_max.
 */
#define LABELS_SECTION_SIZE (6 * 8 + 2 * 8)

static bool
labels_present(const SvcModel *m)
{
	return m->lab_seen_normal > 0 || m->lab_seen_anomaly > 0;
}

static size_t
labels_size(const SvcModel *m)
{
	(void) m;
	return LABELS_SECTION_SIZE;
}

static void
labels_encode(const SvcModel *m, SvcWriter *w)
{
	svc_put_u64(w, (uint64_t) m->lab_normal);
	svc_put_u64(w, (uint64_t) m->lab_anomaly);
	svc_put_u64(w, (uint64_t) m->lab_seen_normal);
	svc_put_u64(w, (uint64_t) m->lab_seen_anomaly);
	svc_put_u64(w, (uint64_t) m->lab_wrong_normal);
	svc_put_u64(w, (uint64_t) m->lab_wrong_anomaly);
	svc_put_f64(w, m->lab_weight_min);
	svc_put_f64(w, m->lab_weight_max);
}

static SvcStatus
labels_decode(const SvcEnv *env, SvcReader *r, size_t len, SvcModel *m, SvcError *err)
{
	uint64_t	v[6];

	(void) env;
	if (len != LABELS_SECTION_SIZE)
		return svc_model_corrupt(err, "The labelled rows' report has the wrong length.");
	for (int i = 0; i < 6; i++)
		v[i] = svc_get_u64(r);
	m->lab_weight_min = svc_get_f64(r);
	m->lab_weight_max = svc_get_f64(r);
	if (r->failed)
		return svc_model_corrupt(err, "The value is truncated.");
	/* trained on <= seen, wrong side <= trained on, within the model's rows */
	if (v[2] > (uint64_t) m->rows_seen || v[3] > (uint64_t) m->rows_seen - v[2] ||
		v[0] > v[2] || v[1] > v[3] || v[0] + v[1] > (uint64_t) m->rows_used ||
		v[4] > v[0] || v[5] > v[1] || v[2] + v[3] == 0)
		return svc_model_corrupt(err, "The labelled rows' counts are inconsistent.");
	if (!(isfinite(m->lab_weight_min) && isfinite(m->lab_weight_max) &&
		  m->lab_weight_min >= 0 && m->lab_weight_min <= m->lab_weight_max))
		return svc_model_corrupt(err, "The labelled rows' weights are invalid.");
	m->lab_normal = (int64_t) v[0];
	m->lab_anomaly = (int64_t) v[1];
	m->lab_seen_normal = (int64_t) v[2];
	m->lab_seen_anomaly = (int64_t) v[3];
	m->lab_wrong_normal = (int64_t) v[4];
	m->lab_wrong_anomaly = (int64_t) v[5];
	return SVC_OK;
}

/*
 * Tag 5: the warm start's report, in every warm-started model:
 * u64 warm_starts, rows_before, steps_before, rows_new, rows_outside.
 */
#define WARM_SECTION_SIZE (5 * 8)

static bool
warm_present(const SvcModel *m)
{
	return m->warm_starts > 0;
}

static size_t
warm_size(const SvcModel *m)
{
	(void) m;
	return WARM_SECTION_SIZE;
}

static void
warm_encode(const SvcModel *m, SvcWriter *w)
{
	svc_put_u64(w, (uint64_t) m->warm_starts);
	svc_put_u64(w, (uint64_t) m->warm_rows_before);
	svc_put_u64(w, (uint64_t) m->warm_steps_before);
	svc_put_u64(w, (uint64_t) m->warm_rows_new);
	svc_put_u64(w, (uint64_t) m->warm_rows_outside);
}

static SvcStatus
warm_decode(const SvcEnv *env, SvcReader *r, size_t len, SvcModel *m, SvcError *err)
{
	uint64_t	v[5];

	(void) env;
	if (len != WARM_SECTION_SIZE)
		return svc_model_corrupt(err, "The warm start's report has the wrong length.");
	for (int i = 0; i < 5; i++)
		v[i] = svc_get_u64(r);
	if (r->failed)
		return svc_model_corrupt(err, "The value is truncated.");
	/* the rows before are some of those seen; new rows are some of the used */
	if (v[0] < 1 || v[0] > (uint64_t) m->rows_seen || v[1] >= (uint64_t) m->rows_seen ||
		v[2] > (uint64_t) m->iterations || v[3] < 1 || v[3] > (uint64_t) m->rows_used ||
		v[4] > v[3])
		return svc_model_corrupt(err, "The warm start's counts are inconsistent.");
	m->warm_starts = (int64_t) v[0];
	m->warm_rows_before = (int64_t) v[1];
	m->warm_steps_before = (int64_t) v[2];
	m->warm_rows_new = (int64_t) v[3];
	m->warm_rows_outside = (int64_t) v[4];
	return SVC_OK;
}

/*
 * Tag 6: the kept rows (option keep_rows, keep.h), in every model that has
 * the option:
 *   u64 n, u64 next_counter, u64 added, u64 removed,
 *   f64 x[n * dims] (scaled), f64 alpha[n], f64 bound[n], u64 counter[n]
 * The rows are the model's window (n = rows_used <= sample), by strictly
 * increasing counter below next_counter; alpha in [0, bound], bound in
 * (0, 1], the alphas summing to min(1, sum of bounds) and their positive
 * ones as many as the support vectors.  A warm start rebuilds its solver
 * from them, so nothing here is taken on trust.
 */
#define KEEP_SECTION_FIXED (4 * 8)
/* how far the stored alphas may sum from their total (rounding only) */
#define KEEP_SUM_TOL 1e-6

static bool
keep_present(const SvcModel *m)
{
	return m->keep_n > 0;
}

static size_t
keep_size(const SvcModel *m)
{
	return KEEP_SECTION_FIXED + (size_t) m->keep_n * (8 * (size_t) m->dims + 24);
}

static void
keep_encode(const SvcModel *m, SvcWriter *w)
{
	size_t		n = (size_t) m->keep_n;

	svc_put_u64(w, (uint64_t) m->keep_n);
	svc_put_u64(w, (uint64_t) m->keep_next);
	svc_put_u64(w, (uint64_t) m->keep_added);
	svc_put_u64(w, (uint64_t) m->keep_removed);
	for (size_t i = 0; i < n * (size_t) m->dims; i++)
		svc_put_f64(w, m->keep_x[i]);
	for (size_t i = 0; i < n; i++)
		svc_put_f64(w, m->keep_alpha[i]);
	for (size_t i = 0; i < n; i++)
		svc_put_f64(w, m->keep_c[i]);
	for (size_t i = 0; i < n; i++)
		svc_put_u64(w, (uint64_t) m->keep_counter[i]);
}

static SvcStatus
keep_decode(const SvcEnv *env, SvcReader *r, size_t len, SvcModel *m, SvcError *err)
{
	uint64_t	n,
				next,
				added,
				removed,
				prev = 0;
	size_t		d = (size_t) m->dims;
	double		asum = 0.0,
				csum = 0.0;
	int64_t		positive = 0;

	if ((m->solver != SVC_SOLVER_SMO && m->solver != SVC_SOLVER_INCREMENTAL) ||
		!m->opt.keep_rows)
		return svc_model_corrupt(err, "A model without the option keep_rows has kept rows.");
	if (len < KEEP_SECTION_FIXED)
		return svc_model_corrupt(err, "The kept rows have the wrong length.");
	n = svc_get_u64(r);
	next = svc_get_u64(r);
	added = svc_get_u64(r);
	removed = svc_get_u64(r);
	if (r->failed || n < 1 || n > (uint64_t) m->opt.sample || n != (uint64_t) m->rows_used ||
		len != KEEP_SECTION_FIXED + (size_t) n * (8 * d + 24))
		return svc_model_corrupt(err, "The kept rows have the wrong length or count.");
	/* rows passed (next - 1) are some of those seen, and at least those kept */
	if (next <= n || next - 1 > (uint64_t) m->rows_seen || added > n ||
		removed > next - 1 - n)
		return svc_model_corrupt(err, "The kept rows' counts are inconsistent.");
	if (svc_model_alloc_kept(env, m, (int64_t) n, err) != SVC_OK)
		return SVC_ERR_NOMEM;
	m->keep_next = (int64_t) next;
	m->keep_added = (int64_t) added;
	m->keep_removed = (int64_t) removed;
	for (size_t i = 0; i < (size_t) n * d; i++)
	{
		m->keep_x[i] = svc_get_f64(r);
		if (!(fabs(m->keep_x[i]) <= 2 * SVC_MAX_FEATURE_ABS))
			return svc_model_corrupt(err, "A kept row is not finite or out of range.");
	}
	for (size_t i = 0; i < n; i++)
		m->keep_alpha[i] = svc_get_f64(r);
	for (size_t i = 0; i < n; i++)
	{
		double		a = m->keep_alpha[i],
					c = svc_get_f64(r);

		if (!(c > 0 && c <= 1) || !(a >= 0 && a <= c))
			return svc_model_corrupt(err, "A kept row's alpha or bound is out of range.");
		m->keep_c[i] = c;
		asum += a;
		csum += c;
		positive += a > 0;
	}
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	v = svc_get_u64(r);

		if (r->failed || v <= prev || v >= next)
			return svc_model_corrupt(err, "The kept rows' counters are not increasing below the next one.");
		m->keep_counter[i] = (int64_t) v;
		prev = v;
	}
	if (!(fabs(asum - fmin(1.0, csum)) <= KEEP_SUM_TOL) || positive != m->n_sv)
		return svc_model_corrupt(err, "The kept rows' alphas do not match the model's.");
	return SVC_OK;
}

/*
 * Tag 7: the clusters' ids and links (label_lineage.h), in a model made
 * from another (a warm start or a recut):
 *   u32 next_id, u32 n_links, u32 id[n_clusters],
 *   n_links x (u32 cluster (0: ended), u32 old id, u32 kind, u32 0, u64 shared)
 * svc_lineage_check checks them whole.
 */
#define IDS_SECTION_FIXED 8
#define IDS_LINK_SIZE 24

static bool
ids_present(const SvcModel *m)
{
	return m->cluster_id != NULL;
}

static size_t
ids_size(const SvcModel *m)
{
	return IDS_SECTION_FIXED + 4 * (size_t) m->n_clusters + IDS_LINK_SIZE * (size_t) m->n_links;
}

static void
ids_encode(const SvcModel *m, SvcWriter *w)
{
	svc_put_u32(w, (uint32_t) m->next_id);
	svc_put_u32(w, (uint32_t) m->n_links);
	for (int32_t k = 0; k < m->n_clusters; k++)
		svc_put_u32(w, (uint32_t) m->cluster_id[k]);
	for (int32_t l = 0; l < m->n_links; l++)
	{
		svc_put_u32(w, (uint32_t) m->links[l].cluster);
		svc_put_u32(w, (uint32_t) m->links[l].old_id);
		svc_put_u32(w, (uint32_t) m->links[l].kind);
		svc_put_u32(w, 0);
		svc_put_u64(w, (uint64_t) m->links[l].shared);
	}
}

static SvcStatus
ids_decode(const SvcEnv *env, SvcReader *r, size_t len, SvcModel *m, SvcError *err)
{
	uint32_t	next,
				n;
	size_t		K = (size_t) m->n_clusters;

	if (len < IDS_SECTION_FIXED + 4 * K)
		return svc_model_corrupt(err, "The cluster ids have the wrong length.");
	next = svc_get_u32(r);
	n = svc_get_u32(r);
	if (r->failed || next < 2 || next > INT32_MAX || n < 1 ||
		n > (len - IDS_SECTION_FIXED - 4 * K) / IDS_LINK_SIZE ||
		len != IDS_SECTION_FIXED + 4 * K + IDS_LINK_SIZE * (size_t) n)
		return svc_model_corrupt(err, "The cluster ids have the wrong length or count.");
	m->cluster_id = svc_alloc(env, sizeof(int32_t) * K, err);
	m->links = svc_alloc(env, sizeof(SvcClusterLink) * (size_t) n, err);
	if (!m->cluster_id || !m->links)
		return SVC_ERR_NOMEM;
	m->next_id = (int32_t) next;
	m->n_links = (int32_t) n;
	for (size_t k = 0; k < K; k++)
	{
		uint32_t	v = svc_get_u32(r);

		m->cluster_id[k] = v < next ? (int32_t) v : 0;	/* 0: out of range */
	}
	for (uint32_t l = 0; l < n; l++)
	{
		uint32_t	c = svc_get_u32(r),
					o = svc_get_u32(r),
					kind = svc_get_u32(r),
					zero = svc_get_u32(r);
		uint64_t	shared = svc_get_u64(r);

		if (r->failed || c > K || o >= next || kind > SVC_LINK_ENDED || zero != 0 ||
			shared > (uint64_t) m->rows_used)
			return svc_model_corrupt(err, "A cluster link is out of range.");
		m->links[l].cluster = (int32_t) c;
		m->links[l].old_id = (int32_t) o;
		m->links[l].kind = (int32_t) kind;
		m->links[l].shared = (int64_t) shared;
	}
	return svc_lineage_check(env, m, err);
}

/*
 * Tag 8: the labelled normals' support vectors at a width of their own
 * (supervision.h): u64 lab_wide, f64 lab_gamma.  The last lab_wide
 * support vectors have the width lab_gamma, in (0, gamma).  Without
 * bandwidth_k the model has no other widths, and this section makes its
 * sv_gamma; with it, the widths are in the arrays and must agree.
 */
#define WIDE_SECTION_SIZE (2 * 8)

static bool
wide_present(const SvcModel *m)
{
	return m->lab_wide > 0;
}

static size_t
wide_size(const SvcModel *m)
{
	(void) m;
	return WIDE_SECTION_SIZE;
}

static void
wide_encode(const SvcModel *m, SvcWriter *w)
{
	svc_put_u64(w, (uint64_t) m->lab_wide);
	svc_put_f64(w, m->lab_gamma);
}

static SvcStatus
wide_decode(const SvcEnv *env, SvcReader *r, size_t len, SvcModel *m, SvcError *err)
{
	uint64_t	n;
	double		g;

	if (len != WIDE_SECTION_SIZE)
		return svc_model_corrupt(err, "The labelled rows' width has the wrong length.");
	n = svc_get_u64(r);
	g = svc_get_f64(r);
	if (r->failed)
		return svc_model_corrupt(err, "The value is truncated.");
	if (n < 1 || n > (uint64_t) m->n_sv || !(g > 0 && g < m->gamma))
		return svc_model_corrupt(err, "The labelled rows' width is invalid.");
	if (m->sv_gamma == NULL)
	{
		m->sv_gamma = svc_alloc(env, sizeof(double) * (size_t) m->n_sv, err);
		if (m->sv_gamma == NULL)
			return SVC_ERR_NOMEM;
		for (int32_t i = 0; i < m->n_sv; i++)
			m->sv_gamma[i] = i < m->n_sv - (int32_t) n ? m->gamma : g;
	}
	else
		for (int32_t i = m->n_sv - (int32_t) n; i < m->n_sv; i++)
			if (m->sv_gamma[i] != g)
				return svc_model_corrupt(err, "The labelled rows' width does not match their support vectors.");
	m->lab_wide = (int64_t) n;
	m->lab_gamma = g;
	return SVC_OK;
}

/*
 * Tag 9: bsgd's automatic width widened (fit.c): f64 gamma_widen, the
 * factor in (0, 1) applied to the "auto" gamma, f64 gamma_cover, the
 * measure that made it (finite, >= 0).  Only a bsgd model of gamma "auto".
 */
#define WIDEN_SECTION_SIZE (2 * 8)

static bool
widen_present(const SvcModel *m)
{
	return m->gamma_widen > 0;
}

static size_t
widen_size(const SvcModel *m)
{
	(void) m;
	return WIDEN_SECTION_SIZE;
}

static void
widen_encode(const SvcModel *m, SvcWriter *w)
{
	svc_put_f64(w, m->gamma_widen);
	svc_put_f64(w, m->gamma_cover);
}

static SvcStatus
widen_decode(const SvcEnv *env, SvcReader *r, size_t len, SvcModel *m, SvcError *err)
{
	double		f,
				c;

	(void) env;
	if (len != WIDEN_SECTION_SIZE)
		return svc_model_corrupt(err, "The widened width has the wrong length.");
	f = svc_get_f64(r);
	c = svc_get_f64(r);
	if (r->failed)
		return svc_model_corrupt(err, "The value is truncated.");
	if (!(f > 0 && f < 1) || !(c >= 0 && isfinite(c)) || m->opt.gamma != 0.0 ||
		m->solver != SVC_SOLVER_BSGD)
		return svc_model_corrupt(err, "The widened width is invalid.");
	m->gamma_widen = f;
	m->gamma_cover = c;
	return SVC_OK;
}

/*
 * Tags, in increasing order: 1 extended options, 2 aid's report, 3 the
 * labelled rows' report, 4 the scoring certificates, 5 the warm start,
 * 6 the kept rows, 7 the clusters' ids, 8 the labelled rows' width,
 * 9 the automatic width widened.
 */
static const ModelSection model_sections[] = {
	{1, ext_options_present, ext_options_size, ext_options_encode, ext_options_decode},
	{2, aid_report_present, aid_report_size, aid_report_encode, aid_report_decode},
	{3, labels_present, labels_size, labels_encode, labels_decode},
	{5, warm_present, warm_size, warm_encode, warm_decode},
	{6, keep_present, keep_size, keep_encode, keep_decode},
	{7, ids_present, ids_size, ids_encode, ids_decode},
	{8, wide_present, wide_size, wide_encode, wide_decode},
	{9, widen_present, widen_size, widen_encode, widen_decode},
};

#define N_SECTIONS (sizeof(model_sections) / sizeof(model_sections[0]))

/* Bytes of the sections of m (headers included), 0 when it has none. */
static uint64_t
sections_size(const SvcModel *m)
{
	uint64_t	total = 0;

	for (size_t i = 0; i < N_SECTIONS; i++)
		if (model_sections[i].present(m))
			total += SECTION_HEADER_SIZE + (uint64_t) model_sections[i].size(m);
	return total;
}

bool
svc_model_has_sections(const SvcModel *m)
{
	for (size_t i = 0; i < N_SECTIONS; i++)
		if (model_sections[i].present(m))
			return true;
	return false;
}

int
svc_model_format_version(const SvcModel *m)
{
	if (svc_model_has_sections(m))
		return SVC_MODEL_FORMAT_SECTIONS;
	if (m->solver == SVC_SOLVER_SMO || m->solver == SVC_SOLVER_INCREMENTAL)
		return SVC_MODEL_FORMAT_SOLVER_STATS;
	return base_widths(m) ? SVC_MODEL_FORMAT_VERSION : SVC_MODEL_FORMAT_ONE_WIDTH;
}

static SvcStatus
decode_sections(const SvcEnv *env, SvcReader *r, SvcModel *m, SvcError *err)
{
	int			last_tag = 0;

	if (r->left <= 4)
		return svc_model_corrupt(err, "A model of format 5 has no section.");
	while (r->left > 4)
	{
		uint16_t	tag = svc_get_u16(r);
		uint16_t	zero = svc_get_u16(r);
		uint32_t	len = svc_get_u32(r);
		const ModelSection *sec = NULL;
		size_t		left_before;
		SvcStatus	st;

		if (r->failed || zero != 0 || len > r->left - 4)
			return svc_model_corrupt(err, "A section header is damaged.");
		if (tag <= last_tag)
			return svc_model_corrupt(err, "The sections are out of order or repeated.");
		for (size_t i = 0; i < N_SECTIONS; i++)
			if (model_sections[i].tag == tag)
				sec = &model_sections[i];
		if (sec == NULL)
		{
			svc_fail(err, SVC_ERR_CORRUPT,
					 "the svclust model has a section this build does not know (tag %u)", tag);
			svc_error_hint(err, "Read the model with the version of svclust that wrote it, or train it again.");
			return SVC_ERR_CORRUPT;
		}
		left_before = r->left;
		st = sec->decode(env, r, len, m, err);
		if (st != SVC_OK)
			return st;
		if (r->failed || left_before - r->left != len)
			return svc_model_corrupt(err, "A section's length does not match its contents.");
		last_tag = tag;
	}
	return SVC_OK;
}

size_t
svc_model_encoded_size(const SvcModel *m)
{
	bool		v5 = svc_model_has_sections(m);
	size_t		base = encoded_size((uint64_t) m->dims, (uint64_t) m->n_sv,
									base_widths(m),
									v5 || m->solver == SVC_SOLVER_SMO ||
									m->solver == SVC_SOLVER_INCREMENTAL,
									(uint64_t) m->n_eq, (uint64_t) m->n_clusters,
									(uint64_t) m->n_edges);
	uint64_t	extra = v5 ? sections_size(m) : 0;

	if (base == 0 || extra > (uint64_t) (SIZE_MAX - base))
		return 0;
	return base + (size_t) extra;
}

void
svc_model_encode(const SvcModel *m, uint8_t *out)
{
	size_t		len = svc_model_encoded_size(m);
	size_t		d = (size_t) m->dims;
	uint8_t		optbuf[SVC_OPTIONS_WIRE_SIZE];
	SvcWriter	w;

	if (len < 4)
		return;					/* callers check the size first */

	svc_writer_init(&w, out, len);
	svc_put_raw(&w, SVC_MODEL_MAGIC, 4);
	svc_put_u16(&w, (uint16_t) svc_model_format_version(m));
	svc_put_u16(&w, 0);
	svc_put_u32(&w, (uint32_t) m->dims);
	svc_put_u8(&w, (uint8_t) m->solver);
	svc_put_u8(&w, (uint8_t) m->boundary);
	svc_put_u16(&w, 0);
	svc_options_encode(&m->opt, optbuf);
	svc_put_raw(&w, optbuf, sizeof(optbuf));
	svc_put_f64(&w, m->gamma);
	svc_put_f64(&w, m->epsilon);
	svc_put_f64(&w, m->offset);
	svc_put_u64(&w, (uint64_t) m->rows_seen);
	svc_put_u64(&w, (uint64_t) m->rows_used);
	svc_put_u64(&w, (uint64_t) m->iterations);
	svc_put_u32(&w, m->converged ? 1 : 0);
	svc_put_u32(&w, (uint32_t) m->n_sv);
	svc_put_u32(&w, (uint32_t) m->n_eq);
	svc_put_u32(&w, (uint32_t) m->n_clusters);
	svc_put_u32(&w, (uint32_t) m->n_edges);
	svc_put_u32(&w, 0);
	if (svc_model_format_version(m) >= SVC_MODEL_FORMAT_SOLVER_STATS)
	{
		svc_put_f64(&w, m->objective);
		svc_put_f64(&w, m->gap);
		svc_put_u64(&w, (uint64_t) m->cache_hits);
		svc_put_u64(&w, (uint64_t) m->cache_misses);
	}
	for (size_t j = 0; j < d; j++)
		svc_put_f64(&w, m->shift[j]);
	for (size_t j = 0; j < d; j++)
		svc_put_f64(&w, m->mul[j]);
	for (size_t i = 0; i < (size_t) m->n_sv * d; i++)
		svc_put_f64(&w, m->sv[i]);
	for (int32_t i = 0; i < m->n_sv; i++)
		svc_put_f64(&w, m->alpha[i]);
	if (base_widths(m))
		for (int32_t i = 0; i < m->n_sv; i++)
			svc_put_f64(&w, m->sv_gamma[i]);
	for (size_t i = 0; i < (size_t) m->n_eq * d; i++)
		svc_put_f64(&w, m->eq[i]);
	for (int32_t i = 0; i < m->n_eq; i++)
		svc_put_u32(&w, (uint32_t) m->eq_cluster[i]);
	for (int32_t i = 0; i < m->n_eq; i++)
		svc_put_f64(&w, m->eq_f[i]);
	for (int32_t i = 0; i < m->n_eq; i++)
		svc_put_u64(&w, (uint64_t) m->eq_rows[i]);
	for (int32_t i = 0; i < m->n_clusters; i++)
		svc_put_u64(&w, (uint64_t) m->cluster_size[i]);
	for (int32_t i = 0; i < m->n_edges; i++)
		svc_put_u32(&w, (uint32_t) m->edge_a[i]);
	for (int32_t i = 0; i < m->n_edges; i++)
		svc_put_u32(&w, (uint32_t) m->edge_b[i]);
	for (int32_t i = 0; i < m->n_edges; i++)
		svc_put_f64(&w, m->edge_f[i]);
	for (size_t i = 0; i < N_SECTIONS; i++)
	{
		const ModelSection *sec = &model_sections[i];

		if (!sec->present(m))
			continue;
		svc_put_u16(&w, sec->tag);
		svc_put_u16(&w, 0);
		svc_put_u32(&w, (uint32_t) sec->size(m));
		sec->encode(m, &w);
	}
	svc_put_u32(&w, svc_crc32c(out, len - 4));
}

/* Read n doubles, all finite; false on short input or a non-finite one. */
static bool
get_finite(SvcReader *r, double *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
	{
		out[i] = svc_get_f64(r);
		if (!isfinite(out[i]))
			return false;
	}
	return !r->failed;
}

SvcStatus
svc_model_decode(const SvcEnv *env, const uint8_t *data, size_t len,
				 SvcModel *m, SvcError *err)
{
	SvcReader	r;
	const uint8_t *magic;
	uint32_t	dims,
				n_sv,
				n_eq,
				n_clusters,
				n_edges,
				pad,
				converged;
	uint16_t	version;
	uint8_t		solver,
				boundary;
	const uint8_t *optbuf;
	uint64_t	eq_total = 0,
				hits = 0,
				misses = 0;
	bool		stats,
				v5;
	size_t		expect;
	size_t		d;
	SvcStatus	st;

	memset(m, 0, sizeof(*m));
	if (len < MODEL_FIXED_SIZE + 4)
		return svc_model_corrupt(err, "The value is too short to be a model.");
	svc_reader_init(&r, data, len);
	magic = svc_get_raw(&r, 4);
	if (memcmp(magic, SVC_MODEL_MAGIC, 4) != 0)
		return svc_model_corrupt(err, "The value does not start with the svclust model signature.");
	version = svc_get_u16(&r);
	if (version < SVC_MODEL_FORMAT_ONE_WIDTH || version > SVC_MODEL_FORMAT_SECTIONS)
	{
		svc_fail(err, SVC_ERR_CORRUPT, "unsupported svclust model format version %u", version);
		svc_error_detail(err, "This build of svclust reads model format versions %d to %d.",
						 SVC_MODEL_FORMAT_ONE_WIDTH, SVC_MODEL_FORMAT_SECTIONS);
		svc_error_hint(err, "Train the model again with this version of svclust.");
		return SVC_ERR_CORRUPT;
	}
	v5 = version == SVC_MODEL_FORMAT_SECTIONS;
	(void) svc_get_u16(&r);
	dims = svc_get_u32(&r);
	solver = svc_get_u8(&r);
	boundary = svc_get_u8(&r);
	(void) svc_get_u16(&r);
	optbuf = svc_get_raw(&r, SVC_OPTIONS_WIRE_SIZE);
	if (r.failed)
		return svc_model_corrupt(err, "The value is truncated.");
	if (svc_options_decode(optbuf, &m->opt, err) != SVC_OK)
		return svc_model_corrupt(err, "The stored options are invalid.");
	m->gamma = svc_get_f64(&r);
	m->epsilon = svc_get_f64(&r);
	m->offset = svc_get_f64(&r);
	m->rows_seen = (int64_t) svc_get_u64(&r);
	m->rows_used = (int64_t) svc_get_u64(&r);
	m->iterations = (int64_t) svc_get_u64(&r);
	converged = svc_get_u32(&r);
	n_sv = svc_get_u32(&r);
	n_eq = svc_get_u32(&r);
	n_clusters = svc_get_u32(&r);
	n_edges = svc_get_u32(&r);
	pad = svc_get_u32(&r);
	stats = version >= SVC_MODEL_FORMAT_SOLVER_STATS;
	if (stats)
	{
		m->objective = svc_get_f64(&r);
		m->gap = svc_get_f64(&r);
		hits = svc_get_u64(&r);
		misses = svc_get_u64(&r);
	}
	if (r.failed)
		return svc_model_corrupt(err, "The value is truncated.");

	if (dims < 1 || dims > SVC_MAX_DIMS)
		return svc_model_corrupt(err, "The dimension is out of range.");
	if (solver < SVC_SOLVER_BSGD || solver > SVC_SOLVER_INCREMENTAL ||
		boundary < SVC_BOUNDARY_HYPERPLANE || boundary > SVC_BOUNDARY_SPHERE)
		return svc_model_corrupt(err, "The solver or boundary kind is unknown.");
	/*
	 * The solver trains what the options name; version 4 is smo's and
	 * incremental's only (an older build refuses incremental's solver id), and
	 * bsgd, the one solver of the hyperplane, has no report to write.
	 */
	if (solver != (m->opt.solver) ||
		(solver == SVC_SOLVER_BSGD) != (boundary == SVC_BOUNDARY_HYPERPLANE) ||
		(version == SVC_MODEL_FORMAT_SOLVER_STATS) !=
		((solver == SVC_SOLVER_SMO || solver == SVC_SOLVER_INCREMENTAL) && !v5) ||
		(version < SVC_MODEL_FORMAT_SOLVER_STATS && solver != SVC_SOLVER_BSGD))
		return svc_model_corrupt(err, "The format version, solver and boundary do not match.");
	if (stats && (!isfinite(m->objective) || !isfinite(m->gap) ||
				  hits > (uint64_t) INT64_MAX || misses > (uint64_t) INT64_MAX))
		return svc_model_corrupt(err, "The solver's report is invalid.");
	if (stats && solver == SVC_SOLVER_BSGD &&
		(m->objective != 0 || m->gap != 0 || hits != 0 || misses != 0))
		return svc_model_corrupt(err, "The solver's report is invalid.");
	m->cache_hits = (int64_t) hits;
	m->cache_misses = (int64_t) misses;
	if (!(isfinite(m->gamma) && m->gamma > 0) ||
		!(isfinite(m->epsilon) && m->epsilon >= 0) || !isfinite(m->offset))
		return svc_model_corrupt(err, "The kernel parameters are invalid.");
	if (m->rows_seen < 0 || m->rows_used < 0 || m->rows_used > m->rows_seen ||
		m->iterations < 0 || converged > 1)
		return svc_model_corrupt(err, "The training counts are invalid.");
	if (n_sv < 1 || n_eq < 1 || n_clusters < 1 || n_clusters > n_eq || pad != 0)
		return svc_model_corrupt(err, "The numbers of support vectors, equilibria or clusters are invalid.");
	if (m->opt.labeling == SVC_LABELING_TREE ? n_edges != n_eq - 1 : n_edges != 0)
		return svc_model_corrupt(err, "The number of tree edges does not match the equilibria.");
	if (!stats && (version == SVC_MODEL_FORMAT_VERSION) != (m->opt.bandwidth_k > 0))
		return svc_model_corrupt(err, "The format version does not match the bandwidth_k option.");
	expect = encoded_size(dims, n_sv, m->opt.bandwidth_k > 0, stats, n_eq, n_clusters,
						  n_edges);
	/* version 5 has its sections between the arrays and the checksum */
	if (expect == 0 || (v5 ? len < expect + SECTION_HEADER_SIZE : expect != len))
		return svc_model_corrupt(err, "The length does not match the counts in the header.");
	if (svc_crc32c(data, len - 4) != svc_load_u32(data + len - 4))
		return svc_model_corrupt(err, "The checksum does not match: the value was changed or truncated.");

	m->solver = (SvcSolver) solver;
	m->boundary = (SvcBoundary) boundary;
	m->converged = converged == 1;
	st = svc_model_alloc(env, m, (int32_t) dims, (int32_t) n_sv, (int32_t) n_eq,
						 (int32_t) n_clusters, (int32_t) n_edges, err);
	if (st != SVC_OK)
		return st;
	d = dims;
	if (!get_finite(&r, m->shift, d) || !get_finite(&r, m->mul, d))
		return svc_model_corrupt(err, "The scaling is not finite.");
	for (size_t j = 0; j < d; j++)
		if (!(m->mul[j] > 0))
			return svc_model_corrupt(err, "A scaling factor is not positive.");
	if (!get_finite(&r, m->sv, d * n_sv) || !get_finite(&r, m->alpha, n_sv))
		return svc_model_corrupt(err, "A support vector or coefficient is not finite.");
	if (m->opt.bandwidth_k > 0)
	{
		m->sv_gamma = svc_alloc(env, sizeof(double) * n_sv, err);
		if (m->sv_gamma == NULL)
			return SVC_ERR_NOMEM;
		/* widen only: the trajectories' tolerances come from gamma */
		for (uint32_t i = 0; i < n_sv; i++)
		{
			m->sv_gamma[i] = svc_get_f64(&r);
			if (!(m->sv_gamma[i] > 0 && m->sv_gamma[i] <= m->gamma))
				return svc_model_corrupt(err, "A support vector's width is not in (0, gamma].");
		}
	}
	if (!get_finite(&r, m->eq, d * n_eq))
		return svc_model_corrupt(err, "An equilibrium is not finite.");
	for (uint32_t i = 0; i < n_eq; i++)
	{
		uint32_t	c = svc_get_u32(&r);

		if (c < 1 || c > n_clusters)
			return svc_model_corrupt(err, "An equilibrium has a cluster id out of range.");
		m->eq_cluster[i] = (int32_t) c;
	}
	if (!get_finite(&r, m->eq_f, n_eq))
		return svc_model_corrupt(err, "An equilibrium's decision value is not finite.");
	/* their sum too: the cut adds them up, and they are labelled rows */
	for (uint32_t i = 0; i < n_eq; i++)
	{
		uint64_t	s = svc_get_u64(&r);

		if (s > (uint64_t) m->rows_used - eq_total)
			return svc_model_corrupt(err, "The equilibria's row counts add up to more than the rows used.");
		eq_total += s;
		m->eq_rows[i] = (int64_t) s;
	}
	for (uint32_t i = 0; i < n_clusters; i++)
	{
		uint64_t	s = svc_get_u64(&r);

		if (s > (uint64_t) m->rows_used)
			return svc_model_corrupt(err, "A cluster size is out of range.");
		m->cluster_size[i] = (int64_t) s;
	}
	for (uint32_t i = 0; i < n_edges; i++)
		m->edge_a[i] = (int32_t) svc_get_u32(&r);
	for (uint32_t i = 0; i < n_edges; i++)
		m->edge_b[i] = (int32_t) svc_get_u32(&r);
	if (!get_finite(&r, m->edge_f, n_edges))
		return svc_model_corrupt(err, "A saddle height is not finite.");
	if (r.failed || (v5 ? r.left <= 4 : r.left != 4))
		return svc_model_corrupt(err, "The value is truncated.");
	if (v5)
	{
		st = decode_sections(env, &r, m, err);
		if (st != SVC_OK)
			return st;
		if (!svc_model_has_sections(m))
			return svc_model_corrupt(err, "A model of format 5 has no section.");
		if (m->solver == SVC_SOLVER_AID && m->aid_rounds == 0)
			return svc_model_corrupt(err, "A model of solver aid has no report.");
		if (m->opt.keep_rows && m->keep_n == 0)
			return svc_model_corrupt(err, "A model of the option keep_rows has no kept rows.");
	}
	if (m->opt.labeling == SVC_LABELING_TREE)
	{
		st = svc_cut_check(env, m, err);
		if (st != SVC_OK)
			return st;
	}
	return SVC_OK;
}
