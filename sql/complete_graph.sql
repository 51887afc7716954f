-- labeling "complete-graph": Ben-Hur's labelling over the training rows
SET extra_float_digits = 0;

-- known structures without random(): three blobs, and a ring around a blob
CREATE TABLE cg_shapes AS
SELECT 'blobs' AS shape, i AS id, (i % 3) + 1 AS class,
       ARRAY[(ARRAY[0, 6, 3])[(i % 3) + 1] + 0.6 * cos(i * 2.399) * sqrt((i % 17 + 1) / 17.0),
             (ARRAY[0, 0, 5])[(i % 3) + 1] + 0.6 * sin(i * 2.399) * sqrt((i % 17 + 1) / 17.0)]::float8[] AS f
FROM generate_series(1, 600) i
UNION ALL
SELECT 'ringblob', i, CASE WHEN i % 4 = 0 THEN 2 ELSE 1 END,
       CASE WHEN i % 4 = 0
            THEN ARRAY[0.5 * cos(i * 2.399) * sqrt((i % 13 + 1) / 13.0),
                       0.5 * sin(i * 2.399) * sqrt((i % 13 + 1) / 13.0)]
            ELSE ARRAY[(4 + 0.2 * sin(i * 12.9898)) * cos(i * 0.7),
                       (4 + 0.2 * sin(i * 12.9898)) * sin(i * 0.7)]
       END::float8[]
FROM generate_series(1, 800) i;

CREATE TABLE cg_models AS
SELECT shape, svc_train(f, '{"labeling": "complete-graph"}') AS model
FROM cg_shapes GROUP BY shape;

-- the model says how it was labelled, and has no saddle tree
SELECT shape, i->>'labeling' AS labeling, i->>'cut' AS cut, i->'segment_points' AS segment_points,
       i->'n_tree_edges' AS n_tree_edges, (i->>'n_clusters')::int AS n_clusters,
       (i->>'n_equilibria')::int >= (i->>'n_clusters')::int AS equilibria_cover_clusters
FROM (SELECT shape, svc_model_info(model) AS i FROM cg_models) s ORDER BY shape;

-- svc_assign: every row once, the true number of clusters, NMI against the
-- classes by svc_cvi, and the same ids as svc_predict
CREATE TABLE cg_assigned AS
SELECT m.shape, a.*
FROM cg_models m,
     LATERAL svc_assign(m.model, format('SELECT id, f FROM cg_shapes WHERE shape = %L', m.shape)) a;
SELECT s.shape, count(*) AS rows_in,
       (SELECT count(DISTINCT id) FROM cg_assigned a WHERE a.shape = s.shape) AS rows_out,
       (SELECT count(DISTINCT cluster) FROM cg_assigned a WHERE a.shape = s.shape) AS clusters
FROM cg_shapes s GROUP BY s.shape ORDER BY s.shape;
SELECT shape,
       (SELECT round(value::numeric, 2) FROM svc_cvi(format(
          'SELECT s.f, a.cluster, s.class FROM cg_shapes s JOIN cg_assigned a USING (shape, id) WHERE shape = %L',
          shape)) WHERE cvi = 'nmi') AS nmi
FROM cg_models ORDER BY shape;
SELECT a.shape, avg((svc_predict(m.model, s.f) = a.cluster)::int) AS predict_agrees,
       bool_and(a.decision = svc_decision(m.model, s.f)) AS decision_agrees
FROM cg_assigned a JOIN cg_shapes s USING (shape, id) JOIN cg_models m USING (shape)
GROUP BY a.shape ORDER BY a.shape;

-- the same rows and options give the same bytes; segment_points is kept
SELECT svc_train(f, '{"labeling": "complete-graph"}') = (SELECT model FROM cg_models WHERE shape = 'blobs')
       AS deterministic
FROM cg_shapes WHERE shape = 'blobs';
SELECT i->>'labeling' AS labeling, i->'segment_points' AS segment_points, (i->>'n_clusters')::int AS n_clusters
FROM (SELECT svc_model_info(svc_train(f, '{"labeling": "complete-graph", "segment_points": 3}')) AS i
      FROM cg_shapes WHERE shape = 'blobs') s;
-- "auto" (the default) spaces the points by the segment's length; a count
-- given, 20 among them (the default before "auto"), is kept as given
SELECT o AS options, svc_model_info(svc_train(f, o::jsonb))->'segment_points' AS segment_points
FROM cg_shapes, (VALUES ('{"labeling": "complete-graph", "segment_points": "auto"}'),
                        ('{"labeling": "complete-graph", "segment_points": 20}')) v(o)
WHERE shape = 'blobs' GROUP BY o ORDER BY o;

-- four 2-D Gaussian blobs of 100 rows, sd 1, centres 7 apart on a square,
-- with the defaults of both solvers: no shattering into small components
-- and no joining; four clusters, NMI >= 0.95 against the blobs
SELECT setseed(0.3);
CREATE TABLE cg_four AS
SELECT i AS id, (i % 4) + 1 AS class,
       ARRAY[(ARRAY[0, 7, 0, 7])[(i % 4) + 1] + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()),
             (ARRAY[0, 0, 7, 7])[(i % 4) + 1] + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())]::float8[] AS f
FROM generate_series(1, 400) i;
SELECT solver, (svc_model_info(m)->>'n_clusters')::int AS n_clusters,
       (SELECT value FROM svc_cvi(format('SELECT f, svc_predict(%L::bytea, f), class FROM cg_four', m))
        WHERE cvi = 'nmi') >= 0.95 AS nmi_at_least_095
FROM (SELECT solver, svc_train(f, jsonb_build_object('labeling', 'complete-graph', 'solver', solver)) AS m
      FROM cg_four, (VALUES ('bsgd'), ('smo')) v(solver) GROUP BY solver) t
ORDER BY solver;

-- errors, with their detail and hint
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text; hint text;
BEGIN
  EXECUTE sql;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hint = PG_EXCEPTION_HINT;
  RETURN st || ': ' || msg || coalesce(E'\n  DETAIL: ' || nullif(det, ''), '')
         || coalesce(E'\n  HINT: ' || nullif(hint, ''), '');
END $$;
SELECT pg_temp.try($q$SELECT svc_train(f, '{"labeling": "graph"}') FROM cg_shapes$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"labeling": "complete-graph", "segment_points": 0}') FROM cg_shapes$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"segment_points": 1001}') FROM cg_shapes$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"segment_points": 2.5}') FROM cg_shapes$q$);
-- no tree to cut again: as with "paper", a recut that changes nothing is
-- the model itself, any other is refused
SELECT pg_temp.try($q$SELECT svc_recut(model, '{"n_clusters": 2}') FROM cg_models$q$);
SELECT bool_and(svc_recut(model, '{}') = model) AS empty_recut_same FROM cg_models;
-- past 3000 rows the graph refuses, before training; a sample is the way out
CREATE TABLE cg_big AS
SELECT i AS id, ARRAY[cos(i * 2.399) * (i % 7), sin(i * 2.399) * (i % 5)]::float8[] AS f
FROM generate_series(1, 3001) i;
SELECT pg_temp.try($q$SELECT svc_train(f, '{"labeling": "complete-graph"}') FROM cg_big$q$);
SELECT (svc_model_info(svc_train(f, '{"labeling": "complete-graph", "sample": 400}'))->>'rows_used')::int
       AS rows_used
FROM cg_big;

DROP TABLE cg_shapes, cg_models, cg_assigned, cg_big, cg_four;
