import Testing
@testable import TrafficCheck

@Suite struct AmountTests {
    @Test func averagesRoundHalfUpToAThousandth() {
        #expect(Amount(total: 2000, count: 3).milli == 666_667)
        #expect(Amount(total: 1, count: 2000).milli == 1)  // 0.5 milli rounds up
        #expect(Amount(total: 7, count: 0) == Amount(7))  // no requests: the total
    }

    @Test func formats() {
        #expect(Amount(milli: 2_166_667).fixed(1) == "2166.7")
        #expect(Amount(2048).fixed(1) == "2048.0")
        #expect(Amount(2048).short == "2048")
        #expect(Amount(milli: 2_166_667).short == "2166.7")
        #expect(Amount(milli: 2_166_670).exact == "2166.67")
        #expect(Amount(milli: -1500).signed == "-1.5")
        #expect(Amount(milli: 1500).signed == "+1.5")
        #expect(Amount(0).signed == "0")
    }

    @Test func percentChange() {
        #expect(Amount(3134).percentChange(from: Amount(2134)) == "+46.9%")
        #expect(Amount(1000).percentChange(from: Amount(2000)) == "-50.0%")
        #expect(Amount(1000).percentChange(from: Amount(1000)) == "0.0%")
        #expect(Amount(1).percentChange(from: .zero) == nil)
    }
}

/// A hand-edited baseline can hold numbers near Int.max: comparing them must not trap (issue 19).
@Suite struct AmountExtremesTests {
    @Test func percentChangeOfExtremes() {
        #expect(Amount(milli: .max).percentChange(from: Amount(milli: 1)) == "+100000000000000.0%")
        #expect(Amount(milli: .min).percentChange(from: Amount(milli: .max)) == "-200.0%")
        #expect(Amount(milli: 0).percentChange(from: Amount(milli: .min)) == "-100.0%")
    }

    @Test func toleranceOfExtremes() {
        let strict = Tolerance()
        #expect(strict.isExceeded(base: Amount(milli: .min), now: Amount(milli: .max)))
        #expect(!strict.isExceeded(base: Amount(milli: .max), now: Amount(milli: .min)))
        #expect(Tolerance(partsPerMillion: 100_000).isExceeded(base: Amount(milli: -5), now: Amount(milli: .max)))
        #expect(Amount(milli: .max).fixed(3) == "9223372036854775.807")
        #expect(Amount(milli: .min).fixed(1) == "-9223372036854775.8")
    }
}
