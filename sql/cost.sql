-- The declared costs of the scoring functions make a scoring pass over a
-- large table run in parallel; with the default cost 1 it did not
SELECT p.oid::regprocedure AS function, p.procost
FROM pg_proc p WHERE p.proname IN ('svc_decision', 'svc_predict') ORDER BY 1;

CREATE TABLE cost_points AS
SELECT i AS id, ARRAY[(i % 3) * 4 + sqrt(i * 0.618034 % 1) * cos(i * 2.4),
                      sqrt(i * 0.618034 % 1) * sin(i * 2.4)]::float8[] AS features
FROM generate_series(1, 50000) AS i;
ANALYZE cost_points;
CREATE TABLE cost_model AS
SELECT svc_train(features, '{"budget": 20, "max_iter": 200}') AS model FROM cost_points WHERE id <= 300;

-- the table is small for the test's sake: let it count as large
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;

-- every row's cluster, as CREATE TABLE ... AS or a client would fetch them
EXPLAIN (COSTS OFF)
SELECT id, svc_predict((SELECT model FROM cost_model), features) FROM cost_points;
-- as before: serial
BEGIN;
ALTER FUNCTION svc_predict(bytea, float8[]) COST 1;
EXPLAIN (COSTS OFF)
SELECT id, svc_predict((SELECT model FROM cost_model), features) FROM cost_points;
ROLLBACK;

-- the parallel plan returns what the serial one does
CREATE TABLE cost_parallel AS
SELECT id, svc_predict((SELECT model FROM cost_model), features) AS c FROM cost_points;
SET max_parallel_workers_per_gather = 0;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE p.c = svc_predict((SELECT model FROM cost_model), s.features)) AS same
FROM cost_parallel p JOIN cost_points s USING (id);

RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
