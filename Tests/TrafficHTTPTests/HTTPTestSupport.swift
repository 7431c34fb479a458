import Testing
@testable import TrafficHTTP
