#!/usr/bin/env python3
"""Checks `traffic analyze --format har` for every capture given: valid against the HAR 1.2 schema
(Tests/Schemas/har-1.2.schema.json, jsonschema), loaded by a real HAR consumer (haralyzer, from PyPI), and equal,
entry by entry, to the `--messages` records of the same capture (the sizes as `traffic` lists them).

The expected side is built here from the JSON records, independently of the HAR writer: records are grouped into
exchanges by (connection, index), the request and the last (final) response of each; an HTTP/2 server push
(flag `pushed`, no index) by (connection, stream). Prints `ok <capture>` or
`FAIL <capture>: <why>` per capture; exits 0 when every capture passed, 1 otherwise, 77 when a Python module
is missing (the Swift test then skips, saying which).
"""
import argparse
import json
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP jsonschema is missing: pip install jsonschema (make deps)")
    sys.exit(77)
try:
    from haralyzer import HarEntry, HarParser
except ImportError:
    print("SKIP haralyzer is missing: pip install haralyzer (make deps)")
    sys.exit(77)


def run(traffic, args):
    result = subprocess.run([traffic, "analyze", *args], capture_output=True)
    if result.returncode != 0:
        raise RuntimeError(f"traffic {' '.join(args)} exited {result.returncode}: {result.stderr.decode(errors='replace')}")
    return result.stdout


def exchanges(messages):
    """Records in listing order, grouped like a HAR writer must: one exchange per (connection, index), one per
    pushed stream; in the order of their first records."""
    groups, order = {}, []
    for record in messages:
        if record["kind"] in ("tls", "quic"):
            continue
        if "pushed" in record["flags"]:
            key = (record.get("capture"), record["connection"], "push", record.get("stream_id"))
        else:
            key = (record.get("capture"), record["connection"], record["index"])
        if key not in groups:
            groups[key] = {"request": None, "responses": []}
            order.append(key)
        if record["kind"] == "request":
            groups[key]["request"] = record
        else:
            groups[key]["responses"].append(record)
    return [groups[key] for key in order]


def check(traffic, schema, capture, extra):
    har_bytes = run(traffic, ["--format", "har", *extra, capture])
    har = json.loads(har_bytes)
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(har), key=lambda e: list(e.path))
    if errors:
        return f"schema: {errors[0].message} at {'/'.join(map(str, errors[0].path))} ({len(errors)} errors)"
    messages = json.loads(run(traffic, ["--format", "json", "--messages", *extra, capture]))["messages"]
    expected = exchanges(messages)

    # The consumer: haralyzer reads the file as a user's script would; every entry must come back. Its pages
    # order entries by startedDateTime, so entries are compared in file order through its HarEntry.
    parser = HarParser(har)
    loaded = sum(len(page.entries) for page in parser.pages)
    if loaded != len(expected):
        return f"haralyzer read {loaded} entries, the records make {len(expected)} exchanges"
    entries = [HarEntry(raw) for raw in har["log"]["entries"]]
    for n, (entry, exchange) in enumerate(zip(entries, expected)):
        where = f"entry {n}"
        request, responses = exchange["request"], exchange["responses"]
        response = responses[-1] if responses else None
        if entry.startTime is None:
            return f"{where}: haralyzer cannot read startedDateTime {entry['startedDateTime']!r}"
        timings = entry["timings"]
        total = sum(timings[k] for k in ("blocked", "dns", "connect", "send", "wait", "receive") if timings.get(k, -1) >= 0)
        if abs(total - entry["time"]) > 1e-6:
            return f"{where}: time {entry['time']} is not the sum of its timings {total}"
        if request is not None:
            got = (entry.request.method, entry.request.headersSize, entry.request.bodySize)
            # A request whose header block could not be decoded (HTTP/2 `hpack_error`) has no method: HAR says "(unknown)".
            want = (request["method"] or "(unknown)", request["line_bytes"] + request["header_bytes"], request["body_bytes"])
            if got != want:
                return f"{where}: request (method, headersSize, bodySize) {got} != records {want}"
            path = request["path"] + ("?" + request["query"] if request["query"] is not None else "")
            if request["method"] != "CONNECT" and not entry.request.url.endswith(request["host"] + path):
                return f"{where}: url {entry.request.url} is not host {request['host']} + {path}"
            if bool(request["complete"]) == ("_missing_bytes" in entry["request"]):
                return f"{where}: request _missing_bytes present for a complete record or absent for an incomplete one"
        elif responses and "pushed" in responses[0]["flags"]:
            pushed = responses[0]
            if entry.get("_pushed") is not True or entry.get("_unknown_request"):
                return f"{where}: a pushed stream lacks _pushed"
            path = pushed["path"] + ("?" + pushed["query"] if pushed["query"] is not None else "")
            method = pushed["method"] or "(unknown)"
            if entry.request.method != method or not entry.request.url.endswith(pushed["host"] + path):
                return f"{where}: a pushed stream's request is not its PUSH_PROMISE's {pushed['method']} {path}"
        elif not entry.get("_unknown_request"):
            return f"{where}: a response without its request lacks _unknown_request"
        if response is None:
            if entry.response.status != 0 or entry.get("_incomplete") is not True:
                return f"{where}: an unanswered request must have status 0 and _incomplete"
            continue
        decoded = response["decoded_body_bytes"]
        got = (entry.response.status, entry.response.headersSize, entry.response.bodySize,
               entry.response.contentSize, entry["response"]["_transferSize"])
        want = (response["status"] or 0, response["line_bytes"] + response["header_bytes"], response["body_bytes"],
                decoded if decoded is not None else -1, response["transfer_bytes"])
        if got != want:
            return f"{where}: response (status, headersSize, bodySize, content.size, _transferSize) {got} != records {want}"
        if decoded is not None and entry["response"]["content"].get("compression") != decoded - response["encoded_body_bytes"]:
            return f"{where}: content.compression is not decoded - encoded body bytes"
        content_type = response["content_type"] or ""
        if entry.response.mimeType != content_type:
            return f"{where}: mimeType {entry.response.mimeType!r} != content_type {content_type!r}"
    # The consumer's own sums over the page agree with the records'.
    pages = parser.pages
    transfer = sum(p.get_total_size_trans(p.entries) for p in pages)
    want_transfer = sum(e["responses"][-1]["transfer_bytes"] for e in expected if e["responses"])
    if transfer != want_transfer:
        return f"haralyzer's transfer size {transfer} != records' {want_transfer}"
    return None


def main():
    arguments = argparse.ArgumentParser(description=__doc__)
    arguments.add_argument("--traffic", required=True)
    arguments.add_argument("--schema", required=True)
    arguments.add_argument("--extra", action="append", default=[], help="an extra argument for both runs")
    arguments.add_argument("captures", nargs="+")
    options = arguments.parse_args()
    with open(options.schema) as f:
        schema = json.load(f)
    jsonschema.Draft7Validator.check_schema(schema)
    failed = False
    for capture in options.captures:
        try:
            problem = check(options.traffic, schema, capture, options.extra)
        except Exception as error:  # a crash of the consumer is a failure of the file, named
            problem = f"{type(error).__name__}: {error}"
        if problem:
            failed = True
            print(f"FAIL {capture}: {problem}")
        else:
            print(f"ok {capture}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
