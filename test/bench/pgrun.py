"""Small helpers shared by the svclust benchmarks: running SQL through psql
and describing the machine.  Only psql and the PG* environment variables are
needed (test/bench/run.sh sets them for a throwaway server)."""
import os
import platform
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


class PsqlError(RuntimeError):
    pass


def _connection_refused(stderr):
    return any(s in stderr for s in (
        "the database system is in recovery mode",
        "the database system is starting up",
        "the database system is shutting down",
        "Connection refused",
        "No such file or directory\n\tIs the server running"))


def psql(sql, stop_on_error=True, timing=False, check=True, retries=60):
    """Run SQL in one psql session; return (stdout lines, stderr).

    Output is unaligned, tab separated, without headers.  With
    stop_on_error=False every statement runs whatever earlier ones did, and
    the caller matches result lines to statements itself.  If the server is
    not accepting connections (e.g. it is recovering from a crash) the call
    waits and retries for up to `retries` seconds."""
    cmd = ["psql", "-X", "-q", "-A", "-t", "-F", "\t",
           "-v", "ON_ERROR_STOP=%d" % (1 if stop_on_error else 0)]
    if timing:
        sql = "\\timing on\n" + sql
    for attempt in range(retries + 1):
        res = subprocess.run(cmd, input=sql, capture_output=True, text=True)
        if res.returncode == 2 and _connection_refused(res.stderr) and attempt < retries:
            time.sleep(1)
            continue
        break
    lines = [l for l in res.stdout.splitlines() if l.strip()]
    if check and res.returncode != 0:
        raise PsqlError(res.stderr.strip() or "psql exited with %d" % res.returncode)
    return lines, res.stderr


def q1(sql):
    """The first field of the first line of a query's result."""
    lines, _ = psql(sql)
    return lines[0].split("\t")[0] if lines else None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def mem_gb():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024.0 / 1024.0
    except OSError:
        pass
    return float("nan")


def git_rev():
    try:
        rev = subprocess.run(["git", "-C", TOP, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", TOP, "status", "--porcelain", "--", "src", "sql", "Makefile"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" + uncommitted changes" if dirty else "") if rev else "unknown"
    except OSError:
        return "unknown"


def machine_line():
    """One line: CPU model, cores, memory, PostgreSQL version, svclust commit."""
    ver = q1("SHOW server_version") or "?"
    ver = re.sub(r"\s*\(.*\)$", "", ver)
    return "%s, %d cores, %.0f GB; PostgreSQL %s; svclust %s" % (
        cpu_model(), os.cpu_count() or 0, mem_gb(), ver, git_rev())


def median(xs):
    xs = sorted(x for x in xs if x is not None and x == x)
    if not xs:
        return float("nan")
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def timed_queries(steps, setup=""):
    """Run [(tag, sql), ...] in one psql session with \\timing and return
    {tag: [milliseconds, ...]} (a tag may repeat).  Each sql must be a single
    statement that prints at most one result line."""
    parts = [setup]
    for tag, sql in steps:
        parts.append("\\echo @@%s\n%s" % (tag, sql.rstrip().rstrip(";") + ";"))
    lines, _ = psql("\n".join(parts), timing=True)
    out = {}
    tag = None
    for line in lines:
        if line.startswith("@@"):
            tag = line[2:]
        elif line.startswith("Time: ") and tag is not None:
            ms = float(line.split()[1])
            out.setdefault(tag, []).append(ms)
            tag = None
    return out


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()
