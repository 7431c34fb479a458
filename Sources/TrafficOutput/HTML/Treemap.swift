/// A squarified treemap layout (Bruls, Huizing, van Wijk 2000): rectangles whose areas are proportional
/// to the values and whose sides stay near square. Pure geometry, so tests can check areas without a browser.
package enum Treemap {
    /// A rectangle in the layout's coordinates.
    package struct Rect: Equatable, Sendable {
        package var x: Double
        package var y: Double
        package var width: Double
        package var height: Double

        package init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        package var area: Double { width * height }
    }

    /// One rectangle per value, in the order of `values`, filling `bounds` (values ≤ 0 get empty rectangles).
    /// Areas are exact up to floating point: area(i) = values[i] / sum × bounds.area.
    package static func layout(_ values: [Int], in bounds: Rect) -> [Rect] {
        var result = Array(repeating: Rect(x: bounds.x, y: bounds.y, width: 0, height: 0), count: values.count)
        let total = values.reduce(0.0) { $0 + Double(max(0, $1)) }
        guard total > 0, bounds.area > 0 else { return result }
        let scale = bounds.area / total
        // Largest first, which the algorithm needs for squareness; ties by position keep it deterministic.
        let order = values.indices.filter { values[$0] > 0 }.sorted { values[$0] != values[$1] ? values[$0] > values[$1] : $0 < $1 }
        var free = bounds
        var row: [Int] = []
        var rowArea = 0.0
        var i = 0
        while i < order.count {
            let area = Double(values[order[i]]) * scale
            let side = min(free.width, free.height)
            if row.isEmpty || worst(row.map { Double(values[$0]) * scale } + [area], side: side)
                <= worst(row.map { Double(values[$0]) * scale }, side: side)
            {
                row.append(order[i])
                rowArea += area
                i += 1
            } else {
                place(row, areas: row.map { Double(values[$0]) * scale }, total: rowArea, in: &free, into: &result)
                row = []
                rowArea = 0
            }
        }
        if !row.isEmpty { place(row, areas: row.map { Double(values[$0]) * scale }, total: rowArea, in: &free, into: &result) }
        return result
    }

    /// The worst aspect ratio of a row of `areas` laid along a side of length `side`.
    private static func worst(_ areas: [Double], side: Double) -> Double {
        let sum = areas.reduce(0, +)
        guard sum > 0, side > 0, let largest = areas.max(), let smallest = areas.min(), smallest > 0 else { return .infinity }
        let s2 = side * side, sum2 = sum * sum
        return max(s2 * largest / sum2, sum2 / (s2 * smallest))
    }

    /// Lays a row along the shorter side of `free` and removes its strip from `free`.
    private static func place(_ row: [Int], areas: [Double], total: Double, in free: inout Rect, into result: inout [Rect]) {
        if free.width >= free.height {
            // A column at the left, as wide as the row's area needs.
            let width = free.height > 0 ? total / free.height : 0
            var y = free.y
            for (index, area) in zip(row, areas) {
                let height = width > 0 ? area / width : 0
                result[index] = Rect(x: free.x, y: y, width: width, height: height)
                y += height
            }
            free = Rect(x: free.x + width, y: free.y, width: max(0, free.width - width), height: free.height)
        } else {
            let height = free.width > 0 ? total / free.width : 0
            var x = free.x
            for (index, area) in zip(row, areas) {
                let width = height > 0 ? area / height : 0
                result[index] = Rect(x: x, y: free.y, width: width, height: height)
                x += width
            }
            free = Rect(x: free.x, y: free.y + height, width: free.width, height: max(0, free.height - height))
        }
    }
}
