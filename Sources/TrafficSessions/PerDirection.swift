import TrafficReassembly

/// Two values, one per direction, indexed by `Direction.rawValue` (0: client to server). Stored inline: a
/// two-element array is a heap allocation of its own, and every connection had several of them, made when the
/// connection opened and kept while it lingers after closing.
package struct PerDirection<Value> {
    package var clientToServer: Value
    package var serverToClient: Value

    package init(_ clientToServer: Value, _ serverToClient: Value) {
        self.clientToServer = clientToServer
        self.serverToClient = serverToClient
    }

    package init(repeating value: Value) { self.init(value, value) }

    package subscript(index: Int) -> Value {
        get { index == 0 ? clientToServer : serverToClient }
        set { if index == 0 { clientToServer = newValue } else { serverToClient = newValue } }
    }
}

extension PerDirection: Equatable where Value: Equatable {}

extension PerDirection: ExpressibleByArrayLiteral {
    /// `[clientToServer, serverToClient]`, for the rare paths and tests (the literal is an array first).
    package init(arrayLiteral elements: Value...) {
        precondition(elements.count == 2, "one value per direction")
        self.init(elements[0], elements[1])
    }
}
