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

-- window: clustering as a window function, an SVG picture of a model, and
-- realistic costs for the per-row scoring functions

-- svc_cluster(features [, options]) OVER (PARTITION BY ...): one model per
-- partition, trained as svc_train trains on the partition's rows in their
-- order, and each row's cluster as svc_predict gives it.  IMMUTABLE as
-- row_number() is: the result depends on the partition's rows, their order
-- and the options only (identical calls in one query then train once).
CREATE FUNCTION svc_cluster(features float8[]) RETURNS integer
    AS 'MODULE_PATHNAME', 'svc_cluster' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_cluster(features float8[], options jsonb) RETURNS integer
    AS 'MODULE_PATHNAME', 'svc_cluster' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;

-- The same with f and the outlier flag beside the cluster, as svc_assign
-- returns them: (svc_cluster_row(...) OVER w).decision
CREATE TYPE svc_cluster_result AS (cluster integer, decision float8, outlier boolean);
CREATE FUNCTION svc_cluster_row(features float8[]) RETURNS svc_cluster_result
    AS 'MODULE_PATHNAME', 'svc_cluster_row' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION svc_cluster_row(features float8[], options jsonb) RETURNS svc_cluster_result
    AS 'MODULE_PATHNAME', 'svc_cluster_row' LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION svc_cluster(float8[]) IS 'window function: trains a model on the partition''s rows with the default options and returns each row''s cluster';
COMMENT ON FUNCTION svc_cluster(float8[], jsonb) IS 'window function: trains a model on the partition''s rows with the given options and returns each row''s cluster';
COMMENT ON TYPE svc_cluster_result IS 'a row''s cluster, decision value and outlier flag, as svc_cluster_row returns them';
COMMENT ON FUNCTION svc_cluster_row(float8[]) IS 'window function: svc_cluster with the decision value and outlier flag, default options';
COMMENT ON FUNCTION svc_cluster_row(float8[], jsonb) IS 'window function: svc_cluster with the decision value and outlier flag, given options';

-- An SVG picture of a model over two of its dimensions, with the rows of a
-- query ((features) or (id, features)) coloured by cluster.  VOLATILE
-- PARALLEL UNSAFE as svc_assign: it runs a query of yours.
CREATE FUNCTION svc_plot_svg(model bytea, query text, options jsonb DEFAULT NULL) RETURNS text
    AS 'MODULE_PATHNAME', 'svc_plot_svg_sql' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION svc_plot_svg(bytea, text, jsonb) IS 'an SVG picture of a model (boundary, levels of f, support vectors, equilibria) and the rows of a query coloured by cluster';

-- Costs, in cpu_operator_cost units (one simple operator such as float8
-- addition is 1): measured on 1,000,000 rows of 2 features with the default
-- model (budget 300), svc_decision took 1.2 us a row and svc_predict 115 us,
-- where an addition took 0.015 us: about 80 and 7,700 operators.  Declared
-- at a third of that and lower, so that they stay realistic when the kernel
-- gets faster; what matters to the planner is that a scoring pass over a
-- large table pays for parallel workers, which the default of 1 hid.
ALTER FUNCTION svc_decision(bytea, float8[]) COST 25;
ALTER FUNCTION svc_predict(bytea, float8[]) COST 1000;

-- warm: the warm start of a stored model (issue 17).  svc_train(features,
-- options, init) continues the bsgd model init on the group's rows only:
-- the SGD goes on from its support vectors and step count, with its
-- scaling, gamma and options (the cut options may change); NULL init is
-- svc_train(features, options).  The state carries the init model, so a
-- parallel or distributed plan combines states of one init model only.
CREATE FUNCTION svc_train_warm_transfn(state svc_state, features float8[], options jsonb,
                                       init bytea) RETURNS svc_state
    AS 'MODULE_PATHNAME', 'svc_train_warm_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE svc_train(features float8[], options jsonb, init bytea) (
    SFUNC = svc_train_warm_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    FINALFUNC = svc_train_finalfn, PARALLEL = SAFE);
CREATE AGGREGATE svc_train_state(features float8[], options jsonb, init bytea) (
    SFUNC = svc_train_warm_transfn, STYPE = svc_state, COMBINEFUNC = svc_train_combinefn,
    PARALLEL = SAFE);
COMMENT ON FUNCTION svc_train_warm_transfn(svc_state, float8[], jsonb, bytea) IS
    'transition function of svc_train(features, options, init): adds one row to the state of a warm start of init';
COMMENT ON AGGREGATE svc_train(float8[], jsonb, bytea) IS
    'warm start: continues the stored bsgd model init on the group''s rows (its options, scaling and gamma; cut options may change); NULL init trains from scratch';
COMMENT ON AGGREGATE svc_train_state(float8[], jsonb, bytea) IS
    'the partial state of svc_train(features, options, init), to ship between servers or train in steps';

-- keep: models that keep their rows (issue 17).  No new objects: the option
-- "keep_rows" (solvers smo and incremental) stores the fit's rows in the
-- model, and the warm start svc_train(features, options, init) of such a
-- model is exact, over a window of at most "sample" rows (option "window":
-- "oldest" or "reservoir").  The comment of the warm start says so.
COMMENT ON AGGREGATE svc_train(float8[], jsonb, bytea) IS
    'warm start: continues the stored model init on the group''s rows (its options, scaling and gamma; cut options may change): a bsgd model by SGD, an smo or incremental model with "keep_rows" exactly over its window of "sample" rows; NULL init trains from scratch';
