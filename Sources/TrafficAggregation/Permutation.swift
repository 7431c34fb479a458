/// Rearranging rows in place by a permutation, for the sorts of spooled runs and of reports.
package enum Permutation {
    /// Reorders `rows` in place so that `rows[i]` becomes the old `rows[source[i]]` (following the
    /// permutation's cycles: one row moved at a time, no second array of rows). Rows are moved as bytes:
    /// assigning them would retain and release every key and total once per move.
    package static func apply<Row>(_ rows: inout [Row], by source: [Int]) {
        precondition(source.count == rows.count, "a permutation of every row")
        var source = source
        rows.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for start in source.indices where source[start] != start {
                let first = (base + start).move()
                var i = start
                while source[i] != start {
                    let next = source[i]
                    (base + i).moveInitialize(from: base + next, count: 1)
                    source[i] = i
                    i = next
                }
                (base + i).initialize(to: first)
                source[i] = i
            }
        }
    }
}
