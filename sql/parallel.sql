-- svc_train runs as a Partial/Finalize aggregate across parallel workers
-- and gives the serial model.
CREATE TABLE pp AS
SELECT i AS id, (i % 3) AS g,
       ARRAY[(i % 3) * 5 + cos(i * 2.399) * sqrt((i % 23) / 23.0),
             (i % 3) * 2 + sin(i * 2.399) * sqrt((i % 23) / 23.0)]::float8[] AS f
FROM generate_series(1, 20000) i;
ANALYZE pp;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;

EXPLAIN (COSTS OFF) SELECT svc_train(f, '{"sample": 30000}') FROM pp;
CREATE TABLE par AS SELECT svc_train(f, '{"sample": 30000}') AS model FROM pp;

RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT svc_train(f, '{"sample": 30000}') FROM pp;
CREATE TABLE ser AS SELECT svc_train(f, '{"sample": 30000}') AS model FROM pp;

-- every row fits in the sample: parallel and serial give the same bytes
SELECT par.model = ser.model AS parallel_equals_serial FROM par, ser;

-- with a sample smaller than the table too: the sample does not depend on
-- how the workers split the rows
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
CREATE TABLE par_s AS SELECT svc_train(f, '{"sample": 2000}') AS model FROM pp;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE ser_s AS SELECT svc_train(f, '{"sample": 2000}') AS model FROM pp;
SELECT (svc_model_info(par_s.model)->>'rows_seen')::int AS par_seen,
       (svc_model_info(ser_s.model)->>'rows_seen')::int AS ser_seen,
       (svc_model_info(par_s.model)->>'rows_used')::int AS par_used,
       par_s.model = ser_s.model AS parallel_equals_serial
FROM par_s, ser_s;
-- the parallel model clusters the data as well as the serial one
SELECT abs((svc_cvi_agg(f, svc_predict(par_s.model, f), g)->>'nmi')::float8
           - (svc_cvi_agg(f, svc_predict(ser_s.model, f), g)->>'nmi')::float8) <= 0.02 AS nmi_within_0_02,
       (svc_cvi_agg(f, svc_predict(par_s.model, f), g)->>'nmi')::float8 >= 0.9 AS parallel_nmi_high
FROM pp, par_s, ser_s
WHERE pp.id % 10 = 0;

-- GROUP BY under a parallel plan: one model per group
SET max_parallel_workers_per_gather = 2;
SELECT g, (svc_model_info(svc_train(f))->>'rows_seen')::int AS rows_seen
FROM pp GROUP BY g ORDER BY g;

-- svc_cvi_agg combines its workers' states and gives the serial answer,
-- bit for bit, also past its exact limit of 20000 rows (where silhouette
-- and compactness are estimated on a sample that must not depend on how
-- the rows were split)
CREATE TABLE pp_cvi AS
SELECT f, svc_predict(ser.model, f) AS cluster, g FROM pp, ser
UNION ALL SELECT f, NULL, g FROM pp WHERE id % 50 = 0
UNION ALL SELECT ARRAY[f[2], f[1]], 1, NULL FROM pp WHERE id % 7 = 0;
ANALYZE pp_cvi;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT svc_cvi_agg(f, cluster, g) FROM pp_cvi;
CREATE TABLE cvi_par AS
SELECT svc_cvi_agg(f, cluster, g) AS with_class, svc_cvi_agg(f, cluster) AS without
FROM pp_cvi;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE cvi_ser AS
SELECT svc_cvi_agg(f, cluster, g) AS with_class, svc_cvi_agg(f, cluster) AS without
FROM pp_cvi;
SELECT cvi_par.with_class = cvi_ser.with_class AS with_class_equal,
       cvi_par.without = cvi_ser.without AS without_equal,
       (cvi_ser.with_class->>'n_rows')::int AS n_rows,
       (cvi_ser.with_class->>'silhouette')::float8 > 0.5 AS silhouette_high
FROM cvi_par, cvi_ser;
-- and svc_cvi, which reads the same rows through a query, agrees with both
SELECT bool_and(c.value IS NOT DISTINCT FROM (s.with_class->>c.cvi)::float8) AS svc_cvi_equal
FROM svc_cvi('SELECT f, cluster, g FROM pp_cvi') c, cvi_ser s;
RESET max_parallel_workers_per_gather;
DROP TABLE pp_cvi, cvi_par, cvi_ser;
