-- svclust 0.1.0: support vector clustering in PostgreSQL
\echo Use "CREATE EXTENSION svclust" to load this file. \quit

-- The training aggregate's state: a bounded reservoir sample with exact
-- scaling statistics.  A type of its own (not internal) so that parallel
-- workers and Citus nodes can ship it; written as \x followed by hex.
CREATE TYPE svc_state;

CREATE FUNCTION svc_state_in(cstring) RETURNS svc_state
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION svc_state_out(svc_state) RETURNS cstring
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION svc_state_recv(internal) RETURNS svc_state
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION svc_state_send(svc_state) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE svc_state (
    INPUT = svc_state_in,
    OUTPUT = svc_state_out,
    RECEIVE = svc_state_recv,
    SEND = svc_state_send,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = double,
    STORAGE = extended
);

-- Training: svc_train(features) and svc_train(features, options)
CREATE FUNCTION svc_train_transfn(svc_state, float8[]) RETURNS svc_state
    AS 'MODULE_PATHNAME', 'svc_train_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_train_transfn(svc_state, float8[], jsonb) RETURNS svc_state
    AS 'MODULE_PATHNAME', 'svc_train_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_train_combinefn(svc_state, svc_state) RETURNS svc_state
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_train_finalfn(svc_state) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE svc_train(float8[]) (
    SFUNC = svc_train_transfn,
    STYPE = svc_state,
    COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn,
    PARALLEL = SAFE
);

CREATE AGGREGATE svc_train(float8[], jsonb) (
    SFUNC = svc_train_transfn,
    STYPE = svc_state,
    COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn,
    PARALLEL = SAFE
);

-- The partial state itself, for shipping between servers (Citus) or for
-- training in steps: svc_train(x) = svc_train_finalfn(svc_train_state(x)).
CREATE AGGREGATE svc_train_state(float8[]) (
    SFUNC = svc_train_transfn,
    STYPE = svc_state,
    COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE
);

CREATE AGGREGATE svc_train_state(float8[], jsonb) (
    SFUNC = svc_train_transfn,
    STYPE = svc_state,
    COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE
);

-- Inspecting and scoring
CREATE FUNCTION svc_model_info(model bytea) RETURNS jsonb
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION svc_decision(model bytea, features float8[]) RETURNS float8
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION svc_predict(model bytea, features float8[]) RETURNS integer
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The same model with its saddle tree cut again (n_clusters, level, cut,
-- merge_ratio, min_cluster_size, min_cluster_share): no training
CREATE FUNCTION svc_recut(model bytea, options jsonb) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Assigning the rows of a query, which returns (id, features)
CREATE FUNCTION svc_assign(model bytea, query text)
    RETURNS TABLE (id bigint, cluster integer, decision float8, outlier boolean)
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
-- ... with the tree cut at other settings, as svc_recut(model, options);
-- NULL options mean the model's own cut
CREATE FUNCTION svc_assign(model bytea, query text, options jsonb)
    RETURNS TABLE (id bigint, cluster integer, decision float8, outlier boolean)
    AS 'MODULE_PATHNAME', 'svc_assign' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Clustering validity indices (svc_cvi)
-- The query returns (features float8[], cluster integer [, class integer]);
-- one row per index, in a fixed order, NULL where undefined (doc/cvi.md).
CREATE FUNCTION svc_cvi(query text)
    RETURNS TABLE (cvi text, value float8)
    AS 'MODULE_PATHNAME', 'svc_cvi'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

-- The same indices per group, as a jsonb object with the same keys.  The
-- state keeps the group's rows (Davies-Bouldin, compactness and silhouette
-- need them): about 8 * (dims + 1) bytes per row.
CREATE FUNCTION svc_cvi_agg_transfn(internal, float8[], integer)
    RETURNS internal
    AS 'MODULE_PATHNAME', 'svc_cvi_agg_transfn'
    LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_cvi_agg_transfn(internal, float8[], integer, integer)
    RETURNS internal
    AS 'MODULE_PATHNAME', 'svc_cvi_agg_transfn'
    LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_cvi_agg_final(internal)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'svc_cvi_agg_final'
    LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_cvi_agg_final_class(internal)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'svc_cvi_agg_final_class'
    LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE svc_cvi_agg(features float8[], cluster integer) (
    SFUNC = svc_cvi_agg_transfn,
    STYPE = internal,
    FINALFUNC = svc_cvi_agg_final,
    PARALLEL = SAFE
);
CREATE AGGREGATE svc_cvi_agg(features float8[], cluster integer, class integer) (
    SFUNC = svc_cvi_agg_transfn,
    STYPE = internal,
    FINALFUNC = svc_cvi_agg_final_class,
    PARALLEL = SAFE
);
