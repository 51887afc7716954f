-- Hardening: a damaged model or state is an error, never a wrong answer or
-- a crash; extreme but finite numbers are handled or refused clearly; a
-- long run stops promptly on statement_timeout and leaves no memory
-- behind.  Output is booleans and counts only, so that it does not depend
-- on the build (OPTFLAGS) or the machine's speed.
CREATE TABLE hz_points AS
SELECT i AS id, ARRAY[(i % 3) * 4 + sin(i), (i % 3) * 2 + cos(7 * i)]::float8[] AS f
FROM generate_series(1, 240) i;
CREATE TABLE hz_model AS
SELECT svc_train(f, '{"budget": 16, "seed": 5}') AS m,
       svc_train(f, '{"budget": 16, "seed": 5, "labeling": "paper"}') AS mp
FROM hz_points;

-- The byte damage both the model and the state checks apply at pos.
CREATE FUNCTION hz_damage(b bytea, kind text, pos int) RETURNS bytea
IMMUTABLE STRICT LANGUAGE sql AS $$
    SELECT CASE kind
        WHEN 'xor 0x55' THEN set_byte(b, pos, get_byte(b, pos) # 85)
        WHEN 'one bit' THEN set_byte(b, pos, get_byte(b, pos) # (1 << (pos % 8)))
        WHEN 'truncated' THEN substr(b, 1, pos)
    END
$$;

-- (a) Damaged models: every byte XORed with 0x55, every byte with one bit
-- flipped, every truncation, and a few extensions, fed to every function
-- that takes a model.  Each damaged call must fail with XX001 (CRC-32C
-- catches every change of up to 32 consecutive bits, the length check
-- every truncation).  The same call sites then get the intact model
-- again, which must still give the reference answers (the per-query model
-- cache must not keep anything of a value that failed to decode).
CREATE FUNCTION hz_damaged_models(model bytea)
RETURNS TABLE (kind text, variants int, accepted int, other_sqlstate int, intact_wrong int)
LANGUAGE plpgsql AS $$
DECLARE
    x constant float8[] := ARRAY[4.5, 2.5];
    q constant text := 'SELECT id::bigint, f FROM hz_points WHERE id <= 5';
    len constant int := length(model);
    ref_info jsonb := svc_model_info(model);
    ref_dec float8 := svc_decision(model, x);
    ref_pred int := svc_predict(model, x);
    ref_assign text := (SELECT string_agg(a.id || ':' || a.cluster || ':' || a.decision, ',' ORDER BY a.id)
                        FROM svc_assign(model, q) a);
    k text;
    v bytea;
    cur bytea;
    n int;
    info jsonb;
    dec float8;
    pred int;
    asg text;
BEGIN
    FOREACH k IN ARRAY ARRAY['xor 0x55', 'one bit', 'truncated', 'extended'] LOOP
        kind := k;
        variants := 0;
        accepted := 0;
        other_sqlstate := 0;
        intact_wrong := 0;
        n := CASE k WHEN 'extended' THEN 4 ELSE len END;
        FOR pos IN 0 .. n - 1 LOOP
            v := CASE k
                WHEN 'extended' THEN (ARRAY[model || '\x00'::bytea, '\x00'::bytea || model, model || model,
                            substr(model, 1, len - 4) || '\x00000000'::bytea])[pos + 1]
                ELSE hz_damage(model, k, pos)
            END;
            variants := variants + 1;
            FOREACH cur IN ARRAY ARRAY[v, model] LOOP
                FOR fn IN 1 .. 4 LOOP
                    BEGIN
                        CASE fn
                            WHEN 1 THEN info := svc_model_info(cur);
                            WHEN 2 THEN dec := svc_decision(cur, x);
                            WHEN 3 THEN pred := svc_predict(cur, x);
                            ELSE asg := (SELECT string_agg(a.id || ':' || a.cluster || ':' || a.decision, ',' ORDER BY a.id)
                                         FROM svc_assign(cur, q) a);
                        END CASE;
                        IF cur = v THEN
                            accepted := accepted + 1;
                        ELSIF (fn = 1 AND info IS DISTINCT FROM ref_info)
                              OR (fn = 2 AND dec IS DISTINCT FROM ref_dec)
                              OR (fn = 3 AND pred IS DISTINCT FROM ref_pred)
                              OR (fn = 4 AND asg IS DISTINCT FROM ref_assign) THEN
                            intact_wrong := intact_wrong + 1;
                        END IF;
                    EXCEPTION WHEN OTHERS THEN
                        IF cur <> v OR SQLSTATE <> 'XX001' THEN
                            other_sqlstate := other_sqlstate + 1;
                        END IF;
                    END;
                END LOOP;
            END LOOP;
        END LOOP;
        RETURN NEXT;
    END LOOP;
END $$;

SELECT kind, variants > 0 AS tried, accepted AS accepted_damaged,
       other_sqlstate AS not_xx001, intact_wrong AS intact_model_wrong
FROM hz_damaged_models((SELECT m FROM hz_model));
-- the paper-labelled model goes through svc_assign's other path
SELECT kind, accepted AS accepted_damaged, other_sqlstate AS not_xx001,
       intact_wrong AS intact_model_wrong
FROM hz_damaged_models((SELECT mp FROM hz_model)) WHERE kind IN ('xor 0x55', 'truncated');
SELECT count(*) = 240 AS server_alive FROM hz_points;

-- (b) Damaged states through svc_state's text input.  A state has no
-- checksum (it is rewritten row by row), so a changed row value can be a
-- valid state: what must hold is that input either refuses the value with
-- XX001 or accepts a state that svc_train_finalfn trains into a model
-- every function reads, or refuses with a clear error (never an internal
-- one).  A truncated state is always refused.
CREATE TABLE hz_state AS
SELECT svc_train_state(f, '{"budget": 8, "max_iter": 2000, "seed": 3}') AS s
FROM hz_points WHERE id <= 40;
CREATE FUNCTION hz_damaged_states(state svc_state)
RETURNS TABLE (kind text, variants int, refused int, refused_not_xx001 int,
               trained int, null_model int, train_errors int, internal_errors int)
LANGUAGE plpgsql AS $$
DECLARE
    b constant bytea := decode(substr(state::text, 3), 'hex');
    len constant int := length(b);
    k text;
    t text;
    st svc_state;
    model bytea;
BEGIN
    FOREACH k IN ARRAY ARRAY['xor 0x55', 'one bit', 'truncated', 'text'] LOOP
        kind := k;
        variants := 0;
        refused := 0;
        refused_not_xx001 := 0;
        trained := 0;
        null_model := 0;
        train_errors := 0;
        internal_errors := 0;
        FOR pos IN 0 .. CASE k WHEN 'text' THEN 5 ELSE len - 1 END LOOP
            t := CASE k
                WHEN 'text' THEN (ARRAY['', '\x', 'x00', '\x0', '\xzz' || encode(b, 'hex'),
                            '\x' || encode(b, 'hex') || '00'])[pos + 1]
                ELSE '\x' || encode(hz_damage(b, k, pos), 'hex')
            END;
            variants := variants + 1;
            BEGIN
                st := t::svc_state;
            EXCEPTION WHEN OTHERS THEN
                refused := refused + 1;
                -- text that is not \x and hex is a syntax error (22P02), or
                -- for a bad hex digit, bytea's own error (22023)
                IF SQLSTATE <> 'XX001' AND NOT (k = 'text' AND SQLSTATE IN ('22P02', '22023')) THEN
                    refused_not_xx001 := refused_not_xx001 + 1;
                END IF;
                CONTINUE;
            END;
            BEGIN
                model := svc_train_finalfn(st);
                IF model IS NULL THEN
                    null_model := null_model + 1;
                ELSE
                    PERFORM svc_model_info(model), svc_decision(model, ARRAY[0.5, 0.5]),
                            svc_predict(model, ARRAY[0.5, 0.5]);
                    trained := trained + 1;
                END IF;
            EXCEPTION WHEN OTHERS THEN
                train_errors := train_errors + 1;
                IF SQLSTATE IN ('XX000', 'XX001') THEN
                    internal_errors := internal_errors + 1;
                END IF;
            END;
        END LOOP;
        RETURN NEXT;
    END LOOP;
END $$;

SELECT kind, variants > 0 AS tried, refused > 0 AS some_refused,
       refused_not_xx001, trained + null_model + train_errors > 0 AS some_accepted,
       internal_errors
FROM hz_damaged_states((SELECT s FROM hz_state));
SELECT kind, refused = variants AS all_refused
FROM hz_damaged_states((SELECT s FROM hz_state)) WHERE kind IN ('truncated', 'text');
-- the intact state text is deterministic (no stale memory in unused rows)
-- and goes through text and back to the same model
SELECT count(DISTINCT s::text) = 1 AS state_text_deterministic
FROM (SELECT svc_train_state(f, '{"budget": 8}') AS s FROM hz_points WHERE id <= 40
      UNION ALL SELECT svc_train_state(f, '{"budget": 8}') FROM hz_points WHERE id <= 40
      UNION ALL SELECT svc_train_state(f, '{"budget": 8}') FROM hz_points WHERE id <= 40) v;
SELECT svc_train_finalfn(s::text::svc_state) = svc_train_finalfn(s) AS state_text_round_trip FROM hz_state;
SELECT count(*) = 240 AS server_alive FROM hz_points;

-- (c) Extreme but finite numbers.  A row very far from the model (its
-- squared distances overflow) still gets a cluster in 1..K, from
-- svc_predict and from both svc_assign paths; any finite value trains
-- with scaling (1e300 rows included), and with scale "none" values whose
-- squared distances overflow are refused with a clear error instead of
-- making a model that nothing can read; a spread of subnormal distances
-- trains.
SELECT svc_predict(m, ARRAY[1e200, -1e200]) BETWEEN 1 AND (svc_model_info(m)->>'n_clusters')::int AS far_predict,
       svc_predict(m, ARRAY[1.7e308, 1e-300]) BETWEEN 1 AND (svc_model_info(m)->>'n_clusters')::int AS farthest_predict,
       svc_decision(m, ARRAY[1e200, -1e200]) < 0 AS far_is_outlier
FROM hz_model;
SELECT count(*) AS rows, count(*) FILTER (WHERE a.cluster BETWEEN 1 AND (svc_model_info(h.m)->>'n_clusters')::int) AS in_range
FROM hz_model h, svc_assign(h.m, $q$SELECT id::bigint, f FROM hz_points WHERE id <= 20
    UNION ALL SELECT 0, ARRAY[1e200, 1e200]::float8[] UNION ALL SELECT -1, ARRAY[-1.7e308, 0]::float8[]$q$) a;
SELECT count(*) AS rows, count(*) FILTER (WHERE a.cluster BETWEEN 1 AND (svc_model_info(h.mp)->>'n_clusters')::int) AS in_range
FROM hz_model h, svc_assign(h.mp, $q$SELECT id::bigint, f FROM hz_points WHERE id <= 20
    UNION ALL SELECT 0, ARRAY[1e200, 1e200]::float8[] UNION ALL SELECT -1, ARRAY[-1.7e308, 0]::float8[]$q$) a;
CREATE FUNCTION hz_try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT hz_try($q$SELECT svc_train(f) FROM (VALUES (ARRAY[1e300, 0]), (ARRAY[-1e300, 1]), (ARRAY[0, 2])) v(f)$q$);
SELECT hz_try($q$SELECT svc_train(f, '{"scale": "none"}') FROM (VALUES (ARRAY[0, 1e160]), (ARRAY[1, -1e160])) v(f)$q$);
SELECT hz_try($q$SELECT svc_train_state(f) FROM (VALUES (ARRAY[1e100, -1e100]), (ARRAY[-1e100, 1e100]), (ARRAY[0, 1])) v(f)$q$);
SELECT (svc_model_info(svc_train(f))->>'n_clusters')::int >= 1 AS largest_values_train
FROM (VALUES (ARRAY[1e100, -1e100]), (ARRAY[-1e100, 1e100]), (ARRAY[0, 1])) v(f);
SELECT svc_train_state(f)::text::svc_state IS NOT NULL AS largest_values_state_round_trip
FROM (VALUES (ARRAY[1e100, -1e100]), (ARRAY[-1e100, 1e100]), (ARRAY[0, 1])) v(f);
SELECT (svc_model_info(svc_train(f, '{"scale": "none"}'))->>'n_clusters')::int >= 1 AS subnormal_spread_trains
FROM (VALUES (ARRAY[0]), (ARRAY[1e-160]), (ARRAY[2e-160])) v(f);
-- any finite value trains with scaling: three blobs at magnitude 1, 1e300
-- and 1e-300 cluster alike, and the models score their own rows
CREATE TABLE hz_mag AS
SELECT i AS id, m.mag,
       ARRAY[((ARRAY[0, 6, 3])[(i % 3) + 1] + 0.6 * cos(i * 2.399)) * m.mag,
             ((ARRAY[0, 0, 5])[(i % 3) + 1] + 0.6 * sin(i * 2.399)) * m.mag]::float8[] AS f
FROM generate_series(1, 150) i, (VALUES (1::float8), (1e300), (1e-300)) m(mag);
CREATE TABLE hz_mag_model AS
SELECT mag, svc_train(f, '{"seed": 3}') AS model FROM hz_mag GROUP BY mag;
SELECT m.mag, (svc_model_info(m.model)->>'n_clusters')::int AS n_clusters,
       bool_and(svc_predict(m.model, p.f) = svc_predict(one.model, q.f)) AS same_clusters,
       bool_and(svc_decision(m.model, p.f) BETWEEN -1e6 AND 1e6) AS decision_finite
FROM hz_mag_model m JOIN hz_mag p ON p.mag = m.mag
JOIN hz_mag q ON q.mag = 1 AND q.id = p.id, hz_mag_model one
WHERE one.mag = 1
GROUP BY m.mag, m.model ORDER BY m.mag;
SELECT count(*) FILTER (WHERE a.cluster = svc_predict(one.model, q.f)) AS assign_agrees, count(*) AS rows
FROM hz_mag_model m, hz_mag_model one,
     svc_assign(m.model, $q$SELECT id::bigint, f FROM hz_mag WHERE mag = 1e300$q$) a
JOIN hz_mag q ON q.mag = 1 AND q.id = a.id
WHERE m.mag = 1e300 AND one.mag = 1;
SELECT svc_train_state(f)::text::svc_state IS NOT NULL AS extreme_state_round_trip
FROM hz_mag WHERE mag <> 1;
DROP TABLE hz_mag, hz_mag_model;

-- (d) Cancellation.  A training run (SGD in the core, over a stored
-- state), the same from a scan, and an svc_assign over ten million rows
-- would each take far longer than a second; statement_timeout must stop
-- them promptly with SQLSTATE 57014.  Each run is its own statement (the
-- timeout is per statement): a procedure catches the cancel and records
-- it.  Then the backend's memory must not have grown over the runs.
CREATE TABLE hz_slow_state AS
SELECT svc_train_state(ARRAY[(i % 3) * 4 + sin(i), cos(7 * i)]::float8[],
                       '{"sample": 50000, "max_iter": 100000000, "tol": 1e-12}') AS s
FROM generate_series(1, 50000) i;
CREATE TABLE hz_runs (run int, kind text, state text, message text, elapsed interval);
CREATE PROCEDURE hz_cancel(run int) LANGUAGE plpgsql AS $$
DECLARE
    kind constant text := (ARRAY['train', 'train_scan', 'assign'])[run % 3 + 1];
    t0 timestamptz := clock_timestamp();
    state text := 'finished';
    message text;
BEGIN
    BEGIN
        IF kind = 'train' THEN
            PERFORM svc_train_finalfn(s) FROM hz_slow_state;
        ELSIF kind = 'train_scan' THEN
            PERFORM svc_train(ARRAY[(i % 3) * 4 + sin(i), cos(7 * i)]::float8[],
                              '{"sample": 300000, "max_iter": 100000000, "tol": 1e-12}')
            FROM generate_series(1, 300000) i;
        ELSE
            PERFORM count(*) FROM svc_assign((SELECT m FROM hz_model),
                $q$SELECT i::bigint, ARRAY[(i % 3) * 4 + sin(i), cos(7 * i)]::float8[]
                   FROM generate_series(1, 10000000) i$q$);
        END IF;
    EXCEPTION
        WHEN query_canceled THEN
            state := SQLSTATE;
            message := SQLERRM;
        WHEN OTHERS THEN
            state := SQLSTATE;
            message := SQLERRM;
    END;
    INSERT INTO hz_runs VALUES (run, kind, state, message, clock_timestamp() - t0);
END $$;
SET statement_timeout = '100ms';
-- one of each first (they also warm the caches the memory check must not count)
CALL hz_cancel(0);
CALL hz_cancel(1);
CALL hz_cancel(2);
RESET statement_timeout;
SELECT run, kind, state, message, elapsed < '2 s' AS prompt FROM hz_runs ORDER BY run;
SELECT sum(total_bytes) AS hz_mem_before FROM pg_backend_memory_contexts \gset
SET statement_timeout = '100ms';
SELECT format('CALL hz_cancel(%s)', i) FROM generate_series(3, 23) i \gexec
RESET statement_timeout;
SELECT sum(total_bytes) - :hz_mem_before < 4 * 1024 * 1024 AS memory_did_not_grow
FROM pg_backend_memory_contexts;
SELECT kind, count(*) AS runs, bool_and(state = '57014') AS all_57014,
       bool_and(message = 'canceling statement due to statement timeout') AS all_timeout_message,
       bool_and(elapsed < '2 s') AS all_prompt
FROM hz_runs WHERE run >= 3 GROUP BY kind ORDER BY kind;
SELECT count(*) = 240 AS server_alive FROM hz_points;

DROP PROCEDURE hz_cancel(int);
DROP FUNCTION hz_damaged_models(bytea), hz_damaged_states(svc_state), hz_try(text),
    hz_damage(bytea, text, int);
DROP TABLE hz_points, hz_model, hz_state, hz_slow_state, hz_runs;

-- scoring with two models that alternate row by row decodes at each switch,
-- but the memory of the query does not grow with its rows
CREATE TABLE hz_two AS
SELECT g, svc_train(f, '{"budget": 50}') AS m
FROM (SELECT i % 2 AS g, ARRAY[cos(i), sin(i)]::float8[] AS f FROM generate_series(1, 400) i) s
GROUP BY g;
CREATE FUNCTION hz_mem() RETURNS bigint VOLATILE LANGUAGE sql
    AS 'SELECT sum(total_bytes)::bigint FROM pg_backend_memory_contexts';
SELECT count(d) AS scored, count(c) AS predicted, max(mem) - min(mem) < 1000000 AS no_growth
FROM (SELECT svc_decision(m, ARRAY[cos(i), sin(i)]::float8[]) AS d,
             svc_predict(m, ARRAY[cos(i), sin(i)]::float8[]) AS c,
             CASE WHEN i % 4000 = 0 THEN hz_mem() END AS mem
      FROM (SELECT i, CASE WHEN i % 2 = 0 THEN (SELECT m FROM hz_two WHERE g = 0)
                           ELSE (SELECT m FROM hz_two WHERE g = 1) END AS m
            FROM generate_series(1, 20000) i) r) s;
DROP TABLE hz_two;
DROP FUNCTION hz_mem();
