#!/usr/bin/python3
"""Run every SQL example of README.md, so that the manual cannot rot.

Fence convention in README.md:
  ```sql         runs: every such block, in order, in one fresh database
                 where svclust is already created (CREATE EXTENSION), so the
                 examples must form one story (a table is created before a
                 later block uses it);
  ```sql-norun   shown only: SQL that needs what the test server lacks
                 (Citus, another server's objects);
  ```sql-pgcron  pg_cron's: run by test/integration/pg_cron_test.sh on a server of its
                 own with pg_cron preloaded, not here;
  ```sh, ```text and any other fence are not run.

Each block runs in its own psql session (psql -X -v ON_ERROR_STOP=1), so a
SET in one block does not carry over to the next.  Prints one line per
block, "ok" or "FAILED" with the README line and the block's first line,
psql's error under a failure, and ends with "N passed, N failed"; exits 1
if a block failed (or if there is no block at all).

A block also fails when a result the README states does not hold.  A
stated result is a comment after a named column on the same line,

    SELECT svc_predict(model, ARRAY[8, 0]) AS cluster_of_8_0,   -- 3

and it is checked against that column's value in the first row of the
result whose header has the column, when it reads as one of: a value
(a number, true or false, a JSON array, \\x and hex), compared as text
after psql's t and f become true and false; "> X", "< X", ">= X" or
"<= X"; "X or less", "X or more".  Any other comment is prose and is not
checked.

It needs a running server where svclust is installed, reached through the
usual PGHOST, PGPORT, PGUSER and PGDATABASE: test/run-tests.sh runs it
after pg_regress, with the server of test/pg.sh.  By hand:

    . test/pg.sh && pg_start && /usr/bin/python3 test/integration/readme_sql_test.py; pg_stop

Other markdown files can be given as arguments instead of README.md;
--show prints each block's output too (to check the results the text
quotes).
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BLOCK_TIMEOUT = 600  # seconds; the slowest example takes well under one

sys.path.insert(0, os.path.join(ROOT, "test"))
from checklib import psql_path  # noqa: E402


def sql_blocks(path):
    """Yield (line number of the opening fence, text) of every ```sql block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        fence = lines[i].strip()
        if fence.startswith("```"):
            info = fence[3:].strip()
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if j == len(lines):
                raise SystemExit("%s:%d: fence never closed" % (path, i + 1))
            if info == "sql":
                yield i + 1, "\n".join(lines[start:j]) + "\n"
            i = j + 1
        else:
            i += 1


SEP = "\x1f"  # psql's field separator for the checks: no README value holds it
VALUE = re.compile(r"^(-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|true|false|\[[^\]]*\]|\\x[0-9a-fA-F]+)$")
BOUND = re.compile(r"^(>=|<=|>|<) *(-?[0-9.]+([eE][-+]?[0-9]+)?)$")
OR_LESS = re.compile(r"^(-?[0-9.]+([eE][-+]?[0-9]+)?) or (less|more)$")
STATED = re.compile(r"\bAS\s+(\w+)\b[^\n]*?--\s*(.+?)\s*$", re.IGNORECASE)


def stated_results(text, first_line_no):
    """(README line, column, expectation) of every checkable stated result."""
    found = []
    for k, line in enumerate(text.split("\n")):
        m = STATED.search(line)
        if m is None:
            continue
        want = m.group(2)
        if VALUE.match(want) or BOUND.match(want) or OR_LESS.match(want):
            found.append((first_line_no + 1 + k, m.group(1), want))
    return found


def column_value(output, column):
    """The column's value in the first row under the first header naming it."""
    lines = output.split("\n")
    for i, line in enumerate(lines):
        names = line.split(SEP)
        if column in names and i + 1 < len(lines):
            values = lines[i + 1].split(SEP)
            if len(values) == len(names):
                return values[names.index(column)]
    return None


def holds(got, want):
    if got is None:
        return False
    got = {"t": "true", "f": "false"}.get(got, got)
    m = BOUND.match(want)
    if m:
        try:
            g, w = float(got), float(m.group(2))
        except ValueError:
            return False
        return {">": g > w, "<": g < w, ">=": g >= w, "<=": g <= w}[m.group(1)]
    m = OR_LESS.match(want)
    if m:
        try:
            g, w = float(got), float(m.group(1))
        except ValueError:
            return False
        return g <= w if m.group(3) == "less" else g >= w
    return got == want


def check_stated(output, stated):
    """psql's error-like text for every stated result that does not hold."""
    wrong = []
    for line, column, want in stated:
        got = column_value(output, column)
        if not holds(got, want):
            wrong.append("README line %d: %s should be %s, is %s"
                         % (line, column, want, "missing" if got is None else got))
    return "\n".join(wrong)


def first_line(text):
    for line in text.split("\n"):
        if line.strip():
            return line.strip()[:70]
    return "(empty)"


def run_psql(psql, database, sql, unaligned=False):
    fmt = ["-A", "-F", SEP, "-P", "footer=off"] if unaligned else []
    return subprocess.run([psql, "-X", "-q", "-v", "ON_ERROR_STOP=1"] + fmt + ["-d", database, "-f", "-"],
                          input=sql, capture_output=True, text=True, timeout=BLOCK_TIMEOUT)


def main():
    args = sys.argv[1:]
    show = "--show" in args
    files = [a for a in args if a != "--show"] or [os.path.join(ROOT, "README.md")]
    psql = psql_path()
    admin_db = os.environ.get("PGDATABASE", "postgres")
    passed = failed = 0
    for path in files:
        name = os.path.relpath(path, ROOT)
        blocks = list(sql_blocks(path))
        if not blocks:
            print("FAILED %s: no ```sql block found" % name)
            failed += 1
            continue
        database = "svclust_readme_test_%d" % os.getpid()
        setup = run_psql(psql, admin_db,
                         "DROP DATABASE IF EXISTS %s;\nCREATE DATABASE %s;\n" % (database, database))
        if setup.returncode == 0:
            setup = run_psql(psql, database, "CREATE EXTENSION svclust;\n")
        if setup.returncode != 0:
            print("FAILED %s: could not create a database with svclust:" % name)
            print("    " + setup.stderr.strip().replace("\n", "\n    "))
            failed += 1
            continue
        try:
            for n, (line, text) in enumerate(blocks, 1):
                try:
                    result = run_psql(psql, database, text, unaligned=True)
                    ok, err = result.returncode == 0, result.stderr
                    if show:
                        print(result.stdout.replace(SEP, " | ") + result.stderr, end="")
                    if ok:
                        err = check_stated(result.stdout, stated_results(text, line))
                        ok = not err
                except subprocess.TimeoutExpired:
                    ok, err = False, "timed out after %d s" % BLOCK_TIMEOUT
                label = "block %d (%s:%d) %s" % (n, name, line, first_line(text))
                if ok:
                    print("ok     " + label)
                    passed += 1
                else:
                    print("FAILED " + label)
                    print("    " + err.strip().replace("\n", "\n    "))
                    failed += 1
        finally:
            run_psql(psql, admin_db, "DROP DATABASE IF EXISTS %s WITH (FORCE);\n" % database)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
