"""What the Python test scripts share: their "ok" / "FAILED" lines, the
closing "N passed, N failed" line the test command counts, and the psql
to run.  A script adds test/ to sys.path and imports this module."""

import os
import shutil

_counts = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    """One check's line; returns ok, so a caller can stop on a failure."""
    if ok:
        _counts["passed"] += 1
        print("ok     " + name)
    else:
        _counts["failed"] += 1
        print("FAILED " + name + (": " + detail if detail else ""))
    return ok


def failures():
    return _counts["failed"]


def finish():
    """Prints the closing line; the script's exit status (1 on a failure)."""
    print("%d passed, %d failed" % (_counts["passed"], _counts["failed"]))
    return 1 if _counts["failed"] else 0


def psql_path():
    """psql on the PATH, else PostgreSQL 15's (PG_BIN overrides where)."""
    return shutil.which("psql") or os.path.join(
        os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"), "psql")
