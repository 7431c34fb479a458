import Testing

@testable import TrafficOutput

/// The kept head taken apart for HAR: fields in order, obs-fold joined, bytes that are not UTF-8 kept one
/// character per byte (never replaced, never a trap), cookies split as RFC 6265 writes them.
@Suite struct HARHeadTests {
    @Test func fieldsInOrderWithFoldsAndNonUTF8Bytes() {
        // "Set-Cookie: a=1; Path=/; HttpOnly" and a value with bytes 0xE9 0xFF (Latin-1 "é", "ÿ"; not UTF-8).
        let head: [UInt8] = Array("HTTP/1.1 404 Not Found\nX-Long: one\n  two\nSet-Cookie: a=1; Path=/; HttpOnly\nX-Bin: ".utf8)
            + [0xE9, 0xFF] + Array("\nno colon here\n".utf8)
        let parsed = HARHead(head)
        #expect(parsed.reasonPhrase == "Not Found")
        #expect(parsed.fields.map(\.name) == ["X-Long", "Set-Cookie", "X-Bin", "no colon here"])
        #expect(parsed.fields[0].value == "one two")
        #expect(parsed.fields[2].value == "\u{E9}\u{FF}")
        let cookie = parsed.responseCookies
        #expect(cookie.count == 1 && cookie[0].name == "a" && cookie[0].value == "1")
        #expect(cookie[0].path == "/" && cookie[0].httpOnly && !cookie[0].secure)
    }

    /// The three ways `text` makes a string: ASCII, valid UTF-8 (kept as UTF-8, not one character per byte),
    /// and bytes that are not UTF-8 (one character per byte).
    @Test func textOfASCIIOfUTF8AndOfOtherBytes() {
        #expect(HARHead.text(Array("plain ascii".utf8)[...]) == "plain ascii")
        #expect(HARHead.text(Array("caf\u{E9} \u{1F600}".utf8)[...]) == "caf\u{E9} \u{1F600}")
        #expect(HARHead.text([0x63, 0x61, 0x66, 0xE9][...]) == "caf\u{E9}")
        #expect(HARHead.text([0xC3][...]) == "\u{C3}")  // a lead byte cut off: not UTF-8
        #expect(HARHead.text([][...]) == "")
        // A slice that does not start at index 0 reads its own bytes.
        let bytes: [UInt8] = Array("xx\u{E9}t\u{E9}".utf8)
        #expect(HARHead.text(bytes[2...]) == "\u{E9}t\u{E9}")
    }

    /// HTTP/2 heads as the parser keeps them (issue 22): `HTTP/2 200` has no reason phrase, pseudo-header fields
    /// are not repeated, names are lower case, and `cookie` fields may come as several crumbs.
    @Test func http2HeadsWithoutReasonPhrase() {
        let response = HARHead(Array("HTTP/2 200\ncontent-type: application/json\nset-cookie: a=1; Path=/\nset-cookie: b=2\n".utf8))
        #expect(response.startLine == "HTTP/2 200")
        #expect(response.reasonPhrase == "")
        #expect(response.fields.map(\.name) == ["content-type", "set-cookie", "set-cookie"])
        #expect(response.responseCookies.map(\.name) == ["a", "b"] && response.responseCookies[0].path == "/")
        let request = HARHead(Array("GET /path?q HTTP/2\naccept: */*\ncookie: a=1\ncookie: b=2; c=3\n".utf8))
        #expect(request.startLine == "GET /path?q HTTP/2")
        #expect(request.values("Accept") == ["*/*"])
        #expect(request.requestCookies.map { "\($0.name)=\($0.value)" } == ["a=1", "b=2", "c=3"])
        // A head of a start line alone (a 204, a HEAD request's answer).
        let bare = HARHead(Array("HTTP/2 204\n".utf8))
        #expect(bare.startLine == "HTTP/2 204" && bare.fields.isEmpty && bare.reasonPhrase == "")
    }

    @Test func requestCookiesArePairs() {
        let parsed = HARHead(Array("GET / HTTP/1.1\nCookie: id=42; theme=dark;flag\ncookie: x=y=z\n".utf8))
        #expect(parsed.requestCookies.map { "\($0.name)|\($0.value)" } == ["id|42", "theme|dark", "|flag", "x|y=z"])
    }

    @Test func emptyOrGarbageHeadsGiveNothing() {
        #expect(HARHead([]).fields.isEmpty && HARHead([]).reasonPhrase == "")
        // Lines: "" (the start line), "" (no colon: a field without value), NUL ":" (name NUL), " " (an empty
        // fold, dropped): two fields, and no trap.
        let garbage = HARHead([0x0A, 0x0A, 0x00, 0x3A, 0x0A, 0x20, 0x0A])
        #expect(garbage.fields.map(\.name) == ["", "\u{0}"])
    }

    @Test func millisecondsAreExact() {
        #expect(HARTimings.milliseconds(-5) == "-1")
        #expect(HARTimings.milliseconds(0) == "0")
        #expect(HARTimings.milliseconds(32_000) == "0.032")
        #expect(HARTimings.milliseconds(1_234_567_891) == "1234.567891")
        #expect(HARTimings.milliseconds(2_000_000) == "2")
    }
}
