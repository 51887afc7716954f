-- Training: svc_train aggregates, model info, decision, seeds, GROUP BY
SET extra_float_digits = 0;

-- three blobs of 150 rows each, deterministic (no random())
CREATE TABLE blobs AS
SELECT i AS id, (i % 3) + 1 AS class,
       ARRAY[ (ARRAY[0, 6, 3])[(i % 3) + 1] + 0.6 * cos(i * 2.399) * sqrt((i % 17 + 1) / 17.0),
              (ARRAY[0, 0, 5])[(i % 3) + 1] + 0.6 * sin(i * 2.399) * sqrt((i % 17 + 1) / 17.0)
       ]::float8[] AS f
FROM generate_series(1, 450) AS i;

CREATE TABLE models AS
SELECT s AS strategy, svc_train(f, jsonb_build_object('budget', 30, 'strategy', s)) AS model
FROM blobs, unnest(ARRAY['removal', 'project-knn', 'project-random', 'unbudgeted']) AS s
GROUP BY s;

-- every budgeted strategy keeps at most B support vectors
SELECT strategy,
       (svc_model_info(model)->>'n_support_vectors')::int <= 30 AS within_budget,
       svc_model_info(model)->>'strategy' = strategy AS strategy_recorded
FROM models ORDER BY strategy;

-- the model describes itself
SELECT key FROM models, jsonb_object_keys(svc_model_info(model)) AS key
WHERE strategy = 'removal' ORDER BY key;

SELECT i->>'format_version' AS version, i->>'dims' AS dims, i->>'budget' AS budget,
       i->>'scale' AS scale, i->>'rows_seen' AS rows_seen, i->>'rows_used' AS rows_used,
       (i->>'gamma')::float8 > 0 AS gamma_positive, i->>'gamma_auto' AS gamma_auto,
       (i->>'iterations')::int > 0 AS trained
FROM (SELECT svc_model_info(model) AS i FROM models WHERE strategy = 'project-knn') s;

-- f(x) >= 0 on most training rows, < 0 far from the data
SELECT m.strategy, avg((svc_decision(m.model, b.f) >= 0)::int) >= 0.8 AS most_inside
FROM models m, blobs b GROUP BY m.strategy ORDER BY m.strategy;
SELECT strategy, svc_decision(model, ARRAY[100, -100]) < 0 AS far_outside
FROM models ORDER BY strategy;

-- the defaults: one-argument form
SELECT (svc_model_info(svc_train(f))->>'n_support_vectors')::int <= 300 AS default_budget
FROM blobs;

-- same rows, options and seed: same bytes; another seed: other bytes
SELECT (SELECT svc_train(f, '{"seed": 7}') FROM blobs) = (SELECT svc_train(f, '{"seed": 7}') FROM blobs) AS same_seed_same_bytes;
SELECT (SELECT svc_train(f, '{"seed": 7}') FROM blobs) = (SELECT svc_train(f, '{"seed": 8}') FROM blobs) AS other_seed_same_bytes;
-- row order does not matter while every row fits in the sample
SELECT (SELECT svc_train(f ORDER BY id) FROM blobs) = (SELECT svc_train(f ORDER BY id DESC) FROM blobs) AS order_independent;

-- integer[] and real[] arrays work through the implicit casts
SELECT svc_model_info(svc_train(ARRAY[i % 5, i % 7]))->>'dims' AS int_dims FROM generate_series(1, 50) i;
SELECT svc_model_info(svc_train(ARRAY[i % 5, i % 7]::real[]))->>'dims' AS real_dims FROM generate_series(1, 50) i;

-- scale options are stored
SELECT s, svc_model_info(svc_train(f, jsonb_build_object('scale', s)))->>'scale' AS stored
FROM blobs, unnest(ARRAY['standard', 'minmax', 'none']) s GROUP BY s ORDER BY s;

-- NULL arrays are skipped; no rows (or only NULLs) give NULL, like avg()
SELECT svc_model_info(svc_train(CASE WHEN id % 2 = 0 THEN f END))->>'rows_seen' AS rows_seen_skipping_nulls FROM blobs;
SELECT svc_train(f) IS NULL AS empty_is_null FROM blobs WHERE false;
SELECT svc_train(NULL::float8[]) IS NULL AS all_null_is_null FROM generate_series(1, 3);
-- NULL options mean the defaults
SELECT svc_model_info(svc_train(f, NULL))->>'budget' AS null_options_budget FROM blobs;

-- GROUP BY trains one independent model per group
SELECT class, (svc_model_info(svc_train(f))->>'rows_seen')::int AS rows_seen
FROM blobs GROUP BY class ORDER BY class;

-- a sample smaller than the table keeps the memory bound
SELECT i->>'rows_seen' AS seen, i->>'rows_used' AS used
FROM (SELECT svc_model_info(svc_train(f, '{"sample": 100}')) i FROM blobs) s;

-- as a window function: a running model, and a moving frame
SELECT id, (svc_model_info(svc_train(f) OVER (ORDER BY id))->>'rows_seen')::int AS running
FROM blobs WHERE id <= 4 ORDER BY id;
SELECT id, (svc_model_info(svc_train(f) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW))->>'rows_seen')::int AS moving
FROM blobs WHERE id <= 5 ORDER BY id;

-- options that differ by group under a hashed GROUP BY: the groups' rows
-- interleave (class cycles with id), yet each group gets the model it gets
-- alone; class 1 passes NULL options, the defaults
SET enable_sort = off;
EXPLAIN (COSTS OFF)
SELECT class, svc_train(f, CASE WHEN class > 1 THEN jsonb_build_object('seed', class, 'budget', 10 + 10 * class) END)
FROM blobs GROUP BY class;
CREATE TABLE hashed_models AS
SELECT class, svc_train(f, CASE WHEN class > 1 THEN jsonb_build_object('seed', class, 'budget', 10 + 10 * class) END) AS model
FROM blobs GROUP BY class;
RESET enable_sort;
SELECT h.class, svc_model_info(h.model)->>'budget' AS budget,
       h.model = (SELECT svc_train(b.f, CASE WHEN h.class > 1 THEN jsonb_build_object('seed', h.class, 'budget', 10 + 10 * h.class) END)
                  FROM blobs b WHERE b.class = h.class) AS same_as_alone
FROM hashed_models h ORDER BY h.class;

-- more distinct options than svc_train keeps parsed (1024), interleaved:
-- the same states as when each group's rows come together
CREATE TABLE many_groups AS
SELECT i, i % 1500 AS g, ARRAY[i, i % 7]::float8[] AS f FROM generate_series(1, 3000) i;
SET enable_sort = off;
EXPLAIN (COSTS OFF)
SELECT g, svc_train_state(f, jsonb_build_object('seed', g)) FROM many_groups GROUP BY g;
CREATE TABLE many_hashed AS
SELECT g, svc_train_state(f, jsonb_build_object('seed', g)) AS s FROM many_groups GROUP BY g;
RESET enable_sort;
SET enable_hashagg = off;
CREATE TABLE many_sorted AS
SELECT g, svc_train_state(f, jsonb_build_object('seed', g)) AS s
FROM (SELECT * FROM many_groups ORDER BY g, i) m GROUP BY g;
RESET enable_hashagg;
SELECT count(*) AS groups, count(DISTINCT h.s::text) AS distinct_states,
       bool_and(h.s::text = o.s::text) AS same_states
FROM many_hashed h JOIN many_sorted o USING (g);

-- states large enough to be held between rows as expanded objects (past
-- 256 kB), with labelled rows growing theirs too: interleaved by hash
-- aggregation, the same states as when each group's rows come together
CREATE TABLE big_groups AS
SELECT i, i % 3 AS g, CASE WHEN i % 50 = 0 THEN 1 WHEN i % 97 = 0 THEN -1 END AS label,
       ARRAY(SELECT sin(i * k * 0.37) + (i % 3) FROM generate_series(1, 16) k)::float8[] AS f
FROM generate_series(1, 12000) i;
SET enable_sort = off;
CREATE TABLE big_hashed AS
SELECT g, svc_train_state(f, label, '{"label_sample": 300}') AS s FROM big_groups GROUP BY g;
RESET enable_sort;
SET enable_hashagg = off;
CREATE TABLE big_sorted AS
SELECT g, svc_train_state(f, label, '{"label_sample": 300}') AS s
FROM (SELECT * FROM big_groups ORDER BY g, i) b GROUP BY g;
RESET enable_hashagg;
SELECT count(*) AS groups, bool_and(h.s::text = o.s::text) AS same_states,
       min(octet_length(h.s::text)) > 2 * 256 * 1024 AS held
FROM big_hashed h JOIN big_sorted o USING (g);
-- and a running window over them: each frame's state is its rows' own
SELECT count(*) AS frames, bool_and(w.s::text = (SELECT svc_train_state(b.f)::text FROM big_groups b
                                                  WHERE b.g = w.g AND b.i <= w.i)) AS same_states
FROM (SELECT i, g, svc_train_state(f) OVER (PARTITION BY g ORDER BY i) AS s
      FROM big_groups WHERE i <= 6000) w
WHERE w.i IN (3000, 5999, 6000);

-- two spellings of the same options in one group are the same options
SELECT (SELECT svc_train(f, CASE WHEN id % 2 = 0 THEN '{"seed": 7}' ELSE '{"seed": 7.0}' END::jsonb) FROM blobs)
     = (SELECT svc_train(f, '{"seed": 7}') FROM blobs) AS spellings_agree;

-- the queries of svc_assign and svc_cvi may return arrays of any accepted
-- element type: read as the cast to double precision[] would read them
SELECT t AS elem_type,
       (SELECT array_agg(a ORDER BY a.id)
        FROM svc_assign(m.model, format('SELECT id, f::%s FROM blobs', t)) a)
     = (SELECT array_agg(a ORDER BY a.id)
        FROM svc_assign(m.model, format('SELECT id, (f::%s)::float8[] FROM blobs', t)) a) AS assign_same,
       (SELECT array_agg(c ORDER BY c.cvi)
        FROM svc_cvi(format('SELECT ARRAY[i * 1.25, i * i, 1000 - 7 * i]::%s, i %% 3 FROM generate_series(1, 30) i', t)) c)
     = (SELECT array_agg(c ORDER BY c.cvi)
        FROM svc_cvi(format('SELECT (ARRAY[i * 1.25, i * i, 1000 - 7 * i]::%s)::float8[], i %% 3 FROM generate_series(1, 30) i', t)) c) AS cvi_same
FROM models m, unnest(ARRAY['real[]', 'numeric[]', 'bigint[]', 'integer[]', 'smallint[]']) t
WHERE m.strategy = 'removal' ORDER BY t;
