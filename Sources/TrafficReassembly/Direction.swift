/// Which way bytes travel on a connection.
///
/// The client is the sender of the SYN; without a SYN, the receiver of the SYN-ACK; failing both,
/// the endpoint with the higher port (clients use ephemeral ports), and on equal ports the sender
/// of the first packet.
public enum Direction: Int, Sendable, CaseIterable {
    case clientToServer = 0
    case serverToClient = 1

    public var opposite: Direction { self == .clientToServer ? .serverToClient : .clientToServer }

    /// The JSON/CSV name: `client_to_server` or `server_to_client`.
    public var name: String { self == .clientToServer ? "client_to_server" : "server_to_client" }
}
