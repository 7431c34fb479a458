import Testing
import TrafficCodecs

/// `Content-Encoding` header values to codings.
@Suite struct ContentEncodingParseTests {
    @Test(arguments: [
        ("gzip", [ContentCoding.gzip]),
        ("GZIP", [.gzip]),
        ("x-gzip", [.gzip]),
        ("X-GZip", [.gzip]),
        ("deflate", [.deflate]),
        ("br", [.brotli]),
        ("Br", [.brotli]),
        ("zstd", [.zstd]),
        ("identity", [.identity]),
        ("gzip, br", [.gzip, .brotli]),
        ("gzip,br", [.gzip, .brotli]),
        (" \tgzip ,\t br \t", [.gzip, .brotli]),
        ("gzip,,  ,br,", [.gzip, .brotli]),
        ("deflate, identity, zstd", [.deflate, .identity, .zstd]),
        ("", []),
        (" , ", []),
    ])
    func known(_ value: String, _ expected: [ContentCoding]) {
        #expect(ContentCoding.parse(contentEncoding: value) == expected)
    }

    @Test(arguments: ["compress", "x-compress", "foo", "gzip, foo", "g zip", "gzip;q=1", "gzipp", "b", "\"gzip\""])
    func unknown(_ value: String) {
        #expect(ContentCoding.parse(contentEncoding: value) == nil)
    }

    @Test func substringInput() {
        let header = "Content-Encoding: gzip, br"
        let value = header[header.index(header.startIndex, offsetBy: 17)...]
        #expect(ContentCoding.parse(contentEncoding: value) == [.gzip, .brotli])
    }
}
