#!/usr/bin/env python3
"""svclust scoring speed: svc_decision, svc_predict, svc_assign and svc_train
against a plain scan of the same rows, in one run.

On a table of N (default 1,000,000) rows of 8-dimensional float8[] points in
5 clusters it trains the default model (budget 300) once, then times, in one
session and interleaved over several rounds (medians reported):

  scan       SELECT avg(f[1]) FROM t                                (serial)
  decision   SELECT sum(svc_decision(m, f)) FROM t                  (serial)
  predict    SELECT sum(svc_predict(m, f)) FROM t                   (serial)
  assign     SELECT count(*) FROM svc_assign(m, 'SELECT id, f FROM t')
  train      SELECT length(svc_train(f)) FROM t           (serial, 2 workers)

and prints each as a ratio to the serial scan.  It also reports how many
rows each cluster got, the outliers, and whether svc_assign gave every row
svc_predict's cluster and svc_decision's value.

With --ref FILE it compares every row's cluster and decision value with
those of an earlier run (another build: the "before" of a change) kept in
FILE, and writes FILE when it does not exist yet.

Run it alone through run.sh:  bash test/bench/run.sh --only scoring
"""
import argparse
import datetime
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgrun import log, machine_line, median, psql, q1, timed_queries  # noqa: E402

SERIAL = "SET max_parallel_workers_per_gather = 0;"
PARALLEL = ("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; "
            "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;")
TABLE = "bench_score8"
MODEL = "(SELECT m FROM bench_score_model)"


def make_table(rows, dims=8):
    """Rows of `dims` float8 in 5 clusters, deterministic."""
    elems = ", ".join("(i %% 5) * 1.5 * %d + (random() + random() - 1)" % ((j % 3) + 1)
                      for j in range(dims))
    psql("""
DROP TABLE IF EXISTS %(n)s;
SELECT setseed(0.21);
CREATE TABLE %(n)s AS SELECT i AS id, ARRAY[%(e)s]::float8[] AS f
FROM generate_series(1, %(rows)d) i;
VACUUM (FREEZE, ANALYZE) %(n)s;
""" % {"n": TABLE, "e": elems, "rows": rows})


def row_results():
    """Every row's (cluster, decision text), by id, through COPY."""
    sql = ("COPY (SELECT id, svc_predict(%s, f), svc_decision(%s, f) FROM %s ORDER BY id) TO STDOUT"
           % (MODEL, MODEL, TABLE))
    res = subprocess.run(["psql", "-X", "-q", "-c", sql], capture_output=True, text=True, check=True)
    return [l.split("\t") for l in res.stdout.splitlines()]


def compare_ref(path, out):
    rows = row_results()
    if not os.path.exists(path):
        with open(path, "w") as fh:
            fh.write("\n".join("\t".join(r) for r in rows) + "\n")
        out.append("Per-row results written to `%s` for a later run to compare with.\n" % os.path.basename(path))
        return None
    with open(path) as fh:
        ref = [l.rstrip("\n").split("\t") for l in fh if l.strip()]
    n = min(len(ref), len(rows))
    same_cluster = sum(1 for a, b in zip(ref, rows) if a[0] == b[0] and a[1] == b[1])
    same_sign = sum(1 for a, b in zip(ref, rows) if (float(a[2]) < 0) == (float(b[2]) < 0))
    maxrel = 0.0
    maxabs = 0.0
    for a, b in zip(ref, rows):
        fa, fb = float(a[2]), float(b[2])
        maxabs = max(maxabs, abs(fa - fb))
        maxrel = max(maxrel, abs(fa - fb) / max(abs(fa), 1e-300))
    out.append("Against the earlier run in `%s` (%s rows): the same cluster on %s rows (%.4f%%), "
               "the same outlier flag on %s, svc_decision within %.2g absolute (%.2g relative) "
               "at worst.\n" % (os.path.basename(path), format(n, ","), format(same_cluster, ","),
                                100.0 * same_cluster / max(n, 1), format(same_sign, ","), maxabs, maxrel))
    return same_cluster, n


def run(rows=1000000, rounds=3, out=None, ref=None):
    """Measure; append markdown lines to `out` (a list); return the numbers."""
    out = [] if out is None else out
    log("scoring speed: building %d x 8 table" % rows)
    make_table(rows)
    size = q1("SELECT pg_size_pretty(pg_relation_size('%s'))" % TABLE)
    psql(SERIAL + "DROP TABLE IF EXISTS bench_score_model; "
         "CREATE TABLE bench_score_model AS SELECT svc_train(f) AS m FROM %s;" % TABLE)
    info = psql("SELECT svc_model_info(m) ->> 'n_support_vectors', svc_model_info(m) ->> 'n_equilibria', "
                "svc_model_info(m) ->> 'n_clusters', svc_model_info(m) ->> 'cluster_sizes', md5(m) "
                "FROM bench_score_model;")[0][0].split("\t")

    scan = "SELECT avg(f[1]) FROM %s" % TABLE
    steps = [("warm", SERIAL), ("warm", scan),
             ("warm", "SELECT sum(svc_decision(%s, f)) FROM %s" % (MODEL, TABLE))]
    for _ in range(rounds):
        steps += [("set", SERIAL),
                  ("scan", scan),
                  ("decision", "SELECT sum(svc_decision(%s, f)) FROM %s" % (MODEL, TABLE)),
                  ("predict", "SELECT sum(svc_predict(%s, f)) FROM %s" % (MODEL, TABLE)),
                  ("assign", "SELECT count(*) FROM svc_assign(%s, 'SELECT id, f FROM %s')" % (MODEL, TABLE)),
                  ("train", "SELECT length(svc_train(f)) FROM %s" % TABLE),
                  ("set", PARALLEL),
                  ("scan_par", scan),
                  ("train_par", "SELECT length(svc_train(f)) FROM %s" % TABLE)]
    log("scoring speed: %d rounds" % rounds)
    ms = timed_queries(steps)
    m = {k: median(v) / 1000.0 for k, v in ms.items() if k not in ("set", "warm")}

    # what the rows got, and svc_assign against svc_predict and svc_decision
    sizes = psql(SERIAL + "SELECT c, count(*) FROM (SELECT svc_predict(%s, f) AS c FROM %s) t "
                 "GROUP BY c ORDER BY c;" % (MODEL, TABLE))[0]
    outliers = q1("SELECT count(*) FILTER (WHERE svc_decision(%s, f) < 0) FROM %s" % (MODEL, TABLE))
    mismatch = q1("SELECT count(*) FROM svc_assign(%s, 'SELECT id, f FROM %s') a JOIN %s t USING (id) "
                  "WHERE a.cluster <> svc_predict(%s, t.f) OR a.decision <> svc_decision(%s, t.f)"
                  % (MODEL, TABLE, TABLE, MODEL, MODEL))

    s = m["scan"]
    out.append("\n## Scoring speed (%s rows x 8 dims, %s, 5 clusters, default model)\n"
               % (format(rows, ","), size))
    out.append("Model: %s support vectors, %s equilibria, %s clusters (training rows %s), md5 of its "
               "bytes %s. Medians of %d interleaved rounds in one session; ratios are to the serial scan.\n"
               % (info[0], info[1], info[2], info[3], info[4], rounds))
    out.append("| query | s | ratio to scan | goal |")
    out.append("|---|---|---|---|")
    out.append("| `SELECT avg(f[1])` (scan) | %.3f | 1.00 | |" % s)
    out.append("| `sum(svc_decision(m, f))` | %.3f | **%.2f** | <= 5 |" % (m["decision"], m["decision"] / s))
    out.append("| `sum(svc_predict(m, f))` | %.3f | **%.2f** | <= 15 |" % (m["predict"], m["predict"] / s))
    out.append("| `svc_assign(m, 'SELECT id, f ...')` | %.3f | %.2f | |" % (m["assign"], m["assign"] / s))
    out.append("| `svc_train(f)` serial | %.3f | **%.2f** | <= 1.5 |" % (m["train"], m["train"] / s))
    out.append("| `svc_train(f)` 2 workers | %.3f | %.2f (%.2f of serial training) | <= 0.75 of serial |"
               % (m["train_par"], m["train_par"] / s, m["train_par"] / m["train"]))
    out.append("| `SELECT avg(f[1])` 2 workers | %.3f | %.2f | |" % (m["scan_par"], m["scan_par"] / s))
    out.append("")
    out.append("Rows per cluster (svc_predict): %s; outliers (f < 0): %s; rows where svc_assign "
               "differs from svc_predict or svc_decision: %s.\n"
               % (", ".join("%s: %s" % tuple(l.split("\t")) for l in sizes), outliers, mismatch))
    if ref:
        compare_ref(ref, out)
    for l in out[-16:]:
        print(l, flush=True)
    psql("DROP TABLE IF EXISTS bench_score_model, %s;" % TABLE)
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ref", help="per-row results of an earlier run to compare with (written if absent)")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args()
    psql("CREATE EXTENSION IF NOT EXISTS svclust;")
    out = ["# svclust scoring speed", "",
           "Run %s on %s." % (datetime.date.today().isoformat(), machine_line())]
    run(args.rows, args.rounds, out, args.ref)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
