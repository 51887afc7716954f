#!/usr/bin/env python3
"""svclust's default options on a wider benchmark than the nine 2-D sets:
high dimensions, embeddings, many clusters of unequal sizes, rings, next to
HDBSCAN and k-means on the same rows.

    bash test/bench/run.sh --only quality --out quality.md      # full run
    bash test/bench/run.sh --only quality --quick               # minutes

or standalone (needs psql and the PG* variables for --engine sql):

    python3 test/bench/quality.py [--engine sql|cli] [--quick] [--out FILE]

Data (test/bench/quality_data.py): the nine labelled sets of --data
(default ../shared/data beside the repository), scikit-learn's bundled
digits and wine, and generated sets (every one from a fixed seed; no data
file is committed).  Every set's rows are put in one seeded random order
first (a table scan's order: the reservoir and the peers see the same rows).

svclust: svc_train(features) with the default options (or --opts), then
svc_assign over every row: its cluster (every row has one, the rows
outside the domain too) and its outlier flag.  --engine sql loads each set
into a table and runs both through psql (serially: max_parallel_workers_
per_gather 0); --engine cli runs test/tools/quality_cli, the same core fitted
from the same kind of training state without a server (for research
loops; build it with `make test/tools/quality_cli`).

Peers, on the same rows, z-scored (each column to mean 0, sd 1, as
svclust's default scaling):
  HDBSCAN  R's dbscan::hdbscan (Debian's r-cran-dbscan, through Rscript),
           minPts 5 and 15.  Its noise (label 0) counts as one class of its
           own, the usual way HDBSCAN's NMI is reported.  It is slow in
           many rows and dimensions, so it runs on a seeded uniform sample
           of at most 20,000 rows (5,000 above 32 dimensions), and its NMI
           is over that sample: the table says where.
  k-means  scikit-learn's KMeans with the true k (an oracle: it is told the
           number of classes), k-means++ with 4 starts, fitted on at most
           50,000 rows, every row assigned.
Peer results depend only on the rows, so they are cached (--cache).

NMI is scikit-learn's normalized_mutual_info_score (arithmetic mean) of
the classes and the clusters over every row.  The table gives per set the
rows, dims, true k, svclust's cluster count, NMI, its share of rows flagged
as outliers (svc_assign's outlier: f < 0), the width gamma it chose, the
peers' counts and NMI, and the times; then per-group means.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
from sklearn.metrics import normalized_mutual_info_score  # noqa: E402

import quality_data  # noqa: E402
from pgrun import TOP, log, machine_line, median, psql  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = os.environ.get("SVC_QUALITY_CLI") or os.path.join(TOP, "test", "tools", "quality_cli")
HDBSCAN_R = os.path.join(HERE, "quality_hdbscan.R")
MINPTS = (5, 15)
HDBSCAN_ROWS = 20000
HDBSCAN_ROWS_WIDE = 5000        # above 32 dimensions
KMEANS_ROWS = 50000
ORDER_SEED = 7
SERIAL = "SET max_parallel_workers_per_gather = 0;\n"
TABLE = "bench_quality"


def nmi(y, p):
    return float(normalized_mutual_info_score(y, p))


def fingerprint(x):
    h = hashlib.sha1()
    h.update(np.ascontiguousarray(x, dtype="<f8").tobytes())
    return h.hexdigest()[:16]


def zscore(x):
    sd = x.std(axis=0)
    sd[sd == 0] = 1.0
    return (x - x.mean(axis=0)) / sd


def peer_rows(n, d):
    cap = HDBSCAN_ROWS if d <= 32 else HDBSCAN_ROWS_WIDE
    if n <= cap:
        return np.arange(n)
    return np.sort(np.random.default_rng(11).choice(n, cap, replace=False))


def run_hdbscan(s, cache, tmp):
    """{minPts: (k, nmi, seconds, rows)} from the cache or R."""
    key = os.path.join(cache, "hdbscan_%s_%s.json" % (s["name"], s["fp"]))
    if os.path.exists(key):
        with open(key) as fh:
            return {int(k): tuple(v) for k, v in json.load(fh).items()}
    x, y = s["x"], s["y"]
    idx = peer_rows(len(y), x.shape[1])
    xs = zscore(x)[idx]
    f_in = os.path.join(tmp, "h_in_%d.f64" % os.getpid())
    f_out = os.path.join(tmp, "h_out_%d.i32" % os.getpid())
    xs.astype("<f8").tofile(f_in)
    t0 = time.time()
    res = subprocess.run(["Rscript", HDBSCAN_R, f_in, str(x.shape[1]), f_out] + [str(m) for m in MINPTS],
                         capture_output=True, text=True)
    if res.returncode != 0:
        log("hdbscan failed on %s: %s" % (s["name"], res.stderr.strip()[-300:]))
        return {}
    secs = [float(l.split(":")[1].split()[0]) for l in res.stdout.splitlines() if l.startswith("minPts")]
    lab = np.fromfile(f_out, dtype="<i4").reshape(len(MINPTS), len(idx))
    out = {}
    for i, mp in enumerate(MINPTS):
        k = len(set(lab[i][lab[i] > 0].tolist()))
        out[mp] = (k, nmi(y[idx], lab[i]), secs[i] if i < len(secs) else time.time() - t0, len(idx))
    with open(key, "w") as fh:
        json.dump({str(k): v for k, v in out.items()}, fh)
    return out


def run_kmeans(s, cache):
    key = os.path.join(cache, "kmeans_%s_%s.json" % (s["name"], s["fp"]))
    if os.path.exists(key):
        with open(key) as fh:
            return tuple(json.load(fh))
    from sklearn.cluster import KMeans
    x, y = s["x"], s["y"]
    xs = zscore(x)
    k = len(set(y.tolist()))
    t0 = time.time()
    fit_rows = xs[:KMEANS_ROWS]         # the rows are in a random order already
    km = KMeans(n_clusters=k, n_init=4, random_state=0).fit(fit_rows)
    out = (nmi(y, km.predict(xs)), time.time() - t0)
    with open(key, "w") as fh:
        json.dump(out, fh)
    return out


def svclust_cli(s, opts, tmp, cuts=()):
    """quality_cli on the set's rows; with cuts (cut options), also each
    cut's clusters under "cuts" (one array per cut)."""
    f_in = os.path.join(tmp, "%s_%s.f64" % (s["name"], s["fp"]))
    if not os.path.exists(f_in):
        part = "%s.%d" % (f_in, os.getpid())
        s["x"].astype("<f8").tofile(part)
        os.replace(part, f_in)
    f_out = os.path.join(tmp, "cli_out_%d.bin" % os.getpid())
    cmd = [CLI, "--opts", json.dumps(opts), "--out", f_out]
    for c in cuts:
        cmd += ["--cut", json.dumps(c)]
    res = subprocess.run(cmd + [f_in, str(s["x"].shape[1])], capture_output=True, text=True)
    if res.returncode != 0:
        return {"err": res.stderr.strip()[-300:]}
    infos = [json.loads(l) for l in res.stdout.strip().splitlines()]
    info = infos[0]
    n = len(s["y"])
    raw = np.fromfile(f_out, dtype=np.uint8)
    cl = raw[:4 * n].view("<i4")
    outl = raw[4 * n:5 * n].astype(bool)
    more = [raw[5 * n + 4 * n * i:5 * n + 4 * n * (i + 1)].view("<i4") for i in range(len(cuts))]
    return {"cluster": cl, "outlier": outl, "gamma": info["gamma"], "n_eq": info["n_eq"],
            "train_s": (info["scan_ms"] + info["fit_ms"]) / 1000.0, "fit_s": info["fit_ms"] / 1000.0,
            "assign_s": info["score_ms"] / 1000.0, "scan_s": None, "cuts": more}


def load_table(x):
    d = x.shape[1]
    fmt = "%d\t{" + ",".join(["%.17g"] * d) + "}"
    psql("DROP TABLE IF EXISTS %(t)s;\nCREATE TABLE %(t)s (id int, f float8[]);\n" % {"t": TABLE})
    chunk = 100000
    for a in range(0, len(x), chunk):
        part = x[a:a + chunk]
        buf = "\n".join(fmt % ((a + i,) + tuple(r)) for i, r in enumerate(part.tolist()))
        psql("COPY %s FROM STDIN;\n%s\n\\.\n" % (TABLE, buf))
    psql("VACUUM (FREEZE, ANALYZE) %s;" % TABLE)


def svclust_sql(s, opts):
    x = s["x"]
    load_table(x)
    o = json.dumps(opts).replace("'", "''")
    lines, _ = psql(SERIAL + """
\\timing on
SELECT avg(f[1]) FROM %(t)s;
SELECT avg(f[1]) FROM %(t)s;
SELECT avg(f[1]) FROM %(t)s;
CREATE TEMP TABLE q_m AS SELECT svc_train(f, '%(o)s') AS m FROM %(t)s;
\\timing off
SELECT 'info', svc_model_info(m) - 'cluster_sizes' FROM q_m;
\\timing on
CREATE TEMP TABLE q_a AS SELECT a.id, a.cluster, a.outlier FROM q_m, svc_assign(q_m.m, 'SELECT id, f FROM %(t)s') a;
\\timing off
COPY (SELECT id, coalesce(cluster, -1), outlier::int FROM q_a) TO STDOUT;
DROP TABLE q_m, q_a;
""" % {"t": TABLE, "o": o})
    times = [float(l.split()[1]) / 1000.0 for l in lines if l.startswith("Time: ")]
    info = None
    n = len(s["y"])
    cl = np.full(n, -1, dtype=np.int32)
    outl = np.zeros(n, dtype=bool)
    for l in lines:
        if l.startswith("Time: "):
            continue
        p = l.split("\t")
        if p[0] == "info":
            info = json.loads(p[1])
        elif len(p) == 3:
            i = int(p[0])
            cl[i] = int(p[1])
            outl[i] = p[2] == "1"
    scan = median(times[:3])
    return {"cluster": cl, "outlier": outl, "gamma": info.get("gamma"), "info": info,
            "n_eq": info.get("n_equilibria"), "train_s": times[3], "assign_s": times[4], "scan_s": scan}


def fmt(v, p=2):
    if v is None or v != v:
        return "-"
    return "%.*f" % (p, v)


def fsec(v):
    if v is None or v != v:
        return "-"
    return "%.3f" % v if v < 10 else "%.1f" % v


def measure(data, quick=False, engine="sql", opts=None, seeds=(), groups=(), names=(), peers=True,
            cache=None, json_out=None):
    """Run every set; returns the per-set results (dicts)."""
    cache = cache or os.path.join(tempfile.gettempdir(), "svclust-quality-cache")
    os.makedirs(cache, exist_ok=True)
    base_opts = dict(opts or {})
    sets = quality_data.all_sets(data, quick=quick, only_groups=list(groups) or None)
    if names:
        sets = [s for s in sets if s["name"] in names]
    if engine == "sql":
        psql("CREATE EXTENSION IF NOT EXISTS svclust;")
    rows = []
    jout = open(json_out, "w") if json_out else None
    for s in sets:
        order = np.random.default_rng(ORDER_SEED).permutation(len(s["y"]))
        s["x"] = np.ascontiguousarray(s["x"][order])
        s["y"] = s["y"][order]
        s["fp"] = fingerprint(s["x"])
        n, d = s["x"].shape
        k = len(set(s["y"].tolist()))
        r = {"name": s["name"], "group": s["group"], "n": n, "d": d, "k": k, "note": s["note"]}
        runs = []
        for sd in (list(seeds) or [None]):
            o = dict(base_opts)
            if sd is not None:
                o["seed"] = sd
            try:
                res = svclust_cli(s, o, cache) if engine == "cli" else svclust_sql(s, o)
            except Exception as e:     # one failing set must not stop the run
                res = {"err": str(e)[-300:]}
            if "err" in res:
                log("%s: svclust failed: %s" % (s["name"], res["err"]))
                runs.append(None)
                continue
            cl = res["cluster"]
            runs.append({"k": len(set(cl[cl > 0].tolist())), "nmi": nmi(s["y"], cl),
                         "outlier": float(res["outlier"].mean()), "gamma": res["gamma"],
                         "train_s": res["train_s"], "assign_s": res["assign_s"], "scan_s": res["scan_s"]})
        ok = [x for x in runs if x]
        if ok:
            r["svc"] = {key: float(np.mean([x[key] for x in ok if x[key] is not None]))
                        if any(x[key] is not None for x in ok) else None for key in ok[0]}
            r["svc"]["runs"] = len(ok)
            r["svc"]["nmi_min"] = min(x["nmi"] for x in ok)
        if peers:
            r["hdbscan"] = run_hdbscan(s, cache, cache)
            r["kmeans"] = run_kmeans(s, cache)
        rows.append(r)
        sv = r.get("svc")
        log("%-16s %7d x %-4d k %3d  svclust k %s NMI %s gamma %s train %s  | hdbscan5 %s  kmeans %s" % (
            s["name"], n, d, k, fmt(sv["k"], 1) if sv else "-", fmt(sv["nmi"], 3) if sv else "FAILED",
            ("%.4g" % sv["gamma"]) if sv and sv["gamma"] else "-", fsec(sv["train_s"]) if sv else "-",
            fmt(r.get("hdbscan", {}).get(5, (0, None))[1], 3), fmt((r.get("kmeans") or (None,))[0], 3)))
        if jout:
            jout.write(json.dumps(r) + "\n")
            jout.flush()
        del s["x"]
    if jout:
        jout.close()
    return rows


def group_mean(vals):
    vals = [v for v in vals if v is not None]
    return float(np.mean(vals)) if vals else None


def render(rows, heading="##"):
    """The markdown tables of measure()'s results: per set, then per group."""
    out = []
    out.append("| set | group | rows | d | k | svclust k | svclust NMI | outliers | gamma | train s | train/scan "
               "| HDBSCAN 5 k | NMI | HDBSCAN 15 k | NMI | HDBSCAN rows | k-means NMI |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        sv = r.get("svc")
        h = r.get("hdbscan") or {}
        h5, h15 = h.get(5), h.get(15)
        km = r.get("kmeans")
        out.append("| %s | %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["name"], r["group"], r["n"], r["d"], r["k"],
            fmt(sv["k"], 0 if sv["runs"] == 1 else 1) if sv else "FAILED", fmt(sv["nmi"], 3) if sv else "-",
            fmt(sv["outlier"], 3) if sv else "-", ("%.3g" % sv["gamma"]) if sv and sv["gamma"] else "-",
            fsec(sv["train_s"]) if sv else "-",
            fmt(sv["train_s"] / sv["scan_s"], 1) if sv and sv.get("scan_s") else "-",
            h5[0] if h5 else "-", fmt(h5[1], 3) if h5 else "-", h15[0] if h15 else "-",
            fmt(h15[1], 3) if h15 else "-",
            ("%d" % h5[3] + ("" if h5[3] == r["n"] else " (sample)")) if h5 else "-",
            fmt(km[0], 3) if km else "-"))
    out.append("")
    out.append("| group | sets | svclust NMI (mean) | worst set | HDBSCAN 5 | HDBSCAN 15 | k-means (true k) "
               "| one cluster where truth has several | mean outlier share |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for g in quality_data.GROUPS:
        gr = [r for r in rows if r["group"] == g]
        if not gr:
            continue
        sv = [r["svc"] for r in gr if r.get("svc")]
        worst = min((r for r in gr if r.get("svc")), key=lambda r: r["svc"]["nmi"], default=None)
        out.append("| %s | %d | %s | %s | %s | %s | %s | %d | %s |" % (
            g, len(gr), fmt(group_mean([v["nmi"] for v in sv]), 3),
            ("%s %.3f" % (worst["name"], worst["svc"]["nmi"])) if worst else "-",
            fmt(group_mean([(r.get("hdbscan") or {}).get(5, (0, None))[1] for r in gr]), 3),
            fmt(group_mean([(r.get("hdbscan") or {}).get(15, (0, None))[1] for r in gr]), 3),
            fmt(group_mean([(r.get("kmeans") or (None,))[0] for r in gr]), 3),
            sum(1 for r in gr if r.get("svc") and r["svc"]["k"] <= 1 and r["k"] > 1),
            fmt(group_mean([v["outlier"] for v in sv]), 3)))
    out.append("")
    return out


def run(out, data, quick=False):
    """bench.py's "quality" section: every set through SQL with the
    default options, with the peers."""
    t0 = time.time()
    out.append("## Default options beyond the 2-D sets (quality.py)\n")
    out.append("svc_train(features) with every option at its default, svc_assign over every row; HDBSCAN "
               "(R dbscan, minPts 5 and 15, noise as one class, on at most %d rows, %d above 32-D) and "
               "k-means with the true k on the same z-scored rows. %s run.\n"
               % (HDBSCAN_ROWS, HDBSCAN_ROWS_WIDE, "Quick" if quick else "Full"))
    rows = measure(data, quick=quick)
    out.extend(render(rows))
    out.append("Section time: %.0f s.\n" % (time.time() - t0))


def main():
    default_data = os.path.normpath(os.path.join(TOP, "..", "shared", "data"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", choices=("sql", "cli"), default="sql")
    ap.add_argument("--quick", action="store_true", help="fewer rows in the largest sets")
    ap.add_argument("--data", default=default_data, help="the nine labelled CSV sets (default %(default)s)")
    ap.add_argument("--opts", default="{}", help="svclust options (JSON), on top of the defaults")
    ap.add_argument("--seeds", default="", help="comma-separated svclust seeds (default: the default seed)")
    ap.add_argument("--groups", default="", help="comma-separated groups (%s)" % ", ".join(quality_data.GROUPS))
    ap.add_argument("--sets", default="", help="comma-separated set names")
    ap.add_argument("--no-peers", action="store_true", help="svclust only")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "svclust-quality-cache"),
                    help="where peer results and row files are kept between runs (default %(default)s)")
    ap.add_argument("--out", default=None, help="markdown file to write the table to")
    ap.add_argument("--json", default=None, help="per-set results as JSON lines")
    args = ap.parse_args()
    if args.engine == "cli" and not os.path.exists(CLI):
        sys.exit("quality.py: build %s first (make test/tools/quality_cli)" % CLI)
    t_start = time.time()
    rows = measure(args.data, quick=args.quick, engine=args.engine, opts=json.loads(args.opts),
                   seeds=[int(v) for v in args.seeds.split(",") if v],
                   groups=[g for g in args.groups.split(",") if g], names=[g for g in args.sets.split(",") if g],
                   peers=not args.no_peers, cache=args.cache, json_out=args.json)
    out = ["# svclust quality benchmark", ""]
    if args.engine == "sql":
        out.append("Machine: %s.\n" % machine_line())
    out.append("Engine: %s; options: `%s`%s; %s run; %.0f s in all.\n" % (
        args.engine, args.opts, (", seeds " + args.seeds) if args.seeds else " (default seed)",
        "quick" if args.quick else "full", time.time() - t_start))
    out.extend(render(rows))
    text = "\n".join(out)
    print(text)
    if args.out:
        with open(os.path.join(os.environ.get("BENCH_CWD", "."), args.out), "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
