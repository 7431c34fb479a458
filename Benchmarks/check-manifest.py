#!/usr/bin/env python3
"""Compares `traffic analyze --normalize-paths --format csv` (or `--format json`) output with the generator's
MANIFEST.json.

Usage: check-manifest.py ANALYZE.csv|ANALYZE.json MANIFEST.json [--same-as CLEARTEXT.MANIFEST.json] [--keyless]
Exits 0 when every host+path group matches the manifest exactly, 1 otherwise (differences on stdout).

For an HTTPS capture (`traffic-bench-gen --tls`, whose manifest has a "tls" object), give the JSON output of
`traffic analyze --keylog KEYS --normalize-paths --format json`: the summary must then say that every TLS
connection was decrypted (tls_decrypted == tls_connections == the manifest's count, no failed records), and
each group's tls_overhead_bytes must equal the manifest's. --same-as also checks that the HTTPS manifest's
groups are those of the cleartext capture of the same seed (every field but tls_overhead_bytes), so that
matching one proves the decrypted numbers equal the cleartext ones.

For an HTTP/2 capture (`traffic-bench-gen --h2`, whose manifest has an "http2" object), give the JSON output of
`traffic analyze --normalize-paths --format json`. Every group column must be there (a missing one is a
difference, not a skip: the check fails until the analyzer reports HTTP/2 records), including
request_header_decoded_bytes and response_header_decoded_bytes; header bytes are the HEADERS + CONTINUATION
frames as sent (line bytes 0), body bytes the DATA frames (9 + payload each). The summary must have the
manifest's request and response records, connections, h2_control_bytes (preface, SETTINGS, WINDOW_UPDATE, PING,
GOAWAY of both directions), no non-HTTP or missing bytes, no incomplete or unpaired messages, no decode errors
and no anomalies. --same-as then checks that the HTTP/2 capture carries the cleartext capture's exchanges
(records, methods, statuses, paths and body sizes per group).

For a QUIC capture (`traffic-bench-gen --quic`, whose manifest has a "quic" object), give the JSON output of
`traffic analyze --keylog KEYS --normalize-paths --format json`: the groups are checked as for HTTP/2 (every column
required; header bytes are the HEADERS frames as sent, body bytes the DATA frames, type + length + payload) and the
summary must have the manifest's records, quic_connections, quic_decrypted = quic_connections, http3_streams = the
request streams, no missing bytes, no incomplete or unpaired messages, no decode errors and no anomalies. With
--keyless, give the output of `traffic analyze --format json` without keys instead: one "(quic)" group per host whose
request_bytes and response_bytes are the UDP payload of its connections per direction (Σ = the manifest's
client_to_server_bytes and server_to_client_bytes), no HTTP records, quic_connections = the manifest's connections.
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


TLS_FIELDS = [(["tls_overhead_bytes"], "tls_overhead_bytes")]

HTTP2_FIELDS = [
    (["request_header_decoded_bytes"], "request_header_decoded_bytes"),
    (["response_header_decoded_bytes"], "response_header_decoded_bytes"),
]

# Fields an HTTP/2 manifest shares with the cleartext manifest of the same seed and size (the same exchanges).
SAME_EXCHANGES = ["host", "path", "requests", "responses", "methods", "statuses", "distinct_paths",
                  "request_encoded_body_bytes", "request_decoded_body_bytes", "response_encoded_body_bytes",
                  "response_decoded_body_bytes", "gzip_responses"]


def check_http2_summary(summary, manifest, problems):
    """The HTTP/2 capture's summary: the generator's expected totals, and nothing the clean capture cannot have."""
    h2 = manifest["http2"]
    expected = [("requests", h2["request_records"]), ("responses", h2["response_records"]),
                ("connections", manifest["connections"]), ("h2_control_bytes", h2["h2_control_bytes"]),
                ("non_http_bytes", 0), ("missing_bytes", 0), ("incomplete_messages", 0),
                ("unpaired_requests", 0), ("unpaired_responses", 0), ("decode_errors", 0)]
    for name, want in expected:
        if name not in summary:
            problems.append(f"summary: no {name} (does the analyzer report HTTP/2?), expected {want}")
        elif summary[name] != want:
            problems.append(f"summary: {name} = {summary[name]}, expected {want}")
    if summary.get("anomalies"):
        problems.append(f"summary: anomalies {summary['anomalies']}, expected none")


def check_quic_summary(summary, manifest, problems, keyless):
    """The QUIC capture's summary, with keys (HTTP/3 records) or without (QUIC records only)."""
    q = manifest["quic"]
    expected = [("quic_connections", q["connections"]), ("connections", 0), ("missing_bytes", 0),
                ("decode_errors", 0), ("incomplete_messages", 0), ("unpaired_requests", 0),
                ("unpaired_responses", 0), ("non_http_bytes", 0)]
    if keyless:
        expected += [("requests", 0), ("responses", 0), ("quic_decrypted", 0), ("http3_streams", 0)]
    else:
        expected += [("requests", q["request_records"]), ("responses", q["response_records"]),
                     ("quic_decrypted", q["connections"]), ("http3_streams", q["request_streams"])]
    for name, want in expected:
        if name not in summary:
            problems.append(f"summary: no {name} (does the analyzer report QUIC?), expected {want}")
        elif summary[name] != want:
            problems.append(f"summary: {name} = {summary[name]}, expected {want}")
    if summary.get("anomalies"):
        problems.append(f"summary: anomalies {summary['anomalies']}, expected none")


def check_quic_keyless(rows, manifest, problems):
    """Without keys: one (quic) group per host carrying its connections' UDP payload per direction."""
    q = manifest["quic"]
    expected = {(host, "(quic)"): h for host, h in q["hosts"].items()}
    sums = [0, 0]
    for key in sorted(set(expected) | set(rows)):
        if key not in rows:
            problems.append(f"{key[0]} {key[1]}: in the manifest, not in the analysis")
            continue
        if key not in expected:
            problems.append(f"{key[0]} {key[1]}: in the analysis, not in the manifest")
            continue
        row, h = rows[key], expected[key]
        sums[0] += int(row.get("request_bytes") or 0)
        sums[1] += int(row.get("response_bytes") or 0)
        for column, field in [("request_bytes", "client_to_server_bytes"), ("response_bytes", "server_to_client_bytes"),
                              ("requests", None), ("responses", None)]:
            want = h[field] if field else 0
            if column not in row:
                problems.append(f"{key[0]} {key[1]}: no column {column} in the analysis")
            elif int(row[column] or 0) != want:
                problems.append(f"{key[0]} {key[1]}: {column} = {row[column]}, expected {want}")
    for got, field in zip(sums, ["client_to_server_bytes", "server_to_client_bytes"]):
        if got != q[field]:
            problems.append(f"quic records: sum = {got}, manifest {field} = {q[field]}")
    return len(expected)


def read_analysis(path):
    """The groups (host, path) -> row, and the summary (None for CSV)."""
    with open(path, newline="") as f:
        text = f.read()
    if text.lstrip().startswith("{"):
        report = json.loads(text)
        return {(g["host"], g["path"]): g for g in report["groups"]}, report.get("summary")
    return {(r["host"], r["path"]): r for r in csv.DictReader(text.splitlines())}, None


def main(analysis_path, manifest_path, cleartext_manifest_path=None, keyless=False):
    with open(manifest_path) as f:
        manifest = json.load(f)
    expected = {(e["host"], e["path"]): e for e in manifest["endpoints"]}
    rows, summary = read_analysis(analysis_path)
    problems = []
    tls = manifest.get("tls")
    http2 = manifest.get("http2")
    quic = manifest.get("quic")
    if quic:
        if summary is None:
            print("QUIC manifest: give the JSON output, whose summary has quic_connections")
            return 1
        check_quic_summary(summary, manifest, problems, keyless)
        if keyless:
            count = check_quic_keyless(rows, manifest, problems)
            for problem in problems:
                print(problem)
            print(f"{count} (quic) groups checked against the manifest (UDP payload {quic['client_to_server_bytes']} + "
                  f"{quic['server_to_client_bytes']} bytes, {summary.get('quic_connections')} of "
                  f"{quic['connections']} QUIC connections), {len(problems)} differences")
            return 1 if problems else 0
        http2 = quic  # the HTTP/3 groups are checked by the HTTP/2 contract
    fields = FIELDS + (TLS_FIELDS if tls else []) + (HTTP2_FIELDS if http2 else [])
    if http2 and not quic:
        if summary is None:
            problems.append("HTTP/2 manifest: give the JSON output, whose summary has h2_control_bytes")
        else:
            check_http2_summary(summary, manifest, problems)
    if tls:
        if summary is None:
            problems.append("HTTPS manifest: give the JSON output, whose summary says what was decrypted")
        else:
            for name, want in [("tls_connections", tls["connections"]), ("tls_decrypted", tls["connections"]),
                               ("tls_failed_records", 0), ("tls_no_key", 0), ("tls_decrypt_failed", 0)]:
                if summary.get(name) != want:
                    problems.append(f"summary: {name} = {summary.get(name)}, expected {want}")
    if cleartext_manifest_path:
        with open(cleartext_manifest_path) as f:
            cleartext = json.load(f)
        if http2:
            strip = lambda e: {k: e.get(k) for k in SAME_EXCHANGES}
        else:
            strip = lambda e: {k: v for k, v in e.items() if k != "tls_overhead_bytes"}
        if [strip(e) for e in manifest["endpoints"]] != [strip(e) for e in cleartext["endpoints"]]:
            problems.append(f"{manifest_path}: its groups differ from those of {cleartext_manifest_path}")
        elif manifest["connections"] != cleartext["connections"]:
            problems.append(f"{manifest_path}: {manifest['connections']} connections, cleartext {cleartext['connections']}")
    for key in sorted(set(expected) | set(rows)):
        if key not in rows:
            problems.append(f"{key[0]} {key[1]}: in the manifest, not in the analysis")
            continue
        if key not in expected:
            problems.append(f"{key[0]} {key[1]}: in the analysis, not in the manifest")
            continue
        row, entry = rows[key], expected[key]
        for columns, field in fields:
            if field not in entry:
                continue
            if not all(c in row for c in columns):
                if http2:  # every column is required: a missing one is a failure, not a skip
                    missing = [c for c in columns if c not in row]
                    problems.append(f"{key[0]} {key[1]}: no column {', '.join(missing)} in the analysis")
                continue
            got = sum(int(row[c] or 0) for c in columns)
            if got != entry[field]:
                problems.append(f"{key[0]} {key[1]}: {'+'.join(columns)} = {got}, manifest {field} = {entry[field]}")
    for problem in problems:
        print(problem)
    what = "groups checked against the manifest"
    if tls and summary is not None:
        what += f" (and {summary.get('tls_decrypted')} of {summary.get('tls_connections')} TLS connections decrypted)"
    if quic and summary is not None:
        what += f" (and the QUIC summary: {quic['request_records']} + {quic['response_records']} HTTP/3 records, " \
                f"{summary.get('quic_decrypted')} of {quic['connections']} QUIC connections decrypted)"
    elif http2 and summary is not None:
        what += f" (and the HTTP/2 summary: {http2['request_records']} + {http2['response_records']} records, " \
                f"h2_control_bytes {http2['h2_control_bytes']})"
    if cleartext_manifest_path:
        what += ", the same exchanges as the cleartext manifest" if http2 else ", the same groups as the cleartext manifest"
    print(f"{len(expected)} {what}, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    same_as = None
    keyless = "--keyless" in args
    if keyless:
        args.remove("--keyless")
    if "--same-as" in args:
        i = args.index("--same-as")
        if i + 1 >= len(args):
            sys.exit(__doc__)
        same_as = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    sys.exit(main(args[0], args[1], same_as, keyless))
