import TrafficReassembly

/// Makes the next stage's handler for each new connection.
public typealias TrafficReassemblyHandlerFactory = TCPReassembler.HandlerFactory
