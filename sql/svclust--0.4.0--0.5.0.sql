-- svclust 0.4.0 to 0.5.0
\echo Use "ALTER EXTENSION svclust UPDATE TO '0.5.0'" to load this file. \quit

-- wide rows: svc_decision and svc_predict read real[] rows as they are
-- stored.  Not overloads (integer[], numeric[] and untyped literals would
-- then be ambiguous): the float8[] forms' planner support turns a call
-- whose features are a real[] cast to float8[] into a call of these.
CREATE FUNCTION svc_decision_float4(model bytea, features real[]) RETURNS float8
    AS 'MODULE_PATHNAME', 'svc_decision' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 25;
CREATE FUNCTION svc_predict_float4(model bytea, features real[]) RETURNS integer
    AS 'MODULE_PATHNAME', 'svc_predict' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
CREATE FUNCTION svc_features_support(request internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'svc_features_support' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
ALTER FUNCTION svc_decision(bytea, float8[]) SUPPORT svc_features_support;
ALTER FUNCTION svc_predict(bytea, float8[]) SUPPORT svc_features_support;
COMMENT ON FUNCTION svc_decision_float4(bytea, real[]) IS
    'svc_decision of a real[] row, read without a cast (svc_decision(model, real[]) runs it)';
COMMENT ON FUNCTION svc_predict_float4(bytea, real[]) IS
    'svc_predict of a real[] row, read without a cast (svc_predict(model, real[]) runs it)';
COMMENT ON FUNCTION svc_features_support(internal) IS
    'planner support of svc_decision and svc_predict: real[] rows go to the _float4 forms';

-- cluster ids that survive a refresh: a model made from another by a warm
-- start or a recut keeps its clusters' ids, so they need not be 1..K
COMMENT ON FUNCTION svc_predict(bytea, float8[]) IS
    'the cluster id of a row under a model (1..n_clusters for a model trained from scratch; a refreshed or recut model keeps the ids of the clusters it continues)';
COMMENT ON FUNCTION svc_recut(bytea, jsonb) IS
    'the model with its cluster tree cut at other settings; the clusters it continues keep their ids';
