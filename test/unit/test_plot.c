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

int
main(void)
{
	test_contour();
	test_svg();
	return unit_summary("test_plot");
}
