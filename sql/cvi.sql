-- svc_cvi and svc_cvi_agg: clustering validity indices.
-- Values are rounded to 12 digits so that the last bits of a platform's
-- libm cannot change the output.

-- A hand-checkable example: 0, 1, 3 in cluster 7, 10 in cluster -3, and a
-- row without a cluster.
CREATE TABLE cvi_line (x float8, cluster integer, class integer);
INSERT INTO cvi_line VALUES (0, 7, 1), (1, 7, 1), (3, 7, 2), (10, -3, 2), (5, NULL, 1);

-- n_rows 5, n_clusters 2, outlier_share 1/5;
-- compactness (3 * mean(1, 3, 2) + 1 * 0) / 4 = 1.5;
-- davies_bouldin: S = 10/9 and 0, centroids 26/3 apart: 5/39 = 0.128205128205;
-- silhouette (8/10 + 7.5/9 + 4.5/7 + 0) / 4 = 0.569047619048;
-- purity (2 + 1) / 4; rand 3/6; adjusted_rand 0; nmi 0.343711018485.
SELECT cvi, round(value::numeric, 12) AS value
FROM svc_cvi('SELECT ARRAY[x], cluster, class FROM cvi_line');

-- Without a class column: the first six indices only.
SELECT cvi, round(value::numeric, 12) AS value
FROM svc_cvi('SELECT ARRAY[x], cluster FROM cvi_line');

-- Rows with a NULL class are left out of the class-based indices only:
-- here purity, rand and nmi are those of the rows 0, 1 and 10.
SELECT cvi, round(value::numeric, 12) AS value
FROM svc_cvi($$SELECT ARRAY[x], cluster, CASE WHEN x <> 3 THEN class END
               FROM cvi_line$$);

-- A row with NULL features is skipped: it counts nowhere.
SELECT cvi, value
FROM svc_cvi($$SELECT ARRAY[x], cluster FROM cvi_line
               UNION ALL SELECT NULL::float8[], 7$$)
WHERE cvi IN ('n_rows', 'n_clusters', 'outlier_share');

-- The outlier flag of svc_assign can be turned into outliers with CASE.
SELECT cvi, value
FROM svc_cvi($$SELECT ARRAY[x], CASE WHEN x > 5 THEN NULL ELSE cluster END
               FROM cvi_line$$)
WHERE cvi IN ('n_rows', 'n_clusters', 'outlier_share');

-- Two-dimensional rows from generate_series: 300 points in 3 groups on a
-- grid, clustered by x alone (so one group is split and two merged).
CREATE TABLE cvi_grid AS
SELECT i,
       ARRAY[(i % 3) * 10 + (i % 7) * 0.5, (i % 11) * 0.3]::float8[] AS features,
       CASE WHEN (i % 3) * 10 + (i % 7) * 0.5 < 2 THEN 1
            WHEN (i % 3) * 10 + (i % 7) * 0.5 < 5 THEN 3
            ELSE 2 END AS cluster,
       i % 3 AS class,
       i % 2 AS half
FROM generate_series(1, 300) AS i;

SELECT cvi, round(value::numeric, 12) AS value
FROM svc_cvi('SELECT features, cluster, class FROM cvi_grid');

-- Perfect clustering: purity, rand, adjusted_rand and nmi are 1.
SELECT cvi, round(value::numeric, 12) AS value
FROM svc_cvi('SELECT features, class + 100, class FROM cvi_grid');

-- Ids are arbitrary integers: renaming them changes nothing.
SELECT count(*) AS differing
FROM svc_cvi('SELECT features, class, cluster FROM cvi_grid') a
JOIN svc_cvi($$SELECT features, class * -1000003, cluster * 2147483 - 5
               FROM cvi_grid$$) b USING (cvi)
WHERE a.value IS DISTINCT FROM b.value
  AND (a.value IS NULL OR b.value IS NULL OR abs(a.value - b.value) > 1e-12);

-- Other numeric arrays and integer types are accepted.
SELECT count(*) AS differing
FROM svc_cvi('SELECT features, cluster, class FROM cvi_grid') a
JOIN svc_cvi($$SELECT features::numeric[], cluster::bigint, class::smallint
               FROM cvi_grid$$) b USING (cvi)
WHERE a.value IS DISTINCT FROM b.value
  AND (a.value IS NULL OR b.value IS NULL OR abs(a.value - b.value) > 1e-12);
SELECT cvi, round(value::numeric, 12) AS value
FROM svc_cvi($$SELECT ARRAY[i, i * i]::integer[], i % 2 FROM generate_series(1, 6) i$$)
WHERE cvi IN ('compactness', 'davies_bouldin');
SELECT cvi, round(value::numeric, 12) AS value
FROM svc_cvi($$SELECT ARRAY[i, i * i]::real[], i % 2 FROM generate_series(1, 6) i$$)
WHERE cvi IN ('compactness', 'davies_bouldin');

-- Edge cases.
-- Zero rows: counts are 0, every other index NULL.
SELECT * FROM svc_cvi('SELECT features, cluster, class FROM cvi_grid WHERE false');
SELECT * FROM svc_cvi('SELECT features, cluster FROM cvi_grid WHERE false');
-- Only rows without a cluster.
SELECT * FROM svc_cvi('SELECT features, NULL::integer, class FROM cvi_grid WHERE i <= 4');
-- One row: compactness 0; Davies-Bouldin and silhouette need 2 <= K <= N - 1.
SELECT * FROM svc_cvi('SELECT ARRAY[1.5, 2]::float8[], 1, 1');
-- One cluster: Davies-Bouldin and silhouette are NULL, nmi is 0.
SELECT cvi, round(value::numeric, 12) AS value
FROM svc_cvi('SELECT features, 1, class FROM cvi_grid');
-- Every row its own cluster: compactness 0, Davies-Bouldin and silhouette NULL.
SELECT cvi, round(value::numeric, 12) AS value
FROM svc_cvi('SELECT features, i, 1 FROM cvi_grid WHERE i <= 5');
-- NULL query: no rows (the function is strict).
SELECT count(*) FROM svc_cvi(NULL);

-- The aggregate: one jsonb object per group, the same keys and values.
SELECT half, key, round(value::numeric, 12) AS value
FROM (SELECT half, svc_cvi_agg(features, cluster, class) AS j
      FROM cvi_grid GROUP BY half) g,
     LATERAL jsonb_each_text(j)
ORDER BY half, key;
SELECT half, jsonb_object_keys(svc_cvi_agg(features, cluster)) AS key
FROM cvi_grid WHERE half = 0 GROUP BY half ORDER BY key;
-- The aggregate agrees with svc_cvi on the same rows.
SELECT count(*) AS differing
FROM svc_cvi('SELECT features, cluster, class FROM cvi_grid WHERE half = 1') a
JOIN jsonb_each_text((SELECT svc_cvi_agg(features, cluster, class)
                      FROM cvi_grid WHERE half = 1)) b ON b.key = a.cvi
WHERE a.value IS DISTINCT FROM b.value::float8;
-- NULL features are skipped, a NULL cluster is an outlier, a NULL class
-- leaves the row out of the class-based indices.
SELECT svc_cvi_agg(ARRAY[x], cluster, class) FROM cvi_line;
SELECT svc_cvi_agg(CASE WHEN x < 5 THEN ARRAY[x] END, cluster, NULL) FROM cvi_line;
-- No rows at all.
SELECT svc_cvi_agg(features, cluster, class) FROM cvi_grid WHERE false;
SELECT svc_cvi_agg(features, cluster) FROM cvi_grid WHERE false;

-- Errors.
-- wrong number of columns
SELECT * FROM svc_cvi('SELECT features FROM cvi_grid');
SELECT * FROM svc_cvi('SELECT features, cluster, class, half FROM cvi_grid');
-- wrong column types
SELECT * FROM svc_cvi('SELECT ''{1,2}''::text, cluster FROM cvi_grid');
SELECT * FROM svc_cvi('SELECT 1.0::float8, cluster FROM cvi_grid');
SELECT * FROM svc_cvi('SELECT ARRAY[''a'']::text[], cluster FROM cvi_grid');
SELECT * FROM svc_cvi('SELECT features, cluster::text FROM cvi_grid');
SELECT * FROM svc_cvi('SELECT features, cluster::float8 FROM cvi_grid');
SELECT * FROM svc_cvi('SELECT features, cluster, ''a''::text FROM cvi_grid');
-- a bigint id out of the integer range
SELECT * FROM svc_cvi('SELECT features, 10000000000::bigint FROM cvi_grid');
SELECT * FROM svc_cvi('SELECT features, cluster, -10000000000::bigint FROM cvi_grid');
-- rows of different dimensions
SELECT * FROM svc_cvi($$SELECT features, cluster FROM cvi_grid
                        UNION ALL SELECT ARRAY[1, 2, 3]::float8[], 1$$);
-- rows without a cluster are checked too
SELECT * FROM svc_cvi($$SELECT features, cluster FROM cvi_grid
                        UNION ALL SELECT ARRAY[1]::float8[], NULL$$);
-- NaN, infinity, NULL elements, empty and multi-dimensional arrays
SELECT * FROM svc_cvi($$SELECT ARRAY[1, 'NaN']::float8[], 1$$);
SELECT * FROM svc_cvi($$SELECT ARRAY[1, '-Infinity']::float8[], 1$$);
SELECT * FROM svc_cvi($$SELECT ARRAY['NaN']::numeric[], 1$$);
SELECT * FROM svc_cvi($$SELECT ARRAY[1, NULL]::float8[], 1$$);
SELECT * FROM svc_cvi($$SELECT '{}'::float8[], 1$$);
SELECT * FROM svc_cvi($$SELECT '{{1,2},{3,4}}'::float8[], 1$$);
-- the query must be one read-only SELECT
SELECT * FROM svc_cvi('INSERT INTO cvi_line VALUES (1, 1, 1) RETURNING ARRAY[x], cluster');
SELECT * FROM svc_cvi($$WITH d AS (DELETE FROM cvi_line RETURNING *)
                        SELECT ARRAY[x], cluster FROM d$$);
SELECT * FROM svc_cvi('SELECT ARRAY[x], cluster FROM cvi_line FOR UPDATE');
SELECT * FROM svc_cvi('SELECT 1; SELECT 2');
SELECT * FROM svc_cvi('EXPLAIN SELECT 1');
SELECT * FROM svc_cvi('SELEC 1');
-- an error of the query itself
SELECT * FROM svc_cvi('SELECT ARRAY[1 / (i - 3)]::float8[], 1 FROM generate_series(1, 5) i');
SELECT count(*) AS unchanged FROM cvi_line;
-- the aggregate checks its rows the same way
SELECT svc_cvi_agg(features, cluster)
FROM (SELECT features, cluster FROM cvi_grid
      UNION ALL SELECT ARRAY[1, 2, 3]::float8[], 1) s;
SELECT svc_cvi_agg(ARRAY[x, 'Infinity'], cluster) FROM cvi_line;
SELECT svc_cvi_agg(ARRAY[x, NULL], cluster) FROM cvi_line;

-- Rows of any finite magnitude: times 2^1000 the indices are the same,
-- compactness times 2^1000 (squared distances would overflow otherwise)
SELECT a.cvi, a.value = CASE WHEN a.cvi = 'compactness' THEN b.value / power(2::float8, 1000)
                             ELSE b.value END AS same
FROM svc_cvi('SELECT features, cluster, class FROM cvi_grid') a
JOIN svc_cvi($$SELECT ARRAY[features[1] * power(2::float8, 1000), features[2] * power(2::float8, 1000)],
                      cluster, class FROM cvi_grid$$) b USING (cvi)
WHERE a.cvi IN ('compactness', 'davies_bouldin', 'silhouette');

-- The state is an ordinary value: it prints as \x and hex, reads back
-- checked, and a damaged one is refused.
CREATE TEMP TABLE cvi_states AS
SELECT svc_cvi_agg_state(f, c) AS s
FROM (VALUES (ARRAY[1, 2]::float8[], 3), (ARRAY[4, 5], NULL)) v (f, c);
SELECT left(s::text, 10) AS signature, length(s::text) AS text_length FROM cvi_states;
SELECT s::text::svc_cvi_state::text = s::text AS text_round_trip FROM cvi_states;
-- the final function of the stored state is the aggregate's answer
SELECT svc_cvi_agg_final(s) = (SELECT svc_cvi_agg(features, cluster) FROM cvi_grid) AS in_steps
FROM (SELECT svc_cvi_agg_state(features, cluster) AS s FROM cvi_grid) t;
SELECT svc_cvi_agg_final_class(s) = (SELECT svc_cvi_agg(features, cluster, class) FROM cvi_grid) AS in_steps
FROM (SELECT svc_cvi_agg_state(features, cluster, class) AS s FROM cvi_grid) t;
SELECT svc_cvi_agg_final(s) FROM cvi_states;
SELECT '\x00'::svc_cvi_state;
SELECT 'abc'::svc_cvi_state;
SELECT overlay(s::text placing 'ff' from 3)::svc_cvi_state FROM cvi_states;
SELECT (left(s::text, length(s::text) - 2))::svc_cvi_state FROM cvi_states;
-- a value that is not finite, smuggled into a row
SELECT overlay(s::text placing '000000000000f07f' from 3 + 2 * 48)::svc_cvi_state FROM cvi_states;
DROP TABLE cvi_states;

-- A long computation stops at statement_timeout (the core's loops check
-- for interrupts).
SET statement_timeout = '200ms';
SELECT * FROM svc_cvi($$SELECT ARRAY[i % 150, i / 150]::float8[], i % 4
                        FROM generate_series(1, 40000) i$$);
RESET statement_timeout;

DROP TABLE cvi_line, cvi_grid;
