import TrafficHTTP

/// Group totals by group key: an index from keys to slots, and the totals in fixed-size chunks.
///
/// With ids in paths a capture of a gigabyte has tens of thousands of groups. Chunks keep growth from
/// copying (and briefly doubling) every group's totals, the way one growing array would.
struct GroupTable {
    private static let chunkShift = 12
    private static let chunkSize = 1 << chunkShift

    private var slots: [[String]: Int] = [:]
    /// The keys of each slot, in the order the groups appeared.
    private(set) var keys: [[String]] = []
    private var chunks: [[GroupTotals]] = []

    var count: Int { keys.count }

    /// The slot of `key`, made (with empty totals) if it is new.
    mutating func slot(for key: [String]) -> Int {
        if let slot = slots[key] { return slot }
        let slot = keys.count
        slots[key] = slot
        keys.append(key)
        if slot & (Self.chunkSize - 1) == 0 {
            chunks.append([])
            chunks[chunks.count - 1].reserveCapacity(Self.chunkSize)
        }
        chunks[chunks.count - 1].append(GroupTotals())
        return slot
    }

    subscript(slot: Int) -> GroupTotals {
        get { chunks[slot >> Self.chunkShift][slot & (Self.chunkSize - 1)] }
        _modify { yield &chunks[slot >> Self.chunkShift][slot & (Self.chunkSize - 1)] }
    }

    /// Calls `body` with every group in slot order and leaves the table empty. Each chunk is freed as soon
    /// as it is passed on, so the groups exist about once, not twice, wherever they go.
    mutating func drain(_ body: ([String], GroupTotals) -> Void) {
        slots = [:]  // no more lookups: the index goes before the rows are made
        var slot = 0
        for c in chunks.indices {
            for totals in chunks[c] {
                body(keys[slot], totals)
                slot += 1
            }
            chunks[c] = []
        }
        removeAll()
    }

    /// Every group as a report row, in slot order; the table is left empty.
    mutating func drainRows() -> [ReportGroup] {
        var rows: [ReportGroup] = []
        rows.reserveCapacity(count)
        drain { rows.append(ReportGroup(keys: $0, totals: $1)) }
        return rows
    }

    /// Frees everything (the report has taken what it needs).
    mutating func removeAll() {
        slots = [:]
        keys = []
        chunks = []
    }
}
