-- Extension versions: 0.5.0 is 0.1.0 plus the upgrade scripts, every
-- object of the extension has a comment, and 0.1.0 updates to 0.5.0.
SELECT extversion FROM pg_extension WHERE extname = 'svclust';

-- functions, aggregates and types of the extension without a comment
SELECT d.classid::regclass AS catalog,
       coalesce(p.oid::regprocedure::text, t.oid::regtype::text) AS object
FROM pg_depend d
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'svclust'
LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
LEFT JOIN pg_type t ON d.classid = 'pg_type'::regclass AND t.oid = d.objid
WHERE d.deptype = 'e' AND d.classid IN ('pg_proc'::regclass, 'pg_type'::regclass)
  AND NOT EXISTS (SELECT 1 FROM pg_description c
                  WHERE c.classoid = d.classid AND c.objoid = d.objid AND c.objsubid = 0)
ORDER BY 2;
SELECT count(*) > 25 AS objects_counted
FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'svclust'
WHERE d.deptype = 'e' AND d.classid IN ('pg_proc'::regclass, 'pg_type'::regclass);

-- every function argument of the extension that has names has them all
SELECT p.oid::regprocedure AS unnamed_arguments
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'svclust'
WHERE d.deptype = 'e' AND p.pronargs > 0
  AND (p.proargnames IS NULL OR '' = ANY (p.proargnames))
  AND p.proname NOT IN ('svc_state_in', 'svc_state_out', 'svc_state_recv', 'svc_state_send',
                        'svc_cvi_state_in', 'svc_cvi_state_out', 'svc_cvi_state_recv',
                        'svc_cvi_state_send', 'svc_cvi_agg_combinefn',
                        'svc_train_combinefn')
ORDER BY 1;

-- from 0.1.0 by the upgrade script, in a database of its own (other
-- tests' tables keep this one's extension in use)
SELECT current_database() AS regress_db \gset
CREATE DATABASE svclust_version_upgrade;
\c svclust_version_upgrade
CREATE EXTENSION svclust VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'svclust';
-- a view on a real[] column made before 0.5.0's overloads stores the cast
-- to float8[] and keeps the float8[] aggregate (the same model)
CREATE TABLE emb AS
SELECT i AS id, ARRAY[i % 2 * 10 + i * 0.01, i % 2]::real[] AS e FROM generate_series(1, 40) i;
CREATE VIEW emb_model AS SELECT svc_train(e) AS m FROM emb;
ALTER EXTENSION svclust UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'svclust';
SELECT pg_get_viewdef('emb_model'::regclass) LIKE '%svc_train((emb.e)::double precision[])%' AS view_keeps_cast,
       (SELECT m FROM emb_model) = (SELECT svc_train(e) FROM emb) AS same_model;
SELECT (svc_model_info(svc_train(ARRAY[i % 2 * 10 + i * 0.01, i % 2]::float8[]))->>'n_clusters')::int >= 1 AS trains
FROM generate_series(1, 40) i;
\c :regress_db
DROP DATABASE svclust_version_upgrade;
