-- Cutting the saddle tree: n_clusters, level, eom, svc_recut, the
-- options of svc_assign, outlier_fraction
SET extra_float_digits = 0;

-- four blobs: two pairs, each pair close together, the pairs far apart
CREATE TABLE quad AS
SELECT i AS id, (i % 4) + 1 AS class,
       ARRAY[(ARRAY[0, 2.2, 12, 14.2])[(i % 4) + 1] + 0.5 * cos(i * 2.399) * sqrt((i % 23 + 1) / 23.0),
             (ARRAY[0, 0, 12, 12])[(i % 4) + 1] + 0.5 * sin(i * 2.399) * sqrt((i % 23 + 1) / 23.0)]::float8[] AS f
FROM generate_series(1, 800) i;

CREATE TABLE qm AS SELECT svc_train(f) AS model FROM quad;

-- the tree and its cut are reported
SELECT i->>'cut' AS cut, (i->>'n_clusters')::int AS k,
       (i->>'n_tree_edges')::int = (i->>'n_equilibria')::int - 1 AS is_tree,
       jsonb_array_length(i->'stability') = (i->>'n_clusters')::int AS one_stability_per_cluster,
       (SELECT bool_and(s::float8 > 0 AND s::float8 <= 1) FROM jsonb_array_elements_text(i->'stability') s) AS stability_in_range,
       (i->>'cut_level')::float8 < (SELECT max(svc_decision((SELECT model FROM qm), f)) FROM quad) AS level_below_peaks
FROM (SELECT svc_model_info(model) AS i FROM qm) s;

-- the default cut finds the four blobs, n_clusters = 2 the two pairs,
-- n_clusters = 1 everything: each cut groups the rows as the truth does
CREATE FUNCTION pg_temp.match(opts jsonb, pairs boolean)
RETURNS TABLE (clusters bigint, classes bigint, pairs bigint)
LANGUAGE sql AS $$
  SELECT count(DISTINCT a.cluster), count(DISTINCT c), count(DISTINCT (a.cluster, c))
  FROM svc_assign((SELECT model FROM qm), 'SELECT id, f FROM quad', opts) a
  JOIN quad q USING (id),
  LATERAL (SELECT CASE WHEN pairs THEN (q.class + 1) / 2 ELSE q.class END AS c) t
$$;
-- clusters = classes = (cluster, class) pairs: the partitions are equal
SELECT 'default' AS cut, * FROM pg_temp.match('{}', false)
UNION ALL SELECT 'n_clusters 2', * FROM pg_temp.match('{"n_clusters": 2}', true)
UNION ALL SELECT 'n_clusters 1', * FROM pg_temp.match('{"n_clusters": 1}', true);

-- a trained model numbers its clusters 1..K by decreasing size: on quad
-- with class 1 thinned to half, the default cut puts it last; a cut again
-- keeps the ids of the clusters it continues: n_clusters = 2 merges each
-- pair under the id of its larger part (classes 2 and 3: ids 1 and 2)
CREATE TABLE qthin AS SELECT svc_train(f) AS model FROM quad WHERE class > 1 OR id % 8 = 0;
SELECT cut, array_agg(cluster ORDER BY cluster) AS ids, array_agg(n ORDER BY cluster) AS sizes,
       array_agg(classes ORDER BY cluster) AS classes
FROM (SELECT o::text AS cut, a.cluster, count(*) AS n, array_agg(DISTINCT q.class ORDER BY q.class)::text AS classes
      FROM unnest(ARRAY['{}', '{"n_clusters": 2}']::jsonb[]) o,
           svc_assign((SELECT model FROM qthin), 'SELECT id, f FROM quad WHERE class > 1 OR id % 8 = 0', o) a
      JOIN quad q USING (id)
      GROUP BY o::text, a.cluster) s
GROUP BY cut ORDER BY cut;

-- svc_recut gives a model that predicts what svc_assign with the same options assigns
SELECT count(*) AS rows, sum((svc_predict(svc_recut(m.model, '{"n_clusters": 2}'), q.f) = a.cluster)::int) AS agree
FROM qm m, quad q
JOIN svc_assign((SELECT model FROM qm), 'SELECT id, f FROM quad', '{"n_clusters": 2}') a ON a.id = q.id;
-- svc_recut per row with options that change from row to row (it keeps
-- the last cut): each row gets what a cut of its own gives
SELECT count(*) AS rows,
       bool_and(svc_recut((SELECT model FROM qm), o) =
                CASE q.id % 3 WHEN 0 THEN r.two WHEN 1 THEN r.one ELSE (SELECT model FROM qm) END) AS each_its_own_cut
FROM quad q,
     LATERAL (SELECT (ARRAY['{"n_clusters": 2}', '{"n_clusters": 1}', '{}'])[q.id % 3 + 1]::jsonb AS o) t,
     (SELECT svc_recut(model, '{"n_clusters": 2}') AS two, svc_recut(model, '{"n_clusters": 1}') AS one FROM qm) r;

-- NULL options mean the model's own cut; a NULL model gives no rows
SELECT (SELECT count(*) FROM svc_assign((SELECT model FROM qm), 'SELECT id, f FROM quad', NULL)) AS null_options,
       (SELECT count(*) FROM svc_assign(NULL, 'SELECT id, f FROM quad', '{}')) AS null_model;

-- a cut with the model's own options gives the model back, byte for byte;
-- recutting is reversible: the same clusters, options and f (the ids
-- differ: the three clusters that split off again get ids never used
-- before, 5 to 7)
CREATE FUNCTION pg_temp.same_but_ids(a bytea, b bytea) RETURNS boolean LANGUAGE sql AS $$
  SELECT svc_model_info(a) - 'lineage' - 'cluster_ids' - 'format_version' =
         svc_model_info(b) - 'lineage' - 'cluster_ids' - 'format_version'
$$;
SELECT svc_recut(model, '{}') = model AS same_bytes,
       pg_temp.same_but_ids(svc_recut(svc_recut(model, '{"n_clusters": 1}'), '{"n_clusters": 0}'), model) AS reversible,
       svc_model_info(svc_recut(svc_recut(model, '{"n_clusters": 1}'), '{"n_clusters": 0}'))->'cluster_ids' AS ids
FROM qm;

-- only the cut changes: the support vectors and f stay
SELECT count(*) FILTER (WHERE svc_decision(r.model, f) <> svc_decision(m.model, f)) AS f_changed
FROM quad, qm m, (SELECT svc_recut(model, '{"n_clusters": 1}') AS model FROM qm) r;

-- level: at f = 0 rows join where the domain connects them; a level above
-- every pass separates every equilibrium of at least the minimum size
SELECT (svc_model_info(svc_recut(model, '{"level": 0}'))->>'n_clusters')::int BETWEEN 2 AND 4 AS level0,
       svc_model_info(svc_recut(model, '{"level": 0}'))->>'cut' AS cut,
       (svc_model_info(svc_recut(model, '{"level": 1e6}'))->>'n_clusters')::int >=
       (svc_model_info(model)->>'n_clusters')::int AS high_level_splits_more
FROM qm;

-- eom and a large minimum size
SELECT svc_model_info(svc_recut(model, '{"cut": "eom"}'))->>'cut' AS cut,
       (svc_model_info(svc_recut(model, '{"cut": "eom"}'))->>'n_clusters')::int >= 2 AS eom_splits,
       svc_model_info(svc_recut(model, '{"min_cluster_size": 500}'))->>'n_clusters' AS k_min500,
       svc_model_info(svc_recut(model, '{"min_cluster_share": 0.3}'))->>'n_clusters' AS k_share30
FROM qm;

-- naming a rule alone clears a stored n_clusters or level: the rule is in
-- effect, as on a model that never had them
SELECT svc_model_info(svc_recut(svc_recut(model, '{"n_clusters": 1}'), '{"cut": "eom"}'))->>'cut' AS eom_after_k,
       pg_temp.same_but_ids(svc_recut(svc_recut(model, '{"n_clusters": 1}'), '{"merge_ratio": 0.4}'), model) AS ratio_after_k_is_model,
       pg_temp.same_but_ids(svc_recut(svc_recut(model, '{"level": 0}'), '{"cut": "persistence"}'), model) AS rule_after_level_is_model
FROM qm;

-- n_clusters beyond what the tree holds gives what it holds: with a minimum
-- size of 1 every equilibrium alone, with the default minimum the parts of that size
SELECT (svc_model_info(svc_recut(model, '{"n_clusters": 100000, "min_cluster_size": 1}'))->>'n_clusters')::int
       = (svc_model_info(model)->>'n_equilibria')::int AS every_equilibrium,
       (svc_model_info(svc_recut(model, '{"n_clusters": 100000}'))->>'n_clusters')::int
       BETWEEN 5 AND (svc_model_info(model)->>'n_equilibria')::int AS more_than_the_default
FROM qm;

-- a model cut at a level can be cut into n clusters (giving one clears the other)
SELECT svc_model_info(svc_recut(svc_recut(model, '{"level": 0}'), '{"n_clusters": 2}'))->>'n_clusters' AS k,
       svc_model_info(svc_recut(svc_recut(model, '{"n_clusters": 2}'), '{"level": 0}'))->>'cut' AS cut
FROM qm;

-- trained with n_clusters: the model is cut there from the start
SELECT svc_model_info(svc_train(f, '{"n_clusters": 2}'))->>'n_clusters' AS k FROM quad;

-- outlier_fraction sets the share of training rows outside the domain
SELECT o AS outlier_fraction,
       round(avg((svc_decision(m, f) < 0)::int), 2) AS share_outside
FROM (SELECT o, svc_train(f, jsonb_build_object('outlier_fraction', o)) AS m
      FROM quad, (VALUES (0.05), (0.2)) v(o) GROUP BY o) t, quad
GROUP BY o ORDER BY o;

-- errors
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text;
BEGIN
  EXECUTE sql;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RETURN st || ': ' || msg || coalesce(E'\n  DETAIL: ' || nullif(det, ''), '');
END $$;
SELECT pg_temp.try($q$SELECT svc_recut(model, '{"gamma": 3}') FROM qm$q$);
SELECT pg_temp.try($q$SELECT svc_recut(model, '{"n_clusters": 2, "level": 0}') FROM qm$q$);
SELECT pg_temp.try($q$SELECT svc_recut(model, '{"n_clusters": -1}') FROM qm$q$);
SELECT pg_temp.try($q$SELECT svc_recut(model, '{"cut": "single"}') FROM qm$q$);
SELECT pg_temp.try($q$SELECT svc_recut(model, '{"level": "high"}') FROM qm$q$);
SELECT pg_temp.try($q$SELECT count(*) FROM svc_assign((SELECT model FROM qm), 'SELECT id, f FROM quad', '{"seed": 1}')$q$);
SELECT pg_temp.try($q$SELECT svc_recut(svc_train(f, '{"labeling": "paper"}'), '{"n_clusters": 2}') FROM quad$q$);
-- ... but options that change nothing give a paper-labelled model back
SELECT svc_recut(m, '{}') = m AS paper_empty_cut,
       svc_recut(m, '{"merge_ratio": 0.4, "n_clusters": 0}') = m AS paper_own_values
FROM (SELECT svc_train(f, '{"labeling": "paper", "budget": 50}') AS m FROM quad) s;
SELECT pg_temp.try($q$SELECT svc_train(f, '{"outlier_fraction": 1.5}') FROM quad$q$);
