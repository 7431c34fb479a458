/// Builds an HTTP/1.1 start line and header block, counting the cookie lines.
struct MessageHead {
    private(set) var bytes: [UInt8] = []
    private(set) var cookieBytes = 0

    init(_ startLine: String) {
        bytes.reserveCapacity(512)
        bytes.append(contentsOf: startLine.utf8)
        bytes.append(contentsOf: [13, 10])
    }

    mutating func field(_ name: String, _ value: String) {
        let before = bytes.count
        bytes.append(contentsOf: name.utf8)
        bytes.append(contentsOf: [58, 32])  // ": "
        bytes.append(contentsOf: value.utf8)
        bytes.append(contentsOf: [13, 10])
        if name == "Cookie" || name == "Set-Cookie" { cookieBytes += bytes.count - before }
    }

    /// Appends the empty line that ends the header block.
    mutating func end() -> [UInt8] {
        bytes.append(contentsOf: [13, 10])
        return bytes
    }
}

/// An IMF-fixdate (RFC 9110 §5.6.7), e.g. `Fri, 01 Mar 2024 12:00:00 GMT`.
func httpDate(secondsSinceEpoch: UInt64) -> String {
    let days = Int(secondsSinceEpoch / 86_400)
    let secondsOfDay = Int(secondsSinceEpoch % 86_400)
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468
    let era = z / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(weekdays[days % 7]), \(two(day)) \(months[month - 1]) \(year) "
        + "\(two(secondsOfDay / 3600)):\(two(secondsOfDay / 60 % 60)):\(two(secondsOfDay % 60)) GMT"
}
