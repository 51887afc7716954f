-- Warm start (svc_train(features, options, init)): continue a stored bsgd
-- model on new rows only.
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    detail text;
    hint text;
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
    RETURN SQLSTATE || ': ' || SQLERRM
        || CASE WHEN detail <> '' THEN E'\n  DETAIL: ' || detail ELSE '' END
        || CASE WHEN hint <> '' THEN E'\n  HINT: ' || hint ELSE '' END;
END $$;

-- Three blobs; blob 0 moves slowly to the right with time t.  Rows A are
-- t in [0, 1), rows B t in [1, 1.25).
CREATE TABLE warm_pts AS
SELECT i AS id, (i % 3) AS g, i / 4000.0 AS t,
       ARRAY[(i % 3) * 5 + (CASE WHEN i % 3 = 0 THEN i / 4000.0 ELSE 0 END)
                 + cos(i * 2.399) * sqrt((i % 23) / 23.0),
             (i % 3) * 2 + sin(i * 2.399) * sqrt((i % 23) / 23.0)]::float8[] AS f
FROM generate_series(1, 5000) i;
ANALYZE warm_pts;
CREATE TABLE warm_a AS SELECT svc_train(f, '{"sample": 5000}') AS model FROM warm_pts WHERE t < 1;
CREATE TABLE warm_b AS
SELECT svc_train(f, '{"sample": 5000}', (SELECT model FROM warm_a)) AS model
FROM warm_pts WHERE t >= 1;

-- the warm start's report: one warm start, the rows and steps before it
SELECT svc_model_info(b.model)->'warm_start'->>'count' AS count,
       svc_model_info(b.model)->'warm_start'->>'rows_before' AS rows_before,
       (svc_model_info(b.model)->'warm_start'->>'steps_before')::bigint =
         (svc_model_info(a.model)->>'iterations')::bigint AS steps_before_is_init_steps,
       (svc_model_info(b.model)->>'iterations')::bigint >
         (svc_model_info(a.model)->>'iterations')::bigint + 1000 AS steps_continue,
       svc_model_info(b.model)->'warm_start'->>'rows_new' AS rows_new,
       (svc_model_info(b.model)->'warm_start'->>'outside_share')::float8 < 0.2 AS little_drift,
       svc_model_info(b.model)->>'rows_seen' AS rows_seen,
       svc_model_info(a.model) ? 'warm_start' AS init_has_report,
       svc_model_info(a.model)->>'format_version' AS init_format,
       svc_model_info(b.model)->>'format_version' AS warm_format
FROM warm_a a, warm_b b;
-- the scaling and gamma stay the init's; the same clusters on the moved blobs
SELECT svc_model_info(b.model)->'gamma' = svc_model_info(a.model)->'gamma' AS same_gamma,
       svc_model_info(a.model)->>'n_clusters' AS init_clusters,
       svc_model_info(b.model)->>'n_clusters' AS warm_clusters
FROM warm_a a, warm_b b;
SELECT (svc_cvi_agg(f, svc_predict(b.model, f), g)->>'nmi')::float8 > 0.95 AS warm_nmi_high_on_b,
       (svc_cvi_agg(f, svc_predict(b.model, f), g)->>'nmi')::float8 >=
         (svc_cvi_agg(f, svc_predict(a.model, f), g)->>'nmi')::float8 - 0.02 AS warm_not_worse_on_b
FROM warm_pts, warm_a a, warm_b b WHERE t >= 1;
-- a second warm start counts two
SELECT svc_model_info(svc_train(f, NULL, (SELECT model FROM warm_b)))->'warm_start'->>'count' AS count2
FROM warm_pts WHERE t >= 1.2;

-- NULL init is the two-argument svc_train, to the byte
SELECT svc_train(f, '{"sample": 5000}', NULL::bytea) = svc_train(f, '{"sample": 5000}')
       AS null_init_is_plain
FROM warm_pts WHERE t < 1;

-- the init model's options win: naming another value is an error, naming
-- the same value or a cut option is not
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budget": 50}', (SELECT model FROM warm_a)) FROM warm_pts WHERE t >= 1$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"outlier_fraction": 0.2, "gamma": 3}', (SELECT model FROM warm_a)) FROM warm_pts WHERE t >= 1$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"solver": "smo"}', (SELECT model FROM warm_a)) FROM warm_pts WHERE t >= 1$q$);
-- label_spread too (a model of 0.4.x with labelled rows reads as true; the
-- warm start takes no labelled rows either way)
SELECT pg_temp.try($q$SELECT svc_train(f, '{"label_spread": false}', (SELECT model FROM warm_a)) FROM warm_pts WHERE t >= 1$q$);
SELECT svc_train(f, '{"sample": 5000, "budget": 300}', (SELECT model FROM warm_a)) = b.model AS same_values_allowed
FROM warm_pts, warm_b b WHERE t >= 1 GROUP BY b.model;
SELECT svc_model_info(svc_train(f, '{"n_clusters": 1}', (SELECT model FROM warm_a)))->>'n_clusters' AS cut_applies
FROM warm_pts WHERE t >= 1;

-- an exact-solver model without kept rows cannot be warm-started (keep_rows.sql)
CREATE TABLE warm_smo AS
SELECT svc_train(f, '{"solver": "smo"}') AS model FROM warm_pts WHERE id <= 300;
SELECT pg_temp.try($q$SELECT svc_train(f, NULL, (SELECT model FROM warm_smo)) FROM warm_pts WHERE t >= 1$q$);
-- wrong dimensions, damaged and foreign init models are refused as svc_predict refuses them
SELECT pg_temp.try($q$SELECT svc_train(ARRAY[1, 2, 3]::float8[], NULL, (SELECT model FROM warm_a))$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, NULL, (SELECT overlay(model placing '\x00'::bytea from 300) FROM warm_a)) FROM warm_pts WHERE t >= 1$q$);
SELECT pg_temp.try($q$SELECT svc_predict((SELECT overlay(model placing '\x00'::bytea from 300) FROM warm_a), ARRAY[1, 2]::float8[])$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, NULL, '\x0102'::bytea) FROM warm_pts WHERE t >= 1$q$);
-- every row of a group continues the same model
SELECT pg_temp.try($q$SELECT svc_train(f, NULL, CASE WHEN id % 2 = 0 THEN (SELECT model FROM warm_a) END) FROM warm_pts WHERE t >= 1$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, NULL, CASE WHEN id % 2 = 0 THEN (SELECT model FROM warm_a) ELSE (SELECT model FROM warm_b) END) FROM warm_pts WHERE t >= 1$q$);
-- one warm start per group
SELECT g, svc_model_info(svc_train(f, NULL, (SELECT model FROM warm_a)))->'warm_start'->>'rows_new' AS rows_new
FROM warm_pts WHERE t >= 1 GROUP BY g ORDER BY g;

-- training in steps: the state carries the init model, through its text form too
SELECT svc_train_finalfn(svc_train_state(f, NULL, (SELECT model FROM warm_a))::text::svc_state) =
       svc_train(f, NULL, (SELECT model FROM warm_a)) AS state_round_trip
FROM warm_pts WHERE t >= 1;
-- a state of the format before warm starts is refused, with a hint
SELECT pg_temp.try($q$SELECT '\x5356435304000000'::svc_state$q$);

-- a parallel warm start gives the serial model (every row in the sample)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT svc_train(f, '{"sample": 5000}', (SELECT model FROM warm_a)) FROM warm_pts WHERE t >= 1;
CREATE TABLE warm_par AS
SELECT svc_train(f, '{"sample": 5000}', (SELECT model FROM warm_a)) AS model FROM warm_pts WHERE t >= 1;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
SELECT p.model = b.model AS parallel_equals_serial FROM warm_par p, warm_b b;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- README "Refreshing a model: warm start", on tables of this test's own
CREATE TABLE warm_points AS
SELECT i AS id, i % 3 + 1 AS class,
       ARRAY[(ARRAY[0, 4, 8])[i % 3 + 1] + r * cos(i * 2.4),
             (ARRAY[0, 4, 0])[i % 3 + 1] + r * sin(i * 2.4)] AS features
FROM generate_series(1, 900) AS i,
     LATERAL (SELECT sqrt(i * 0.618034 % 1)::float8 AS r) AS s;
CREATE TABLE warm_models (name text PRIMARY KEY, model bytea);
INSERT INTO warm_models SELECT 'blobs', svc_train(features) FROM warm_points;
CREATE TABLE warm_points_new AS
SELECT 900 + i AS id, i % 3 + 1 AS class,
       ARRAY[(ARRAY[0.3, 4, 8])[i % 3 + 1] + r * cos(i * 2.4),
             (ARRAY[0, 4, 0])[i % 3 + 1] + r * sin(i * 2.4)] AS features
FROM generate_series(1, 300) AS i,
     LATERAL (SELECT sqrt(i * 0.618034 % 1)::float8 AS r) AS s;
INSERT INTO warm_models
SELECT 'blobs-refreshed', svc_train(features, NULL, (SELECT model FROM warm_models WHERE name = 'blobs'))
FROM warm_points_new;
SELECT svc_model_info(model) -> 'n_clusters'                     AS n_clusters,
       svc_model_info(model) -> 'rows_seen'                      AS rows_seen,
       svc_model_info(model) -> 'warm_start' -> 'count'          AS warm_starts,
       (svc_model_info(model) -> 'warm_start' -> 'outside_share')::float8 <= 0.05 AS little_drift
FROM warm_models WHERE name = 'blobs-refreshed';
-- the refreshed model clusters the new rows by their class
SELECT (svc_cvi_agg(features, svc_predict(m.model, features), class)->>'nmi')::float8 > 0.95 AS nmi_high
FROM warm_points_new, warm_models m WHERE m.name = 'blobs-refreshed';

-- one init model per group, the groups' rows interleaved (hashed GROUP BY):
-- each group continues its own model, as a query of that group alone does
CREATE TABLE warm_group_models AS
SELECT g, svc_train(f, '{"budget": 40}') AS model FROM warm_pts WHERE t < 1 GROUP BY g;
SET enable_sort = off;
EXPLAIN (COSTS OFF)
SELECT p.g, svc_train(p.f, NULL, m.model) FROM warm_pts p JOIN warm_group_models m USING (g)
WHERE p.t >= 1 GROUP BY p.g;
CREATE TABLE warm_group_warm AS
SELECT p.g, svc_train(p.f, NULL, m.model) AS model FROM warm_pts p JOIN warm_group_models m USING (g)
WHERE p.t >= 1 GROUP BY p.g;
RESET enable_sort;
SELECT w.g, w.model = (SELECT svc_train(p.f, NULL, m.model) FROM warm_pts p, warm_group_models m
                       WHERE p.g = w.g AND m.g = w.g AND p.t >= 1) AS same_as_alone,
       svc_model_info(w.model)->'warm_start'->>'rows_new' AS rows_new
FROM warm_group_warm w ORDER BY w.g;
-- a group whose rows name two models is still refused under interleaving
SELECT pg_temp.try($q$SELECT p.g, svc_train(p.f, NULL, m.model) FROM warm_pts p JOIN warm_group_models m ON m.g = (p.g + p.id % 2) % 3 WHERE p.t >= 1 GROUP BY p.g$q$);

-- drift: rows far outside the stored scaling's range show in the report
SELECT (svc_model_info(svc_train(ARRAY[f[1] + 30, f[2]], NULL, (SELECT model FROM warm_a)))
          ->'warm_start'->>'outside_share')::float8 AS far_rows_outside_share
FROM warm_pts WHERE t >= 1;

-- the two three-argument forms: untyped literals in both places cannot
-- choose between them; a cast does
SELECT pg_temp.try($q$SELECT svc_train(f, NULL, '{}') FROM warm_pts WHERE t >= 1$q$);
SELECT svc_train(f, NULL, '{}'::jsonb) = svc_train(f, '{}'::jsonb, NULL::bytea) AS null_label_is_null_init
FROM warm_pts WHERE t >= 1;

-- a damaged warm state (text input): refused with XX001 on input, or trained,
-- or refused by the fit with a clear error; never an internal error
CREATE TABLE warm_small_state AS
SELECT svc_train_state(f, NULL, (SELECT svc_train(f, '{"budget": 8, "max_iter": 2000}')
                                 FROM warm_pts WHERE id <= 60)) AS s
FROM warm_pts WHERE id BETWEEN 61 AND 90;
DO $$
DECLARE
    b constant bytea := decode(substr((SELECT s::text FROM warm_small_state), 3), 'hex');
    st svc_state;
    m bytea;
    variants int := 0;
    refused int := 0;
    trained int := 0;
    fit_refused int := 0;
    bad int := 0;
BEGIN
    FOR pos IN 0 .. length(b) - 1 BY 37 LOOP
        variants := variants + 1;
        BEGIN
            st := ('\x' || encode(set_byte(b, pos, get_byte(b, pos) # 85), 'hex'))::svc_state;
        EXCEPTION WHEN OTHERS THEN
            IF SQLSTATE <> 'XX001' THEN bad := bad + 1; END IF;
            refused := refused + 1;
            CONTINUE;
        END;
        BEGIN
            m := svc_train_finalfn(st);
            PERFORM svc_model_info(m), svc_predict(m, ARRAY[0.5, 0.5]);
            trained := trained + 1;
        EXCEPTION WHEN OTHERS THEN
            IF SQLSTATE IN ('XX000', 'XX002') THEN bad := bad + 1; END IF;
            fit_refused := fit_refused + 1;
        END;
    END LOOP;
    RAISE NOTICE 'damaged warm states: over 40 variants: %, all handled: %, none internal: %, some refused on input: %',
        variants > 40, refused + trained + fit_refused = variants, bad = 0, refused > 0;
END $$;
