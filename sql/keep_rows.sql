-- Models that keep their rows ("keep_rows": true, solvers smo and
-- incremental): the exact warm start svc_train(features, options, init)
-- and the sliding window over "sample" rows.
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

-- 2,000 rows of three blobs in arrival order id.  A model that keeps its
-- rows numbers them in the order the aggregate gets them: ORDER BY id.
CREATE TABLE keep_pts AS
SELECT i AS id,
       ARRAY[(i % 3) * 3 + cos(i * 2.399) * sqrt((i % 23) / 23.0),
             (i % 3) * 1.5 + sin(i * 2.399) * sqrt((i % 23) / 23.0)]::float8[] AS f
FROM generate_series(1, 2000) i;
ANALYZE keep_pts;

-- f of two models on every row: the largest difference
CREATE FUNCTION pg_temp.fdiff(a bytea, b bytea) RETURNS float8 LANGUAGE sql AS $$
    SELECT max(abs(svc_decision(a, f) - svc_decision(b, f))) FROM keep_pts
$$;

-- the kept rows: a model of the union, stored and read back
CREATE TABLE keep_a AS
SELECT svc_train(f, '{"solver": "incremental", "keep_rows": true, "sample": 1000,
                      "outlier_fraction": 0.1, "gamma": 1, "scale": "none"}') AS model
FROM keep_pts WHERE id <= 300;
SELECT svc_model_info(model)->'kept_rows' AS kept_rows FROM keep_a;
SELECT pg_temp.try($q$COPY keep_a TO '/dev/null'$q$) AS copy_out,
       (SELECT count(*) FROM keep_a WHERE svc_model_info(model) IS NOT NULL) AS decodes;

-- the exact warm start: the union's C = 1/(nu 500), smo's model on rows 1..500
CREATE TABLE keep_b AS
SELECT svc_train(f, NULL, (SELECT model FROM keep_a)) AS model
FROM keep_pts WHERE id > 300 AND id <= 500;
CREATE TABLE keep_smo_union AS
SELECT svc_train(f, '{"solver": "smo", "tol": 1e-10, "sample": 1000,
                      "outlier_fraction": 0.1, "gamma": 1, "scale": "none"}') AS model
FROM keep_pts WHERE id <= 500;
SELECT pg_temp.fdiff(b.model, s.model) < 1e-6 AS union_equals_smo,
       svc_model_info(b.model)->'kept_rows' AS kept_rows,
       svc_model_info(b.model)->'warm_start'->>'rows_new' AS rows_new,
       svc_model_info(b.model)->>'rows_used' AS rows_used,
       svc_model_info(b.model)->>'n_clusters' = svc_model_info(s.model)->>'n_clusters'
         AS same_clusters
FROM keep_b b, keep_smo_union s;

-- an smo init with kept rows continues the same way
CREATE TABLE keep_smo_a AS
SELECT svc_train(f, '{"solver": "smo", "tol": 1e-10, "keep_rows": true, "sample": 1000,
                      "outlier_fraction": 0.1, "gamma": 1, "scale": "none"}') AS model
FROM keep_pts WHERE id <= 300;
SELECT pg_temp.fdiff(w.model, s.model) < 1e-6 AS smo_init_equals_smo
FROM (SELECT svc_train(f, NULL, (SELECT model FROM keep_smo_a)) AS model
      FROM keep_pts WHERE id > 300 AND id <= 500) w, keep_smo_union s;

-- a window of 200 sliding over the 2,000 rows, 150 rows a call, oldest first:
-- the model is smo's on the last 200 rows
CREATE TABLE keep_win (n int, policy text, model bytea);
INSERT INTO keep_win
SELECT n, p, (SELECT svc_train(f, jsonb_build_object('solver', 'incremental', 'keep_rows', true,
                                                     'window', p, 'seed', 7, 'sample', 200,
                                                     'outlier_fraction', 0.1, 'gamma', 1,
                                                     'scale', 'none') ORDER BY id)
              FROM keep_pts WHERE id <= 200)
FROM (VALUES (1, 'oldest'), (2, 'reservoir'), (3, 'reservoir')) v(n, p);
DO $$
BEGIN
    FOR k IN 0..11 LOOP
        UPDATE keep_win w SET model =
            (SELECT svc_train(f, NULL, w.model ORDER BY id) FROM keep_pts
             WHERE id > 200 + 150 * k AND id <= 350 + 150 * k);
    END LOOP;
END $$;
CREATE TABLE keep_smo_last AS
SELECT svc_train(f, '{"solver": "smo", "tol": 1e-10, "sample": 200,
                      "outlier_fraction": 0.1, "gamma": 1, "scale": "none"}') AS model
FROM keep_pts WHERE id > 1800;
SELECT pg_temp.fdiff(w.model, s.model) < 1e-6 AS window_equals_smo_on_last_200,
       svc_model_info(w.model)->'kept_rows' AS kept_rows,
       svc_model_info(w.model)->'warm_start'->>'count' AS warm_starts,
       svc_model_info(w.model)->>'rows_seen' AS rows_seen
FROM keep_win w, keep_smo_last s WHERE w.policy = 'oldest';

-- one call that brings more rows than the window holds (1,800 into 200):
-- oldest first keeps the call's last 200, smo's model on them; the
-- reservoir keeps a uniform sample of the 2,000 rows passed (about 20 old)
CREATE TABLE keep_big (policy text, model bytea);
INSERT INTO keep_big
SELECT policy, (SELECT svc_train(f, NULL, w.model ORDER BY id) FROM keep_pts WHERE id > 200)
FROM (SELECT p AS policy,
             (SELECT svc_train(f, jsonb_build_object('solver', 'incremental', 'keep_rows', true,
                                                     'window', p, 'seed', 7, 'sample', 200,
                                                     'outlier_fraction', 0.1, 'gamma', 1,
                                                     'scale', 'none') ORDER BY id)
              FROM keep_pts WHERE id <= 200) AS model
      FROM unnest(ARRAY['oldest', 'reservoir']) p) w;
SELECT b.policy,
       CASE WHEN b.policy = 'oldest' THEN pg_temp.fdiff(b.model, s.model) < 1e-6 END
         AS equals_smo_on_last_200,
       svc_model_info(b.model)->'kept_rows'->>'oldest' AS oldest,
       svc_model_info(b.model)->'kept_rows'->>'newest' AS newest,
       svc_model_info(b.model)->'kept_rows'->>'rows_passed' AS rows_passed
FROM keep_big b, keep_smo_last s ORDER BY 1;

-- the reservoir: the same seed, the same model; old and new rows mixed
SELECT count(DISTINCT model) AS distinct_models,
       min((svc_model_info(model)->'kept_rows'->>'oldest')::int) < 1800 AS keeps_old_rows,
       min((svc_model_info(model)->'kept_rows'->>'newest')::int) AS newest,
       min(svc_model_info(model)->'kept_rows'->>'rows') AS rows_kept,
       min(svc_model_info(model)->'kept_rows'->>'window') AS window
FROM keep_win WHERE policy = 'reservoir';

-- a parallel warm start without overflow (300 + 1,700 rows in a window of
-- 2,000) is the serial one
CREATE TABLE keep_a2 AS
SELECT svc_train(f, '{"solver": "incremental", "keep_rows": true, "sample": 2000,
                      "outlier_fraction": 0.1, "gamma": 1, "scale": "none"}') AS model
FROM keep_pts WHERE id <= 300;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF)
SELECT svc_train(f, NULL, (SELECT model FROM keep_a2)) AS model FROM keep_pts WHERE id > 300;
CREATE TABLE keep_par AS
SELECT svc_train(f, NULL, (SELECT model FROM keep_a2)) AS model FROM keep_pts WHERE id > 300;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE keep_ser AS
SELECT svc_train(f, NULL, (SELECT model FROM keep_a2)) AS model FROM keep_pts WHERE id > 300;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
SELECT pg_temp.fdiff(p.model, s.model) < 1e-9 AS parallel_equals_serial,
       svc_model_info(p.model)->'kept_rows'->>'rows' AS rows_kept
FROM keep_par p, keep_ser s;

-- refusals
SELECT pg_temp.try($q$SELECT svc_train(f, '{"keep_rows": true}') FROM keep_pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"keep_rows": true, "solver": "aid"}') FROM keep_pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"keep_rows": true, "solver": "smo", "bandwidth_k": 5}') FROM keep_pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"window": "reservoir", "solver": "smo"}') FROM keep_pts$q$);
-- labelled rows: the kept rows carry no labels, so a warm start could not
-- honour them
SELECT pg_temp.try($q$SELECT svc_train(f, CASE WHEN f[1] > 0 THEN 1 END,
    '{"keep_rows": true, "solver": "smo"}') FROM keep_pts$q$);
-- the init's options win: another value of a non-cut option is refused
SELECT pg_temp.try($q$SELECT svc_train(f, '{"sample": 300}', (SELECT model FROM keep_a)) FROM keep_pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"window": "reservoir"}', (SELECT model FROM keep_a)) FROM keep_pts$q$);
-- an exact model without kept rows
SELECT pg_temp.try($q$SELECT svc_train(f, NULL, (SELECT model FROM keep_smo_last)) FROM keep_pts$q$);
-- a damaged kept-rows section: a byte changed is caught by the checksum ...
SELECT pg_temp.try($q$SELECT svc_train(f, NULL,
    (SELECT set_byte(model, length(model) - 6, get_byte(model, length(model) - 6) # 1) FROM keep_a))
    FROM keep_pts$q$);
-- ... and with the checksum made again, by the section's checks: the last
-- kept row's counter set to 1 (below the others), then an alpha of 1
CREATE FUNCTION pg_temp.crc32c(b bytea) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    crc bigint := 4294967295;
BEGIN
    FOR i IN 0 .. length(b) - 1 LOOP
        crc := crc # get_byte(b, i);
        FOR k IN 1 .. 8 LOOP
            crc := (crc >> 1) # (CASE WHEN crc & 1 = 1 THEN 2197175160 ELSE 0 END);
        END LOOP;
    END LOOP;
    RETURN crc # 4294967295;
END $$;
CREATE FUNCTION pg_temp.resign(m bytea) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE
    body bytea := substring(m FROM 1 FOR length(m) - 4);
    crc bigint := pg_temp.crc32c(body);
BEGIN
    RETURN body || set_byte(set_byte(set_byte(set_byte('\x00000000'::bytea,
        0, (crc & 255)::int), 1, ((crc >> 8) & 255)::int), 2, ((crc >> 16) & 255)::int),
        3, ((crc >> 24) & 255)::int);
END $$;
SELECT pg_temp.resign(model) = model AS resign_is_identity FROM keep_a;
SELECT pg_temp.try(format($q$SELECT svc_model_info(%L::bytea)$q$,
    pg_temp.resign(overlay(model PLACING '\x0100000000000000'::bytea FROM length(model) - 11))))
FROM keep_a;
-- the first kept row's alpha set to 1, above its bound 1/30 (300 rows: the
-- alphas, bounds and counters take the last 3 * 2400 bytes)
SELECT pg_temp.try(format($q$SELECT svc_model_info(%L::bytea)$q$,
    pg_temp.resign(overlay(model PLACING '\x000000000000f03f'::bytea
                           FROM length(model) - 4 - 300 * 8 * 3 + 1))))
FROM keep_a;
