-- svc_train with the solver "aid": smo's sphere, solved by aggregation and
-- iterative disaggregation; the same optimum, domain and clusters as smo
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
CREATE TABLE aid_shapes AS
SELECT 'blobs' AS shape, i AS id,
       ARRAY[(ARRAY[0, 6, 3])[(i % 3) + 1] + 0.8 * cos(i * 2.399) * sqrt((i % 23) / 23.0),
             (ARRAY[0, 0, 5])[(i % 3) + 1] + 0.8 * sin(i * 2.399) * sqrt((i % 23) / 23.0)]::float8[] AS f
FROM generate_series(1, 900) i
UNION ALL
SELECT 'rings', i, ARRAY[r * cos(i * 2.399), r * sin(i * 2.399)]::float8[]
FROM (SELECT i, 1 + 2 * (i % 2) + 0.15 * sin(i * 7.3) AS r FROM generate_series(1, 1000) i) s;

-- smo and aid at a tight tolerance (aid to a gap of 1e-9), and aid at its
-- default gap (1e-4)
CREATE TABLE aid_models AS
SELECT shape,
       svc_train(f, '{"solver": "smo", "tol": 1e-6}') AS smo,
       svc_train(f, '{"solver": "aid", "tol": 1e-6, "aid_gap": 1e-9}') AS aid,
       svc_train(f, '{"solver": "aid"}') AS aid_default
FROM aid_shapes GROUP BY shape;

-- the report: format 5, the sphere, one count of clusters per round (each
-- round splits some, so they rise), a final gap far below the default (it
-- stops before 1e-9 when every cluster passes its check at tol), and the
-- same optimum as smo to 1e-6
SELECT shape, i->>'solver' AS solver, i->>'boundary' AS boundary,
       (i->>'format_version')::int AS version, (i->>'converged')::boolean AS converged,
       (i->>'aid_gap')::float8 AS aid_gap,
       (i->>'aid_rounds')::int > 1 AS several_rounds,
       jsonb_array_length(i->'aid_aggregates') = (i->>'aid_rounds')::int AS one_count_per_round,
       (SELECT bool_and(a < b) FROM (SELECT e::int AS a, lead(e::int) OVER (ORDER BY o) AS b
                                      FROM jsonb_array_elements_text(i->'aid_aggregates') WITH ORDINALITY t(e, o)) s
        WHERE b IS NOT NULL) AS counts_rise,
       (i->'aid_aggregates'->>-1)::int <= (i->>'rows_used')::int AS at_most_one_per_row,
       (i->>'aid_final_gap')::float8 <= 1e-6 AS gap_below_1e_6,
       (i->>'aid_share_aggregated')::float8 BETWEEN 0 AND 1 AS share_in_range,
       abs((i->>'objective')::float8 - (svc_model_info(smo)->>'objective')::float8)
           <= 1e-6 * abs((svc_model_info(smo)->>'objective')::float8) AS objective_as_smo,
       (i->>'iterations')::int > 0 AS iterated
FROM aid_models, LATERAL svc_model_info(aid) i ORDER BY shape;

-- at the default gap: within 1e-4 of smo's objective
SELECT shape, (i->>'aid_gap')::float8 AS aid_gap,
       (i->>'aid_final_gap')::float8 <= 1e-4 AS gap_reached,
       ((i->>'objective')::float8 - (svc_model_info(smo)->>'objective')::float8)
           <= 1e-4 * abs((svc_model_info(smo)->>'objective')::float8) AS objective_within_gap
FROM aid_models, LATERAL svc_model_info(aid_default) i ORDER BY shape;

-- the same domain (f of the same sign wherever smo's |f| > 1e-6) and the
-- same clusters, row by row
SELECT m.shape,
       count(*) FILTER (WHERE abs(svc_decision(m.smo, s.f)) > 1e-6
                        AND (svc_decision(m.smo, s.f) >= 0) <> (svc_decision(m.aid, s.f) >= 0))
           AS sign_disagreements,
       count(*) FILTER (WHERE svc_predict(m.smo, s.f) <> svc_predict(m.aid, s.f)) AS cluster_disagreements,
       count(DISTINCT svc_predict(m.aid, s.f)) AS clusters
FROM aid_models m JOIN aid_shapes s USING (shape)
GROUP BY m.shape ORDER BY m.shape;

-- svc_assign, svc_recut and the bytes work on it as on any model
SELECT m.shape, count(*) AS rows_out,
       bool_and(a.cluster = svc_predict(m.aid, s.f)) AS assign_is_predict,
       svc_recut(m.aid, '{}') = m.aid AS recut_unchanged,
       (svc_model_info(svc_recut(m.aid, '{"n_clusters": 1}'))->>'n_clusters')::int AS recut_to_one
FROM aid_models m
     CROSS JOIN LATERAL svc_assign(m.aid, format('SELECT id, f FROM aid_shapes WHERE shape = %L', m.shape)) a
     JOIN aid_shapes s ON s.shape = m.shape AND s.id = a.id
GROUP BY m.shape, m.aid ORDER BY m.shape;

-- errors: aid_gap out of range, and a sample past the memory budget,
-- refused before any work, with a hint
SELECT pg_temp.try($$SELECT svc_train(f, '{"solver": "aid", "aid_gap": 0}') FROM aid_shapes$$);
SELECT pg_temp.try($$SELECT svc_train(f, '{"solver": "aid", "aid_gap": 2}') FROM aid_shapes$$);
SELECT pg_temp.try($$SELECT svc_train(f, '{"solver": "aid", "aid_gap": "small"}') FROM aid_shapes$$);
SELECT pg_temp.try($$SELECT svc_train(f, '{"solver": "aid", "cache_mb": 1}')
                     FROM (SELECT ARRAY[i, i % 7]::float8[] AS f FROM generate_series(1, 6000) i) t$$);
-- labelled rows act after the solver (label_spread), so aid takes them; in
-- the solver's bounds (label_spread false) it refuses them (its clusters
-- share one bound per row)
SELECT pg_temp.try($$SELECT svc_train(f, CASE WHEN id % 50 = 0 THEN 1 END, '{"solver": "aid"}')
                     FROM aid_shapes$$) AS spread;
SELECT pg_temp.try($$SELECT svc_train(f, CASE WHEN id % 50 = 0 THEN 1 END,
                                       '{"solver": "aid", "label_spread": false}')
                     FROM aid_shapes$$)
       LIKE '22023: the solver "aid" does not take labelled rows in its bounds%' AS refused;
-- a damaged report is refused: the first aggregate count set to 0 (its
-- place: 4 bytes of CRC, the counts and the 24 fixed bytes before them)
SELECT pg_temp.try(format($$SELECT svc_model_info(%L::bytea)$$,
       overlay(aid placing '\x0000000000000000'::bytea
               from length(aid) - 4 - 8 * (svc_model_info(aid)->>'aid_rounds')::int + 1)))
FROM aid_models WHERE shape = 'blobs';

DROP TABLE aid_models, aid_shapes;
