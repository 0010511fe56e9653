#!/usr/bin/env python3
"""The rooms of the house and which include which, as docs/architecture.md draws them (issue 38).

docs/architecture.md holds, in a ```text block after the line `<!-- rooms: tests/check_rooms.py -->`,
one line per folder of the source: `ROOM -> ROOM ROOM ...` (or `ROOM -> nothing`), naming every other
folder whose headers its files include. This check reads the includes of every .cpp and .hpp of
each folder and fails when the drawing and the code disagree in either direction (an arrow drawn
that no include makes, an include no arrow draws), when a folder is missing from the drawing, or
when the arrows make a cycle (the house's rooms stand one above another).

Usage: check_rooms.py ROOT   (exit 1 and what disagrees)
"""
import os
import re
import sys

MARK = "<!-- rooms: tests/check_rooms.py -->"
NOT_ROOMS = {"tests", "bench", "web", "scripts", "docs", "examples", "build", "build-asan", ".git",
             ".ci", "node_modules"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([a-z_]+)/[^"]+"', re.M)


def rooms_of_code(root):
    rooms = {}
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if name in NOT_ROOMS or name.startswith(".") or name.startswith("build") or not os.path.isdir(path):
            continue
        files = [f for f in os.listdir(path) if f.endswith((".cpp", ".hpp"))]
        if not files:
            continue
        edges = set()
        for f in files:
            with open(os.path.join(path, f), encoding="utf-8") as src:
                for m in INCLUDE.finditer(src.read()):
                    if m.group(1) != name:
                        edges.add(m.group(1))
        rooms[name] = edges
    return rooms


def rooms_of_doc(root):
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as doc:
        text = doc.read()
    at = text.find(MARK)
    if at < 0:
        sys.exit(f"docs/architecture.md has no {MARK} block")
    block = re.search(r"```text\n(.*?)```", text[at:], re.S)
    if not block:
        sys.exit(f"docs/architecture.md: no ```text block after {MARK}")
    rooms = {}
    for line in block.group(1).splitlines():
        if not line.strip():
            continue
        m = re.match(r"\s*([a-z_]+)\s*->\s*(.*?)\s*$", line)
        if not m:
            sys.exit(f"docs/architecture.md: a line of the rooms block is not `ROOM -> ROOMS`: {line!r}")
        targets = m.group(2).split()
        rooms[m.group(1)] = set() if targets == ["nothing"] else set(targets)
    return rooms


def cycle(rooms):
    state = {}

    def visit(room, path):
        state[room] = "open"
        for other in sorted(rooms.get(room, ())):
            if state.get(other) == "open":
                return path + [room, other]
            if other not in state:
                found = visit(other, path + [room])
                if found:
                    return found
        state[room] = "done"
        return None

    for room in sorted(rooms):
        if room not in state:
            found = visit(room, [])
            if found:
                return found
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    code, doc = rooms_of_code(root), rooms_of_doc(root)
    problems = []
    for room in sorted(set(code) | set(doc)):
        if room not in doc:
            problems.append(f"{room}/ is not drawn (its arrows: {' '.join(sorted(code[room])) or 'nothing'})")
            continue
        if room not in code:
            problems.append(f"{room}/ is drawn but is no folder of the source")
            continue
        for other in sorted(code[room] - doc[room]):
            problems.append(f"{room}/ includes {other}/, which the drawing has no arrow for")
        for other in sorted(doc[room] - code[room]):
            problems.append(f"the drawing has {room} -> {other}, which no include of {room}/ makes")
    loop = cycle(code)
    if loop:
        problems.append("the rooms make a cycle: " + " -> ".join(loop))
    if problems:
        print("docs/architecture.md's rooms and the code disagree:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"{len(code)} rooms, drawn as the code has them, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
