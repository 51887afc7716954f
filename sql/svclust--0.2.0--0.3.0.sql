-- svclust 0.2.0 to 0.3.0: svc_cvi_agg gets a state type of its own and a
-- combine function, so it runs in parallel query and on Citus
\echo Use "ALTER EXTENSION svclust UPDATE TO '0.3.0'" to load this file. \quit

-- The state of 0.2.0 was internal, which no other process can read.  An
-- aggregate's state type cannot change in place: drop and create it again
-- (a view that uses svc_cvi_agg makes this fail; drop it first).
DROP AGGREGATE svc_cvi_agg(float8[], integer);
DROP AGGREGATE svc_cvi_agg(float8[], integer, integer);
DROP FUNCTION svc_cvi_agg_transfn(internal, float8[], integer);
DROP FUNCTION svc_cvi_agg_transfn(internal, float8[], integer, integer);
DROP FUNCTION svc_cvi_agg_final(internal);
DROP FUNCTION svc_cvi_agg_final_class(internal);

-- svc_cvi_agg's state: the group's rows, written as \x followed by hex.
CREATE TYPE svc_cvi_state;

CREATE FUNCTION svc_cvi_state_in(cstring) RETURNS svc_cvi_state
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION svc_cvi_state_out(svc_cvi_state) RETURNS cstring
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION svc_cvi_state_recv(internal) RETURNS svc_cvi_state
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION svc_cvi_state_send(svc_cvi_state) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE svc_cvi_state (
    INPUT = svc_cvi_state_in,
    OUTPUT = svc_cvi_state_out,
    RECEIVE = svc_cvi_state_recv,
    SEND = svc_cvi_state_send,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = double,
    STORAGE = extended
);

CREATE FUNCTION svc_cvi_agg_transfn(state svc_cvi_state, features float8[], cluster integer)
    RETURNS svc_cvi_state
    AS 'MODULE_PATHNAME', 'svc_cvi_agg_transfn'
    LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_cvi_agg_transfn(state svc_cvi_state, features float8[], cluster integer, class integer)
    RETURNS svc_cvi_state
    AS 'MODULE_PATHNAME', 'svc_cvi_agg_transfn'
    LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_cvi_agg_combinefn(svc_cvi_state, svc_cvi_state)
    RETURNS svc_cvi_state
    AS 'MODULE_PATHNAME', 'svc_cvi_agg_combinefn'
    LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_cvi_agg_final(state svc_cvi_state)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'svc_cvi_agg_final'
    LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_cvi_agg_final_class(state svc_cvi_state)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'svc_cvi_agg_final_class'
    LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE svc_cvi_agg(features float8[], cluster integer) (
    SFUNC = svc_cvi_agg_transfn,
    STYPE = svc_cvi_state,
    COMBINEFUNC = svc_cvi_agg_combinefn,
    FINALFUNC = svc_cvi_agg_final,
    PARALLEL = SAFE
);
CREATE AGGREGATE svc_cvi_agg(features float8[], cluster integer, class integer) (
    SFUNC = svc_cvi_agg_transfn,
    STYPE = svc_cvi_state,
    COMBINEFUNC = svc_cvi_agg_combinefn,
    FINALFUNC = svc_cvi_agg_final_class,
    PARALLEL = SAFE
);

-- the indices in steps: svc_cvi_agg(x) = svc_cvi_agg_final(svc_cvi_agg_state(x))
CREATE AGGREGATE svc_cvi_agg_state(features float8[], cluster integer) (
    SFUNC = svc_cvi_agg_transfn,
    STYPE = svc_cvi_state,
    COMBINEFUNC = svc_cvi_agg_combinefn,
    PARALLEL = SAFE
);
CREATE AGGREGATE svc_cvi_agg_state(features float8[], cluster integer, class integer) (
    SFUNC = svc_cvi_agg_transfn,
    STYPE = svc_cvi_state,
    COMBINEFUNC = svc_cvi_agg_combinefn,
    PARALLEL = SAFE
);

COMMENT ON TYPE svc_cvi_state IS 'svc_cvi_agg''s partial state: the group''s rows, text form \x and hex';
COMMENT ON FUNCTION svc_cvi_state_in(cstring) IS 'svc_cvi_state input: \x and hex, checked';
COMMENT ON FUNCTION svc_cvi_state_out(svc_cvi_state) IS 'svc_cvi_state output: \x and hex';
COMMENT ON FUNCTION svc_cvi_state_recv(internal) IS 'svc_cvi_state binary input, checked';
COMMENT ON FUNCTION svc_cvi_state_send(svc_cvi_state) IS 'svc_cvi_state binary output';
COMMENT ON FUNCTION svc_cvi_agg_transfn(svc_cvi_state, float8[], integer) IS 'svc_cvi_agg''s transition function: keeps a row and its cluster';
COMMENT ON FUNCTION svc_cvi_agg_transfn(svc_cvi_state, float8[], integer, integer) IS 'svc_cvi_agg''s transition function: keeps a row, its cluster and class';
COMMENT ON FUNCTION svc_cvi_agg_combinefn(svc_cvi_state, svc_cvi_state) IS 'svc_cvi_agg''s combine function: appends one state''s rows to another''s';
COMMENT ON FUNCTION svc_cvi_agg_final(svc_cvi_state) IS 'svc_cvi_agg''s final function: the indices as jsonb';
COMMENT ON FUNCTION svc_cvi_agg_final_class(svc_cvi_state) IS 'svc_cvi_agg''s final function with classes: the indices as jsonb';
COMMENT ON AGGREGATE svc_cvi_agg(float8[], integer) IS 'clustering validity indices of a group''s rows, as jsonb';
COMMENT ON AGGREGATE svc_cvi_agg(float8[], integer, integer) IS 'clustering validity indices of a group''s rows against known classes, as jsonb';
COMMENT ON AGGREGATE svc_cvi_agg_state(float8[], integer) IS 'svc_cvi_agg''s partial state, for computing the indices in steps or shipping rows between servers';
COMMENT ON AGGREGATE svc_cvi_agg_state(float8[], integer, integer) IS 'svc_cvi_agg''s partial state with classes, for computing the indices in steps or shipping rows between servers';
