#!/usr/bin/env python3
"""Every module a target imports must be among the targets it depends on (directly or through them).

SwiftPM builds targets in parallel; an import of a target that is not a dependency compiles only when that
module happens to be built first, so a clean checkout can fail where an incremental build passed. This
check finds such imports without building. Run from the package root; exit 1 names each offender."""
import glob, json, os, re, subprocess, sys

package = json.loads(subprocess.run(["swift", "package", "dump-package"], check=True,
                                     capture_output=True, text=True).stdout)
targets = {}
paths = {}
for t in package["targets"]:
    deps = set()
    for d in t.get("dependencies", []):
        for kind in ("byName", "target"):
            if kind in d:
                deps.add(d[kind][0])
    targets[t["name"]] = deps
    default = "Tests" if t["type"] == "test" else "Sources"
    paths[t["name"]] = t.get("path") or f"{default}/{t['name']}"

def closure(name, seen):
    for d in targets.get(name, ()):
        if d not in seen:
            seen.add(d)
            closure(d, seen)
    return seen

imports = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:package|public|internal|private|fileprivate)\s+)?import\s+(?:\w+\s+)?(\w+)")
bad = []
for name, path in paths.items():
    reach = closure(name, set())
    for file in glob.glob(os.path.join(path, "**", "*.swift"), recursive=True):
        for line in open(file, encoding="utf-8"):
            m = imports.match(line)
            if m and m.group(1) in targets and m.group(1) != name and m.group(1) not in reach:
                bad.append(f"{file}: imports {m.group(1)}, which target {name} does not depend on")
for line in sorted(set(bad)):
    print(line)
sys.exit(1 if bad else 0)
