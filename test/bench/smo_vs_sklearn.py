#!/usr/bin/python3
"""Training time of svclust's exact solver (src/core/smo.c) against libsvm.

Times test/tools/smo_cli (the solver alone, built from the extension's objects
with its flags: `make test/tools/smo_cli`) against scikit-learn's OneClassSVM
(libsvm inside) on the same rows: 2-D blobs and rings, standard scores,
at 1,000, 5,000 and 20,000 rows, nu 0.1, the same gamma, tolerance 1e-3
and a 100 MB kernel cache for both (our eps is converted from libsvm's
units inside smo_cli).  Our time is svc_smo_solve's as smo_cli measures
it; sklearn's is OneClassSVM.fit's (its input checks are negligible next
to the solve).  Both run single-threaded.  The ratio is of CPU seconds
(the process's CPU time), which a busy machine disturbs less than the wall
clock; wall seconds are shown too.

gamma defaults to what svclust's "auto" chooses in 2-D: 256 / the median
squared distance between rows (over 4,096 random pairs); --gamma-factor F
uses F / median instead.  Prints a markdown table: seconds (median of
--rounds runs, interleaved), the ratio ours/sklearn, iterations and support vectors of
both, and our cache misses.  This is a measurement, not a test.

    /usr/bin/python3 test/bench/smo_vs_sklearn.py [--rows 1000,5000,20000]
        [--sets blobs,rings] [--gamma-factor 256] [--nu 0.1] [--rounds 1]
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import sklearn
from sklearn.svm import OneClassSVM

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def blobs(rng, n):
    centres = rng.uniform(-6, 6, size=(5, 2))
    return centres[rng.integers(0, 5, n)] + rng.normal(0, 1, size=(n, 2))


def rings(rng, n):
    r = rng.choice([1.0, 3.0], n)
    t = rng.uniform(0, 2 * np.pi, n)
    return np.c_[r * np.cos(t), r * np.sin(t)] + rng.normal(0, 0.15, (n, 2))


SETS = {"blobs": blobs, "rings": rings}


def median_sqdist(x, rng):
    n = len(x)
    i = rng.integers(0, n, 4096)
    j = (i + rng.integers(1, n, 4096)) % n
    return float(np.median(((x[i] - x[j]) ** 2).sum(axis=1)))


def run_ours(exe, path, gamma, nu, tol, cache_mb):
    out = subprocess.run([exe, "--gamma", repr(gamma), "--nu", repr(nu),
                          "--eps", repr(tol), "--cache-mb", repr(cache_mb),
                          "--no-f", path],
                         text=True, capture_output=True, check=True).stdout
    return dict(line.split() for line in out.splitlines())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000,5000,20000")
    parser.add_argument("--sets", default="blobs,rings")
    parser.add_argument("--gamma-factor", type=float, default=256.0)
    parser.add_argument("--nu", type=float, default=0.1)
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--cache-mb", type=float, default=100.0)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--cli", help="a built smo_cli (default: make it)")
    args = parser.parse_args()

    exe = args.cli
    if exe is None:
        subprocess.run(["make", "-s", "-C", ROOT, "test/tools/smo_cli"], check=True)
        exe = os.path.join(ROOT, "test", "tools", "smo_cli")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            text=True, capture_output=True).stdout.strip()
    print(f"svclust {commit or '?'}, scikit-learn {sklearn.__version__}, "
          f"{platform.machine()}, nu {args.nu}, tol {args.tol} (libsvm units), "
          f"cache {args.cache_mb:g} MB, gamma {args.gamma_factor:g} / median "
          f"squared distance, median of {args.rounds} round(s)\n")
    print("| set | rows | gamma | ours CPU s | sklearn CPU s | ours/sklearn | ours wall s "
          "| sklearn wall s | ours iter | sklearn iter | ours SV | sklearn SV | ours cache misses |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets.split(","):
            for n in (int(v) for v in args.rows.split(",")):
                rng = np.random.default_rng(n)
                x = SETS[name](rng, n)
                x = (x - x.mean(axis=0)) / x.std(axis=0)
                gamma = args.gamma_factor / median_sqdist(x, rng)
                path = os.path.join(tmp, "rows.csv")
                np.savetxt(path, x, delimiter=",", fmt="%.17g")
                ours, theirs, ours_wall, theirs_wall = [], [], [], []
                for _ in range(args.rounds):
                    got = run_ours(exe, path, gamma, args.nu, args.tol, args.cache_mb)
                    ours.append(float(got["cpu_seconds"]))
                    ours_wall.append(float(got["train_seconds"]))
                    t0, c0 = time.perf_counter(), time.process_time()
                    sk = OneClassSVM(kernel="rbf", gamma=gamma, nu=args.nu, tol=args.tol,
                                     cache_size=args.cache_mb, shrinking=True).fit(x)
                    theirs.append(time.process_time() - c0)
                    theirs_wall.append(time.perf_counter() - t0)
                mo, mt = statistics.median(ours), statistics.median(theirs)
                print(f"| {name} | {n} | {gamma:.4g} | {mo:.3f} | {mt:.3f} | {mo / mt:.2f} "
                      f"| {statistics.median(ours_wall):.3f} "
                      f"| {statistics.median(theirs_wall):.3f} "
                      f"| {got['iterations']} | {int(np.ravel(sk.n_iter_)[0])} "
                      f"| {got['n_sv']} | {len(sk.support_)} | {got['cache_misses']} |")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
