-- Bad input gets a clear error with its SQLSTATE, and the backend survives.
-- try() runs a statement and shows the error it raised, if any.
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

CREATE TABLE pts AS
SELECT i AS id, ARRAY[cos(i), sin(i)]::float8[] AS f FROM generate_series(1, 60) i;
CREATE TABLE m AS SELECT svc_train(f, '{"budget": 10}') AS model FROM pts;

-- features
SELECT pg_temp.try($q$SELECT svc_train(f) FROM (VALUES (ARRAY[1, 2]::float8[]), (ARRAY[1, 2, 3]::float8[])) v(f)$q$);
SELECT pg_temp.try($q$SELECT svc_train(ARRAY[1, NULL]::float8[])$q$);
SELECT pg_temp.try($q$SELECT svc_train(ARRAY[1, 'NaN']::float8[])$q$);
SELECT pg_temp.try($q$SELECT svc_train(ARRAY['Infinity', 1]::float8[])$q$);
SELECT pg_temp.try($q$SELECT svc_train(ARRAY['-Infinity', 1]::float8[])$q$);
SELECT pg_temp.try($q$SELECT svc_train('{}'::float8[])$q$);
SELECT pg_temp.try($q$SELECT svc_train(ARRAY[[1, 2], [3, 4]]::float8[])$q$);

-- which row or argument has the wrong length: the argument of a scalar
-- function, the id of svc_assign's row (with a context line for its other errors)
SELECT pg_temp.try($q$SELECT svc_predict(model, ARRAY[1, 2, 3]) FROM m$q$);
SELECT pg_temp.try($q$SELECT count(*) FROM m, svc_assign(model,
    'SELECT id, CASE WHEN id = 17 THEN ARRAY[1, 2, 3]::float8[] ELSE f END FROM pts')$q$);
SELECT count(*) FROM m, svc_assign(model,
    $$SELECT id, CASE WHEN id = 23 THEN ARRAY[1, 'NaN']::float8[] ELSE f END FROM pts$$);
SELECT count(*) FROM m, svc_assign(model,
    $$SELECT id, f FROM pts UNION ALL SELECT 99, ARRAY[1, NULL]::float8[]$$);

-- options
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budgett": 10}') FROM pts$q$);
-- a key mistyped in a recut is unknown, not fixed; the hint guesses the key
SELECT pg_temp.try($q$SELECT svc_recut(model, '{"n_clusterz": 2}') FROM m$q$);
SELECT pg_temp.try($q$SELECT count(*) FROM m, svc_assign(model, 'SELECT id, f FROM pts', '{"n_clusterz": 2}')$q$);
SELECT pg_temp.try($q$SELECT svc_recut(model, '{"gama": 2}') FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_recut(model, '{"gamma": 2}') FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budget": 0}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budget": 1000000}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budget": "ten"}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"budget": 2.5}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"strategy": "best"}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"gamma": -1}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"gamma": "wide"}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"c": 0}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"k": 100}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"scale": "log"}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"bandwidth_k": 65}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"bandwidth_k": -1}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_recut(model, '{"bandwidth_k": 5}') FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"sample": 1}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"seed": -3}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"tol": [0.1]}') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '[1, 2]') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '"budget"') FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, jsonb_build_object('budget', 10 + id % 2)) FROM pts$q$);
SELECT pg_temp.try($q$SELECT svc_train(f, '{"sample": 10000000}') FROM (SELECT array_fill(1.0::float8, ARRAY[2000]) f) s$q$);

-- a damaged or foreign model
SELECT pg_temp.try($q$SELECT svc_model_info('\x'::bytea)$q$);
SELECT pg_temp.try($q$SELECT svc_model_info('hello world'::bytea)$q$);
SELECT pg_temp.try($q$SELECT svc_model_info(substr(model, 1, 100)) FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_model_info(substr(model, 1, length(model) - 1)) FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_model_info(overlay(model placing '\xff'::bytea from 300 for 1)) FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_model_info(overlay(model placing '\x09'::bytea from 5 for 1)) FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_decision(overlay(model placing '\x00'::bytea from 1 for 1), ARRAY[1, 2]) FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_predict('\x0102'::bytea, ARRAY[1, 2])$q$);

-- scoring input
SELECT pg_temp.try($q$SELECT svc_decision(model, ARRAY[1, 2, 3]) FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_decision(model, ARRAY[1]) FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_decision(model, ARRAY[1, NULL]::float8[]) FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_decision(model, ARRAY[1, 'NaN']::float8[]) FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_predict(model, '{}'::float8[]) FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_predict(model, ARRAY[[1, 2]]::float8[]) FROM m$q$);
SELECT pg_temp.try($q$SELECT svc_decision(model, array_fill(0::float8, ARRAY[16001])) FROM m$q$);
SELECT svc_decision(model, NULL) IS NULL AS null_features_null_result FROM m;

-- combining states (what parallel workers and Citus do) refuses states of
-- other dimensions or other options; an aggregate over states calls the
-- combine function serially
CREATE AGGREGATE pg_temp.merge_states(svc_state)
    (SFUNC = svc_train_combinefn, STYPE = svc_state);
SELECT pg_temp.try($q$SELECT pg_temp.merge_states(s) FROM (
    SELECT svc_train_state(f) AS s FROM pts
    UNION ALL SELECT svc_train_state(f || 0::float8) FROM pts) v$q$);
SELECT pg_temp.try($q$SELECT pg_temp.merge_states(s) FROM (
    SELECT svc_train_state(f, '{"budget": 10}') AS s FROM pts
    UNION ALL SELECT svc_train_state(f, '{"budget": 11}') FROM pts) v$q$);
SELECT svc_train_finalfn(pg_temp.merge_states(s)) IS NOT NULL AS same_options_combine
FROM (SELECT svc_train_state(f, '{"budget": 10}') AS s FROM pts
      UNION ALL SELECT svc_train_state(f, '{"budget": 10}') FROM pts) v;

-- the state type refuses what it cannot read
SELECT pg_temp.try($q$SELECT 'hello'::svc_state$q$);
SELECT pg_temp.try($q$SELECT '\x00'::svc_state$q$);
SELECT pg_temp.try($q$SELECT '\x5356435301'::svc_state$q$);
SELECT pg_temp.try($q$SELECT svc_train_transfn(NULL, ARRAY[1.0]::float8[])$q$);

-- still alive
SELECT count(*) AS alive FROM pts;
