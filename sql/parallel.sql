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

-- with a sample smaller than the table the models differ but agree on structure
SET max_parallel_workers_per_gather = 2;
CREATE TABLE par_s AS SELECT svc_train(f, '{"sample": 2000}') AS model FROM pp;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE ser_s AS SELECT svc_train(f, '{"sample": 2000}') AS model FROM pp;
SELECT (svc_model_info(par_s.model)->>'rows_seen')::int AS par_seen,
       (svc_model_info(ser_s.model)->>'rows_seen')::int AS ser_seen,
       (svc_model_info(par_s.model)->>'rows_used')::int AS par_used,
       svc_model_info(par_s.model)->'n_clusters' = svc_model_info(ser_s.model)->'n_clusters' AS same_cluster_count
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
