/*
 * plot.c - an SVG picture of a model over two of its dimensions
 */
#include "plot.h"
#include "label_lineage.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Twenty colours readable on white, the strong ones first (tab20's order). */
static const char *const colours[SVC_PLOT_COLOURS] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
	"#8c564b", "#e377c2", "#17becf", "#bcbd22", "#393b79",
	"#aec7e8", "#ff9896", "#98df8a", "#ffbb78", "#c5b0d5",
	"#c49c94", "#f7b6d2", "#9edae5", "#dbdb8d", "#637939"
};

/* Layout, in pixels: the plot area sits inside these margins. */
#define MARGIN_LEFT 72
#define MARGIN_RIGHT 210
#define MARGIN_TOP 44
#define MARGIN_BOTTOM 56

const char *
svc_plot_colour(int32_t k)
{
	return colours[(k > 0 ? k - 1 : 0) % SVC_PLOT_COLOURS];
}

/* Cluster k's colour at half its brightness, into shade (8 bytes). */
static const char *
dark_colour(int32_t k, char shade[8])
{
	unsigned int rgb = (unsigned int) strtoul(svc_plot_colour(k) + 1, NULL, 16);

	snprintf(shade, 8, "#%02x%02x%02x", (rgb >> 17) & 0x7f, (rgb >> 9) & 0x7f, (rgb >> 1) & 0x7f);
	return shade;
}

void
svc_plot_default(SvcPlotOptions *po)
{
	memset(po, 0, sizeof(*po));
	po->width = 800;
	po->height = 600;
	po->dim_x = 0;
	po->dim_y = 1;
	po->grid = 80;
	po->levels = 3;
	po->support_vectors = true;
	po->equilibria = true;
	po->slice = SVC_PLOT_SLICE_CLUSTERS;
	po->extent = SVC_PLOT_EXTENT_ROBUST;
}

SvcStatus
svc_plot_check(const SvcPlotOptions *po, int32_t dims, SvcError *err)
{
	if (dims < 2)
		return svc_fail(err, SVC_ERR_INVALID_PARAMETER,
						"a plot needs a model of at least 2 dimensions, not %d", dims);
	if (po->width < SVC_PLOT_MIN_SIZE || po->width > SVC_PLOT_MAX_SIZE ||
		po->height < SVC_PLOT_MIN_SIZE || po->height > SVC_PLOT_MAX_SIZE)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER, "invalid value for plot option \"%s\"",
				 po->width < SVC_PLOT_MIN_SIZE || po->width > SVC_PLOT_MAX_SIZE ? "width" : "height");
		svc_error_detail(err, "Expected an integer from %d to %d.", SVC_PLOT_MIN_SIZE,
						 SVC_PLOT_MAX_SIZE);
		return SVC_ERR_INVALID_PARAMETER;
	}
	if (po->dim_x < 0 || po->dim_x >= dims || po->dim_y < 0 || po->dim_y >= dims ||
		po->dim_x == po->dim_y)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER, "invalid value for plot option \"dims\"");
		svc_error_detail(err, "Expected two different dimensions from 1 to %d.", dims);
		return SVC_ERR_INVALID_PARAMETER;
	}
	if (po->grid < SVC_PLOT_MIN_GRID || po->grid > SVC_PLOT_MAX_GRID)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER, "invalid value for plot option \"grid\"");
		svc_error_detail(err, "Expected an integer from %d to %d.", SVC_PLOT_MIN_GRID,
						 SVC_PLOT_MAX_GRID);
		return SVC_ERR_INVALID_PARAMETER;
	}
	if (po->levels < 0 || po->levels > SVC_PLOT_MAX_LEVELS)
	{
		svc_fail(err, SVC_ERR_INVALID_PARAMETER, "invalid value for plot option \"levels\"");
		svc_error_detail(err, "Expected an integer from 0 to %d.", SVC_PLOT_MAX_LEVELS);
		return SVC_ERR_INVALID_PARAMETER;
	}
	return SVC_OK;
}

/* A growing text buffer whose first failure sticks. */
typedef struct Buf
{
	const SvcEnv *env;
	SvcError   *err;
	char	   *p;
	int64_t		len;
	int64_t		cap;
	SvcStatus	st;
} Buf;

static void
buf_printf(Buf *b, const char *fmt,...)
	__attribute__((format(printf, 2, 3)));

static void
buf_printf(Buf *b, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (b->st != SVC_OK)
		return;
	for (;;)
	{
		size_t		room = (size_t) (b->cap - b->len);

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
		{
			b->st = svc_fail(b->err, SVC_ERR_INTERNAL, "could not format the plot");
			return;
		}
		if (b->p && (size_t) n < room)
		{
			b->len += n;
			return;
		}
		b->st = svc_grow(b->env, (void **) &b->p, &b->cap, b->len + n + 1, 1, b->err);
		if (b->st != SVC_OK)
			return;
	}
}

/* Text as XML character data or an attribute value: & < > " ' escaped. */
static void
buf_text(Buf *b, const char *s)
{
	for (; *s; s++)
	{
		switch (*s)
		{
			case '&':
				buf_printf(b, "&amp;");
				break;
			case '<':
				buf_printf(b, "&lt;");
				break;
			case '>':
				buf_printf(b, "&gt;");
				break;
			case '"':
				buf_printf(b, "&quot;");
				break;
			case '\'':
				buf_printf(b, "&#39;");
				break;
			default:
				/* control characters are not allowed in XML 1.0 */
				if ((unsigned char) *s < 0x20 && *s != '\t' && *s != '\n')
					buf_printf(b, " ");
				else
					buf_printf(b, "%c", *s);
				break;
		}
	}
}

/* Grid cell edges a segment can end on. */
enum
{
	EDGE_BOTTOM, EDGE_RIGHT, EDGE_TOP, EDGE_LEFT
};

/* The segments of each of the 16 cases, as pairs of edges (-1: none). */
static const int8_t cases[16][4] = {
	{-1, -1, -1, -1},
	{EDGE_LEFT, EDGE_BOTTOM, -1, -1},
	{EDGE_BOTTOM, EDGE_RIGHT, -1, -1},
	{EDGE_LEFT, EDGE_RIGHT, -1, -1},
	{EDGE_RIGHT, EDGE_TOP, -1, -1},
	{-1, -1, -1, -1},			/* saddle: a and c */
	{EDGE_BOTTOM, EDGE_TOP, -1, -1},
	{EDGE_LEFT, EDGE_TOP, -1, -1},
	{EDGE_LEFT, EDGE_TOP, -1, -1},
	{EDGE_BOTTOM, EDGE_TOP, -1, -1},
	{-1, -1, -1, -1},			/* saddle: b and d */
	{EDGE_RIGHT, EDGE_TOP, -1, -1},
	{EDGE_LEFT, EDGE_RIGHT, -1, -1},
	{EDGE_BOTTOM, EDGE_RIGHT, -1, -1},
	{EDGE_LEFT, EDGE_BOTTOM, -1, -1},
	{-1, -1, -1, -1}
};

static double
cross(double v0, double v1, double level)
{
	double		t = (level - v0) / (v1 - v0);

	return t < 0 ? 0 : (t > 1 ? 1 : t);
}

int64_t
svc_plot_contour(const double *f, int32_t nx, int32_t ny, double level,
				 void (*emit) (void *arg, double x0, double y0, double x1, double y1),
				 void *arg)
{
	int64_t		count = 0;

	for (int32_t j = 0; j < ny; j++)
		for (int32_t i = 0; i < nx; i++)
		{
			/* corners: a bottom-left, b bottom-right, c top-right, d top-left */
			double		a = f[(size_t) j * (nx + 1) + i];
			double		b = f[(size_t) j * (nx + 1) + i + 1];
			double		c = f[(size_t) (j + 1) * (nx + 1) + i + 1];
			double		d = f[(size_t) (j + 1) * (nx + 1) + i];
			int			idx = (a >= level) | (b >= level) << 1 | (c >= level) << 2 | (d >= level) << 3;
			int8_t		seg[4];
			double		px[4],
						py[4];

			memcpy(seg, cases[idx], sizeof(seg));
			if (idx == 5 || idx == 10)
			{
				bool		centre = (a + b + c + d) / 4 >= level;

				/* the inside corners join through the centre when it is inside */
				if ((idx == 5) == centre)
				{
					int8_t		s[4] = {EDGE_BOTTOM, EDGE_RIGHT, EDGE_TOP, EDGE_LEFT};

					memcpy(seg, s, sizeof(seg));
				}
				else
				{
					int8_t		s[4] = {EDGE_LEFT, EDGE_BOTTOM, EDGE_RIGHT, EDGE_TOP};

					memcpy(seg, s, sizeof(seg));
				}
			}
			px[EDGE_BOTTOM] = i + cross(a, b, level);
			py[EDGE_BOTTOM] = j;
			px[EDGE_RIGHT] = i + 1;
			py[EDGE_RIGHT] = j + cross(b, c, level);
			px[EDGE_TOP] = i + cross(d, c, level);
			py[EDGE_TOP] = j + 1;
			px[EDGE_LEFT] = i;
			py[EDGE_LEFT] = j + cross(a, d, level);
			for (int s = 0; s < 4 && seg[s] >= 0; s += 2)
			{
				emit(arg, px[seg[s]], py[seg[s]], px[seg[s + 1]], py[seg[s + 1]]);
				count++;
			}
		}
	return count;
}

/* The mapping from data units to pixels. */
typedef struct Frame
{
	double		xmin,
				xmax,
				ymin,
				ymax;
	double		left,
				right,
				top,
				bottom;
	int32_t		grid;
	int32_t		dim_x;			/* the dimensions drawn */
	int32_t		dim_y;
} Frame;

static double
px_x(const Frame *fr, double x)
{
	return fr->left + (x - fr->xmin) / (fr->xmax - fr->xmin) * (fr->right - fr->left);
}

static double
px_y(const Frame *fr, double y)
{
	return fr->bottom - (y - fr->ymin) / (fr->ymax - fr->ymin) * (fr->bottom - fr->top);
}

typedef struct PathArg
{
	Buf		   *b;
	const Frame *fr;
} PathArg;

static void
emit_path(void *arg, double x0, double y0, double x1, double y1)
{
	PathArg    *pa = (PathArg *) arg;
	const Frame *fr = pa->fr;
	double		sx = (fr->right - fr->left) / fr->grid;
	double		sy = (fr->bottom - fr->top) / fr->grid;

	buf_printf(pa->b, "M%.1f %.1fL%.1f %.1f", fr->left + x0 * sx, fr->bottom - y0 * sy,
			   fr->left + x1 * sx, fr->bottom - y1 * sy);
}

/* A tick step of 1, 2 or 5 times a power of ten, about range / 6. */
static double
tick_step(double range)
{
	double		raw = range / 6;
	double		p = pow(10, floor(log10(raw)));
	double		m = raw / p;

	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* Widen [*lo, *hi] by 5% each side (or to a unit when it is a point). */
static void
pad_range(double *lo, double *hi)
{
	double		r = *hi - *lo;

	if (!(r > 1e-12 * fmax(fabs(*lo), fabs(*hi))) || !(r > 0))
		r = fmax(1.0, fabs(*lo));
	*lo -= 0.05 * r;
	*hi += 0.05 * r;
}

static void
draw_axes(Buf *b, const Frame *fr, const SvcPlotOptions *po)
{
	double		step;

	buf_printf(b, "<g class=\"axes\" font-family=\"sans-serif\" font-size=\"12\" fill=\"#222\">\n");
	buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
			   fr->left, fr->top, fr->right - fr->left, fr->bottom - fr->top);
	step = tick_step(fr->xmax - fr->xmin);
	for (double t = ceil(fr->xmin / step) * step; t <= fr->xmax; t += step)
	{
		double		x = px_x(fr, t);

		buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>"
				   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
				   x, fr->bottom, x, fr->bottom + 5, x, fr->bottom + 19,
				   fabs(t) < 1e-9 * step ? 0.0 : t);
	}
	step = tick_step(fr->ymax - fr->ymin);
	for (double t = ceil(fr->ymin / step) * step; t <= fr->ymax; t += step)
	{
		double		y = px_y(fr, t);

		buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>"
				   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
				   fr->left - 5, y, fr->left, y, fr->left - 8, y + 4,
				   fabs(t) < 1e-9 * step ? 0.0 : t);
	}
	buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">",
			   (fr->left + fr->right) / 2, fr->bottom + 42);
	if (po->x_label)
		buf_text(b, po->x_label);
	else
		buf_printf(b, "features[%d]", po->dim_x + 1);
	buf_printf(b, "</text>\n<text transform=\"translate(%.1f %.1f) rotate(-90)\" "
			   "text-anchor=\"middle\" font-size=\"13\">",
			   fr->left - 52, (fr->top + fr->bottom) / 2);
	if (po->y_label)
		buf_text(b, po->y_label);
	else
		buf_printf(b, "features[%d]", po->dim_y + 1);
	buf_printf(b, "</text>\n</g>\n");
}

/* f over the grid, the dimensions not drawn held at at[]. */
static SvcStatus
grid_values(const SvcEnv *env, const SvcModel *m, const SvcPlotOptions *po,
			const Frame *fr, const double *at, double *f, SvcError *err)
{
	size_t		d = (size_t) m->dims;
	double	   *row = svc_alloc(env, sizeof(double) * d * 2, err);
	int32_t		n = po->grid;

	if (row == NULL)
		return SVC_ERR_NOMEM;
	for (int32_t j = 0; j <= n; j++)
	{
		if (svc_interrupted(env, err))
		{
			svc_free(env, row);
			return SVC_ERR_INTERRUPTED;
		}
		for (int32_t i = 0; i <= n; i++)
		{
			memcpy(row, at, sizeof(double) * d);
			row[po->dim_x] = fr->xmin + (fr->xmax - fr->xmin) * i / n;
			row[po->dim_y] = fr->ymin + (fr->ymax - fr->ymin) * j / n;
			svc_model_scale_row(m, row, row + d);
			f[(size_t) j * (n + 1) + i] = svc_model_decision_scaled(m, row + d);
		}
	}
	svc_free(env, row);
	return SVC_OK;
}

/* A point of the model's scaled space in data units, dimension j. */
static double
unscale(const SvcModel *m, const double *xs, int32_t j)
{
	return xs[j] / m->mul[j] + m->shift[j];
}

/* The grid vertex nearest to a point in data units, or -1 off the grid. */
static int64_t
grid_vertex(const Frame *fr, double x, double y)
{
	double		gx = (x - fr->xmin) / (fr->xmax - fr->xmin) * fr->grid;
	double		gy = (y - fr->ymin) / (fr->ymax - fr->ymin) * fr->grid;

	if (!(gx >= -0.5 && gx <= fr->grid + 0.5 && gy >= -0.5 && gy <= fr->grid + 0.5))
		return -1;
	return (int64_t) floor(gy + 0.5) * (fr->grid + 1) + (int64_t) floor(gx + 0.5);
}

/*
 * Keep only cluster k's part of a slice: the parts of {f >= 0} (vertices
 * joined along grid edges) that hold one of its equilibria; every other
 * vertex of f >= 0 is set to -1, so that neither the boundary nor the
 * level lines of another cluster met by this slice are drawn in it.
 * mark and stack have a slot per vertex.  Returns the highest f kept.
 */
static double
keep_cluster(const SvcModel *m, const Frame *fr, int32_t k, double *f,
			 uint8_t *mark, int64_t *stack)
{
	int32_t		n = fr->grid;
	int64_t		nv = (int64_t) (n + 1) * (n + 1);
	int64_t		top = 0;
	double		ftop = -HUGE_VAL;

	memset(mark, 0, (size_t) nv);
	for (int32_t e = 0; e < m->n_eq; e++)
	{
		const double *q = m->eq + (size_t) e * m->dims;
		int64_t		v;

		if (m->eq_cluster[e] != k)
			continue;
		v = grid_vertex(fr, unscale(m, q, fr->dim_x), unscale(m, q, fr->dim_y));
		if (v >= 0 && f[v] >= 0 && !mark[v])
		{
			mark[v] = 1;
			stack[top++] = v;
		}
	}
	while (top > 0)
	{
		int64_t		v = stack[--top];
		int32_t		i = (int32_t) (v % (n + 1));
		int32_t		j = (int32_t) (v / (n + 1));
		int64_t		next[4] = {i > 0 ? v - 1 : -1, i < n ? v + 1 : -1,
		j > 0 ? v - (n + 1) : -1, j < n ? v + (n + 1) : -1};

		for (int s = 0; s < 4; s++)
			if (next[s] >= 0 && !mark[next[s]] && f[next[s]] >= 0)
			{
				mark[next[s]] = 1;
				stack[top++] = next[s];
			}
	}
	for (int64_t v = 0; v < nv; v++)
	{
		if (!mark[v] && f[v] >= 0)
			f[v] = -1;
		else if (mark[v] && f[v] > ftop)
			ftop = f[v];
	}
	return ftop;
}

/* The equilibrium of cluster k where f is highest, or -1 if it has none. */
static int32_t
top_equilibrium(const SvcModel *m, int32_t k)
{
	int32_t		best = -1;

	for (int32_t e = 0; e < m->n_eq; e++)
		if (m->eq_cluster[e] == k && (best < 0 || m->eq_f[e] > m->eq_f[best]))
			best = e;
	return best;
}

/*
 * Tukey's far-out fences of one coordinate, [q1 - 3 iqr, q3 + 3 iqr], over
 * v (sorted in place); none (infinite) with fewer than 4 values or no
 * spread between the quartiles.
 */
static void
fences(double *v, int64_t n, double *lo, double *hi)
{
	double		q1,
				q3,
				iqr;

	*lo = -HUGE_VAL;
	*hi = HUGE_VAL;
	if (n < 4)
		return;
	qsort(v, (size_t) n, sizeof(double), svc_cmp_double);
	q1 = v[(n - 1) / 4];
	q3 = v[3 * (n - 1) / 4];
	iqr = q3 - q1;
	if (!(iqr > 0) || !isfinite(iqr))
		return;
	*lo = q1 - 3 * iqr;
	*hi = q3 + 3 * iqr;
}

/*
 * The extent of the axes: the rows drawn but the far outliers (an outlier
 * beyond the fences of either coordinate; with extent "all", none), or the
 * support vectors when no row is drawn; padded by 5%.
 */
static SvcStatus
frame_extent(const SvcEnv *env, const SvcModel *m, const SvcPlotOptions *po,
			 const SvcPlotRow *rows, int64_t n, Frame *fr, SvcError *err)
{
	double		xlo = -HUGE_VAL,
				xhi = HUGE_VAL,
				ylo = -HUGE_VAL,
				yhi = HUGE_VAL;

	if (n > 0 && po->extent == SVC_PLOT_EXTENT_ROBUST)
	{
		double	   *v = svc_alloc(env, sizeof(double) * (size_t) n, err);

		if (v == NULL)
			return SVC_ERR_NOMEM;
		for (int64_t i = 0; i < n; i++)
			v[i] = rows[i].x;
		fences(v, n, &xlo, &xhi);
		for (int64_t i = 0; i < n; i++)
			v[i] = rows[i].y;
		fences(v, n, &ylo, &yhi);
		svc_free(env, v);
	}
	fr->xmin = fr->ymin = HUGE_VAL;
	fr->xmax = fr->ymax = -HUGE_VAL;
	for (int pass = 0; pass < 2 && !(fr->xmin <= fr->xmax); pass++)
		for (int64_t i = 0; i < n; i++)
		{
			const SvcPlotRow *r = rows + i;

			/* the second pass, if every row was far: all of them */
			if (pass == 0 && r->outlier &&
				!(r->x >= xlo && r->x <= xhi && r->y >= ylo && r->y <= yhi))
				continue;
			fr->xmin = fmin(fr->xmin, r->x);
			fr->xmax = fmax(fr->xmax, r->x);
			fr->ymin = fmin(fr->ymin, r->y);
			fr->ymax = fmax(fr->ymax, r->y);
		}
	if (n == 0)
		for (int32_t i = 0; i < m->n_sv; i++)
		{
			double		x = unscale(m, m->sv + (size_t) i * m->dims, po->dim_x);
			double		y = unscale(m, m->sv + (size_t) i * m->dims, po->dim_y);

			fr->xmin = fmin(fr->xmin, x);
			fr->xmax = fmax(fr->xmax, x);
			fr->ymin = fmin(fr->ymin, y);
			fr->ymax = fmax(fr->ymax, y);
		}
	if (!isfinite(fr->xmin) || !isfinite(fr->xmax) || !isfinite(fr->ymin) || !isfinite(fr->ymax))
		fr->xmin = fr->ymin = -1, fr->xmax = fr->ymax = 1;
	pad_range(&fr->xmin, &fr->xmax);
	pad_range(&fr->ymin, &fr->ymax);
	return SVC_OK;
}

/* Which side of the frame a row lies beyond, per coordinate: -1, 0 or 1. */
static int
side(double v, double lo, double hi)
{
	return v < lo ? -1 : (v > hi ? 1 : 0);
}

static bool
beyond(const Frame *fr, const SvcPlotRow *r)
{
	return side(r->x, fr->xmin, fr->xmax) != 0 || side(r->y, fr->ymin, fr->ymax) != 0;
}

/*
 * A row beyond the frame: an arrow at the frame's edge (or corner) on the
 * way to it, pointing out, in its cluster's colour (hollow if an outlier).
 */
static void
draw_edge_row(Buf *b, const SvcModel *m, const Frame *fr, const SvcPlotRow *r)
{
	int			sx = side(r->x, fr->xmin, fr->xmax);
	int			sy = side(r->y, fr->ymin, fr->ymax);
	double		ux = sx,
				uy = -sy;		/* pixels: y grows downwards */
	double		norm = sqrt(ux * ux + uy * uy);
	double		cx = px_x(fr, fmin(fmax(r->x, fr->xmin), fr->xmax));
	double		cy = px_y(fr, fmin(fmax(r->y, fr->ymin), fr->ymax));
	int32_t		id = svc_cluster_id(m, r->cluster);
	const char *colour = svc_plot_colour(id);

	ux /= norm;
	uy /= norm;
	/* the tip on the edge, the base 10 pixels inside */
	buf_printf(b, "<path class=\"c%d edge%s\" d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fz\" "
			   "fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
			   id, r->outlier ? " o" : "",
			   cx, cy,
			   cx - 10 * ux - 5 * uy, cy - 10 * uy + 5 * ux,
			   cx - 10 * ux + 5 * uy, cy - 10 * uy - 5 * ux,
			   r->outlier ? "#fff" : colour, colour);
}

static void
draw_legend(Buf *b, const SvcModel *m, const SvcPlotOptions *po, const Frame *fr,
			const int64_t *cluster_rows, int64_t n_outliers, int64_t n_drawn,
			int64_t n_total, int64_t n_beyond, int32_t n_slices)
{
	double		x = fr->right + 18;
	double		y = fr->top + 8;
	int32_t		shown = m->n_clusters < SVC_PLOT_COLOURS ? m->n_clusters : SVC_PLOT_COLOURS;

	buf_printf(b, "<g class=\"legend\" font-family=\"sans-serif\" font-size=\"12\" fill=\"#222\">\n");
	for (int32_t k = 1; k <= shown; k++, y += 17)
		buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>"
				   "<text x=\"%.1f\" y=\"%.1f\">cluster %d: %lld rows</text>\n",
				   x + 5, y, svc_plot_colour(svc_cluster_id(m, k)), x + 16, y + 4,
				   svc_cluster_id(m, k), (long long) cluster_rows[k - 1]);
	if (m->n_clusters > shown)
	{
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">and %d more (colours repeat)</text>\n",
				   x, y + 4, m->n_clusters - shown);
		y += 17;
	}
	y += 6;
	buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#fff\" stroke=\"#555\" stroke-width=\"1.75\"/>"
			   "<text x=\"%.1f\" y=\"%.1f\">outliers (f &lt; 0): %lld</text>\n",
			   x + 5, y, x + 16, y + 4, (long long) n_outliers);
	y += 17;
	if (n_beyond > 0)
	{
		buf_printf(b, "<path d=\"M%.1f %.1fl-10 -5v10z\" fill=\"#fff\" stroke=\"#555\" stroke-width=\"1.5\"/>"
				   "<text class=\"beyond\" x=\"%.1f\" y=\"%.1f\">beyond the axes: %lld</text>\n"
				   "<text x=\"%.1f\" y=\"%.1f\">(drawn at the edge)</text>\n",
				   x + 10, y, x + 16, y + 4, (long long) n_beyond, x + 16, y + 19);
		y += 34;
	}
	if (n_slices > 0)
	{
		char		shade1[8],
					shade2[8];

		buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>"
				   "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>"
				   "<text x=\"%.1f\" y=\"%.1f\">f = 0, per cluster</text>\n",
				   x, y, x + 5.5, y, dark_colour(1, shade1), x + 5.5, y, x + 11, y,
				   dark_colour(2, shade2), x + 16, y + 4);
	}
	else
		buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-width=\"2\"/>"
				   "<text x=\"%.1f\" y=\"%.1f\">f = 0, domain boundary</text>\n",
				   x, y, x + 11, y, x + 16, y + 4);
	y += 17;
	if (po->levels > 0)
	{
		buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"3 2\"/>"
				   "<text x=\"%.1f\" y=\"%.1f\">levels of f &gt; 0</text>\n",
				   x, y, x + 11, y, x + 16, y + 4);
		y += 17;
	}
	if (po->support_vectors)
	{
		buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"4\" height=\"4\" fill=\"none\" "
				   "stroke=\"#333\" stroke-opacity=\"0.6\" stroke-width=\"0.8\"/>"
				   "<text x=\"%.1f\" y=\"%.1f\">support vectors: %d</text>\n",
				   x + 3, y - 2, x + 16, y + 4, m->n_sv);
		y += 17;
	}
	if (po->equilibria)
	{
		buf_printf(b, "<path d=\"M%.1f %.1fl4.5 8h-9z\" fill=\"#fff\" stroke=\"#000\"/>"
				   "<text x=\"%.1f\" y=\"%.1f\">equilibria: %d</text>\n",
				   x + 5, y - 5, x + 16, y + 4, m->n_eq);
		y += 17;
	}
	if (n_drawn < n_total)
	{
		y += 6;
		buf_printf(b, "<text class=\"sampled\" x=\"%.1f\" y=\"%.1f\">showing %lld of %lld rows</text>\n"
				   "<text x=\"%.1f\" y=\"%.1f\">(a uniform sample)</text>\n",
				   x, y + 4, (long long) n_drawn, (long long) n_total, x, y + 21);
		y += 34;
	}
	if (m->dims > 2)
	{
		/* what the lines of f are: a slice, not the whole model */
		y += 6;
		buf_printf(b, "<text class=\"slice\" x=\"%.1f\" y=\"%.1f\">f in a slice: the other %d</text>\n",
				   x, y + 4, m->dims - 2);
		if (n_slices > 0)
		{
			buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">dimension%s at each cluster&#39;s</text>\n"
					   "<text x=\"%.1f\" y=\"%.1f\">highest equilibrium</text>\n",
					   x, y + 21, m->dims > 3 ? "s" : "", x, y + 38);
			if (n_slices < m->n_clusters)
				buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">(clusters 1 to %d)</text>\n",
						   x, y + 55, n_slices);
		}
		else
			buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">dimension%s at the rows&#39; mean</text>\n",
					   x, y + 21, m->dims > 3 ? "s" : "");
	}
	buf_printf(b, "</g>\n");
}

/* A row and where it stands in the order rows are drawn. */
typedef struct Order
{
	int32_t		cluster;
	int64_t		i;
} Order;

/* Clusters by id (by decreasing size), the rows of each in their order. */
static int
cmp_order(const void *a, const void *b)
{
	const Order *p = a,
			   *q = b;

	if (p->cluster != q->cluster)
		return (p->cluster > q->cluster) - (p->cluster < q->cluster);
	return (p->i > q->i) - (p->i < q->i);
}

/*
 * The lines of f: with a slice per cluster, each cluster's own part of its
 * slice (f is computed again for each); else one grid through at.
 */
static SvcStatus
draw_lines(const SvcEnv *env, Buf *b, const SvcModel *m, const SvcPlotOptions *po,
		   Frame *fr, const double *at, int32_t n_slices, SvcError *err)
{
	size_t		nv = (size_t) (po->grid + 1) * (size_t) (po->grid + 1);
	double	   *f = svc_alloc(env, sizeof(double) * nv, err);
	double	   *point = NULL;
	uint8_t    *mark = NULL;
	int64_t    *stack = NULL;
	PathArg		pa = {b, fr};
	SvcStatus	st = SVC_OK;

	if (f == NULL)
		return SVC_ERR_NOMEM;
	if (n_slices > 0 &&
		((point = svc_alloc(env, sizeof(double) * (size_t) m->dims, err)) == NULL ||
		 (mark = svc_alloc(env, nv, err)) == NULL ||
		 (stack = svc_alloc(env, sizeof(int64_t) * nv, err)) == NULL))
		st = SVC_ERR_NOMEM;
	for (int32_t s = 0; st == SVC_OK && s < (n_slices > 0 ? n_slices : 1); s++)
	{
		double		ftop = -HUGE_VAL;
		int32_t		k = s + 1;

		if (n_slices > 0)
		{
			int32_t		e = top_equilibrium(m, k);

			if (e < 0)
				continue;
			for (int32_t j = 0; j < m->dims; j++)
				point[j] = unscale(m, m->eq + (size_t) e * m->dims, j);
		}
		st = grid_values(env, m, po, fr, n_slices > 0 ? point : at, f, err);
		if (st != SVC_OK)
			break;
		if (n_slices > 0)
			ftop = keep_cluster(m, fr, k, f, mark, stack);
		else
			for (size_t v = 0; v < nv; v++)
				ftop = fmax(ftop, f[v]);
		for (int32_t l = 1; l <= po->levels && ftop > 0; l++)
		{
			double		level = ftop * l / (po->levels + 1);

			buf_printf(b, "<path class=\"level\" data-f=\"%g\" fill=\"none\" stroke=\"#888\" "
					   "stroke-width=\"1\" stroke-dasharray=\"3 2\" d=\"", level);
			svc_plot_contour(f, po->grid, po->grid, level, emit_path, &pa);
			buf_printf(b, "\"/>\n");
		}
		/*
		 * slices of two clusters may overlap: each boundary in a dark shade
		 * of its cluster's colour (the colour itself vanishes on its rows)
		 */
		if (n_slices > 0)
		{
			char		shade[8];

			buf_printf(b, "<path class=\"boundary\" data-cluster=\"%d\" fill=\"none\" "
					   "stroke=\"%s\" stroke-width=\"2\" d=\"", svc_cluster_id(m, k),
					   dark_colour(svc_cluster_id(m, k), shade));
		}
		else
			buf_printf(b, "<path class=\"boundary\" fill=\"none\" stroke=\"#000\" stroke-width=\"2\" d=\"");
		svc_plot_contour(f, po->grid, po->grid, 0.0, emit_path, &pa);
		buf_printf(b, "\"/>\n");
	}
	svc_free(env, stack);
	svc_free(env, mark);
	svc_free(env, point);
	svc_free(env, f);
	return st;
}

SvcStatus
svc_plot_svg(const SvcEnv *env, const SvcModel *m, const SvcPlotOptions *po,
			 const double *at, const SvcPlotRow *rows, int64_t n_drawn,
			 int64_t n_total, const int64_t *cluster_rows, int64_t n_outliers,
			 char **svg, size_t *len, SvcError *err)
{
	Buf			b = {env, err, NULL, 0, 0, SVC_OK};
	Frame		fr;
	Order	   *order = NULL;
	int64_t		n_beyond = 0;
	int32_t		n_slices = 0;
	SvcStatus	st;

	*svg = NULL;
	*len = 0;
	st = svc_plot_check(po, m->dims, err);
	if (st != SVC_OK)
		return st;
	st = frame_extent(env, m, po, rows, n_drawn, &fr, err);
	if (st != SVC_OK)
		return st;
	fr.left = MARGIN_LEFT;
	fr.right = po->width - MARGIN_RIGHT;
	fr.top = MARGIN_TOP;
	fr.bottom = po->height - MARGIN_BOTTOM;
	fr.grid = po->grid;
	fr.dim_x = po->dim_x;
	fr.dim_y = po->dim_y;
	if (m->dims > 2 && po->slice == SVC_PLOT_SLICE_CLUSTERS && m->n_eq > 0)
		n_slices = m->n_clusters < SVC_PLOT_COLOURS ? m->n_clusters : SVC_PLOT_COLOURS;

	order = svc_alloc(env, sizeof(Order) * (size_t) (n_drawn > 0 ? n_drawn : 1), err);
	if (order == NULL)
		return SVC_ERR_NOMEM;
	for (int64_t i = 0; i < n_drawn; i++)
	{
		order[i].cluster = rows[i].cluster;
		order[i].i = i;
		n_beyond += beyond(&fr, rows + i);
	}
	qsort(order, (size_t) n_drawn, sizeof(Order), cmp_order);

	buf_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			   "viewBox=\"0 0 %d %d\">\n"
			   "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
			   po->width, po->height, po->width, po->height);
	if (po->title)
	{
		buf_printf(&b, "<text x=\"%.1f\" y=\"26\" text-anchor=\"middle\" font-family=\"sans-serif\" "
				   "font-size=\"16\" fill=\"#222\">", (fr.left + fr.right) / 2);
		buf_text(&b, po->title);
		buf_printf(&b, "</text>\n");
	}
	buf_printf(&b, "<clipPath id=\"area\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/></clipPath>\n",
			   fr.left, fr.top, fr.right - fr.left, fr.bottom - fr.top);
	buf_printf(&b, "<g clip-path=\"url(#area)\">\n");

	/*
	 * Each mark over the ones before: the inliers (the largest cluster
	 * first, so that a small one stays in sight), the support vectors
	 * (faint: they are rows too, and with a large budget they sit on most
	 * of them), the outliers (white inside, so that they stand out among
	 * the inliers) and the rows beyond the axes, the lines of f (thin: they
	 * hide little of what they cross, and outliers lie on the boundary),
	 * the equilibria.
	 */
	buf_printf(&b, "<g class=\"rows\">\n");
	for (int64_t o = 0; o < n_drawn; o++)
	{
		const SvcPlotRow *r = rows + order[o].i;

		if ((o & 4095) == 0 && svc_interrupted(env, err))
			st = SVC_ERR_INTERRUPTED;
		if (st != SVC_OK)
			break;
		if (!r->outlier && !beyond(&fr, r))
			buf_printf(&b, "<circle class=\"c%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
					   svc_cluster_id(m, r->cluster), px_x(&fr, r->x), px_y(&fr, r->y),
					   svc_plot_colour(svc_cluster_id(m, r->cluster)));
	}
	buf_printf(&b, "</g>\n");
	if (st == SVC_OK && po->support_vectors)
	{
		buf_printf(&b, "<g class=\"support-vectors\" fill=\"none\" stroke=\"#333\" "
				   "stroke-opacity=\"0.6\" stroke-width=\"0.8\">\n");
		for (int32_t i = 0; i < m->n_sv; i++)
			buf_printf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"4\" height=\"4\"/>\n",
					   px_x(&fr, unscale(m, m->sv + (size_t) i * m->dims, po->dim_x)) - 2,
					   px_y(&fr, unscale(m, m->sv + (size_t) i * m->dims, po->dim_y)) - 2);
		buf_printf(&b, "</g>\n");
	}
	if (st == SVC_OK)
	{
		buf_printf(&b, "<g class=\"outliers\">\n");
		for (int64_t o = 0; o < n_drawn; o++)
		{
			const SvcPlotRow *r = rows + order[o].i;

			if ((o & 4095) == 0 && svc_interrupted(env, err))
				st = SVC_ERR_INTERRUPTED;
			if (st != SVC_OK)
				break;
			if (r->outlier && !beyond(&fr, r))
				buf_printf(&b, "<circle class=\"c%d o\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#fff\" "
						   "stroke=\"%s\" stroke-width=\"1.75\"/>\n",
						   svc_cluster_id(m, r->cluster), px_x(&fr, r->x), px_y(&fr, r->y),
						   svc_plot_colour(svc_cluster_id(m, r->cluster)));
			else if (beyond(&fr, r))
				draw_edge_row(&b, m, &fr, r);
		}
		buf_printf(&b, "</g>\n");
	}
	if (st == SVC_OK)
		st = draw_lines(env, &b, m, po, &fr, at, n_slices, err);
	svc_free(env, order);
	if (st == SVC_OK && po->equilibria)
	{
		buf_printf(&b, "<g class=\"equilibria\" stroke=\"#000\">\n");
		for (int32_t i = 0; i < m->n_eq; i++)
			buf_printf(&b, "<path d=\"M%.1f %.1fl4.5 8h-9z\" fill=\"%s\"/>\n",
					   px_x(&fr, unscale(m, m->eq + (size_t) i * m->dims, po->dim_x)),
					   px_y(&fr, unscale(m, m->eq + (size_t) i * m->dims, po->dim_y)) - 5,
					   svc_plot_colour(svc_cluster_id(m, m->eq_cluster[i])));
		buf_printf(&b, "</g>\n");
	}
	buf_printf(&b, "</g>\n");
	draw_axes(&b, &fr, po);
	draw_legend(&b, m, po, &fr, cluster_rows, n_outliers, n_drawn, n_total, n_beyond, n_slices);
	buf_printf(&b, "</svg>\n");
	if (st == SVC_OK)
		st = b.st;
	if (st != SVC_OK)
	{
		svc_free(env, b.p);
		return st;
	}
	*svg = b.p;
	*len = (size_t) b.len;
	return SVC_OK;
}
