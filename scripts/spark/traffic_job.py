#!/usr/bin/env python3
"""traffic on Spark: one report over a fleet of captures (issue 27).

    spark-submit scripts/spark/traffic_job.py --captures DIR_OR_PREFIX --traffic PATH_TO_traffic \
        [--format table|csv|json|html] [-o OUT] [--skip-unreadable] [-- ANALYZE_ARGS...]

The map step is the `traffic` binary itself: every capture is analysed on an executor with
`traffic analyze --format json ANALYZE_ARGS CAPTURE`. The reduce step is Spark's: the groups of all the
per-capture reports are added up by key with `reduceByKey`, the summaries and capture lists with `treeReduce`.
The driver writes the one reduced report (schema traffic.report/1) and renders it with `traffic merge`, which
re-derives what is not a sum (the wait percentiles, the notes) from the merge state the reports carry. The
output is therefore the same as `traffic merge` of the per-capture reports, byte for byte
(scripts/spark/test_traffic_job.py checks it).

The reduction functions (`merge_groups`, `merge_summaries`, `reduce_reports`, ...) are plain Python and import
no Spark, so they can be tested, and reused, without a JVM.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

SCHEMA = "traffic.report/1"
CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".pcap.gz", ".pcapng.gz")
# `traffic analyze` exits with 3 when it cannot read a capture (not a capture, truncated header, link type it
# does not know); every other non-zero status is a usage error or a crash and always fails the job.
EXIT_UNREADABLE = 3
# Group columns `--group-by` can name, as JSON keys; used only for reports without a `grouping` object
# (written by a traffic older than `merge`).
DIMENSIONS = ("capture", "host", "path", "method", "status", "content_type", "connection")
# Percentiles cannot be added; `traffic merge` recomputes them from merge_state's wait histogram.
RECOMPUTED_GROUP_FIELDS = ("wait_median_seconds", "wait_p95_seconds")
# The summary's duration is seconds with nanosecond digits: summed as decimals, never as binary floats, so
# that a thousand captures add up to exactly what `traffic merge` gets.
DURATION_QUANTUM = Decimal("0.000000001")
# Options the job sets itself: the executors must write one JSON report on stdout.
RESERVED_OPTIONS = ("-f", "--format", "-o", "--output", "--messages")


class JobError(Exception):
    """A reason to stop the job, worded for the user; `status` is the process exit status."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------------------------------------------------------
# JSON in and out. Numbers with a fraction are read as Decimal so that nothing is rounded on the way through
# Python; they are written back digit for digit.


def parse_report(text):
    return json.loads(text, parse_float=Decimal)


def dump_json(value):
    """Compact JSON of parsed report data, Decimals written as the digits they were read with."""
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + dump_json(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dump_json(v) for v in value) + "]"
    if isinstance(value, Decimal):
        return str(value)
    return json.dumps(value)


# ---------------------------------------------------------------------------------------------------------------
# The reduction rules. Every function returns a new value (Spark may hand the same object to two reductions
# when a task is retried) and is associative and commutative where Spark needs it to be (reduceByKey, treeReduce).


def is_int(value):
    # bool is an int in Python, but a JSON true/false is a setting, never a count.
    return isinstance(value, int) and not isinstance(value, bool)


def merge_scalar(a, b):
    """Counts add; null means "not measured here", so null + x = x; anything else keeps the first value."""
    if a is None:
        return b
    if b is None:
        return a
    if is_int(a) and is_int(b):
        return a + b
    return a


def merge_int_objects(a, b):
    """Objects of counts (anomalies, encapsulated_packets): summed per key."""
    merged = dict(a or {})
    for key, value in (b or {}).items():
        merged[key] = merge_scalar(merged.get(key), value)
    return merged


def merge_not_analysed(a, b):
    """`[{kind, <unit>: count, message}]`: entries of one kind merge, their counts add. The message is kept from
    the first; `traffic merge` words it again from the merged count."""
    merged = [dict(entry) for entry in (a or [])]
    by_kind = {entry.get("kind"): entry for entry in merged}
    for entry in b or []:
        kind = entry.get("kind")
        if kind not in by_kind:
            by_kind[kind] = dict(entry)
            merged.append(by_kind[kind])
            continue
        into = by_kind[kind]
        for key, value in entry.items():
            if key in ("kind", "message"):
                continue
            into[key] = merge_scalar(into.get(key), value)
    return merged


def merge_durations(a, b):
    total = Decimal(a if a is not None else 0) + Decimal(b if b is not None else 0)
    return total.quantize(DURATION_QUANTUM)


SUMMARY_RULES = {
    "duration": merge_durations,
    "anomalies": merge_int_objects,
    "encapsulated_packets": merge_int_objects,
    "not_analysed": merge_not_analysed,
}


def merge_summaries(a, b):
    """Two reports' summaries; fields only one side has are kept as they are."""
    merged = dict(a)
    for key, value in b.items():
        if key not in merged:
            merged[key] = value
        else:
            merged[key] = SUMMARY_RULES.get(key, merge_scalar)(merged[key], value)
    return merged


def merge_merge_state(a, b):
    """`{"sums": [...], "waits": [[bucket, count], ...], "wait_max_us": n}`: the sums add element by element (the
    layout is the same: `merge_layout` is checked equal beforehand), the wait histograms add per bucket."""
    if a is None or b is None:
        return a if b is None else b
    if len(a["sums"]) != len(b["sums"]):
        raise JobError("merge_state sums of different lengths: the reports were written by different traffic versions")
    waits = {}
    for bucket, count in list(a.get("waits", [])) + list(b.get("waits", [])):
        waits[bucket] = waits.get(bucket, 0) + count
    merged = dict(a)
    merged["sums"] = [x + y for x, y in zip(a["sums"], b["sums"])]
    merged["waits"] = [[bucket, waits[bucket]] for bucket in sorted(waits)]
    merged["wait_max_us"] = max(a.get("wait_max_us", 0), b.get("wait_max_us", 0))
    return merged


def merge_groups(a, b, key_columns):
    """Two groups of the same key: key columns kept, counts added, percentiles left to `traffic merge`."""
    merged = dict(a)
    for key, value in b.items():
        if key in key_columns:
            continue
        if key in RECOMPUTED_GROUP_FIELDS:
            merged[key] = None
        elif key == "merge_state":
            merged[key] = merge_merge_state(merged.get(key), value)
        elif key not in merged:
            merged[key] = value
        else:
            merged[key] = merge_scalar(merged[key], value)
    return without_percentiles(merged)


def key_columns(report):
    """The group columns, in order: `grouping.group_by`, or for an older report the dimension keys it has."""
    grouping = report.get("grouping")
    if isinstance(grouping, dict) and isinstance(grouping.get("group_by"), list):
        return tuple(grouping["group_by"])
    groups = report.get("groups") or [{}]
    return tuple(name for name in groups[0] if name in DIMENSIONS)


def group_key(group, columns):
    return tuple(group.get(column) for column in columns)


# Top-level keys that are reduced rather than compared; `messages` (with --messages) has no place in a merge.
REDUCED_KEYS = ("schema", "captures", "summary", "groups")
DROPPED_KEYS = ("messages",)


def report_settings(report):
    """What must be equal for reports to merge: `grouping` and any other top-level key that is not reduced (such
    as `merge_layout`, the names of merge_state's sums). In the report's own key order."""
    return {k: v for k, v in report.items() if k not in REDUCED_KEYS and k not in DROPPED_KEYS}


def settings_difference(a, b):
    """The first setting in which two reports differ, in words; None when they can merge."""
    for key in list(a) + [k for k in b if k not in a]:
        if key not in a or key not in b:
            return f"{key} is in one report only"
        if a[key] == b[key]:
            continue
        if isinstance(a[key], dict) and isinstance(b[key], dict):
            for name in list(a[key]) + [n for n in b[key] if n not in a[key]]:
                if a[key].get(name) != b[key].get(name):
                    return f"{key}.{name}: {dump_json(a[key].get(name))} vs {dump_json(b[key].get(name))}"
        return f"{key} differs"
    return None


def check_report(report, where):
    if report.get("schema") != SCHEMA:
        raise JobError(f"{where}: schema {report.get('schema')!r}, expected {SCHEMA!r}")


def check_settings(settings_by_capture):
    """`settings_by_capture`: (capture path, settings) in capture order. Fails naming the first setting that differs
    from the first capture's."""
    if not settings_by_capture:
        return
    first_path, first = settings_by_capture[0]
    for path, settings in settings_by_capture[1:]:
        difference = settings_difference(first, settings)
        if difference is not None:
            raise JobError(
                f"reports cannot be merged: {difference} ({first_path} vs {path}); "
                "every capture must be analysed with the same grouping settings", status=3)


def keyed_groups(index, report):
    """A report's groups as (key, (first seen, group)) pairs. `first seen` (capture index, position) lets the
    driver list the merged groups in the order a merge of the reports one after another meets them."""
    columns = key_columns(report)
    return [(group_key(group, columns), ((index, position), without_percentiles(group)))
            for position, group in enumerate(report.get("groups", []))]


def without_percentiles(group):
    """A group with its percentiles nulled, also a group that meets no other: no group of the reduced report
    carries a percentile of one capture only."""
    return {key: (None if key in RECOMPUTED_GROUP_FIELDS else value) for key, value in group.items()}


def reduce_keyed(a, b, columns):
    (seen_a, group_a), (seen_b, group_b) = a, b
    # Keep the key columns and the field order of the group seen first, whichever way Spark pairs them.
    if seen_b < seen_a:
        (seen_a, group_a), (seen_b, group_b) = (seen_b, group_b), (seen_a, group_a)
    return seen_a, merge_groups(group_a, group_b, columns)


def partial(index, report):
    """A report's summary and capture list, tagged with the capture index for treeReduce."""
    return {"first": index, "summary": report.get("summary", {}), "captures": [(index, report.get("captures", []))]}


def combine_partials(a, b):
    """Counts add in any order. What is kept rather than added ("keep first": unknown fields, notes' messages)
    comes from the side holding the earlier capture, so that the result is the earliest capture's value however
    treeReduce pairs the partials. Capture lists are kept apart with their capture index and put in capture order
    once, on the driver (`assemble`)."""
    if a is None:
        return b
    if b is None:
        return a
    if b["first"] < a["first"]:
        a, b = b, a
    return {"first": a["first"], "summary": merge_summaries(a["summary"], b["summary"]),
            "captures": a["captures"] + b["captures"]}


# The engine lists what it did not analyse most important first; unknown kinds go after these, by name.
NOT_ANALYSED_ORDER = ("tls", "quic", "other_tcp", "non_tcp")


def canonical_summary(summary):
    """The merged summary in the engine's own orders: treeReduce pairs partial summaries in whatever order tasks
    finish, and the report must not depend on it. Objects of counts by key, as the engine writes them; the
    duration with its nine digits even when one report was alone."""
    summary = dict(summary)
    for name in ("anomalies", "encapsulated_packets"):
        if isinstance(summary.get(name), dict):
            summary[name] = dict(sorted(summary[name].items()))
    if isinstance(summary.get("not_analysed"), list):
        def rank(entry):
            kind = entry.get("kind")
            known = kind in NOT_ANALYSED_ORDER
            return (0, NOT_ANALYSED_ORDER.index(kind), "") if known else (1, 0, str(kind))
        summary["not_analysed"] = sorted(summary["not_analysed"], key=rank)
    if summary.get("duration") is not None:
        summary["duration"] = Decimal(summary["duration"]).quantize(DURATION_QUANTUM)
    return summary


def assemble(first_report, combined, keyed):
    """The one reduced report: schema, captures in capture order, the summed summary, the groups in first-seen
    order, then the settings (`grouping`, ...) as the reports carry them."""
    captures = []
    for _, entries in sorted(combined["captures"], key=lambda pair: pair[0]):
        captures.extend(entries)
    summary = canonical_summary(combined["summary"])
    groups = [group for _, (_, group) in sorted(keyed, key=lambda pair: pair[1][0])]
    reduced = {"schema": SCHEMA, "captures": captures, "summary": summary, "groups": groups}
    reduced.update(report_settings(first_report))
    return reduced


def reduce_reports(reports):
    """Reduction without Spark, in the same steps the job runs with Spark: for tests and small batches."""
    if not reports:
        raise JobError("no reports to merge")
    for index, report in enumerate(reports):
        check_report(report, f"report {index}")
    check_settings([(str(index), report_settings(report)) for index, report in enumerate(reports)])
    columns = key_columns(reports[0])
    by_key = {}
    for index, report in enumerate(reports):
        for key, value in keyed_groups(index, report):
            by_key[key] = reduce_keyed(by_key[key], value, columns) if key in by_key else value
    combined = None
    for index, report in enumerate(reports):
        combined = combine_partials(combined, partial(index, report))
    return assemble(reports[0], combined, list(by_key.items()))


# ---------------------------------------------------------------------------------------------------------------
# Finding captures (driver).


def is_capture(name):
    return name.endswith(CAPTURE_SUFFIXES)


def is_uri(location):
    # s3a://, gs://, hdfs://, abfss://, file://: anything the Hadoop FileSystem API opens.
    return "://" in location


def list_local(directory):
    if os.path.isfile(directory):
        return [directory]
    if not os.path.isdir(directory):
        raise JobError(f"{directory}: no such directory", status=2)
    found = []
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        found.extend(os.path.join(root, name) for name in files if is_capture(name))
    return sorted(found)


def list_hadoop(spark, prefix):
    """Every capture under an object-store prefix, recursively, through the Hadoop FileSystem API of the driver's
    JVM: the same connectors (s3a, gcs, abfs, hdfs) and credentials the cluster already uses."""
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    path = jvm.org.apache.hadoop.fs.Path(prefix)
    fs = path.getFileSystem(conf)
    if not fs.exists(path):
        raise JobError(f"{prefix}: no such prefix", status=2)
    found = []
    files = fs.listFiles(path, True)
    while files.hasNext():
        status = files.next()
        name = status.getPath().toString()
        if is_capture(name):
            found.append(name)
    return sorted(found)


# ---------------------------------------------------------------------------------------------------------------
# Running traffic (executors).


def locate_binary(traffic):
    """The binary on an executor: the copy Spark shipped (sc.addFile or spark-submit --files) if there is one,
    else the path as given (installed on every node)."""
    from pyspark import SparkFiles

    name = os.path.basename(traffic)
    try:
        shipped = SparkFiles.get(name)
    except Exception:  # no SparkFiles root outside a Spark task
        shipped = None
    if shipped and os.path.isfile(shipped):
        if not os.access(shipped, os.X_OK):
            # Spark marks fetched files executable; a copy that lost the bit is our own to fix.
            os.chmod(shipped, 0o755)
        return shipped
    if os.path.isfile(traffic):
        return traffic
    found = shutil.which(name)
    if found:
        return found
    raise JobError(f"traffic binary {name!r} is neither shipped (--files, sc.addFile) nor installed on this node")


def analyze_capture(traffic, extra, index, shown_path, local_path):
    """One capture through `traffic analyze --format json`: a record the driver checks before reducing. Failures
    are returned, not raised, so that Spark does not retry a capture that will never read and the driver can
    name it in one line."""
    command = [locate_binary(traffic), "analyze", "--format", "json"] + list(extra) + [local_path]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stderr = done.stderr.decode("utf-8", "replace").strip()
    record = {"index": index, "path": shown_path, "status": done.returncode, "error": None, "report": None}
    if done.returncode != 0:
        # The first line is traffic's reason ("traffic: FILE: not a pcap or pcapng capture ...").
        reason = stderr.splitlines()[0] if stderr else f"exit status {done.returncode}"
        # Name the capture where it lives, not the scratch copy an object-store capture was read into.
        record["error"] = reason.replace(local_path, shown_path)
        return record
    try:
        report = parse_report(done.stdout)
    except ValueError as error:
        record["status"], record["error"] = -1, f"output is not JSON: {error}"
        return record
    report.pop("messages", None)
    if local_path != shown_path:
        rename_capture(report, local_path, shown_path)
    record["report"] = report
    return record


def rename_capture(report, local_path, shown_path):
    """A capture copied from an object store was analysed under a temporary name; reports show where it lives."""
    for capture in report.get("captures", []):
        if capture.get("path") == local_path:
            capture["path"] = shown_path
    for group in report.get("groups", []):
        if group.get("capture") == local_path:
            group["capture"] = shown_path


def analyze_local_partition(traffic, extra):
    def run(items):
        for index, path in items:
            yield analyze_capture(traffic, extra, index, path, path)
    return run


def analyze_remote_partition(traffic, extra, index_of):
    """(uri, bytes) pairs from sc.binaryFiles: each executor reads its own captures through Hadoop, writes each to a
    local file under its own name (the binary reads files, not streams of an object store) and removes it."""
    def run(items):
        for uri, content in items:
            if uri not in index_of:
                raise JobError(f"{uri}: read but not listed")
            scratch = tempfile.mkdtemp(prefix="traffic-capture-")
            try:
                local = os.path.join(scratch, uri.rstrip("/").rsplit("/", 1)[-1])
                with open(local, "wb") as out:
                    out.write(content)
                del content
                yield analyze_capture(traffic, extra, index_of[uri], uri, local)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    return run


# ---------------------------------------------------------------------------------------------------------------
# The job (driver).


def parse_arguments(argv):
    # Everything after `--` goes to `traffic analyze` untouched (argparse would take --group-by for its own).
    if "--" in argv:
        split = argv.index("--")
        argv, extra = argv[:split], argv[split + 1:]
    else:
        extra = []
    parser = argparse.ArgumentParser(
        prog="traffic_job.py",
        description="Analyse every capture under a directory or object-store prefix with traffic on Spark "
                    "executors and reduce them to one report, the same as `traffic merge` of the "
                    "per-capture reports.",
        epilog="Arguments after -- go to `traffic analyze` (e.g. -- --group-by host,path --normalize-paths).")
    parser.add_argument("--captures", required=True,
                        help="local directory (or one file), or a prefix the Hadoop FileSystem API opens: "
                             "s3a://, gs://, hdfs://, abfss://, file://; searched recursively for "
                             + ", ".join("*" + s for s in CAPTURE_SUFFIXES))
    parser.add_argument("--traffic", required=True,
                        help="the traffic binary on the driver; shipped to the executors with sc.addFile "
                             "(or give it to spark-submit --files). A path missing on the driver is taken as "
                             "installed at that path on every node")
    parser.add_argument("-f", "--format", default="table", choices=["table", "csv", "json", "html"])
    parser.add_argument("-o", "--output", help="write the report here instead of stdout")
    parser.add_argument("--skip-unreadable", action="store_true",
                        help="skip captures traffic cannot read (exit 3) with a warning instead of failing")
    parser.add_argument("--master", help="Spark master when not run by spark-submit, e.g. local[2]")
    parser.add_argument("--partitions", type=int,
                        help="tasks for local captures (default: one per capture, so one slow capture holds "
                             "back no other)")
    parser.add_argument("--reduced", help="also keep the reduced traffic.report/1 JSON at this path")
    args = parser.parse_args(argv)
    for option in extra:
        name = option.split("=", 1)[0]
        if name in RESERVED_OPTIONS:
            parser.error(f"{name} after -- : the job sets the format of the per-capture reports itself; "
                         "use the job's own --format and -o")
    args.extra = extra
    return args


def driver_binary(traffic):
    """The binary the driver runs `merge` with: the path given, else the copy spark-submit --files put in SparkFiles
    (cluster mode: the driver runs on a node of the cluster), else one on PATH. Executors find their own
    (`locate_binary`)."""
    if os.path.isfile(traffic):
        return traffic
    try:
        return locate_binary(traffic)
    except JobError:
        return traffic  # has_merge then fails with the path the user gave


def has_merge(traffic):
    try:
        done = subprocess.run([traffic, "merge", "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return False
    return done.returncode == 0


def ship_binary(sc, traffic):
    """Registers the binary with Spark so that every executor fetches it once. With spark-submit --files the same
    file is registered already: Spark then refuses a second registration under the same name, which is fine."""
    from pyspark import SparkFiles

    if not os.path.isfile(traffic):
        return
    if os.path.abspath(traffic).startswith(os.path.abspath(SparkFiles.getRootDirectory()) + os.sep):
        return  # the driver's own copy of what --files shipped
    try:
        sc.addFile(os.path.abspath(traffic))
    except Exception as error:  # already added by --files
        print(f"traffic_job: note: {traffic} not added again ({str(error).splitlines()[0]})", file=sys.stderr)


def run_job(spark, args):
    """Runs the job on `spark`; returns the process exit status. Raises JobError for the user's mistakes."""
    from pyspark import StorageLevel

    sc = spark.sparkContext
    args.traffic = driver_binary(args.traffic)
    mergeable = has_merge(args.traffic)
    if not mergeable and not args.reduced:
        # Found out before any capture is analysed; with --reduced the job still writes the reduced JSON.
        raise JobError(f"{args.traffic} has no `merge` subcommand: the job renders its reduced report with "
                       "`traffic merge`; build a traffic that has it", status=2)

    remote = is_uri(args.captures)
    paths = list_hadoop(spark, args.captures) if remote else list_local(args.captures)
    if not paths:
        raise JobError(f"{args.captures}: no captures ({', '.join('*' + s for s in CAPTURE_SUFFIXES)})", status=2)

    ship_binary(sc, args.traffic)
    extra = list(args.extra)
    if not any(option.split("=", 1)[0] == "--jobs" for option in extra):
        # Spark gives each task spark.task.cpus cores (1 by default) and runs as many tasks as it has cores:
        # traffic's own default, one thread per core of the machine, would oversubscribe every executor.
        extra = ["--jobs", sc.getConf().get("spark.task.cpus", "1")] + extra

    if remote:
        index_of = {path: index for index, path in enumerate(paths)}
        if any(c in path for path in paths for c in ",{}[]*?\\"):
            raise JobError("a capture name contains one of , { } [ ] * ? \\ which sc.binaryFiles reads as a "
                           "path list or glob; rename it", status=2)
        results = sc.binaryFiles(",".join(paths), minPartitions=len(paths)) \
            .mapPartitions(analyze_remote_partition(args.traffic, extra, index_of))
    else:
        slices = args.partitions or len(paths)
        results = sc.parallelize(list(enumerate(paths)), slices) \
            .mapPartitions(analyze_local_partition(args.traffic, extra))
    # Several Spark actions read the results (checks, groups, summary): analyse each capture once.
    # Serialized reports may outgrow executor memory with many captures: spill rather than recompute.
    results = results.persist(StorageLevel.MEMORY_AND_DISK)

    # First a small collect per capture: did it read, and with which settings. Everything is decided on the
    # driver before any reduction, so an unreadable capture or a mismatched report fails with one clear line.
    checks = results.map(lambda r: (r["index"], r["path"], r["status"], r["error"],
                                    report_settings(r["report"]) if r["report"] else None,
                                    r["report"].get("schema") if r["report"] else None)).collect()
    checks.sort(key=lambda check: check[0])
    unreadable = [c for c in checks if c[2] == EXIT_UNREADABLE]
    failed = [c for c in checks if c[2] != 0 and c[2] != EXIT_UNREADABLE]
    if failed:
        index, path, status, error, _, _ = failed[0]
        raise JobError(f"traffic analyze failed on {path} (exit status {status}): {error}"
                       + (f" (and {len(failed) - 1} more captures)" if len(failed) > 1 else ""),
                       status=2 if status == 2 else 1)
    if unreadable and not args.skip_unreadable:
        lines = [f"  {path}: {error}" for _, path, _, error, _, _ in unreadable]
        raise JobError(f"{len(unreadable)} of {len(paths)} captures cannot be read (rerun with --skip-unreadable "
                       "to leave them out):\n" + "\n".join(lines), status=3)
    for _, path, _, error, _, _ in unreadable:
        print(f"traffic_job: warning: skipped {path}: {error}", file=sys.stderr)
    readable = [c for c in checks if c[2] == 0]
    if not readable:
        raise JobError("no capture could be read", status=3)
    for _, path, _, _, _, schema in readable:
        if schema != SCHEMA:
            raise JobError(f"{path}: report schema {schema!r}, expected {SCHEMA!r}", status=3)
    check_settings([(path, settings) for _, path, _, _, settings, _ in readable])
    first_settings = readable[0][4]

    reports = results.filter(lambda r: r["status"] == 0).map(lambda r: (r["index"], r["report"]))
    columns = tuple(first_settings.get("grouping", {}).get("group_by") or ()) or None
    if columns is None:
        # An older report without `grouping`: the key columns are read off the first capture's groups.
        columns = reports.map(lambda pair: key_columns(pair[1])).first()

    # The reduce: groups by key on the executors, summaries and capture lists in a tree.
    keyed = reports.flatMap(lambda pair: keyed_groups(*pair)) \
        .reduceByKey(lambda a, b: reduce_keyed(a, b, columns)) \
        .collect()
    combined = reports.map(lambda pair: partial(*pair)).treeReduce(combine_partials)
    results.unpersist()

    reduced = assemble({"schema": SCHEMA, **first_settings}, combined, keyed)
    text = dump_json(reduced) + "\n"
    if args.reduced:
        with open(args.reduced, "w") as out:
            out.write(text)
    if not mergeable:
        raise JobError(f"reduced report written to {args.reduced}, but {args.traffic} has no `merge` "
                       "subcommand to render it", status=2)
    return render(args, text)


def render(args, reduced_text):
    """`traffic merge REDUCED.json`: the rendering, and the percentiles and notes, of one merged report."""
    with tempfile.TemporaryDirectory(prefix="traffic-job-") as scratch:
        reduced_path = os.path.join(scratch, "reduced.json")
        with open(reduced_path, "w") as out:
            out.write(reduced_text)
        command = [args.traffic, "merge", reduced_path, "--format", args.format]
        if args.output:
            command += ["-o", args.output]
        sys.stdout.flush()
        return subprocess.run(command).returncode


def main(argv=None):
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("traffic")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    # Spark's INFO lines would bury the job's own warnings and errors.
    spark.sparkContext.setLogLevel("WARN")
    try:
        return run_job(spark, args)
    except JobError as error:
        print(f"traffic_job: error: {error}", file=sys.stderr)
        return error.status
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
