-- Options as jsonb: one flat object walked key by key.  Key order, spacing
-- and 3 against 3.0 do not change a model; nested values, non-objects and
-- numbers out of range are refused naming the key.
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
\pset format unaligned
\pset tuples_only on

-- three blobs (tables named apart from the other tests', which share the database)
CREATE TABLE opt_blobs AS
SELECT i AS id,
       ARRAY[(ARRAY[0, 6, 0])[(i % 3) + 1] + 0.6 * cos(i * 2.399) * sqrt((i % 17 + 1) / 17.0),
             (ARRAY[0, 0, 6])[(i % 3) + 1] + 0.6 * sin(i * 2.399) * sqrt((i % 17 + 1) / 17.0)]::float8[] AS f
FROM generate_series(1, 300) i;

-- the same options written five ways give one model, byte for byte; the
-- texts differ (the jsonb of 40.0 is not that of 40), so each is parsed
-- on its own
CREATE TABLE opt_same AS
SELECT o AS options, svc_train(f, o::jsonb) AS model
FROM opt_blobs, unnest(ARRAY[
    '{"budget": 40, "seed": 7, "gamma": "auto", "merge_ratio": 0.3, "labeling": "tree"}',
    '{"labeling":"tree","merge_ratio":0.3,"gamma":"auto","seed":7,"budget":40}',
    E'{\n  "seed" : 7 ,\t"budget" : 40.0,\n  "merge_ratio": 3e-1, "gamma": "auto", "labeling": "tree"\n}',
    '{"budget": 4e1, "seed": 7.000, "merge_ratio": 0.30, "gamma": "auto", "labeling": "tree"}',
    '{"budget": 10, "seed": 7, "gamma": "auto", "merge_ratio": 0.3, "labeling": "tree", "budget": 40}'
]) o
GROUP BY o;
SELECT count(*) AS options, count(DISTINCT model) AS models,
       count(DISTINCT md5(model)) AS hashes FROM opt_same;
-- and not the model of other options
SELECT (SELECT model FROM opt_same LIMIT 1) <> svc_train(f, '{"budget": 40, "seed": 8}') AS seed_matters
FROM opt_blobs;
SELECT (i->>'budget')::int AS budget, i->>'labeling' AS labeling, (i->>'merge_ratio')::float8 AS merge_ratio
FROM (SELECT svc_model_info(model) AS i FROM opt_same LIMIT 1) s;

-- integers: exact to the largest seed, x.0 and 1e2 are integers, x.5 is not
SELECT pg_temp.try($q$SELECT svc_train(f, '{"seed": 9223372036854775807}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"seed": 9223372036854775808}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"seed": 9223372036854775807.0}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"seed": -0}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budget": 3.0, "k": 1e1}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budget": 3.5}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budget": -3.0}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budget": 1e30}') FROM opt_blobs$q$);
-- numbers past the doubles, either way
SELECT pg_temp.try($q$SELECT svc_train(f, '{"gamma": 1e400}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"gamma": 1e-400}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"level": -1e400}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"tol": 1e-300, "level": 1e300}') FROM opt_blobs$q$);

-- nested values are refused, naming the key and what it takes
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budget": {"value": 40}}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"gamma": [1, 2]}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"level": {"at": [0.5]}}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"strategy": []}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"options": {"budget": 40}}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_recut(model, '{"n_clusters": [2]}') FROM opt_same LIMIT 1$q$);
SELECT pg_temp.try($q$SELECT svc_recut(model, '{"seed": {"a": 1}}') FROM opt_same LIMIT 1$q$);
-- booleans and null, where no key takes them
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budget": true}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"gamma": null}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"level": null}') FROM opt_blobs$q$);
-- not an object
SELECT pg_temp.try($q$SELECT svc_train(f, '3') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, 'null') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '[{"budget": 40}]') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_recut(model, '[]') FROM opt_same LIMIT 1$q$);
-- the first bad key in the jsonb's own order (shorter keys first)
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budget": 0, "k": 0}') FROM opt_blobs$q$);
-- a key too long to be one is shown cut
SELECT pg_temp.try($q$SELECT svc_train(f, jsonb_build_object(repeat('x', 100), 1)) FROM opt_blobs$q$);

-- svc_recut with options from row to row: each row's cut is its own, and
-- the same cut however its options are written
SELECT count(*) AS rows,
       count(DISTINCT svc_recut(m.model, o)) AS models,
       bool_and(svc_recut(m.model, o) = CASE WHEN (o->>'n_clusters')::float8 > 0 THEN r.one ELSE r.level END) AS each_its_own_cut
FROM (SELECT model FROM opt_same LIMIT 1) m,
     (SELECT svc_recut(model, '{"n_clusters": 1}') AS one,
             svc_recut(model, '{"level": 0.5}') AS level FROM opt_same LIMIT 1) r,
     unnest(ARRAY['{"n_clusters": 1}', '{"level": 0.5}', '{ "n_clusters" : 1.0 }',
                  '{"level": 5e-1}', '{"n_clusters": 1, "level": null}',
                  '{"level": 0.5, "n_clusters": 0}']::jsonb[]) o,
     generate_series(1, 5) g;

-- keep_isolated (bsgd only) and min_cluster_size_rows: on and "separated" by
-- default, the model reports both and keeps its budget; keep_isolated
-- false, "labelled" (the rules before 0.5.0) and "sample" stay reachable; smo has no
-- budget, so its defaults leave keep_isolated off and its report without
-- the key
SELECT i->>'keep_isolated' AS keep_isolated, i->>'min_cluster_size_rows' AS size_rows,
       (i->>'n_support_vectors')::int <= 40 AS within_budget
FROM (SELECT svc_model_info(svc_train(f, '{"budget": 40}')) AS i FROM opt_blobs) s;
SELECT i->>'keep_isolated' AS keep_isolated, i->>'min_cluster_size_rows' AS size_rows
FROM (SELECT svc_model_info(svc_train(f, '{"budget": 40, "keep_isolated": false,
                                          "min_cluster_size_rows": "sample"}')) AS i
      FROM opt_blobs) s;
SELECT svc_model_info(svc_train(f, '{"min_cluster_size_rows": "labelled"}'))->>'min_cluster_size_rows'
FROM opt_blobs;
SELECT svc_model_info(svc_train(f, '{"solver": "smo"}')) ? 'keep_isolated' AS smo_has_key
FROM opt_blobs;
SELECT pg_temp.try($q$SELECT svc_train(f, '{"min_cluster_size_rows": "rows"}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"keep_isolated": true, "solver": "smo"}') FROM opt_blobs$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"keep_isolated": 1}') FROM opt_blobs$q$);

DROP TABLE opt_same, opt_blobs;
