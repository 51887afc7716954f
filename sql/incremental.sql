-- svc_train with the solver "incremental": smo's sphere, solved exactly a
-- row at a time; the same optimum, domain and clusters as smo
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
CREATE TABLE incr_shapes AS
SELECT 'blobs' AS shape, i AS id,
       ARRAY[(ARRAY[0, 6, 3])[(i % 3) + 1] + 0.8 * cos(i * 2.399) * sqrt((i % 23) / 23.0),
             (ARRAY[0, 0, 5])[(i % 3) + 1] + 0.8 * sin(i * 2.399) * sqrt((i % 23) / 23.0)]::float8[] AS f
FROM generate_series(1, 600) i
UNION ALL
SELECT 'rings', i, ARRAY[r * cos(i * 2.399), r * sin(i * 2.399)]::float8[]
FROM (SELECT i, 1 + 2 * (i % 2) + 0.15 * sin(i * 7.3) AS r FROM generate_series(1, 600) i) s;

-- smo at a tight tolerance, and the incremental solver (which has none)
CREATE TABLE incr_models AS
SELECT shape,
       svc_train(f, '{"solver": "smo", "tol": 1e-9}' ORDER BY id) AS smo,
       svc_train(f, '{"solver": "incremental"}' ORDER BY id) AS incr
FROM incr_shapes GROUP BY shape;

-- the report: the solver's name, the sphere, format 4 as smo's, converged,
-- one iteration per path step (the rows go in a seeded random order, and a
-- row that lands inside takes none), a KKT gap far below smo's tolerance
-- and smo's objective
SELECT shape, i->>'solver' AS solver, i->>'boundary' AS boundary,
       (i->>'format_version')::int AS version, (i->>'converged')::boolean AS converged,
       (i->>'iterations')::int > 0 AS stepped,
       (i->>'gap')::float8 < 1e-9 AS kkt_gap_tiny,
       abs((i->>'objective')::float8 - (svc_model_info(smo)->>'objective')::float8)
           <= 1e-9 AS objective_as_smo,
       (i->>'n_support_vectors')::int = (svc_model_info(smo)->>'n_support_vectors')::int AS support_as_smo
FROM incr_models, LATERAL svc_model_info(incr) i ORDER BY shape;

-- the same f within 1e-6 on every row, and the same clusters
SELECT m.shape,
       max(abs(svc_decision(m.smo, s.f) - svc_decision(m.incr, s.f))) < 1e-6 AS f_as_smo,
       count(*) FILTER (WHERE svc_predict(m.smo, s.f) <> svc_predict(m.incr, s.f)) AS cluster_disagreements,
       count(DISTINCT svc_predict(m.incr, s.f)) AS clusters
FROM incr_models m JOIN incr_shapes s USING (shape)
GROUP BY m.shape ORDER BY m.shape;

-- the order of the rows does not change the optimum
SELECT shape,
       max(abs(svc_decision(m.incr, s.f) - svc_decision(r.incr, s.f))) < 1e-6 AS order_free
FROM incr_models m
     JOIN (SELECT shape, svc_train(f, '{"solver": "incremental"}' ORDER BY id DESC) AS incr
           FROM incr_shapes GROUP BY shape) r USING (shape)
     JOIN incr_shapes s USING (shape)
GROUP BY shape ORDER BY shape;

-- labelled rows act after the solver (label_spread): taken; in its bounds
-- (label_spread false) they are smo's signed problem, which the path does
-- not follow: refused, as aid refuses them
SELECT pg_temp.try($$SELECT svc_train(f, CASE WHEN id % 50 = 0 THEN 1 END, '{"solver": "incremental"}')
                     FROM incr_shapes$$);
SELECT pg_temp.try($$SELECT svc_train(f, CASE WHEN id % 50 = 0 THEN 1 END,
                                       '{"solver": "incremental", "label_spread": false}')
                     FROM incr_shapes$$);

-- rows with duplicates: the README's events table (its rings' centre rows
-- coincide) ends, on smo's clusters (it failed: a row on the margin that
-- duplicated the margin set, or rows joining and leaving it for ever)
CREATE TABLE incr_events AS
SELECT ARRAY[(i % 3) * 4 + cos(i * 2.4) * sqrt(i % 7 / 7.0),
             (i % 3) * 2 + sin(i * 2.4) * sqrt(i % 7 / 7.0)]::float8[] AS f
FROM generate_series(1, 2160) i;
SELECT (svc_model_info(i.m)->>'n_clusters')::int AS incremental_clusters,
       (svc_model_info(s.m)->>'n_clusters')::int AS smo_clusters,
       (svc_model_info(i.m)->>'objective')::float8 <= (svc_model_info(s.m)->>'objective')::float8 AS at_or_below_smo
FROM (SELECT svc_train(f, '{"solver": "incremental"}') AS m FROM incr_events) i,
     (SELECT svc_train(f, '{"solver": "smo"}') AS m FROM incr_events) s;

-- errors: an unknown solver lists the valid ones, and rows past the memory
-- budget are refused before any work, with a hint
SELECT pg_temp.try($$SELECT svc_train(f, '{"solver": "incrementl"}') FROM incr_shapes$$);
SELECT pg_temp.try($$SELECT svc_train(f, '{"solver": "incremental", "cache_mb": 1}')
                     FROM (SELECT ARRAY[i, i % 7]::float8[] AS f FROM generate_series(1, 12000) i) t$$);

DROP TABLE incr_models, incr_shapes;
