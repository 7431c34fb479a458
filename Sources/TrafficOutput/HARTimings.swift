import TrafficCapture
import TrafficSessions

/// HAR's `timings` of one exchange, from capture times (nanoseconds; written as milliseconds).
///
/// - `connect`: the TCP handshake, SYN to the ACK completing it, on a connection's first exchange (-1 on
///   the others and when the handshake was not captured); with TLS it runs to the end of the TLS handshake
///   and `ssl` is the TLS part (HAR 1.2: `ssl` is included in `connect`).
/// - `send`: the request's first to last byte (the packets that carried them).
/// - `wait`: the request's last byte to the response's first; 0, not negative, when the server answered
///   before the request ended (HAR requires non-negative send, wait and receive).
/// - `receive`: the response's first to last byte.
/// - `blocked`, `dns`: -1, a capture does not see them.
/// `time` is their sum without the -1s and without `ssl` (already in `connect`); `startedDateTime` is the
/// SYN for a first exchange, else the request's first byte (the response's without a request).
struct HARTimings {
    var started: CaptureTime
    var connect: Int64 = -1
    var ssl: Int64 = -1
    var send: Int64 = 0
    var wait: Int64 = 0
    var receive: Int64 = 0

    init(request: MessageRecord?, response: MessageRecord?) {
        let first = request ?? response
        started = request?.time ?? response?.time ?? .zero
        if let tcp = first?.connect {
            started = tcp.start
            connect = tcp.start.duration(to: tcp.end).nanoseconds
            if let tls = first?.tlsHandshake {
                ssl = tls.start.duration(to: tls.end).nanoseconds
                connect = tcp.start.duration(to: tls.end).nanoseconds
            }
        } else if let tls = first?.tlsHandshake {
            ssl = tls.start.duration(to: tls.end).nanoseconds
        }
        if let request { send = request.time.duration(to: request.lastByteTime).nanoseconds }
        if let request, let response { wait = request.lastByteTime.duration(to: response.time).nanoseconds }
        if let response { receive = response.time.duration(to: response.lastByteTime).nanoseconds }
    }

    var total: Int64 { max(connect, 0) &+ send &+ wait &+ receive }

    func write(to w: inout JSONWriter) {
        w.beginObject("timings")
        w.field("blocked", -1)
        w.field("dns", -1)
        w.field("connect", raw: Self.milliseconds(connect))
        w.field("send", raw: Self.milliseconds(send))
        w.field("wait", raw: Self.milliseconds(wait))
        w.field("receive", raw: Self.milliseconds(receive))
        w.field("ssl", raw: Self.milliseconds(ssl))
        w.endObject()
    }

    /// Nanoseconds as exact decimal milliseconds (`12.345678`, `0`, `-1`), trailing zeros dropped.
    static func milliseconds(_ nanoseconds: Int64) -> String {
        if nanoseconds < 0 { return "-1" }
        let whole = nanoseconds / 1_000_000
        var fraction = String(nanoseconds % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? "\(whole)" : "\(whole).\(fraction)"
    }
}
