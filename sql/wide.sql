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
DROP TABLE wide_pts, wide_m, wide_bad;
