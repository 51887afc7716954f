-- Cluster ids that survive a refresh: a warm start and a recut keep the
-- id of every cluster that continues one of the earlier model's, a new
-- cluster gets an id the earlier model never used, and a plain svc_train
-- numbers its clusters by size
SET extra_float_digits = 0;

-- four blobs: A (0,0), B (8,0), and C (0,8), D (3.2,8) apart
CREATE TABLE drift0 AS
SELECT 1000 * c + i AS id, c AS blob,
       ARRAY[cx + r * cos(t), cy + r * sin(t)]::float8[] AS f
FROM (VALUES (1, 0.0, 0.0), (2, 8.0, 0.0), (3, 0.0, 8.0), (4, 3.2, 8.0)) b(c, cx, cy),
     generate_series(1, 200) i,
     LATERAL (SELECT sqrt((i - 0.5) / 200) AS r, i * 2.399963 AS t) s;
-- a day later: A has moved to (1,0.5), B stays, a bridge of rows joins C
-- and D, and a new blob E has appeared at (8,8)
CREATE TABLE drift1 AS
SELECT 1000 * c + i AS id, c AS blob,
       ARRAY[cx + r * cos(t), cy + r * sin(t)]::float8[] AS f
FROM (VALUES (1, 1.0, 0.5), (2, 8.0, 0.0), (3, 0.0, 8.0), (4, 3.2, 8.0), (5, 8.0, 8.0)) b(c, cx, cy),
     generate_series(1, 200) i,
     LATERAL (SELECT sqrt((i - 0.5) / 200) AS r, i * 2.399963 AS t) s
UNION ALL
SELECT 6000 + i, 6, ARRAY[0.2 + 2.8 * (i % 41) / 40.0, 8 + 0.5 * sin(i * 1.7)]::float8[]
FROM generate_series(1, 200) i;

CREATE TABLE dm AS SELECT 'init' AS name, svc_train(f) AS model FROM drift0;
INSERT INTO dm SELECT 'refreshed', svc_train(f, NULL, (SELECT model FROM dm WHERE name = 'init')) FROM drift1;
INSERT INTO dm SELECT 'fresh', svc_train(f) FROM drift1;
INSERT INTO dm SELECT 'again', svc_train(f, NULL, (SELECT model FROM dm WHERE name = 'refreshed')) FROM drift1;

-- each blob's cluster at its centre, before and after
CREATE TABLE centres AS
SELECT name, svc_predict(model, ARRAY[0, 0]::float8[]) AS a,
       svc_predict(model, ARRAY[1, 0.5]::float8[]) AS a_moved,
       svc_predict(model, ARRAY[8, 0]::float8[]) AS b,
       svc_predict(model, ARRAY[0, 8]::float8[]) AS c,
       svc_predict(model, ARRAY[3.2, 8]::float8[]) AS d,
       svc_predict(model, ARRAY[8, 8]::float8[]) AS e,
       (svc_model_info(model)->>'n_clusters')::int AS k
FROM dm;
-- the init model: four clusters of 200, numbered by size
SELECT k, a = a_moved AS a_one, array_length(ARRAY(SELECT DISTINCT x FROM unnest(ARRAY[a, b, c, d]) x), 1) AS distinct_ids,
       svc_model_info(model)->'cluster_ids' AS ids, svc_model_info(model) ? 'lineage' AS has_lineage
FROM centres JOIN dm USING (name) WHERE name = 'init';

-- refreshed: A (moved) and B keep their ids, C and D merged under C's id
-- (the part of C and D each shares the same; C, the larger init cluster,
-- is the parent), and E gets 5, an id the init model never used
SELECT r.k,
       r.a_moved = i.a AS a_kept, r.b = i.b AS b_kept,
       r.c = i.c AND r.d = i.c AS cd_merged_under_c,
       r.e AS e, r.e > (SELECT max(x) FROM unnest(ARRAY[i.a, i.b, i.c, i.d]) x) AS e_unused
FROM centres r, centres i WHERE r.name = 'refreshed' AND i.name = 'init';

-- svc_model_info reports the mapping
SELECT c->>'id' AS id, c->>'status' AS status, c->'from' AS "from"
FROM dm, jsonb_array_elements(svc_model_info(model)->'lineage'->'clusters') c
WHERE name = 'refreshed' ORDER BY (c->>'id')::int;
SELECT svc_model_info(model)->'lineage'->'ended' AS ended,
       svc_model_info(model)->'lineage'->'next_id' AS next_id,
       (SELECT sum(s::int) FROM jsonb_array_elements_text(svc_model_info(model)->'cluster_sizes') s) =
       (svc_model_info(model)->>'rows_used')::int AS sizes_sum_to_rows_used
FROM dm WHERE name = 'refreshed';

-- a plain svc_train on the same rows numbers by size, as before, and has
-- no lineage: its ids differ from the refreshed model's
SELECT f.a_moved = r.a_moved AND f.b = r.b AND f.c = r.c AND f.e = r.e AS fresh_same_ids,
       svc_model_info(model) ? 'lineage' AS fresh_has_lineage,
       svc_model_info(model)->'cluster_ids' AS fresh_ids
FROM centres f JOIN dm USING (name), centres r WHERE f.name = 'fresh' AND r.name = 'refreshed';

-- refreshing the refreshed model again keeps every id, and the highest
-- id ever used
SELECT g.a_moved = r.a_moved AND g.b = r.b AND g.c = r.c AND g.e = r.e AS again_same_ids,
       svc_model_info(model)->'lineage'->'next_id' AS next_id,
       (SELECT bool_and(x->>'status' = 'continued')
        FROM jsonb_array_elements(svc_model_info(model)->'lineage'->'clusters') x) AS all_continued
FROM centres g JOIN dm USING (name), centres r WHERE g.name = 'again' AND r.name = 'refreshed';

-- every output uses the ids: svc_assign, svc_predict and the plot agree
SELECT count(*) AS rows, bool_and(a.cluster = svc_predict(m.model, q.f)) AS assign_is_predict,
       count(DISTINCT a.cluster) AS clusters, max(a.cluster) AS max_id
FROM dm m, drift1 q JOIN svc_assign((SELECT model FROM dm WHERE name = 'refreshed'), 'SELECT id, f FROM drift1') a USING (id)
WHERE m.name = 'refreshed';
SELECT svc_plot_svg(model, 'SELECT id, f FROM drift1') LIKE '%cluster 5: 200 rows%' AS legend_has_id_5
FROM dm WHERE name = 'refreshed';

-- a recut keeps the ids too: the model's own cut gives it back byte for
-- byte; a coarser cut merges under the larger part's id; a finer cut of
-- the coarser one splits with the id on the larger part and new ids
-- beyond every id used before
SELECT svc_recut(model, '{}') = model AS own_cut_same_bytes FROM dm WHERE name = 'refreshed';
CREATE TABLE cuts AS
SELECT svc_recut(model, '{"n_clusters": 2}') AS two,
       svc_recut(svc_recut(model, '{"n_clusters": 2}'), '{"n_clusters": 4}') AS four
FROM dm WHERE name = 'init';
SELECT svc_model_info(two)->'cluster_ids' AS two_ids,
       (SELECT jsonb_agg(c->'status' ORDER BY (c->>'id')::int)
        FROM jsonb_array_elements(svc_model_info(two)->'lineage'->'clusters') c) AS two_status,
       svc_model_info(four)->'cluster_ids' AS four_ids,
       (SELECT jsonb_agg(c->'status' ORDER BY (c->>'id')::int)
        FROM jsonb_array_elements(svc_model_info(four)->'lineage'->'clusters') c) AS four_status,
       svc_model_info(four)->'lineage'->'next_id' AS four_next_id
FROM cuts;
-- per row, each options value is cut from the stored model: the ids do
-- not depend on the cut before
SELECT bool_and(svc_recut(m.model, o) = CASE WHEN o = '{}' THEN m.model ELSE c.two END) AS each_from_stored
FROM dm m, cuts c,
     unnest(ARRAY['{"n_clusters": 2}', '{}', '{"n_clusters": 2}', '{"n_clusters": 3}', '{}']::jsonb[]) o
WHERE m.name = 'init' AND o <> '{"n_clusters": 3}';

DROP TABLE drift0, drift1, dm, centres, cuts;
