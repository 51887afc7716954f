-- svc_train with the exact solver "smo": the smallest enclosing sphere in
-- feature space, and every function that takes a model working on it
SET extra_float_digits = 0;
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

-- three blobs and two rings, generated without random()
CREATE TABLE smo_shapes AS
SELECT 'blobs' AS shape, i AS id, (i % 3) + 1 AS class,
       ARRAY[(ARRAY[0, 6, 3])[(i % 3) + 1] + 0.8 * cos(i * 2.399) * sqrt((i % 23) / 23.0),
             (ARRAY[0, 0, 5])[(i % 3) + 1] + 0.8 * sin(i * 2.399) * sqrt((i % 23) / 23.0)]::float8[] AS f
FROM generate_series(1, 900) i
UNION ALL
SELECT 'rings', i, (i % 2) + 1, ARRAY[r * cos(i * 2.399), r * sin(i * 2.399)]::float8[]
FROM (SELECT i, 1 + 2 * (i % 2) + 0.15 * sin(i * 7.3) AS r FROM generate_series(1, 1000) i) s;

-- the exact solver and the budgeted one, each at its defaults
CREATE TABLE smo_models AS
SELECT shape, svc_train(f, '{"solver": "smo"}') AS exact, svc_train(f) AS budgeted
FROM smo_shapes GROUP BY shape;

-- the model records its solver and boundary, and the solver's report:
-- converged below tol (libsvm's 1e-3 by default), the dual's objective
-- alpha'K alpha - 1 in [-1, 0], kernel columns from the cache
SELECT shape, i->>'solver' AS solver, i->>'boundary' AS boundary,
       (i->>'format_version')::int AS version, (i->>'tol')::float8 AS tol,
       i->>'max_iter' AS max_iter, (i->>'converged')::boolean AS converged,
       (i->>'gap')::float8 < (i->>'tol')::float8 AS gap_below_tol,
       (i->>'objective')::float8 BETWEEN -1 AND 0 AS objective_in_range,
       (i->>'iterations')::int > 0 AS iterated,
       (i->>'cache_hits')::bigint > 0 AND (i->>'cache_misses')::bigint > 0 AS cache_used,
       (i->>'cache_mb')::int AS cache_mb, (i->>'n_clusters')::int AS n_clusters
FROM smo_models, LATERAL svc_model_info(exact) i ORDER BY shape;

-- a budgeted model reports none of it and keeps its format
SELECT shape, i->>'solver' AS solver, i->>'boundary' AS boundary,
       (i->>'format_version')::int AS version,
       i ?| ARRAY['objective', 'gap', 'cache_hits', 'cache_misses', 'cache_mb'] AS has_smo_keys
FROM smo_models, LATERAL svc_model_info(budgeted) i ORDER BY shape;

-- svc_assign works on it: every row back once, the true clusters
CREATE TABLE smo_assigned AS
SELECT m.shape, a.*
FROM smo_models m,
     LATERAL svc_assign(m.exact, format('SELECT id, f FROM smo_shapes WHERE shape = %L', m.shape)) a;
SELECT a.shape, count(*) AS rows_out, count(DISTINCT a.id) AS distinct_ids,
       count(DISTINCT a.cluster) AS clusters,
       (svc_cvi_agg(s.f, a.cluster, s.class)->>'nmi')::float8 >= 0.95 AS nmi_vs_classes_at_least_0_95
FROM smo_assigned a JOIN smo_shapes s USING (shape, id)
GROUP BY a.shape ORDER BY a.shape;

-- the exact and the budgeted defaults find the same clusters
SELECT a.shape,
       (svc_cvi_agg(s.f, a.cluster, svc_predict(m.budgeted, s.f))->>'nmi')::float8 >= 0.95
           AS nmi_exact_vs_budgeted_at_least_0_95
FROM smo_assigned a JOIN smo_shapes s USING (shape, id) JOIN smo_models m USING (shape)
GROUP BY a.shape ORDER BY a.shape;

-- svc_predict and svc_decision agree with svc_assign; the offset is the
-- outlier_fraction (0.05) quantile of f on the training rows, which leaves
-- that share of them outside (the sphere's own offset, with its free
-- support vectors on either side of it within the tolerance, left far more)
SELECT a.shape, bool_and(svc_predict(m.exact, s.f) = a.cluster) AS predict_agrees,
       bool_and(svc_decision(m.exact, s.f) = a.decision) AS decision_agrees,
       bool_and(a.outlier = (a.decision < 0)) AS outlier_is_negative,
       count(*) FILTER (WHERE a.outlier) AS outside,
       floor(0.05 * count(*)) AS outlier_fraction_of_rows
FROM smo_assigned a JOIN smo_shapes s USING (shape, id) JOIN smo_models m USING (shape)
GROUP BY a.shape ORDER BY a.shape;
-- every exact solver: the same share, at two outlier_fractions (within a
-- row: the row at the quantile has f = 0 up to rounding)
WITH m AS (
    SELECT t.shape, v.solver, v.nu,
           svc_train(t.f, jsonb_build_object('solver', v.solver, 'outlier_fraction', v.nu)) AS model
    FROM smo_shapes t,
         (VALUES ('smo', 0.05), ('aid', 0.05), ('incremental', 0.05), ('smo', 0.2)) v(solver, nu)
    GROUP BY t.shape, v.solver, v.nu)
SELECT m.shape, m.solver, m.nu,
       abs(count(*) FILTER (WHERE svc_decision(m.model, s.f) < 0) - floor(m.nu * count(*))) <= 1
           AS outside_at_outlier_fraction
FROM m JOIN smo_shapes s USING (shape)
GROUP BY m.shape, m.solver, m.nu ORDER BY m.shape, m.solver, m.nu;

-- far from the data f is negative; recut and the saddle tree work as on any model
SELECT shape, svc_decision(exact, ARRAY[100, 100]::float8[]) < 0 AS far_is_outside,
       (svc_model_info(svc_recut(exact, '{"n_clusters": 1}'))->>'n_clusters')::int AS recut_to_one,
       svc_model_info(svc_recut(exact, '{"n_clusters": 1}'))->>'solver' AS recut_solver,
       (svc_model_info(exact)->>'n_tree_edges')::int = (svc_model_info(exact)->>'n_equilibria')::int - 1
           AS tree_spans
FROM smo_models ORDER BY shape;

-- outlier_fraction 0: no upper bound, every training row inside, to the
-- tolerance (tol 1e-3 on a gap of 2 f: 1e-3 in f)
WITH m AS (SELECT svc_train(f, '{"solver": "smo", "outlier_fraction": 0}') AS model
           FROM smo_shapes WHERE shape = 'blobs')
SELECT bool_and(svc_decision(m.model, s.f) >= -1e-3) AS all_inside,
       min(svc_decision(m.model, s.f)) < 0 AS some_on_the_sphere,
       min((svc_model_info(m.model)->>'outlier_fraction')::float8) AS outlier_fraction
FROM m, smo_shapes s
WHERE s.shape = 'blobs';

-- options: smo with a tol and max_iter of its own, key order irrelevant,
-- bsgd's options accepted and ignored; a stricter tol, more iterations
SELECT (svc_model_info(a)->>'tol')::float8 AS tol, svc_model_info(a)->>'max_iter' AS max_iter,
       a = b AS order_irrelevant,
       svc_model_info(a) - ARRAY['budget', 'strategy', 'c']
           = svc_model_info(c) - ARRAY['budget', 'strategy', 'c'] AS bsgd_options_ignored,
       (svc_model_info(d)->>'iterations')::int > (svc_model_info(a)->>'iterations')::int
           AS stricter_tol_iterates_more
FROM (SELECT svc_train(f, '{"solver": "smo", "tol": 0.01, "max_iter": 100000}') AS a,
             svc_train(f, '{"max_iter": 100000, "tol": 0.01, "solver": "smo"}') AS b,
             svc_train(f, '{"solver": "smo", "tol": 0.01, "max_iter": 100000, "budget": 7, "strategy": "removal", "c": 3}') AS c,
             svc_train(f, '{"solver": "smo", "tol": 0.00001}') AS d
      FROM smo_shapes WHERE shape = 'blobs') m;

-- the budgeted solver's options and models are unchanged by naming it
SELECT svc_train(f, '{"solver": "bsgd"}') = svc_train(f) AS bsgd_named_is_default
FROM smo_shapes WHERE shape = 'blobs';

-- bad options
\pset format unaligned
\pset tuples_only on
SELECT pg_temp.try($$SELECT svc_train(f, '{"solver": "libsvm"}') FROM smo_shapes$$);
SELECT pg_temp.try($$SELECT svc_train(f, '{"solver": 2}') FROM smo_shapes$$);
SELECT pg_temp.try($$SELECT svc_train(f, '{"solver": "smo", "tol": 0}') FROM smo_shapes$$);
SELECT pg_temp.try($$SELECT svc_train(f, '{"solver": "smo", "max_iter": 0}') FROM smo_shapes$$);
SELECT pg_temp.try($$SELECT svc_train(f, '{"cache_mb": -1}') FROM smo_shapes$$);
SELECT pg_temp.try($$SELECT svc_train(f, '{"cache_mb": 2000000}') FROM smo_shapes$$);
SELECT pg_temp.try($$SELECT svc_train(f, '{"cache_mb": "64MB"}') FROM smo_shapes$$);
SELECT pg_temp.try($$SELECT svc_recut(exact, '{"solver": "bsgd"}') FROM smo_models$$);

-- memory: the solver needs some 185 bytes a row of 2 columns (its vectors,
-- two kernel columns and the refinement's vectors and copy of the support
-- vectors); 13200 rows need more than 1 MB and are refused before
-- any work, by cache_mb or by maintenance_work_mem when cache_mb is 0 (the
-- count of kB needed is masked: it follows the solver's vectors)
CREATE TABLE smo_big AS
SELECT ARRAY[cos(i * 2.399) * sqrt(i), sin(i * 2.399) * sqrt(i)]::float8[] AS f
FROM generate_series(1, 13200) i;
SELECT regexp_replace(pg_temp.try($$SELECT svc_train(f, '{"solver": "smo", "cache_mb": 1, "sample": 20000}') FROM smo_big$$),
                      '(needs|about) \d+ (kB|bytes)', '\1 N \2', 'g');
SET maintenance_work_mem = '1MB';
SELECT regexp_replace(pg_temp.try($$SELECT svc_train(f, '{"solver": "smo", "sample": 20000}') FROM smo_big$$),
                      '(needs|about) \d+ (kB|bytes)', '\1 N \2', 'g');
-- the budgeted solver needs no such memory
SELECT pg_temp.try($$SELECT svc_train(f, '{"sample": 20000, "max_iter": 1000}') FROM smo_big$$);
RESET maintenance_work_mem;
\pset format aligned
\pset tuples_only off

-- parallel workers merge their states: the same model as a serial scan
CREATE TABLE smo_pp AS SELECT f FROM smo_shapes WHERE shape = 'blobs';
ANALYZE smo_pp;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT svc_train(f, '{"solver": "smo"}') FROM smo_pp;
CREATE TABLE smo_par AS SELECT svc_train(f, '{"solver": "smo"}') AS model FROM smo_pp;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT svc_train(f, '{"solver": "smo"}') FROM smo_pp;
CREATE TABLE smo_ser AS SELECT svc_train(f, '{"solver": "smo"}') AS model FROM smo_pp;
SELECT p.model = s.model AS parallel_equals_serial FROM smo_par p, smo_ser s;
RESET parallel_leader_participation;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
