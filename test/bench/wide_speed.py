#!/usr/bin/env python3
"""svclust on wide rows: svc_train, svc_decision and svc_predict on
embedding-like real[] rows, against a plain scan of the same rows, in one run.

Each table is N rows of D reals in K clusters made by test/bench/wide_rows.c
(a 16-dimensional latent space mapped linearly to D dimensions, plus noise,
unit-normalised; seeded), with the cluster each row was drawn from.  For each
table and each options value it trains a model once, then times in one
session, interleaved over several rounds (medians reported):

  scan       SELECT avg(e[1]) FROM t                          (serial)
  train      SELECT length(svc_train(e, options)) FROM t      (serial)
  train8     SELECT length(svc_train(e::float8[], options)) FROM t
             (serial: the rows cast to float8[], as svc_train read real[]
             rows before 0.5.0)
  decision   SELECT sum(svc_decision(m, e)) FROM t            (serial)
  predict    SELECT sum(svc_predict(m, e)) FROM t             (serial)

and prints each as a ratio to the scan.  It also reports what the model
found (clusters against the drawn ones: adjusted Rand index), and, against
a float8[] copy of the same rows: the share of rows where the model trained
on real[] and scored on real[] gives the cluster that the model trained on
float8[] and scored on float8[] gives (clusters matched by their rows), and
the largest difference of svc_decision between the two.

The default runs are the wide-rows issue's: 1,000,000 x 128 and 100,000 x
768 in 20 clusters, with the default options and with gamma 8 unscaled (the
width that finds the 20 clusters of these unit-length rows).  --quick runs
100,000 x 128 and 20,000 x 768.  The 1,000,000 x 8 float8[] benchmark is
score_speed.py's and train_speed.py's.

Run it alone through run.sh:  bash test/bench/run.sh --only wide [--quick]
or against a running server:  python3 test/bench/wide_speed.py --quick
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgrun import HERE, log, machine_line, median, psql, q1, timed_queries  # noqa: E402

SERIAL = "SET max_parallel_workers_per_gather = 0;"
OPTIONS = ["{}", '{"gamma": 8, "scale": "none"}']
FULL = [(1000000, 128), (100000, 768)]
QUICK = [(100000, 128), (20000, 768)]
CLUSTERS = 20
SEED = 7


def generator():
    """Build wide_rows.c into a temporary directory; return its path."""
    out = os.path.join(tempfile.mkdtemp(prefix="svclust_wide_"), "wide_rows")
    subprocess.run(["cc", "-O2", "-o", out, os.path.join(HERE, "wide_rows.c"), "-lm"], check=True)
    return out


def make_tables(gen, rows, dims, name):
    """name (real[]) and name_f8 (the same rows as float8[]), with class."""
    psql("DROP TABLE IF EXISTS %(n)s, %(n)s_f8; "
         "CREATE TABLE %(n)s (id bigint, e real[], class integer);" % {"n": name})
    p = subprocess.Popen([gen, str(rows), str(dims), str(CLUSTERS), str(SEED)], stdout=subprocess.PIPE)
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", "COPY %s FROM STDIN" % name],
                   stdin=p.stdout, check=True)
    p.stdout.close()
    if p.wait() != 0:
        raise RuntimeError("wide_rows failed")
    psql("CREATE TABLE %(n)s_f8 AS SELECT id, e::float8[] AS e, class FROM %(n)s; "
         "VACUUM (FREEZE, ANALYZE) %(n)s; VACUUM (FREEZE, ANALYZE) %(n)s_f8;" % {"n": name})


def ari(pairs):
    """Adjusted Rand index from [(a, b, count), ...]."""
    def c2(x):
        return x * (x - 1) / 2.0
    n = sum(c for _, _, c in pairs)
    ra, rb = {}, {}
    for a, b, c in pairs:
        ra[a] = ra.get(a, 0) + c
        rb[b] = rb.get(b, 0) + c
    index = sum(c2(c) for _, _, c in pairs)
    sa = sum(c2(c) for c in ra.values())
    sb = sum(c2(c) for c in rb.values())
    expected = sa * sb / c2(n) if n > 1 else 0.0
    top = 0.5 * (sa + sb)
    return 1.0 if top == expected else (index - expected) / (top - expected)


def matched_share(pairs):
    """Share of rows whose cluster under a matches b's, each cluster of a
    taken as the cluster of b it shares most rows with (one to one)."""
    best = {}
    for a, b, c in pairs:
        if a not in best or c > best[a][1]:
            best[a] = (b, c)
    used = {}
    same = 0
    for a, (b, c) in best.items():
        if b in used:
            continue  # two clusters of a on one of b: the smaller counts as wrong
        used[b] = a
        same += c
    n = sum(c for _, _, c in pairs)
    return same / float(max(n, 1))


def contingency(sql):
    lines, _ = psql(SERIAL + sql)
    return [tuple(int(x) if x else -1 for x in l.split("\t")) for l in lines]


def run_one(gen, rows, dims, rounds, out, options=OPTIONS, keep=False):
    name = "bench_wide_%d_%d" % (rows, dims)
    log("wide: building %d x %d" % (rows, dims))
    make_tables(gen, rows, dims, name)
    size = q1("SELECT pg_size_pretty(pg_total_relation_size('%s'))" % name)
    results = []
    for opt in options:
        lit = "'%s'::jsonb" % opt
        psql(SERIAL + "DROP TABLE IF EXISTS bench_wide_model; "
             "CREATE TABLE bench_wide_model AS SELECT svc_train(e, %(o)s) AS m4, "
             "(SELECT svc_train(e, %(o)s) FROM %(n)s_f8) AS m8 FROM %(n)s;" % {"o": lit, "n": name})
        info = json.loads(q1("SELECT svc_model_info(m4) FROM bench_wide_model"))
        same_bytes = q1("SELECT m4 = m8 FROM bench_wide_model") == "t"
        m4 = "(SELECT m4 FROM bench_wide_model)"
        scan = "SELECT avg(e[1]) FROM %s" % name
        steps = [("warm", SERIAL), ("warm", scan), ("warm", scan)]
        for _ in range(rounds):
            steps += [("scan", scan),
                      ("train", "SELECT length(svc_train(e, %s)) FROM %s" % (lit, name)),
                      ("train8", "SELECT length(svc_train(e::float8[], %s)) FROM %s" % (lit, name)),
                      ("decision", "SELECT sum(svc_decision(%s, e)) FROM %s" % (m4, name)),
                      ("predict", "SELECT sum(svc_predict(%s, e)) FROM %s" % (m4, name))]
        log("wide: %d x %d %s: %d rounds" % (rows, dims, opt, rounds))
        ms = timed_queries(steps)
        m = {k: median(v) / 1000.0 for k, v in ms.items() if k != "warm"}

        found = contingency("SELECT svc_predict(%s, e), class, count(*) FROM %s GROUP BY 1, 2"
                            % (m4, name))
        cross = contingency(
            "SELECT svc_predict((SELECT m4 FROM bench_wide_model), a.e), "
            "svc_predict((SELECT m8 FROM bench_wide_model), b.e), count(*) "
            "FROM %(n)s a JOIN %(n)s_f8 b USING (id) GROUP BY 1, 2" % {"n": name})
        maxdiff = float(q1(SERIAL + "SELECT max(abs(svc_decision((SELECT m4 FROM bench_wide_model), a.e) - "
                              "svc_decision((SELECT m8 FROM bench_wide_model), b.e))) "
                              "FROM %(n)s a JOIN %(n)s_f8 b USING (id)" % {"n": name}))
        r = dict(rows=rows, dims=dims, options=opt, size=size, info=info, same_bytes=same_bytes,
                 ari=ari(found), same_cluster=matched_share(cross), maxdiff=maxdiff, **m)
        results.append(r)
        log("wide: %s" % json.dumps({k: v for k, v in r.items() if k != "info"}))
    if not keep:
        psql("DROP TABLE IF EXISTS bench_wide_model, %(n)s, %(n)s_f8;" % {"n": name})
    return results


def table(results, rounds, out):
    out.append("| rows x dims (size) | options | clusters (ARI to the drawn 20) | scan s | "
               "svc_train | svc_train(e::float8[]) | svc_decision | svc_predict | "
               "real[] vs float8[]: same cluster, max abs diff of f, same model bytes |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        s = r["scan"]
        out.append("| %s x %d (%s) | `%s` | %s (%.3f) | %.3f | %.2fx | %.2fx | %.2fx | %.2fx | %.4f%%, %.2g, %s |"
                   % (format(r["rows"], ","), r["dims"], r["size"], r["options"],
                      r["info"].get("n_clusters"), r["ari"], s, r["train"] / s, r["train8"] / s,
                      r["decision"] / s,
                      r["predict"] / s, 100.0 * r["same_cluster"], r["maxdiff"],
                      "yes" if r["same_bytes"] else "no"))
    out.append("")
    out.append("Medians of %d interleaved rounds in one session, serial; ratios to `SELECT avg(e[1])` "
               "over the same real[] rows; svc_train(e::float8[]) is the cast "
               "svc_train took on real[] rows before 0.5.0. Goals (wide-rows issue): 1M x 128 train <= 2x, decision <= 5x, "
               "predict <= 10x; 100k x 768 train <= 3x, decision <= 5x, predict <= 10x.\n" % rounds)


def run(sizes, rounds=3, out=None, options=OPTIONS, keep=False):
    out = [] if out is None else out
    gen = generator()
    results = []
    for rows, dims in sizes:
        results += run_one(gen, rows, dims, rounds, out, options, keep)
    out.append("\n## Wide rows (embedding-like real[], 20 clusters)\n")
    table(results, rounds, out)
    for l in out[-(len(results) + 5):]:
        print(l, flush=True)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="100,000 x 128 and 20,000 x 768")
    ap.add_argument("--size", action="append", help="ROWSxDIMS, e.g. 200000x128 (repeatable)")
    ap.add_argument("--options", action="append", help="a jsonb options value (repeatable)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the tables (bench_wide_*) afterwards")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args()
    sizes = ([tuple(int(x) for x in s.lower().split("x")) for s in args.size] if args.size
             else QUICK if args.quick else FULL)
    psql("CREATE EXTENSION IF NOT EXISTS svclust;")
    out = ["# svclust on wide rows", "",
           "Run %s on %s." % (datetime.date.today().isoformat(), machine_line())]
    run(sizes, args.rounds, out, args.options or OPTIONS, args.keep)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
