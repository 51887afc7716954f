-- svc_train(features, label, options): a few labelled rows steer the model.
-- Three blobs and planted anomalies on a ring around the first; a tenth of
-- the anomalies and one normal row in fifty carry their label.
CREATE TABLE lab_pts AS
SELECT i AS id,
       CASE WHEN i % 25 = 0
            THEN ARRAY[1.8 * cos(i * 0.7), 1.8 * sin(i * 0.7)]
            ELSE ARRAY[(i % 3) * 6 + 0.5 * cos(i * 2.399) * sqrt((i % 29) / 29.0),
                       (i % 3) * 3 + 0.5 * sin(i * 2.399) * sqrt((i % 29) / 29.0)] END::float8[] AS f,
       i % 25 = 0 AS anomaly,
       CASE WHEN i % 250 = 0 THEN -1 WHEN i % 50 = 1 THEN 1 END AS label
FROM generate_series(1, 3000) i;
ANALYZE lab_pts;

-- no labelled row: the same model bytes as the two-argument aggregate
SELECT svc_train(f, NULL::integer, '{"budget": 60}') = svc_train(f, '{"budget": 60}') AS same_bytes
FROM lab_pts;
SELECT svc_train(f, NULL::integer, '{"solver": "smo"}') = svc_train(f, '{"solver": "smo"}') AS same_bytes_smo
FROM lab_pts WHERE id <= 1500;
-- every solver takes labelled rows, which act after it
SELECT s, (svc_model_info(m)->'labelled'->>'wrong_side_anomaly')::int AS anomalies_inside
FROM (SELECT s, svc_train(f, label, jsonb_build_object('solver', s)) AS m
      FROM lab_pts, (VALUES ('aid'), ('incremental')) v(s) WHERE id <= 1500 GROUP BY s) q
ORDER BY s;

-- the report: counts, weights, and every labelled anomaly outside.  By
-- default (label_spread) the solver trains on every row alike, so every
-- row's bound stays C (weights 1), and each labelled row becomes a support
-- vector of f; with label_spread false they enter the solver's bounds, as
-- before 0.5.0
CREATE TABLE lab_models AS
SELECT s, svc_train(f, label, o::jsonb) AS m
FROM lab_pts, (VALUES ('bsgd', '{"budget": 60}'), ('smo', '{"solver": "smo"}'),
                      ('bsgd bounds', '{"budget": 60, "label_spread": false}'),
                      ('smo bounds', '{"solver": "smo", "gamma": 2, "label_spread": false}')) v(s, o)
GROUP BY s, o;
SELECT s, (svc_model_info(m)->>'format_version')::int AS format,
       svc_model_info(m)->'labelled'->'normal' AS normal,
       svc_model_info(m)->'labelled'->'anomaly' AS anomaly,
       svc_model_info(m)->'labelled'->'sampled' AS sampled,
       svc_model_info(m)->'labelled'->'label_spread' AS spread,
       (svc_model_info(m)->'labelled'->>'weight_min')::float8 < 1 AS lowered,
       (svc_model_info(m)->'labelled'->>'weight_max')::float8 > 1 AS raised,
       svc_model_info(m)->'labelled'->'wrong_side_anomaly' AS anomalies_inside,
       svc_model_info(m)->'labelled'->>'label_interpolation' AS curve
FROM lab_models ORDER BY s;
SELECT s, count(*) FILTER (WHERE svc_decision(m, f) >= 0) AS labelled_anomalies_inside,
       count(*) AS labelled_anomalies
FROM lab_pts, lab_models WHERE label = -1 GROUP BY s ORDER BY s;
-- the spread keeps outlier_fraction's share of the rows outside (0.05 of
-- 3000: about 150 rows), the labelled anomalies among them
SELECT s, count(*) FILTER (WHERE svc_decision(m, f) < 0) AS outside
FROM lab_pts, lab_models WHERE s IN ('bsgd', 'smo') GROUP BY s ORDER BY s;
-- the bounds: the exact solver's labelled anomalies enter its dual with a
-- sign, and at the default anomaly_bound every one of them ends outside
-- (f < 0); a bound of C itself (anomaly_bound 1) is too small to push them
-- all out
SELECT (svc_model_info(m)->'labelled'->>'anomaly_bound')::float8 AS anomaly_bound,
       (svc_model_info(m)->'labelled'->>'weight_min')::float8 = 1 AS sphere_moves_labelled_rows_only
FROM lab_models WHERE s = 'smo bounds';
SELECT (svc_model_info(m)->'labelled'->>'anomaly_bound')::float8 AS anomaly_bound,
       (svc_model_info(m)->'labelled'->>'wrong_side_anomaly')::int > 0 AS some_inside
FROM (SELECT svc_train(f, label, '{"solver": "smo", "gamma": 2, "anomaly_bound": 1, "label_spread": false}') AS m
      FROM lab_pts) q;
-- the counts in the report are those of the rows' f
SELECT s, (svc_model_info(m)->'labelled'->>'wrong_side_normal')::int =
          count(*) FILTER (WHERE label = 1 AND svc_decision(m, f) < 0) AS normals_counted
FROM lab_pts, lab_models GROUP BY s, m ORDER BY s;
-- the model survives a dump as text
SELECT s, svc_model_info(m::text::bytea) = svc_model_info(m) AS round_trip FROM lab_models ORDER BY s;

-- the solver sees the rows as it would without their labels (the same
-- gamma, drawn from the same row pairs, up to the scaling's rounding);
-- bsgd's labelled normals lift f at an eighth of its gamma, the sphere's
-- at its own
SELECT s, abs((svc_model_info(l.m)->>'gamma')::float8 /
               (svc_model_info(u.m)->>'gamma')::float8 - 1) < 1e-12 AS same_gamma,
       round(((svc_model_info(l.m)->'labelled'->>'lift_gamma')::float8 /
              (svc_model_info(l.m)->>'gamma')::float8)::numeric, 4) AS lift_width_ratio
FROM lab_models l JOIN (
    SELECT s2 AS s, svc_train(f, o::jsonb) AS m
    FROM lab_pts, (VALUES ('bsgd', '{"budget": 60}'), ('smo', '{"solver": "smo"}')) v(s2, o)
    GROUP BY s2, o) u USING (s)
ORDER BY s;
-- a warm start cannot continue the wider lift
SELECT svc_train(f, '{"budget": 60}', (SELECT m FROM lab_models WHERE s = 'bsgd')) FROM lab_pts;

-- labelled anomalies move the domain around them: of the planted anomalies
-- that carry no label, as many or more are outside than without labels
-- (bsgd at budget 60 finds all 108 of them either way; smo finds more)
WITH u AS (
    SELECT s2 AS s, svc_train(f, o::jsonb) AS m
    FROM lab_pts, (VALUES ('bsgd', '{"budget": 60}'), ('smo', '{"solver": "smo"}')) v(s2, o)
    GROUP BY s2, o)
SELECT s, count(*) FILTER (WHERE anomaly AND svc_decision(l.m, f) < 0) AS found_labelled,
       count(*) FILTER (WHERE anomaly AND svc_decision(u.m, f) < 0) AS found_unlabelled,
       count(*) FILTER (WHERE NOT anomaly AND svc_decision(l.m, f) < 0) AS normals_out_labelled,
       count(*) FILTER (WHERE NOT anomaly AND svc_decision(u.m, f) < 0) AS normals_out_unlabelled
FROM lab_pts, lab_models l JOIN u USING (s)
WHERE label IS NULL GROUP BY s ORDER BY s;

-- the labelled rows are kept apart: a small sample keeps all of them
SELECT svc_model_info(svc_train(f, label, '{"sample": 100, "budget": 30}'))->'labelled'->'normal' AS kept_normal,
       svc_model_info(svc_train(f, label, '{"sample": 100, "budget": 30}'))->>'rows_used' AS rows_used
FROM lab_pts;
-- past label_sample they are sampled too, and the report says so
SELECT svc_model_info(m)->'labelled'->>'sampled' AS sampled,
       (svc_model_info(m)->'labelled'->>'normal')::int + (svc_model_info(m)->'labelled'->>'anomaly')::int AS kept,
       (svc_model_info(m)->'labelled'->>'seen_normal')::int + (svc_model_info(m)->'labelled'->>'seen_anomaly')::int AS seen
FROM (SELECT svc_train(f, label, '{"budget": 30, "label_sample": 20}') AS m FROM lab_pts) q;

-- the state: text round trip, and training in steps gives the same model
SELECT svc_train_finalfn(svc_train_state(f, label, '{"budget": 40}')::text::svc_state) =
       svc_train(f, label, '{"budget": 40}') AS steps_equal
FROM lab_pts;

-- parallel workers and a serial scan give the same model
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT svc_train(f, label, '{"budget": 40}') FROM lab_pts;
CREATE TABLE lab_par AS SELECT svc_train(f, label, '{"budget": 40}') AS m FROM lab_pts;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE lab_ser AS SELECT svc_train(f, label, '{"budget": 40}') AS m FROM lab_pts;
SELECT lab_par.m = lab_ser.m AS parallel_equals_serial FROM lab_par, lab_ser;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- per group
SELECT id % 2 AS g, svc_model_info(svc_train(f, label, '{"budget": 30}'))->'labelled'->'seen_anomaly' AS anomalies
FROM lab_pts GROUP BY id % 2 ORDER BY g;

-- only labelled rows, and only NULL features
SELECT svc_model_info(svc_train(f, label, '{"budget": 10}'))->'labelled'->>'normal' AS normal
FROM lab_pts WHERE label IS NOT NULL;
SELECT svc_train(NULL::float8[], 1, '{}') IS NULL AS no_rows;

-- bad input
\set VERBOSITY default
SELECT svc_train(f, 2, '{}') FROM lab_pts;
SELECT svc_train(f, label, '{"label_radius": 1}') FROM lab_pts;
SELECT svc_train(f, label, '{"label_interpolation": "cubic"}') FROM lab_pts;
SELECT svc_train(f, label, '{"label_sample": 0}') FROM lab_pts;
SELECT svc_train(f, label, '{"anomaly_bound": 0}') FROM lab_pts;
SELECT svc_train(f, label, '{"sample": 100, "label_sample": 10000000}')
FROM (SELECT array_fill(1.0::float8, ARRAY[100]) f, 1 AS label) s;

DROP TABLE lab_pts, lab_models, lab_par, lab_ser;
