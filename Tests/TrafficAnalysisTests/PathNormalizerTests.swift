@testable import TrafficAggregation
import Testing
@testable import TrafficAnalysis

@Suite struct PathNormalizerTests {
    static let collapse = PathNormalizer(collapseIdentifiers: true)

    @Test(arguments: [
        ("/users/123/profile", "/users/{id}/profile"),
        ("/users/456/profile", "/users/{id}/profile"),
        ("/orders/550e8400-e29b-41d4-a716-446655440000", "/orders/{id}"),
        ("/blobs/0123456789abcdef0123", "/blobs/{id}"),
        ("/t/dGhpcyBpcyBhIHRva2VuMTIz", "/t/{id}"),
        ("/reports/2024-01-31/summary", "/reports/{id}/summary"),
        ("/reports/20240131", "/reports/{id}"),
        ("/api/v1/users", "/api/v1/users"),
        ("/", "/"),
        ("/a//b/", "/a//b/"),
        ("/1/2/3", "/{id}/{id}/{id}"),
        ("/search", "/search"),
        ("/deadbeef", "/deadbeef"),  // short hex words stay: they are words as often as ids
        ("/ABCDEFGHIJKLMNOPQRSTUVWXYZ", "/ABCDEFGHIJKLMNOPQRSTUVWXYZ"),  // letters only: a word, not a token
        ("(unknown)", "(unknown)"),
        // Runs between identifiers are copied whole: first, last, adjacent and repeated segments.
        ("/42", "/{id}"),
        ("/42/", "/{id}/"),
        ("/a/1/b/22/c/333", "/a/{id}/b/{id}/c/{id}"),
        ("/1//2", "/{id}//{id}"),
        ("/café/7/naïve/8", "/café/{id}/naïve/{id}"),  // non-ASCII around ids stays as it is
        ("/x/" + String(repeating: "9", count: 300) + "/y", "/x/{id}/y"),
    ])
    func collapsesIdentifiers(path: String, expected: String) {
        #expect(Self.collapse.normalize(path) == expected)
        // The pieces that counting hashes (without making the string) spell the same path.
        var pieces: [UInt8] = []
        PathNormalizer.forEachCollapsedPiece(path) { pieces.append(contentsOf: $0) }
        #expect(String(decoding: pieces, as: UTF8.self) == expected)
    }

    /// The word-at-a-time search for `/` against segments split by `Substring`: paths of every length around
    /// the eight-byte words, slashes at every offset, doubled and trailing ones, identifiers among them.
    @Test func collapsedPiecesMatchSplitSegments() {
        let segments = ["", "a", "v1", "users", "123", "2024-01-31", "550e8400-e29b-41d4-a716-446655440000",
            "0123456789abcdef0", "aB3dE6gH9jK2mN5pQ8sT", "café", "ünï/x", "12345678", "abcdefgh"]
        var paths: [String] = []
        var x: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<3000 {
            var path = ""
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
            var r = x
            for _ in 0..<Int(r % 6) {
                r /= 6
                path += "/" + segments[Int(r % UInt64(segments.count))]
                r /= UInt64(segments.count)
            }
            paths.append(path)
            paths.append(String(path.dropFirst()))  // no leading slash: left as it is
        }
        for length in 0..<40 {
            for at in 0..<length { paths.append("/" + String(repeating: "x", count: at) + "/" + String(repeating: "9", count: length - at)) }
        }
        for path in paths {
            var pieces: [UInt8] = []
            PathNormalizer.forEachCollapsedPiece(path) { pieces.append(contentsOf: $0) }
            let expected = path.utf8.first == UInt8(ascii: "/")
                ? path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                    let bytes = Array(segment.utf8)
                    return bytes.withUnsafeBufferPointer { !$0.isEmpty && PathNormalizer.isIdentifier($0) }
                        ? "{id}" : String(segment)
                }.joined(separator: "/")
                : path
            #expect(String(decoding: pieces, as: UTF8.self) == expected, "\(path)")
            #expect(Self.collapse.normalize(path) == expected, "\(path)")
        }
    }

    /// The count behind "--normalize-paths would merge N rows into M", against normalized keys in a Set.
    @Test func normalizedKeyCountMatchesASetOfNormalizedKeys() {
        let keys = [
            ["api", "/users/1"], ["api", "/users/2"], ["api", "/users/3/orders"], ["cdn", "/users/4"],
            ["api", "/users/550e8400-e29b-41d4-a716-446655440000"], ["api", "/search"], ["api", "/search/"],
            ["api", "/café/7"], ["api", "/café/8"], ["api", "(unknown)"], ["api/", "users/{id}"],
        ]
        // Written out by hand: api /users/{id} (4 keys), api /users/{id}/orders, cdn /users/{id}, api /search,
        // api /search/, api /café/{id}, api (unknown), and `api/` `users/{id}`, which must not meet
        // `api` `/users/{id}` although their bytes run together.
        #expect(ReportBuilder.normalizedKeyCount(keys, pathColumn: 1) == 8)
        let reference = Set(keys.map { [$0[0], Self.collapse.normalize($0[1])] })
        #expect(reference.count == 8)
        #expect(ReportBuilder.normalizedKeyCount([], pathColumn: 0) == 0)
    }

    @Test func templatesNameGroups() {
        let normalizer = PathNormalizer(collapseIdentifiers: false, templates: ["/users/{id}/orders/{order}"])
        #expect(normalizer.normalize("/users/7/orders/abc") == "/users/{id}/orders/{order}")
        #expect(normalizer.normalize("/users/7/orders") == "/users/7/orders")
        #expect(normalizer.normalize("/users//orders/abc") == "/users//orders/abc")
        #expect(PathNormalizer(collapseIdentifiers: false).normalize("/users/7") == "/users/7")
    }
}
