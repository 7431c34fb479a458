import TrafficSessions

/// What `traffic analyze` groups, filters and keeps.
public struct ReportOptions: Sendable {
    public var groupBy: [GroupField] = [.host, .path]
    public var paths = PathNormalizer(collapseIdentifiers: false)
    /// fnmatch(3) globs on the record's host and path; nil matches everything.
    public var hostGlob: String?
    public var pathGlob: String?
    /// Keep every record for `--messages`.
    public var keepMessages = false
    /// Keep each message's head as sent in its record (`MessageRecord.head`), for HAR's headers and cookies;
    /// with `keepMessages`. Off by default: the parser then copies no header bytes.
    public var keepHeads = false
    /// Keep request bodies too (HAR `--har-bodies`), up to `keptBodyLimit` bytes each.
    public var keepRequestBodies = false
    public var keptBodyLimit = 1 << 20
    /// Kept records are sorted in runs of this many and written to a temporary file, so that memory does
    /// not grow with the capture (a run of 16384 records is a few MiB; runs of records with large heads or bodies,
    /// as HAR keeps them, are written sooner: `MessageStore` caps a run at about 6 MiB).
    public var messageRunLength = 16_384
    /// Groups a report keeps in memory (per worker): beyond that they are written to a temporary file in
    /// sorted runs and merged when the report is read, so that memory does not grow with the number of
    /// distinct endpoints (ids in paths make tens of thousands). 16384 groups are about 6 MiB: the default two
    /// threads peak at 45 MiB on 1 GiB of 96 000 endpoints (38 with 8192), and a capture of 13 000 endpoints
    /// needs no temporary file (writing, merging and reading the groups back cost more than counting them).
    /// 4096 (tenth pass on issue 25) made the 1 GiB API bench's default run 4–8 % faster and its peak RSS 45.0 → 40.7
    /// MiB, but a capture of 4 000–16 000 endpoints then spills: 100 MiB bulk bench +12.5 % instructions (CSV) and
    /// +27 % with `--overhead all` (+17 % wall with `--jobs 1`), whose pinned groups are copied out and back at
    /// every spill. Not kept until a spill costs less.
    public var groupsInMemory = 16_384
    /// Where the temporary files of records and groups go; nil: `$TMPDIR`, else `/tmp`.
    public var messageSpoolDirectory: String?
    /// Connection costs attributed to records; none by default, so default numbers stay HTTP bytes.
    public var overhead: OverheadOptions = []
    /// Inflate every gzip body instead of reading its size from the gzip trailer (`--verify-decoding`).
    public var verifyDecoding = false
    /// Worker threads for reassembly and HTTP (`--jobs`); each connection is analysed whole on the thread it was
    /// placed on at its first packet, and the report is identical to a single-threaded run.
    public var jobs = 1
    /// How connections are placed on those threads: by load, or (tests) in turn, so that a small capture's few
    /// connections are spread over every thread whatever the timing.
    package var connectionPlacement = ConnectionPlacement.byLoad
    public var analysis = AnalysisOptions()
    /// Count the rows `--normalize-paths` would leave (`TrafficReport.normalizedGroupCount`: the table's note);
    /// formats that do not say it turn it off: it reads every group's key once more (~800 instructions a group
    /// with tens of thousands of raw paths).
    public var countNormalizedRows = true
    /// Keep a histogram of response sizes per group (`GroupTotals.responseSizes`: the HTML report's
    /// percentiles); off by default, as it costs an array update per response.
    public var collectResponseSizes = false
    /// Keep a histogram of response waits per group (`GroupTotals.waits`: JSON's and CSV's `wait_median_seconds`
    /// and `wait_p95_seconds`, the table's `--timings`); off by default, as it costs an array update per response.
    public var collectWaits = false
    /// Collect `TrafficReport.timeline` (the HTML report's waterfall and bytes over time); off by default, as
    /// it costs a dictionary update per record.
    public var collectTimeline = false
    /// Where records go as they become final (`--format ndjson`): nothing is kept or sorted for them, so memory
    /// stays flat. Records streamed are made as for `keepMessages` (exchanges joined, overhead final).
    public var recordStream: (any RecordStream)?
    /// Count records into groups (off for a record stream that shows no groups: the summary is still counted).
    public var countGroups = true
    /// Messages the timeline keeps one by one (the earliest); beyond them only bytes per host and time.
    public var timelineEventLimit = 3000

    public init() {}
}

/// How `ReportOptions.jobs` threads get their connections.
package enum ConnectionPlacement: Sendable {
    /// On the worker least behind, or on the reading thread when every worker is behind.
    case byLoad
    /// The reading thread and each worker in turn, a connection each.
    case inTurn
}
