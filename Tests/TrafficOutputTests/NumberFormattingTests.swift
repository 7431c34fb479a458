import Testing
import TrafficCapture
@testable import TrafficOutput

/// Every formatter of a number or a time takes any value without trapping (issue 19: a capture whose clock
/// stepped back made the table trap with "Negative count not allowed"). Expected texts are worked out by hand.
@Suite struct NumberFormattingTests {
    @Test(arguments: [
        (0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"), (-1, "-1 B"), (-2048, "-2.0 KiB"),
        (5 << 40, "5.0 TiB"),
    ])
    func humanBytes(value: Int, text: String) {
        #expect(TrafficOutput.humanBytes(value) == text)
        #expect(humanBytesWidth(value) == text.count)
    }

    @Test func humanBytesAtTheExtremes() {
        // Int.max = 8 388 608 TiB less a byte: 8388608.0 TiB after rounding to tenths.
        #expect(TrafficOutput.humanBytes(.max) == "8388608.0 TiB")
        #expect(TrafficOutput.humanBytes(.min) == "-8388608.0 TiB")
        #expect(humanBytesWidth(.max) == "8388608.0 TiB".count)
    }

    @Test(arguments: [0, 7, -7, 10, -10, Int.max, Int.min])
    func decimalWidthIsTheLengthOfTheText(value: Int) {
        #expect(decimalWidth(value) == String(value).count)
    }

    @Test(arguments: [
        (Int64(0), "0.000s"), (1_234_567_890, "1.234s"), (-1_500_000_000, "-1.500s"), (999_999, "0.000s"),
        (Int64.max, "9223372036.854s"), (Int64.min, "-9223372036.854s"),
    ] as [(Int64, String)])
    func secondsText(nanoseconds: Int64, text: String) {
        #expect(CaptureTime(nanoseconds: nanoseconds).secondsText == text)
    }

    @Test(arguments: [
        (Int64(0), "0.000000000"), (-1, "-0.000000001"), (1_500_000_000, "1.500000000"),
        (Int64.min, "-9223372036.854775808"), (Int64.max, "9223372036.854775807"),
    ] as [(Int64, String)])
    func decimalString(nanoseconds: Int64, text: String) {
        #expect(CaptureTime(nanoseconds: nanoseconds).decimalString == text)
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000000000Z"),
        (-1, "1969-12-31T23:59:59.999999999Z"),
        (4_294_967_295 * 1_000_000_000, "2106-02-07T06:28:15.000000000Z"),
        // Held at ±(2^62 − 1) ns = ±4 611 686 018.427387903 s: 53 375 days after 1970-01-01 and
        // 23:53:38 into the day; the mirror is 53 376 days before it, 00:06:21.572612097 into that day.
        (Int64.max, "2116-02-20T23:53:38.427387903Z"),
        (Int64.min, "1823-11-12T00:06:21.572612097Z"),
    ] as [(Int64, String)])
    func iso8601(nanoseconds: Int64, text: String) {
        #expect(CaptureTime(nanoseconds: nanoseconds).iso8601 == text)
    }

    @Test func captureTimesAreClampedSoDifferencesFit() {
        let late = CaptureTime(seconds: .max, nanoseconds: 0)
        let early = CaptureTime(seconds: .min, nanoseconds: 0)
        #expect(late.nanoseconds == CaptureTime.limit && early.nanoseconds == -CaptureTime.limit)
        #expect(early.duration(to: late).nanoseconds == 2 * CaptureTime.limit)
        #expect(late.duration(to: early) == .zero)
        #expect(CaptureTime(nanoseconds: .max).adding(CaptureTime(nanoseconds: 1)).nanoseconds == .max)
        #expect(CaptureTime(seconds: 4_294_967_295, nanoseconds: 999_999_999).nanoseconds == 4_294_967_295_999_999_999)
    }

    @Test func narrowTablesNeverTrap() {
        var table = TextTable(columns: [.init("path", .left, shrinkable: true), .init("bytes"), .init("x", dropOrder: 1)])
        table.rows = [["/" + String(repeating: "a", count: 300), "-12", ""], ["", "\(Int.min)", "\(Int.max)"]]
        for width in [0, 1, 3, 20, 80, 1 << 40] {
            let text = table.render(width: width)
            #expect(text.hasPrefix("path"), "\(width)")
        }
    }
}
