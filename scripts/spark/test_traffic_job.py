#!/usr/bin/env python3
"""Tests of scripts/spark/traffic_job.py.

    python3 scripts/spark/test_traffic_job.py --traffic .build/debug/traffic

1. Unit tests of the reduction rules on hand-made reports (no Spark, no binary).
2. With the binary: the reduction of per-capture reports of real samples adds up to one `traffic analyze` over
   all of them (sums only: percentiles are `traffic merge`'s to recompute). No Spark.
3. With Java, pyspark and a binary that has `traffic merge`: the job under spark-submit in local mode
   (local[2]) over a temporary folder of samples, compared byte for byte with `traffic merge` of the per-capture
   reports (JSON from a local folder; CSV through the Hadoop FileSystem path, with an unreadable capture skipped);
   and without --skip-unreadable the job fails naming that capture.

What cannot run prints one `SKIP: <reason>` line and does not fail (exit 0); a failure exits 1 after printing
`FAIL: ...`. EndToEndTests/SparkJobTests.swift runs this script in `swift test`.
"""

import argparse
import contextlib
import copy
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
import traffic_job as job  # noqa: E402  (the module under test, beside this file)

SAMPLES = ["http-basic.pcap", "http-pipelined.pcap", "http-encodings.pcap", "http2-h2c-prior.pcap", "quic-h3.pcap",
           "http-basic.pcap.gz"]
UNREADABLE = "malformed/random-bytes.pcap"  # traffic exits 3: not a pcap or pcapng capture


class Failure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failure(message)


# ---------------------------------------------------------------------------------------------------------------
# 1. The reduction rules on fixtures: every rule of the JSON contract once.

GROUPING = {"group_by": ["host", "path"], "normalize_paths": False, "path_templates": [], "host": None,
            "path": None, "filter": None, "overhead": []}


def fixture(index, duration, groups, not_analysed, anomalies, **settings):
    grouping = dict(GROUPING, **settings)
    # Text, parsed the way the job parses the binary's output: the durations are decimals from the start.
    return job.parse_report(job.dump_json({
        "schema": "traffic.report/1",
        "captures": [{"path": f"run{index}.pcap", "packets": 10 + index, "duration": "DURATION"}],
        "summary": {"captures": 1, "packets": 10 + index, "duration": "DURATION", "tls_decrypted": 0,
                    "not_analysed": not_analysed, "anomalies": anomalies, "encapsulated_packets": {"vlan": index},
                    "future_count": 2, "future_label": f"label{index}"},
        "groups": groups,
        "messages": [{"anything": 1}],
        "grouping": grouping,
        "merge_layout": ["requests", "responses"],
    }).replace('"DURATION"', duration))


def group(host, path, requests, header_decoded, sums, waits, wait_max, median=Decimal("0.000036")):
    return {"host": host, "path": path, "requests": requests, "total_bytes": 100 * requests,
            "wait_median_seconds": median, "wait_p95_seconds": median,
            "request_header_decoded_bytes": header_decoded,
            "merge_state": {"sums": sums, "waits": waits, "wait_max_us": wait_max}}


def fixtures():
    return [
        fixture(0, "0.100000001",
                [group("a.test", "/x", 1, None, [1, 2], [[3, 1], [7, 2]], 40),
                 group("b.test", "/y", 2, 50, [2, 0], [], 0)],
                [{"kind": "quic", "connections": 1, "message": "1 of 1 QUIC connection ..."}],
                {"zero_window": 1}),
        fixture(1, "0.200000002",
                [group("b.test", "/y", 3, None, [3, 1], [[5, 1]], 9),
                 group("a.test", "/x", 4, 7, [4, 4], [[7, 1], [1, 1]], 80)],
                [{"kind": "tls", "connections": 2, "message": "2 TLS ..."},
                 {"kind": "quic", "connections": 3, "message": "3 of 3 QUIC connections ..."}],
                {"zero_window": 2, "rst": 1}),
        fixture(2, "0.300000003",
                [group("c.test", "/z", 1, None, [1, 1], [], 0)],
                [], {}),
    ]


def test_reduction_rules():
    reports = fixtures()
    originals = copy.deepcopy(reports)
    reduced = job.reduce_reports(reports)
    expect(reports == originals, "the reduction changed its inputs")
    expect(list(reduced) == ["schema", "captures", "summary", "groups", "grouping", "merge_layout"],
           f"top-level keys {list(reduced)}: messages dropped, settings kept last")
    expect([c["path"] for c in reduced["captures"]] == ["run0.pcap", "run1.pcap", "run2.pcap"],
           "captures concatenated in capture order")

    summary = reduced["summary"]
    expect(summary["captures"] == 3 and summary["packets"] == 33 and summary["future_count"] == 6,
           f"integer summary fields summed: {summary}")
    # 0.1 + 0.2 + 0.3 with nanoseconds: binary floats would give 0.6000000060000001.
    expect(job.dump_json(summary["duration"]) == "0.600000006", f"duration {summary['duration']!r}")
    expect(summary["future_label"] == "label0", "unknown non-integer fields keep the first value")
    expect(summary["anomalies"] == {"zero_window": 3, "rst": 1}, f"anomalies {summary['anomalies']}")
    expect(summary["encapsulated_packets"] == {"vlan": 3}, f"encapsulated {summary['encapsulated_packets']}")
    kinds = {entry["kind"]: entry["connections"] for entry in summary["not_analysed"]}
    expect(kinds == {"quic": 4, "tls": 2}, f"not_analysed merged by kind: {summary['not_analysed']}")

    groups = {(g["host"], g["path"]): g for g in reduced["groups"]}
    expect([(g["host"], g["path"]) for g in reduced["groups"]] == [("a.test", "/x"), ("b.test", "/y"),
                                                                   ("c.test", "/z")],
           "groups in the order a merge one report after another meets them")
    a, b = groups[("a.test", "/x")], groups[("b.test", "/y")]
    expect(a["requests"] == 5 and a["total_bytes"] == 500, f"integer group fields summed: {a}")
    expect(a["request_header_decoded_bytes"] == 7, "null + x = x")
    expect(b["request_header_decoded_bytes"] == 50, "x + null = x")
    expect(groups[("c.test", "/z")]["request_header_decoded_bytes"] is None, "null alone stays null")
    expect(all(g["wait_median_seconds"] is None and g["wait_p95_seconds"] is None for g in reduced["groups"]),
           "percentiles nulled (`traffic merge` recomputes them)")
    expect(a["merge_state"] == {"sums": [5, 6], "waits": [[1, 1], [3, 1], [7, 3]], "wait_max_us": 80},
           f"merge_state: sums elementwise, waits per bucket in bucket order, max of maxima: {a['merge_state']}")
    expect(b["merge_state"] == {"sums": [5, 1], "waits": [[5, 1]], "wait_max_us": 9}, f"{b['merge_state']}")

    # Spark pairs values in any order and tree shape: every order gives the same report.
    rng = random.Random(27)
    columns = job.key_columns(reports[0])
    for _ in range(50):
        keyed = [kv for index, report in enumerate(reports) for kv in job.keyed_groups(index, report)]
        rng.shuffle(keyed)
        by_key = {}
        for key, value in keyed:
            by_key[key] = job.reduce_keyed(value, by_key[key], columns) if key in by_key else value
        parts = [job.partial(index, report) for index, report in enumerate(reports)]
        rng.shuffle(parts)
        while len(parts) > 1:  # a random tree of pairwise combinations, like treeReduce's
            i = rng.randrange(len(parts) - 1)
            parts[i:i + 2] = [job.combine_partials(parts[i], parts[i + 1])]
        shuffled = job.assemble(reports[0], parts[0], list(by_key.items()))
        expect(job.dump_json(shuffled) == job.dump_json(reduced), "the reduction depends on the order")


def test_settings_must_match():
    reports = fixtures()
    reports[2] = fixture(2, "0.3", [], [], {}, normalize_paths=True)
    try:
        job.reduce_reports(reports)
    except job.JobError as error:
        expect("grouping.normalize_paths: false vs true" in str(error), f"message: {error}")
    else:
        raise Failure("reports with different --normalize-paths merged")
    reports[2] = fixture(2, "0.3", [], [], {})
    reports[2]["merge_layout"] = ["requests"]
    try:
        job.reduce_reports(reports)
    except job.JobError as error:
        expect("merge_layout" in str(error), f"message: {error}")
    else:
        raise Failure("reports with different merge layouts merged")


def test_group_keys():
    # The key is every group_by column in order: host,status groups of one host stay apart by status.
    report = fixtures()[0]
    report["grouping"]["group_by"] = ["status", "host"]
    for g in report["groups"]:
        g.pop("path")
        g["status"] = "200"
    report["groups"][1]["host"] = "a.test"
    report["groups"][1]["status"] = "404"
    keys = [key for key, _ in job.keyed_groups(0, report)]
    expect(keys == [("200", "a.test"), ("404", "a.test")], f"keys {keys}")
    # A report without `grouping` (traffic before `merge`) is keyed by the dimension columns it has.
    del report["grouping"]
    expect(job.key_columns(report) == ("host", "status"), f"{job.key_columns(report)}")


def test_json_round_trip():
    text = '{"a":1795240650.351059000,"b":[3.6E-5,null,true,"x\\u00e9"],"c":0.000000001}'
    expect(job.dump_json(job.parse_report(text)) == '{"a":1795240650.351059000,"b":[0.000036,null,true,"x\\u00e9"],'
                                                    '"c":1E-9}', job.dump_json(job.parse_report(text)))
    expect(json.loads(job.dump_json(job.parse_report(text)))["c"] == 1e-9, "still JSON")


def test_arguments():
    args = job.parse_arguments(["--captures", "d", "--traffic", "t", "--format", "csv", "--",
                                "--group-by", "host,status", "--normalize-paths"])
    expect(args.extra == ["--group-by", "host,status", "--normalize-paths"], f"{args.extra}")
    for reserved in (["--format", "csv"], ["-o", "x"], ["--messages"], ["--format=csv"]):
        try:
            with contextlib.redirect_stderr(io.StringIO()):  # argparse's usage lines
                job.parse_arguments(["--captures", "d", "--traffic", "t", "--"] + reserved)
        except SystemExit as exit:
            expect(exit.code == 2, f"{reserved}: exit {exit.code}")
        else:
            raise Failure(f"{reserved} after -- accepted")


def test_listing():
    with tempfile.TemporaryDirectory() as folder:
        for name in ["b.pcap", "a.pcapng.gz", "sub/c.pcap.gz", "notes.txt", "d.pcapng", "e.pcap.zst"]:
            os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
            open(os.path.join(folder, name), "wb").close()
        found = [os.path.relpath(p, folder) for p in job.list_local(folder)]
        expect(found == ["a.pcapng.gz", "b.pcap", "d.pcapng", "sub/c.pcap.gz"], f"listing {found}")


UNIT_TESTS = [test_reduction_rules, test_settings_must_match, test_group_keys, test_json_round_trip,
              test_arguments, test_listing]


# ---------------------------------------------------------------------------------------------------------------
# Helpers for the binary.


def run(command, **kwargs):
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def analyze(traffic, capture, extra=()):
    done = run([traffic, "analyze", "--format", "json"] + list(extra) + [capture])
    expect(done.returncode == 0, f"traffic analyze {capture}: exit {done.returncode}: {done.stderr.decode()}")
    return done.stdout


def sample_folder(scratch, unreadable=False):
    """A temporary folder of the samples that exist (the job reads every capture under a folder)."""
    folder = os.path.join(scratch, "captures-unreadable" if unreadable else "captures")
    if os.path.isdir(folder):
        return folder
    os.makedirs(folder)
    for name in SAMPLES + ([UNREADABLE] if unreadable else []):
        source = os.path.join(ROOT, "samples", name)
        if os.path.exists(source):
            shutil.copy(source, os.path.join(folder, os.path.basename(name)))
    return folder


def test_sums_equal_one_analyze(traffic, scratch):
    """The reduction of per-capture reports adds up to one analyze over all the captures: the key columns and
    the summing rules are those of the engine. Percentiles are left out: only `traffic merge` can redo them."""
    folder = sample_folder(scratch)
    paths = job.list_local(folder)
    for extra in ([], ["--group-by", "host,method,status,content-type", "--normalize-paths"]):
        reduced = job.reduce_reports([job.parse_report(analyze(traffic, p, extra)) for p in paths])
        whole = job.parse_report(run([traffic, "analyze", "--format", "json"] + extra + paths).stdout)
        expect(reduced["captures"] == whole["captures"], "captures differ")
        for name, value in whole["summary"].items():
            if name == "not_analysed":
                value = [{k: v for k, v in e.items() if k != "message"} for e in value]
                mine = [{k: v for k, v in e.items() if k != "message"} for e in reduced["summary"][name]]
                expect(sorted(map(job.dump_json, mine)) == sorted(map(job.dump_json, value)), f"{name} differs")
            else:
                expect(reduced["summary"].get(name) == value,
                       f"summary {name}: {reduced['summary'].get(name)} reduced, {value} in one analyze")
        columns = job.key_columns(whole)
        mine = {job.group_key(g, columns): g for g in reduced["groups"]}
        theirs = {job.group_key(g, columns): g for g in whole["groups"]}
        expect(set(mine) == set(theirs), f"group keys differ: {set(mine) ^ set(theirs)}")
        for key, g in theirs.items():
            for name, value in g.items():
                if name not in job.RECOMPUTED_GROUP_FIELDS:
                    expect(mine[key].get(name) == value, f"group {key} {name}: {mine[key].get(name)} vs {value}")
    return len(paths)


# ---------------------------------------------------------------------------------------------------------------
# 3. The job under spark-submit.


def spark_unavailable():
    """Why the Spark test cannot run here, or None."""
    java = shutil.which("java")
    if os.environ.get("JAVA_HOME") and os.path.exists(os.path.join(os.environ["JAVA_HOME"], "bin", "java")):
        java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    if not java:
        return "no java on PATH (make spark-deps installs default-jre-headless)"
    try:
        import pyspark
    except ImportError as error:
        return f"pyspark cannot be imported ({error}; make spark-deps installs it from PyPI)"
    version = run([java, "-version"]).stderr.decode("utf-8", "replace")
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version)
    major = int(match.group(1)) if match else 0
    if major == 1 and match.group(2):  # "1.8.0_x" is Java 8
        major = int(match.group(2))
    needed = 17 if int(pyspark.__version__.split(".")[0]) >= 4 else 8
    if major < needed:
        return f"pyspark {pyspark.__version__} needs Java {needed} or later; java is {major or 'unknown'}"
    submit = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
    if not os.access(submit, os.X_OK):
        return f"{submit} is missing"
    return None


def spark_submit(arguments, scratch):
    import pyspark

    submit = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
    env = dict(os.environ)
    # The driver and the workers run this interpreter (the one pyspark was imported into).
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env["SPARK_LOCAL_IP"] = "127.0.0.1"  # no lookup of the host's name, no network interface needed
    command = [submit, "--master", "local[2]", "--conf", "spark.ui.enabled=false",
               "--conf", f"spark.local.dir={scratch}", "--driver-memory", "512m",
               os.path.join(HERE, "traffic_job.py")] + arguments
    start = time.monotonic()
    done = run(command, env=env, cwd=scratch)
    return done, time.monotonic() - start


def merged_reference(traffic, paths, extra, fmt, scratch, name):
    """What the job must print: `traffic merge` of `traffic analyze --format json` of each capture."""
    reports = []
    for index, path in enumerate(paths):
        report = os.path.join(scratch, f"{name}-{index}.json")
        with open(report, "wb") as out:
            out.write(analyze(traffic, path, extra))
        reports.append(report)
    out = os.path.join(scratch, f"{name}.{fmt}")
    done = run([traffic, "merge"] + reports + ["--format", fmt, "-o", out])
    expect(done.returncode == 0, f"traffic merge: exit {done.returncode}: {done.stderr.decode()}")
    return open(out, "rb").read(), reports


def check_reduced(reduced_path, report_paths, rename=None):
    """The reduced JSON the job hands to `traffic merge` is the pure-Python reduction of the per-capture reports:
    what Spark did equals the rules tested above."""
    reports = [job.parse_report(open(p, "rb").read()) for p in report_paths]
    for report in reports:
        report.pop("messages", None)
        if rename:
            for capture in report["captures"]:
                job.rename_capture(report, capture["path"], rename(capture["path"]))
    expected = job.dump_json(job.reduce_reports(reports)) + "\n"
    expect(open(reduced_path).read() == expected, f"{reduced_path} is not the reduction of the per-capture reports")


def test_spark(traffic, scratch, rendered):
    timings = []
    # A: a local folder, JSON, default grouping.
    folder = sample_folder(scratch)
    paths = job.list_local(folder)
    out, reduced = os.path.join(scratch, "job-a.json"), os.path.join(scratch, "job-a.reduced.json")
    done, seconds = spark_submit(["--captures", folder, "--traffic", traffic, "--format", "json", "-o", out,
                                  "--reduced", reduced], scratch)
    timings.append(("local folder, json", seconds))
    if rendered:
        expect(done.returncode == 0, f"job A exit {done.returncode}:\n{tail(done)}")
        expected, reports = merged_reference(traffic, paths, [], "json", scratch, "ref-a")
        expect(open(out, "rb").read() == expected, f"job A: {out} differs from traffic merge of the reports")
    else:
        expect(done.returncode == 2 and b"no `merge`" in done.stdout, f"job A exit {done.returncode}:\n{tail(done)}")
        reports = [os.path.join(scratch, f"ref-a-{i}.json") for i in range(len(paths))]
        for path, report in zip(paths, reports):
            open(report, "wb").write(analyze(traffic, path))
    check_reduced(reduced, reports)

    # B: a file:// prefix, so the object-store path runs (Hadoop FileSystem listing, sc.binaryFiles, a local copy
    # per capture); CSV with other grouping settings; an unreadable capture skipped with a warning.
    folder = sample_folder(scratch, unreadable=True)
    paths = [p for p in job.list_local(folder) if not p.endswith(os.path.basename(UNREADABLE))]
    extra = ["--group-by", "host,method,status,content-type", "--normalize-paths"]
    out, reduced = os.path.join(scratch, "job-b.csv"), os.path.join(scratch, "job-b.reduced.json")
    done, seconds = spark_submit(["--captures", "file://" + folder, "--traffic", traffic, "--format", "csv",
                                  "-o", out, "--reduced", reduced, "--skip-unreadable", "--"] + extra, scratch)
    timings.append(("file:// prefix, csv, skip", seconds))
    warning = f"warning: skipped file:{folder}/{os.path.basename(UNREADABLE)}: "
    expect(warning.encode() in done.stdout + done.stderr, f"job B: no warning naming the capture:\n{tail(done)}")
    if rendered:
        expect(done.returncode == 0, f"job B exit {done.returncode}:\n{tail(done)}")
        expected, reports = merged_reference(traffic, paths, extra, "csv", scratch, "ref-b")
        expect(open(out, "rb").read() == expected, f"job B: {out} differs from traffic merge of the reports")
    else:
        expect(done.returncode == 2, f"job B exit {done.returncode}:\n{tail(done)}")
        reports = [os.path.join(scratch, f"ref-b-{i}.json") for i in range(len(paths))]
        for path, report in zip(paths, reports):
            open(report, "wb").write(analyze(traffic, path, extra))
    check_reduced(reduced, reports, rename=lambda p: "file:" + p)

    # C: the same folder without --skip-unreadable fails, naming the capture and traffic's reason.
    done, seconds = spark_submit(["--captures", folder, "--traffic", traffic, "--format", "csv",
                                  "-o", os.path.join(scratch, "job-c.csv"), "--reduced",
                                  os.path.join(scratch, "job-c.json")], scratch)
    timings.append(("unreadable capture, fails", seconds))
    output = (done.stdout + done.stderr).decode("utf-8", "replace")
    expect(done.returncode == 3, f"job C exit {done.returncode}, expected 3:\n{tail(done)}")
    expect(f"{folder}/{os.path.basename(UNREADABLE)}: traffic: " in output and "not a pcap" in output,
           f"job C: the failure does not name the capture and the reason:\n{tail(done)}")
    return timings


def tail(done, lines=25):
    text = (done.stdout + done.stderr).decode("utf-8", "replace").splitlines()
    return "\n".join(line for line in text if " INFO " not in line)[-4000:]


def has_merge(traffic):
    return run([traffic, "merge", "--help"]).returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traffic", help="the traffic binary (without it only the unit tests run)")
    parser.add_argument("--reduced-only", action="store_true",
                        help="with a traffic that has no `merge` yet: run the Spark job anyway and check only "
                             "the reduced JSON it writes (not the rendered output)")
    args = parser.parse_args()
    # One line at a time, in order with the subprocesses' output, also through a pipe (swift test reads one).
    sys.stdout.reconfigure(line_buffering=True)

    for test in UNIT_TESTS:
        try:
            test()
        except Failure as failure:
            print(f"FAIL: {test.__name__}: {failure}")
            return 1
        print(f"ok {test.__name__}")

    if not args.traffic:
        print("SKIP: no --traffic binary: only the unit tests ran")
        return 0
    traffic = os.path.abspath(args.traffic)
    if not os.access(traffic, os.X_OK):
        print(f"FAIL: {args.traffic} is not an executable")
        return 1
    with tempfile.TemporaryDirectory(prefix="traffic-spark-test-") as scratch:
        try:
            count = test_sums_equal_one_analyze(traffic, scratch)
            print(f"ok reduction of {count} per-capture reports adds up to one traffic analyze over them")
            rendered = has_merge(traffic)
            if not rendered and not args.reduced_only:
                print(f"SKIP: Spark job: {args.traffic} has no `merge` subcommand (`traffic merge --help` fails)")
                return 0
            reason = spark_unavailable()
            if reason:
                print(f"SKIP: Spark job: {reason}")
                return 0
            start = time.monotonic()
            timings = test_spark(traffic, scratch, rendered)
        except Failure as failure:
            print(f"FAIL: {failure}")
            return 1
    for name, seconds in timings:
        print(f"ok spark-submit local[2] ({name}) in {seconds:.1f} s")
    what = "equal to traffic merge (json, csv)" if rendered else "reduced JSON checked only (no traffic merge)"
    print(f"ok Spark job {what}; {time.monotonic() - start:.1f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
