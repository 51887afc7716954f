-- svc_plot_svg: the picture's content and its options (test/integration/plot_chromium_test.py renders it)
CREATE TABLE plot_points AS
SELECT i AS id, ARRAY[(i % 2) * 6 + sqrt(i / 2 * 0.618034 % 1) * cos(i / 2),
                      sqrt(i / 2 * 0.618034 % 1) * sin(i / 2), i % 5]::float8[] AS features
FROM generate_series(1, 400) AS i;
CREATE TABLE plot_model AS SELECT svc_train(features[1:2], '{"budget": 40}') AS model FROM plot_points;
CREATE TABLE plot_model3 AS SELECT svc_train(features, '{"budget": 40}') AS model FROM plot_points;

SELECT left(svg, 38) AS head, svg LIKE '%</svg>' || E'\n' AS closed,
       svg LIKE '%class="boundary"%' AS boundary, svg LIKE '%class="level"%' AS levels,
       svg LIKE '%cluster 1: %' AS legend, svg LIKE '%showing%' AS sampled,
       (length(svg) - length(replace(svg, '<circle class="c', ''))) / length('<circle class="c') AS dots
FROM (SELECT svc_plot_svg(model, 'SELECT id, features[1:2] FROM plot_points') AS svg FROM plot_model) t;

-- options: size, dims of a wider model, levels, a bound on the rows drawn, labels escaped
SELECT svg LIKE '%width="400" height="300"%' AS size, svg LIKE '%features[3]%' AS dim_3,
       svg NOT LIKE '%class="level"%' AS no_levels, svg LIKE '%showing 50 of 400 rows%' AS sampled,
       svg LIKE '%a &lt;b&gt; &amp; c%' AS escaped
FROM (SELECT svc_plot_svg(model, 'SELECT features FROM plot_points',
        '{"width": 400, "height": 300, "dims": [3, 1], "levels": 0, "max_points": 50, "title": "a <b> & c"}') AS svg
      FROM plot_model3) t;
-- a model of 3 dimensions drawn over 2 is a slice, and says so: by default one
-- per cluster (a boundary each), or through the rows' mean
SELECT (length(svg) - length(replace(svg, 'class="boundary" data-cluster=', ''))) / length('class="boundary" data-cluster=')
         = (SELECT (svc_model_info(model) ->> 'n_clusters')::int FROM plot_model3) AS boundary_per_cluster,
       svg LIKE '%>f in a slice: the other 1<%highest equilibrium<%' AS caption
FROM (SELECT svc_plot_svg(model, 'SELECT features FROM plot_points') AS svg FROM plot_model3) t;
SELECT svg LIKE '%class="boundary" fill%' AND svg NOT LIKE '%data-cluster%' AS one_boundary,
       svg LIKE '%at the rows&#39; mean<%' AS caption
FROM (SELECT svc_plot_svg(model, 'SELECT features FROM plot_points', '{"slice": "mean"}') AS svg FROM plot_model3) t;
SELECT svg NOT LIKE '%f in a slice%' AS no_caption_in_2d
FROM (SELECT svc_plot_svg(model, 'SELECT features[1:2] FROM plot_points') AS svg FROM plot_model) t;

-- rows far out: drawn at the edge and counted, unless the extent is "all"
WITH q AS (SELECT 'SELECT features[1:2] FROM plot_points UNION ALL
                   SELECT ARRAY[500 * cos(i), 500 * sin(i)] FROM generate_series(1, 4) i' AS sql)
SELECT svg LIKE '%>beyond the axes: 4<%' AS counted,
       (length(svg) - length(replace(svg, ' edge o"', ''))) / length(' edge o"') AS arrows,
       svg NOT LIKE '%>400<%' AS axes_not_stretched,
       svg_all NOT LIKE '%beyond the axes%' AND svg_all LIKE '%>400<%' AS extent_all
FROM (SELECT svc_plot_svg(model, q.sql) AS svg,
             svc_plot_svg(model, q.sql, '{"extent": "all"}') AS svg_all FROM plot_model, q) t;

-- NULL options are the defaults; a NULL model or query gives NULL
SELECT svc_plot_svg(model, 'SELECT features[1:2] FROM plot_points', NULL) =
       svc_plot_svg(model, 'SELECT features[1:2] FROM plot_points') AS same,
       svc_plot_svg(NULL, 'SELECT 1') IS NULL AS null_model
FROM plot_model;

-- more rows than one fetch (1,000): the legend's counts are svc_assign's, so
-- what the scorer keeps between rows (its certificates) outlives each batch;
-- the small budget gives many equilibria, so the certificates decide many rows
-- (with them in the per-batch context the counts differed); keep_isolated false
-- keeps them to 19 clusters, each with a legend entry (the legend lists 20)
CREATE TABLE plot_many AS
SELECT i AS id, ARRAY[(i % 3) * 5 + 0.5 * sqrt(-2 * ln((i / 3 + 0.5) / 1167)) * cos(i * 2.39996),
                      0.5 * sqrt(-2 * ln((i / 3 + 0.5) / 1167)) * sin(i * 2.39996)]::float8[] AS features
FROM generate_series(1, 3500) AS i;
CREATE TABLE plot_many_model AS
SELECT svc_train(features, '{"budget": 40, "keep_isolated": false}') AS model FROM plot_many;
WITH a AS (SELECT a.* FROM plot_many_model m,
             svc_assign(m.model, 'SELECT id, features FROM plot_many') a),
     p AS (SELECT svc_plot_svg(model, 'SELECT features FROM plot_many') AS svg FROM plot_many_model)
SELECT (SELECT count(DISTINCT cluster) FROM a) AS clusters,
       (SELECT bool_and(p.svg LIKE '%>cluster ' || cluster || ': ' || n || ' rows<%')
        FROM (SELECT cluster, count(*) AS n FROM a GROUP BY cluster) c, p) AS legend_counts,
       (SELECT p.svg LIKE '%outliers (f &lt; 0): ' || (SELECT count(*) FROM a WHERE outlier) || '<%' FROM p)
         AS outlier_count;

-- errors
SELECT svc_plot_svg(model, 'SELECT features FROM plot_points', '{"dims": [1, 4]}') FROM plot_model3;
SELECT svc_plot_svg(model, 'SELECT features FROM plot_points', '{"dims": [2, 2]}') FROM plot_model3;
SELECT svc_plot_svg(model, 'SELECT features FROM plot_points', '{"dims": 2}') FROM plot_model3;
SELECT svc_plot_svg(model, 'SELECT features[1:2] FROM plot_points', '{"widht": 300}') FROM plot_model;
SELECT svc_plot_svg(model, 'SELECT features[1:2] FROM plot_points', '{"width": 10}') FROM plot_model;
SELECT svc_plot_svg(model, 'SELECT features[1:2] FROM plot_points', '{"title": 5}') FROM plot_model;
SELECT svc_plot_svg(model, 'SELECT features FROM plot_points', '{"slice": "median"}') FROM plot_model3;
SELECT svc_plot_svg(model, 'SELECT features[1:2] FROM plot_points', '{"extent": true}') FROM plot_model;
SELECT svc_plot_svg(model, 'SELECT features[1:2] FROM plot_points', '[1]') FROM plot_model;
SELECT svc_plot_svg(model, 'SELECT id, id, features[1:2] FROM plot_points') FROM plot_model;
SELECT svc_plot_svg(model, 'SELECT features FROM plot_points') FROM plot_model;
SELECT svc_plot_svg(model, 'DELETE FROM plot_points') FROM plot_model;
SELECT svc_plot_svg(svc_train(ARRAY[i]::float8[]), 'SELECT ARRAY[1]::float8[]') FROM generate_series(1, 20) i;
