-- svclust is a trusted extension: a database owner who is not a superuser
-- installs it (its scripts then run as the bootstrap superuser, so they
-- create nothing a user could capture: doc/security.md), updates it, and
-- uses it; the objects stay the superuser's, so the owner cannot replace
-- them, and the queries svclust runs run as the caller.
SELECT current_database() AS regress_db \gset
CREATE ROLE regress_svclust_owner;
CREATE ROLE regress_svclust_other;
CREATE DATABASE regress_svclust_trusted OWNER regress_svclust_owner;
\c regress_svclust_trusted
SET ROLE regress_svclust_owner;
SELECT rolsuper FROM pg_roles WHERE rolname = current_user;
CREATE SCHEMA svc AUTHORIZATION regress_svclust_owner;
CREATE EXTENSION svclust SCHEMA svc;
SELECT e.extname, e.extowner::regrole AS owner, n.nspname AS schema,
       e.extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'svclust') AS default_version
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'svclust';
-- every member object belongs to the bootstrap superuser (oid 10), not to the installer
SELECT count(*) AS members_not_the_superusers
FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'svclust'
LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
LEFT JOIN pg_type t ON d.classid = 'pg_type'::regclass AND t.oid = d.objid
WHERE d.deptype = 'e' AND coalesce(p.proowner, t.typowner) <> 10;
-- none runs as its definer
SELECT count(*) AS security_definer
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'svclust'
WHERE d.deptype = 'e' AND p.prosecdef;
-- the installer cannot redefine what others will call
CREATE OR REPLACE FUNCTION svc.svc_predict(model bytea, features float8[]) RETURNS integer
    LANGUAGE sql AS 'SELECT 1';
ALTER FUNCTION svc.svc_predict(bytea, float8[]) SECURITY DEFINER;
-- ... nor build an aggregate over the internal-typed functions (PostgreSQL's
-- own rule; svclust's states are types of their own)
CREATE AGGREGATE svc.evil(float8[]) (SFUNC = svc.svc_train_transfn, STYPE = internal);

-- it works for the owner, and for another user, each with its own rights
SET search_path = svc, public;
CREATE TABLE owner_points AS
SELECT i AS id, ARRAY[i % 2 * 10 + (i * 0.618034) % 1, (i * 0.414214) % 1]::float8[] AS f
FROM generate_series(1, 200) i;
CREATE TABLE owner_model AS SELECT svc_train(f) AS model FROM owner_points;
SELECT svc_model_info(model) -> 'n_clusters' AS n_clusters FROM owner_model;
SELECT count(*) AS assigned
FROM owner_model, svc_assign(model, 'SELECT id, f FROM owner_points');
GRANT USAGE ON SCHEMA svc TO regress_svclust_other;
GRANT SELECT ON owner_model TO regress_svclust_other;
SET ROLE regress_svclust_other;
SELECT svc_predict(model, ARRAY[10, 0.5]) AS cluster FROM owner_model;
-- svc_assign's query runs as the caller: no reading the owner's table
SELECT count(*) FROM owner_model, svc_assign(model, 'SELECT id, f FROM owner_points');
SET ROLE regress_svclust_owner;
RESET search_path;

-- the updates from 0.1.0, run as the bootstrap superuser on the owner's behalf
DROP TABLE svc.owner_model, svc.owner_points;
DROP EXTENSION svclust;
CREATE EXTENSION svclust SCHEMA svc VERSION '0.3.0';
-- an object planted where an update script creates one stops the update:
-- the scripts create their objects, never take over existing ones
CREATE FUNCTION svc.svc_train_labelled_transfn(state svc.svc_state, features float8[],
                                               label integer, options jsonb)
    RETURNS svc.svc_state LANGUAGE sql AS 'SELECT $1';
ALTER EXTENSION svclust UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'svclust';
DROP FUNCTION svc.svc_train_labelled_transfn(svc.svc_state, float8[], integer, jsonb);
DROP EXTENSION svclust;
CREATE EXTENSION svclust SCHEMA svc VERSION '0.1.0';
ALTER EXTENSION svclust UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'svclust') AS updated
FROM pg_extension WHERE extname = 'svclust';
DROP EXTENSION svclust;

-- a user without CREATE on the database may not install it
SET ROLE regress_svclust_other;
CREATE EXTENSION svclust;
RESET ROLE;

\c :regress_db
DROP DATABASE regress_svclust_trusted;
DROP ROLE regress_svclust_owner;
DROP ROLE regress_svclust_other;
