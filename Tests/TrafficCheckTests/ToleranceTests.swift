import Testing
@testable import TrafficCheck
