#!/usr/bin/python3
"""Compare svclust's validity indices (src/core/cvi.c) with scikit-learn.

Builds test/tools/cvi_cli.c with the core's cvi.c and svc_core.c, feeds it data
generated with numpy (fixed seeds), and checks every index against
scikit-learn (purity through contingency_matrix, rand_score,
adjusted_rand_score, normalized_mutual_info_score, davies_bouldin_score,
silhouette_score) and compactness against scipy's pdist, to 1e-9.

    /usr/bin/python3 test/crosscheck/cvi_sklearn_test.py [--cc CC]

Prints one line per failure and "N passed, N failed"; exits 1 on failure.
Needs python3-sklearn (Debian) and a C compiler.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.spatial.distance import pdist
from sklearn.metrics import (adjusted_rand_score, davies_bouldin_score,
                             normalized_mutual_info_score, rand_score,
                             silhouette_score)
from sklearn.metrics.cluster import contingency_matrix

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOL = float(os.environ.get("CVI_TOL", "1e-9"))
EXACT_LIMIT = 20000  # SVC_CVI_EXACT_LIMIT in src/core/cvi.h

passed = 0
failed = 0


def build(cc, outdir):
    """Compile the command-line driver; returns its path."""
    exe = os.path.join(outdir, "cvi_cli")
    core = os.path.join(ROOT, "src", "core")
    cmd = [cc, "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror",
           "-I" + core, os.path.join(ROOT, "test", "tools", "cvi_cli.c"),
           os.path.join(core, "cvi.c"), os.path.join(core, "svc_core.c"),
           "-lm", "-o", exe]
    subprocess.run(cmd, check=True)
    return exe


def run_core(exe, x, cluster, klass=None, limit=None):
    """Run the driver; cluster/klass entries of None are NULL."""
    lines = []
    for i in range(len(x)):
        fields = ["" if cluster[i] is None else str(int(cluster[i]))]
        if klass is not None:
            fields.append("" if klass[i] is None else str(int(klass[i])))
        fields.extend(repr(float(v)) for v in x[i])
        lines.append(",".join(fields))
    args = [exe]
    if klass is not None:
        args.append("--class")
    if limit is not None:
        args += ["--limit", str(limit)]
    text = "".join(line + "\n" for line in lines)
    out = subprocess.run(args, input=text, text=True, capture_output=True,
                         check=True).stdout
    result = {}
    for line in out.splitlines():
        name, value = line.split()
        result[name] = None if value == "null" else float(value)
    return result


def check(case, name, got, want, tol=TOL):
    """Record one comparison; None means 'undefined' on either side."""
    global passed, failed
    if want is None or got is None:
        ok = want is None and got is None
    else:
        ok = abs(got - want) <= tol * max(1.0, abs(want))
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {case}: {name}: got {got}, want {want}")


def compactness(x, labels):
    """The budgeted SVC paper's compactness, straight from its formula."""
    total = 0.0
    for k in np.unique(labels):
        members = x[labels == k]
        if len(members) > 1:
            total += len(members) * pdist(members).mean()
    return total / len(x)


def expected(x, cluster, klass):
    """Every index from numpy/scipy/scikit-learn, None where undefined."""
    rows = len(x)
    assigned = np.array([c is not None for c in cluster], dtype=bool)
    xa = x[assigned]
    ca = np.array([c for c in cluster if c is not None], dtype=np.int64)
    n = len(xa)
    k = len(np.unique(ca))
    want = {
        "n_rows": float(rows),
        "n_clusters": float(k),
        "outlier_share": (rows - n) / rows if rows else None,
        "compactness": compactness(xa, ca) if n else None,
        "davies_bouldin": davies_bouldin_score(xa, ca)
        if 2 <= k <= n - 1 else None,
        "silhouette": silhouette_score(xa, ca)
        if 2 <= k <= n - 1 and n <= EXACT_LIMIT else None,
    }
    if klass is not None:
        both = [(c, j) for c, j in zip(cluster, klass)
                if c is not None and j is not None]
        lc = np.array([c for c, _ in both], dtype=np.int64)
        lj = np.array([j for _, j in both], dtype=np.int64)
        if len(both):
            cm = contingency_matrix(lj, lc)
            want.update({
                "purity": np.amax(cm, axis=0).sum() / cm.sum(),
                "rand": rand_score(lj, lc),
                "adjusted_rand": adjusted_rand_score(lj, lc),
                "nmi": normalized_mutual_info_score(lj, lc),
                "n_classes": float(len(np.unique(lj))),
            })
        else:
            want.update({"purity": None, "rand": None, "adjusted_rand": None,
                         "nmi": None, "n_classes": 0.0})
    return want


def compare(exe, case, x, cluster, klass=None, skip=()):
    """Run one case through the core and check every index."""
    got = run_core(exe, x, cluster, klass)
    want = expected(x, cluster, klass)
    if set(got) != set(want):
        check(case, "index names", 0.0, 1.0)
        print(f"  got {sorted(got)}, want {sorted(want)}")
        return
    for name, value in want.items():
        if name not in skip:
            check(case, name, got[name], value)


def blobs(rng, n, dims, k, spread=1.0):
    """n rows around k centres; returns (x, true class 0..k-1)."""
    centres = rng.uniform(-6, 6, size=(k, dims))
    y = rng.integers(0, k, size=n)
    x = centres[y] + rng.normal(0, spread, size=(n, dims))
    return x, y


def relabel(rng, labels, noise):
    """Flip a share of the labels, then map ids to arbitrary integers."""
    labels = labels.copy()
    flip = rng.random(len(labels)) < noise
    labels[flip] = rng.integers(0, labels.max() + 2, size=flip.sum())
    ids = rng.choice(np.arange(-2**31, 2**31 - 1, 7919), size=labels.max() + 1,
                     replace=False)
    return [int(ids[v]) for v in labels]


def random_cases(exe):
    """Blobs of many shapes, noisy clusterings, arbitrary ids."""
    for seed in range(24):
        rng = np.random.default_rng(seed)
        n = int(rng.choice([7, 40, 150, 600, 2500]))
        dims = int(rng.choice([1, 2, 3, 9]))
        k = int(rng.integers(2, 9))
        x, y = blobs(rng, n, dims, k)
        cluster = relabel(rng, y, float(rng.choice([0.0, 0.1, 0.4])))
        klass = relabel(rng, y, 0.0)
        compare(exe, f"blobs seed={seed} n={n} d={dims} k={k}", x, cluster,
                klass)


def edge_cases(exe):
    """One cluster, singletons, tiny inputs, duplicates, missing values."""
    rng = np.random.default_rng(1000)
    x, y = blobs(rng, 60, 2, 3)

    compare(exe, "one cluster", x, [5] * 60, [int(v) for v in y])
    compare(exe, "one cluster, one class", x, [5] * 60, [9] * 60)
    compare(exe, "one class", x, [int(v) for v in y], [9] * 60)
    compare(exe, "all singletons", x, list(range(60)), [int(v) for v in y])
    compare(exe, "one singleton", x, [0] + [1] * 30 + [2] * 29,
            [int(v) for v in y])
    compare(exe, "perfect", x, [int(v) * 3 - 100 for v in y],
            [int(v) for v in y])
    compare(exe, "single row", x[:1], [1], [1])
    compare(exe, "two rows, two clusters", x[:2], [1, 2], [1, 1])
    compare(exe, "three rows, two clusters", x[:3], [1, 2, 2], [1, 1, 2])
    compare(exe, "no class column", x, [int(v) for v in y])
    compare(exe, "empty", np.zeros((0, 2)), [], [])

    dup = np.repeat(x[:10], 4, axis=0)
    compare(exe, "duplicated rows", dup, [i % 3 for i in range(40)],
            [i % 2 for i in range(40)])
    same = np.zeros((12, 3))
    compare(exe, "all rows equal", same, [i % 3 for i in range(12)],
            [i % 4 for i in range(12)])
    # two clusters with the same centroid: their pair is skipped by DBI
    ring = np.array([[1, 0], [-1, 0], [0, 2], [0, -2], [5, 5], [6, 5]],
                    dtype=float)
    compare(exe, "coinciding centroids", ring, [1, 1, 2, 2, 3, 3],
            [1, 1, 1, 2, 2, 2])

    unassigned = [None if i % 7 == 0 else int(v) for i, v in enumerate(y)]
    compare(exe, "NULL clusters", x, unassigned, [int(v) for v in y])
    unlabelled = [None if i % 5 == 0 else int(v) for i, v in enumerate(y)]
    compare(exe, "NULL classes", x, [int(v) for v in y], unlabelled)
    compare(exe, "all unassigned", x[:5], [None] * 5, [1] * 5)
    compare(exe, "no row has a class", x[:5], [1, 1, 2, 2, 2], [None] * 5)
    compare(exe, "extreme ids", x[:6], [-2**31, 2**31 - 1, 0] * 2,
            [2**31 - 1, -2**31, -2**31, 0, 0, 7])


def large_case(exe):
    """Pair counts past 2^32: the class-based indices stay exact."""
    rng = np.random.default_rng(7)
    n = 120000
    y = rng.integers(0, 6, size=n)
    cluster = relabel(rng, y, 0.3)
    klass = [int(v) for v in y]
    x = y.reshape(-1, 1).astype(float)
    got = run_core(exe, x, cluster, klass, limit=500)
    lc, lj = np.array(cluster), np.array(klass)
    cm = contingency_matrix(lj, lc)
    want = {"purity": np.amax(cm, axis=0).sum() / cm.sum(),
            "rand": rand_score(lj, lc),
            "adjusted_rand": adjusted_rand_score(lj, lc),
            "nmi": normalized_mutual_info_score(lj, lc),
            "n_classes": 6.0, "n_rows": float(n)}
    for name, value in want.items():
        check(f"large n={n}", name, got[name], value)


def sampled_case(exe):
    """Past the exact limit: deterministic, and close to the exact value."""
    rng = np.random.default_rng(11)
    x, y = blobs(rng, 3000, 2, 4, spread=0.6)
    cluster = [int(v) for v in y]
    a = run_core(exe, x, cluster, limit=1000)
    b = run_core(exe, x, cluster, limit=1000)
    check("sampled, repeatable", "silhouette", a["silhouette"],
          b["silhouette"], tol=0.0)
    check("sampled, repeatable", "compactness", a["compactness"],
          b["compactness"], tol=0.0)
    check("sampled, near exact", "silhouette", a["silhouette"],
          silhouette_score(x, y), tol=0.05)
    check("sampled, near exact", "compactness", a["compactness"],
          compactness(x, y), tol=0.05)
    check("sampled, DBI stays exact", "davies_bouldin", a["davies_bouldin"],
          davies_bouldin_score(x, y))
    # many small clusters hold few pairs: compactness stays exact past N
    small = [int(v) for v in np.arange(3000) // 10]
    c = run_core(exe, x, small, limit=1000)
    check("small clusters past the limit", "compactness", c["compactness"],
          compactness(x, np.array(small)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cc", default=os.environ.get("CC", "cc"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(args.cc, tmp)
        random_cases(exe)
        edge_cases(exe)
        large_case(exe)
        sampled_case(exe)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
