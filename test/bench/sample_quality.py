#!/usr/bin/env python3
"""svclust on large labelled data: what a smaller reservoir ("sample") costs.

svc_train fits on a uniform reservoir of at most `sample` rows (default
10,000).  A smaller sample trains faster, but a cluster with few rows may get
too few of them into the sample to survive, and thin shapes may lose detail.
This section measures that on generated, seeded data (numpy, loaded with
COPY) and on the nine CSV sets repeated:

  gauss20    1,000,000 rows in 8-D: 20 Gaussian clusters (sd 1), centres
             drawn in [-15, 15]^8 at least 8 apart, imbalanced sizes from
             20% of the rows down to 0.8, 0.5, 0.3 and 0.2%;
  shapes2d   500,000 rows in 2-D: two interleaved moons, two concentric
             rings, a 2-arm spiral (each part its own class) and a small
             dense blob of 0.3% of the rows, each shape in its own place,
             with Gaussian noise;
  <set>_x100 every *.csv of --data (as bench.py reads them) repeated 100
             times, each copy jittered uniformly within +-2% of each
             feature's range, labels kept (skipped with a note when the
             directory has no CSV).

For each dataset, each sample in 10000, 5000, 3000 and seeds 1, 2, 3
(options {"sample": N, "seed": s}, the rest default), serially: train with
svc_train(f, opts) over the whole table (timed), then predict every row with
svc_predict and count (class, cluster) pairs in SQL.  From that contingency
table: NMI and ARI (scikit-learn, on every row; every row has a cluster, the
rows outside the domain included, as in bench.py's svc_assign runs), the
number of clusters found, and small-cluster recall: for each class with < 1%
of the rows, the share of its rows in a predicted cluster whose majority is
that class (mean and minimum over the small classes).  Every model is scored
twice: at its own cut, and recut with {"min_cluster_share": 0} (svc_recut;
the default 0.03 merges every cluster under 3% of the sample's rows whatever
the sample's size, which hides what the sample itself keeps of a small
cluster), the recut scored on a uniform subsample of 50,000 rows to keep
the section near 10 minutes.  For gauss20 the table
also gives ceilings: every row at its nearest true centre, and k-means
(k = 20) fitted on 100,000 rows.

Run it alone through run.sh:  bash test/bench/run.sh --only sample
(--scale 0.05 shrinks every dataset for a quick try; --data DIR.)
"""
import csv
import glob
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgrun import log, median, psql  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score  # noqa: E402

SAMPLES = (10000, 5000, 3000)
SEEDS = (1, 2, 3)
SERIAL = "SET max_parallel_workers_per_gather = 0;\n"
TABLE = "bench_sq"
# The second cut of every model: no floor on a cluster's share of the sample
# (the default min_cluster_share 0.03 merges every cluster under 3% of the
# sample's rows, whatever the sample's size), so that what the sample itself
# keeps of the small clusters shows.
RECUT = '{"min_cluster_share": 0}'
# The recut is scored on this many rows (the table's rows are in a random
# order, so its first ids are a uniform subsample): svc_predict follows a
# trajectory per row in the 2-D sets (~45 us a row), and every row twice
# would take the section past 10 minutes.
RECUT_ROWS = 50000

# gauss20: shares of the rows, in percent (16 large clusters, 4 under 1%)
GAUSS_SHARES = [20, 12, 10, 8, 7, 6, 5, 5, 4.7, 4, 4, 3, 3, 2.5, 2, 2, 0.8, 0.5, 0.3, 0.2]


def gauss20(n, seed=20):
    rng = np.random.default_rng(seed)
    centres = []
    while len(centres) < len(GAUSS_SHARES):
        c = rng.uniform(-15, 15, 8)
        if all(np.linalg.norm(c - o) >= 8 for o in centres):
            centres.append(c)
    centres = np.array(centres)
    sizes = np.floor(np.array(GAUSS_SHARES) / 100.0 * n).astype(int)
    sizes[0] += n - sizes.sum()
    y = np.repeat(np.arange(len(sizes)), sizes)
    x = centres[y] + rng.normal(0, 1, size=(n, 8))
    return x, y, centres


def shapes2d(n, seed=2):
    """Moons, rings, spiral arms and a blob, each a class; placed apart."""
    rng = np.random.default_rng(seed)
    n_blob = max(1, int(round(0.003 * n)))
    n_moon = n_ring = int(0.15 * n)
    n_arm = (n - n_blob - 2 * n_moon - 2 * n_ring) // 2
    n_arm2 = n - n_blob - 2 * n_moon - 2 * n_ring - n_arm
    parts = []
    # two interleaved moons (radius 1), noise sd 0.08, around (0, 0)
    t = rng.uniform(0, math.pi, n_moon)
    parts.append(np.c_[np.cos(t), np.sin(t)] + rng.normal(0, 0.08, (n_moon, 2)))
    t = rng.uniform(0, math.pi, n_moon)
    parts.append(np.c_[1 - np.cos(t), 0.5 - np.sin(t)] + rng.normal(0, 0.08, (n_moon, 2)))
    # two concentric rings (radius 1 and 2.2), noise sd 0.08, around (7, 0)
    for r in (1.0, 2.2):
        t = rng.uniform(0, 2 * math.pi, n_ring)
        parts.append(np.c_[7 + r * np.cos(t), r * np.sin(t)] + rng.normal(0, 0.08, (n_ring, 2)))
    # a 2-arm spiral (Archimedean, 1.5 turns, the arms pi apart), around (1, 8)
    for k, m in ((0, n_arm), (1, n_arm2)):
        s = np.sqrt(rng.uniform(0, 1, m))          # even density along the arm
        th = 0.5 + s * 3 * math.pi
        r = 0.35 * th
        parts.append(np.c_[1 + r * np.cos(th + k * math.pi), 8 + r * np.sin(th + k * math.pi)]
                     + rng.normal(0, 0.08, (m, 2)))
    # a small dense blob at (7, 6)
    parts.append(np.array([7.0, 6.0]) + rng.normal(0, 0.15, (n_blob, 2)))
    x = np.vstack(parts)
    y = np.repeat(np.arange(len(parts)), [len(p) for p in parts])
    return x, y


def read_csv(path):
    """A CSV as bench.py reads it (header x1,...,xd,label; classes by the
    label's text, as its dense_rank does)."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    header = [h.strip().lower() for h in rows[0]]
    if len(header) < 2 or header[-1] != "label":
        raise ValueError("no header x1,...,xd,label")
    body = [r for r in rows[1:] if r]
    x = np.array([[float(v) for v in r[:-1]] for r in body])
    names = sorted({r[-1] for r in body})
    y = np.array([names.index(r[-1]) for r in body])
    return x, y


def repeated(x, y, times, seed, jitter=0.02):
    rng = np.random.default_rng(seed)
    span = x.max(axis=0) - x.min(axis=0)
    xs = np.tile(x, (times, 1))
    xs = xs + rng.uniform(-1, 1, xs.shape) * jitter * span
    return xs, np.tile(y, times)


def load(x, y):
    """Into bench_sq(id, f, label), rows in a seeded random order (the
    reservoir sees them as a table scan delivers them)."""
    order = np.random.default_rng(7).permutation(len(y))
    x, y = x[order], y[order]
    fmt = "\t".join(["%d", "{" + ",".join(["%.9g"] * x.shape[1]) + "}", "%d"])
    buf = "\n".join(fmt % ((i,) + tuple(r) + (int(c),)) for i, (r, c) in enumerate(zip(x.tolist(), y)))
    psql("DROP TABLE IF EXISTS %(t)s, %(t)s_m;\n"
         "CREATE TABLE %(t)s (id int, f float8[], label int);\n"
         "COPY %(t)s FROM STDIN;\n%(b)s\n\\.\n"
         "VACUUM (FREEZE, ANALYZE) %(t)s;\n" % {"t": TABLE, "b": buf})


def scan_seconds(reps=3):
    lines, _ = psql(SERIAL + "\n".join(["SELECT avg(f[1]) FROM %s;" % TABLE] * reps), timing=True)
    return median([float(l.split()[1]) / 1000.0 for l in lines if l.startswith("Time: ")])


def train_and_count(opts):
    """Train (timed, serial), predict every row at the model's own cut and
    at RECUT; return (seconds, {cut: contingency rows [(class, cluster,
    count)]})."""
    lines, _ = psql(SERIAL + """
\\timing on
CREATE TABLE %(t)s_m AS SELECT svc_train(f, '%(o)s') AS m FROM %(t)s;
\\timing off
SELECT 'd', label, svc_predict(m, f), count(*) FROM %(t)s, %(t)s_m GROUP BY 2, 3;
SELECT 'r', label, svc_predict(r, f), count(*)
FROM %(t)s, (SELECT svc_recut(m, '%(r)s') AS r FROM %(t)s_m) q WHERE id < %(n)d GROUP BY 2, 3;
DROP TABLE %(t)s_m;
""" % {"t": TABLE, "o": opts, "r": RECUT, "n": RECUT_ROWS})
    secs = None
    cont = {"d": [], "r": []}
    for l in lines:
        if l.startswith("Time: "):
            secs = float(l.split()[1]) / 1000.0
            continue
        p = l.split("\t")
        cont[p[0]].append((int(p[1]), -1 if p[2] == "" else int(p[2]), int(p[3])))
    return secs, cont


def scores(cont):
    """NMI, ARI, clusters found, small-cluster recalls from (class, cluster, count)."""
    cls = np.array([c[0] for c in cont])
    clu = np.array([c[1] for c in cont])
    cnt = np.array([c[2] for c in cont])
    truth = np.repeat(cls, cnt)
    pred = np.repeat(clu, cnt)
    nmi = normalized_mutual_info_score(truth, pred)
    ari = adjusted_rand_score(truth, pred)
    return (nmi, ari, len(set(clu.tolist()))) + small_recall(cls, clu, cnt)


def small_recall(cls, clu, cnt, limit=0.01):
    total = cnt.sum()
    size = {}
    for a, c in zip(cls, cnt):
        size[a] = size.get(a, 0) + c
    small = [a for a in size if size[a] < limit * total]
    if not small:
        return (None, None)
    major = {}
    for k in set(clu.tolist()):
        m = clu == k
        major[k] = cls[m][np.argmax(cnt[m])]
    rec = []
    for a in small:
        hit = sum(c for x, k, c in zip(cls, clu, cnt) if x == a and major[k] == a)
        rec.append(hit / size[a])
    return (float(np.mean(rec)), float(np.min(rec)))


def ceiling_rows(x, y, centres):
    """NMI/ARI of the nearest true centre and of k-means (k = 20) on gauss20."""
    from sklearn.cluster import KMeans
    near = np.empty(len(y), dtype=int)
    for i in range(0, len(y), 100000):
        d = ((x[i:i + 100000, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        near[i:i + 100000] = d.argmin(axis=1)
    rng = np.random.default_rng(3)
    fit_rows = rng.choice(len(y), size=min(100000, len(y)), replace=False)
    km = KMeans(n_clusters=len(centres), n_init=3, random_state=0).fit(x[fit_rows])
    kp = km.predict(x)
    out = []
    for name, pred in (("nearest true centre", near), ("k-means, k = 20 (fit on 100k rows)", kp)):
        cont = {}
        for a, k in zip(y.tolist(), pred.tolist()):
            cont[(a, k)] = cont.get((a, k), 0) + 1
        s = scores([(a, k, c) for (a, k), c in cont.items()])
        out.append((name, s))
    return out


def datasets(data_dir, scale, times):
    """[(name, description, loader)] with loader() -> (x, y, extra)."""
    out = []
    n1 = max(2000, int(1000000 * scale))
    out.append(("gauss20", "%d x 8, 20 Gaussian clusters, 4 under 1%%" % n1,
                lambda: gauss20(n1)))
    n2 = max(2000, int(500000 * scale))
    out.append(("shapes2d", "%d x 2, moons, rings, 2-arm spiral, blob of 0.3%%" % n2,
                lambda: shapes2d(n2) + (None,)))
    files = sorted(glob.glob(os.path.join(data_dir, "*.csv"))) if data_dir else []
    t = max(1, int(round(times * scale)))
    for i, path in enumerate(files):
        name = os.path.splitext(os.path.basename(path))[0].lower()

        def loader(path=path, i=i):
            x, y = read_csv(path)
            return repeated(x, y, t, 100 + i) + (None,)
        out.append(("%s_x%d" % (name, t), None, loader))
    return out, files


def fmt(v, p=3):
    return "-" if v is None or v != v else "%.*f" % (p, v)


def run(out, data_dir=None, scale=1.0, times=100, samples=SAMPLES, seeds=SEEDS):
    started = time.time()
    sets, files = datasets(data_dir, scale, times)
    out.append("## Sample size on large labelled data\n")
    out.append("Serial `svc_train(f, '{\"sample\": N, \"seed\": s}')` (other options default) over the whole "
               "table, then `svc_predict` on every row. NMI and ARI (scikit-learn) against the classes on "
               "every row (rows outside the domain keep their cluster, as in the other sections); *NMI "
               "worst*: the lowest of the seeds; *clusters*: distinct predicted clusters over the rows "
               "(mean over seeds, and the range); *small recall*: for each class under 1%% of the rows, the "
               "share of its rows in a predicted cluster whose majority is that class, mean over those "
               "classes (mean over seeds) and the lowest class in any seed; *train s*: mean over seeds, "
               "with the serial `SELECT avg(f[1])` over the same table. Seeds %s. Data scale %g.\n"
               % (", ".join(map(str, seeds)), scale))
    if not files:
        out.append("No CSV files in `%s`: the repeated nine sets skipped.\n" % data_dir)
    head = ("| dataset | rows | classes | sample | NMI | NMI worst | ARI | clusters | small recall mean | "
            "small recall min | train s | scan s |")
    tables = {"d": ["### The models' own cut (all options default but sample and seed)\n", head,
                    "|---|---|---|---|---|---|---|---|---|---|---|---|"],
              "r": ["### The same models recut with `%s`, scored on a uniform subsample of %d rows "
                    "(all rows when fewer)\n" % (RECUT, RECUT_ROWS), head,
                    "|---|---|---|---|---|---|---|---|---|---|---|---|"]}
    notes = []
    for name, desc, loader in sets:
        t0 = time.time()
        x, y, extra = loader()
        load(x, y)
        scan = scan_seconds()
        log("sample quality: %s, %d rows, loaded in %.0f s" % (name, len(y), time.time() - t0))
        classes = len(set(y.tolist()))
        share = np.bincount(y) / float(len(y))
        small = sorted(share[(share > 0) & (share < 0.01)], reverse=True)
        notes.append("%s: %s%s." % (name, desc + "; " if desc else "",
                                     "classes under 1%%: %s" % ", ".join("%.2f%%" % (100 * v) for v in small)
                                     if small else "no class under 1%"))
        if extra is not None:
            for cname, sc in ceiling_rows(x, y, extra):
                notes.append("%s ceiling, %s: NMI %.3f, ARI %.3f, %d clusters, small recall %s / %s." % (
                    name, cname, sc[0], sc[1], sc[2], fmt(sc[3]), fmt(sc[4])))
        del x
        for n in samples:
            t0 = time.time()
            res = {"d": [], "r": []}
            for sd in seeds:
                secs, cont = train_and_count('{"sample": %d, "seed": %d}' % (n, sd))
                for cut in res:
                    res[cut].append((secs,) + scores(cont[cut]))
            for cut, rs in res.items():
                nmis = [r[1] for r in rs]
                sm = [r[4] for r in rs if r[4] is not None]
                smin = [r[5] for r in rs if r[5] is not None]
                ks = [r[3] for r in rs]
                tables[cut].append("| %s | %d | %d | %d | %s | %s | %s | %.1f (%d-%d) | %s | %s | %s | %s |" % (
                    name, len(y), classes, n, fmt(np.mean(nmis)), fmt(min(nmis)),
                    fmt(np.mean([r[2] for r in rs])), np.mean(ks), min(ks), max(ks),
                    fmt(np.mean(sm) if sm else None), fmt(min(smin) if smin else None),
                    fmt(np.mean([r[0] for r in rs])), fmt(scan)))
                print(tables[cut][-1], flush=True)
            log("sample quality: %s sample %d in %.0f s" % (name, n, time.time() - t0))
    for cut in ("d", "r"):
        out.extend(tables[cut])
        out.append("")
    psql("DROP TABLE IF EXISTS %(t)s, %(t)s_m;" % {"t": TABLE})
    out.extend("- " + s for s in notes)
    out.append("\nSection time: %.0f s.\n" % (time.time() - started))
    return out


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None, help="directory of CSV datasets")
    ap.add_argument("--scale", type=float, default=1.0, help="row-count factor (e.g. 0.05)")
    a = ap.parse_args()
    lines = []
    run(lines, a.data, a.scale)
    print("\n".join(lines))
