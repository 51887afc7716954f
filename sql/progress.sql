-- svclust.progress: counts as NOTICEs at the cadence of svclust.progress_every
CREATE TABLE progress_points AS
SELECT i AS id, ARRAY[(i % 2) * 6 + sqrt(i * 0.618034 % 1) * cos(i * 2.4),
                      sqrt(i * 0.618034 % 1) * sin(i * 2.4)]::float8[] AS features
FROM generate_series(1, 1200) AS i;

-- off (the default): no NOTICE
SELECT svc_train(features, '{"budget": 40, "max_iter": 3000}') IS NOT NULL AS trained
FROM progress_points;
-- the settings exist once the library is loaded
SHOW svclust.progress;
SHOW svclust.progress_every;

SET svclust.progress = on;
SET svclust.progress_every = 500;
-- rows scanned, the training sample, SGD steps, labelling, the result
SELECT svc_train(features, '{"budget": 40, "max_iter": 3000}') IS NOT NULL AS trained
FROM progress_points;
-- the exact solver counts SMO iterations
SET svclust.progress_every = 200;
SELECT svc_model_info(svc_train(features, '{"solver": "smo", "sample": 300}'))->'n_clusters' AS k
FROM progress_points WHERE id <= 300;
-- svc_assign counts the rows it scores
SET svclust.progress_every = 1000;
SELECT count(*) FROM svc_assign(
    (SELECT svc_train(features, '{"budget": 40, "max_iter": 500}') FROM progress_points),
    'SELECT id, features FROM progress_points');
-- the window function counts its partition's rows, scanned and clustered
SET svclust.progress_every = 400;
SELECT count(DISTINCT c) AS clusters
FROM (SELECT svc_cluster(features, '{"budget": 40, "max_iter": 800}') OVER () AS c
      FROM progress_points) t;

SET svclust.progress_every = 0;   -- at least 1
RESET svclust.progress;
RESET svclust.progress_every;
