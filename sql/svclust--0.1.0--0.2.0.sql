-- svclust 0.1.0 to 0.2.0: argument names and a comment on every object
\echo Use "ALTER EXTENSION svclust UPDATE TO '0.2.0'" to load this file. \quit

-- Argument names where 0.1.0 had none (adding a name is allowed; the
-- definitions are otherwise those of 0.1.0).
CREATE OR REPLACE FUNCTION svc_train_transfn(state svc_state, features float8[]) RETURNS svc_state
    AS 'MODULE_PATHNAME', 'svc_train_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION svc_train_transfn(state svc_state, features float8[], options jsonb) RETURNS svc_state
    AS 'MODULE_PATHNAME', 'svc_train_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION svc_train_finalfn(state svc_state) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE AGGREGATE svc_train(features float8[]) (
    SFUNC = svc_train_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE svc_train(features float8[], options jsonb) (
    SFUNC = svc_train_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE svc_train_state(features float8[]) (
    SFUNC = svc_train_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE svc_train_state(features float8[], options jsonb) (
    SFUNC = svc_train_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);

COMMENT ON TYPE svc_state IS 'svc_train''s partial state: a bounded row sample and exact scaling statistics, text form \x and hex';
COMMENT ON FUNCTION svc_state_in(cstring) IS 'reads and validates an svc_state from its text form';
COMMENT ON FUNCTION svc_state_out(svc_state) IS 'writes an svc_state as \x followed by hex';
COMMENT ON FUNCTION svc_state_recv(internal) IS 'reads and validates an svc_state from its binary form';
COMMENT ON FUNCTION svc_state_send(svc_state) IS 'writes an svc_state in binary form';
COMMENT ON FUNCTION svc_train_transfn(svc_state, float8[]) IS 'svc_train''s transition function: adds a row to the state';
COMMENT ON FUNCTION svc_train_transfn(svc_state, float8[], jsonb) IS 'svc_train''s transition function with options: adds a row to the state';
COMMENT ON FUNCTION svc_train_combinefn(svc_state, svc_state) IS 'svc_train''s combine function: merges two partial states';
COMMENT ON FUNCTION svc_train_finalfn(svc_state) IS 'trains and labels a model from an svc_state';
COMMENT ON AGGREGATE svc_train(float8[]) IS 'trains a support vector clustering model on the rows, with the default options';
COMMENT ON AGGREGATE svc_train(float8[], jsonb) IS 'trains a support vector clustering model on the rows, with the given options';
COMMENT ON AGGREGATE svc_train_state(float8[]) IS 'svc_train''s partial state, for training in steps or shipping between servers';
COMMENT ON AGGREGATE svc_train_state(float8[], jsonb) IS 'svc_train''s partial state with options, for training in steps or shipping between servers';
COMMENT ON FUNCTION svc_model_info(bytea) IS 'describes a model as jsonb: options, sizes, clusters';
COMMENT ON FUNCTION svc_decision(bytea, float8[]) IS 'the model''s decision value of a row: negative outside the clusters';
COMMENT ON FUNCTION svc_predict(bytea, float8[]) IS 'the cluster (1..n_clusters) of a row under a model';
COMMENT ON FUNCTION svc_recut(bytea, jsonb) IS 'the model with its cluster tree cut at other settings';
COMMENT ON FUNCTION svc_assign(bytea, text) IS 'clusters, decision values and outlier flags of the rows a query returns';
COMMENT ON FUNCTION svc_assign(bytea, text, jsonb) IS 'svc_assign with the model''s tree cut at other settings';
COMMENT ON FUNCTION svc_cvi(text) IS 'clustering validity indices of the labelled rows a query returns';
COMMENT ON FUNCTION svc_cvi_agg_transfn(internal, float8[], integer) IS 'svc_cvi_agg''s transition function: keeps a row and its cluster';
COMMENT ON FUNCTION svc_cvi_agg_transfn(internal, float8[], integer, integer) IS 'svc_cvi_agg''s transition function: keeps a row, its cluster and class';
COMMENT ON FUNCTION svc_cvi_agg_final(internal) IS 'svc_cvi_agg''s final function: the indices as jsonb';
COMMENT ON FUNCTION svc_cvi_agg_final_class(internal) IS 'svc_cvi_agg''s final function with classes: the indices as jsonb';
COMMENT ON AGGREGATE svc_cvi_agg(float8[], integer) IS 'clustering validity indices of a group''s rows, as jsonb';
COMMENT ON AGGREGATE svc_cvi_agg(float8[], integer, integer) IS 'clustering validity indices of a group''s rows against known classes, as jsonb';
