import Testing
import TrafficHTTP2

@Test func frameTypesHaveTheirRFC9113Numbers() {
    #expect(HTTP2FrameType.continuation.rawValue == 9)
    #expect(HTTP2FrameType(rawValue: 0xa) == nil)
}
