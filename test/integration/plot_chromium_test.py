#!/usr/bin/python3
"""Render svc_plot_svg's pictures in a real headless browser and check them.

For a few models (three blobs in 2-D with far outliers, the same picture
sampled, a 3-D model drawn over two chosen dimensions), the SVG is made by
the extension, parsed as XML (escaping must hold), rendered to PNG by
Debian's chromium (--headless --screenshot) and the PNG is checked: not
blank; each cluster's colour present at its rows' places and centred on
them; the boundary f = 0 drawn in black where its path runs; the legend's
cluster sizes those svc_assign gives.  Prints one line per check and ends
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

SVG_NS = "{http://www.w3.org/2000/svg}"
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok     " + name)
    else:
        failed += 1
        print("FAILED " + name + (": " + detail if detail else ""))


def psql_path():
    return shutil.which("psql") or os.path.join(
        os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"), "psql")


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
    return tuple(int(h[i:i + 2], 16) for i in (1, 3, 5))


def near(a, b, tol):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def check_picture(label, svg, width, height, workdir, sizes):
    """sizes: {cluster: rows} as svc_assign gives them."""
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
    for k, pts in sorted(circles.items()):
        colour = hex_rgb(pts[0][2])
        # inside the dot (radius 3.5), as other marks (support vectors,
        # equilibria, neighbouring dots) may cover its centre
        hits = sum(1 for (x, y, _) in pts
                   if any(near(px[min(max(int(x) + dx, 0), w - 1), min(max(int(y) + dy, 0), h - 1)], colour, 40)
                          for dx in (-2, -1, 0, 1, 2) for dy in (-2, -1, 0, 1, 2)))
        check("%s: cluster %d's colour at its rows (%d of %d)" % (label, k, hits, len(pts)),
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

    # the boundary: dark pixels where its path runs
    path = [p for p in root.iter(SVG_NS + "path") if p.get("class") == "boundary"]
    segs = re.findall(r"M([-\d.]+) ([-\d.]+)L([-\d.]+) ([-\d.]+)", path[0].get("d")) if path else []
    pts = []
    for seg in segs:
        x0, y0, x1, y1 = map(float, seg)
        steps = max(1, int(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5 / 2))
        pts += [(x0 + (x1 - x0) * t / steps, y0 + (y1 - y0) * t / steps) for t in range(steps)]
    dark = 0
    for (x, y) in pts:
        xi, yi = int(round(x)), int(round(y))
        # dark grey or black (an antialiased 2-pixel black line), not a cluster's colour
        if any(sum(c) < 400 and max(c) - min(c) < 40
               for c in (px[min(max(xi + dx, 0), w - 1), min(max(yi + dy, 0), h - 1)]
                         for dx in (-1, 0, 1) for dy in (-1, 0, 1))):
            dark += 1
    check("%s: the boundary is drawn (%d of %d points dark)" % (label, dark, len(pts)),
          len(pts) >= 20 and dark >= 0.9 * len(pts))

    # the legend's sizes
    text = " ".join(t.text or "" for t in root.iter(SVG_NS + "text"))
    for k, n in sorted(sizes.items()):
        check("%s: the legend gives cluster %d %d rows" % (label, k, n),
              "cluster %d: %d rows" % (k, n) in text)


def main():
    if chromium() is None:
        check("chromium is installed (test/setup-debian.sh installs it)", False)
        print("%d passed, %d failed" % (passed, failed))
        return 1
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
""")

        def sizes(model, feats):
            out = psql(db, "SELECT cluster, count(*) FROM svc_assign((SELECT model FROM %s), "
                           "'SELECT id, %s FROM pts') GROUP BY 1 ORDER BY 1" % (model, feats))
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
        check_picture("3-D over dims 2 and 1", svg, 800, 600, workdir, s3)
    finally:
        psql(admin, "DROP DATABASE IF EXISTS %s WITH (FORCE);" % db)
        if not os.environ.get("KEEP_PLOTS"):
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print("pictures kept in " + workdir)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
