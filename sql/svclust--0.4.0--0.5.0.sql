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

-- wide: svc_train and svc_train_state on real[], smallint[], integer[],
-- bigint[] and numeric[] rows, read without PostgreSQL's cast of each row
-- to float8[] (an aggregate has no planner support that could skip it, as
-- svc_decision's does).  Overloads of every form; their transition
-- functions take anyarray and look at the element type, converting as the
-- casts to float8[] do (the same model bytes as features::float8[]).  The
-- integer and numeric forms are there so that such columns do not become
-- ambiguous between float8[] and real[].  An untyped literal or a bare
-- NULL as features is now ambiguous (cast it); views keep the float8[]
-- aggregate they were created with (they store the cast).
CREATE FUNCTION svc_train_array_transfn(state svc_state, features anyarray) RETURNS svc_state
    AS 'MODULE_PATHNAME', 'svc_train_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_train_array_transfn(state svc_state, features anyarray, options jsonb) RETURNS svc_state
    AS 'MODULE_PATHNAME', 'svc_train_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_train_labelled_array_transfn(state svc_state, features anyarray, label integer,
                                                 options jsonb) RETURNS svc_state
    AS 'MODULE_PATHNAME', 'svc_train_labelled_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_train_warm_array_transfn(state svc_state, features anyarray, options jsonb,
                                             init bytea) RETURNS svc_state
    AS 'MODULE_PATHNAME', 'svc_train_warm_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION svc_train_array_transfn(svc_state, anyarray) IS
    'transition function of svc_train(features) on real[], integer and numeric arrays: adds a row to the state';
COMMENT ON FUNCTION svc_train_array_transfn(svc_state, anyarray, jsonb) IS
    'transition function of svc_train(features, options) on real[], integer and numeric arrays: adds a row to the state';
COMMENT ON FUNCTION svc_train_labelled_array_transfn(svc_state, anyarray, integer, jsonb) IS
    'transition function of svc_train(features, label, options) on real[], integer and numeric arrays: adds one row, labelled or not, to the state';
COMMENT ON FUNCTION svc_train_warm_array_transfn(svc_state, anyarray, jsonb, bytea) IS
    'transition function of svc_train(features, options, init) on real[], integer and numeric arrays: adds one row to the state of a warm start of init';

CREATE AGGREGATE svc_train(features real[]) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features real[]) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features real[], options jsonb) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features real[], options jsonb) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features real[], label integer, options jsonb) (
    SFUNC = svc_train_labelled_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features real[], label integer, options jsonb) (
    SFUNC = svc_train_labelled_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features real[], options jsonb, init bytea) (
    SFUNC = svc_train_warm_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features real[], options jsonb, init bytea) (
    SFUNC = svc_train_warm_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
COMMENT ON AGGREGATE svc_train(real[]) IS
    'svc_train(features) on real[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(real[]) IS
    'svc_train_state(features) on real[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(real[], jsonb) IS
    'svc_train(features, options) on real[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(real[], jsonb) IS
    'svc_train_state(features, options) on real[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(real[], integer, jsonb) IS
    'svc_train(features, label, options) on real[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(real[], integer, jsonb) IS
    'svc_train_state(features, label, options) on real[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(real[], jsonb, bytea) IS
    'svc_train(features, options, init) on real[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(real[], jsonb, bytea) IS
    'svc_train_state(features, options, init) on real[] rows, without the array cast: the state of features::float8[]';

CREATE AGGREGATE svc_train(features smallint[]) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features smallint[]) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features smallint[], options jsonb) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features smallint[], options jsonb) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features smallint[], label integer, options jsonb) (
    SFUNC = svc_train_labelled_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features smallint[], label integer, options jsonb) (
    SFUNC = svc_train_labelled_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features smallint[], options jsonb, init bytea) (
    SFUNC = svc_train_warm_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features smallint[], options jsonb, init bytea) (
    SFUNC = svc_train_warm_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
COMMENT ON AGGREGATE svc_train(smallint[]) IS
    'svc_train(features) on smallint[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(smallint[]) IS
    'svc_train_state(features) on smallint[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(smallint[], jsonb) IS
    'svc_train(features, options) on smallint[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(smallint[], jsonb) IS
    'svc_train_state(features, options) on smallint[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(smallint[], integer, jsonb) IS
    'svc_train(features, label, options) on smallint[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(smallint[], integer, jsonb) IS
    'svc_train_state(features, label, options) on smallint[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(smallint[], jsonb, bytea) IS
    'svc_train(features, options, init) on smallint[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(smallint[], jsonb, bytea) IS
    'svc_train_state(features, options, init) on smallint[] rows, without the array cast: the state of features::float8[]';

CREATE AGGREGATE svc_train(features integer[]) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features integer[]) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features integer[], options jsonb) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features integer[], options jsonb) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features integer[], label integer, options jsonb) (
    SFUNC = svc_train_labelled_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features integer[], label integer, options jsonb) (
    SFUNC = svc_train_labelled_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features integer[], options jsonb, init bytea) (
    SFUNC = svc_train_warm_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features integer[], options jsonb, init bytea) (
    SFUNC = svc_train_warm_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
COMMENT ON AGGREGATE svc_train(integer[]) IS
    'svc_train(features) on integer[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(integer[]) IS
    'svc_train_state(features) on integer[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(integer[], jsonb) IS
    'svc_train(features, options) on integer[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(integer[], jsonb) IS
    'svc_train_state(features, options) on integer[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(integer[], integer, jsonb) IS
    'svc_train(features, label, options) on integer[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(integer[], integer, jsonb) IS
    'svc_train_state(features, label, options) on integer[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(integer[], jsonb, bytea) IS
    'svc_train(features, options, init) on integer[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(integer[], jsonb, bytea) IS
    'svc_train_state(features, options, init) on integer[] rows, without the array cast: the state of features::float8[]';

CREATE AGGREGATE svc_train(features bigint[]) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features bigint[]) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features bigint[], options jsonb) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features bigint[], options jsonb) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features bigint[], label integer, options jsonb) (
    SFUNC = svc_train_labelled_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features bigint[], label integer, options jsonb) (
    SFUNC = svc_train_labelled_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features bigint[], options jsonb, init bytea) (
    SFUNC = svc_train_warm_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features bigint[], options jsonb, init bytea) (
    SFUNC = svc_train_warm_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
COMMENT ON AGGREGATE svc_train(bigint[]) IS
    'svc_train(features) on bigint[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(bigint[]) IS
    'svc_train_state(features) on bigint[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(bigint[], jsonb) IS
    'svc_train(features, options) on bigint[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(bigint[], jsonb) IS
    'svc_train_state(features, options) on bigint[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(bigint[], integer, jsonb) IS
    'svc_train(features, label, options) on bigint[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(bigint[], integer, jsonb) IS
    'svc_train_state(features, label, options) on bigint[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(bigint[], jsonb, bytea) IS
    'svc_train(features, options, init) on bigint[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(bigint[], jsonb, bytea) IS
    'svc_train_state(features, options, init) on bigint[] rows, without the array cast: the state of features::float8[]';

CREATE AGGREGATE svc_train(features numeric[]) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features numeric[]) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features numeric[], options jsonb) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features numeric[], options jsonb) (
    SFUNC = svc_train_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features numeric[], label integer, options jsonb) (
    SFUNC = svc_train_labelled_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features numeric[], label integer, options jsonb) (
    SFUNC = svc_train_labelled_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE AGGREGATE svc_train(features numeric[], options jsonb, init bytea) (
    SFUNC = svc_train_warm_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features numeric[], options jsonb, init bytea) (
    SFUNC = svc_train_warm_array_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
COMMENT ON AGGREGATE svc_train(numeric[]) IS
    'svc_train(features) on numeric[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(numeric[]) IS
    'svc_train_state(features) on numeric[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(numeric[], jsonb) IS
    'svc_train(features, options) on numeric[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(numeric[], jsonb) IS
    'svc_train_state(features, options) on numeric[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(numeric[], integer, jsonb) IS
    'svc_train(features, label, options) on numeric[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(numeric[], integer, jsonb) IS
    'svc_train_state(features, label, options) on numeric[] rows, without the array cast: the state of features::float8[]';
COMMENT ON AGGREGATE svc_train(numeric[], jsonb, bytea) IS
    'svc_train(features, options, init) on numeric[] rows, without the array cast: the model of features::float8[]';
COMMENT ON AGGREGATE svc_train_state(numeric[], jsonb, bytea) IS
    'svc_train_state(features, options, init) on numeric[] rows, without the array cast: the state of features::float8[]';
