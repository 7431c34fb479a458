import Testing
@testable import TrafficCheck

@Suite struct ByteSizeTests {
    @Test(arguments: [
        ("2048", 2048), ("512B", 512), ("2KiB", 2048), ("2 KiB", 2048), ("2kb", 2000), ("1.5MiB", 1_572_864),
        ("1MB", 1_000_000), ("1GiB", 1 << 30), ("0.5KiB", 512), ("0.001KB", 1),
    ] as [(String, Int)])
    func parses(text: String, bytes: Int) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test(arguments: ["", "KiB", "2 XB", "-1", "1.2.3KB", "1.2345KB", "99999999999999999999"])
    func rejects(text: String) {
        #expect(ByteSize.parse(text) == nil)
    }
}
