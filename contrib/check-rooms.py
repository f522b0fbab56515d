#!/usr/bin/env python3
"""The house's rooms: every quoted or project include of ucx_ext/ and src/
resolved to a file of the tree, then two rules checked.

1. The file-level include graph has no cycle.
2. An include from one room to another goes down the order declared in
   contrib/rooms.txt: a room names the rooms it may include, each declared
   above it, so no include runs back up.

A room is the folder a file is in (ucx_ext/ifunc/rx, src/smc, ...); every
folder with sources must be declared. A header reached through the public
include paths (<twochains/...>) belongs to the room of its folder too. Exits 1 and names each offending include; prints one line on success.

  contrib/check-rooms.py [--under DIR] [TOP]

--under DIR checks only the files and rooms under DIR, which may include
nothing outside it (ucx_ext: the runtime never includes the replication
layer).
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)
SUFFIXES = ('.c', '.h', '.cpp', '.hpp', '.inl')
# where a project include may be found, as the Makefiles' -I give them
SEARCH = ('ucx_ext/api', 'ucx_ext', 'src', 'src/api', 'toolchain/api')


def in_scope(path, under):
    return under is None or path == under or path.startswith(under + '/')


def read_rooms(path, under=None):
    """Rooms in declaration order, each with the set of rooms it may use."""
    order, allowed = [], {}
    with open(path, encoding='utf-8') as f:
        for lineno, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            name, _, deps = line.partition(':')
            name = name.strip()
            if not in_scope(name, under):
                continue
            deps = deps.split()
            for d in deps:
                if d not in allowed:
                    sys.exit(f'{path}:{lineno}: {name} uses {d}, '
                             'which is not declared above it')
            if name in allowed:
                sys.exit(f'{path}:{lineno}: {name} declared twice')
            order.append(name)
            allowed[name] = set(deps)
    return order, allowed


def room_of(path, rooms):
    room = os.path.dirname(path)
    return room if room in rooms else None


def main():
    args = sys.argv[1:]
    under = None
    if len(args) >= 2 and args[0] == '--under':
        under = args[1].rstrip('/')
        args = args[2:]
    top = os.path.abspath(args[0] if args else
                          os.path.join(os.path.dirname(__file__), '..'))
    order, allowed = read_rooms(os.path.join(top, 'contrib', 'rooms.txt'), under)
    files = []
    for base in ('ucx_ext', 'src'):
        if under is not None and not in_scope(base, under) and not in_scope(under, base):
            continue
        for d, _, names in os.walk(os.path.join(top, base)):
            for n in names:
                rel = os.path.relpath(os.path.join(d, n), top)
                if n.endswith(SUFFIXES) and in_scope(rel, under):
                    files.append(rel)
    known = set(files)
    errors = []
    graph = {}
    for f in sorted(files):
        room = room_of(f, order)
        if room is None:
            errors.append(f'{f}: in no room of contrib/rooms.txt')
            continue
        with open(os.path.join(top, f), encoding='utf-8', errors='replace') as h:
            text = h.read()
        edges = []
        for m in INCLUDE.finditer(text):
            kind, name = m.groups()
            cands = ([os.path.normpath(os.path.join(os.path.dirname(f), name))]
                     if kind == '"' else [])
            cands += [os.path.normpath(os.path.join(s, name)) for s in SEARCH]
            target = next((c for c in cands if c in known), None)
            if target is None:
                continue            # a system, UCX or generated header
            if not in_scope(target, under):
                line = text.count('\n', 0, m.start()) + 1
                errors.append(f'{f}:{line}: includes {target}, outside {under}')
                continue
            edges.append(target)
            troom = room_of(target, order)
            if troom != room and troom not in allowed[room]:
                line = text.count('\n', 0, m.start()) + 1
                why = ('runs back up' if order.index(troom) > order.index(room)
                       else 'is not among the rooms it declares')
                errors.append(f'{f}:{line}: includes {target} ({troom}): '
                              f'{room} {why}')
        graph[f] = edges
    # cycles: iterative depth-first search, reporting each cycle once
    state = {}
    for start in sorted(graph):
        if state.get(start):
            continue
        stack = [(start, iter(graph[start]))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
                continue
            s = state.get(nxt, 0)
            if s == 1:
                cyc = path[path.index(nxt):] + [nxt]
                errors.append('include cycle: ' + ' -> '.join(cyc))
            elif s == 0:
                state[nxt] = 1
                stack.append((nxt, iter(graph.get(nxt, ()))))
                path.append(nxt)
    if errors:
        print('\n'.join(errors))
        print(f'check-rooms: {len(errors)} problem(s) in {len(files)} files')
        return 1
    nedges = sum(len(e) for e in graph.values())
    print(f'check-rooms: {len(files)} files, {nedges} includes, {len(order)} '
          'rooms: no cycle, nothing runs back up')
    return 0


if __name__ == '__main__':
    sys.exit(main())
