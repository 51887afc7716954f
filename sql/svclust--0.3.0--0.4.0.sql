-- svclust 0.3.0 to 0.4.0
\echo Use "ALTER EXTENSION svclust UPDATE TO '0.4.0'" to load this file. \quit

-- lead: labelled rows steer the model (semi-supervised SVC).  A label is
-- 1 (normal), -1 (anomaly) or NULL (unknown); labelled rows are kept
-- apart from the sample, in the same state type as the other forms.
CREATE FUNCTION svc_train_labelled_transfn(state svc_state, features float8[], label integer,
                                           options jsonb) RETURNS svc_state
    AS 'MODULE_PATHNAME', 'svc_train_labelled_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE svc_train(features float8[], label integer, options jsonb) (
    SFUNC = svc_train_labelled_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features float8[], label integer, options jsonb) (
    SFUNC = svc_train_labelled_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
COMMENT ON FUNCTION svc_train_labelled_transfn(svc_state, float8[], integer, jsonb) IS
    'transition function of svc_train(features, label, options): adds one row, labelled or not, to the state';
COMMENT ON AGGREGATE svc_train(float8[], integer, jsonb) IS
    'trains a model on the group''s rows, steered by the rows labelled 1 (normal) or -1 (anomaly); NULL labels are unknown';
COMMENT ON AGGREGATE svc_train_state(float8[], integer, jsonb) IS
    'the partial state of svc_train(features, label, options), to ship between servers or train in steps';
