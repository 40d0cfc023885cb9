"""Prints the path of the test binary of the test target named argv[1], read from cargo's
`--message-format=json` on stdin (scripts/test.sh); fails unless exactly one was built."""

import json
import sys

name = sys.argv[1]
found = set()
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except json.JSONDecodeError:
        continue
    target = msg.get("target") or {}
    if (
        msg.get("reason") == "compiler-artifact"
        and target.get("name") == name
        and "test" in target.get("kind", [])
        and msg.get("executable")
    ):
        found.add(msg["executable"])
if len(found) != 1:
    sys.exit(f"expected one test binary named {name!r}, cargo built {sorted(found)}")
print(found.pop())
