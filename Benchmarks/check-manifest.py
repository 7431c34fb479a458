#!/usr/bin/env python3
"""Compares `traffic analyze --normalize-paths --format csv` output with the generator's MANIFEST.json.

Usage: check-manifest.py ANALYZE.csv MANIFEST.json
Exits 0 when every host+path group matches the manifest exactly, 1 otherwise (differences on stdout).
"""
import csv
import json
import sys

# analyze CSV column (or sum of columns) -> manifest field
FIELDS = [
    (["requests"], "requests"),
    (["responses"], "responses"),
    (["request_bytes"], "request_transfer_bytes"),
    (["request_line_bytes", "request_header_bytes"], "request_head_bytes"),
    (["request_cookie_bytes"], "request_cookie_bytes"),
    (["request_body_bytes"], "request_body_bytes"),
    (["request_decoded_body_bytes"], "request_decoded_body_bytes"),
    (["response_bytes"], "response_transfer_bytes"),
    (["response_line_bytes", "response_header_bytes"], "response_head_bytes"),
    (["response_cookie_bytes"], "response_cookie_bytes"),
    (["response_body_bytes"], "response_body_bytes"),
    (["response_decoded_body_bytes"], "response_decoded_body_bytes"),
]


def main(csv_path, manifest_path):
    with open(manifest_path) as f:
        manifest = json.load(f)
    expected = {(e["host"], e["path"]): e for e in manifest["endpoints"]}
    with open(csv_path, newline="") as f:
        rows = {(r["host"], r["path"]): r for r in csv.DictReader(f)}
    problems = []
    for key in sorted(set(expected) | set(rows)):
        if key not in rows:
            problems.append(f"{key[0]} {key[1]}: in the manifest, not in the analysis")
            continue
        if key not in expected:
            problems.append(f"{key[0]} {key[1]}: in the analysis, not in the manifest")
            continue
        row, entry = rows[key], expected[key]
        for columns, field in FIELDS:
            if not all(c in row for c in columns):
                continue
            got = sum(int(row[c] or 0) for c in columns)
            if got != entry[field]:
                problems.append(f"{key[0]} {key[1]}: {'+'.join(columns)} = {got}, manifest {field} = {entry[field]}")
    for problem in problems:
        print(problem)
    print(f"{len(expected)} groups checked against the manifest, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
