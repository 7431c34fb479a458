/// The distinct bodies of the capture, made once from the seed and reused by many messages.
///
/// JSON bodies come in pools of variants of varied size; binary bodies (images, downloads,
/// uploads) are slices of one incompressible blob, so they cost no memory of their own.
final class BodyCatalogue {
    static let blobSize = 8 << 20

    let users: [Body]
    let orderLists: [Body]
    let productPages: [Body]
    let searchResults: [Body]
    let created: [Body]
    let notFound: [Body]
    let tokens: [Body]
    let sessions: [Body]
    let orderRequests: [Body]
    let settingsRequests: [Body]
    let eventBatches: [Body]
    let scripts: [Body]
    let images: [Body]
    let downloads: [Body]
    let uploads: [Body]
    let uploadParts: [Body]
    let health: Body
    private let blob: UnsafeRawBufferPointer

    init(generator: inout SeededGenerator) {
        let blobStorage = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.blobSize, alignment: 8)
        for index in stride(from: 0, to: Self.blobSize, by: 8) {
            blobStorage.storeBytes(of: generator.next(), toByteOffset: index, as: UInt64.self)
        }
        let blob = UnsafeRawBufferPointer(blobStorage)
        self.blob = blob
        func slice(_ size: Int, _ generator: inout SeededGenerator, type: String) -> Body {
            let start = generator.int(0...(Self.blobSize - size))
            return Body(sharing: UnsafeRawBufferPointer(rebasing: blob[start..<(start + size)]), contentType: type)
        }
        let json = "application/json; charset=utf-8"
        var g = generator
        users = (0..<48).map { _ in Body(Array(JSONText.user(&g).utf8), contentType: json) }
        orderLists = (0..<32).map { _ in Body(Array(JSONText.orders(&g, count: g.int(2...60)).utf8), contentType: json)
        }
        productPages = (0..<32).map { _ in
            Body(Array(JSONText.products(&g, count: g.int(20...50)).utf8), contentType: json)
        }
        searchResults = (0..<32).map { _ in
            Body(Array(JSONText.products(&g, count: g.int(0...25)).utf8), contentType: json)
        }
        created = (0..<16).map { _ in
            Body(
                Array(
                    "{\"id\":\(g.int(100_000...999_999)),\"status\":\"created\",\"created_at\":\"2024-03-01T12:\(g.int(10...59)):\(g.int(10...59))Z\"}"
                        .utf8), contentType: json)
        }
        notFound = (0..<8).map { _ in
            Body(
                Array(
                    "{\"error\":\"not_found\",\"message\":\"no such resource\",\"request_id\":\"\(g.hex(32))\"}".utf8),
                contentType: json)
        }
        tokens = (0..<16).map { _ in
            Body(
                Array(
                    "{\"access_token\":\"\(g.token(120))\",\"token_type\":\"Bearer\",\"expires_in\":3600,\"refresh_token\":\"\(g.token(64))\",\"scope\":\"read write\"}"
                        .utf8), contentType: json)
        }
        sessions = (0..<16).map { _ in Body(Array(JSONText.session(&g).utf8), contentType: json) }
        orderRequests = (0..<32).map { _ in Body(Array(JSONText.orderRequest(&g).utf8), contentType: "application/json")
        }
        settingsRequests = (0..<16).map { _ in
            Body(
                Array(
                    "{\"theme\":\"\(["dark", "light", "system"][g.int(0...2)])\",\"language\":\"en-US\",\"notifications\":{\"email\":\(g.chance(0.5)),\"push\":\(g.chance(0.5))},\"timezone\":\"Europe/Berlin\"}"
                        .utf8), contentType: "application/json")
        }
        eventBatches = (0..<32).map { _ in
            Body(Array(JSONText.events(&g, count: g.int(3...40)).utf8), contentType: "application/json")
        }
        scripts = (0..<6).map { _ in
            Body(Array(JSONText.script(&g, bytes: g.int(40_000...400_000)).utf8), contentType: "application/javascript")
        }
        images = (0..<64).map { _ in slice(g.int(4_000...80_000), &g, type: "image/webp") }
        downloads = (0..<16).map { _ in slice(g.int(1_500_000...8_000_000), &g, type: "application/octet-stream") }
        uploads = (0..<16).map { _ in slice(g.int(500_000...4_000_000), &g, type: "image/webp") }
        uploadParts = (0..<8).map { _ in slice(g.int(64_000...1_000_000), &g, type: "application/octet-stream") }
        health = Body(Array("ok".utf8), contentType: "text/plain")
        generator = g
    }
}

/// Plausible JSON and JavaScript text, sized and varied by the seed.
enum JSONText {
    static let firstNames = [
        "Ada", "Grace", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger", "Radia",
    ]
    static let lastNames = ["Lovelace", "Hopper", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Allen"]
    static let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
        "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
    ]

    static func user(_ g: inout SeededGenerator) -> String {
        let first = firstNames[g.int(0...firstNames.count - 1)]
        let last = lastNames[g.int(0...lastNames.count - 1)]
        let roles = (0..<g.int(1...4)).map { _ in "\"\(words[g.int(0...19)])\"" }.joined(separator: ",")
        let addresses = (0..<g.int(0...3)).map { _ in
            "{\"street\":\"\(g.int(1...999)) \(words[g.int(0...19)].titled) Street\",\"city\":\"\(words[g.int(0...19)].titled)ville\",\"zip\":\"\(g.int(10000...99999))\",\"country\":\"DE\"}"
        }.joined(separator: ",")
        return
            "{\"id\":\(g.int(1...99_999)),\"name\":\"\(first) \(last)\",\"email\":\"\(first.lowercased()).\(last.lowercased())@example.org\","
            + "\"created_at\":\"2023-\(g.int(10...12))-\(g.int(10...28))T\(g.int(10...23)):00:00Z\",\"verified\":\(g.chance(0.8)),"
            + "\"roles\":[\(roles)],\"addresses\":[\(addresses)],\"avatar_url\":\"https://static.example.com/img/avatars/\(g.hex(16)).jpg\","
            + "\"preferences\":{\"newsletter\":\(g.chance(0.3)),\"currency\":\"EUR\",\"locale\":\"en-US\"}}"
    }

    static func order(_ g: inout SeededGenerator) -> String {
        let items = (0..<g.int(1...5)).map { _ in
            "{\"sku\":\"SKU-\(g.int(10000...99999))\",\"quantity\":\(g.int(1...9)),\"unit_price\":\(g.int(100...99999)),\"name\":\"\(words[g.int(0...19)]) \(words[g.int(0...19)])\"}"
        }.joined(separator: ",")
        return
            "{\"id\":\(g.int(100_000...999_999)),\"status\":\"\(["pending", "paid", "shipped", "delivered"][g.int(0...3)])\","
            + "\"total\":\(g.int(100...500_000)),\"currency\":\"EUR\",\"items\":[\(items)],\"placed_at\":\"2024-02-\(g.int(10...28))T\(g.int(10...23)):\(g.int(10...59)):00Z\"}"
    }

    static func orders(_ g: inout SeededGenerator, count: Int) -> String {
        "{\"orders\":[" + (0..<count).map { _ in order(&g) }.joined(separator: ",")
            + "],\"next_cursor\":\"\(g.token(24))\"}"
    }

    static func orderRequest(_ g: inout SeededGenerator) -> String {
        let items = (0..<g.int(1...12)).map { _ in
            "{\"sku\":\"SKU-\(g.int(10000...99999))\",\"quantity\":\(g.int(1...9))}"
        }
        return
            "{\"items\":[\(items.joined(separator: ","))],\"shipping_address_id\":\(g.int(1...99999)),\"payment_method\":\"card\",\"coupon\":\(g.chance(0.2) ? "\"SPRING\(g.int(10...50))\"" : "null")}"
    }

    static func products(_ g: inout SeededGenerator, count: Int) -> String {
        let items = (0..<count).map { _ in
            "{\"id\":\(g.int(1...99_999)),\"title\":\"\(words[g.int(0...19)].titled) \(words[g.int(0...19)]) \(words[g.int(0...19)])\","
                + "\"price\":\(g.int(100...99999)),\"currency\":\"EUR\",\"in_stock\":\(g.chance(0.85)),\"rating\":\(g.int(10...50)),"
                + "\"image\":\"https://static.example.com/img/products/\(g.int(1...99999))/thumb.jpg\",\"tags\":[\"\(words[g.int(0...19)])\",\"\(words[g.int(0...19)])\"]}"
        }
        return "{\"items\":[\(items.joined(separator: ","))],\"page\":\(g.int(1...40)),\"total\":\(g.int(1000...5000))}"
    }

    static func session(_ g: inout SeededGenerator) -> String {
        "{\"user_id\":\(g.int(1...99_999)),\"expires_at\":\"2024-03-01T13:00:00Z\",\"csrf_token\":\"\(g.token(43))\",\"features\":[\"beta\",\"\(words[g.int(0...19)])\"]}"
    }

    static func events(_ g: inout SeededGenerator, count: Int) -> String {
        let events = (0..<count).map { _ in
            "{\"type\":\"\(["page_view", "click", "scroll", "purchase"][g.int(0...3)])\",\"ts\":\(1_709_294_400_000 + g.int(0...3_600_000)),"
                + "\"path\":\"/\(words[g.int(0...19)])/\(words[g.int(0...19)])\",\"session\":\"\(g.hex(16))\",\"duration_ms\":\(g.int(1...90000))}"
        }
        return "{\"batch\":[\(events.joined(separator: ","))],\"sdk\":\"web-2.14.1\"}"
    }

    /// Minified-looking JavaScript that compresses about as well as real bundles (roughly 4:1).
    static func script(_ g: inout SeededGenerator, bytes: Int) -> String {
        var text = "/*! bundle \(g.hex(8)) */\n"
        text.reserveCapacity(bytes + 200)
        while text.utf8.count < bytes {
            let name = words[g.int(0...19)] + String(g.int(0...999))
            text +=
                "function \(name)(\(words[g.int(0...19)]),e){var t=\(g.int(0...65535)),n=\"\(g.token(g.int(4...24)))\";"
            text += "if(e&&e.\(words[g.int(0...19)])){return t+\(g.int(1...99))}return \(words[g.int(0...19)])(n,t)}\n"
        }
        return text
    }
}

extension String {
    /// The word with its first letter in upper case (ASCII only).
    var titled: String { prefix(1).uppercased() + dropFirst() }
}
