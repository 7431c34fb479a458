import TrafficReassembly

/// Two counts, one per direction, indexed by `Direction.rawValue` (0: client to server). Stored inline: a
/// two-element array is a heap allocation of its own, and every connection had several of them, made when the
/// connection opened and kept while it lingers after closing. Not generic: a generic struct stored in a class
/// asks the runtime for its metadata every time an instance is made.
package struct PerDirection: Equatable {
    package var clientToServer: Int
    package var serverToClient: Int

    @inlinable
    package init(_ clientToServer: Int, _ serverToClient: Int) {
        self.clientToServer = clientToServer
        self.serverToClient = serverToClient
    }

    @inlinable
    package init() { self.init(0, 0) }

    @inlinable
    package subscript(index: Int) -> Int {
        get { index == 0 ? clientToServer : serverToClient }
        set { if index == 0 { clientToServer = newValue } else { serverToClient = newValue } }
    }
}

extension PerDirection: ExpressibleByArrayLiteral {
    /// `[clientToServer, serverToClient]`, for the rare paths and tests (the literal is an array first).
    package init(arrayLiteral elements: Int...) {
        precondition(elements.count == 2, "one value per direction")
        self.init(elements[0], elements[1])
    }
}
