#!/usr/bin/env python3
"""Whether any two files of the extension call each other, directly or
through others: the file-level graph of the built objects (src/core/*.o,
src/*.o), an edge from a file to each file that defines a symbol it uses
(nm), must have no cycle.

    make && /usr/bin/python3 test/tools/file_cycles.py [--graph] [OBJ...]

Prints each cycle with the symbols on its edges, then "call graph: N
files, N edges, N cycles" and "N passed, N failed"; exits 1 on a cycle.
--graph prints every file's edges.  Objects default to those of the
sources in src/core and src (a source without its object is skipped:
options_text.c, which the module leaves out, calls only options.c).
"""
import glob
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def symbols(obj):
    """(defined, used) global symbols of an object file."""
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            used.add(name)
        elif kind in "TDBRVWG":
            defined.add(name)
    return defined, used


def cycles(graph):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main():
    args = [a for a in sys.argv[1:] if a != "--graph"]
    objs = args or [src[:-2] + ".o"
                    for src in sorted(glob.glob(os.path.join(TOP, "src", "core", "*.c")) +
                                      glob.glob(os.path.join(TOP, "src", "*.c")))
                    if os.path.exists(src[:-2] + ".o")]
    if not objs:
        print("no object files: build first (make)")
        print("0 passed, 1 failed")
        return 1
    name = {o: os.path.relpath(o, TOP) for o in objs}
    owner, uses = {}, {}
    for o in objs:
        defined, used = symbols(o)
        uses[o] = used
        for s in defined:
            owner.setdefault(s, o)
    graph = {o: {owner[s] for s in uses[o] if s in owner and owner[s] != o} for o in objs}
    if "--graph" in sys.argv:
        for o in objs:
            print("%s -> %s" % (name[o], " ".join(sorted(name[w] for w in graph[o])) or "-"))
    found = cycles(graph)
    for comp in found:
        print("cycle: " + " ".join(name[o] for o in comp))
        for a in comp:
            for b in sorted(graph[a] & set(comp)):
                print("  %s -> %s: %s" % (name[a], name[b],
                                          " ".join(sorted(s for s in uses[a] if owner.get(s) == b))))
    print("call graph: %d files, %d edges, %d cycles" %
          (len(objs), sum(len(g) for g in graph.values()), len(found)))
    print("%d passed, %d failed" % (0 if found else 1, 1 if found else 0))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
