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
