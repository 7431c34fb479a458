import TrafficCapture

extension CaptureTime {
    /// `2013-03-07T21:42:06.869344000Z`: UTC, nanoseconds, what spreadsheets parse as a time.
    public var iso8601: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(30)
        appendISO8601(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `2024-03-01T12:00:00.000000000Z` appended as bytes: CSV listings write three of these per record, and the
    /// interpolated strings this replaced cost more than the rest of a record's row (measured on the bench).
    func appendISO8601(to bytes: inout [UInt8]) {
        // Times from captures are within ±(2^62 − 1) ns already; anything else is held there so the day
        // arithmetic below cannot overflow.
        let nanoseconds = min(max(self.nanoseconds, -Self.limit), Self.limit)
        let seconds = nanoseconds >= 0 ? nanoseconds / 1_000_000_000 : (nanoseconds - 999_999_999) / 1_000_000_000
        let fraction = nanoseconds - seconds * 1_000_000_000
        var days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Howard Hinnant's civil_from_days: proleptic Gregorian calendar from days since 1970-01-01.
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        /// At least `width` digits, zero-padded (a year past 9999 keeps all of its digits; a negative one its sign).
        func pad(_ value: Int64, _ width: Int) {
            var magnitude = value.magnitude
            if value < 0 { bytes.append(0x2d) }
            var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                         UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            var count = 0
            withUnsafeMutableBytes(of: &digits) { buffer in
                repeat {
                    buffer[count] = 0x30 + UInt8(magnitude % 10)
                    magnitude /= 10
                    count += 1
                } while magnitude > 0 && count < buffer.count
                for _ in count..<max(count, width) { bytes.append(0x30) }
                for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
            }
        }
        pad(year, 4)
        bytes.append(0x2d)
        pad(month, 2)
        bytes.append(0x2d)
        pad(day, 2)
        bytes.append(0x54)
        pad(secondOfDay / 3600, 2)
        bytes.append(0x3a)
        pad(secondOfDay / 60 % 60, 2)
        bytes.append(0x3a)
        pad(secondOfDay % 60, 2)
        bytes.append(0x2e)
        pad(fraction, 9)
        bytes.append(0x5a)
    }
}
