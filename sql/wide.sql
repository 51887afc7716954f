-- real[] rows: svc_decision and svc_predict read them without the cast to
-- float8[] (the planner support of the float8[] forms calls the _float4
-- forms), with the same results and the same errors; other argument types
-- resolve as before.
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
-- the function a call runs, from its plan
CREATE FUNCTION pg_temp.runs(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
        IF line ~ 'Output: ' THEN
            RETURN substring(line from 'Output: ([a-z_0-9]+)\(');
        END IF;
    END LOOP;
    RETURN NULL;
END $$;

CREATE TABLE wide_pts AS
SELECT i AS id, ARRAY[cos(i) + i % 3 * 4, sin(i), cos(2 * i) * 0.5, (i % 3)::float8]::real[] AS e
FROM generate_series(1, 90) i;
CREATE TABLE wide_m AS
SELECT svc_train(e::float8[], '{"budget": 30, "seed": 3}') AS m FROM wide_pts;

-- every row: the same cluster and f from real[] as from float8[]
SELECT count(*) AS rows,
       count(*) FILTER (WHERE svc_predict(m, e) = svc_predict(m, e::float8[])) AS same_cluster,
       count(*) FILTER (WHERE svc_decision(m, e) = svc_decision(m, e::float8[])) AS same_f
FROM wide_pts, wide_m;
-- as plain literals of each type: the same value
SELECT svc_decision(m, ARRAY[4, 0, 0, 1]::real[]) = svc_decision(m, ARRAY[4, 0, 0, 1]) AS same_literal,
       svc_predict(m, ARRAY[4, 0, 0, 1]::real[]) = svc_predict(m, '{4, 0, 0, 1}') AS same_cluster_literal
FROM wide_m;

-- which function each argument type reaches
SELECT pg_temp.runs('SELECT svc_decision(m, e) FROM wide_pts, wide_m') AS real_column,
       pg_temp.runs('SELECT svc_predict(m, e) FROM wide_pts, wide_m') AS real_column_predict,
       pg_temp.runs('SELECT svc_decision(m, e::float8[]) FROM wide_pts, wide_m') AS cast_to_float8,
       pg_temp.runs('SELECT svc_decision(m, ARRAY[id, id, id, id]) FROM wide_pts, wide_m') AS integer_array,
       pg_temp.runs('SELECT svc_decision(m, ARRAY[id, id, id, id]::numeric[]) FROM wide_pts, wide_m') AS numeric_array,
       pg_temp.runs('SELECT svc_decision(m, ARRAY[id::float8, 0, 0, 0]) FROM wide_pts, wide_m') AS float8_array;
-- no second svc_decision or svc_predict: untyped literals and NULL resolve
SELECT count(*) AS forms FROM pg_proc WHERE proname IN ('svc_decision', 'svc_predict');
SELECT svc_decision(m, NULL) IS NULL AS null_row, svc_predict(m, '{1, 0, 0, 0}') > 0 AS text_literal,
       svc_predict(m, ARRAY[1, 0, 0, 0]) > 0 AS integer_literal
FROM wide_m;

-- bad real[] rows, from a column (a constant is cast when planned): the
-- float8[] form's errors
CREATE TABLE wide_bad (id int, e real[]);
INSERT INTO wide_bad VALUES (1, '{1, NaN, 0, 0}'), (2, '{1, Infinity, 0, 0}'),
    (3, '{1, -Infinity, 0, 0}'), (4, '{1, NULL, 0, 0}'), (5, '{1, 2}'),
    (6, '{}'), (7, '{{1, 2}, {3, 4}}'), (8, '{1, 2, 3, 4, 5}');
SELECT pg_temp.runs('SELECT svc_decision(m, e) FROM wide_bad, wide_m') AS bad_rows_run;
SELECT id, pg_temp.try(format('SELECT svc_decision(m, e) FROM wide_bad, wide_m WHERE id = %s', id)) AS decision,
       pg_temp.try(format('SELECT svc_predict(m, e) FROM wide_bad, wide_m WHERE id = %s', id)) AS predict
FROM wide_bad ORDER BY id;
-- the float8[] form (a concatenation keeps the cast) says the same
SELECT id, pg_temp.try(format('SELECT svc_decision(m, e) FROM wide_bad, wide_m WHERE id = %s', id)) =
           pg_temp.try(format('SELECT svc_decision(m, (e::float8[] || NULL::float8[])) FROM wide_bad, wide_m WHERE id = %s', id)) AS same_error
FROM wide_bad ORDER BY id;
-- svc_assign reads a real[] column as stored: the same rows as float8[]
SELECT count(*) AS assigned,
       count(*) FILTER (WHERE a.cluster = b.cluster AND a.decision = b.decision) AS same
FROM svc_assign((SELECT m FROM wide_m), 'SELECT id, e FROM wide_pts') a
JOIN svc_assign((SELECT m FROM wide_m), 'SELECT id, e::float8[] FROM wide_pts') b
USING (id);
SELECT pg_temp.try($q$SELECT count(*) FROM svc_assign((SELECT m FROM wide_m), 'SELECT id, e FROM wide_bad WHERE id = 1')$q$) AS nan_row,
       pg_temp.try($q$SELECT count(*) FROM svc_assign((SELECT m FROM wide_m), 'SELECT id, e FROM wide_bad WHERE id = 5')$q$) AS short_row;
-- 96 features: the scorer's float distances (64 features and more), the
-- same clusters and f from real[] rows as from float8[] rows
CREATE TABLE wide96 AS
SELECT i AS id, array_agg((cos(i % 4 * 1.7 + j * 0.37) + 0.05 * sin(i * j))::real ORDER BY j) AS e
FROM generate_series(1, 200) i, generate_series(1, 96) j GROUP BY i;
CREATE TABLE wide96_m AS
SELECT svc_train(e::float8[], '{"budget": 40, "seed": 2, "gamma": 0.5, "scale": "none"}') AS m FROM wide96;
SELECT svc_model_info(m)->>'dims' AS dims, svc_model_info(m)->>'n_clusters' AS clusters FROM wide96_m;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE svc_predict(m, e) = svc_predict(m, e::float8[] || NULL::float8[])) AS same_cluster,
       count(*) FILTER (WHERE svc_decision(m, e) = svc_decision(m, e::float8[] || NULL::float8[])) AS same_f,
       count(DISTINCT svc_predict(m, e)) >= 2 AS several
FROM wide96, wide96_m;
DROP TABLE wide96, wide96_m;
-- and the _float4 forms called by name
SELECT svc_decision_float4(m, e) = svc_decision(m, e::float8[]) AS by_name
FROM wide_pts, wide_m WHERE id = 7;

-- svc_train on real[], smallint[], integer[], bigint[] and numeric[]: each
-- form has an overload that reads the rows without the cast to float8[],
-- and gives the model (and the state) of features::float8[] to the byte
CREATE TABLE wide_types AS
SELECT id, e,
       ARRAY[id % 3 * 40 + id % 7, id % 5, -(id % 11), id % 2]::smallint[] AS i2,
       ARRAY[id % 3 * 40 + id % 7, id % 5, -(id % 11), id % 2]::integer[] AS i4,
       -- beyond 2^53: converted with rounding, as the cast does
       ARRAY[9007199254740993 + id * 7777777777, id % 5, -(id % 11), id % 2]::bigint[] AS i8,
       ARRAY[round((id % 3 * 4 + cos(id))::numeric, 20) + 0.1, round(sin(id)::numeric, 17),
             1 / (id + 2.0), id % 3]::numeric[] AS n,
       CASE WHEN id % 30 = 0 THEN -1 WHEN id % 31 = 0 THEN 1 END AS lab
FROM wide_pts;
CREATE TABLE wide_init AS
SELECT svc_train(e::float8[], '{"budget": 30, "seed": 5}') AS e,
       svc_train(i2::float8[], '{"budget": 30, "seed": 5}') AS i2,
       svc_train(i4::float8[], '{"budget": 30, "seed": 5}') AS i4,
       svc_train(i8::float8[], '{"budget": 30, "seed": 5}') AS i8,
       svc_train(n::float8[], '{"budget": 30, "seed": 5}') AS n
FROM wide_types;
SELECT 'real[]' AS features,
       svc_train(t.e) = svc_train(t.e::float8[]) AS plain,
       svc_train(t.e, '{"budget": 30}') = svc_train(t.e::float8[], '{"budget": 30}') AS options,
       svc_train(t.e, lab, '{"budget": 30}') = svc_train(t.e::float8[], lab, '{"budget": 30}') AS labelled,
       svc_train(t.e, NULL, i.e) = svc_train(t.e::float8[], NULL, i.e) AS warm,
       svc_train_state(t.e)::text = svc_train_state(t.e::float8[])::text AS state,
       svc_train_state(t.e, '{"budget": 30}')::text = svc_train_state(t.e::float8[], '{"budget": 30}')::text AS state_options,
       svc_train_state(t.e, lab, '{"budget": 30}')::text = svc_train_state(t.e::float8[], lab, '{"budget": 30}')::text AS state_labelled,
       svc_train_state(t.e, NULL, i.e)::text = svc_train_state(t.e::float8[], NULL, i.e)::text AS state_warm
FROM wide_types t, wide_init i;
SELECT 'smallint[]' AS features,
       svc_train(t.i2) = svc_train(t.i2::float8[]) AS plain,
       svc_train(t.i2, '{"budget": 30}') = svc_train(t.i2::float8[], '{"budget": 30}') AS options,
       svc_train(t.i2, lab, '{"budget": 30}') = svc_train(t.i2::float8[], lab, '{"budget": 30}') AS labelled,
       svc_train(t.i2, NULL, i.i2) = svc_train(t.i2::float8[], NULL, i.i2) AS warm,
       svc_train_state(t.i2)::text = svc_train_state(t.i2::float8[])::text AS state,
       svc_train_state(t.i2, '{"budget": 30}')::text = svc_train_state(t.i2::float8[], '{"budget": 30}')::text AS state_options,
       svc_train_state(t.i2, lab, '{"budget": 30}')::text = svc_train_state(t.i2::float8[], lab, '{"budget": 30}')::text AS state_labelled,
       svc_train_state(t.i2, NULL, i.i2)::text = svc_train_state(t.i2::float8[], NULL, i.i2)::text AS state_warm
FROM wide_types t, wide_init i;
SELECT 'integer[]' AS features,
       svc_train(t.i4) = svc_train(t.i4::float8[]) AS plain,
       svc_train(t.i4, '{"budget": 30}') = svc_train(t.i4::float8[], '{"budget": 30}') AS options,
       svc_train(t.i4, lab, '{"budget": 30}') = svc_train(t.i4::float8[], lab, '{"budget": 30}') AS labelled,
       svc_train(t.i4, NULL, i.i4) = svc_train(t.i4::float8[], NULL, i.i4) AS warm,
       svc_train_state(t.i4)::text = svc_train_state(t.i4::float8[])::text AS state,
       svc_train_state(t.i4, '{"budget": 30}')::text = svc_train_state(t.i4::float8[], '{"budget": 30}')::text AS state_options,
       svc_train_state(t.i4, lab, '{"budget": 30}')::text = svc_train_state(t.i4::float8[], lab, '{"budget": 30}')::text AS state_labelled,
       svc_train_state(t.i4, NULL, i.i4)::text = svc_train_state(t.i4::float8[], NULL, i.i4)::text AS state_warm
FROM wide_types t, wide_init i;
SELECT 'bigint[]' AS features,
       svc_train(t.i8) = svc_train(t.i8::float8[]) AS plain,
       svc_train(t.i8, '{"budget": 30}') = svc_train(t.i8::float8[], '{"budget": 30}') AS options,
       svc_train(t.i8, lab, '{"budget": 30}') = svc_train(t.i8::float8[], lab, '{"budget": 30}') AS labelled,
       svc_train(t.i8, NULL, i.i8) = svc_train(t.i8::float8[], NULL, i.i8) AS warm,
       svc_train_state(t.i8)::text = svc_train_state(t.i8::float8[])::text AS state,
       svc_train_state(t.i8, '{"budget": 30}')::text = svc_train_state(t.i8::float8[], '{"budget": 30}')::text AS state_options,
       svc_train_state(t.i8, lab, '{"budget": 30}')::text = svc_train_state(t.i8::float8[], lab, '{"budget": 30}')::text AS state_labelled,
       svc_train_state(t.i8, NULL, i.i8)::text = svc_train_state(t.i8::float8[], NULL, i.i8)::text AS state_warm
FROM wide_types t, wide_init i;
SELECT 'numeric[]' AS features,
       svc_train(t.n) = svc_train(t.n::float8[]) AS plain,
       svc_train(t.n, '{"budget": 30}') = svc_train(t.n::float8[], '{"budget": 30}') AS options,
       svc_train(t.n, lab, '{"budget": 30}') = svc_train(t.n::float8[], lab, '{"budget": 30}') AS labelled,
       svc_train(t.n, NULL, i.n) = svc_train(t.n::float8[], NULL, i.n) AS warm,
       svc_train_state(t.n)::text = svc_train_state(t.n::float8[])::text AS state,
       svc_train_state(t.n, '{"budget": 30}')::text = svc_train_state(t.n::float8[], '{"budget": 30}')::text AS state_options,
       svc_train_state(t.n, lab, '{"budget": 30}')::text = svc_train_state(t.n::float8[], lab, '{"budget": 30}')::text AS state_labelled,
       svc_train_state(t.n, NULL, i.n)::text = svc_train_state(t.n::float8[], NULL, i.n)::text AS state_warm
FROM wide_types t, wide_init i;
-- the warm start really continued its init (not a fresh model)
SELECT svc_train(t.e, NULL, i.e) <> svc_train(t.e) AS warm_differs FROM wide_types t, wide_init i;
-- the overloads: float8[] and the five others, for each of the four forms
SELECT proname, count(*) AS forms,
       string_agg(DISTINCT format_type(proargtypes[0], NULL), ', ') AS features
FROM pg_proc WHERE proname IN ('svc_train', 'svc_train_state') GROUP BY proname ORDER BY proname;

-- bad real[] rows: the float8[] form's errors (SQLSTATE, text and detail)
CREATE FUNCTION pg_temp.try_detail(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    detail text;
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    RETURN SQLSTATE || ': ' || SQLERRM || ' (' || detail || ')';
END $$;
SELECT id, pg_temp.try_detail(format('SELECT svc_train_state(e) FROM wide_bad WHERE id IN (5, %s)', id)) AS train,
       pg_temp.try_detail(format('SELECT svc_train(e) FROM wide_bad WHERE id IN (5, %s)', id)) =
       pg_temp.try_detail(format('SELECT svc_train(e::float8[]) FROM wide_bad WHERE id IN (5, %s)', id)) AS same_error
FROM wide_bad WHERE id <> 5 ORDER BY id;
-- and NULL elements, NaN and infinity in integer and numeric rows
SELECT pg_temp.try($q$SELECT svc_train(ARRAY[1, NULL]::integer[])$q$) AS integer_null,
       pg_temp.try($q$SELECT svc_train(ARRAY[1, NULL]::bigint[], '{}')$q$) AS bigint_null,
       pg_temp.try($q$SELECT svc_train('{1, NaN}'::numeric[])$q$) AS numeric_nan,
       pg_temp.try($q$SELECT svc_train_state('{1, -Infinity}'::numeric[])$q$) AS numeric_infinity,
       pg_temp.try($q$SELECT svc_train(v) FROM (VALUES (ARRAY[1, 2]), (ARRAY[1, 2, 3])) t(v)$q$) AS ragged;
-- the transition function on anyarray refuses other element types
CREATE AGGREGATE pg_temp.text_train(text[]) (SFUNC = svc_train_array_transfn, STYPE = svc_state);
SELECT pg_temp.try($q$SELECT pg_temp.text_train(ARRAY['1', '2'])$q$) AS text_array;

-- the price: an untyped literal or a bare NULL as features is ambiguous
-- between the overloads; a cast says which
SELECT pg_temp.try($q$SELECT svc_train('{1, 2}')$q$) AS untyped_literal,
       pg_temp.try($q$SELECT svc_train(NULL, '{}')$q$) AS bare_null;
SELECT svc_train_state('{1, 2}'::float8[]) IS NOT NULL AS cast_literal,
       svc_train(NULL::float8[], '{}') IS NULL AS cast_null,
       svc_train_state(ARRAY[1, 2]) IS NOT NULL AS integer_literal;

-- parallel: a Partial/Finalize plan over real[] (and the other types)
-- gives the serial model
CREATE TABLE wide_par AS
SELECT i AS id,
       ARRAY[(i % 3) * 5 + cos(i * 2.399) * sqrt((i % 23) / 23.0),
             (i % 3) * 2 + sin(i * 2.399) * sqrt((i % 23) / 23.0)]::real[] AS e
FROM generate_series(1, 20000) i;
ANALYZE wide_par;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT svc_train(e, '{"sample": 2000}') FROM wide_par;
CREATE TABLE wide_par_m AS
SELECT svc_train(e, '{"sample": 2000}') AS e, svc_train(e, '{"sample": 30000}') AS e_all,
       svc_train(e::float8[], '{"sample": 2000}') AS f8,
       svc_train(round_i, '{"sample": 2000}') AS i4, svc_train(round_n, '{"sample": 2000}') AS n,
       svc_train(e, NULL::integer, '{"sample": 2000}') AS labelled,
       svc_train_finalfn(svc_train_state(e, '{"sample": 2000}')) AS state
FROM (SELECT e, ARRAY[round(e[1] * 100), round(e[2] * 100)]::integer[] AS round_i,
             ARRAY[round(e[1]::numeric, 3), round(e[2]::numeric, 3)] AS round_n FROM wide_par) s;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE wide_ser_m AS
SELECT svc_train(e, '{"sample": 2000}') AS e, svc_train(e, '{"sample": 30000}') AS e_all,
       svc_train(e::float8[], '{"sample": 2000}') AS f8,
       svc_train(round_i, '{"sample": 2000}') AS i4, svc_train(round_n, '{"sample": 2000}') AS n,
       svc_train(e, NULL::integer, '{"sample": 2000}') AS labelled,
       svc_train_finalfn(svc_train_state(e, '{"sample": 2000}')) AS state
FROM (SELECT e, ARRAY[round(e[1] * 100), round(e[2] * 100)]::integer[] AS round_i,
             ARRAY[round(e[1]::numeric, 3), round(e[2]::numeric, 3)] AS round_n FROM wide_par) s;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
SELECT p.e = s.e AS real_parallel_equals_serial, p.e_all = s.e_all AS real_all_rows,
       p.e = p.f8 AS real_equals_float8, p.i4 = s.i4 AS integer_parallel_equals_serial,
       p.n = s.n AS numeric_parallel_equals_serial, p.labelled = s.labelled AS labelled,
       p.state = s.state AND p.state = p.e AS state
FROM wide_par_m p, wide_ser_m s;
DROP TABLE wide_types, wide_init, wide_par, wide_par_m, wide_ser_m;
DROP TABLE wide_pts, wide_m, wide_bad;
