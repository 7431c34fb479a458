#!/usr/bin/env python3
"""Checks that `traffic analyze --format ndjson` lists the same records as `--messages --format json`.

Usage: ndjson-check.py TRAFFIC_BINARY [analyze arguments and captures...]

NDJSON records appear as they complete, so their order may differ between runs with several jobs: the two
listings are compared as multisets of records, each record with its fields in the order written. The JSON
listing names the capture only when there are several; NDJSON always does, so it is added to the JSON's.
Prints one line of counts; exit 1 with the first differences when the sets differ."""
import collections, json, subprocess, sys

binary, args = sys.argv[1], sys.argv[2:]
captures = [a for a in args if not a.startswith("-")]
listing = json.loads(subprocess.run([binary, "analyze", "--messages", "--format", "json"] + args,
                                    check=True, capture_output=True, text=True).stdout)
ndjson = subprocess.run([binary, "analyze", "--format", "ndjson"] + args, check=True, capture_output=True,
                        text=True).stdout
expected = collections.Counter()
for record in listing.get("messages", []):
    if "capture" not in record:
        record = {"capture": listing["captures"][0]["path"], **record}
    expected[json.dumps(record)] += 1
found = collections.Counter()
lines = ndjson.splitlines()
for line in lines:
    found[json.dumps(json.loads(line))] += 1
missing, extra = expected - found, found - expected
print(f"ndjson: {len(lines)} records, --messages json: {sum(expected.values())}; "
      f"{sum(missing.values())} missing, {sum(extra.values())} extra")
for record in list(missing)[:3]:
    print("missing:", record)
for record in list(extra)[:3]:
    print("extra:", record)
sys.exit(1 if missing or extra else 0)
