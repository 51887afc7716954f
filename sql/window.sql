-- svc_cluster and svc_cluster_row: clustering as a window function
SET extra_float_digits = 0;

-- two groups of three discs, 300 rows each, deterministic
CREATE TABLE win_points AS
SELECT i AS id, i % 2 AS grp,
       ARRAY[(ARRAY[0, 4, 8])[i % 3 + 1] + (i % 2) * 20 + r * cos(i * 2.4),
             (ARRAY[0, 4, 0])[i % 3 + 1] + r * sin(i * 2.4)]::float8[] AS features
FROM generate_series(1, 600) AS i,
     LATERAL (SELECT sqrt(i * 0.618034 % 1)::float8 AS r) AS s;

-- one model per partition: each group's three discs
SELECT grp, cluster, count(*)
FROM (SELECT grp, svc_cluster(features, '{"budget": 60}') OVER (PARTITION BY grp) AS cluster
      FROM win_points) t
GROUP BY 1, 2 ORDER BY 1, 2;

-- the same ids as svc_train + svc_predict on the same rows and options
-- (every row fits in the sample: the order does not matter)
WITH m AS (SELECT grp, svc_train(features, '{"budget": 60}') AS model
           FROM win_points GROUP BY grp),
     w AS (SELECT id, grp, features,
                  svc_cluster(features, '{"budget": 60}') OVER (PARTITION BY grp) AS cluster
           FROM win_points)
SELECT count(*) AS rows,
       count(*) FILTER (WHERE w.cluster = svc_predict(m.model, w.features)) AS same_cluster
FROM w JOIN m USING (grp);

-- past the sample too (100 of 300 rows a group) the sample does not depend
-- on the order: the aggregate and the window in either order give the
-- same model (the same f to the last bit)
WITH m AS (SELECT grp, svc_train(features, '{"sample": 100, "budget": 40, "seed": 3}' ORDER BY id) AS model
           FROM win_points GROUP BY grp),
     w AS (SELECT id, grp, features,
                  svc_cluster_row(features, '{"sample": 100, "budget": 40, "seed": 3}')
                      OVER (PARTITION BY grp ORDER BY id) AS r,
                  svc_cluster_row(features, '{"sample": 100, "budget": 40, "seed": 3}')
                      OVER (PARTITION BY grp ORDER BY id DESC) AS r_desc
           FROM win_points)
SELECT count(*) AS rows,
       count(*) FILTER (WHERE (w.r).cluster = svc_predict(m.model, w.features)) AS same_cluster,
       count(*) FILTER (WHERE (w.r).decision = svc_decision(m.model, w.features)) AS same_f,
       count(*) FILTER (WHERE (w.r_desc).decision = svc_decision(m.model, w.features)) AS same_f_desc,
       min(svc_model_info(m.model)->>'rows_used') AS rows_used
FROM w JOIN m USING (grp);

-- svc_cluster_row: the cluster with f and the outlier flag, as svc_assign
-- gives them; two fields of one call train once
WITH m AS (SELECT svc_train(features) AS model FROM win_points WHERE grp = 0),
     w AS (SELECT id, features, svc_cluster_row(features) OVER () AS r
           FROM win_points WHERE grp = 0)
SELECT count(*) AS rows,
       count(*) FILTER (WHERE (w.r).cluster = a.cluster) AS same_cluster,
       count(*) FILTER (WHERE (w.r).decision = a.decision) AS same_decision,
       count(*) FILTER (WHERE (w.r).outlier = a.outlier) AS same_outlier,
       count(*) FILTER (WHERE (w.r).outlier) BETWEEN 5 AND 30 AS some_outliers
FROM w JOIN svc_assign((SELECT model FROM m), 'SELECT id, features FROM win_points WHERE grp = 0') a
     USING (id);
SELECT id, (r).cluster, round((r).decision::numeric, 3) AS decision, (r).outlier
FROM (SELECT id, svc_cluster_row(features) OVER () AS r FROM win_points WHERE grp = 0) t
WHERE id IN (6, 8, 10) ORDER BY id;

-- NULL options are the defaults; NULL features get NULL and are not
-- trained on, as svc_train skips them
SELECT count(*) FILTER (WHERE a IS DISTINCT FROM b) AS differ
FROM (SELECT svc_cluster(features) OVER () AS a,
             svc_cluster(features, NULL) OVER () AS b FROM win_points WHERE grp = 1) t;
WITH rows AS (SELECT id, CASE WHEN id % 9 = 1 THEN NULL ELSE features END AS features
              FROM win_points WHERE grp = 1),
     m AS (SELECT svc_train(features) AS model FROM rows)
SELECT count(*) FILTER (WHERE c IS NULL) AS null_clusters,
       count(*) FILTER (WHERE c = svc_predict(m.model, features)) AS same_cluster,
       (SELECT svc_model_info(model)->>'rows_seen' FROM m) AS rows_seen
FROM (SELECT features, svc_cluster(features) OVER () AS c FROM rows) t, m;
-- a partition of NULL rows has no model
SELECT svc_cluster(NULL::float8[]) OVER () AS c, (svc_cluster_row(NULL::float8[]) OVER ()).cluster
FROM generate_series(1, 2);

-- errors: options that differ within a partition, rows of another length,
-- bad options, bad values
SELECT svc_cluster(features, jsonb_build_object('seed', id % 2)) OVER () FROM win_points;
SELECT svc_cluster(CASE WHEN id = 5 THEN ARRAY[1, 2, 3]::float8[] ELSE features END) OVER ()
FROM win_points;
-- (terse: the detail lists every option)
\set VERBOSITY terse
SELECT svc_cluster(features, '{"budgett": 5}') OVER () FROM win_points;
\set VERBOSITY default
SELECT svc_cluster(ARRAY[1, 'NaN']::float8[]) OVER ();
-- the same options spelled two ways are the same options
SELECT count(DISTINCT c) AS clusters
FROM (SELECT svc_cluster(features, CASE WHEN id % 2 = 0 THEN '{"seed": 7}'::jsonb
                                       ELSE '{"seed": 7.0}'::jsonb END) OVER () AS c
      FROM win_points WHERE grp = 0) t;
