#!/usr/bin/env python3
"""svclust benchmark: the paper's protocol on labelled CSV datasets, the
default-options result, and speed ratios measured in the same run.

Run it through test/bench/run.sh, which builds, installs and starts a
throwaway server:

    bash test/bench/run.sh --out bench-results.md            # full protocol
    bash test/bench/run.sh --quick --out bench-quick.md      # reduced grid

This script itself only needs psql and the PG* environment variables, so it
also runs against any server where svclust is installed (it creates, and
drops at the end, tables named bench_* and a function bench_run in the
current database).

Sections (--only picks some):
  defaults  every dataset with the default options (no grid, no labels used),
            mean of seeds 1-5: what most users get;
  labeling  per dataset: the paper's Algorithm 3, the saddle tree with the
            defaults, and the same models at the tree's best cut (chosen
            with the labels), with the cost of a cut and of the trajectories;
  tuned     the tree at its best with the labels, as DBSCAN's figures are:
            scale standard or none, gamma at 1/4, 1/2, 1, 2 and 4 times the
            automatic value, bandwidth_k 0 (one width) or 15, each model cut
            as in "labeling"; the best mean NMI over the seeds;
  grid      per strategy, the best point of the paper's grid (gamma, C in
            2^-5, 2^-3, ..., 2^5; five seeds; budget as in the paper's table)
            chosen by mean NMI with the labels, as the paper does, next to the
            paper's figures and to label-tuned DBSCAN;
  exact     per dataset: the exact solver (solver "smo") labelled by the
            saddle tree and by Ben-Hur's complete graph, next to the
            budgeted defaults and the paper's exact SVC column (NMI, times),
            and the solver "aid" (the same sphere by aggregation) with the
            tree, checked row by row against smo's clusters;
  aid       "aid" against "smo" as the rows grow (aid_vs_smo.py: the
            solvers alone through test/tools/smo_cli, 5k-40k generated rows);
  incremental  "incremental" against "smo" at 500-2,000 rows, and a
            sliding window of 5,000 rows over 50,000 with exact decrements
            (incremental_vs_smo.py, through test/tools/incr_bench); and the window
            through SQL, a model with kept rows refreshed by warm starts, with
            the backend's memory (keep_window.py);
  assign    svc_assign on synthetic 9-dimensional rows with budget 100:
            rows/second at 10k, 43.5k (the paper's Shuttle: 1,766 s), 100k
            and 1M rows, and the ratio to SELECT count(*) over the same query;
  train     svc_train on 1M x 8 rows against SELECT avg(f[1]), serial and
            with 2 parallel workers (train_speed.py);
  labelled  generated blobs with planted anomalies: outlier precision,
            recall, F1 and NMI with 0, 1, 2 and 5% of the rows labelled,
            for smo and bsgd (labelled.py);
  warm      the warm start: a model of 1M generated rows refreshed on 10k new
            rows (svc_train(f, options, init)) against the full retrain and
            the training scan of the new rows alone: NMI and time (warm.py);
  quality   the default options beyond the nine sets (quality.py): digits,
            wine, embedding-like sets at 64-768 dims, many Gaussian blobs of
            unequal sizes (up to 1M rows), rings around blobs, with HDBSCAN
            (R's dbscan, minPts 5 and 15) and k-means with the true k on the
            same rows; per-set and per-group NMI (--quick: fewer rows);
  scoring   svc_decision, svc_predict, svc_assign and svc_train on 1M x 8
            rows in 5 clusters, as ratios to SELECT avg(f[1]) in the same
            run, and (--score-ref) every row's cluster and decision against
            an earlier run of another build (score_speed.py);
  wide      svc_train, svc_decision and svc_predict on embedding-like real[]
            rows (1M x 128 and 100k x 768, 20 clusters; --quick: 100k x 128
            and 20k x 768), defaults and gamma 8 unscaled, as ratios to
            SELECT avg(e[1]), and real[] against float8[] (wide_speed.py).
            Not in the default list (about 12 minutes).
Every default-options run, and the first seed of every grid point, also
checks that svc_predict and svc_assign give every row the same cluster.

Datasets: every *.csv of --data (header x1,...,xd,label; label any value).
A dataset that fails to load, or a run that fails, is reported in the
tables and the run goes on.
"""
import argparse
import concurrent.futures
import csv
import datetime
import glob
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgrun import TOP, PsqlError, log, machine_line, median, psql, q1, timed_queries  # noqa: E402
import labelled  # noqa: E402
import warm  # noqa: E402
import score_speed  # noqa: E402
import wide_speed  # noqa: E402
import train_speed  # noqa: E402
import aid_vs_smo  # noqa: E402
import incremental_vs_smo  # noqa: E402
import keep_window  # noqa: E402
import sample_quality  # noqa: E402
import quality  # noqa: E402

# The paper's exact SVC (SMO and Ben-Hur's labelling): NMI per dataset, and
# its train / clustering seconds where the paper gives them.
PAPER_SVC_NMI = {"aggregation": 0.69, "compound": 0.51, "d31": 0.45, "flame": 0.55, "iris": 0.63,
                 "jain": 0.53, "pathbased": 0.48, "r15": 0.67, "spiral": 0.52}
PAPER_SVC_SECONDS = {"aggregation": (0.05, 31.4), "d31": (0.17, 468.0)}

# Label-tuned DBSCAN NMI on these sets (from the project's issue tracker).
DBSCAN_NMI = {"aggregation": 0.98, "compound": 0.95, "d31": 0.87, "flame": 0.85,
              "jain": 0.89, "pathbased": 0.87, "r15": 0.97, "spiral": 1.00}

STRATEGIES = ["removal", "project-knn", "project-random", "unbudgeted"]
STRATEGY_COLUMN = {"removal": "BSGD_R", "project-knn": "BSGD_PNN",
                   "project-random": "BSGD_PRN", "unbudgeted": "SGD"}
SHORT = {"removal": "R", "project-knn": "PNN", "project-random": "PRN", "unbudgeted": "SGD"}
BSGD_COLUMNS = ["BSGD_R", "BSGD_PNN", "BSGD_PRN"]

# One train + assign + validity run.  Errors (and a statement_timeout) are
# caught and returned as text, so one failing configuration does not stop a
# batch.  The assignment is kept in arrays rather than a temporary table:
# thousands of runs in one session would otherwise churn the catalog.
SETUP_SQL = r"""
CREATE EXTENSION IF NOT EXISTS svclust;
-- The validity indices of an assignment (ids, clusters) against the labels.
CREATE OR REPLACE FUNCTION bench_score(tbl regclass, ids bigint[], cls int[]) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE cvi jsonb;
BEGIN
    EXECUTE format('SELECT svc_cvi_agg(d.features, u.cluster, d.label) '
                   'FROM unnest($1, $2) u(id, cluster) JOIN %s d USING (id)', tbl)
        USING ids, cls INTO cvi;
    RETURN cvi;
END $$;
CREATE OR REPLACE FUNCTION bench_run(tbl regclass, opts jsonb, check_predict boolean DEFAULT true)
RETURNS TABLE (train_s float8, assign_s float8, info jsonb, cvi jsonb, agree float8, err text)
LANGUAGE plpgsql AS $$
DECLARE
    t1 timestamptz; t2 timestamptz; t3 timestamptz;
    m bytea; ids bigint[]; cls int[];
BEGIN
    BEGIN
        t1 := clock_timestamp();
        EXECUTE format('SELECT svc_train(features, $1) FROM %s', tbl) USING opts INTO m;
        t2 := clock_timestamp();
        IF m IS NULL THEN
            RAISE EXCEPTION 'svc_train returned NULL';
        END IF;
        SELECT array_agg(a.id), array_agg(a.cluster) INTO ids, cls
        FROM svc_assign(m, format('SELECT id, features FROM %s', tbl)) a;
        t3 := clock_timestamp();
        train_s := extract(epoch FROM t2 - t1);
        assign_s := extract(epoch FROM t3 - t2);
        cvi := bench_score(tbl, ids, cls);
        IF check_predict THEN
            EXECUTE format('SELECT avg((svc_predict($1, d.features) IS NOT DISTINCT FROM u.cluster)::int) '
                           'FROM unnest($2, $3) u(id, cluster) JOIN %s d USING (id)', tbl)
                USING m, ids, cls INTO agree;
        END IF;
        info := svc_model_info(m) - 'cluster_sizes';
    EXCEPTION WHEN query_canceled OR others THEN
        err := regexp_replace(SQLSTATE || ': ' || SQLERRM, '\s+', ' ', 'g');
    END;
    RETURN NEXT;
END $$;

-- One model, cut at several settings without training again: the NMI,
-- Rand and cluster count of each cut, and the seconds the cut and the
-- assignment (one trajectory per row) took.
CREATE OR REPLACE FUNCTION bench_cuts(tbl regclass, opts jsonb, cuts jsonb[])
RETURNS TABLE (cut jsonb, cut_s float8, assign_s float8, cvi jsonb, err text)
LANGUAGE plpgsql AS $$
DECLARE
    m bytea; c jsonb; t1 timestamptz; t2 timestamptz; t3 timestamptz; ids bigint[]; cls int[];
BEGIN
    EXECUTE format('SELECT svc_train(features, $1) FROM %s', tbl) USING opts INTO m;
    FOREACH c IN ARRAY cuts LOOP
        cut := c; err := NULL; cvi := NULL;
        BEGIN
            t1 := clock_timestamp();
            PERFORM svc_recut(m, c);
            t2 := clock_timestamp();
            SELECT array_agg(a.id), array_agg(a.cluster) INTO ids, cls
            FROM svc_assign(m, format('SELECT id, features FROM %s', tbl), c) a;
            t3 := clock_timestamp();
            cut_s := extract(epoch FROM t2 - t1);
            assign_s := extract(epoch FROM t3 - t2);
            cvi := bench_score(tbl, ids, cls);
        EXCEPTION WHEN query_canceled OR others THEN
            err := regexp_replace(SQLSTATE || ': ' || SQLERRM, '\s+', ' ', 'g');
        END;
        RETURN NEXT;
    END LOOP;
END $$;
"""


def sanitize(name):
    s = re.sub(r"[^a-z0-9_]", "_", name.lower())
    return s if s and not s[0].isdigit() else "d" + s


def load_dataset(path):
    """Load one CSV into bench_<name>(id, features, label); return a dict or
    raise ValueError / PsqlError with a reason."""
    name = sanitize(os.path.splitext(os.path.basename(path))[0])
    with open(path, newline="") as fh:
        header = next(csv.reader(fh), None)
    if not header or len(header) < 2:
        raise ValueError("no header x1,...,xd,label")
    header = [h.strip().lower() for h in header]
    if header[-1] != "label":
        raise ValueError("last column is %r, not label" % header[-1])
    dims = len(header) - 1
    tbl = "bench_" + name
    cols = ", ".join("x%d float8" % (i + 1) for i in range(dims))
    arr = ", ".join("x%d" % (i + 1) for i in range(dims))
    psql("""
DROP TABLE IF EXISTS raw_%(t)s, %(t)s;
CREATE TABLE raw_%(t)s (%(cols)s, label text);
\\copy raw_%(t)s FROM '%(path)s' WITH (FORMAT csv, HEADER true)
CREATE TABLE %(t)s AS
  SELECT row_number() OVER () AS id, ARRAY[%(arr)s]::float8[] AS features,
         dense_rank() OVER (ORDER BY label)::int AS label
  FROM raw_%(t)s;
DROP TABLE raw_%(t)s;
VACUUM ANALYZE %(t)s;
""" % {"t": tbl, "cols": cols, "path": path.replace("'", "''"), "arr": arr})
    line = psql("SELECT count(*), count(DISTINCT label) FROM %s" % tbl)[0][0].split("\t")
    return {"name": name, "table": tbl, "dims": dims, "rows": int(line[0]), "classes": int(line[1])}


def scan_seconds(tbl, reps=21):
    """Median time of the plain aggregate scan SELECT avg(features[1])."""
    ms = timed_queries([("scan", "SELECT avg(features[1]) FROM %s" % tbl)] * reps)
    return median(ms.get("scan", [])) / 1000.0


def paper_tables(reference_dir):
    path = os.path.join(reference_dir, "paper_tables.csv")
    table = {}
    if not os.path.exists(path):
        return table
    with open(path) as fh:
        for row in csv.DictReader(fh):
            key = sanitize(row["dataset"].replace(" ", ""))
            table.setdefault(key, {})[row["metric"]] = row
    return table


def run_batch(ds, configs, timeout_s=300):
    """Run bench_run for every (key, options, check_predict) in one psql
    session.  Returns {key: result dict}; a configuration that failed has
    an "err"."""
    sql = ["SET statement_timeout = '%ds';" % timeout_s, "SET client_min_messages = warning;"]
    for key, opts, check_predict in configs:
        sql.append("SELECT %s, r.* FROM bench_run('%s', '%s', %s) r;" % (
            "'" + key + "'", ds["table"], json.dumps(opts), "true" if check_predict else "false"))
    results = {}
    try:
        lines, stderr = psql("\n".join(sql), stop_on_error=False, check=False)
    except OSError as e:
        lines, stderr = [], str(e)
    for line in lines:
        f = line.split("\t")
        if len(f) != 7:
            continue
        key, t, a, info, cvi, agree, err = f
        if err:
            results[key] = {"err": err}
            continue
        results[key] = {"train_s": float(t), "assign_s": float(a), "info": json.loads(info),
                        "cvi": json.loads(cvi), "agree": float(agree) if agree else None}
    missing = [k for k, _, _ in configs if k not in results]
    if missing:
        msg = (stderr.strip().splitlines() or ["no result (server crash?)"])[-1]
        for k in missing:
            results[k] = {"err": "psql: " + msg}
    return results


def mean(xs):
    xs = [x for x in xs if x is not None and x == x]
    return sum(xs) / len(xs) if xs else float("nan")


def summarise(results):
    ok = [r for r in results if "err" not in r]
    s = {"runs": len(results), "failed": len(results) - len(ok),
         "errors": sorted({r["err"] for r in results if "err" in r})}
    keys = ["purity", "rand", "nmi", "davies_bouldin", "compactness", "adjusted_rand"]
    for k in keys:
        s[k] = mean([r["cvi"].get(k) for r in ok])
    s["clusters"] = mean([r["cvi"].get("n_clusters") for r in ok])
    s["train_s"] = median([r["train_s"] for r in ok])
    s["assign_s"] = median([r["assign_s"] for r in ok])
    agrees = [r["agree"] for r in ok if r["agree"] is not None]
    s["agree"] = min(agrees) if agrees else float("nan")
    return s


def fmt(x, p=2):
    if x is None or x != x:
        return "-"
    return "%.*f" % (p, x)


def fsec(x):
    if x is None or x != x:
        return "-"
    return "%.4f" % x if x < 0.01 else "%.3f" % x


def paper_value(paper, name, metric, col):
    try:
        return float(paper[name][metric][col])
    except (KeyError, ValueError, TypeError):
        return None


def paper_best_bsgd(paper, name):
    vals = [paper_value(paper, name, "nmi", c) for c in BSGD_COLUMNS]
    vals = [v for v in vals if v is not None]
    return max(vals) if vals else None


# ---------------------------------------------------------------- datasets

def load_all(args, out):
    files = sorted(glob.glob(os.path.join(args.data, "*.csv")))
    if not files:
        out.append("No CSV files in `%s`: dataset sections skipped.\n" % args.data)
        return []
    loaded = []
    problems = []
    for path in files:
        try:
            ds = load_dataset(path)
        except (ValueError, PsqlError, OSError) as e:
            lines = str(e).splitlines() or ["?"]
            msg = next((l for l in lines if "ERROR" in l), lines[0])
            problems.append("%s: %s" % (os.path.basename(path), re.sub(r"^.*ERROR:\s*", "", msg)))
            log("could not load %s: %s" % (path, e))
            continue
        if ds["rows"] == 0:
            problems.append("%s: no rows" % os.path.basename(path))
            continue
        ds["scan_s"] = scan_seconds(ds["table"])
        loaded.append(ds)
        log("loaded %s: %d rows, %d dims, %d classes" % (ds["name"], ds["rows"], ds["dims"], ds["classes"]))
    out.append("Datasets from `%s`: %s." % (
        args.data, ", ".join("%s (%d x %d, %d classes)" % (d["name"], d["rows"], d["dims"], d["classes"])
                             for d in loaded) or "none loaded"))
    for p in problems:
        out.append("- not loaded: %s" % p)
    out.append("")
    return loaded


def bench_defaults(args, loaded, paper, out):
    seeds = args.seeds
    out.append("## Default options (no grid, no labels)\n")
    out.append("`svc_train(features)` with every option at its default but `seed` (seeds %s; mean of "
               "the indices, median of the times). Ratios are against `SELECT avg(features[1])` over "
               "the same rows (median of 21). Paper best = best NMI of the paper's three budgeted "
               "columns (BSGD_R/PNN/PRN, B = 50, chosen with the labels on a grid).\n"
               % ",".join(map(str, seeds)))
    out.append("| dataset | rows | classes | clusters | purity | Rand | ARI | NMI | DBI | compactness "
               "| train s | assign s | train/scan | assign/scan | predict=assign | paper best NMI | DBSCAN NMI |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    summary = {}
    for ds in loaded:
        res = run_batch(ds, [("s%d" % sd, {"seed": sd}, True) for sd in seeds])
        s = summarise(list(res.values()))
        summary[ds["name"]] = s
        if s["failed"] == s["runs"]:
            out.append("| %s | %d | %d | FAILED: %s |" % (ds["name"], ds["rows"], ds["classes"],
                                                           "; ".join(s["errors"])[:200]))
        else:
            out.append("| %s | %d | %d | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %.0f | %s | %s | %s |" % (
                ds["name"], ds["rows"], ds["classes"], s["clusters"], fmt(s["purity"]), fmt(s["rand"]),
                fmt(s["adjusted_rand"]), fmt(s["nmi"]), fmt(s["davies_bouldin"]), fmt(s["compactness"]),
                fsec(s["train_s"]), fsec(s["assign_s"]), s["train_s"] / max(ds["scan_s"], 1e-6),
                s["assign_s"] / max(ds["scan_s"], 1e-6), fmt(s["agree"], 4),
                fmt(paper_best_bsgd(paper, ds["name"])), fmt(DBSCAN_NMI.get(ds["name"]))))
            if s["failed"]:
                out[-1] += " (%d of %d runs failed: %s)" % (s["failed"], s["runs"], "; ".join(s["errors"])[:200])
        print(out[-1], flush=True)
    ok = [summary[d["name"]] for d in loaded if summary[d["name"]]["failed"] < summary[d["name"]]["runs"]]
    if ok:
        out.append("| **mean** | | | %.1f | %s | %s | %s | %s | | | | | | | %s | %s | %s |" % (
            mean([s["clusters"] for s in ok]), fmt(mean([s["purity"] for s in ok])),
            fmt(mean([s["rand"] for s in ok])), fmt(mean([s["adjusted_rand"] for s in ok])),
            fmt(mean([s["nmi"] for s in ok])), fmt(min(s["agree"] for s in ok), 4),
            fmt(mean([paper_best_bsgd(paper, d["name"]) for d in loaded])),
            fmt(mean([DBSCAN_NMI.get(d["name"]) for d in loaded]))))
    out.append("")
    return summary


CUTS = [{"merge_ratio": r} for r in (0.2, 0.25, 0.3, 0.35, 0.4, 0.5)] + [{"cut": "eom"}]


def cut_batch(ds, opts_list):
    """One session of bench_cuts: each options of opts_list trains a model,
    cut at CUTS and at n_clusters = the number of classes.  Returns its
    rows as [cut (jsonb text), cut_s, assign_s, cvi (json), err]."""
    cuts = CUTS + [{"n_clusters": ds["classes"]}]
    arr = "ARRAY[%s]::jsonb[]" % ", ".join("'%s'" % json.dumps(c) for c in cuts)
    sql = ["SET statement_timeout = '300s';", "SET client_min_messages = warning;"]
    for opts in opts_list:
        sql.append("SELECT r.cut, r.cut_s, r.assign_s, r.cvi, r.err FROM bench_cuts('%s', '%s', %s) r;"
                   % (ds["table"], json.dumps(opts), arr))
    try:
        lines, _ = psql("\n".join(sql), stop_on_error=False, check=False)
    except OSError:
        lines = []
    return [f for f in (line.split("\t") for line in lines) if len(f) == 5]


def bench_labeling(args, loaded, defaults, out):
    """Issue 7: the paper's Algorithm 3, the tree with the defaults, and the
    tree at its best cut (chosen with the labels), per dataset."""
    seeds = args.seeds
    out.append("## Labelling: Algorithm 3 against the saddle tree\n")
    out.append("Seeds %s. *paper*: `labeling = \"paper\"` (Algorithm 3 as written), other options at "
               "their defaults. *tree, defaults*: no option. *tree, best*: the same default models cut "
               "again (`svc_assign(model, query, cut)`, no training) at merge_ratio 0.2-0.5, "
               "`cut = eom`, or `n_clusters` = the number of classes; the best mean NMI, chosen with "
               "the labels. *cut ms*: `svc_recut` (cutting the stored tree); *assign ms*: "
               "`svc_assign` (one trajectory per row); both medians.\n" % ",".join(map(str, seeds)))
    out.append("| dataset | classes | paper NMI | paper Rand | paper K | tree NMI | tree Rand | tree K "
               "| best NMI | best Rand | best K | best cut | cut ms | assign ms | DBSCAN NMI |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for ds in loaded:
        res = run_batch(ds, [("p%d" % sd, {"seed": sd, "labeling": "paper"}, False) for sd in seeds])
        ps = summarise(list(res.values()))
        ts = defaults.get(ds["name"]) if defaults else None
        if ts is None:
            ts = summarise(list(run_batch(ds, [("s%d" % sd, {"seed": sd}, False) for sd in seeds]).values()))
        per_cut = {}
        cut_times, assign_times = [], []
        for f in cut_batch(ds, [{"seed": sd} for sd in seeds]):
            if f[4]:
                continue
            key = json.dumps(json.loads(f[0]), sort_keys=True)
            cvi = json.loads(f[3])
            per_cut.setdefault(key, []).append(cvi)
            cut_times.append(float(f[1]))
            assign_times.append(float(f[2]))
        best_key, best = None, None
        for key, cvis in per_cut.items():
            if not cvis:
                continue
            m = {k: mean([c.get(k) for c in cvis]) for k in ("nmi", "rand", "n_clusters")}
            if best is None or m["nmi"] > best["nmi"]:
                best_key, best = key, m
        best = best or {"nmi": float("nan"), "rand": float("nan"), "n_clusters": float("nan")}
        rows.append((ps, ts, best))
        out.append("| %s | %d | %s | %s | %.1f | %s | %s | %.1f | %s | %s | %.1f | `%s` | %s | %s | %s |" % (
            ds["name"], ds["classes"], fmt(ps["nmi"]), fmt(ps["rand"]), ps["clusters"],
            fmt(ts["nmi"]), fmt(ts["rand"]), ts["clusters"], fmt(best["nmi"]), fmt(best["rand"]),
            best["n_clusters"], best_key or "-",
            fmt(1000 * median(cut_times), 3) if cut_times else "-",
            fmt(1000 * median(assign_times), 1) if assign_times else "-",
            fmt(DBSCAN_NMI.get(ds["name"]))))
        print(out[-1], flush=True)
    if rows:
        out.append("| **mean** | | %s | %s | | %s | %s | | %s | %s | | | | | %s |" % (
            fmt(mean([r[0]["nmi"] for r in rows])), fmt(mean([r[0]["rand"] for r in rows])),
            fmt(mean([r[1]["nmi"] for r in rows])), fmt(mean([r[1]["rand"] for r in rows])),
            fmt(mean([r[2]["nmi"] for r in rows])), fmt(mean([r[2]["rand"] for r in rows])),
            fmt(mean([DBSCAN_NMI.get(d["name"]) for d in loaded]))))
    out.append("")


GAMMA_FACTORS = [0.25, 0.5, 1.0, 2.0, 4.0]
SCALES = ["standard", "none"]
BANDWIDTH_KS = [0, 15]


def bench_tuned(args, loaded, out):
    """Issue 7's "the new mode at its best": gamma and the cut chosen with
    the labels, as label-tuned DBSCAN chooses eps and minPts."""
    seeds = args.seeds
    jobs = []
    for ds in loaded:
        ds["gamma_auto"] = {}
        for scale in SCALES:
            lines, _ = psql("SELECT (svc_model_info(svc_train(features, '%s'))->>'gamma') FROM %s;"
                            % (json.dumps({"seed": 1, "scale": scale}), ds["table"]), check=False)
            try:
                auto = float(lines[0])
            except (IndexError, ValueError):
                continue
            ds["gamma_auto"][scale] = auto
            for fac in GAMMA_FACTORS:
                for bk in BANDWIDTH_KS:
                    jobs.append((ds, (scale, fac, bk),
                                 [{"seed": sd, "scale": scale, "gamma": auto * fac, "bandwidth_k": bk}
                                  for sd in seeds]))

    def run(job):
        return cut_batch(job[0], job[2])

    started = time.time()
    per = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for (ds, fac, _), rows in zip(jobs, pool.map(run, jobs)):
            for f in rows:
                if f[4]:
                    continue
                key = (fac, json.dumps(json.loads(f[0]), sort_keys=True))
                per.setdefault(ds["name"], {}).setdefault(key, []).append(json.loads(f[3]))
    elapsed = time.time() - started
    out.append("## The tree at its best (scale, gamma, bandwidth_k and cut chosen with the labels)\n")
    out.append("Seeds %s. `scale` %s; gamma at %s times the automatic value for that scale (from "
               "seed 1); `bandwidth_k` %s; other training options at their defaults; every model cut as in the "
               "labelling section (merge_ratio 0.2-0.5, `cut = eom`, `n_clusters` = the number of "
               "classes). The best (scale, gamma, bandwidth_k, cut) by mean NMI over the seeds, chosen with the "
               "labels as label-tuned DBSCAN chooses eps and minPts; *standard* is the best with the "
               "default scale alone, *one width* the best with bandwidth_k 0. %d models in %.0f s.\n" % (
                   ",".join(map(str, seeds)), " and ".join("`%s`" % sc for sc in SCALES),
                   ", ".join("%g" % f for f in GAMMA_FACTORS),
                   " and ".join(str(b) for b in BANDWIDTH_KS), len(jobs) * len(seeds), elapsed))
    out.append("| dataset | best scale | best gamma (x auto) | best bandwidth_k | best cut | NMI | Rand | K "
               "| NMI, standard | NMI, one width | DBSCAN NMI | NMI - DBSCAN |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for ds in loaded:
        cand, std, one = None, None, None
        for ((scale, fac, bk), key), cvis in per.get(ds["name"], {}).items():
            if len(cvis) < len(seeds):
                continue
            m = {k: mean([c.get(k) for c in cvis]) for k in ("nmi", "rand", "n_clusters")}
            if cand is None or m["nmi"] > cand[4]["nmi"]:
                cand = (scale, fac, bk, key, m)
            if scale == "standard" and (std is None or m["nmi"] > std):
                std = m["nmi"]
            if bk == 0 and (one is None or m["nmi"] > one):
                one = m["nmi"]
        db = DBSCAN_NMI.get(ds["name"])
        if cand is None:
            out.append("| %s | - | - | - | - | - | - | - | - | - | %s | - |" % (ds["name"], fmt(db)))
            continue
        scale, fac, bk, key, m = cand
        auto = ds["gamma_auto"][scale]
        rows.append((ds["name"], m["nmi"], std, db, one))
        out.append("| %s | %s | %.3g (%g) | %d | `%s` | %s | %s | %.1f | %s | %s | %s | %s |" % (
            ds["name"], scale, auto * fac, fac, bk, key, fmt(m["nmi"]), fmt(m["rand"]), m["n_clusters"],
            fmt(std), fmt(one), fmt(db), "%+.2f" % (m["nmi"] - db) if db is not None else "-"))
        print(out[-1], flush=True)
    withdb = [r for r in rows if r[3] is not None]
    if rows:
        out.append("| **mean** | | | | | %s | | | %s | %s | | |" % (
            fmt(mean([r[1] for r in rows])), fmt(mean([r[2] for r in rows])),
            fmt(mean([r[4] for r in rows]))))
    if withdb:
        out.append("| mean of the %d sets with a DBSCAN figure | | | | | %s | | | %s | %s | %s | |" % (
            len(withdb), fmt(mean([r[1] for r in withdb])), fmt(mean([r[2] for r in withdb])),
            fmt(mean([r[4] for r in withdb])), fmt(mean([r[3] for r in withdb]))))
    out.append("")


def bench_grid(args, loaded, paper, defaults, out):
    grid = [2.0 ** e for e in args.grid]
    seeds = args.seeds
    jobs = []
    for ds in loaded:
        budget = int(float(paper[ds["name"]]["nmi"]["budget"])) if "nmi" in paper.get(ds["name"], {}) else 50
        ds["budget"] = budget
        for strat in STRATEGIES:
            # one batch (one session) per gamma: small enough to balance
            # the load over --jobs sessions, big enough to amortise psql
            for g in grid:
                configs = []
                for c in grid:
                    for sd in seeds:
                        configs.append(("%g|%g|%d" % (g, c, sd),
                                        {"gamma": g, "c": c, "budget": budget, "strategy": strat, "seed": sd},
                                        sd == seeds[0] and not args.no_predict_check))
                jobs.append((ds, strat, g, configs))
    # the slowest batches first (unbudgeted on many rows), so that the
    # sessions finish together
    jobs.sort(key=lambda j: -j[0]["rows"] * (20 if j[1] == "unbudgeted" else 1))
    total = sum(len(j[3]) for j in jobs)
    log("grid: %d runs in %d batches, %d sessions" % (total, len(jobs), args.jobs))
    started = time.time()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futs = {pool.submit(run_batch, ds, configs): (ds["name"], strat, g)
                for ds, strat, g, configs in jobs}
        done = 0
        for fut in concurrent.futures.as_completed(futs):
            name, strat, g = futs[fut]
            results.setdefault((name, strat), {}).update(fut.result())
            done += 1
            if done % 10 == 0 or done == len(jobs):
                log("grid: %d/%d batches done, %.0f s" % (done, len(jobs), time.time() - started))
    elapsed = time.time() - started

    out.append("## Best of the paper's grid (chosen by mean NMI with the labels, as the paper does)\n")
    out.append("gamma and C in {%s}, seeds %s, budget as in the paper's table (50), k = 5, other "
               "options at their defaults (so `nu` = 0.05 and the saddle-tree labelling); %d runs in "
               "%.0f s with %d concurrent sessions (times below are medians over the seeds at the best "
               "point and were measured with %d sessions sharing the machine). Paper columns: BSGD_R = "
               "removal, BSGD_PNN = project-knn, BSGD_PRN = project-random, SGD = unbudgeted.\n" % (
                   ", ".join("2^%d" % e for e in args.grid), ",".join(map(str, seeds)), total,
                   elapsed, args.jobs, args.jobs))
    out.append("| dataset | strategy | gamma | C | clusters | purity | Rand | NMI | DBI | compactness "
               "| train s | assign s | predict=assign (min over grid) | failed runs | paper purity | paper Rand | paper NMI "
               "| paper DBI | paper compactness | paper train s | paper assign s |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    best = {}
    for ds in loaded:
        for strat in STRATEGIES:
            res = results[(ds["name"], strat)]
            allruns = list(res.values())
            cand = None
            for g in grid:
                for c in grid:
                    s = summarise([res["%g|%g|%d" % (g, c, sd)] for sd in seeds])
                    if s["failed"] == s["runs"]:
                        continue
                    if cand is None or s["nmi"] > cand[2]["nmi"]:
                        cand = (g, c, s)
            allsum = summarise(allruns)
            col = STRATEGY_COLUMN[strat]

            def pv(metric, p=2):
                return fmt(paper_value(paper, ds["name"], metric, col), p)
            paper_cols = " | ".join([pv("purity"), pv("rand"), pv("nmi"), pv("dbi"), pv("compactness"),
                                     pv("train_s"), pv("cluster_s")])
            failed = "%d/%d" % (allsum["failed"], allsum["runs"])
            if allsum["failed"]:
                failed += " (%s)" % "; ".join(allsum["errors"])[:160]
            if cand is None:
                out.append("| %s | %s | - | - | - | - | - | - | - | - | - | - | - | %s | %s |" % (
                    ds["name"], strat, failed, paper_cols))
                best[(ds["name"], strat)] = None
            else:
                g, c, s = cand
                best[(ds["name"], strat)] = s
                out.append("| %s | %s | %g | %g | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    ds["name"], strat, g, c, s["clusters"], fmt(s["purity"]), fmt(s["rand"]), fmt(s["nmi"]),
                    fmt(s["davies_bouldin"]), fmt(s["compactness"]), fsec(s["train_s"]), fsec(s["assign_s"]),
                    fmt(allsum["agree"], 4), failed, paper_cols))
    out.append("")
    print("\n".join(out[-(len(loaded) * 4 + 2):]), flush=True)

    # summary: NMI against the paper's matching column, the paper's best, DBSCAN
    out.append("### NMI summary\n")
    out.append("Each cell: svclust best-of-grid NMI (paper's figure for the same strategy). "
               "\"defaults\" uses no labels at all; the other columns pick the grid point with the labels.\n")
    out.append("| dataset | defaults | removal (BSGD_R) | project-knn (BSGD_PNN) | project-random (BSGD_PRN) "
               "| unbudgeted (SGD) | svclust best | paper best BSGD | DBSCAN (tuned) |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    cols = {k: [] for k in ["def"] + STRATEGIES + ["best", "pbest", "db"]}
    pcols = {k: [] for k in STRATEGIES}
    for ds in loaded:
        n = ds["name"]
        dflt = defaults.get(n, {}).get("nmi") if defaults else None
        cells = [n, fmt(dflt)]
        cols["def"].append(dflt)
        vals = []
        for strat in STRATEGIES:
            s = best.get((n, strat))
            v = s["nmi"] if s else None
            p = paper_value(paper, n, "nmi", STRATEGY_COLUMN[strat])
            cols[strat].append(v)
            pcols[strat].append(p)
            vals.append(v)
            cells.append("%s (%s)" % (fmt(v), fmt(p)))
        vals = [v for v in vals if v is not None and v == v]
        b = max(vals) if vals else None
        pb = paper_best_bsgd(paper, n)
        cols["best"].append(b)
        cols["pbest"].append(pb)
        cols["db"].append(DBSCAN_NMI.get(n))
        cells += [fmt(b), fmt(pb), fmt(DBSCAN_NMI.get(n))]
        out.append("| " + " | ".join(cells) + " |")

    def mcell(k):
        return fmt(mean(cols[k]))
    out.append("| **mean** | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        mcell("def"), *["%s (%s)" % (mcell(s), fmt(mean(pcols[s]))) for s in STRATEGIES],
        mcell("best"), mcell("pbest"), mcell("db")))
    withdb = [i for i, ds in enumerate(loaded) if ds["name"] in DBSCAN_NMI]
    if withdb and len(withdb) < len(loaded):
        def msub(k):
            return fmt(mean([cols[k][i] for i in withdb]))
        out.append("| mean of the %d sets with a DBSCAN figure | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            len(withdb), msub("def"), msub("removal"), msub("project-knn"), msub("project-random"),
            msub("unbudgeted"), msub("best"), msub("pbest"), msub("db")))
    out.append("")
    print("\n".join(out[-(len(loaded) + 6):]), flush=True)


# ---------------------------------------------------------------- assign speed

def bench_exact(args, loaded, defaults, out):
    """The exact solver next to the budgeted defaults and the paper's SVC."""
    out.append("## Exact solver (SMO) and the complete-graph labelling\n")
    out.append("`{\"solver\": \"smo\"}` solves the smallest enclosing sphere exactly (default options "
               "otherwise: `outlier_fraction`, the automatic gamma, the saddle tree); "
               "`+ complete-graph` labels the same model by Ben-Hur's complete graph "
               "(`\"labeling\": \"complete-graph\"`, 20 segment points; on a uniform sample of 3,000 "
               "rows where a set has more, the graph's limit). No labels are used. "
               "Train s includes the labelling (trajectories and tree, or the graph); assign s is "
               "`svc_assign` over the same rows. BSGD = the default options (mean of seeds %s, as in "
               "the defaults section). Paper SVC = the paper's exact baseline (its NMI, and its "
               "train / clustering seconds where it gives them).\n" % ",".join(map(str, args.seeds)))
    out.append("| dataset | rows | method | clusters | NMI | Rand | SVs | train s | assign s | paper SVC NMI | paper SVC s (train / clustering) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    configs = [("smo", "SMO + tree", {"solver": "smo"}),
               ("graph", "SMO + complete-graph", {"solver": "smo", "labeling": "complete-graph"}),
               ("aid", "AID + tree", {"solver": "aid"})]
    nmis = {"smo": [], "graph": [], "bsgd": [], "aid": []}
    same = []
    for ds in loaded:
        # the complete graph labels at most 3,000 rows: past that, a sample
        batch = [(key, dict(opts, sample=3000) if key == "graph" and ds["rows"] > 3000 else opts, False)
                 for key, _, opts in configs]
        res = run_batch(ds, batch, timeout_s=900)
        paper_s = PAPER_SVC_SECONDS.get(ds["name"])
        paper_cols = "%s | %s" % (fmt(PAPER_SVC_NMI.get(ds["name"])),
                                  "%.2f / %.1f" % paper_s if paper_s else "-")
        for key, label, _ in configs:
            r = res[key]
            if "err" in r:
                out.append("| %s | %d | %s | FAILED: %s | | | | | | %s |" % (
                    ds["name"], ds["rows"], label, r["err"][:160], paper_cols))
            else:
                nmis[key].append(r["cvi"].get("nmi"))
                out.append("| %s | %d | %s | %d | %s | %s | %s | %s | %s | %s |" % (
                    ds["name"], ds["rows"], label, r["cvi"].get("n_clusters", 0), fmt(r["cvi"].get("nmi")),
                    fmt(r["cvi"].get("rand")), r["info"].get("n_support_vectors", "-"), fsec(r["train_s"]),
                    fsec(r["assign_s"]), paper_cols))
            print(out[-1], flush=True)
        same.append((ds["name"], aid_equals_smo(ds)))
        d = defaults.get(ds["name"])
        if d is None:
            d = summarise(list(run_batch(ds, [("s%d" % sd, {"seed": sd}, False) for sd in args.seeds]).values()))
        if d["failed"] < d["runs"]:
            nmis["bsgd"].append(d["nmi"])
            out.append("| %s | %d | BSGD defaults | %.1f | %s | %s | - | %s | %s | %s |" % (
                ds["name"], ds["rows"], d["clusters"], fmt(d["nmi"]), fmt(d["rand"]),
                fsec(d["train_s"]), fsec(d["assign_s"]), paper_cols))
    out.append("| **mean NMI** | | SMO + tree %s, SMO + complete-graph %s, AID + tree %s, BSGD defaults %s | | | | | | | %s | |" % (
        fmt(mean(nmis["smo"])), fmt(mean(nmis["graph"])), fmt(mean(nmis["aid"])), fmt(mean(nmis["bsgd"])),
        fmt(mean([PAPER_SVC_NMI.get(d["name"]) for d in loaded]))))
    out.append("")
    out.append("AID against SMO on the same rows and options (`{\"solver\": \"aid\"}`, default `aid_gap` "
               "1e-4, and `{\"solver\": \"aid\", \"aid_gap\": 1e-9}`): rows whose cluster "
               "(`svc_predict`) differs from smo's, and the objectives' relative difference.\n")
    out.append("| dataset | rows | differing rows (aid_gap 1e-4) | objective rel diff | rounds | "
               "differing rows (aid_gap 1e-9) | objective rel diff | rounds |")
    out.append("|---|---|---|---|---|---|---|---|")
    for name, r in same:
        if r is None:
            out.append("| %s | | FAILED | | | | | |" % name)
        else:
            out.append("| %s | %d | %d | %.1e | %d | %d | %.1e | %d |" % ((name,) + r))
        print(out[-1], flush=True)
    out.append("")


def aid_equals_smo(ds):
    """(rows, differing rows, rel diff, rounds) at aid_gap 1e-4 and at 1e-9, or None."""
    sql = """
SET statement_timeout = '900s';
WITH m AS (SELECT svc_train(features, '{"solver": "smo"}') AS s,
                  svc_train(features, '{"solver": "aid"}') AS a,
                  svc_train(features, '{"solver": "aid", "aid_gap": 1e-9}') AS b FROM %(t)s)
SELECT count(*),
       count(*) FILTER (WHERE svc_predict(m.s, t.features) <> svc_predict(m.a, t.features)),
       ((svc_model_info(a)->>'objective')::float8 - (svc_model_info(s)->>'objective')::float8)
           / abs((svc_model_info(s)->>'objective')::float8),
       (svc_model_info(a)->>'aid_rounds')::int,
       count(*) FILTER (WHERE svc_predict(m.s, t.features) <> svc_predict(m.b, t.features)),
       ((svc_model_info(b)->>'objective')::float8 - (svc_model_info(s)->>'objective')::float8)
           / abs((svc_model_info(s)->>'objective')::float8),
       (svc_model_info(b)->>'aid_rounds')::int
FROM %(t)s t, m GROUP BY m.s, m.a, m.b;
""" % {"t": ds["table"]}
    try:
        lines, _ = psql(sql, check=False)
    except (OSError, PsqlError):
        return None
    for line in lines:
        f = line.split("\t")
        if len(f) == 7:
            return (int(f[0]), int(f[1]), float(f[2]), int(f[3]), int(f[4]), float(f[5]), int(f[6]))
    return None


def bench_assign(args, out):
    sizes = args.assign_sizes
    out.append("## Assignment speed (svc_assign, 9 dimensions, budget 100)\n")
    out.append("Synthetic rows: 5 well separated blobs in 9 dimensions (seeded). The model is trained once per size with "
               "`{\"budget\": 100}`; `svc_assign(model, 'SELECT id, features FROM t')` is timed as "
               "`SELECT count(*) FROM svc_assign(...)` against `SELECT count(*) FROM (SELECT id, features "
               "FROM t) s`, both serial (medians of 3, one run at 1M). The paper's assignment took 1,766 s on "
               "Shuttle (43,500 rows, 9 dimensions, B = 100).\n")
    out.append("| rows | train s | assign s | rows/s | count(*) s | assign / count(*) | paper s |")
    out.append("|---|---|---|---|---|---|---|")
    res = []
    for n in sizes:
        # 5 blobs: centres (i % 5) * 3 per coordinate, noise with sd 0.5
        elems = ", ".join(["(i % 5) * 3 + (random() + random() + random() - 1.5)"] * 9)
        psql("""
DROP TABLE IF EXISTS bench_speed, bench_speed_model;
SELECT setseed(0.25);
CREATE TABLE bench_speed AS SELECT i::bigint AS id, ARRAY[%s]::float8[] AS features
FROM generate_series(1, %d) i;
VACUUM ANALYZE bench_speed;
""" % (elems, n))
        reps = 1 if n >= 1000000 else 3
        steps = [("train", "CREATE TABLE bench_speed_model AS SELECT svc_train(features, '{\"budget\": 100}') AS m FROM bench_speed")]
        steps.append(("warm", "SELECT count(*) FROM (SELECT id, features FROM bench_speed) s"))
        for _ in range(reps):
            steps.append(("count", "SELECT count(*) FROM (SELECT id, features FROM bench_speed) s"))
            steps.append(("assign", "SELECT count(*) FROM svc_assign((SELECT m FROM bench_speed_model), "
                                    "'SELECT id, features FROM bench_speed')"))
        ms = timed_queries(steps, setup="SET max_parallel_workers_per_gather = 0;")
        train_s = median(ms["train"]) / 1000.0
        assign_s = median(ms["assign"]) / 1000.0
        count_s = median(ms["count"]) / 1000.0
        ncl = q1("SELECT svc_model_info(m)->>'n_clusters' FROM bench_speed_model")
        out.append("| %s | %.3f | %.3f | %s | %.4f | %.0f | %s |" % (
            format(n, ","), train_s, assign_s, format(int(n / assign_s), ","), count_s,
            assign_s / count_s, "1,766" if n == 43500 else "-"))
        res.append((n, assign_s, ncl))
        print(out[-1], flush=True)
    psql("DROP TABLE IF EXISTS bench_speed, bench_speed_model;")
    out.append("\nClusters found: %s." % ", ".join("%s at %s rows" % (c, format(n, ",")) for n, _, c in res))
    for n, a, _ in res:
        if n == 43500:
            out.append("43,500 rows: %.2f s against the paper's 1,766 s (goal: under 1 s: %s)." % (
                a, "met" if a < 1 else "MISSED"))
    out.append("")


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 1)[1])
    cwd = os.environ.get("BENCH_CWD", os.getcwd())
    default_data = os.path.normpath(os.path.join(TOP, "..", "shared", "data"))
    ap.add_argument("--data", default=default_data,
                    help="directory of CSV datasets (default %(default)s)")
    ap.add_argument("--reference", default=os.path.normpath(os.path.join(TOP, "..", "shared", "reference")),
                    help="directory holding paper_tables.csv (default %(default)s)")
    ap.add_argument("--out", default="bench-results.md", help="markdown file to write the tables to")
    ap.add_argument("--quick", action="store_true",
                    help="reduced grid (gamma, C in 2^1, 2^3, 2^5), seeds 1-2, 3 rounds of training speed")
    ap.add_argument("--only", default="defaults,labeling,tuned,grid,exact,assign,train,labelled,scoring,aid,warm,"
                                      "incremental,sample",
                    help="comma-separated sections to run (default: all of "
                         "defaults,labeling,tuned,grid,exact,assign,train,labelled,scoring,aid,warm,incremental,"
                         "sample; and wide and quality, not in the default)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="concurrent sessions for the grid (default %(default)s)")
    ap.add_argument("--no-predict-check", action="store_true",
                    help="skip the svc_predict = svc_assign check in grid runs (by default it runs for "
                         "the first seed of every grid point; the defaults section always checks)")
    ap.add_argument("--train-rows", type=int, default=1000000,
                    help="rows of the training-speed and scoring-speed tables")
    ap.add_argument("--warm-rows", type=int, default=1000000,
                    help="rows A of the warm-start section (the stored model's)")
    ap.add_argument("--warm-new", type=int, default=10000,
                    help="rows B of the warm-start section (the refresh)")
    ap.add_argument("--score-ref", help="scoring: per-row results of an earlier run (another build) to "
                                        "compare every row with; written when the file does not exist")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="sample: factor on its datasets' row counts (e.g. 0.05 for a quick try)")
    args = ap.parse_args()
    for a in ("data", "reference", "out"):
        setattr(args, a, os.path.join(cwd, os.path.expanduser(getattr(args, a))))
    args.grid = [1, 3, 5] if args.quick else [-5, -3, -1, 1, 3, 5]
    args.seeds = [1, 2] if args.quick else [1, 2, 3, 4, 5]
    args.assign_sizes = [10000, 43500, 100000, 1000000]
    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = sections - {"defaults", "labeling", "tuned", "grid", "exact", "assign", "train",
                          "labelled", "scoring", "aid", "warm", "incremental", "sample", "wide",
                          "quality"}
    if unknown:
        ap.error("unknown section(s): %s" % ", ".join(sorted(unknown)))

    started = time.time()
    psql(SETUP_SQL)
    out = ["# svclust benchmark", "",
           "Run %s on %s; %s." % (datetime.date.today().isoformat(), machine_line(),
                                  "quick grid" if args.quick else "full grid"), ""]
    paper = paper_tables(args.reference)
    if not paper:
        out.append("(no paper_tables.csv in `%s`: paper columns left empty)\n" % args.reference)
    defaults = {}
    if sections & {"defaults", "labeling", "tuned", "grid", "exact"}:
        loaded = load_all(args, out)
        if loaded and "defaults" in sections:
            defaults = bench_defaults(args, loaded, paper, out)
        if loaded and "labeling" in sections:
            bench_labeling(args, loaded, defaults, out)
        if loaded and "tuned" in sections:
            bench_tuned(args, loaded, out)
        if loaded and "grid" in sections:
            bench_grid(args, loaded, paper, defaults, out)
        if loaded and "exact" in sections:
            bench_exact(args, loaded, defaults, out)
    if "assign" in sections:
        bench_assign(args, out)
    if "train" in sections:
        train_speed.run(args.train_rows, 3 if args.quick else 9, out)
    if "labelled" in sections:
        labelled.run(out)
    if "warm" in sections:
        warm.run(out, args.warm_rows, args.warm_new, 2 if args.quick else 3)
    if "scoring" in sections:
        score_speed.run(args.train_rows, 2 if args.quick else 3, out,
                        os.path.join(cwd, args.score_ref) if args.score_ref else None)
    if "wide" in sections:
        wide_speed.run(wide_speed.QUICK if args.quick else wide_speed.FULL, 2 if args.quick else 3, out)
    if "aid" in sections:
        out.append("## AID against SMO as the rows grow\n")
        out.extend(aid_vs_smo.measure("5000,10000,20000" if args.quick else "5000,10000,20000,40000",
                                      "clustered,shuttle", 1.0, 1, 0 if args.quick else 20000))
        out.append("")
    if "incremental" in sections:
        out.append("## The solver incremental against smo, and a sliding window\n")
        out.extend(incremental_vs_smo.measure("500,1000,2000", 5000, 10000 if args.quick else 50000))
        out.append("")
        out.extend(keep_window.measure(1000, 5000 if args.quick else 20000, 500))
        out.append("")
    if "sample" in sections:
        sample_quality.run(out, args.data, args.scale)
    if "quality" in sections:
        quality.run(out, args.data, args.quick)
    if sections & {"defaults", "labeling", "tuned", "grid", "exact"}:
        for ds in loaded:
            psql("DROP TABLE IF EXISTS %s;" % ds["table"], check=False)
    out.append("\nTotal benchmark time: %.0f s." % (time.time() - started))
    with open(args.out, "w") as fh:
        fh.write("\n".join(out) + "\n")
    print("\nwrote %s" % args.out)


if __name__ == "__main__":
    main()
