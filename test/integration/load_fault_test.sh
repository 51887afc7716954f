#!/usr/bin/env bash
# Load and fault, on a server of its own (a killed backend restarts every
# backend of its server, which must not reach the caller's).
#
# Load: pgbench runs LOAD_CLIENTS clients (8) for LOAD_SECONDS (20) on a
# mixed workload: single-row svc_predict + svc_decision, svc_assign
# batches of 200 rows, and svc_train inserting models (the default solver
# and the exact one).  Every answer is stored; afterwards there must be no
# failed transaction, and every score, every batch and every model must
# equal that of a serial run (bit for bit).
#
# Fault: an exact training (30,000 rows, in a transaction that has already
# inserted a row) is cancelled between two of its SMO progress notices:
# it ends with the cancel's error and leaves nothing.  Then, while
# pgbench trains and scores on 4 clients, the same training's backend is
# killed (SIGKILL) between two SMO progress notices.  Afterwards: the
# server has restarted and recovered; the killed transaction left
# nothing; every committed model (those committed before the load, and
# those the clients committed up to the kill) decodes, keeps its bytes
# and scores as before (or as a serial training of its rows); amcheck
# finds the table and its index sound; a new model commits.
#
# Prints one line per check, the figures, and "N passed, N failed".  Needs
# svclust installed and pgbench (PostgreSQL's, beside initdb).
#
#   bash test/integration/load_fault_test.sh
#   LOAD_SECONDS=40 bash test/integration/load_fault_test.sh   # doc/operations.md's run
set -uo pipefail
cd "$(dirname "$0")/../.."

LOAD_CLIENTS=${LOAD_CLIENTS:-8}
LOAD_SECONDS=${LOAD_SECONDS:-20}

. test/integration/lib.sh
pgbench=$PG_BIN/pgbench
[ -x "$pgbench" ] || pgbench=$(command -v pgbench)
if [ -z "$pgbench" ]; then
    check "pgbench is installed (it ships with the server, postgresql-15)" no yes
    finish
fi
start_own_server "a cluster of its own"
work=$(mktemp -d /tmp/svclust_load.XXXXXX)
trap 'pg_stop; rm -rf "$work"' EXIT

# Three blobs and a ring in 2-D: 3,000 training rows, 2,000 probes, and
# 30,000 rows for the killed exact training.  Three committed models (the
# default solver, smo, aid) are scored; the options the clients train with.
q <<'SQL' || { check "setup" failed ok; finish; }
CREATE EXTENSION svclust;
CREATE EXTENSION amcheck;
CREATE TABLE train AS
SELECT i AS id,
       ARRAY[(ARRAY[0, 4, 8, 4])[i % 4 + 1] + r * cos(i * 2.4),
             (ARRAY[0, 4, 0, -5])[i % 4 + 1] + r * sin(i * 2.4)]::float8[] AS f
FROM generate_series(1, 30000) AS i,
     LATERAL (SELECT CASE WHEN i % 4 = 3 THEN 1.5 + 0.1 * (i * 0.618034 % 1)
                          ELSE sqrt(i * 0.618034 % 1) END AS r) AS s;
CREATE TABLE probes AS
SELECT i AS id, ARRAY[-2 + 12 * (i * 0.7548777 % 1), -7 + 13 * (i * 0.5698403 % 1)]::float8[] AS f
FROM generate_series(1, 2000) AS i;
CREATE TABLE options (k int PRIMARY KEY, opts jsonb NOT NULL);
INSERT INTO options VALUES (1, '{}'), (2, '{"solver": "smo"}'), (3, '{"budget": 40, "seed": 7}');
-- a model's rows are train's ids lo..hi, in id order
CREATE TABLE models (name text PRIMARY KEY, lo int NOT NULL, hi int NOT NULL,
                     opts jsonb NOT NULL, model bytea NOT NULL);
CREATE SEQUENCE model_seq;
INSERT INTO models
SELECT 'base-' || o.k, 1, 3000, o.opts,
       (SELECT svc_train(t.f, o.opts ORDER BY t.id) FROM train t WHERE t.id <= 3000)
FROM (VALUES (1, '{}'::jsonb), (2, '{"solver": "smo"}'), (3, '{"solver": "aid"}')) AS o(k, opts);
-- the models named like a pattern whose bytes differ from a serial
-- training of their rows
CREATE FUNCTION differs_from_serial(pattern text) RETURNS bigint LANGUAGE sql AS $$
    WITH serial AS MATERIALIZED (
        SELECT k.lo, k.hi, k.opts,
               (SELECT svc_train(t.f, k.opts ORDER BY t.id) FROM train t
                WHERE t.id BETWEEN k.lo AND k.hi) AS model
        FROM (SELECT DISTINCT lo, hi, opts FROM models WHERE name LIKE pattern) AS k)
    SELECT count(*) FROM models m LEFT JOIN serial s USING (lo, hi, opts)
    WHERE m.name LIKE pattern AND m.model IS DISTINCT FROM s.model
$$;
-- every model's scores on every tenth probe, a model at a time (a call
-- site keeps one decoded model)
CREATE FUNCTION scores() RETURNS TABLE (name text, id int, cluster int, bits bytea)
LANGUAGE sql AS $$
    SELECT m.name, s.* FROM models m CROSS JOIN LATERAL
        (SELECT p.id, svc_predict(m.model, p.f), float8send(svc_decision(m.model, p.f))
         FROM probes p WHERE p.id % 10 = 0) AS s
$$;
CREATE TABLE load_scores (client int, model text, probe int, cluster int, decision float8);
CREATE TABLE load_assign (client int, model text, id bigint, cluster int, decision float8,
                          outlier boolean);
SQL
check "the committed models decode" \
    "$(q -c "SELECT string_agg((svc_model_info(model) ->> 'n_clusters')::int::text, ' ' ORDER BY name) FROM models")" "4 4 4"

# the clients' transactions: :client_id is pgbench's
cat >"$work/score.sql" <<'SQL'
\set p random(1, 2000)
\set m random(1, 3)
INSERT INTO load_scores
SELECT :client_id, m.name, p.id, svc_predict(m.model, p.f), svc_decision(m.model, p.f)
FROM models m, probes p WHERE m.name = 'base-' || :m AND p.id = :p;
SQL
cat >"$work/assign.sql" <<'SQL'
\set lo random(1, 1801)
\set m random(1, 3)
INSERT INTO load_assign
SELECT :client_id, 'base-' || :m, a.*
FROM svc_assign((SELECT model FROM models WHERE name = 'base-' || :m),
                'SELECT id, f FROM probes WHERE id BETWEEN ' || :lo || ' AND ' || :lo + 199) AS a;
SQL
# nine sets of 300 rows x three options: many clients train the same
# rows at once, and the check trains each once
cat >"$work/train.sql" <<'SQL'
\set lo 1 + 300 * random(0, 8)
\set k random(1, 3)
INSERT INTO models
SELECT ':prefix' || '-' || :client_id || '-' || nextval('model_seq'), :lo, :lo + 299, o.opts,
       svc_train(t.f, o.opts ORDER BY t.id)
FROM options o, train t WHERE o.k = :k AND t.id BETWEEN :lo AND :lo + 299
GROUP BY o.opts;
SQL

# ---- load
"$pgbench" -n -c "$LOAD_CLIENTS" -j 2 -T "$LOAD_SECONDS" -D prefix=load \
    -f "$work/score.sql@6" -f "$work/assign.sql@2" -f "$work/train.sql@2" \
    >"$work/load.log" 2>&1
rc=$?
grep -E '^(number of (transactions|failed)|tps|SQL script|error|pgbench:| - [0-9]+ transactions)|aborted' \
    "$work/load.log" | sed 's/^/    /'
check "pgbench: the load ran to its end" "$rc" 0
txns=$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' "$work/load.log")
nfail=$(sed -nE 's/^number of failed transactions: ([0-9]+).*/\1/p' "$work/load.log")
check "pgbench: failed transactions" "${nfail:-none}" 0
check "pgbench: transactions were processed" "$([ "${txns:-0}" -gt 0 ] && echo yes)" yes
scores=$(q -c "SELECT count(*) FROM load_scores")
assigned=$(q -c "SELECT count(*) FROM load_assign")
trained=$(q -c "SELECT count(*) FROM models WHERE name LIKE 'load-%'")
echo "    load: $LOAD_CLIENTS clients, $LOAD_SECONDS s, ${txns:-?} transactions, ${nfail:-?} failed;" \
     "$scores single-row scores, $assigned rows assigned, $trained models trained"
check "every kind of transaction ran" \
    "$([ "$scores" -gt 0 ] && [ "$assigned" -gt 0 ] && [ "$trained" -gt 0 ] && echo yes)" yes
check "single-row scores equal a serial run's (bits)" "$(q -c "
    SELECT count(*) FROM load_scores s JOIN models m ON m.name = s.model JOIN probes p ON p.id = s.probe
    WHERE s.cluster IS DISTINCT FROM svc_predict(m.model, p.f)
       OR float8send(s.decision) IS DISTINCT FROM float8send(svc_decision(m.model, p.f))")" 0
q -c "CREATE TABLE serial_assign AS
      SELECT m.name AS model, a.* FROM models m, svc_assign(m.model, 'SELECT id, f FROM probes') AS a
      WHERE m.name LIKE 'base-%'"
check "svc_assign batches equal a serial run's (bits)" "$(q -c "
    SELECT count(*) FROM load_assign l LEFT JOIN serial_assign s USING (model, id)
    WHERE s.id IS NULL OR l.cluster IS DISTINCT FROM s.cluster OR l.outlier IS DISTINCT FROM s.outlier
       OR float8send(l.decision) IS DISTINCT FROM float8send(s.decision)")" 0
check "the models trained under load equal a serial training's (bytes)" \
    "$(q -c "SELECT differs_from_serial('load-%')")" 0

# ---- fault
# The victim: a row inserted, then an exact training of 30,000 rows
# (progress notices count its SMO iterations); its pid first.
cat >"$work/victim.sql" <<'SQL'
SET svclust.progress = on;
SET svclust.progress_every = 200;
SELECT pg_backend_pid();
BEGIN;
INSERT INTO models SELECT 'victim-first', lo, hi, opts, model FROM models WHERE name = 'base-1';
INSERT INTO models
SELECT 'victim', 1, 30000, '{"solver": "smo", "sample": 30000}',
       svc_train(f, '{"solver": "smo", "sample": 30000}' ORDER BY id) FROM train;
COMMIT;
SQL
# start_victim NAME: in the background ($victim), output in NAME.out and NAME.err
start_victim() {
    psql -X -q -A -t -v ON_ERROR_STOP=1 -f "$work/victim.sql" >"$work/$1.out" 2>"$work/$1.err" &
    victim=$!
}
# wait_smo NAME: until the victim NAME is in its SMO iterations; prints its pid
wait_smo() {
    for _ in $(seq 1 1200); do
        grep -q 'SMO iterations' "$work/$1.err" 2>/dev/null && break
        sleep 0.05
    done
    head -1 "$work/$1.out"
}

# A cancel first, the polite way: the training stops at its next interrupt check.
start_victim cancel
pid=$(wait_smo cancel)
t0=$(date +%s%N)
q -c "SELECT pg_cancel_backend($pid)" >/dev/null
wait "$victim"
rc=$?
cancel_ms=$((($(date +%s%N) - t0) / 1000000))
check "a cancelled exact training ends with an error (psql exits 3)" "$rc" 3
check "it says the statement was cancelled" \
    "$(grep -c 'canceling statement due to user request' "$work/cancel.err")" 1
check "the cancelled transaction left no row" "$(q -c "SELECT count(*) FROM models WHERE name LIKE 'victim%'")" 0
echo "    cancel: after $(grep -c 'SMO iterations' "$work/cancel.err") SMO progress notices," \
     "the statement ended $cancel_ms ms after pg_cancel_backend"

# what every committed model is and scores, before the kill
q <<'SQL'
CREATE TABLE before AS SELECT name, md5(model) AS md5 FROM models;
CREATE TABLE before_scores AS SELECT * FROM scores();
SQL
before=$(q -c "SELECT count(*) FROM before")

# clients committing models and scores while the backend is killed; they
# lose their connections at the restart and stop
"$pgbench" -n -c 4 -j 2 -T 120 -D prefix=fault -f "$work/score.sql@6" -f "$work/train.sql@2" \
    >"$work/fault_pgbench.log" 2>&1 &
bench=$!
for _ in $(seq 1 300); do
    [ "$(q -c "SELECT count(*) > 0 FROM models WHERE name LIKE 'fault-%'")" = t ] && break
    sleep 0.1
done
# kill it between two SMO progress notices
start_victim kill
pid=$(wait_smo kill)
notices=$(grep -c 'SMO iterations' "$work/kill.err")
check "the victim is in its exact training (SMO progress notices seen)" "$([ "$notices" -gt 0 ] && echo yes)" yes
[ -n "$pid" ] && kill -KILL "$pid"
killed_at=$(date +%s%N)
wait "$victim"
victim_rc=$?
check "the victim's session was cut (psql exits 2)" "$victim_rc" 2
check "the victim's training did not end" "$(grep -c 'trained:' "$work/kill.err")" 0
# the postmaster ends every backend, then starts again and recovers
for _ in $(seq 1 600); do
    grep -q "all server processes terminated; reinitializing" "$PG_DIR/server.log" && break
    sleep 0.1
done
up=
for _ in $(seq 1 600); do
    q -c "SELECT 1" >/dev/null 2>&1 && { up=yes; break; }
    sleep 0.1
done
recovered_ms=$((($(date +%s%N) - killed_at) / 1000000))
check "the server accepts connections again" "$up" yes
wait "$bench"
grep -q "server process (PID $pid) was terminated by signal 9" "$PG_DIR/server.log"
check "the server log: the backend was killed by signal 9" "$?" 0
grep -q "all server processes terminated; reinitializing" "$PG_DIR/server.log"
check "the server log: every backend restarted" "$?" 0
grep -q "database system was not properly shut down; automatic recovery in progress" "$PG_DIR/server.log"
check "the server log: crash recovery ran" "$?" 0
fault_models=$(q -c "SELECT count(*) FROM models WHERE name LIKE 'fault-%'")
echo "    fault: killed after $notices SMO progress notices, $fault_models models committed by the clients" \
     "before the kill; connections again $recovered_ms ms after the kill"

check "the killed transaction left no row" "$(q -c "SELECT count(*) FROM models WHERE name LIKE 'victim%'")" 0
check "every model committed before the load and the kill is there, same bytes" "$(q -c "
    SELECT count(*) FROM before b JOIN models m USING (name) WHERE md5(m.model) = b.md5")" "$before"
check "every committed model decodes" \
    "$(q -c "SELECT count(*) FILTER (WHERE svc_model_info(model) ->> 'n_clusters' IS NOT NULL) = count(*) FROM models")" t
check "they score as before the kill (bits)" "$(q -c "
    SELECT count(*) FROM before_scores b LEFT JOIN scores() s USING (name, id)
    WHERE s.id IS NULL OR b.cluster IS DISTINCT FROM s.cluster OR b.bits IS DISTINCT FROM s.bits")" 0
check "the models committed by the clients up to the kill equal a serial training's (bytes)" \
    "$(q -c "SELECT differs_from_serial('fault-%')")" 0
check "amcheck: the models table's heap is sound" "$(q -c "SELECT count(*) FROM verify_heapam('models')")" 0
check "amcheck: its index holds every row" \
    "$(q -c "SELECT bt_index_check('models_pkey', true)" >/dev/null && echo sound)" sound
check "a new model commits after the restart" "$(q -c "
    INSERT INTO models SELECT 'after', 1, 300, opts, svc_train(f, opts ORDER BY id)
    FROM train, options WHERE id <= 300 AND k = 2 GROUP BY opts;
    SELECT differs_from_serial('after')")" 0
finish
