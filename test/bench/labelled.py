#!/usr/bin/env python3
"""svclust with a few labelled rows: do the labels generalise to the
unlabelled rows near them?  For the exact solver (smo) and the budgeted one
(bsgd), on generated data (seeded) with planted anomalies of five shapes,
5% of the rows each:

  rings3    three 2-D blobs (sd 0.5), anomalies on rings 1.4-2.2 around
            every centre: close enough that a model without labels takes
            many of them in
  ring      two 2-D blobs, anomalies on a ring 1.3-1.9 around the first
  between   three 2-D blobs, anomalies scattered on the segments between
            the centres (the middle 60%, jitter sd 0.25)
  cluster   three 2-D blobs and a small tight anomalous cluster (sd 0.3)
            apart from them: dense, so unlabelled it is a cluster
  scatter12 three 12-D blobs (sd 1, centres 10 apart), anomalies scattered
            at 3-4 sd of the normal rows' distance beyond its mean
            (distance 5.6-6.3 from a centre, where the normal rows sit at
            3.5 +- 0.7)

A share p of the anomalies and p of the normal rows get their label
(stratified); the others are NULL.  For each shape, solver and p in 1%, 2%,
5%, over several seeds of the data and labels, against the unlabelled
model (the two-argument aggregate) on the same rows and seed:

  F1 unl.      outlier F1 (svc_decision < 0 against the planted anomalies)
               over the rows left unlabelled: what the labels teach about
               rows that carry none
  gain         F1 unl. minus the unlabelled model's F1 on the same rows:
               mean and min over the seeds
  lab. out     labelled anomalies that end with f < 0, of all
  NMI          svc_predict against the blobs on the normal rows
  out share    rows with f < 0, of all rows

Run it alone through run.sh:  bash test/bench/run.sh --only labelled
or on a running server:       python3 test/bench/labelled.py [--shapes ...]
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgrun import psql  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.metrics import normalized_mutual_info_score  # noqa: E402

SHARES = [0.01, 0.02, 0.05]
SEEDS = (1, 2, 3, 4, 5)
N_ROWS = 3000
ANOMALY_SHARE = 0.05
SOLVERS = {
    "smo": '{"solver": "smo"}',
    "bsgd": '{}',
    "aid": '{"solver": "aid"}',
    "incremental": '{"solver": "incremental"}',
    # 0.4.0's rule: the labelled rows in the solver's bounds
    "smo-bounds": '{"solver": "smo", "label_spread": false}',
    "bsgd-bounds": '{"label_spread": false}',
}
SHAPES = ["rings3", "ring", "between", "cluster", "scatter12"]


def _blobs(rng, centres, n, sd):
    k = len(centres)
    blob = np.arange(n) % k
    return np.asarray(centres, dtype=float)[blob] + rng.normal(0, sd, size=(n, len(centres[0]))), blob + 1


def _ring(rng, centre, n, r0, r1):
    r = rng.uniform(r0, r1, n)
    t = rng.uniform(0, 2 * math.pi, n)
    return np.asarray(centre, dtype=float) + np.c_[r * np.cos(t), r * np.sin(t)]


def generate(shape, seed, n=N_ROWS, anomaly_share=ANOMALY_SHARE):
    """Rows, the blob of each row (0 for an anomaly), and whether it is an anomaly."""
    rng = np.random.default_rng(seed)
    n_anom = int(round(n * anomaly_share))
    n_norm = n - n_anom
    if shape == "rings3":
        centres = [(0.0, 0.0), (5.0, 0.0), (2.5, 4.3)]
        pts, blob = _blobs(rng, centres, n_norm, 0.5)
        apts = np.vstack([_ring(rng, centres[j], 1, 1.4, 2.2) for j in np.arange(n_anom) % 3])
    elif shape == "ring":
        centres = [(0.0, 0.0), (6.0, 0.0)]
        pts, blob = _blobs(rng, centres, n_norm, 0.5)
        apts = _ring(rng, centres[0], n_anom, 1.3, 1.9)
    elif shape == "between":
        centres = [(0.0, 0.0), (6.0, 0.0), (3.0, 5.2)]
        pts, blob = _blobs(rng, centres, n_norm, 0.5)
        pair = np.arange(n_anom) % 3
        a = np.asarray(centres)[pair]
        b = np.asarray(centres)[(pair + 1) % 3]
        t = rng.uniform(0.2, 0.8, n_anom)[:, None]
        apts = a + t * (b - a) + rng.normal(0, 0.25, size=(n_anom, 2))
    elif shape == "cluster":
        centres = [(0.0, 0.0), (5.0, 0.0), (2.5, 4.3)]
        pts, blob = _blobs(rng, centres, n_norm, 0.5)
        apts = np.array([2.5, -2.8]) + rng.normal(0, 0.3, size=(n_anom, 2))
    elif shape == "scatter12":
        d = 12
        centres = np.zeros((3, d))
        for j in range(3):
            centres[j, j] = 10.0 / math.sqrt(2)
        pts, blob = _blobs(rng, [tuple(c) for c in centres], n_norm, 1.0)
        # the normal rows' distance from their centre: chi with d degrees of freedom
        mean_r = math.sqrt(2) * math.exp(math.lgamma((d + 1) / 2) - math.lgamma(d / 2))
        sd_r = math.sqrt(d - mean_r ** 2)
        u = rng.normal(size=(n_anom, d))
        u /= np.linalg.norm(u, axis=1)[:, None]
        r = rng.uniform(mean_r + 3 * sd_r, mean_r + 4 * sd_r, n_anom)[:, None]
        apts = centres[np.arange(n_anom) % 3] + r * u
    else:
        raise ValueError(shape)
    x = np.vstack([pts, apts])
    truth_blob = np.r_[blob, np.zeros(n_anom, dtype=int)]
    anomaly = np.r_[np.zeros(n_norm, dtype=bool), np.ones(n_anom, dtype=bool)]
    order = rng.permutation(n)
    return x[order], truth_blob[order], anomaly[order]


def labels_for(anomaly, share, seed):
    """1 / -1 for a stratified share of the rows, None for the others."""
    rng = np.random.default_rng(seed + 1000)
    lab = [None] * len(anomaly)
    for flag, value in ((True, -1), (False, 1)):
        idx = np.flatnonzero(anomaly == flag)
        k = int(round(share * len(idx)))
        for i in rng.choice(idx, size=k, replace=False) if k > 0 else []:
            lab[i] = value
    return lab


def load(x, lab):
    rows = "\n".join("%d\t{%s}\t%s" % (i, ",".join(repr(float(v)) for v in r), "\\N" if l is None else l)
                     for i, (r, l) in enumerate(zip(x, lab)))
    psql("DROP TABLE IF EXISTS bench_lab, bench_lab_m;\n"
         "CREATE TABLE bench_lab (id int, f float8[], label int);\n"
         "COPY bench_lab FROM STDIN;\n" + rows + "\n\\.\n")


def score(opts, labelled):
    agg = ("svc_train(f, label, '%s')" % opts) if labelled else ("svc_train(f, '%s')" % opts)
    lines, _ = psql("""
CREATE TABLE bench_lab_m AS SELECT %s AS m FROM bench_lab;
SELECT id, svc_decision(m, f), svc_predict(m, f) FROM bench_lab, bench_lab_m ORDER BY id;
DROP TABLE bench_lab_m;
""" % agg)
    rows = [l.split("\t") for l in lines]
    return np.array([float(r[1]) for r in rows]), np.array([int(r[2]) for r in rows])


def f1(flag, truth):
    tp = int(np.sum(flag & truth))
    prec = tp / max(1, int(np.sum(flag)))
    rec = tp / max(1, int(np.sum(truth)))
    return 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0


def measure(shape, solvers, seeds, shares, verbose=True):
    """{(solver, share): list over seeds of (f1u, base f1u, lab out, lab total, nmi, share out)}."""
    res = {}
    for seed in seeds:
        x, blob, anomaly = generate(shape, seed)
        normal = ~anomaly
        load(x, [None] * len(anomaly))
        base = {s: score(SOLVERS[s], False) for s in solvers}
        for s in solvers:
            dec, pred = base[s]
            res.setdefault((s, 0.0), []).append(
                (f1(dec < 0, anomaly), f1(dec < 0, anomaly), 0, 0,
                 normalized_mutual_info_score(blob[normal], pred[normal]), float(np.mean(dec < 0))))
        for share in shares:
            lab = labels_for(anomaly, share, seed)
            unl = np.array([l is None for l in lab])
            lab_anom = np.array([l == -1 for l in lab])
            load(x, lab)
            for s in solvers:
                dec, pred = score(SOLVERS[s], True)
                bdec = base[s][0]
                row = (f1((dec < 0) & unl, anomaly & unl), f1((bdec < 0) & unl, anomaly & unl),
                       int(np.sum((dec < 0) & lab_anom)), int(np.sum(lab_anom)),
                       normalized_mutual_info_score(blob[normal], pred[normal]), float(np.mean(dec < 0)))
                res.setdefault((s, share), []).append(row)
                if verbose:
                    print("  %s seed %d %s %g%%: f1u %.3f (base %.3f) out %d/%d nmi %.3f share %.3f"
                          % (shape, seed, s, share * 100, row[0], row[1], row[2], row[3], row[4], row[5]),
                          file=sys.stderr, flush=True)
    return res


def table(shape, res, solvers, shares):
    out = ["| shape | solver | labelled | F1 unl. | gain mean | gain min | lab. out | NMI | out share |",
           "|---|---|---|---|---|---|---|---|---|"]
    for s in solvers:
        a = np.array(res[(s, 0.0)], dtype=float)
        out.append("| %s | %s | none | %.3f | - | - | - | %.3f | %.3f |" % (
            shape, s, a[:, 0].mean(), a[:, 4].mean(), a[:, 5].mean()))
        for share in shares:
            a = np.array(res[(s, share)], dtype=float)
            g = a[:, 0] - a[:, 1]
            out.append("| %s | %s | %g%% | %.3f | %+.3f | %+.3f | %d / %d | %.3f | %.3f |" % (
                shape, s, share * 100, a[:, 0].mean(), g.mean(), g.min(),
                int(a[:, 2].sum()), int(a[:, 3].sum()), a[:, 4].mean(), a[:, 5].mean()))
    return out


def run(out, shapes=SHAPES, solvers=("smo", "bsgd"), seeds=SEEDS, shares=SHARES, verbose=False):
    out.append("## Labelled rows (semi-supervised)\n")
    out.append("Generated: %d rows, 5%% planted anomalies, shapes as in test/bench/labelled.py; a stratified "
               "share of the anomalies and of the normal rows labelled (1 normal, -1 anomaly), the others "
               "NULL; solver options as named, defaults otherwise; data seeds %s. \"F1 unl.\": outlier F1 "
               "(`svc_decision < 0` against the planted anomalies) over the unlabelled rows; \"gain\": its "
               "change against the unlabelled model on the same rows (mean, min over the seeds); \"lab. out\": "
               "labelled anomalies with f < 0; NMI: `svc_predict` against the blobs on the normal rows; "
               "\"out share\": rows with f < 0.\n" % (N_ROWS, ", ".join(map(str, seeds))))
    summary = {}
    for shape in shapes:
        res = measure(shape, solvers, seeds, shares, verbose)
        summary[shape] = res
        out.extend(table(shape, res, solvers, shares))
        out.append("")
        print("\n".join(table(shape, res, solvers, shares)), file=sys.stderr, flush=True)
    psql("DROP TABLE IF EXISTS bench_lab, bench_lab_m;")
    return summary


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--solvers", default="smo,bsgd")
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    ap.add_argument("--shares", default=",".join("%g" % s for s in SHARES))
    args = ap.parse_args()
    lines = []
    run(lines, shapes=args.shapes.split(","), solvers=args.solvers.split(","),
        seeds=tuple(int(s) for s in args.seeds.split(",")),
        shares=[float(s) for s in args.shares.split(",")], verbose=True)
    print("\n".join(lines))
