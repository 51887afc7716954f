-- The same rows, options and seed give the same model bytes whatever the
-- plan: serially, with parallel workers, in any row order, and from
-- partial states combined in any order; past the sample (4,000 of 30,000
-- rows, which hold 6,754 distinct rows: most are repeated) as below it.
CREATE TABLE rp AS
SELECT i AS id,
       ARRAY[(i % 4) * 3 + round((cos(i * 2.399) * sqrt((i % 97) / 97.0))::numeric, 1),
             (i % 4 / 2) * 3 + round((sin(i * 2.399) * sqrt((i % 97) / 97.0))::numeric, 1),
             (i % 5) * 0.5]::float8[] AS f
FROM generate_series(1, 30000) i;
ANALYZE rp;
SELECT count(*) AS rows, count(DISTINCT f) AS distinct_rows FROM rp;

CREATE TABLE rp_models (how text PRIMARY KEY, model bytea);
SET max_parallel_workers_per_gather = 0;
INSERT INTO rp_models SELECT 'serial', svc_train(f, '{"sample": 4000}') FROM rp;
INSERT INTO rp_models SELECT 'by id desc', svc_train(f, '{"sample": 4000}' ORDER BY id DESC) FROM rp;
SELECT setseed(0.25);
INSERT INTO rp_models SELECT 'shuffled', svc_train(f, '{"sample": 4000}' ORDER BY random()) FROM rp;

-- two parallel workers (without the leader, so that they split the rows)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT svc_train(f, '{"sample": 4000}') FROM rp;
INSERT INTO rp_models SELECT 'parallel', svc_train(f, '{"sample": 4000}') FROM rp;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;

-- partial states of 1, 7 and 40 parts, combined in two orders each, by an
-- aggregate of the combine function (as Citus combines its workers' states)
CREATE AGGREGATE rp_combine(svc_state) (
    SFUNC = svc_train_combinefn, STYPE = svc_state, FINALFUNC = svc_train_finalfn);
INSERT INTO rp_models
SELECT 'states of ' || parts || ', ' || dir,
       (SELECT rp_combine(s ORDER BY CASE WHEN dir = 'up' THEN part ELSE -part END)
        FROM (SELECT id % parts AS part, svc_train_state(f, '{"sample": 4000}') AS s
              FROM rp GROUP BY 1) p)
FROM (VALUES (1), (7), (40)) AS v(parts), (VALUES ('up'), ('down')) AS d(dir);

SELECT how, model = (SELECT model FROM rp_models WHERE how = 'serial') AS same_as_serial,
       (svc_model_info(model) ->> 'rows_seen')::int AS rows_seen,
       (svc_model_info(model) ->> 'rows_used')::int AS rows_used
FROM rp_models ORDER BY how;

-- the window function trains the same model, whatever the window's order
SELECT count(*) FILTER (WHERE c1 = c2 AND c1 = svc_predict(m.model, f)) AS same_cluster, count(*) AS rows
FROM (SELECT f, svc_cluster(f, '{"sample": 4000}') OVER () AS c1,
             svc_cluster(f, '{"sample": 4000}') OVER (ORDER BY id DESC) AS c2
      FROM rp WHERE id % 3 = 0) w,
     (SELECT svc_train(f, '{"sample": 4000}') AS model FROM rp WHERE id % 3 = 0) m;

-- fewer distinct rows than the sample (20 of 30,000): every distinct row is
-- kept with its count, 4,000 rows are drawn from them, in any order
SELECT a.m = b.m AS same_model, (svc_model_info(a.m) ->> 'rows_used')::int AS rows_used
FROM (SELECT svc_train(ARRAY[f[3], id % 4], '{"sample": 4000}' ORDER BY id) AS m FROM rp) a,
     (SELECT svc_train(ARRAY[f[3], id % 4], '{"sample": 4000}' ORDER BY id DESC) AS m FROM rp) b;

-- another seed, another sample (and so another model)
SELECT svc_train(f, '{"sample": 4000, "seed": 7}') <> (SELECT model FROM rp_models WHERE how = 'serial')
       AS other_seed_other_model
FROM rp;

DROP AGGREGATE rp_combine(svc_state);
