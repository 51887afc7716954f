-- svc_assign (Algorithm 3 and the saddle tree) and svc_predict
SET extra_float_digits = 0;

-- known structures, generated without random(): three blobs, two rings
-- around a blob, two moons
CREATE TABLE shapes AS
SELECT 'blobs' AS shape, i AS id, (i % 3) + 1 AS class,
       ARRAY[(ARRAY[0, 6, 3])[(i % 3) + 1] + 0.6 * cos(i * 2.399) * sqrt((i % 17 + 1) / 17.0),
             (ARRAY[0, 0, 5])[(i % 3) + 1] + 0.6 * sin(i * 2.399) * sqrt((i % 17 + 1) / 17.0)]::float8[] AS f
FROM generate_series(1, 600) i
UNION ALL
SELECT 'rings', i, (i % 3) + 1,
       ARRAY[r * cos(i * 2.399), r * sin(i * 2.399)]::float8[]
FROM (SELECT i, (ARRAY[0.0, 3.0, 6.0])[(i % 3) + 1] + 0.25 * sin(i * 12.9898) AS r
      FROM generate_series(1, 900) i) s
UNION ALL
SELECT 'moons', i, (i % 2) + 1,
       CASE WHEN i % 2 = 0
            THEN ARRAY[cos(t) + 0.08 * sin(i * 7.1), sin(t) + 0.08 * cos(i * 3.3)]
            ELSE ARRAY[1 - cos(t) + 0.08 * sin(i * 7.1), 0.5 - sin(t) + 0.08 * cos(i * 3.3)]
       END::float8[]
FROM (SELECT i, pi() * ((i * 0.618034) - floor(i * 0.618034)) AS t FROM generate_series(1, 600) i) s;

-- the defaults find the blobs; the rings and moons need the budget to cover
-- their length (see README, "Choosing options")
CREATE TABLE shape_models AS
SELECT shape, svc_train(f, CASE shape WHEN 'blobs' THEN '{}'
                                      WHEN 'moons' THEN '{"budget": 200}'
                                      ELSE '{"budget": 200, "gamma": 8}' END::jsonb) AS model
FROM shapes GROUP BY shape;

CREATE TABLE assigned AS
SELECT m.shape, a.*
FROM shape_models m,
     LATERAL svc_assign(m.model, format('SELECT id, f FROM shapes WHERE shape = %L', m.shape)) a;

-- every row comes back once
SELECT s.shape, count(*) AS rows_in, (SELECT count(*) FROM assigned a WHERE a.shape = s.shape) AS rows_out,
       (SELECT count(DISTINCT id) FROM assigned a WHERE a.shape = s.shape) AS distinct_ids
FROM shapes s GROUP BY s.shape ORDER BY s.shape;

-- the true number of clusters, and quality against the classes
SELECT a.shape, count(DISTINCT a.cluster) AS clusters,
       (svc_model_info(m.model)->>'n_clusters')::int AS model_clusters,
       (svc_cvi_agg(s.f, a.cluster, s.class)->>'nmi')::float8 >= 0.9 AS nmi_at_least_0_9
FROM assigned a JOIN shapes s USING (shape, id) JOIN shape_models m USING (shape)
GROUP BY a.shape, m.model ORDER BY a.shape;

-- ids are 1..K by decreasing size
SELECT shape, bool_and(n_prev IS NULL OR n_prev >= n) AS sizes_decrease, min(cluster) AS first_id
FROM (SELECT shape, cluster, count(*) AS n, lag(count(*)) OVER (PARTITION BY shape ORDER BY cluster) AS n_prev
      FROM assigned GROUP BY shape, cluster) s
GROUP BY shape ORDER BY shape;

-- svc_predict gives the same ids as svc_assign
SELECT a.shape, avg((svc_predict(m.model, s.f) = a.cluster)::int) AS agreement
FROM assigned a JOIN shapes s USING (shape, id) JOIN shape_models m USING (shape)
GROUP BY a.shape ORDER BY a.shape;

-- decision and outlier agree with svc_decision
SELECT bool_and(a.decision = svc_decision(m.model, s.f)) AS same_decision,
       bool_and(a.outlier = (a.decision < 0)) AS outlier_is_negative_f,
       avg(a.outlier::int) < 0.1 AS few_outliers
FROM assigned a JOIN shapes s USING (shape, id) JOIN shape_models m USING (shape);

-- NULL features come back with a NULL cluster; other id types work
SELECT count(*) AS rows, count(cluster) AS assigned, count(*) FILTER (WHERE decision IS NULL) AS null_rows
FROM svc_assign((SELECT model FROM shape_models WHERE shape = 'blobs'),
                'SELECT id::int, CASE WHEN id % 10 = 0 THEN NULL ELSE f END FROM shapes WHERE shape = ''blobs''');

-- Algorithm 3 as the paper wrote it: B_eps trajectories, nearest B_eps row for the rest
CREATE TABLE paper_model AS
SELECT svc_train(f, '{"labeling": "paper", "nu": 0.2}') AS model FROM shapes WHERE shape = 'blobs';
SELECT svc_model_info(model)->>'labeling' AS labeling, (svc_model_info(model)->>'epsilon')::float8 > 0 AS epsilon_set
FROM paper_model;
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids, count(cluster) AS assigned,
       count(DISTINCT cluster) >= 3 AS at_least_three_clusters
FROM svc_assign((SELECT model FROM paper_model), 'SELECT id, f FROM shapes WHERE shape = ''blobs''');

-- an empty query returns no rows
SELECT count(*) AS none FROM svc_assign((SELECT model FROM paper_model), 'SELECT 1::bigint, ARRAY[1.0, 2.0]::float8[] WHERE false');
SELECT count(*) AS none FROM svc_assign((SELECT model FROM shape_models WHERE shape = 'blobs'), 'SELECT 1::bigint, ARRAY[1.0, 2.0]::float8[] WHERE false');

-- bad queries
\set VERBOSITY terse
SELECT * FROM svc_assign((SELECT model FROM paper_model), 'SELECT id FROM shapes');
SELECT * FROM svc_assign((SELECT model FROM paper_model), 'SELECT id, f, class FROM shapes');
SELECT * FROM svc_assign((SELECT model FROM paper_model), 'SELECT f, id FROM shapes');
SELECT * FROM svc_assign((SELECT model FROM paper_model), 'SELECT id, f::text[] FROM shapes');
SELECT count(*) AS real_features_work
FROM svc_assign((SELECT model FROM shape_models WHERE shape = 'blobs'), 'SELECT id, f::real[] FROM shapes WHERE shape = ''blobs''');
-- domains over the accepted types work as their base types, ids and all
CREATE DOMAIN shape_id AS integer CHECK (VALUE > 0);
CREATE DOMAIN shape_point AS float8[];
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids, bool_and(a.cluster = b.cluster) AS same_clusters
FROM svc_assign((SELECT model FROM shape_models WHERE shape = 'blobs'),
                'SELECT (id + 1)::shape_id, f::shape_point FROM shapes WHERE shape = ''blobs''') a
JOIN svc_assign((SELECT model FROM shape_models WHERE shape = 'blobs'),
                'SELECT id + 1, f FROM shapes WHERE shape = ''blobs''') b USING (id);
-- the columns are checked before the first row is read
SELECT * FROM svc_assign((SELECT model FROM paper_model), 'SELECT id, f::text[] FROM shapes WHERE id / (id - id) = 1');
SELECT * FROM svc_assign((SELECT model FROM paper_model), 'SELECT NULL::bigint, f FROM shapes');
SELECT * FROM svc_assign((SELECT model FROM paper_model), 'SELECT 1, ARRAY[1.0, 2.0, 3.0]::float8[]');
SELECT * FROM svc_assign((SELECT model FROM paper_model), 'SELECT 1, ARRAY[1.0, ''NaN'']::float8[]');
SELECT * FROM svc_assign((SELECT model FROM paper_model), 'SELEC nonsense');
SELECT * FROM svc_assign((SELECT model FROM paper_model), 'DELETE FROM shapes');
SELECT * FROM svc_assign('\x00'::bytea, 'SELECT id, f FROM shapes');
SELECT count(*) AS still_there FROM shapes;

-- bandwidth_k: two dense blobs inside a sparse ring that nearly touches
-- them.  One width breaks the ring into arcs or gives ring rows to the
-- blobs, even cut at three clusters; a width per support vector finds the
-- three (README, "Choosing options")
CREATE TABLE ring_blobs AS
SELECT i AS id, (i % 2) + 1 AS class,
       ARRAY[(CASE i % 2 WHEN 0 THEN -1.6 ELSE 1.6 END) + 1.2 * sqrt((i % 17 + 1) / 17.0) * cos(i * 2.399),
             1.2 * sqrt((i % 17 + 1) / 17.0) * sin(i * 2.399)]::float8[] AS f
FROM generate_series(1, 300) i
UNION ALL
SELECT 300 + i, 3, ARRAY[r * cos(i * 2.399), r * sin(i * 2.399)]::float8[]
FROM (SELECT i, 3.3 + 0.25 * sin(i * 12.9898) AS r FROM generate_series(1, 150) i) s;

CREATE TABLE ring_models AS
SELECT k, svc_train(f, jsonb_build_object('bandwidth_k', k)) AS model
FROM ring_blobs, (VALUES (0), (15)) v(k) GROUP BY k;

SELECT k, svc_model_info(model)->'format_version' AS format_version,
       svc_model_info(model)->'bandwidth_k' AS bandwidth_k
FROM ring_models ORDER BY k;

CREATE TABLE ring_assigned AS
SELECT m.k, c.cut, a.*
FROM ring_models m, (VALUES ('auto', '{}'), ('3', '{"n_clusters": 3}')) c(cut, opts),
     LATERAL svc_assign(m.model, 'SELECT id, f FROM ring_blobs', c.opts::jsonb) a;

SELECT a.k, a.cut, count(DISTINCT a.cluster) AS clusters,
       round(((svc_cvi_agg(r.f, a.cluster, r.class)->>'nmi')::float8)::numeric, 1) AS nmi
FROM ring_assigned a JOIN ring_blobs r USING (id)
GROUP BY a.k, a.cut ORDER BY a.k, a.cut;

-- with widths: svc_predict = svc_assign, decision = svc_decision, the
-- outlier share is outlier_fraction (0.05) of the training rows, and the
-- model survives a text round trip
SELECT bool_and(svc_predict(m.model, r.f) = a.cluster) AS predict_agrees,
       bool_and(a.decision = svc_decision(m.model, r.f)) AS same_decision,
       avg(a.outlier::int) BETWEEN 0.04 AND 0.06 AS outliers_near_5_percent,
       bool_and(m.model::text::bytea = m.model) AS text_round_trip
FROM ring_assigned a JOIN ring_blobs r USING (id) JOIN ring_models m USING (k)
WHERE a.k = 15 AND a.cut = 'auto';
