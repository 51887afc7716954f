/*
 * test_plot.c - the SVG picture: marching squares, escaping, layout, errors
 */
#include "unit.h"
#include "unit_data.h"

#include "fit.h"
#include "label.h"
#include "plot.h"

typedef struct Seg
{
	int			n;
	double		max_err;		/* largest |distance from centre - radius| */
} Seg;

static void
on_circle(void *arg, double x0, double y0, double x1, double y1)
{
	Seg		   *s = arg;
	double		e0 = fabs(hypot(x0 - 10, y0 - 10) - 6);
	double		e1 = fabs(hypot(x1 - 10, y1 - 10) - 6);

	s->n++;
	s->max_err = fmax(s->max_err, fmax(e0, e1));
}

/* A cone 6 - r over a 20 x 20 grid: the level 0 is the circle of radius 6. */
static void
test_contour(void)
{
	double		f[21 * 21];
	Seg			s = {0, 0};
	int64_t		n;

	for (int j = 0; j <= 20; j++)
		for (int i = 0; i <= 20; i++)
			f[j * 21 + i] = 6 - hypot(i - 10, j - 10);
	n = svc_plot_contour(f, 20, 20, 0.0, on_circle, &s);
	CHECK(n == s.n && n > 30 && n < 60, "segments of the circle: %lld", (long long) n);
	/* linear interpolation on a cell of side 1: within a twentieth of it */
	CHECK(s.max_err < 0.05, "segment ends on the circle, off by %g", s.max_err);

	/* no level inside the range: no segment */
	s.n = 0;
	CHECK(svc_plot_contour(f, 20, 20, 100.0, on_circle, &s) == 0 && s.n == 0, "no segment above the peak");

	/* a saddle cell (5 and 10) gives two segments */
	{
		/* row-major: a, b on the bottom row, d, c on the top; a and c inside */
		double		g[4] = {1, -1, -1, 1};

		s.n = 0;
		CHECK(svc_plot_contour(g, 1, 1, 0.0, on_circle, &s) == 2, "saddle cell: two segments");
	}
}

static bool
contains(const char *s, const char *what)
{
	return strstr(s, what) != NULL;
}

static void
test_svg(void)
{
	double	   *x = blobs(300, 5);
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	SvcLabelWork work;
	SvcPlotOptions po;
	SvcPlotRow *rows = malloc(sizeof(SvcPlotRow) * 300);
	int64_t		sizes[64] = {0};
	int64_t		outliers = 0;
	double		at[2] = {0, 0};
	double		scaled[2];
	char	   *svg;
	size_t		len;

	svc_options_default(&opt);
	opt.budget = 40;
	CHECK(svc_fit_rows(&svc_env_malloc, x, 300, 2, &opt, &m, &err) == SVC_OK, "fit: %s", err.message);
	CHECK(m.n_clusters >= 1 && m.n_clusters <= 64, "clusters: %d", m.n_clusters);
	CHECK(svc_label_work_init(&svc_env_malloc, &m, &work, &err) == SVC_OK, "work");
	for (int i = 0; i < 300; i++)
	{
		svc_model_scale_row(&m, x + 2 * i, scaled);
		rows[i].x = x[2 * i];
		rows[i].y = x[2 * i + 1];
		rows[i].outlier = svc_model_decision_scaled(&m, scaled) < 0;
		rows[i].cluster = svc_label_predict(&m, scaled, &work, NULL);
		sizes[rows[i].cluster - 1]++;
		outliers += rows[i].outlier;
	}

	svc_plot_default(&po);
	po.title = "a <title> & \"quotes\" 'too'";
	po.x_label = "x\x01";
	CHECK(svc_plot_svg(&svc_env_malloc, &m, &po, at, rows, 200, 300, sizes, outliers,
					   &svg, &len, &err) == SVC_OK, "svg: %s", err.message);
	CHECK(len == strlen(svg), "length");
	CHECK(contains(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"600\""), "header");
	CHECK(contains(svg, "a &lt;title&gt; &amp; &quot;quotes&quot; &#39;too&#39;"), "title escaped");
	CHECK(!contains(svg, "<title>") && !contains(svg, "\x01"), "nothing unescaped");
	CHECK(contains(svg, "class=\"boundary\"") && contains(svg, "d=\"M"), "a boundary path with segments");
	CHECK(contains(svg, "class=\"level\""), "level lines");
	CHECK(contains(svg, "showing 200 of 300 rows"), "the sample is said");
	CHECK(contains(svg, "cluster 1: "), "legend");
	CHECK(contains(svg, svc_plot_colour(1)), "cluster 1's colour");
	CHECK(contains(svg, "features[2]"), "default y label");
	CHECK(contains(svg, "</svg>\n"), "closed");
	free(svg);

	/* every row drawn: no sample line; no levels, support vectors, equilibria */
	po.levels = 0;
	po.support_vectors = false;
	po.equilibria = false;
	CHECK(svc_plot_svg(&svc_env_malloc, &m, &po, at, rows, 300, 300, sizes, outliers,
					   &svg, &len, &err) == SVC_OK, "svg 2");
	CHECK(!contains(svg, "showing") && !contains(svg, "class=\"level\"") &&
		  !contains(svg, "support-vectors") && !contains(svg, "class=\"equilibria\""), "options off");
	free(svg);

	/* no rows: the extent of the support vectors */
	CHECK(svc_plot_svg(&svc_env_malloc, &m, &po, at, rows, 0, 0, sizes, 0,
					   &svg, &len, &err) == SVC_OK, "svg without rows");
	free(svg);

	/* bad options */
	po.dim_y = 0;
	CHECK(svc_plot_svg(&svc_env_malloc, &m, &po, at, rows, 300, 300, sizes, outliers,
					   &svg, &len, &err) == SVC_ERR_INVALID_PARAMETER &&
		  strstr(err.message, "\"dims\"") && svg == NULL, "same dims refused: %s", err.message);
	po.dim_y = 1;
	po.grid = 5;
	CHECK(svc_plot_check(&po, 2, &err) == SVC_ERR_INVALID_PARAMETER, "grid too small");
	po.grid = 80;
	po.width = 100000;
	CHECK(svc_plot_check(&po, 2, &err) == SVC_ERR_INVALID_PARAMETER && strstr(err.message, "width"), "width");
	po.width = 800;
	CHECK(svc_plot_check(&po, 1, &err) == SVC_ERR_INVALID_PARAMETER, "1-D model refused");

	/* every allocation failure and interrupt is an error, with nothing leaked */
	for (long budget = 0; budget < 40; budget++)
	{
		UnitBudget	b = {budget, 0};
		SvcEnv		env = {.alloc = unit_fail_after_alloc, .release = unit_counted_free,
		.interrupt = unit_stop_after, .ctx = &b, .realloc = unit_fail_after_realloc};
		SvcStatus	st = svc_plot_svg(&env, &m, &po, at, rows, 300, 300, sizes, outliers,
									  &svg, &len, &err);

		if (st == SVC_OK)
		{
			b.live--;
			free(svg);
		}
		CHECK(b.live == 0, "budget %ld: %ld blocks leaked", budget, b.live);
	}

	svc_label_work_free(&svc_env_malloc, &work);
	svc_model_free(&svc_env_malloc, &m);
	free(rows);
	free(x);
}

/* Where what first appears in svg, or the length past its end if nowhere. */
static size_t
at_of(const char *svg, const char *what)
{
	const char *p = strstr(svg, what);

	return p ? (size_t) (p - svg) : strlen(svg) + 1;
}

static int
count_of(const char *svg, const char *what)
{
	int			n = 0;

	for (const char *p = svg; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* The pixel box of the segments of the path that starts at p ("d=\"M..."). */
static void
path_box(const char *p, double box[4])
{
	double		x0,
				y0,
				x1,
				y1;
	int			used;

	box[0] = box[1] = HUGE_VAL;
	box[2] = box[3] = -HUGE_VAL;
	p = strstr(p, "d=\"") + 3;
	while (sscanf(p, "M%lf %lfL%lf %lf%n", &x0, &y0, &x1, &y1, &used) == 4)
	{
		box[0] = fmin(box[0], fmin(x0, x1));
		box[1] = fmin(box[1], fmin(y0, y1));
		box[2] = fmax(box[2], fmax(x0, x1));
		box[3] = fmax(box[3], fmax(y0, y1));
		p += used;
	}
}

/* The rows of a trained model as the glue clusters them. */
static SvcPlotRow *
plot_rows(const SvcModel *m, const double *x, int64_t n, int64_t *sizes, int64_t *outliers)
{
	SvcLabelWork work;
	SvcError	err;
	SvcPlotRow *rows = malloc(sizeof(SvcPlotRow) * (size_t) n);
	double	   *scaled = malloc(sizeof(double) * (size_t) m->dims);

	CHECK(svc_label_work_init(&svc_env_malloc, m, &work, &err) == SVC_OK, "work");
	*outliers = 0;
	for (int64_t i = 0; i < n; i++)
	{
		svc_model_scale_row(m, x + i * m->dims, scaled);
		rows[i].x = x[i * m->dims];
		rows[i].y = x[i * m->dims + 1];
		rows[i].outlier = svc_model_decision_scaled(m, scaled) < 0;
		rows[i].cluster = svc_label_predict(m, scaled, &work, NULL);
		sizes[rows[i].cluster - 1]++;
		*outliers += rows[i].outlier;
	}
	svc_label_work_free(&svc_env_malloc, &work);
	free(scaled);
	return rows;
}

/*
 * What keeps the default picture readable: far outliers drawn as arrows at
 * the edge and counted, the axes spanning the rest; the marks in order.
 */
static void
test_readable(void)
{
	int64_t		n = 310;
	double	   *x = blobs(n, 11);
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	SvcPlotOptions po;
	SvcPlotRow *rows;
	int64_t		sizes[64] = {0};
	int64_t		outliers;
	double		at[2] = {0, 0};
	char	   *svg;
	size_t		len;
	int32_t		last = 0;
	bool		by_cluster = true;
	const char *p;

	/* ten rows far out (a radius of 200 around data within about 8) */
	for (int i = 0; i < 10; i++)
	{
		x[2 * (300 + i)] = 200 * cos(i * 0.7);
		x[2 * (300 + i) + 1] = 200 * sin(i * 0.7);
	}
	svc_options_default(&opt);
	opt.budget = 60;
	/*
	 * keep_isolated (the default) keeps a lone far row's support vector,
	 * and its hill makes the row an inlier: the far rows here are the
	 * picture's outliers only with the rule before 0.5.0
	 */
	opt.keep_isolated = 0;
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, 2, &opt, &m, &err) == SVC_OK, "fit: %s", err.message);
	rows = plot_rows(&m, x, n, sizes, &outliers);
	for (int i = 300; i < 310; i++)
		CHECK(rows[i].outlier, "far row %d is an outlier", i);

	svc_plot_default(&po);
	CHECK(svc_plot_svg(&svc_env_malloc, &m, &po, at, rows, n, n, sizes, outliers,
					   &svg, &len, &err) == SVC_OK, "svg: %s", err.message);
	CHECK(count_of(svg, " edge o\"") == 10, "ten far rows as arrows: %d", count_of(svg, " edge o\""));
	CHECK(contains(svg, ">beyond the axes: 10<"), "the legend counts them");
	/* the axes' ticks stay within the data's range (at most 1 apart at 2 per unit) */
	CHECK(!contains(svg, ">50<") && !contains(svg, ">-50<") && !contains(svg, ">100<"),
		  "no tick out where the far rows are");
	/* marks in order: inliers, support vectors, outliers and arrows, lines, equilibria */
	CHECK(at_of(svg, "class=\"rows\"") < at_of(svg, "class=\"support-vectors\"") &&
		  at_of(svg, "class=\"support-vectors\"") < at_of(svg, "class=\"outliers\"") &&
		  at_of(svg, "class=\"outliers\"") < at_of(svg, "class=\"level\"") &&
		  at_of(svg, "class=\"level\"") < at_of(svg, "class=\"boundary\"") &&
		  at_of(svg, "class=\"boundary\"") < at_of(svg, "class=\"equilibria\"") &&
		  at_of(svg, "class=\"equilibria\"") < strlen(svg), "marks in order");
	/* inliers by cluster id (by decreasing size: a small cluster on top) */
	for (p = strstr(svg, "<circle class=\"c"); p && p < svg + at_of(svg, "class=\"support-vectors\"");
		 p = strstr(p + 1, "<circle class=\"c"))
	{
		int32_t		k = atoi(p + strlen("<circle class=\"c"));

		by_cluster &= k >= last;
		last = k;
	}
	CHECK(by_cluster && last == m.n_clusters, "inliers drawn cluster by cluster, up to %d", last);
	CHECK(!contains(svg, "f in a slice"), "a 2-D model is no slice");
	free(svg);

	/* extent all: no row beyond the axes, the ticks out to the far rows */
	po.extent = SVC_PLOT_EXTENT_ALL;
	CHECK(svc_plot_svg(&svc_env_malloc, &m, &po, at, rows, n, n, sizes, outliers,
					   &svg, &len, &err) == SVC_OK, "svg: %s", err.message);
	CHECK(!contains(svg, " edge") && !contains(svg, "beyond the axes") && contains(svg, ">200<"),
		  "extent all draws every row in place");
	free(svg);

	/* a far row that is an inlier (a cluster of the model) is never pushed to the edge */
	po.extent = SVC_PLOT_EXTENT_ROBUST;
	rows[300].outlier = false;
	CHECK(svc_plot_svg(&svc_env_malloc, &m, &po, at, rows, n, n, sizes, outliers,
					   &svg, &len, &err) == SVC_OK, "svg: %s", err.message);
	CHECK(count_of(svg, " edge") == 0 || !contains(svg, ">beyond the axes: 10<"),
		  "an inlier far out widens the axes");
	CHECK(contains(svg, ">200<"), "to its place");
	free(svg);

	svc_model_free(&svc_env_malloc, &m);
	free(rows);
	free(x);
}

/* The pixel width of the boundary path of cluster k (0: the only one). */
static double
boundary_width(const char *svg, int32_t k)
{
	char		tag[64];
	const char *p;
	double		box[4];

	if (k > 0)
		snprintf(tag, sizeof(tag), "class=\"boundary\" data-cluster=\"%d\"", k);
	else
		snprintf(tag, sizeof(tag), "class=\"boundary\"");
	p = strstr(svg, tag);
	if (p == NULL)
		return -1;
	path_box(p, box);
	return box[0] <= box[2] ? box[2] - box[0] : 0;
}

/*
 * A model of 3 dimensions, three clusters apart in the two drawn (about
 * 0-6 in x, 518 pixels wide): with spread 8 each at another height in the
 * third, where a slice through the rows' mean meets only the middle one
 * and a slice per cluster draws each one's boundary; with spread 0 at one
 * height, where each cluster's slice meets all three and must draw only
 * its own.
 */
static void
test_slices(double spread)
{
	int64_t		n = 300;
	double	   *x2 = blobs(n, 5);
	double	   *x = malloc(sizeof(double) * 3 * (size_t) n);
	double		at[3];
	SvcOptions	opt;
	SvcModel	m;
	SvcError	err;
	SvcPlotOptions po;
	SvcPlotRow *rows;
	int64_t		sizes[64] = {0};
	int64_t		outliers;
	char	   *svg;
	size_t		len;
	int			narrow = 0;

	SvcRng		rng;

	svc_rng_seed(&rng, 3);
	for (int64_t i = 0; i < n; i++)
	{
		x[3 * i] = x2[2 * i];
		x[3 * i + 1] = x2[2 * i + 1];
		x[3 * i + 2] = (i % 3) * spread + 0.6 * (svc_rng_unit(&rng) - 0.5);
	}
	svc_options_default(&opt);
	opt.budget = 60;
	opt.scale = SVC_SCALE_NONE;
	opt.gamma = 1;
	CHECK(svc_fit_rows(&svc_env_malloc, x, n, 3, &opt, &m, &err) == SVC_OK, "fit: %s", err.message);
	CHECK(m.n_clusters == 3, "spread %g: three clusters: %d", spread, m.n_clusters);
	rows = plot_rows(&m, x, n, sizes, &outliers);
	for (int j = 0; j < 3; j++)
	{
		at[j] = 0;
		for (int64_t i = 0; i < n; i++)
			at[j] += x[3 * i + j] / n;
	}

	svc_plot_default(&po);
	CHECK(svc_plot_svg(&svc_env_malloc, &m, &po, at, rows, n, n, sizes, outliers,
					   &svg, &len, &err) == SVC_OK, "svg: %s", err.message);
	CHECK(count_of(svg, "class=\"boundary\" data-cluster=") == 3, "a boundary per cluster");
	CHECK(contains(svg, ">f in a slice: the other 1<") && contains(svg, "highest equilibrium"),
		  "the caption says it is a slice per cluster");
	for (int32_t k = 1; k <= 3; k++)
	{
		double		w = boundary_width(svg, k);

		narrow += w > 10 && w < 518 * 0.4;
	}
	CHECK(narrow == 3, "spread %g: each boundary drawn around its own cluster only (%d of 3)",
		  spread, narrow);
	free(svg);

	po.slice = SVC_PLOT_SLICE_MEAN;
	CHECK(svc_plot_svg(&svc_env_malloc, &m, &po, at, rows, n, n, sizes, outliers,
					   &svg, &len, &err) == SVC_OK, "svg: %s", err.message);
	CHECK(count_of(svg, "class=\"boundary\"") == 1 && !contains(svg, "data-cluster"),
		  "slice mean: one boundary");
	CHECK(contains(svg, "at the rows&#39; mean"), "the caption says where");
	if (spread > 0)
		CHECK(boundary_width(svg, 0) < 518 * 0.4, "spread %g: the mean's slice meets one cluster (%g)",
			  spread, boundary_width(svg, 0));
	else
		CHECK(boundary_width(svg, 0) > 518 * 0.6, "spread 0: the mean's slice meets all (%g)",
			  boundary_width(svg, 0));
	free(svg);

	/* every allocation failure and interrupt of the slices is an error, with nothing leaked */
	po.slice = SVC_PLOT_SLICE_CLUSTERS;
	for (int kind = 0; kind < 2; kind++)
	{
		bool		done = false;

		for (long budget = 0; budget < 100000 && !done; budget++)
		{
			UnitBudget	b = {budget, 0};
			SvcEnv		fail = {.alloc = unit_fail_after_alloc, .release = unit_counted_free,
			.ctx = &b, .realloc = unit_fail_after_realloc};
			SvcEnv		stop = {.alloc = unit_counted_alloc, .release = unit_counted_free,
			.interrupt = unit_stop_after, .ctx = &b, .realloc = unit_counted_realloc};
			SvcStatus	st = svc_plot_svg(kind == 0 ? &fail : &stop, &m, &po, at, rows, n, n,
										  sizes, outliers, &svg, &len, &err);

			if (st == SVC_OK)
			{
				b.live--;
				free(svg);
				done = true;
			}
			else
				CHECK(st == (kind == 0 ? SVC_ERR_NOMEM : SVC_ERR_INTERRUPTED) && svg == NULL,
					  "kind %d, budget %ld: %d", kind, budget, (int) st);
			CHECK(b.live == 0, "kind %d, budget %ld: %ld blocks leaked", kind, budget, b.live);
		}
		CHECK(done, "kind %d: the picture is made with enough room", kind);
	}

	svc_model_free(&svc_env_malloc, &m);
	free(rows);
	free(x);
	free(x2);
}

int
main(void)
{
	test_contour();
	test_svg();
	test_readable();
	test_slices(8);
	test_slices(0);
	return unit_summary("test_plot");
}
