#!/usr/bin/python3
"""Compare svclust's exact solver (src/core/smo.c) with libsvm's one-class SVM.

Builds test/tools/smo_cli (`make test/tools/smo_cli`: smo.c, kernel.c and svc_core.c
with the extension's flags), and runs it and scikit-learn's OneClassSVM
(libsvm inside) with the same rows, the same gamma and the same nu, both
to a stopping tolerance of 1e-8 in libsvm's units, on generated sets
(blobs, rings, moons, uniform noise, duplicated rows; 2-10 dimensions,
20-2,000 rows, nu 0.02-0.5, gamma small to large) and, when a data
directory is given, on its CSV files (header x1,...,xd,label; the label
column is dropped).  The rows are standard scores (column mean 0, standard
deviation 1) as svclust's default scale makes them; both solvers get the
same scaled rows.

The two problems are one up to scale (src/core/smo.h): libsvm solves
min 1/2 a'Ka with sum a = nu n, 0 <= a <= 1; smo.c solves
min F(alpha) = alpha'K alpha - sum alpha (K_ii = 1) with sum alpha = 1,
0 <= alpha <= C, and alpha = a / (nu n), C = 1 / (nu n).  Per case:

  objective   1/2 a'Ka of our solution, (F + 1) (nu n)^2 / 2, equals
              libsvm's to 1e-6 relative (libsvm's computed here from
              dual_coef_ and support_vectors_).  F + 1 rather than F: F
              tends to 0 as gamma does, where a relative test of F would
              measure rounding, not the solver.
  F           our reported F equals alpha'K alpha - sum alpha computed
              here from our alpha, to 1e-9 relative to alpha'K alpha.
  sign        sklearn's decision_function is sum a_i K(x_i, x) - rho in
              a's units, positive inside; ours is f = sum alpha_i K - offset
              in alpha's units, positive inside, so f (nu n) is the same
              function.  On every row where libsvm's |value| > 1e-6 the
              signs agree.
  value       max over rows of |f (nu n) - decision_function| <= 1e-5
              max(1, rho): the solvers stop at different points within
              their tolerance, and rho (up to nu n) moves with them.
  converged   our solver reports convergence.

Every generated case runs twice on our side: with smo.c, and with aid.c
(smo_cli --solver aid, aggregation and iterative disaggregation, to a gap
of 1e-12, so that it stops when every cluster of rows passes its check)
under the same checks against the same libsvm solution.

    /usr/bin/python3 test/crosscheck/smo_libsvm_test.py [--data DIR] [--cli PATH]

DIR defaults to $SVCLUST_DATA, else to the benchmark's default data
directory (shared/data beside the repository) when it exists; without one
the data sets are skipped with a message, so a fresh clone passes alone.  Prints one line per case and
"N passed, N failed"; exits 1 on failure.  Needs python3-sklearn (Debian),
a C compiler and pg_config (for the build flags).
"""

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import OneClassSVM

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOL_LIBSVM = 1e-8   # stopping tolerance of both, libsvm's units
OBJ_RTOL = 1e-6
F_RTOL = 1e-9
SIGN_MIN = 1e-6
VALUE_TOL = 1e-5

passed = 0
failed = 0


def build():
    """Build the driver with the Makefile; returns its path."""
    subprocess.run(["make", "-s", "-C", ROOT, "test/tools/smo_cli"], check=True)
    return os.path.join(ROOT, "test", "tools", "smo_cli")


def run_core(exe, x, gamma, nu, tol, solver="smo"):
    """Run the driver on x; returns (scalars dict, f array, alpha array)."""
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as fh:
        np.savetxt(fh, x, delimiter=",", fmt="%.17g")
        path = fh.name
    try:
        # aid to a gap below any the checks see: it stops when every
        # cluster passes, at the solver's own tolerance
        extra = ["--solver", "aid", "--aid-gap", "1e-12"] if solver == "aid" else []
        out = subprocess.run([exe, "--gamma", repr(gamma), "--nu", repr(nu),
                              "--eps", repr(tol), "--alpha"] + extra + [path],
                             text=True, capture_output=True, check=True).stdout
    finally:
        os.unlink(path)
    scalars, f, alpha = {}, [], []
    for line in out.splitlines():
        if line.startswith("round "):
            continue
        name, value = line.split()
        if name == "f":
            f.append(float(value))
        elif name == "alpha":
            alpha.append(float(value))
        else:
            scalars[name] = float(value)
    return scalars, np.array(f), np.array(alpha)


def check(case, name, ok, detail):
    """Record one assertion."""
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {case}: {name}: {detail}")


def standard(x):
    """Standard scores per column (a constant column stays 0)."""
    sd = x.std(axis=0)
    sd[sd == 0] = 1.0
    return (x - x.mean(axis=0)) / sd


def median_sqdist(x, rng):
    """Median squared distance over (up to 4,096 random) pairs."""
    n = len(x)
    if n * (n - 1) // 2 <= 4096:
        i, j = np.triu_indices(n, 1)
    else:
        i = rng.integers(0, n, 4096)
        j = (i + rng.integers(1, n, 4096)) % n
    d = ((x[i] - x[j]) ** 2).sum(axis=1)
    m = np.median(d)
    return m if m > 0 else (d[d > 0].mean() if (d > 0).any() else 1.0)


def compare(exe, case, x, gamma, nu, solver="smo"):
    """Solve with both, check, print one line."""
    n = len(x)
    nul = nu * n
    t0 = time.perf_counter()
    sk = OneClassSVM(kernel="rbf", gamma=gamma, nu=nu, tol=TOL_LIBSVM,
                     shrinking=True, cache_size=100).fit(x)
    t_sk = time.perf_counter() - t0
    a = sk.dual_coef_.ravel()
    sv = sk.support_vectors_
    obj_sk = 0.5 * a @ rbf_kernel(sv, sv, gamma=gamma) @ a
    dec_sk = sk.decision_function(x)

    got, f, alpha = run_core(exe, x, gamma, nu, TOL_LIBSVM, solver)
    nz = alpha > 0
    quad = alpha[nz] @ rbf_kernel(x[nz], x[nz], gamma=gamma) @ alpha[nz]
    obj_ours = got["objective_libsvm"]
    rel = abs(obj_ours - obj_sk) / abs(obj_sk)
    scaled = f * nul
    mask = np.abs(dec_sk) > SIGN_MIN
    bad = int(np.sum(np.sign(scaled[mask]) != np.sign(dec_sk[mask])))
    vdiff = float(np.max(np.abs(scaled - dec_sk)))
    vtol = VALUE_TOL * max(1.0, abs(sk.intercept_[0]))

    check(case, "converged", got["converged"] == 1,
          f"gap {got['gap']:.3g} after {got['iterations']:.0f} iterations")
    check(case, "objective", rel <= OBJ_RTOL,
          f"1/2 a'Ka ours {obj_ours:.17g}, libsvm {obj_sk:.17g} (rel {rel:.3g})")
    check(case, "F", abs(got["objective"] - (quad - alpha.sum())) <= F_RTOL * quad,
          f"reported {got['objective']:.17g}, from alpha {quad - alpha.sum():.17g}")
    check(case, "sign", bad == 0,
          f"{bad} of {int(mask.sum())} rows with |f| > {SIGN_MIN} differ in sign")
    check(case, "value", vdiff <= vtol,
          f"max |f nu n - decision| {vdiff:.3g}")
    print(f"{'ok  ' if rel <= OBJ_RTOL and bad == 0 and vdiff <= vtol else 'FAIL'} "
          f"{case}: n={n} d={x.shape[1]} nu={nu:g} gamma={gamma:.4g} "
          f"obj rel {rel:.1e}, sign {bad}/{int(mask.sum())} differ, "
          f"max |df| {vdiff:.1e}, rho {got['rho']:.6g}/{-sk.intercept_[0]:.6g}, "
          f"sv {got['n_sv']:.0f}/{len(a)}, iter {got['iterations']:.0f}/{int(np.ravel(sk.n_iter_)[0])}, "
          f"s {got['train_seconds']:.3f}/{t_sk:.3f}")
    sys.stdout.flush()


def embed(rng, x2, dims, noise=0.1):
    """Pad 2-D rows with Gaussian noise columns up to dims."""
    if dims <= 2:
        return x2
    return np.hstack([x2, rng.normal(0, noise, size=(len(x2), dims - 2))])


def blobs(rng, n, dims, k=4):
    centres = rng.uniform(-6, 6, size=(k, dims))
    return centres[rng.integers(0, k, n)] + rng.normal(0, 1, size=(n, dims))


def rings(rng, n, dims):
    r = rng.choice([1.0, 3.0], n)
    t = rng.uniform(0, 2 * np.pi, n)
    x2 = np.c_[r * np.cos(t), r * np.sin(t)] + rng.normal(0, 0.15, (n, 2))
    return embed(rng, x2, dims)


def moons(rng, n, dims):
    t = rng.uniform(0, np.pi, n)
    up = rng.random(n) < 0.5
    x2 = np.where(up[:, None], np.c_[np.cos(t), np.sin(t)],
                  np.c_[1 - np.cos(t), 0.5 - np.sin(t)])
    return embed(rng, x2 + rng.normal(0, 0.08, (n, 2)), dims)


def uniform(rng, n, dims):
    return rng.uniform(-1, 1, size=(n, dims))


def duplicates(rng, n, dims):
    base = blobs(rng, max(2, n // 5), dims, 3)
    return base[rng.integers(0, len(base), n)]


GENERATORS = {"blobs": blobs, "rings": rings, "moons": moons,
              "uniform": uniform, "duplicates": duplicates}

# (generator, n, dims, nu, gamma as a multiple of 1 / median squared distance)
CASES = [
    ("blobs", 20, 2, 0.5, 1.0),
    ("blobs", 20, 2, 0.02, 1.0),       # nu n < 1: one row holds all of a
    ("blobs", 300, 2, 0.1, 256.0),     # svclust's automatic gamma in 2-D
    ("blobs", 1000, 5, 0.05, 4.0),
    ("blobs", 2000, 2, 0.1, 64.0),
    ("rings", 200, 2, 0.2, 16.0),
    ("rings", 800, 3, 0.1, 1.0),
    ("rings", 1500, 2, 0.02, 128.0),
    ("moons", 100, 2, 0.3, 0.01),      # very wide kernel: K near 1
    ("moons", 600, 4, 0.1, 32.0),
    ("moons", 2000, 2, 0.05, 8.0),
    ("uniform", 50, 10, 0.5, 2.0),
    ("uniform", 500, 2, 0.1, 1000.0),  # very narrow kernel: K near I
    ("uniform", 1200, 10, 0.2, 8.0),
    ("duplicates", 60, 2, 0.1, 4.0),
    ("duplicates", 400, 3, 0.3, 64.0),
    ("duplicates", 1000, 2, 0.02, 1.0),
]


def generated(exe):
    for seed, (gen, n, dims, nu, mult) in enumerate(CASES):
        rng = np.random.default_rng(1000 + seed)
        x = standard(GENERATORS[gen](rng, n, dims))
        gamma = mult / median_sqdist(x, rng)
        compare(exe, f"{gen} seed={1000 + seed}", x, gamma, nu)
        compare(exe, f"{gen} seed={1000 + seed} solver aid", x, gamma, nu, "aid")


def datasets(exe, data):
    """The CSV sets of data (label column dropped), two settings each."""
    if not data or not os.path.isdir(data):
        print(f"skip data sets: no data directory "
              f"({'set SVCLUST_DATA or --data' if not data else data + ' is absent'})")
        return
    files = sorted(glob.glob(os.path.join(data, "*.csv")))
    if not files:
        print(f"skip data sets: no *.csv in {data}")
    for path in files:
        raw = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
        x = standard(raw[:, :-1])
        rng = np.random.default_rng(7)
        med = median_sqdist(x, rng)
        auto = 256.0 / med * (2.0 / x.shape[1] if x.shape[1] > 2 else 1.0)
        name = os.path.splitext(os.path.basename(path))[0]
        compare(exe, f"{name} auto gamma", x, auto, 0.1)
        compare(exe, f"{name} wide", x, 4.0 / med, 0.5)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    beside = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                           "..", "..", "..", "shared", "data"))
    parser.add_argument("--data", default=os.environ.get("SVCLUST_DATA")
                        or (beside if os.path.isdir(beside) else ""))
    parser.add_argument("--cli", help="a built smo_cli (default: make it)")
    args = parser.parse_args()
    exe = args.cli or build()
    generated(exe)
    datasets(exe, args.data)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
