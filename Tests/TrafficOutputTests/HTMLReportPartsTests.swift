import Testing
@testable import TrafficOutput

/// The pieces of the HTML report that need no browser: the treemap's geometry and the escaping of values
/// from the wire.
@Suite struct HTMLReportPartsTests {
    static let bounds = Treemap.Rect(x: 0, y: 0, width: 1000, height: 420)

    @Test(arguments: [[1], [5, 5], [100, 1, 1, 1], [20341, 4115, 2700, 915, 913, 908, 855, 98], Array(1...60), [7, 0, 3, -2]])
    func treemapAreasAreProportionalAndTile(values: [Int]) {
        let rects = Treemap.layout(values, in: Self.bounds)
        let total = Double(values.filter { $0 > 0 }.reduce(0, +))
        for (value, rect) in zip(values, rects) {
            let expected = value > 0 ? Double(value) / total * Self.bounds.area : 0
            #expect(abs(rect.area - expected) < 1e-6 * Self.bounds.area, "\(value): \(rect.area) vs \(expected)")
            // Inside the bounds.
            #expect(rect.x >= -1e-9 && rect.y >= -1e-9)
            #expect(rect.x + rect.width <= Self.bounds.width + 1e-6 && rect.y + rect.height <= Self.bounds.height + 1e-6)
        }
        // No two rectangles overlap (beyond rounding).
        for i in rects.indices {
            for j in rects.indices where j > i {
                let a = rects[i], b = rects[j]
                let w = min(a.x + a.width, b.x + b.width) - max(a.x, b.x)
                let h = min(a.y + a.height, b.y + b.height) - max(a.y, b.y)
                #expect(w <= 1e-6 || h <= 1e-6, "\(a) overlaps \(b)")
            }
        }
    }

    @Test func treemapKeepsRectanglesNearSquare() {
        let rects = Treemap.layout(Array(repeating: 10, count: 48), in: Self.bounds)
        let worst = rects.map { max($0.width / $0.height, $0.height / $0.width) }.max()!
        // 48 equal values in a 1000×420 box: slicing would give 20.8×420 slivers (ratio 20); squarified rows of
        // near-square cells (the last row is the least square, about 2.2 here).
        #expect(worst < 3)
    }

    @Test func valuesFromTheWireNeverBecomeMarkup() {
        var html = HTMLBuffer()
        html.text("/a?<script>alert(\"x\")</script>&'\u{01}")
        let text = String(decoding: html.bytes, as: UTF8.self)
        #expect(text == "/a?&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;\u{FFFD}")
    }

    @Test(arguments: [(0.0, "0"), (1.5, "1.5"), (2.05, "2.05"), (-3.25, "-3.25"), (10.1, "10.1"), (Double.nan, "0")])
    func svgNumbers(value: Double, text: String) {
        var html = HTMLBuffer()
        html.number(value)
        #expect(String(decoding: html.bytes, as: UTF8.self) == text)
    }
}
