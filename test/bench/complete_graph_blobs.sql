-- The complete graph with each solver's defaults on four 2-D Gaussian
-- blobs of 100 rows (sd 1, centres on a square g apart), 20 seeded draws
-- for each g: mean and least NMI against the blobs, and the cluster counts.
-- Run in a database with svclust: psql -X -q -f test/bench/complete_graph_blobs.sql
SELECT setseed(0.3);
CREATE TEMP TABLE cg_blobs AS
SELECT s, g, i, (i % 4) + 1 AS class,
       ARRAY[(ARRAY[0, g, 0, g])[(i % 4) + 1] + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()),
             (ARRAY[0, 0, g, g])[(i % 4) + 1] + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())]::float8[] AS f
FROM generate_series(1, 20) s, generate_series(1, 400) i, (VALUES (6.0), (7.0), (8.0)) v(g);
CREATE TEMP TABLE cg_result AS
SELECT s, g, solver, (svc_model_info(m)->>'n_clusters')::int AS k,
       (SELECT value FROM svc_cvi(format(
          'SELECT f, svc_predict(%L::bytea, f), class FROM cg_blobs WHERE s = %s AND g = %s', m, s, g))
        WHERE cvi = 'nmi') AS nmi
FROM (SELECT s, g, solver,
             svc_train(f, jsonb_build_object('labeling', 'complete-graph', 'solver', solver)) AS m
      FROM cg_blobs, (VALUES ('bsgd'), ('smo')) v(solver) GROUP BY s, g, solver) t;
SELECT g AS apart, solver, round(avg(nmi)::numeric, 3) AS mean_nmi, round(min(nmi)::numeric, 3) AS least_nmi,
       count(*) FILTER (WHERE k = 4) AS draws_with_4_clusters, count(*) AS draws
FROM cg_result GROUP BY g, solver ORDER BY g, solver;
