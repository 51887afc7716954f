#!/usr/bin/python3
"""The solver "incremental" against "smo", and a sliding window (src/core/incremental.c).

Runs test/tools/incr_bench (built from the extension's core objects with its
flags: `make test/tools/incr_bench`) on generated rows (5 Gaussian blobs in 2-D,
sd 1), nu 0.05, gamma 1:

  fit      both solvers on the same N rows (500, 1,000, 2,000): CPU seconds
           of each (smo at eps 1e-9 in libsvm's units), the incremental
           path's steps, its margin and error sets at the end, the largest
           |f_incremental - f_smo| over the rows and the final KKT violation;
  window   a window of W rows over T streamed rows (5,000 over 50,000 by
           default), the oldest leaving by an exact decrement: seconds,
           |f - f_smo| against smo on the last W rows (C = 1 / (nu W) for
           both), and the process's peak resident set at every tenth of the
           stream, which must not grow with the rows passed.

This is a measurement, not a test.

    /usr/bin/python3 test/bench/incremental_vs_smo.py [--rows 500,1000,2000]
        [--window 5000] [--stream 50000] [--out FILE]
"""
import argparse
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "test", "tools", "incr_bench")


def run(*args):
    p = subprocess.run([CLI] + [str(a) for a in args], capture_output=True, text=True, check=True)
    return [line.split() for line in p.stdout.splitlines()]


def measure(rows="500,1000,2000", window=5000, stream=50000):
    """Markdown lines of both tables."""
    subprocess.run(["make", "-s", "-C", ROOT, "test/tools/incr_bench"], check=True)
    out = ["Exact fit, a row at a time, against smo on the same rows (5 blobs in 2-D, "
           "nu 0.05, gamma 1; CPU seconds):", "",
           "| rows | smo s | incremental s | ratio | path steps | margin rows | error rows | "
           "max \\|f - f_smo\\| | KKT violation |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n in rows.split(","):
        f = run("fit", n)[-1]
        smo_s, inc_s = float(f[2]), float(f[3])
        out.append("| %s | %.3f | %.3f | %.1f | %s | %s | %s | %s | %s |"
                   % (f[1], smo_s, inc_s, inc_s / smo_s if smo_s > 0 else float("nan"),
                      f[4], f[5], f[6], f[7], f[8]))
    lines = run("window", window, stream)
    w = lines[-1]
    rss = [(int(r[1]), int(r[2])) for r in lines if r[0] == "rss"]
    out += ["", "Sliding window of %s rows over %s streamed rows (each row added, the oldest "
            "removed, both exactly):" % (window, stream), "",
            "| window | rows streamed | incremental s | ms per row | smo on the last window s | "
            "max \\|f - f_smo\\| | KKT violation | path steps | margin rows | refactorings |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            "| %s | %s | %.1f | %.2f | %.3f | %s | %s | %s | %s | %s |"
            % (w[1], w[2], float(w[3]), 1000 * float(w[3]) / int(w[2]), float(w[4]), w[5], w[6],
               w[7], w[8], w[9]),
            "", "Peak resident set (kB) after each tenth of the stream: " +
            ", ".join("%d rows %d" % r for r in rss) + "."]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 1)[1])
    ap.add_argument("--rows", default="500,1000,2000")
    ap.add_argument("--window", type=int, default=5000)
    ap.add_argument("--stream", type=int, default=50000)
    ap.add_argument("--out", default=None, help="append the markdown tables to this file")
    args = ap.parse_args()
    out = measure(args.rows, args.window, args.stream)
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        with open(args.out, "a") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
