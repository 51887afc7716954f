#!/usr/bin/env bash
# The svclust demo: installs what is missing, builds and installs the
# extension, starts a throwaway PostgreSQL 15 cluster, makes a small 2-D
# dataset with a known structure (a blob inside two rings, 900 rows, and 10
# far outliers), trains a model, assigns the rows to clusters, scores a few
# new rows and prints the validity indices.  The cluster is removed at the
# end.
set -euo pipefail
cd "$(dirname "$0")/.."

bash test/setup-debian.sh
make -s >/dev/null && make -s install >/dev/null
. test/pg.sh
pg_start
trap pg_stop EXIT

psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION svclust;
\echo '--- a blob inside two rings (class 1, 2, 3), 900 rows, plus 10 far outliers'
CREATE TABLE points AS
SELECT i AS id, (i % 3) + 1 AS class,
       ARRAY[r * cos(t), r * sin(t)]::float8[] AS features
FROM (SELECT i,
             (ARRAY[0.0, 3.0, 6.0])[(i % 3) + 1] + 0.3 * sin(i * 12.9898) AS r,
             i * 2.399963 AS t
      FROM generate_series(1, 900) i) s
UNION ALL
SELECT 1000 + i, 0, ARRAY[15 + i, -15 - i]::float8[] FROM generate_series(1, 10) i;

\echo '--- train and look at the model (long thin rings need a budget that covers'
\echo '    their length and a wider kernel: see README, "Choosing options")'
CREATE TABLE models AS
SELECT svc_train(features, '{"budget": 200, "gamma": 20}') AS model FROM points;
SELECT jsonb_pretty(svc_model_info(model) - 'cluster_sizes') AS model_info FROM models;

\echo '--- assign every row: clusters found against the known classes'
CREATE TABLE results AS
SELECT a.id, a.cluster, a.decision, a.outlier, p.class, p.features
FROM svc_assign((SELECT model FROM models), 'SELECT id, features FROM points') a
JOIN points p USING (id);
SELECT class, cluster, count(*) AS rows, sum(outlier::int) AS outliers
FROM results GROUP BY class, cluster ORDER BY class, cluster;

\echo '--- scoring single new rows'
SELECT svc_predict(model, ARRAY[0.1, 0.1]) AS cluster_of_centre,
       svc_predict(model, ARRAY[6.0, 0.0]) AS cluster_of_outer_ring,
       svc_decision(model, ARRAY[40.0, 40.0]) < 0 AS far_point_is_outside
FROM models;

\echo '--- clustering validity indices: a row flagged as an outlier passes a NULL'
\echo '    cluster, so it counts in outlier_share only; the far outliers have no class.'
\echo '    The class column gives purity, Rand, NMI; Davies-Bouldin and silhouette'
\echo '    assume compact clusters, so concentric rings score badly on them even'
\echo '    when the clustering is exact'
SELECT cvi, round(value::numeric, 4) AS value
FROM svc_cvi($$SELECT features, CASE WHEN outlier THEN NULL ELSE cluster END, NULLIF(class, 0)
               FROM results$$);
SQL
