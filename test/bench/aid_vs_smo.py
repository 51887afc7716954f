#!/usr/bin/python3
"""The solver "aid" against "smo" as the rows grow (src/core/aid.c, smo.c).

Times test/tools/smo_cli (the solvers alone, built from the extension's objects
with its flags: `make test/tools/smo_cli`) with --solver smo and --solver aid on
the same rows at 5,000, 10,000, 20,000 and 40,000 rows of two generated
sets, standard scores:

  clustered   2-D: 5 Gaussian blobs (seeded centres, sd 1);
  shuttle     9-D, Shuttle-like: one dominant class (78% of the rows) and
              six small ones (16%, 4.6%, 0.7%, 0.35%, 0.15%, 0.05%), each a
              Gaussian with its own centre and per-column spread, rounded
              to integers as Shuttle's columns are (so rows repeat);
  blobs3d     3-D: 5 Gaussian blobs (centres in [-6, 6]^3, sd 1), only
              with --sets.

Options are svclust's defaults for the exact solvers: nu 0.05
(outlier_fraction), tol 1e-3 in libsvm's units, aid_gap 1e-4, a 100 MB
cache, and gamma as "auto" chooses it (256 / the median squared distance
between rows over 4,096 random pairs, times 2/d above two dimensions);
--gamma-factor F scales that gamma.  Seconds are CPU seconds of the solve
alone (median of --rounds runs, interleaved).  Per size: smo's seconds,
iterations and support vectors; aid's seconds, rounds, the clusters it
solved over in each round (the aggregated rows), the share of rows still
in clusters of two or more at the end, its final gap, the objective's
relative difference to smo's, (F_aid - F_smo) / |F_smo| (>= 0 up to smo's
own tolerance: aid stops at a gap, from above), and the time ratio; then
the same with aid_gap 1e-9 ("exact": it runs until every cluster passes
its check at tol, so its support vectors are smo's).
--init-sweep adds, at one size, the starting groupings (k-means at n/64,
n/16 and n/4 clusters, the grid at n/16 and at n/64, the default).  This is a measurement, not
a test.

    /usr/bin/python3 test/bench/aid_vs_smo.py [--rows 5000,10000,20000,40000]
        [--sets clustered,shuttle] [--gamma-factor 1] [--rounds 1]
        [--init-sweep 20000] [--out FILE]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def clustered(rng, n):
    centres = rng.uniform(-6, 6, size=(5, 2))
    return centres[rng.integers(0, 5, n)] + rng.normal(0, 1, size=(n, 2))


SHUTTLE_SHARES = [0.786, 0.155, 0.046, 0.0065, 0.0035, 0.0015, 0.0005]


def shuttle(rng, n):
    shares = np.array(SHUTTLE_SHARES) / sum(SHUTTLE_SHARES)
    label = rng.choice(len(shares), size=n, p=shares)
    centres = rng.uniform(-40, 40, size=(len(shares), 9))
    spread = rng.uniform(1, 12, size=(len(shares), 9))
    return np.round(centres[label] + rng.normal(0, 1, size=(n, 9)) * spread[label])


def blobs3d(rng, n):
    centres = rng.uniform(-6, 6, size=(5, 3))
    return centres[rng.integers(0, 5, n)] + rng.normal(0, 1, size=(n, 3))


SETS = {"clustered": clustered, "shuttle": shuttle, "blobs3d": blobs3d}


def auto_gamma(x, rng):
    n, d = x.shape
    i = rng.integers(0, n, 4096)
    j = (i + rng.integers(1, n, 4096)) % n
    med = float(np.median(((x[i] - x[j]) ** 2).sum(axis=1)))
    g = 256.0 / med
    return g * 2.0 / d if d > 2 else g


def run_cli(exe, path, gamma, solver, extra=()):
    cmd = [exe, "--gamma", repr(gamma), "--nu", "0.05", "--no-f", "--solver", solver] + list(extra) + [path]
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    vals, rounds = {}, []
    for line in p.stdout.splitlines():
        f = line.split()
        if f[0] == "round":
            rounds.append(int(f[2]))
        elif len(f) == 2:
            vals[f[0]] = float(f[1])
    vals["round_sizes"] = rounds
    return vals


def median_run(runs, key):
    return statistics.median(r[key] for r in runs)


def measure(rows, sets, gamma_factor=1.0, rounds=1, init_sweep=0):
    """The tables as markdown lines (printed as they come)."""
    subprocess.run(["make", "-s", "-C", ROOT, "test/tools/smo_cli"], check=True)
    exe = os.path.join(ROOT, "test", "tools", "smo_cli")
    out = []
    out.append("gamma = %g x auto; nu 0.05, tol 1e-3, aid_gap 1e-4, cache 100 MB; CPU seconds, "
               "median of %d.\n" % (gamma_factor, rounds))
    out.append("| set | rows | smo s | smo iter | smo SVs | aid s | aid/smo | rounds | clusters per round "
               "| share aggregated | aid gap | objective rel diff | aid SVs "
               "| exact: aid s | aid/smo | rounds | final clusters | rel diff | SVs |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(out), flush=True)
    tmp = tempfile.mkdtemp(prefix="aid_bench_")
    files = {}
    for name in sets.split(","):
        for n in [int(v) for v in rows.split(",")]:
            rng = np.random.default_rng(1000 + n)
            x = SETS[name](rng, n)
            x = (x - x.mean(0)) / np.where(x.std(0) > 0, x.std(0), 1)
            gamma = auto_gamma(x, rng) * gamma_factor
            path = os.path.join(tmp, "%s_%d.csv" % (name, n))
            np.savetxt(path, x, delimiter=",", fmt="%.17g")
            files[(name, n)] = (path, gamma)
            smo, aid, exact = [], [], []
            for _ in range(rounds):
                smo.append(run_cli(exe, path, gamma, "smo"))
                aid.append(run_cli(exe, path, gamma, "aid"))
                exact.append(run_cli(exe, path, gamma, "aid", ["--aid-gap", "1e-9"]))
            s, a, e = smo[0], aid[0], exact[0]
            st, at = median_run(smo, "cpu_seconds"), median_run(aid, "cpu_seconds")
            et = median_run(exact, "cpu_seconds")
            rel = (a["objective"] - s["objective"]) / abs(s["objective"])
            erel = (e["objective"] - s["objective"]) / abs(s["objective"])
            line = ("| %s | %s | %.2f | %s | %s | %.2f | %.2f | %d | %s | %.2f | %.1e | %.1e | %s "
                    "| %.2f | %.2f | %d | %s | %.1e | %s |") % (
                name, format(n, ","), st, format(int(s["iterations"]), ","), format(int(s["n_sv"]), ","),
                at, at / st, int(a["rounds"]), " → ".join(format(v, ",") for v in a["round_sizes"]),
                a["share_aggregated"], a["aid_gap"], rel, format(int(a["n_sv"]), ","),
                et, et / st, int(e["rounds"]), format(int(e["final_clusters"]), ","), erel,
                format(int(e["n_sv"]), ","))
            out.append(line)
            print(line, flush=True)
    if init_sweep:
        n = init_sweep
        out.append("\nStarting groupings at %s rows (aid's seconds, rounds, clusters per round):\n"
                   % format(n, ","))
        out.append("| set | grouping | aid s | rounds | clusters per round | objective rel diff |")
        out.append("|---|---|---|---|---|---|")
        print("\n".join(out[-3:]), flush=True)
        for name in sets.split(","):
            if (name, n) not in files:
                continue
            path, gamma = files[(name, n)]
            s = run_cli(exe, path, gamma, "smo")
            for label, extra in [("k-means n/64", ["--aid-init", "kmeans"]),
                                 ("k-means n/16", ["--aid-init", "kmeans", "--aid-clusters", str(n // 16)]),
                                 ("k-means n/4", ["--aid-init", "kmeans", "--aid-clusters", str(n // 4)]),
                                 ("grid n/16", ["--aid-clusters", str(n // 16)]),
                                 ("grid n/64 (default)", [])]:
                a = run_cli(exe, path, gamma, "aid", extra)
                line = "| %s | %s | %.2f | %d | %s | %.1e |" % (
                    name, label, a["cpu_seconds"], int(a["rounds"]),
                    " → ".join(format(v, ",") for v in a["round_sizes"]),
                    (a["objective"] - s["objective"]) / abs(s["objective"]))
                out.append(line)
                print(line, flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 1)[1])
    ap.add_argument("--rows", default="5000,10000,20000,40000")
    ap.add_argument("--sets", default="clustered,shuttle")
    ap.add_argument("--gamma-factor", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--init-sweep", type=int, default=0,
                    help="rows at which to compare the starting groupings (0: none)")
    ap.add_argument("--out", default=None, help="append the markdown tables to this file")
    args = ap.parse_args()
    out = measure(args.rows, args.sets, args.gamma_factor, args.rounds, args.init_sweep)
    if args.out:
        with open(args.out, "a") as fh:
            fh.write("\n".join(out) + "\n\n")


if __name__ == "__main__":
    sys.exit(main())
