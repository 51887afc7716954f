#!/usr/bin/python3
"""Check that the extension's scripts stay safe to run for a trusted extension.

svclust is trusted (svclust.control): a database owner who is not a
superuser can run CREATE EXTENSION and ALTER EXTENSION UPDATE, and the
scripts then run as the bootstrap superuser, in a schema the owner chose
and may have filled beforehand.  doc/security.md gives the review; this
test holds every script, sql/svclust--*.sql, to what made it pass:

- only DDL that evaluates no expression: CREATE TYPE, CREATE FUNCTION
  (LANGUAGE C, from MODULE_PATHNAME), CREATE AGGREGATE, COMMENT ON, ALTER
  FUNCTION ... COST or SUPPORT, DROP AGGREGATE / FUNCTION; no SELECT, DO,
  SET, GRANT, view, cast, operator, or DEFAULT other than NULL;
- no SECURITY DEFINER, no SET clause, no SQL- or PL-language function;
- internal only as the sole argument of a type's receive function or a
  planner support function (none can be called from SQL), and as a
  result only with it;
- CREATE OR REPLACE only of a function or aggregate an earlier script
  created (never one a user could have planted).

Prints one line per check and ends with "N passed, N failed".  Needs no
server: test/run-tests.sh runs it after the build.

    /usr/bin/python3 test/tools/extension_scripts_test.py
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test"))
from checklib import check, finish  # noqa: E402


def statements(text):
    """The script's statements, comments removed, each on one line."""
    out, cur, i, n = [], [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("--", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if c == "\\" and (i == 0 or text[i - 1] == "\n"):   # a psql meta-command line
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j].strip())
            i = j
            continue
        if c == "'":
            j = i + 1
            while j < n:
                if text[j] == "'" and text.startswith("''", j):
                    j += 2
                    continue
                if text[j] == "'":
                    break
                j += 1
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if c == "$":
            check("no dollar quoting (function bodies)", False, text[i:i + 40])
        if c == ";":
            s = " ".join("".join(cur).split())
            if s:
                out.append(s)
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    if " ".join("".join(cur).split()):
        out.append(" ".join("".join(cur).split()))
    return out


def unquoted(stmt):
    """The statement with its string literals emptied."""
    return re.sub(r"'(?:[^']|'')*'", "''", stmt)


def version_key(path):
    """Order: the base script, then the upgrades by their source version."""
    m = re.search(r"svclust--([\d.]+)(?:--([\d.]+))?\.sql$", path)
    return tuple(int(x) for x in (m.group(2) or m.group(1)).split("."))


ALLOWED = re.compile(
    r"^(\\echo |CREATE TYPE |CREATE FUNCTION |CREATE OR REPLACE FUNCTION |CREATE AGGREGATE |"
    r"CREATE OR REPLACE AGGREGATE |COMMENT ON |ALTER FUNCTION [\w.]+\([^)]*\) (COST \d+|SUPPORT \w+)$|"
    r"DROP AGGREGATE |DROP FUNCTION )", re.I)


def signature(stmt):
    """(kind, name, argument types) of a CREATE / DROP FUNCTION or AGGREGATE."""
    m = re.match(r"(?:CREATE(?: OR REPLACE)?|DROP) (FUNCTION|AGGREGATE) ([\w.]+)\s*\((.*?)\)\s*(?:RETURNS|\(|$|AS)",
                 stmt, re.I)
    if not m:
        return None
    args = []
    for a in filter(None, (x.strip() for x in m.group(3).split(","))):
        a = re.sub(r"\s+DEFAULT\s+.*$", "", a, flags=re.I).split()
        args.append(a[-1].lower() if len(a) > 1 and a[-1].lower() not in ("precision",) else " ".join(a).lower())
    return m.group(1).upper(), m.group(2).lower(), tuple(args)


def main():
    scripts = sorted(glob.glob(os.path.join(ROOT, "sql", "svclust--*.sql")), key=version_key)
    check("the scripts are found", len(scripts) >= 4, str(len(scripts)))
    control = open(os.path.join(ROOT, "svclust.control")).read()
    check("svclust.control marks the extension trusted", re.search(r"^trusted\s*=\s*true", control, re.M) is not None)
    created = set()
    for path in scripts:
        name = os.path.basename(path)
        stmts = statements(open(path, encoding="utf-8").read())
        bad = [s for s in stmts if not ALLOWED.match(s)]
        check("%s: DDL only (%d statements)" % (name, len(stmts)), not bad, "; ".join(s[:80] for s in bad))
        funcs = [s for s in stmts if re.match(r"CREATE (OR REPLACE )?FUNCTION", s, re.I)]
        not_c = [s for s in funcs if not re.search(r"\bAS 'MODULE_PATHNAME'(, '\w+')? LANGUAGE C\b", s)]
        check("%s: every function is C from MODULE_PATHNAME" % name, not not_c, "; ".join(s[:80] for s in not_c))
        definer = [s for s in stmts if re.search(r"SECURITY\s+DEFINER|\bSET\s+\w|LEAKPROOF", unquoted(s), re.I)]
        check("%s: no SECURITY DEFINER, SET clause or LEAKPROOF" % name, not definer,
              "; ".join(s[:80] for s in definer))
        defaults = [d for s in funcs for d in re.findall(r"\bDEFAULT\s+([^,)]+)", unquoted(s), re.I)
                    if d.strip().upper() != "NULL"]
        check("%s: no DEFAULT but NULL" % name, not defaults, str(defaults))
        internal = [s[:80] for s in funcs if re.search(r"RETURNS\s+internal\b", s, re.I)
                    and "internal" not in (signature(s) or ("", "", ()))[2]]
        check("%s: a function returning internal takes internal" % name, not internal, "; ".join(internal))
        taken = []
        for s in stmts:
            sig = signature(s)
            if sig is None:
                continue
            if s.upper().startswith("DROP"):
                created.discard(sig)
            elif s.upper().startswith("CREATE OR REPLACE"):
                if sig not in created:
                    taken.append("%s %s%s" % sig)
            else:
                created.add(sig)
        check("%s: CREATE OR REPLACE only of what an earlier script created" % name, not taken, "; ".join(taken))
    # what the default version installs: internal only where a type's
    # receive function takes it (none can be called from SQL)
    internal = sorted("%s(%s)" % (sig[1], ", ".join(sig[2])) for sig in created
                      if "internal" in sig[2] and sig[2] != ("internal",))
    check("the installed functions take internal only alone, as a receive or planner support "
          "function does (%d functions)" % len(created),
          not internal and len(created) > 20, "; ".join(internal))
    odd = sorted(sig[1] for sig in created if sig[2] == ("internal",)
                 and not (sig[1].endswith("_recv") or sig[1].endswith("_support")))
    check("functions of internal alone are receive (_recv) or planner support (_support) functions",
          not odd, "; ".join(odd))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
