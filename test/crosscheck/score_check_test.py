#!/usr/bin/env python3
"""The scorer (src/core/score.c, score_trajectory.c) against the full kernel sums and trajectories.

Builds test/tools/score_check (make test/tools/score_check: the core with the
extension's flags) and runs it on generated sets (blobs in 2, 3 and 8
dimensions, rings, a set with far outliers) and, when it exists, on every
CSV of the data directory beside the repository (or $SVCLUST_DATA).  Each
set is trained with the default options and scored on its rows and on
random probes around them; a set passes when every cluster equals the full
trajectory's and every f has the full sum's sign.  Ends with
"N passed, N failed".
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def write(path, x):
    with open(path, "w") as fh:
        fh.write(",".join("x%d" % (j + 1) for j in range(x.shape[1])) + ",label\n")
        for row in x:
            fh.write(",".join("%.17g" % v for v in row) + ",0\n")


def generated(tmp):
    rng = np.random.default_rng(5)
    sets = {}
    for d in (2, 3, 8):
        centres = rng.uniform(-10, 10, size=(5, d))
        x = centres[rng.integers(0, 5, 1500)] + rng.normal(size=(1500, d))
        sets["blobs%dd" % d] = x
    t = rng.uniform(0, 2 * np.pi, 1200)
    r = np.where(np.arange(1200) % 2 == 0, 1.0, 3.0) + rng.normal(scale=0.1, size=1200)
    sets["rings"] = np.c_[r * np.cos(t), r * np.sin(t)]
    x = rng.normal(size=(1000, 4))
    x[::50] *= 40.0
    sets["outliers4d"] = x
    paths = []
    for name, x in sets.items():
        p = os.path.join(tmp, name + ".csv")
        write(p, x)
        paths.append(p)
    return paths


def main():
    res = subprocess.run(["make", "-s", "-C", TOP, "test/tools/score_check"], capture_output=True, text=True)
    if res.returncode != 0:
        print(res.stdout + res.stderr)
        print("0 passed, 1 failed")
        return 1
    data = os.environ.get("SVCLUST_DATA", os.path.join(TOP, "..", "shared", "data"))
    with tempfile.TemporaryDirectory() as tmp:
        files = generated(tmp)
        if os.path.isdir(data):
            files += sorted(os.path.join(data, f) for f in os.listdir(data) if f.endswith(".csv"))
        else:
            print("skip data sets: no data directory (%s is absent; set SVCLUST_DATA)" % os.path.normpath(data))
        passed = failed = 0
        for f in files:
            res = subprocess.run([os.path.join(TOP, "test", "tools", "score_check"), "--seeds", "2",
                                  "--probes", "3000", f], capture_output=True, text=True)
            for line in res.stdout.splitlines():
                print(line)
            ok = res.returncode == 0 and " 0 clusters differ, 0 signs differ" in res.stdout
            passed += ok
            failed += not ok
            if not ok:
                print("FAILED: %s %s" % (os.path.basename(f), res.stderr.strip()))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
