#!/usr/bin/env python3
"""svclust training speed: svc_train against a plain scan, serial and parallel.

On a table of N (default 1,000,000) rows of 8-dimensional float8[] points it
times, in one session and interleaved over several rounds (medians reported):

  avg         SELECT avg(f[1]) FROM t                      (the plain scan)
  train       SELECT svc_train(f) FROM t                   (default options)
  scan part   SELECT pg_column_size(svc_train_state(f)) FROM t
              (the transition function over every row, no training)
  final part  SELECT svc_train_finalfn(s) FROM <that state> (SGD, offset,
              labelling on the kept sample)

serially (max_parallel_workers_per_gather = 0) and with 2 parallel workers,
and prints train/avg ratios, as ratios of the medians and as the median of
each round's own ratios.  The goals (scoring-speed issue): serial train
<= 1.5x serial avg; 2 workers <= 0.75 of serial training.  The final part
costs the same whatever the table's size (it works on at most `sample`
rows), so the ratios only mean something on large tables.

Run it alone through run.sh:  bash test/bench/run.sh --only train
(bench.py runs it as its last section.)
"""
import argparse
import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgrun import log, machine_line, median, psql, q1, timed_queries  # noqa: E402

SERIAL = "SET max_parallel_workers_per_gather = 0;"
PARALLEL = ("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; "
            "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;")


def make_table(rows, dims=8, name="bench_train8"):
    """Rows of `dims` float8 in 6 Gaussian-ish blobs, deterministic."""
    elems = ", ".join("(i %% 6) * 1.5 * %d + (random() + random() - 1)" % ((j % 3) + 1)
                      for j in range(dims))
    psql("""
DROP TABLE IF EXISTS %(n)s;
SELECT setseed(0.42);
CREATE TABLE %(n)s AS SELECT i AS id, ARRAY[%(e)s]::float8[] AS f
FROM generate_series(1, %(rows)d) i;
VACUUM (FREEZE, ANALYZE) %(n)s;
""" % {"n": name, "e": elems, "rows": rows})
    return name


def workers_launched(table):
    lines, _ = psql(PARALLEL + "\nEXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT svc_train(f) FROM %s;" % table)
    planned = launched = 0
    for l in lines:
        l = l.strip()
        if l.startswith("Workers Planned:"):
            planned = int(l.split(":")[1])
        if l.startswith("Workers Launched:"):
            launched = int(l.split(":")[1])
    return planned, launched


def run(rows=1000000, rounds=5, out=None):
    """Measure; append markdown lines to `out` (a list); return the numbers."""
    out = [] if out is None else out
    log("train speed: building %d x 8 table" % rows)
    t = make_table(rows)
    size = q1("SELECT pg_size_pretty(pg_relation_size('%s'))" % t)
    psql("DROP TABLE IF EXISTS bench_train8_state; "
         "CREATE TABLE bench_train8_state AS SELECT svc_train_state(f) AS s FROM %s;" % t)
    planned, launched = workers_launched(t)

    steps = []
    # warm the OS cache and the extension
    steps += [("warm", SERIAL), ("warm", "SELECT avg(f[1]) FROM %s" % t),
              ("warm", "SELECT length(svc_train(f)) FROM %s" % t)]
    for _ in range(rounds):
        steps += [("set", SERIAL),
                  ("avg_serial", "SELECT avg(f[1]) FROM %s" % t),
                  ("train_serial", "SELECT length(svc_train(f)) FROM %s" % t),
                  ("scan_serial", "SELECT pg_column_size(svc_train_state(f)) FROM %s" % t),
                  ("final", "SELECT length(svc_train_finalfn(s)) FROM bench_train8_state"),
                  ("set", PARALLEL),
                  ("avg_parallel", "SELECT avg(f[1]) FROM %s" % t),
                  ("train_parallel", "SELECT length(svc_train(f)) FROM %s" % t),
                  ("scan_parallel", "SELECT pg_column_size(svc_train_state(f)) FROM %s" % t)]
    log("train speed: %d rounds" % rounds)
    ms = timed_queries(steps)
    m = {k: median(v) / 1000.0 for k, v in ms.items()}
    m["rows"] = rows
    m["workers_planned"], m["workers_launched"] = planned, launched
    psql("DROP TABLE IF EXISTS bench_train8_state, %s;" % t)

    # Each round's own ratios (its queries ran within a second or two of
    # each other): a shared machine's slow spells move both sides of a
    # round's ratio, where a ratio of medians may pair a slow round's
    # median with a quick one's.
    def paired(a, b):
        return median([x / y for x, y in zip(ms[a], ms[b]) if y > 0])
    m["paired_serial"] = paired("train_serial", "avg_serial")
    m["paired_workers"] = paired("train_parallel", "train_serial")
    m["paired_scan_workers"] = paired("avg_parallel", "avg_serial")
    # what the serial final part leaves reachable: the scan part with 2
    # workers plus the final part, over the serial scan part plus it
    m["floor_workers"] = (m["scan_parallel"] + m["final"]) / (m["scan_serial"] + m["final"])

    r_ser = m["train_serial"] / m["avg_serial"]
    r_par = m["train_parallel"] / m["avg_serial"]
    out.append("\n## Training speed (%s rows x 8 dims, %s, default options)\n" % (format(rows, ","), size))
    out.append("Medians of %d interleaved rounds in one session; parallel = %d workers planned, "
               "%d launched, plus the leader.\n" % (rounds, planned, launched))
    out.append("| query | serial s | ratio to serial avg | 2 workers s | ratio to serial avg |")
    out.append("|---|---|---|---|---|")
    out.append("| `SELECT avg(f[1])` | %.3f | 1.00 | %.3f | %.2f |" % (
        m["avg_serial"], m["avg_parallel"], m["avg_parallel"] / m["avg_serial"]))
    out.append("| `svc_train(f)` | %.3f | **%.2f** | %.3f | %.2f |" % (
        m["train_serial"], r_ser, m["train_parallel"], r_par))
    out.append("| scan part: `svc_train_state(f)` | %.3f | %.2f | %.3f | %.2f |" % (
        m["scan_serial"], m["scan_serial"] / m["avg_serial"], m["scan_parallel"],
        m["scan_parallel"] / m["avg_serial"]))
    out.append("| final part: `svc_train_finalfn` (10,000-row sample) | %.3f | %.2f | - | - |" % (
        m["final"], m["final"] / m["avg_serial"]))
    out.append("")
    out.append("Each round's own ratios, median over the rounds: serial svc_train %.2fx the serial "
               "scan; 2 workers %.2f of serial training; the plain scan with 2 workers %.2f of "
               "the serial scan. The serial final part leaves 2 workers at best %.2f of serial "
               "training in this run ((scan part 2 workers + final) / (scan part serial + final))."
               % (m["paired_serial"], m["paired_workers"], m["paired_scan_workers"],
                  m["floor_workers"]))
    out.append("")
    out.append("Goals: serial svc_train <= 1.5x serial avg: %s (%.2fx; %.2fx by rounds); "
               "2 workers <= 0.75 of serial: %s (%.2f; %.2f by rounds)." % (
                   "met" if r_ser <= 1.5 else "MISSED", r_ser, m["paired_serial"],
                   "met" if m["train_parallel"] <= 0.75 * m["train_serial"] else "MISSED",
                   m["train_parallel"] / m["train_serial"], m["paired_workers"]))
    for l in out[-12:]:
        print(l, flush=True)
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args()
    psql("CREATE EXTENSION IF NOT EXISTS svclust;")
    out = ["# svclust training speed", "",
           "Run %s on %s." % (datetime.date.today().isoformat(), machine_line())]
    run(args.rows, args.rounds, out)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
