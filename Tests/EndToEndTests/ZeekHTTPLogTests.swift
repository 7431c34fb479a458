import Foundation
import Testing

/// `traffic analyze --messages` against Zeek's own http.log baselines (../shared/corpus/zeek/baselines/<trace>/http.log).
///
/// Zeek writes one line per request/response pair. A line is matched to our records by connection and
/// exchange number: the connection by `id.orig_h`/`id.orig_p` (our `client`) when the log has them, else
/// by the order in which `uid`s first appear against our connections in ascending order (the reduced
/// logs of the smuggling variants hold one connection each); `trans_depth` is our `index`.
///
/// Compared, per line (the reduced logs `uid trans_depth method host uri` only have request, method, host, uri):
/// - request: Zeek's `method` is `-` exactly when it parsed no request; then we must have no request
///   record at that index either. Otherwise our request record must exist and
///   - method: as sent;
///   - host: Zeek logs the Host header as sent; we lower-case it and drop a default `:80`, so Zeek's
///     value is normalised the same way before comparing (`-`, no Host, stays unset);
///   - uri: Zeek logs the request target as sent; ours is `path` + `?query` when a query exists. An
///     absolute-form target would lose its `scheme://authority` (it becomes our host) and we drop a
///     `#fragment`, so Zeek's uri is trimmed the same way (no baseline has either today);
///     `(empty)` is the empty string;
///   - request_body_len: our `decoded_body_bytes` + `missing_bytes` (Zeek counts gap bytes as body).
/// - response: Zeek's `status_code` is `-` exactly when it saw no reply; then we must have no response
///   at that index. Otherwise our last response at that index (the final one: interim 1xx share the
///   index and come first) must exist and
///   - status: equal;
///   - response_body_len: its `decoded_body_bytes` + `missing_bytes`.
///   Zeek decodes only gzip and deflate (we also do br and zstd), but no baselined trace has another
///   coding, so decoded lengths are compared everywhere.
/// - And the other way round: every exchange (connection, index) of ours has a Zeek line.
///
/// Zeek also writes a line with neither request nor reply (`-` method and status, lengths 0) after an
/// HTTP/0.9 exchange when the connection closes (http_09.pcap, no-version.pcap, `trans_depth` 2). With
/// the rules above that line simply requires that we have nothing at that index, which holds.
///
/// Where Zeek and we legitimately differ, `deviations` says so per trace, connection (client port) or
/// exchange, and field, with what WE report instead and why; the test asserts our value there, so any
/// change in a compared field fails, and a deviation that no longer differs from Zeek fails as stale.
///
/// Smuggling variants (no responses in the captures; RFC 9112 §6.3): 04 (TE + CL: TE wins), 07
/// (Expect: 100-continue with Content-Length 0), 08 (Content-Length with leading zeros is valid) and 09
/// (obs-fold in Transfer-Encoding: RFC 9112 §5.2 lets a server replace it with SP) frame the POST so
/// that the GET after it is a second request, for Zeek, for us and per the RFC. 01 (chunk size 2^64),
/// 02 (Content-Length 2^64 − 1, above what we can represent) and 03 (Content-Length -1) are
/// unrecoverable framing errors per RFC 9112 §6.3/§7.1, where a server answers 400 and closes; both
/// Zeek and we flag them (`malformed_chunk`/`malformed_length`) and resynchronise on the next request
/// line, so the smuggled GET shows as request 2 in both: agreement, no deviation. 10 differs (below).
@Suite(.enabled(if: ZeekBaselines.present, "../shared/corpus is absent"))
struct ZeekHTTPLogTests {
    static let baselines = ZeekBaselines.folder

    /// Traces with a baseline http.log, and which of the compared fields their log has.
    static let expectedCoverage: [String: Set<Field>] = {
        let full = Set(Field.allCases)
        let reduced: Set<Field> = [.request, .method, .host, .uri]
        var table: [String: Set<Field>] = [:]
        for trace in ["100-continue.pcap", "connect-with-header.pcap", "content-length-overflow.pcap",
                      "fake-content-length.pcap", "http_09.pcap", "methods.pcap", "missing-zlib-header.pcap",
                      "multipart-form-data.pcap", "no-version.pcap", "pipelined-requests.pcap", "websocket.pcap",
                      "x-gzip.pcap"] { table[trace] = full }
        for trace in ["variant-01-chunk_2pow64_overflow.pcap", "variant-02-cl_uint64max.pcap",
                      "variant-03-cl_negative.pcap", "variant-04-te_cl_desync.pcap", "variant-07-expect_100_cl0.pcap",
                      "variant-08-leading_zeros.pcap", "variant-09-te_obs_fold.pcap",
                      "variant-10-multi_value_te.pcap"] { table[trace] = reduced }
        return table
    }()


    // MARK: Fields, values, deviations

    enum Field: String, CaseIterable, Hashable {
        /// Whether a request (response) was parsed at all.
        case request, method, host, uri, requestBodyLength = "request_body_len"
        case response, status, responseBodyLength = "response_body_len"
    }

    enum Value: Equatable, CustomStringConvertible {
        case absent, present, text(String), number(Int)
        var description: String {
            switch self {
            case .absent: return "absent"
            case .present: return "present"
            case .text(let s): return "\"\(s)\""
            case .number(let n): return "\(n)"
            }
        }
    }

    /// A legitimate difference: on `trace`, for Zeek lines of the client ports `ports` (nil: any) at
    /// `trans_depth` `depth` (nil: any), `field` is `ours` in our output instead of Zeek's value.
    struct Deviation {
        var trace: String
        var ports: [Int]?
        var depth: Int?
        var field: Field
        var ours: Value
        var reason: String

        func applies(trace: String, port: Int?, depth: Int) -> Bool {
            guard trace == self.trace else { return false }
            if let ports, !(port.map(ports.contains) ?? false) { return false }
            if let d = self.depth, d != depth { return false }
            return true
        }
    }

    static let http09NoStatusLine =
        "An HTTP/0.9 reply has no status line: Zeek logs status 0 (status_msg <empty>), we report null."
    static let http09OnlyGET =
        "RFC 1945 §4.1: an HTTP/0.9 Simple-Request is only `GET Request-URI`; a request line with another method "
        + "and no version is not HTTP for us, while Zeek takes any method without a version as HTTP/0.9."
    static let http09GETNoHeaders =
        "An HTTP/0.9 request is the request line alone, so it has no Host: the line after `GET /HTTP/1.1` is not a "
        + "header for us and the host falls back to the server address (as documented in HTTPConnectionParser); "
        + "Zeek still parses the following `Host:` line (in http_09.pcap/no-version.pcap there is none, so Zeek logs `-`)."
    static let deviations: [Deviation] = {
        var list: [Deviation] = [
            // http_09.pcap: `GET /zeek.html\n` answered with raw HTML; `POST /zeek.html\n` answered `bad method\n`.
            Deviation(trace: "http_09.pcap", ports: [42960], field: .host, ours: .text("127.0.0.1"),
                      reason: http09GETNoHeaders),
            Deviation(trace: "http_09.pcap", ports: [42960], depth: 1, field: .status, ours: .absent,
                      reason: http09NoStatusLine),
            Deviation(trace: "http_09.pcap", ports: [42964], depth: 1, field: .request, ours: .absent,
                      reason: http09OnlyGET),
            Deviation(trace: "http_09.pcap", ports: [42964], depth: 1, field: .response, ours: .absent,
                      reason: "Follows from the request not being HTTP: the server's raw `bad method\\n` is not an "
                        + "HTTP/0.9 reply to anything, so the whole connection is non-HTTP for us."),
            // no-version.pcap: one HTTP/0.9 `GET /cgi-bin/formmail.pl?...` answered with raw HTML.
            Deviation(trace: "no-version.pcap", ports: [1035], depth: 1, field: .host, ours: .text("131.243.1.10"),
                      reason: http09GETNoHeaders),
            Deviation(trace: "no-version.pcap", ports: [1035], depth: 1, field: .status, ours: .absent,
                      reason: http09NoStatusLine),
            // methods.pcap: 49 connections to Google, each one request line variant (LF line ends).
            Deviation(trace: "methods.pcap", ports: [46568], field: .host, ours: .text("173.194.75.103"),
                      reason: http09GETNoHeaders),
            Deviation(trace: "methods.pcap", ports: [46568], field: .status, ours: .absent, reason: http09NoStatusLine),
            // variant-10: `Transfer-Encoding: chunked, identity` on a request.
            Deviation(trace: "variant-10-multi_value_te.pcap", depth: 2, field: .request, ours: .absent,
                      reason: "chunked is not the final transfer coding, so per RFC 9112 §6.3 item 4 the request's body "
                        + "length cannot be determined (a server answers 400 and closes). We read the rest of the client "
                        + "stream as the POST's body (flag malformed_length; 54 bytes including the GET), so there is "
                        + "no second request; Zeek decodes it as chunked and logs the smuggled GET."),
        ]
        // methods.pcap: `<METHOD> /HTTP/1.1` with a method other than GET. Zeek takes it as HTTP/0.9 and so
        // reads the whole server stream as the body of a status-0 reply; for us the request line is not
        // HTTP and the server's stream is an ordinary HTTP/1.0 reply (unpaired, parsed with GET semantics)
        // whose status line and Content-Length body we report. HEAD's reply (46608) is a head with
        // Content-Length 925 and no body bytes at all: 0 decoded (truncated).
        let notHTTP09: [(port: Int, method: String, status: Int, body: Int)] = [
            (46578, "CCM_POST", 400, 925), (46583, "CONNECT", 400, 925), (46588, "TRACE", 400, 925),
            (46593, "DELETE", 400, 925), (46598, "PUT", 411, 934), (46603, "POST", 411, 934), (46608, "HEAD", 400, 0),
        ]
        for entry in notHTTP09 {
            list.append(Deviation(trace: "methods.pcap", ports: [entry.port], field: .request, ours: .absent,
                                  reason: "`\(entry.method) /HTTP/1.1`: " + http09OnlyGET))
            list.append(Deviation(trace: "methods.pcap", ports: [entry.port], field: .status, ours: .number(entry.status),
                                  reason: "Zeek's HTTP/0.9 reading gives status 0; we parse the status line the server sent."))
            list.append(Deviation(trace: "methods.pcap", ports: [entry.port], field: .responseBodyLength,
                                  ours: .number(entry.body),
                                  reason: "Zeek's HTTP/0.9 reply body is the whole server stream (head included); ours is "
                                    + "the body after the head."))
        }
        return list
    }()

    // MARK: Reading

    /// The data lines of an http.log as dictionaries keyed by its `#fields` line or plain header line.
    static func readLog(_ url: URL) throws -> [[String: String]] {
        let text = try String(contentsOf: url, encoding: .utf8)
        var header: [String]? = nil
        var rows: [[String: String]] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let cells = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if line.hasPrefix("#fields") {
                header = Array(cells.dropFirst())
            } else if line.hasPrefix("#") {
                continue
            } else if header == nil {
                header = cells
            } else if let header {
                rows.append(Dictionary(uniqueKeysWithValues: zip(header, cells)))
            }
        }
        return rows
    }

    /// Zeek's host normalised as we normalise ours: lower-cased, a default `:80` dropped; `-` is unset.
    static func zeekHost(_ raw: String) -> Value {
        if raw == "-" { return .absent }
        var host = raw.lowercased()
        if host.hasSuffix(":80") { host.removeLast(3) }
        return .text(host)
    }

    /// Zeek's uri as our path + `?query`: `(empty)` is "", an absolute form loses `scheme://authority`,
    /// a fragment goes.
    static func zeekURI(_ raw: String) -> Value {
        if raw == "-" { return .absent }
        var uri = raw == "(empty)" ? "" : raw
        if let scheme = uri.range(of: "://"), !uri.hasPrefix("/") {
            let rest = uri[scheme.upperBound...]
            let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
            uri = String(rest[end...])
            if uri.isEmpty || uri.hasPrefix("?") { uri = "/" + uri }
        }
        if let fragment = uri.firstIndex(of: "#") { uri = String(uri[..<fragment]) }
        return .text(uri)
    }

    static func zeekNumber(_ raw: String?) -> Value {
        guard let raw, raw != "-" else { return .absent }
        return Int(raw).map(Value.number) ?? .text(raw)
    }

    static func text(_ any: Any?) -> Value { (any as? String).map(Value.text) ?? .absent }

    /// Decoded body length plus the bytes lost in gaps, as Zeek counts; unknown decoded size is absent.
    static func bodyLength(_ record: [String: Any]) -> Value {
        guard let decoded = record["decoded_body_bytes"] as? Int else { return .absent }
        return .number(decoded + (record["missing_bytes"] as? Int ?? 0))
    }

    // MARK: Tests

    /// Every baseline http.log is compared, and none silently disappears (a vacuous pass).
    @Test func everyBaselineIsCompared() {
        #expect(Set(ZeekBaselines.tracesWithHTTPLog()) == Set(Self.expectedCoverage.keys))
    }

    @Test(arguments: ZeekBaselines.tracesWithHTTPLog())
    func httpLog(trace: String) throws {
        let zeek = try Self.readLog(Self.baselines.appendingPathComponent("\(trace)/http.log"))
        #expect(!zeek.isEmpty, "\(trace): empty http.log")
        let columns = Set(zeek.first?.keys.map { $0 } ?? [])
        let fields = Set(Field.allCases.filter { field in
            switch field {
            case .request: return columns.contains("method")
            case .response: return columns.contains("status_code")
            case .uri, .method, .host: return columns.contains(field.rawValue)
            case .status: return columns.contains("status_code")
            case .requestBodyLength, .responseBodyLength: return columns.contains(field.rawValue)
            }
        })
        #expect(fields == Self.expectedCoverage[trace], "\(trace): compared fields")

        let path = Harness.corpus.appendingPathComponent("traces/\(trace)").path
        let result = try Harness.run(["analyze", "--messages", "--format", "json", path])
        #expect(!result.signalled)
        #expect(result.status == 0, "\(trace): \(result.stderr)")
        let messages = try #require(try Harness.json(result.stdout)["messages"] as? [[String: Any]])
        let http = messages.filter { $0["kind"] as? String != "tls" }

        // Connection of each Zeek line: by client address when logged, else by order of first appearance.
        var clients: [String: Int] = [:]
        for record in http {
            if let client = record["client"] as? String, let connection = record["connection"] as? Int {
                clients[client] = connection
            }
        }
        let ours = Array(Set(clients.values)).sorted()
        var uids: [String: Int] = [:]
        func connection(of row: [String: String]) -> Int? {
            if let host = row["id.orig_h"], let port = row["id.orig_p"] {
                return clients[host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"]
            }
            let uid = row["uid"] ?? ""
            if let known = uids[uid] { return known }
            guard uids.count < ours.count else { return nil }
            uids[uid] = ours[uids.count]
            return uids[uid]
        }

        var matched = Set<String>()
        var usedDeviations = Set<Int>()
        for row in zeek {
            let depth = try #require(Int(row["trans_depth"] ?? ""), "\(trace): trans_depth")
            let port = row["id.orig_p"].flatMap { Int($0) }
            let c = connection(of: row)
            let label = "\(trace) \(row["uid"] ?? "?")/\(port.map(String.init) ?? "-")#\(depth)"
            let here = http.filter { $0["connection"] as? Int == c && $0["index"] as? Int == depth }
            if let c { matched.insert("\(c)/\(depth)") }
            let request = here.first { $0["kind"] as? String == "request" }
            let response = here.last { $0["kind"] as? String == "response" }
            #expect(here.filter { $0["kind"] as? String == "request" }.count <= 1, "\(label): several requests")

            /// Compares one field, or checks the deviation table's value for it.
            func check(_ field: Field, zeek: Value, ours: Value) {
                guard fields.contains(field) else { return }
                let index = Self.deviations.firstIndex { $0.field == field && $0.applies(trace: trace, port: port, depth: depth) }
                if let index {
                    usedDeviations.insert(index)
                    let deviation = Self.deviations[index]
                    #expect(ours == deviation.ours, "\(label) \(field.rawValue): expected our deviating value (\(deviation.reason))")
                    #expect(zeek != deviation.ours, "\(label) \(field.rawValue): stale deviation, Zeek agrees now")
                } else {
                    #expect(ours == zeek, "\(label) \(field.rawValue): Zeek \(zeek), ours \(ours)")
                }
            }

            let zeekRequest: Value = row["method"] == "-" ? .absent : .present
            check(.request, zeek: zeekRequest, ours: request == nil ? .absent : .present)
            if let request, zeekRequest == .present {
                check(.method, zeek: .text(row["method"]!), ours: Self.text(request["method"]))
                check(.host, zeek: Self.zeekHost(row["host"] ?? "-"), ours: Self.text(request["host"]))
                let path = request["path"] as? String ?? ""
                let query = (request["query"] as? String).map { "?" + $0 } ?? ""
                check(.uri, zeek: Self.zeekURI(row["uri"] ?? "-"), ours: .text(path + query))
                check(.requestBodyLength, zeek: Self.zeekNumber(row["request_body_len"]), ours: Self.bodyLength(request))
            } else if zeekRequest == .absent, fields.contains(.requestBodyLength) {
                #expect(row["request_body_len"] == "0", "\(label): Zeek body length without a request")
            }

            guard fields.contains(.response) else { continue }
            let zeekResponse: Value = row["status_code"] == "-" ? .absent : .present
            check(.response, zeek: zeekResponse, ours: response == nil ? .absent : .present)
            if let response, zeekResponse == .present {
                check(.status, zeek: Self.zeekNumber(row["status_code"]),
                      ours: (response["status"] as? Int).map(Value.number) ?? .absent)
                check(.responseBodyLength, zeek: Self.zeekNumber(row["response_body_len"]), ours: Self.bodyLength(response))
            } else if zeekResponse == .absent {
                #expect(row["response_body_len"] == "0", "\(label): Zeek body length without a reply")
            }
        }

        // Every exchange of ours has a Zeek line.
        for record in http {
            let key = "\(record["connection"] as? Int ?? -1)/\(record["index"] as? Int ?? -1)"
            #expect(matched.contains(key), "\(trace): our exchange \(key) (\(record["kind"] ?? "")) has no Zeek line")
        }
        // Every deviation for this trace was needed.
        for (index, deviation) in Self.deviations.enumerated() where deviation.trace == trace {
            #expect(usedDeviations.contains(index), "\(trace): unused deviation \(deviation.field.rawValue) \(deviation.ports ?? [])")
        }
    }

    /// No http.log baseline, but Zeek's test counts its lines: 1000 requests on one connection whose
    /// first response head (238 bytes) is missing from the capture. Zeek logs 1000 lines; we have 1000
    /// exchanges (999 paired: the response after the gap answers request 1 for us, so request 1000 is
    /// left unpaired; Zeek's queue of pending requests overflowed instead, weird HTTP_excessive_pipelining).
    @Test func thousandRequestsLineCount() throws {
        let trace = "1000-requests-one-dropped-response.pcap.gz"
        let out = try String(contentsOf: Self.baselines.appendingPathComponent("\(trace)/out"), encoding: .utf8)
        let lines = out.split(separator: "\n")
        let total = try #require(lines.firstIndex(of: "total http.log lines").flatMap { Int(lines[$0 + 1]) })
        let result = try Harness.run(
            ["analyze", "--messages", "--format", "json", Harness.corpus.appendingPathComponent("traces/\(trace)").path])
        let messages = try #require(try Harness.json(result.stdout)["messages"] as? [[String: Any]])
        let exchanges = Set(messages.map { "\($0["connection"] as? Int ?? -1)/\($0["index"] as? Int ?? -1)" })
        #expect(exchanges.count == total)
    }
}

/// Where Zeek's expected logs are; outside the suite so that its traits can use it.
enum ZeekBaselines {
    static let folder = Harness.corpus.appendingPathComponent("baselines")
    static var present: Bool { FileManager.default.fileExists(atPath: folder.path) }

    /// Traces that have a baseline http.log.
    static func tracesWithHTTPLog() -> [String] {
        Harness.corpusTraces().filter {
            FileManager.default.fileExists(atPath: folder.appendingPathComponent("\($0)/http.log").path)
        }
    }
}
