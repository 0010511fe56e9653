#!/usr/bin/env python3
"""Fails when a Catch2 test case's name holds a ';'.

catch_discover_tests hands each name to ctest through a CMake list, which a ';' splits: the
test registered under the first half matches no test case, runs nothing and passes. Eighteen
test cases went unrun that way until issue 39 found them.
Usage: check_test_names.py SOURCE_DIR
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
bad = []
for path in sorted((root / "tests").rglob("*.cpp")):
    text = path.read_text(encoding="utf-8")
    for m in re.finditer(r'TEST_CASE\(((?:\s*"(?:[^"\\]|\\.)*")+)', text):
        name = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))
        if ";" in name:
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"  {path.relative_to(root)}:{line}: {name}")
if bad:
    print("test case names with ';' (ctest would split them and run nothing):")
    print("\n".join(bad))
    sys.exit(1)
print("no test case name holds a ';'")
