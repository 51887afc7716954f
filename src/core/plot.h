/*
 * plot.h - an SVG picture of a model over two of its dimensions
 *
 * The picture shows the domain boundary f = 0 and a few level lines of f
 * (marching squares on a grid), the rows coloured by cluster with the
 * outliers hollow, the support vectors and the equilibria, axes in the
 * data's units, and a legend with the cluster sizes.  The caller supplies
 * the rows already clustered (the glue runs a query and svc_label_predict),
 * at most a bounded number of them; the grid is computed here.
 *
 * What keeps the default picture readable: the axes span the rows but the
 * far outliers (beyond Tukey's far-out fences of either coordinate), which
 * are drawn as arrows at the edge and counted in the legend; marks are
 * drawn in an order where none hides a more telling one (inliers by
 * decreasing cluster size, faint support vectors, outliers white inside,
 * arrows, the lines of f, equilibria); and a model of more than two
 * dimensions is drawn as slices, one per cluster through its highest
 * equilibrium by default, with a caption that says so.
 */
#ifndef SVC_PLOT_H
#define SVC_PLOT_H

#include "svc_core.h"
#include "model.h"

/* Colours with a legend entry each; past them the colours repeat. */
#define SVC_PLOT_COLOURS 20

/*
 * Where a model of more than two dimensions is cut to draw f: through each
 * cluster's highest equilibrium (at most SVC_PLOT_COLOURS clusters, each
 * drawing only its own part of the slice), or through one point given by
 * the caller (the mean of the rows).  A 2-D model has no slice.
 */
typedef enum SvcPlotSlice
{
	SVC_PLOT_SLICE_CLUSTERS = 0,
	SVC_PLOT_SLICE_MEAN = 1
} SvcPlotSlice;

/* The axes' extent: every row, or the rows but the far outliers. */
typedef enum SvcPlotExtent
{
	SVC_PLOT_EXTENT_ROBUST = 0,
	SVC_PLOT_EXTENT_ALL = 1
} SvcPlotExtent;

typedef struct SvcPlotOptions
{
	int32_t		width;			/* pixels, the whole picture */
	int32_t		height;
	int32_t		dim_x;			/* 0-based dimensions drawn */
	int32_t		dim_y;
	int32_t		grid;			/* cells per side of the grid of f */
	int32_t		levels;			/* level lines inside the domain, besides f = 0 */
	bool		support_vectors;	/* draw them */
	bool		equilibria;		/* draw them */
	SvcPlotSlice slice;			/* models of more than 2 dimensions */
	SvcPlotExtent extent;
	const char *title;			/* UTF-8, escaped here; NULL: none */
	const char *x_label;		/* NULL: "features[dim_x + 1]" */
	const char *y_label;
} SvcPlotOptions;

#define SVC_PLOT_MIN_SIZE 200
#define SVC_PLOT_MAX_SIZE 4000
#define SVC_PLOT_MIN_GRID 10
#define SVC_PLOT_MAX_GRID 500
#define SVC_PLOT_MAX_LEVELS 20

void		svc_plot_default(SvcPlotOptions *po);

/* Check the options against a model of dims dimensions. */
SvcStatus	svc_plot_check(const SvcPlotOptions *po, int32_t dims, SvcError *err);

/* One row as drawn: its two coordinates (data units) and its result. */
typedef struct SvcPlotRow
{
	double		x;
	double		y;
	int32_t		cluster;		/* 1..n_clusters */
	bool		outlier;
} SvcPlotRow;

/*
 * The picture as a NUL-terminated SVG document allocated from env (*len
 * without the NUL).  at holds a value per dimension (data units) for the
 * dimensions not drawn (the slice SVC_PLOT_SLICE_MEAN draws); rows are the n_drawn rows drawn, out of n_total
 * the query returned (the picture says when it shows a sample);
 * cluster_rows[k - 1] counts the query's rows in cluster k (n_clusters of
 * them) and n_outliers its outliers.
 */
SvcStatus	svc_plot_svg(const SvcEnv *env, const SvcModel *m, const SvcPlotOptions *po,
						 const double *at, const SvcPlotRow *rows, int64_t n_drawn,
						 int64_t n_total, const int64_t *cluster_rows,
						 int64_t n_outliers, char **svg, size_t *len, SvcError *err);

/* The colour of the cluster of id k (1-based; label_lineage.h) as "#rrggbb":
 * a cluster that keeps its id across a refresh keeps its colour. */
const char *svc_plot_colour(int32_t k);

/*
 * Marching squares: the segments of the level line f = level over a grid
 * of (nx + 1) x (ny + 1) values (row-major, y outer), in grid coordinates
 * (x in [0, nx], y in [0, ny]).  Calls emit for each segment; returns the
 * number of segments.  Saddle cells are resolved by the cell's mean.
 */
int64_t		svc_plot_contour(const double *f, int32_t nx, int32_t ny, double level,
							 void (*emit) (void *arg, double x0, double y0,
										   double x1, double y1),
							 void *arg);

#endif							/* SVC_PLOT_H */
