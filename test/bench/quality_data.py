"""The quality benchmark's data sets (test/bench/quality.py): every set made
from a seed, or read from the data directory (the nine labelled 2-D sets)
or from scikit-learn's bundled copies (digits, wine), so that no data file
is committed.

Each set is a dict: name, group, x (float64, n x d), y (int labels 0..k-1),
and a note saying how it was made.  Groups:

  shapes      the nine labelled CSV sets of --data (2-D, iris 4-D);
  real        scikit-learn's bundled digits (1,797 x 64, 10 classes) and
              wine (178 x 13, 3 classes);
  embeddings  clusters on a 16-D latent space mapped to 64-768 dims by a
              random linear map with ambient noise, unit-normalised as
              sentence embeddings are;
  blobs       many Gaussian blobs of unequal sizes (K 20-100, d 2-32), the
              smallest about 0.1% of the rows;
  plain       a few equal 2-D Gaussian blobs (sd 1, centres 6-8 apart):
              their tails must not stand as clusters of their own;
  rings       concentric rings around blobs, in 2-D and lifted into more
              dimensions.
"""
import csv
import glob
import math
import os

import numpy as np

GROUPS = ("shapes", "real", "embeddings", "blobs", "plain", "rings", "tables")


def _csv(path):
    """A CSV with a header x1,...,xd,label (classes by the label's text)."""
    with open(path, newline="") as fh:
        rows = [r for r in csv.reader(fh) if r]
    body = rows[1:]
    x = np.array([[float(v) for v in r[:-1]] for r in body])
    names = sorted({r[-1] for r in body})
    y = np.array([names.index(r[-1]) for r in body])
    return x, y


def shapes(data_dir):
    out = []
    for path in sorted(glob.glob(os.path.join(data_dir, "*.csv"))):
        x, y = _csv(path)
        name = os.path.splitext(os.path.basename(path))[0].lower()
        out.append({"name": name, "group": "shapes", "x": x, "y": y,
                    "note": "%s from the data directory" % os.path.basename(path)})
    return out


def real():
    from sklearn.datasets import load_digits, load_wine
    out = []
    for name, loader in (("digits", load_digits), ("wine", load_wine)):
        b = loader()
        out.append({"name": name, "group": "real", "x": np.asarray(b.data, dtype=float),
                    "y": np.asarray(b.target, dtype=int), "note": "scikit-learn's bundled copy"})
    return out


def geometric_shares(k, smallest):
    """k shares in geometric progression, summing to 1, the least `smallest`."""
    if k * smallest >= 1.0:
        return np.full(k, 1.0 / k)
    lo, hi = 1.0, 10.0
    for _ in range(200):
        q = 0.5 * (lo + hi)
        if smallest * (q ** k - 1.0) / (q - 1.0) > 1.0:
            hi = q
        else:
            lo = q
    s = smallest * q ** np.arange(k)
    return s[::-1] / s.sum()


def _sizes(n, shares):
    sizes = np.floor(shares * n).astype(int)
    sizes[0] += n - sizes.sum()
    return sizes


def blobs(name, n, k, d, smallest, seed, sep=8.0, sd_range=(0.8, 1.2)):
    """k Gaussian blobs in d dims, sizes in geometric progression down to
    `smallest` of the rows, centres at least `sep` apart (sd about 1)."""
    rng = np.random.default_rng(seed)
    half = sep
    centres = []
    while len(centres) < k:
        tries = 0
        while len(centres) < k and tries < 2000:
            c = rng.uniform(-half, half, d)
            tries += 1
            if all(np.linalg.norm(c - o) >= sep for o in centres):
                centres.append(c)
                tries = 0
        half *= 1.25
    centres = np.array(centres)
    sizes = _sizes(n, geometric_shares(k, smallest))
    sds = rng.uniform(sd_range[0], sd_range[1], k)
    y = np.repeat(np.arange(k), sizes)
    x = centres[y] + rng.normal(0, 1, (n, d)) * sds[y][:, None]
    return {"name": name, "group": "blobs", "x": x, "y": y,
            "note": "%d blobs in %d-D, %.2f%% to %.2f%% of the rows, centres >= %g apart, sd 0.8-1.2, seed %d"
            % (k, d, 100.0 * sizes.max() / n, 100.0 * sizes.min() / n, sep, seed)}


def plain(name, n, k, gap, seed):
    """k equal 2-D Gaussian blobs, sd 1, centres `gap` apart on a line: the
    plain table a floor counted in sample rows over-splits (tail fragments
    of the broad blobs standing as clusters)."""
    rng = np.random.default_rng(seed)
    sizes = _sizes(n, np.full(k, 1.0 / k))
    y = np.repeat(np.arange(k), sizes)
    centres = np.stack([np.arange(k) * gap, np.zeros(k)], axis=1)
    x = centres[y] + rng.normal(0, 1, (n, 2))
    return {"name": name, "group": "plain", "x": x, "y": y,
            "note": "%d equal blobs in 2-D, sd 1, centres %g apart on a line, seed %d" % (k, gap, seed)}


def tables(name, n, k, d, informative, seed, sep=10.0):
    """k equal Gaussian blobs (sd 1) that differ in `informative` of the d
    columns only, the rest noise of the same scale: the shape of a table
    of a few groups and many features, most of them uninformative, which
    z-scoring weighs alike.  Centre j sits at sep / sqrt(2) along
    informative column j mod informative (and, past them, along two), so
    centres are sep apart."""
    rng = np.random.default_rng(seed)
    centres = np.zeros((k, d))
    for j in range(k):
        if j < informative:
            centres[j, j] = sep / np.sqrt(2)
        else:
            a, b = j % informative, (j + 1) % informative
            centres[j, a] = centres[j, b] = sep / 2
    sizes = _sizes(n, np.full(k, 1.0 / k))
    y = np.repeat(np.arange(k), sizes)
    x = centres[y] + rng.normal(0, 1, (n, d))
    return {"name": name, "group": "tables", "x": x, "y": y,
            "note": "%d equal blobs in %d-D, apart in %d columns, sd 1, seed %d"
            % (k, d, informative, seed)}


def embeddings(name, n, k, d, noise, seed, latent=16, ambient=0.02, smallest=0.01):
    """k clusters in a `latent`-D space (centres N(0, I), within-cluster sd
    `noise` times 0.5-1.5), mapped to d dims by a random Gaussian matrix
    plus ambient noise (sd `ambient` per dim of the unit vector), then
    unit-normalised.  Cluster sizes geometric down to `smallest`."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 1, (k, latent))
    spread = noise * rng.uniform(0.5, 1.5, k)
    sizes = _sizes(n, geometric_shares(k, smallest))
    y = np.repeat(np.arange(k), sizes)
    z = centres[y] + rng.normal(0, 1, (n, latent)) * spread[y][:, None]
    w = rng.normal(0, 1, (latent, d)) / math.sqrt(latent)
    h = np.tanh(z @ w)
    h /= np.linalg.norm(h, axis=1, keepdims=True)
    h += rng.normal(0, ambient / math.sqrt(d), (n, d))
    h /= np.linalg.norm(h, axis=1, keepdims=True)
    return {"name": name, "group": "embeddings", "x": h, "y": y,
            "note": "%d clusters on a %d-D latent space (sd %.2f x 0.5-1.5), tanh of a random map "
                    "to %d dims, ambient noise %.2f, unit-normalised, sizes %.1f%% to %.1f%%, seed %d"
            % (k, latent, noise, d, ambient, 100.0 * sizes.max() / n, 100.0 * sizes.min() / n, seed)}


def rings(name, n, systems, d, seed, noise=0.12):
    """`systems` targets: each a blob with two concentric rings around it
    (radii 2 and 4, the ring rows proportional to their length), placed
    apart in the plane; with d > 2 the plane is rotated into d dims and
    every row gets noise of sd `noise` in all of them."""
    rng = np.random.default_rng(seed)
    parts = []
    labels = []
    per = n // systems
    for s in range(systems):
        cx, cy = 12.0 * s, 0.0 if s % 2 == 0 else 6.0
        nb = per // 5
        nr1 = (per - nb) // 3
        nr2 = per - nb - nr1
        parts.append(np.c_[cx + rng.normal(0, 0.5, nb), cy + rng.normal(0, 0.5, nb)])
        for r, m in ((2.0, nr1), (4.0, nr2)):
            t = rng.uniform(0, 2 * math.pi, m)
            parts.append(np.c_[cx + r * np.cos(t), cy + r * np.sin(t)] + rng.normal(0, noise * 2, (m, 2)))
        labels += [3 * s, 3 * s + 1, 3 * s + 2]
    x2 = np.vstack(parts)
    y = np.repeat(np.array(labels), [len(p) for p in parts])
    if d > 2:
        q, _ = np.linalg.qr(rng.normal(0, 1, (d, d)))
        x = np.c_[x2, np.zeros((len(x2), d - 2))] @ q.T + rng.normal(0, noise, (len(x2), d))
    else:
        x = x2
    return {"name": name, "group": "rings", "x": x, "y": y,
            "note": "%d blobs each inside two rings (radii 2, 4)%s, seed %d"
            % (systems, "" if d == 2 else ", the plane rotated into %d-D with noise sd %g in every dim" % (d, noise),
               seed)}


def all_sets(data_dir, quick=False, only_groups=None):
    """Every set of the benchmark, in group order.  quick: fewer rows where
    the set is large (the sample the fit sees is 10,000 rows either way)."""
    big = not quick
    out = []
    if data_dir and os.path.isdir(data_dir):
        out += shapes(data_dir)
    out += real()
    out += [
        embeddings("emb64_k20", 20000, 20, 64, 0.25, seed=64),
        embeddings("emb128_k20", 20000, 20, 128, 0.25, seed=128),
        embeddings("emb384_k50", 20000, 50, 384, 0.25, seed=384, smallest=0.004),
        embeddings("emb768_k20", 20000, 20, 768, 0.35, seed=768, ambient=0.05),
        embeddings("emb128_k10", 20000, 10, 128, 0.40, seed=1280, ambient=0.05, smallest=0.03),
    ]
    if big:
        out.append(embeddings("emb128_k20_200k", 200000, 20, 128, 0.25, seed=129))
    out += [
        blobs("blobs_k20_d2", 100000, 20, 2, 0.001, seed=202),
        blobs("blobs_k40_d8", 1000000 if big else 200000, 40, 8, 0.0008, seed=408),
        blobs("blobs_k100_d16", 200000 if big else 100000, 100, 16, 0.001, seed=1016),
        blobs("blobs_k50_d32", 100000, 50, 32, 0.001, seed=5032),
    ]
    out += [
        plain("plain_k3_g6", 10000, 3, 6.0, seed=36),
        plain("plain_k5_g6", 20000, 5, 6.0, seed=56),
        plain("plain_k3_g8", 10000, 3, 8.0, seed=38),
        plain("plain_k4_g7", 30000, 4, 7.0, seed=47),
    ]
    out += [
        rings("rings_2d", 6000, 1, 2, seed=12),
        rings("rings3_2d", 15000, 3, 2, seed=32),
        rings("rings2_d10", 10000, 2, 10, seed=210, noise=0.1),
    ]
    out += [
        tables("tables_k3_d8", 3000, 3, 8, 3, seed=38),
        tables("tables_k3_d12", 3000, 3, 12, 3, seed=312),
        tables("tables_k5_d16", 5000, 5, 16, 5, seed=516),
        tables("tables_k4_d24", 4000, 4, 24, 4, seed=424),
    ]
    if only_groups:
        out = [s for s in out if s["group"] in only_groups]
    return out
