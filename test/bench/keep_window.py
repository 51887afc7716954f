#!/usr/bin/python3
"""The sliding window through SQL: a model that keeps its rows, refreshed by warm starts.

Generated rows (seeded, in SQL): 5 Gaussian blobs in 2-D (sd 1), in arrival
order id.  A model of solver "incremental" with {"keep_rows": true,
"sample": W} is trained on the first W rows, then refreshed by
svc_train(f, NULL, model ORDER BY id) on the next B rows, again and again,
until T rows have passed (nu 0.05, gamma 1, scale none).  Every call runs
in one backend (a DO block), which records after each call its time, the
backend's peak and current resident set (VmHWM, VmRSS of /proc/self/status),
the private part of it (RssAnon: VmRSS also counts the shared buffers the
backend has touched, which grow as the table's pages pass through them)
and the bytes of its memory contexts (pg_backend_memory_contexts): none of
them may grow with the rows that passed.  At the end the model is compared
with svc_train(... "smo", "tol": 1e-10 ...) on the last W rows:
max |f - f_smo| over those rows (the window is exact: within 1e-6).

This is a measurement, not a test; it needs a superuser (pg_read_file of
/proc/self/status).

    bash test/bench/run.sh --only incremental      (with the core's window)
    /usr/bin/python3 test/bench/keep_window.py [--window 1000] [--stream 20000]
        [--batch 500] [--out FILE]                  (against a running server)
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgrun import log, psql  # noqa: E402

OPTS = ('{"solver": "incremental", "keep_rows": true, "sample": %d, '
        '"outlier_fraction": 0.05, "gamma": 1, "scale": "none"}')
SMO = ('{"solver": "smo", "tol": 1e-10, "sample": %d, '
       '"outlier_fraction": 0.05, "gamma": 1, "scale": "none"}')


def measure(window=1000, stream=20000, batch=500):
    """Markdown lines of the table and the memory trace."""
    calls = (stream - window) // batch
    log("keep window: %d rows, window %d, %d calls of %d rows" % (stream, window, calls, batch))
    psql("""
CREATE EXTENSION IF NOT EXISTS svclust;
DROP TABLE IF EXISTS bench_keep, bench_keep_model, bench_keep_log;
SELECT setseed(0.29);
CREATE TABLE bench_keep AS
SELECT i AS id,
       ARRAY[4 * cos(2 * pi() * (i %% 5) / 5) + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()),
             4 * sin(2 * pi() * (i %% 5) / 5) + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())
            ]::float8[] AS f
FROM generate_series(1, %d) i;
CREATE INDEX ON bench_keep (id);
ANALYZE bench_keep;
CREATE TABLE bench_keep_model AS
SELECT svc_train(f, '%s'::jsonb ORDER BY id) AS model FROM bench_keep WHERE id <= %d;
CREATE TABLE bench_keep_log (k int, rows_passed int, secs float8, hwm_kb bigint, rss_kb bigint,
                             anon_kb bigint, ctx_bytes bigint);
""" % (stream, OPTS % window, window))
    psql("""
SET max_parallel_workers_per_gather = 0;
DO $$
DECLARE
    m bytea;
    t0 timestamptz;
    st text;
BEGIN
    SELECT model INTO m FROM bench_keep_model;
    FOR k IN 0 .. %d - 1 LOOP
        t0 := clock_timestamp();
        SELECT svc_train(f, NULL, m ORDER BY id) INTO m FROM bench_keep
        WHERE id > %d + k * %d AND id <= %d + (k + 1) * %d;
        st := pg_read_file('/proc/self/status');
        INSERT INTO bench_keep_log
        SELECT k, %d + (k + 1) * %d, extract(epoch FROM clock_timestamp() - t0),
               substring(st FROM 'VmHWM:\\s+(\\d+)')::bigint,
               substring(st FROM 'VmRSS:\\s+(\\d+)')::bigint,
               substring(st FROM 'RssAnon:\\s+(\\d+)')::bigint,
               (SELECT sum(total_bytes) FROM pg_backend_memory_contexts);
    END LOOP;
    UPDATE bench_keep_model SET model = m;
END $$;
""" % (calls, window, batch, window, batch, window, batch))
    last = window + calls * batch
    rows, _ = psql("""
SELECT sum(secs), count(*) FROM bench_keep_log;
WITH s AS (SELECT svc_train(f, '%s') AS model FROM bench_keep WHERE id > %d AND id <= %d)
SELECT max(abs(svc_decision(m.model, f) - svc_decision(s.model, f))),
       svc_model_info(m.model)->'kept_rows'->>'oldest',
       svc_model_info(m.model)->'kept_rows'->>'newest',
       svc_model_info(m.model)->>'n_support_vectors'
FROM bench_keep, bench_keep_model m, s WHERE id > %d AND id <= %d
GROUP BY m.model;
SELECT k, rows_passed, hwm_kb, rss_kb, anon_kb, ctx_bytes FROM bench_keep_log
WHERE (k + 1) %% greatest(1, %d / 10) = 0 OR k = 0 ORDER BY k;
""" % (SMO % window, last - window, last, last - window, last, calls))
    total, ncalls = rows[0].split("\t")
    diff, oldest, newest, n_sv = rows[1].split("\t")
    trace = [r.split("\t") for r in rows[2:]]
    total = float(total)
    out = ["Sliding window through SQL: a model with kept rows (solver incremental, "
           "\"sample\" W) refreshed by svc_train(f, NULL, model ORDER BY id) on B new rows a "
           "call until T rows have passed; one backend (5 blobs in 2-D, nu 0.05, gamma 1):", "",
           "| window W | rows T | rows a call B | calls | seconds | ms per row | "
           "max \\|f - f_smo\\| on the last W | kept counters | support vectors |",
           "|---:|---:|---:|---:|---:|---:|---:|---|---:|",
           "| %d | %d | %d | %s | %.2f | %.3f | %.2g | %s..%s | %s |"
           % (window, last, batch, ncalls, total, 1000 * total / max(1, last - window),
              float(diff), oldest, newest, n_sv),
           "", "The backend after each tenth of the calls (rows passed: peak resident set kB, "
           "resident set kB, of it private (RssAnon; the rest is shared memory the backend "
           "touched: shared buffers the table's pages pass through), memory contexts bytes): " +
           "; ".join("%s rows: %s, %s, %s, %s" % (r[1], r[2], r[3], r[4], r[5]) for r in trace)
           + "."]
    psql("DROP TABLE IF EXISTS bench_keep, bench_keep_model, bench_keep_log;", check=False)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 1)[1])
    ap.add_argument("--window", type=int, default=1000)
    ap.add_argument("--stream", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--out", default=None, help="append the markdown lines to this file")
    args = ap.parse_args()
    text = "\n".join(measure(args.window, args.stream, args.batch)) + "\n"
    print(text)
    if args.out:
        with open(args.out, "a") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
