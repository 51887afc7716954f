/*
 * test_supervision.c - labelled rows: the per-row weights, their place in
 * the aggregate state, and the fit that uses them
 */
#include "bytes.h"
#include "fit.h"
#include "model.h"
#include "model_codec.h"
#include "options.h"
#include "state.h"
#include "state_sample.h"
#include "score.h"
#include "supervision.h"
#include "label_trajectory.h"
#include "unit.h"
#include "unit_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define H 0.1353352832366127	/* e^-2 */

/* Weights of 1-D rows x[n] with labels lab[n], gamma 1. */
static SvcStatus
weights(const double *x, const int8_t *lab, int64_t n, double c, SvcLabelCurve curve,
		double *w, SvcError *err)
{
	return svc_supervision_weights(&svc_env_malloc, x, lab, n, 1, 1.0, c, H, curve,
								   SVC_ANOMALY_BOUND_DEFAULT, true, w, err);
}

static void
test_weights(void)
{
	enum
	{
	N = 202};
	double		x[N],
				w[N];
	int8_t		lab[N];
	SvcError	err;
	double		c = 0.01;
	double		edge = sqrt(2.0);	/* k = exp(-d^2) = e^-2 */

	for (int curve = SVC_LABEL_CURVE_GEOMETRIC; curve <= SVC_LABEL_CURVE_LINEAR; curve++)
	{
		double		max_step = 0;
		bool		monotone = true;

		/*
		 * A labelled normal at 0 and a labelled anomaly at 100, each alone;
		 * rows 0..99 walk from the normal to twice the edge, rows 100..199
		 * from the anomaly likewise; then one row at the edge of each.
		 */
		for (int i = 0; i < 100; i++)
		{
			x[i] = 2 * edge * i / 99.0;
			x[100 + i] = 100 + 2 * edge * i / 99.0;
			lab[i] = lab[100 + i] = 0;
		}
		lab[0] = 1;
		lab[100] = -1;
		x[200] = edge;
		x[201] = 100 + edge * (1 + 1e-12);
		lab[200] = lab[201] = 0;
		CHECK(weights(x, lab, N, c, curve, w, &err) == SVC_OK, "weights: %s", err.message);
		CHECK(fabs(w[0] * c - 1.0) < 1e-12, "a lone labelled normal has C_i = 1: %g", w[0] * c);
		CHECK(w[100] == -SVC_ANOMALY_BOUND_DEFAULT, "a labelled anomaly's weight is signed: %g",
			  w[100]);
		CHECK(w[101] * c >= 1.0 / (N - 1) && w[101] * c < 1.01 / (N - 1),
			  "next to a lone labelled anomaly C_i is near 1/N', N' = N - 1: %g", w[101] * c);
		CHECK(fabs(w[200] - 1.0) < 1e-6 && fabs(w[201] - 1.0) < 1e-6,
			  "C_i = C at the edge of a neighbourhood: %g %g", w[200], w[201]);
		for (int i = 60; i < 100; i++)
			CHECK(w[i] == 1.0 && w[100 + i] == 1.0, "outside the neighbourhoods C_i = C (row %d)", i);
		/* continuous: small steps in x, small steps in the weight's log */
		for (int i = 1; i < 100; i++)
		{
			max_step = fmax(max_step, fabs(log(w[i]) - log(w[i - 1])));
			if (i > 1)			/* not from the anomaly's own, signed weight */
			{
				max_step = fmax(max_step, fabs(log(w[100 + i]) - log(w[99 + i])));
				monotone = monotone && w[100 + i] >= w[99 + i];
			}
			monotone = monotone && w[i] <= w[i - 1];
		}
		CHECK(monotone, "the bound moves monotonically from the labelled row to C");
		CHECK(max_step < 0.6, "no jump in the bound (largest step in log %g)", max_step);
		if (curve == SVC_LABEL_CURVE_LINEAR)
		{
			/* halfway in u: the mean of C and 1 */
			double		xs[2] = {0, sqrt(-log((1 + H) / 2))};
			int8_t		ls[2] = {1, 0};
			double		ws[2];

			CHECK(weights(xs, ls, 2, c, curve, ws, &err) == SVC_OK &&
				  fabs(ws[1] * c - (c + 1) / 2) < 1e-12, "linear halfway: %g", ws[1] * c);
		}
		else
		{
			double		xs[2] = {0, sqrt(-log((1 + H) / 2))};
			int8_t		ls[2] = {1, 0};
			double		ws[2];

			CHECK(weights(xs, ls, 2, c, curve, ws, &err) == SVC_OK &&
				  fabs(ws[1] * c - sqrt(c)) < 1e-12, "geometric halfway: %g", ws[1] * c);
		}
	}

	/* normals and anomalies in one neighbourhood: their scores cancel */
	{
		double		xs[3] = {0, 0, 0.1};
		int8_t		ls[3] = {1, -1, 0};
		double		ws[3];

		CHECK(weights(xs, ls, 3, 0.5, SVC_LABEL_CURVE_GEOMETRIC, ws, &err) == SVC_OK &&
			  ws[2] == 1.0, "a row as near an anomaly as a normal keeps C: %g", ws[2]);
	}

	/* infeasible: C below 1/N, which only a caller can pass (the fit's is not) */
	{
		double		xs[4] = {0, 100, 200, 300};
		int8_t		ls[4] = {-1, 0, 0, 0};
		double		ws[4];

		CHECK(weights(xs, ls, 4, 0.1, SVC_LABEL_CURVE_GEOMETRIC, ws, &err) == SVC_ERR_INVALID_PARAMETER &&
			  strstr(err.message, "no feasible model") != NULL && strstr(err.detail, "sum to") != NULL,
			  "bounds summing below 1 are refused: %s / %s", err.message, err.detail);
		/*
		 * The labelled anomaly's upper bound is 0: the other N' = N - 1 rows
		 * carry the sum, and with C >= 1/N' every bound is (1/N' at the least).
		 */
		CHECK(weights(xs, ls, 4, 0.25, SVC_LABEL_CURVE_GEOMETRIC, ws, &err) == SVC_ERR_INVALID_PARAMETER,
			  "C = 1/N with a labelled anomaly: infeasible");
		CHECK(weights(xs, ls, 4, 1.0 / 3, SVC_LABEL_CURVE_GEOMETRIC, ws, &err) == SVC_OK &&
			  ws[0] < 0, "C = 1/N': feasible: %s", err.message);
	}

	/* without neighbours only the labelled rows move */
	{
		double		xs[4] = {0, 0.1, 10, 10.1};
		int8_t		ls[4] = {-1, 0, 1, 0};
		double		ws[4];

		CHECK(svc_supervision_weights(&svc_env_malloc, xs, ls, 4, 1, 1.0, 0.1, H,
									  SVC_LABEL_CURVE_GEOMETRIC, 3.0, false, ws, &err) == SVC_OK &&
			  ws[0] == -3.0 && ws[1] == 1.0 && fabs(ws[2] * 0.1 - 1.0) < 1e-12 && ws[3] == 1.0,
			  "no neighbours: %g %g %g %g", ws[0], ws[1], ws[2], ws[3]);
	}
}

/* Labelled rows: 3 blobs, a few labelled, anomalies planted near blob 1. */
static void
labelled_data(double **x, int8_t **lab, int64_t *n)
{
	int64_t		base = 600,
				extra = 12;
	double	   *b = blobs(base, 11);

	*n = base + extra;
	*x = malloc(sizeof(double) * 2 * (size_t) *n);
	*lab = calloc((size_t) *n, 1);
	memcpy(*x, b, sizeof(double) * 2 * (size_t) base);
	free(b);
	for (int64_t i = 0; i < extra; i++)
	{
		double		t = 2 * M_PI * (double) i / (double) extra;

		(*x)[2 * (base + i)] = 1.8 * cos(t);
		(*x)[2 * (base + i) + 1] = 1.8 * sin(t);
		if (i % 2 == 0)
			(*lab)[base + i] = -1;
	}
	for (int64_t i = 0; i < 30; i++)
		(*lab)[i * 20] = 1;
}

static void
test_fit(void)
{
	double	   *x;
	int8_t	   *lab;
	int64_t		n;
	SvcError	err;

	labelled_data(&x, &lab, &n);
	for (int c = 0; c < 4; c++)
	{
		/* the labelled rows spread after the solver, or in its bounds (c >= 2) */
		static const char *const configs[] = {
			"{}", "{\"solver\": \"smo\", \"gamma\": 2}",
			"{\"label_spread\": false}",
			"{\"solver\": \"smo\", \"gamma\": 2, \"label_spread\": false}"};
		const char *json = configs[c];
		int			s = c % 2;
		bool		spread = c < 2;
		SvcOptions	opt;
		SvcModel	plain,
					none,
					m,
					back;
		int8_t	   *zero = calloc((size_t) n, 1);
		size_t		len1,
					len2,
					len;
		uint8_t    *b1,
				   *b2,
				   *buf;
		int64_t		wrong_n = 0,
					wrong_a = 0,
					n_lab_n = 0,
					n_lab_a = 0;

		CHECK(parse(json, &opt, &err) == SVC_OK, "options");
		CHECK(svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &plain, &err) == SVC_OK &&
			  svc_fit_rows_labelled(&svc_env_malloc, x, zero, n, 2, &opt, &none, &err) == SVC_OK,
			  "%s: fits: %s", json, err.message);
		b1 = encode(&plain, &len1);
		b2 = encode(&none, &len2);
		CHECK(len1 == len2 && memcmp(b1, b2, len1) == 0,
			  "%s: no labelled row gives the unlabelled model's bytes", json);
		free(b1);
		free(b2);
		free(zero);

		CHECK(svc_fit_rows_labelled(&svc_env_malloc, x, lab, n, 2, &opt, &m, &err) == SVC_OK,
			  "%s: labelled fit: %s", json, err.message);
		for (int64_t i = 0; i < n; i++)
		{
			double		xs[2],
						f;

			if (lab[i] == 0)
				continue;
			svc_model_scale_row(&m, x + 2 * i, xs);
			f = svc_model_decision_scaled(&m, xs);
			n_lab_n += lab[i] > 0;
			n_lab_a += lab[i] < 0;
			wrong_n += lab[i] > 0 && f < 0;
			wrong_a += lab[i] < 0 && f >= 0;
		}
		CHECK(m.lab_normal == n_lab_n && m.lab_anomaly == n_lab_a &&
			  m.lab_seen_normal == n_lab_n && m.lab_seen_anomaly == n_lab_a,
			  "%s: the labelled counts", json);
		CHECK(m.lab_wrong_normal == wrong_n && m.lab_wrong_anomaly == wrong_a,
			  "%s: wrong-side counts are the rows' f: %lld/%lld against %lld/%lld", json,
			  (long long) m.lab_wrong_normal, (long long) m.lab_wrong_anomaly,
			  (long long) wrong_n, (long long) wrong_a);
		/*
		 * Spread: every row's bound is C; the labelled rows are support
		 * vectors of their own, the anomalies' negative.  Bounds: the
		 * sphere moves the labelled rows' bounds only (supervision.h).
		 */
		if (spread)
		{
			int32_t		neg = 0;

			for (int32_t k = 0; k < m.n_sv; k++)
				neg += m.alpha[k] < 0;
			/* an anomaly already below the depth needs no weight */
			CHECK(m.lab_weight_min == 1 && m.lab_weight_max == 1 && neg >= 1 && neg <= n_lab_a,
				  "%s: weights %g %g, %d negative alphas for %lld anomalies", json,
				  m.lab_weight_min, m.lab_weight_max, (int) neg, (long long) n_lab_a);
		}
		else
			CHECK((s ? m.lab_weight_min == 1 : m.lab_weight_min < 1) && m.lab_weight_max > 1,
				  "%s: weights: %g %g", json, m.lab_weight_min, m.lab_weight_max);
		/*
		 * Anomalies labelled in the middle of the blobs: the sphere gives
		 * them negative alphas and they end outside; the scorer (which
		 * falls back from its climb for such models) and the labelling's
		 * prediction agree with f.
		 */
		if (s)
		{
			int8_t	   *lab2 = malloc((size_t) n);
			SvcModel	mn;
			int32_t		neg = 0,
						inside = 0;
			SvcScorer	sc;
			SvcLabelWork w;
			bool		agree = true;

			memcpy(lab2, lab, (size_t) n);
			lab2[3] = lab2[5] = lab2[301] = -1;
			CHECK(svc_fit_rows_labelled(&svc_env_malloc, x, lab2, n, 2, &opt, &mn, &err) == SVC_OK,
				  "anomalies inside the blobs: %s", err.message);
			for (int32_t k = 0; k < mn.n_sv; k++)
				neg += mn.alpha[k] < 0;
			for (int64_t i = 0; i < n; i++)
			{
				double		xs[2];

				svc_model_scale_row(&mn, x + 2 * i, xs);
				inside += lab2[i] < 0 && svc_model_decision_scaled(&mn, xs) >= 0;
			}
			CHECK(neg >= 1 && inside == 0 && mn.lab_wrong_anomaly == 0,
				  "%s: anomalies inside the blobs pushed out: %d negative alphas, %d inside",
				  json, (int) neg, (int) inside);
			CHECK(svc_scorer_init(&svc_env_malloc, &mn, &sc, &err) == SVC_OK &&
				  svc_label_work_init(&svc_env_malloc, &mn, &w, &err) == SVC_OK, "scorer: %s",
				  err.message);
			for (int64_t i = 0; i < n; i += 3)
			{
				double		xs[2],
							f1,
							f2;
				int32_t		c1,
							c2;

				svc_model_scale_row(&mn, x + 2 * i, xs);
				c1 = svc_scorer_predict(&sc, xs, &f1);
				c2 = svc_label_predict(&mn, xs, &w, &f2);
				agree = agree && c1 == c2 && fabs(f1 - f2) <= 1e-12 &&
					fabs(f1 - svc_model_decision_scaled(&mn, xs)) <= 1e-12 &&
					c1 >= -1 && c1 <= mn.n_clusters;
			}
			CHECK(agree && mn.n_clusters >= 1,
				  "with negative alphas the scorer and the labelling agree (%d clusters)",
				  (int) mn.n_clusters);
			svc_label_work_free(&svc_env_malloc, &w);
			svc_scorer_free(&svc_env_malloc, &sc);
			svc_model_free(&svc_env_malloc, &mn);
			free(lab2);
		}
		/* the planted anomalies are outside a model that was told of them */
		CHECK(wrong_a == 0, "%s: every labelled anomaly outside (%lld inside)", json,
			  (long long) wrong_a);

		buf = encode(&m, &len);
		CHECK(svc_load_u16(buf + 4) == SVC_MODEL_FORMAT_SECTIONS, "%s: a labelled model is v5", json);
		CHECK(svc_model_decode(&svc_env_malloc, buf, len, &back, &err) == SVC_OK &&
			  back.lab_normal == m.lab_normal && back.lab_wrong_anomaly == m.lab_wrong_anomaly &&
			  back.lab_weight_max == m.lab_weight_max, "%s: the report round-trips: %s", json,
			  err.detail);
		svc_model_free(&svc_env_malloc, &back);
		/*
		 * The hyperplane's spread: its labelled normals' support vectors
		 * last, at a width of their own (section 8), round-trip with f;
		 * damaged, refused; a warm start from the model refused.
		 */
		CHECK(!(spread && !s) || (m.lab_wide == n_lab_n && m.lab_gamma > 0 &&
								  m.lab_gamma < m.gamma && m.sv_gamma != NULL),
			  "%s: %lld labelled normals at their own width %g (gamma %g)", json,
			  (long long) m.lab_wide, m.lab_gamma, m.gamma);
		CHECK(!(spread && s) || (m.lab_wide == 0 && m.sv_gamma == NULL),
			  "%s: the sphere's labelled rows at its own width", json);
		if (m.lab_wide > 0)
		{
			size_t		w8 = len - 4 - 16;	/* section 8's payload, the last */
			uint8_t    *copy = malloc(len);
			SvcModel	t;
			bool		same = true;
			struct
			{
				size_t		off;
				uint64_t	u;
				double		f;
			}			bad[] = {{0, 0, 0}, {0, (uint64_t) m.n_sv + 1, 0}, {0, UINT64_C(1) << 40, 0},
								 {8, 0, 0.0}, {8, 0, -1.0}, {8, 0, NAN}, {8, 0, INFINITY},
								 {8, 0, 2 * m.gamma}, {8, 0, m.gamma}};

			CHECK(svc_model_decode(&svc_env_malloc, buf, len, &back, &err) == SVC_OK &&
				  back.lab_wide == m.lab_wide && back.lab_gamma == m.lab_gamma,
				  "%s: the labelled rows' width round-trips: %s", json, err.detail);
			for (int64_t i = 0; i < n; i += 7)
			{
				double		xs[2];

				svc_model_scale_row(&m, x + 2 * i, xs);
				same = same && svc_model_decision_scaled(&m, xs) ==
					svc_model_decision_scaled(&back, xs);
			}
			CHECK(same, "%s: the decoded model's f is the model's", json);
			svc_model_free(&svc_env_malloc, &back);
			CHECK(svc_fit_warm_check(&m, 2, &m.opt, &err) == SVC_ERR_INVALID_PARAMETER &&
				  strstr(err.message, "width") != NULL,
				  "%s: no warm start from the wider spread: %s", json, err.message);
			for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
			{
				memcpy(copy, buf, len);
				if (bad[k].off == 0)
					svc_store_u64(copy + w8, bad[k].u);
				else
					svc_store_f64(copy + w8 + 8, bad[k].f);
				svc_store_u32(copy + len - 4, svc_crc32c(copy, len - 4));
				CHECK(svc_model_decode(&svc_env_malloc, copy, len, &t, &err) == SVC_ERR_CORRUPT,
					  "%s: a damaged width section (%zu) refused", json, k);
				svc_model_free(&svc_env_malloc, &t);
			}
			/* a build without section 8 refuses the model, as any unknown tag */
			CHECK(svc_load_u16(buf + len - 4 - 16 - 8) == 8, "%s: section 8 is last", json);
			free(copy);
		}
		/* damaged reports, checksum redone: refused */
		{
			/* the payload of section 3 (section 8 follows it with the hyperplane) */
			size_t		sec = len - 4 - 64 - (m.lab_wide > 0 ? 8 + 16 : 0);
			uint64_t	big = UINT64_C(1) << 40;
			double		neg = -1.0;
			uint8_t    *copy = malloc(len);
			SvcModel	t;
			static const size_t offs[] = {0, 8, 16, 32, 40};

			for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++)
			{
				memcpy(copy, buf, len);
				memcpy(copy + sec + offs[k], &big, 8);
				svc_store_u32(copy + len - 4, svc_crc32c(copy, len - 4));
				CHECK(svc_model_decode(&svc_env_malloc, copy, len, &t, &err) == SVC_ERR_CORRUPT,
					  "%s: a count of 2^40 at %zu refused", json, offs[k]);
				svc_model_free(&svc_env_malloc, &t);
			}
			memcpy(copy, buf, len);
			svc_store_f64(copy + sec + 48, neg);
			svc_store_u32(copy + len - 4, svc_crc32c(copy, len - 4));
			CHECK(svc_model_decode(&svc_env_malloc, copy, len, &t, &err) == SVC_ERR_CORRUPT &&
				  strstr(err.detail, "weights") != NULL, "%s: a negative weight: %s", json,
				  err.detail);
			svc_model_free(&svc_env_malloc, &t);
			free(copy);
		}
		free(buf);
		svc_model_free(&svc_env_malloc, &plain);
		svc_model_free(&svc_env_malloc, &none);
		svc_model_free(&svc_env_malloc, &m);
	}
	free(x);
	free(lab);
}

/* A state fed rows with labels (0: unlabelled), growing as the glue does. */
static uint8_t *
feed(uint8_t *buf, const double *x, const int8_t *lab, int64_t from, int64_t to)
{
	for (int64_t i = from; i < to; i++)
		buf = unit_state_add_checked(buf, x + 2 * i, lab[i]);
	return buf;
}

static uint8_t *
empty_state(const SvcOptions *opt)
{
	return unit_state_new(2, 4, opt, NULL, 0);
}

/* The labelled rows merge into the sorted rows, ties after the unlabelled. */
static void
test_merge(void)
{
	/* unlabelled (1,0) (3,1) (5,0); labelled (2,9) (3,1) (6,0); room for 2n */
	double		rows[24] = {1, 0, 3, 1, 5, 0, 2, 9, 3, 1, 6, 0};
	int8_t		label[6] = {0, 0, 0, -1, 1, -1};
	static const double want[12] = {1, 0, 2, 9, 3, 1, 3, 1, 5, 0, 6, 0};
	static const int8_t want_lab[6] = {0, -1, 0, 1, 0, -1};
	SvcError	err;

	CHECK(svc_supervision_merge_rows(&svc_env_malloc, rows, label, 3, 6, 2, &err) == SVC_OK &&
		  memcmp(rows, want, sizeof(want)) == 0 && memcmp(label, want_lab, sizeof(want_lab)) == 0,
		  "merge: one sorted run, labels with their rows");
	/* no unlabelled row, or no labelled one: unchanged */
	CHECK(svc_supervision_merge_rows(&svc_env_malloc, rows, label, 0, 6, 2, &err) == SVC_OK &&
		  memcmp(rows, want, sizeof(want)) == 0, "merge: all labelled");
	CHECK(svc_supervision_merge_rows(&svc_env_malloc, rows, label, 6, 6, 2, &err) == SVC_OK &&
		  memcmp(rows, want, sizeof(want)) == 0, "merge: none labelled");
}

static void
test_state(void)
{
	double	   *x;
	int8_t	   *lab;
	int64_t		n;
	SvcOptions	opt;
	SvcError	err;
	uint8_t    *serial,
			   *a,
			   *b;
	SvcModel	ms,
				mp;

	labelled_data(&x, &lab, &n);
	svc_options_default(&opt);
	opt.sample = 1000;

	serial = feed(empty_state(&opt), x, lab, 0, n);
	CHECK(svc_state_check(serial, unit_state_len(serial), &err) == SVC_OK, "labelled state checks: %s",
		  err.detail);
	CHECK(svc_state_kept(serial) == n - 36 && svc_state_lab_kept(serial) == 36 &&
		  svc_state_lab_seen(serial, 1) == 30 && svc_state_lab_seen(serial, -1) == 6,
		  "labelled rows are kept apart: %lld + %lld", (long long) svc_state_kept(serial),
		  (long long) svc_state_lab_kept(serial));
	CHECK(svc_state_rows_seen(serial) == n && svc_state_seen(serial) == n - 36,
		  "every row counted once: %lld of %lld", (long long) svc_state_rows_seen(serial),
		  (long long) n);

	/* two workers, merged: the same model as the serial scan */
	a = feed(empty_state(&opt), x, lab, 0, n / 3);
	b = feed(empty_state(&opt), x, lab, n / 3, n);
	{
		int64_t		cap = svc_state_merged_kept(a, b),
					lcap = svc_state_merged_lab_kept(a, b);
		uint8_t    *grown = calloc(1, svc_state_size_labelled(2, cap, lcap));

		svc_state_copy_labelled(a, grown, cap, lcap);
		free(a);
		a = grown;
		CHECK(svc_state_merge(a, b, &err) == SVC_OK, "merge: %s", err.message);
		CHECK(svc_state_check(a, unit_state_len(a), &err) == SVC_OK, "merged state checks: %s",
			  err.detail);
	}
	CHECK(svc_fit_state(&svc_env_malloc, serial, &ms, &err) == SVC_OK &&
		  svc_fit_state(&svc_env_malloc, a, &mp, &err) == SVC_OK, "fits: %s", err.message);
	{
		size_t		l1,
					l2;
		uint8_t    *b1 = encode(&ms, &l1),
				   *b2 = encode(&mp, &l2);

		CHECK(l1 == l2 && memcmp(b1, b2, l1) == 0, "parallel equals serial, labelled rows too");
		CHECK(ms.lab_normal == 30 && ms.lab_anomaly == 6 && ms.rows_used == n &&
			  ms.rows_seen == n, "the model counts every row");
		free(b1);
		free(b2);
	}
	svc_model_free(&svc_env_malloc, &ms);
	svc_model_free(&svc_env_malloc, &mp);

	/* past label_sample the labelled rows are sampled, and the model says so */
	{
		SvcOptions	o2 = opt;
		uint8_t    *s;

		o2.label_sample = 10;
		s = feed(empty_state(&o2), x, lab, 0, n);
		/* label_sample and its room for compactions (a quarter more) */
		CHECK(svc_state_check(s, unit_state_len(s), &err) == SVC_OK &&
			  svc_state_lab_kept(s) >= 10 && svc_state_lab_kept(s) <= 12 &&
			  svc_state_lab_capacity(s) <= 12 && svc_state_train_lab_rows(s) == 10,
			  "labelled sample bounded by label_sample: %lld", (long long) svc_state_lab_kept(s));
		CHECK(svc_fit_state(&svc_env_malloc, s, &ms, &err) == SVC_OK &&
			  ms.lab_normal + ms.lab_anomaly == 10 && ms.lab_seen_normal == 30 &&
			  ms.lab_seen_anomaly == 6, "the model reports the sample of labelled rows");
		svc_model_free(&svc_env_malloc, &ms);
		free(s);
	}

	/* damage to the labelled part of the state */
	{
		size_t		len = unit_state_len(serial);
		uint8_t    *d = malloc(len);
		/* the labelled sample is the state's last area: its bound (16 bytes), then the rows */
		size_t		lab0 = len - svc_sample_area_size(3, svc_state_lab_capacity(serial)) + 16;
		size_t		off_lab = 72 + SVC_OPTIONS_WIRE_FULL;

		memcpy(d, serial, len);
		svc_store_f64(d + lab0 + 16, 0.5);
		/* the label is part of the row's key: the key no longer fits it */
		CHECK(svc_state_check(d, len, &err) == SVC_ERR_CORRUPT && strstr(err.detail, "key") != NULL,
			  "a label of 0.5: %s", err.detail);
		memcpy(d, serial, len);
		svc_store_f64(d + lab0, NAN);
		CHECK(svc_state_check(d, len, &err) == SVC_ERR_CORRUPT, "a NaN labelled row: %s", err.detail);
		memcpy(d, serial, len);
		svc_store_u64(d + off_lab + 16, 1);	/* normals seen below normals kept */
		CHECK(svc_state_check(d, len, &err) == SVC_ERR_CORRUPT, "normals seen < kept: %s", err.detail);
		memcpy(d, serial, len);
		svc_store_u64(d + off_lab + 8, (uint64_t) svc_state_lab_capacity(serial) + 1);
		CHECK(svc_state_check(d, len, &err) == SVC_ERR_CORRUPT, "kept past capacity: %s", err.detail);
		memcpy(d, serial, len);
		svc_store_u64(d + off_lab, 2000);
		CHECK(svc_state_check(d, len, &err) == SVC_ERR_CORRUPT, "capacity past label_sample: %s",
			  err.detail);
		for (size_t cut = 0; cut < len; cut += 7)
			CHECK(svc_state_check(d, cut, &err) == SVC_ERR_CORRUPT, "truncated at %zu", cut);
		free(d);
	}
	free(serial);
	free(b);
	free(a);
	free(x);
	free(lab);
}

/*
 * A labelled fit with every allocation failing in turn: SVC_ERR_NOMEM
 * and nothing leaked, then the model of an unbudgeted fit, byte for byte.
 * Covers the merge of labelled rows, the spread's slots and, with smo's
 * labelled anomalies, the sphere tree's rows below 0.
 */
static void
test_fit_fails_cleanly(void)
{
	double	   *x;
	int8_t	   *lab;
	int64_t		n;
	SvcError	err;

	labelled_data(&x, &lab, &n);
	for (int c = 0; c < 2; c++)
	{
		static const char *const configs[] = {"{}", "{\"solver\": \"smo\", \"gamma\": 2}"};
		SvcOptions	opt;
		SvcModel	want;
		uint8_t    *s,
				   *wb;
		size_t		wlen;
		long		k,
					bad = 0;

		CHECK(parse(configs[c], &opt, &err) == SVC_OK, "options");
		/* 200 rows with 10 labelled normals, and the ring's 6 anomalies */
		s = feed(feed(empty_state(&opt), x, lab, 0, 200), x, lab, n - 12, n);
		CHECK(svc_fit_state(&svc_env_malloc, s, &want, &err) == SVC_OK, "fit: %s", err.message);
		wb = encode(&want, &wlen);
		for (k = 0; k < 100000; k++)
		{
			UnitBudget	b = {k, 0};
			SvcEnv		env = {.alloc = unit_fail_after_alloc, .release = unit_counted_free,
			.realloc = unit_fail_after_realloc, .ctx = &b};
			SvcModel	m;
			SvcStatus	st = svc_fit_state(&env, s, &m, &err);

			if (st == SVC_OK)
			{
				size_t		len;
				uint8_t    *mb = encode(&m, &len);

				CHECK(len == wlen && memcmp(mb, wb, len) == 0,
					  "%s: the fit after %ld failures is the unbudgeted one", configs[c], k);
				free(mb);
			}
			svc_model_free(&env, &m);
			if (b.live != 0 || (st != SVC_OK && st != SVC_ERR_NOMEM))
				bad++;
			if (st == SVC_OK)
				break;
		}
		CHECK(k > 0 && k < 100000 && bad == 0,
			  "%s: %ld allocations failed in turn, %ld leaked or wrong", configs[c], k, bad);
		free(wb);
		svc_model_free(&svc_env_malloc, &want);
		free(s);
	}
	free(x);
	free(lab);
}

/*
 * The spread generalises: a small tight group of rows between the blobs,
 * which the unlabelled model keeps inside (it is dense), leaves the domain
 * when five of its rows are labelled anomalies, most of the others with
 * them; a loose group at the edge, which it leaves outside, comes inside
 * when four of its rows are labelled normal.  The share outside stays
 * outlier_fraction's, and the labelled anomalies end outside.
 */
static void
test_spread(void)
{
	int64_t		base = 900,
				ng = 30,
				nl = 30,
				n = base + ng + nl;
	double	   *b = blobs(base, 17);
	double	   *x = malloc(sizeof(double) * 2 * (size_t) n);
	int8_t	   *lab = calloc((size_t) n, 1);
	SvcRng		r;

	memcpy(x, b, sizeof(double) * 2 * (size_t) base);
	free(b);
	svc_rng_seed(&r, 5);
	for (int64_t i = 0; i < ng + nl; i++)
	{
		bool		tight = i < ng;
		double		u1 = svc_rng_unit(&r) + 1e-12,
					u2 = svc_rng_unit(&r),
					rad = sqrt(-2 * log(u1)) * (tight ? 0.1 : 0.35);

		x[2 * (base + i)] = (tight ? 3.0 : -1.8) + rad * cos(2 * M_PI * u2);
		x[2 * (base + i) + 1] = (tight ? 1.6 : -1.8) + rad * sin(2 * M_PI * u2);
	}
	for (int64_t i = 0; i < 5; i++)
		lab[base + i] = -1;
	for (int64_t i = 0; i < 4; i++)
		lab[base + ng + i] = 1;
	for (int c = 0; c < 2; c++)
	{
		const char *json = c ? "{\"solver\": \"smo\"}" : "{}";
		SvcOptions	opt;
		SvcModel	m0,
					m1;
		SvcError	err;
		int64_t		tight0 = 0,
					tight1 = 0,
					loose0 = 0,
					loose1 = 0,
					out1 = 0;

		CHECK(parse(json, &opt, &err) == SVC_OK, "options");
		CHECK(svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &m0, &err) == SVC_OK &&
			  svc_fit_rows_labelled(&svc_env_malloc, x, lab, n, 2, &opt, &m1, &err) == SVC_OK,
			  "%s: fits: %s", json, err.message);
		/*
		 * bsgd's labelled normals (its last support vectors) lift by twice
		 * the threshold of the solver's f, which is the unlabelled model's
		 * (the labelled fit sees the same rows in the same order).
		 */
		if (c == 0)
		{
			bool		twice = m1.lab_wide == 4;

			for (int64_t k = m1.n_sv - m1.lab_wide; k < m1.n_sv; k++)
				twice = twice && fabs(m1.alpha[k] - SVC_SPREAD_LIFT_HYPERPLANE * m0.offset) <=
					1e-9 * fabs(m0.offset);
			CHECK(twice && SVC_SPREAD_LIFT_HYPERPLANE == 2.0,
				  "bsgd: 4 labelled normals lift by twice the threshold %g (%lld, first %g)",
				  m0.offset, (long long) m1.lab_wide, m1.alpha[m1.n_sv - 1]);
		}
		for (int64_t i = 0; i < n; i++)
		{
			double		xs[2],
						f0,
						f1;

			svc_model_scale_row(&m0, x + 2 * i, xs);
			f0 = svc_model_decision_scaled(&m0, xs);
			svc_model_scale_row(&m1, x + 2 * i, xs);
			f1 = svc_model_decision_scaled(&m1, xs);
			out1 += f1 < 0;
			if (lab[i] != 0 || i < base)
				continue;
			if (i < base + ng)
			{
				tight0 += f0 < 0;
				tight1 += f1 < 0;
			}
			else
			{
				loose0 += f0 < 0;
				loose1 += f1 < 0;
			}
		}
		printf("  spread %s: tight group outside %lld -> %lld of %lld, loose group %lld -> %lld of %lld\n",
			   json, (long long) tight0, (long long) tight1, (long long) ng - 5,
			   (long long) loose0, (long long) loose1, (long long) nl - 4);
		CHECK(tight0 <= 5 && tight1 >= 20, "%s: labelled anomalies take their group out: %lld -> %lld",
			  json, (long long) tight0, (long long) tight1);
		CHECK(loose1 + 5 <= loose0, "%s: labelled normals take their group in: %lld -> %lld",
			  json, (long long) loose0, (long long) loose1);
		CHECK(m1.lab_wrong_anomaly == 0 && m1.lab_wrong_normal == 0,
			  "%s: the labelled rows on their side (%lld / %lld wrong)", json,
			  (long long) m1.lab_wrong_normal, (long long) m1.lab_wrong_anomaly);
		CHECK(out1 == (int64_t) floor(opt.nu * (double) n),
			  "%s: %lld rows outside: outlier_fraction's share", json, (long long) out1);
		svc_model_free(&svc_env_malloc, &m0);
		svc_model_free(&svc_env_malloc, &m1);
	}
	free(x);
	free(lab);
}

/*
 * The labelled and the unlabelled bsgd fit of the same rows at gamma
 * (0: "auto"): m1 and m0, and how many of the NA anomalies (rows NN..)
 * each puts outside.
 */
static void
spread_pair(const double *x, const int8_t *lab, int64_t NN, int64_t NA, int D, double gamma,
			SvcModel *m0, SvcModel *m1, int64_t *out0, int64_t *out1)
{
	SvcOptions	opt;
	SvcError	err;

	CHECK(parse("{}", &opt, &err) == SVC_OK, "options");
	opt.gamma = gamma;
	CHECK(svc_fit_rows_labelled(&svc_env_malloc, x, lab, NN + NA, D, &opt, m1, &err) == SVC_OK,
		  "%d-D labelled fit: %s", D, err.message);
	CHECK(svc_fit_rows(&svc_env_malloc, x, NN + NA, D, &opt, m0, &err) == SVC_OK,
		  "%d-D fit: %s", D, err.message);
	*out0 = *out1 = 0;
	for (int64_t i = NN; i < NN + NA; i++)
	{
		double		xs[16];

		svc_model_scale_row(m0, x + i * D, xs);
		*out0 += svc_model_decision_scaled(m0, xs) < 0;
		svc_model_scale_row(m1, x + i * D, xs);
		*out1 += svc_model_decision_scaled(m1, xs) < 0;
	}
}

/* the labelled normals' terms weigh 2 k^2 q0 at m1's lab_gamma (supervision.h) */
static bool
lift_weights(const SvcModel *m1, double k, double q0)
{
	bool		ok = true;

	for (int64_t j = m1->n_sv - m1->lab_wide; j < m1->n_sv; j++)
		ok = ok && fabs(m1->alpha[j] - 2.0 * k * k * q0) <= 1e-9 * q0 &&
			m1->sv_gamma[j] == m1->lab_gamma;
	return ok;
}

/*
 * Three z-scored blobs among noise columns (test/bench/labelled.py's
 * scatter12; 12-D smaller) with anomalies, a tenth of the normal rows
 * labelled.  bsgd widens gamma "auto" on them (fit.h, the cover) with or
 * without the labels: the labelled fit is the unlabelled one (the same
 * width, support vectors and clusters) plus the labelled rows' terms.
 * Its lift is a widened model's (supervision.h): in 12 columns the
 * kernels sat apart at the automatic width and the lift is k 1.5, more
 * anomalies end outside; in 4 columns they overlapped and the labelled
 * normals keep the solver's width (at gamma / 8 they lowered the
 * anomalies outside 112 -> 91, at gamma / 16 to 69).  At the automatic
 * width (12 columns, gamma given) the kernels sit apart and f is rugged:
 * the lift widens to gamma / (8 k) and weighs 2 k^2 times the threshold,
 * k = rho / 16, and more anomalies end outside; at gamma / 8 and twice
 * the threshold the lift moved f at the labelled rows alone.
 */
static void
test_spread_dims(int D)
{
	int64_t		NN = D == 12 ? 900 : 2850,
				NA = D == 12 ? 45 : 150,
				N = NN + NA;
	/* a normal row's distance from its centre: chi with D degrees of freedom */
	double		mean_r = sqrt(2.0) * exp(lgamma((D + 1) / 2.0) - lgamma(D / 2.0)),
				sd_r = sqrt(D - mean_r * mean_r);
	double	   *x = malloc(sizeof(double) * N * D);
	int8_t	   *lab = calloc(N, 1);
	SvcRng		r;
	SvcModel	m0,
				m1;
	int64_t		n_lab = 0,
				out0,
				out1;
	double		k;
	bool		same;

	/*
	 * Three blobs (sd 1, centres 10 apart) and anomalies 3-4 sd of the
	 * normal rows' distance beyond its mean from a centre, in a random
	 * direction (test/bench/labelled.py's scatter12; 12-D smaller)
	 */
	svc_rng_seed(&r, 12);
	for (int64_t i = 0; i < N; i++)
	{
		double		norm = 0,
					rad = mean_r + (3.0 + svc_rng_unit(&r)) * sd_r;

		for (int j = 0; j < D; j++)
		{
			double		u1 = svc_rng_unit(&r) + 1e-12,
						u2 = svc_rng_unit(&r);

			x[i * D + j] = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
			norm += x[i * D + j] * x[i * D + j];
		}
		for (int j = 0; j < D; j++)
		{
			if (i >= NN)
				x[i * D + j] *= rad / sqrt(norm);
			x[i * D + j] += j == i % 3 ? 10.0 / sqrt(2.0) : 0.0;
		}
		if (i < NN && i % 10 == 0)
		{
			lab[i] = 1;
			n_lab++;
		}
	}
	CHECK(svc_supervision_lift_scale(2) == 1.0 && svc_supervision_lift_scale(16) == 1.0 &&
		  svc_supervision_lift_scale(32) == 2.0 && svc_supervision_lift_scale(1e6) == 8.0 &&
		  svc_supervision_lift_scale(NAN) == 1.0,
		  "lift scale: 1 up to rho 16, rho / 16, 8 at the most");

	/* gamma "auto": both fits widen alike */
	spread_pair(x, lab, NN, NA, D, 0.0, &m0, &m1, &out0, &out1);
	same = m0.gamma_widen > 0 && m1.gamma == m0.gamma && m1.gamma_widen == m0.gamma_widen &&
		m1.n_sv == m0.n_sv + n_lab && m1.n_clusters == m0.n_clusters &&
		memcmp(m1.sv, m0.sv, sizeof(double) * (size_t) m0.n_sv * D) == 0 &&
		memcmp(m1.alpha, m0.alpha, sizeof(double) * (size_t) m0.n_sv) == 0;
	CHECK(same, "%d-D: the labelled fit widens as the unlabelled one (x %g against x %g, gamma %g "
		  "against %g, %d clusters against %d) and keeps its support vectors", D, m1.gamma_widen,
		  m0.gamma_widen, m1.gamma, m0.gamma, (int) m1.n_clusters, (int) m0.n_clusters);
	k = m1.lab_wide > 0 ? m1.gamma / (SVC_SPREAD_LIFT_WIDTH * m1.lab_gamma) : 0.0;
	printf("  spread %d-D widened x %g: %lld labelled normals, k %g, anomalies outside "
		   "%lld -> %lld of %lld, %d clusters\n", D, m1.gamma_widen, (long long) n_lab, k,
		   (long long) out0, (long long) out1, (long long) NA, (int) m1.n_clusters);
	if (D == 12)
		CHECK(m1.lab_wide == n_lab && k == SVC_SPREAD_WIDENED_K &&
			  lift_weights(&m1, k, m0.offset) && out1 >= out0 + 2,
			  "12-D widened: the kernels sat apart, the lift is k %g (%g), more anomalies end "
			  "outside: %lld -> %lld", k, SVC_SPREAD_WIDENED_K, (long long) out0, (long long) out1);
	else
	{
		bool		own = m1.lab_wide == 0;

		/* the labelled normals follow the solver's terms, at its width */
		for (int64_t j = m0.n_sv; j < m1.n_sv; j++)
			own = own && fabs(m1.alpha[j] - SVC_SPREAD_LIFT_HYPERPLANE * m0.offset) <=
				1e-9 * m0.offset && (m1.sv_gamma == NULL || m1.sv_gamma[j] == m1.gamma);
		CHECK(own && out1 >= out0 && m1.lab_wrong_normal == 0,
			  "%d-D widened: the kernels overlapped, the labelled normals at the solver's width "
			  "weigh 2 q0 (%s) and end inside (%lld outside), anomalies outside %lld -> %lld",
			  D, own ? "yes" : "no", (long long) m1.lab_wrong_normal, (long long) out0,
			  (long long) out1);
	}
	{
		/* the widened labelled model round-trips: section 9, the lift's width or none */
		size_t		len;
		uint8_t    *buf = encode(&m1, &len);
		SvcModel	back;
		SvcError	err;
		bool		decoded = svc_model_decode(&svc_env_malloc, buf, len, &back, &err) == SVC_OK,
					kept;

		kept = decoded && back.gamma_widen == m1.gamma_widen && back.lab_wide == m1.lab_wide &&
			back.lab_gamma == m1.lab_gamma && back.offset == m1.offset;
		for (int64_t i = NN; kept && i < N; i++)
		{
			double		xs[16];

			svc_model_scale_row(&m1, x + i * D, xs);
			kept = svc_model_decision_scaled(&m1, xs) == svc_model_decision_scaled(&back, xs);
		}
		CHECK(kept, "%d-D widened labelled model: the round trip keeps its width, lift and f", D);
		if (decoded)
			svc_model_free(&svc_env_malloc, &back);
		free(buf);
	}
	if (D == 12)
	{
		/* the automatic width, given: no widening, the rugged f's lift */
		double		g = m0.gamma / m0.gamma_widen;

		svc_model_free(&svc_env_malloc, &m0);
		svc_model_free(&svc_env_malloc, &m1);
		spread_pair(x, lab, NN, NA, D, g, &m0, &m1, &out0, &out1);
		k = m1.gamma / (SVC_SPREAD_LIFT_WIDTH * m1.lab_gamma);
		printf("  spread %d-D at gamma %g: %lld labelled normals, k %g, anomalies outside "
			   "%lld -> %lld of %lld\n", D, g, (long long) n_lab, k, (long long) out0,
			   (long long) out1, (long long) NA);
		CHECK(m1.gamma_widen == 0 && m1.lab_wide == n_lab && lift_weights(&m1, k, m0.offset) &&
			  k >= 4.0 && k <= SVC_SPREAD_LIFT_SCALE_MAX && out1 >= out0 + 2,
			  "12-D at the automatic width: the kernels sit apart, the lift widens (k %g) and "
			  "more anomalies end outside: %lld -> %lld", k, (long long) out0, (long long) out1);
	}
	svc_model_free(&svc_env_malloc, &m0);
	svc_model_free(&svc_env_malloc, &m1);
	free(x);
	free(lab);
}

/*
 * A labelled bsgd fit at a gamma so small that the labelled normals' own
 * width, gamma / (SVC_SPREAD_LIFT_WIDTH k), rounds to 0: the normals stay
 * at gamma, and the model decodes (its section of labelled widths only
 * holds a width in (0, gamma)).  At a gamma whose width is still a
 * positive double, the run keeps its width.  (Found by fuzz_state: such
 * a model did not decode.)
 */
static void
test_tiny_gamma(void)
{
	static const double gammas[] = {0x1p-1074, 0x1p-1060};
	int64_t		n = 300;
	double	   *x = blobs(n, 23);
	int8_t	   *lab = calloc((size_t) n, 1);

	for (int64_t i = 0; i < 6; i++)
		lab[i] = i < 3 ? 1 : -1;
	for (int t = 0; t < 2; t++)
	{
		SvcOptions	opt;
		SvcModel	m,
					back;
		SvcError	err;
		SvcStatus	st;
		uint8_t    *buf;
		size_t		len;

		CHECK(parse("{}", &opt, &err) == SVC_OK, "options");
		opt.gamma = gammas[t];
		CHECK(svc_fit_rows_labelled(&svc_env_malloc, x, lab, n, 2, &opt, &m, &err) == SVC_OK,
			  "gamma %a: labelled fit: %s", gammas[t], err.message);
		CHECK(t == 0 ? m.lab_wide == 0 : m.lab_wide == 3 && m.lab_gamma > 0 && m.lab_gamma < m.gamma,
			  "gamma %a: labelled normals' run %lld at %a", gammas[t], (long long) m.lab_wide,
			  m.lab_gamma);
		buf = encode(&m, &len);
		st = svc_model_decode(&svc_env_malloc, buf, len, &back, &err);
		CHECK(st == SVC_OK, "gamma %a: the labelled model decodes: %s %s", gammas[t],
			  err.message, err.detail);
		/* a failed decode leaves what it allocated to the caller's free */
		svc_model_free(&svc_env_malloc, &back);
		free(buf);
		svc_model_free(&svc_env_malloc, &m);
	}
	free(x);
	free(lab);
}

int
main(void)
{
	test_weights();
	test_merge();
	test_fit();
	test_spread();
	test_spread_dims(12);
	test_spread_dims(4);
	test_state();
	test_fit_fails_cleanly();
	test_tiny_gamma();
	return unit_summary("test_supervision");
}
