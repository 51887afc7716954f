#!/usr/bin/env bash
# The README's scheduled refresh, for real: starts a throwaway cluster with
# pg_cron preloaded, runs the README's ```sql-pgcron blocks (which schedule
# a nightly refresh of the models table), reschedules that same job to
# every minute (pg_cron 1.4, Debian 12's, has no schedule in seconds), waits
# for it to run (at most 150 s), checks that the models table now holds the
# model svc_train gives, and unschedules it.  Prints one line per check and
# "N passed, N failed".  Needs svclust installed and postgresql-15-cron.
set -uo pipefail
cd "$(dirname "$0")/../.."

. test/integration/lib.sh

if [ ! -e "$(pg_config --pkglibdir)/pg_cron.so" ]; then
    check "pg_cron is installed (test/setup-debian.sh installs postgresql-15-cron)" no yes
    finish
fi

PG_EXTRA_OPTS="-c shared_preload_libraries=pg_cron -c cron.database_name=postgres -c cron.use_background_workers=on -c max_worker_processes=16"
start_own_server "a cluster with pg_cron preloaded"
trap pg_stop EXIT

# the README's tables (its Quick start), and a stale model to be refreshed
q <<'SQL' || { check "setup" failed ok; finish; }
CREATE EXTENSION svclust;
CREATE TABLE points AS
SELECT i AS id, i % 3 + 1 AS class,
       ARRAY[(ARRAY[0, 4, 8])[i % 3 + 1] + r * cos(i * 2.4),
             (ARRAY[0, 4, 0])[i % 3 + 1] + r * sin(i * 2.4)] AS features
FROM generate_series(1, 900) AS i,
     LATERAL (SELECT sqrt(i * 0.618034 % 1)::float8 AS r) AS s;
CREATE TABLE models (name text PRIMARY KEY, model bytea);
INSERT INTO models SELECT 'blobs', svc_train(features) FROM points WHERE id <= 30;
SQL

# the README's pg_cron blocks, as written
blocks=$(awk '/^```sql-pgcron$/ {on = 1; next} /^```$/ {on = 0} on' README.md)
check "the README has pg_cron blocks" "$([ -n "$blocks" ] && echo yes)" yes
out=$(printf '%s\n' "$blocks" | q 2>&1)
check "the README's pg_cron blocks run" "$?" 0
[ -n "$out" ] && echo "$out" | sed 's/^/    /'
check "the nightly job is scheduled" \
    "$(q -c "SELECT schedule FROM cron.job WHERE jobname = 'svclust-nightly'")" "0 3 * * *"

# the same job (the same command) every minute, to see it run
q -c "SELECT cron.schedule('svclust-nightly', '* * * * *', command) FROM cron.job WHERE jobname = 'svclust-nightly'" >/dev/null
check "rescheduled to every minute" \
    "$(q -c "SELECT schedule FROM cron.job WHERE jobname = 'svclust-nightly'")" "* * * * *"
status=
for _ in $(seq 1 150); do
    status=$(q -c "SELECT d.status FROM cron.job_run_details d JOIN cron.job j USING (jobid)
                   WHERE j.jobname = 'svclust-nightly' AND d.status IN ('succeeded', 'failed')
                   ORDER BY d.start_time DESC LIMIT 1")
    [ -n "$status" ] && break
    sleep 1
done
check "the job ran and succeeded" "$status" succeeded
[ "$status" = failed ] && q -c "SELECT return_message FROM cron.job_run_details" | sed 's/^/    /'
check "the models table holds the refreshed model" \
    "$(q -c "SELECT model = (SELECT svc_train(features) FROM points) FROM models WHERE name = 'blobs'")" t
check "the refreshed model's clusters" \
    "$(q -c "SELECT svc_model_info(model) -> 'cluster_sizes' FROM models WHERE name = 'blobs'")" "[300, 300, 300]"

q -c "SELECT cron.unschedule('svclust-nightly')" >/dev/null
check "unscheduled" "$(q -c "SELECT count(*) FROM cron.job")" 0
finish
