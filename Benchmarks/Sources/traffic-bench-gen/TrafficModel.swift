/// Decides what happens on each connection: which host, which requests, which responses.
///
/// Hosts (all port 80, servers in 198.19.0.0/16, clients in 198.18.0.0/16: RFC 2544's benchmark range):
/// - api.example.com: small JSON calls with numeric ids, gzip (Content-Length) and chunked responses
/// - auth.example.com: form-encoded token requests, `Set-Cookie` responses
/// - static.example.com: gzip scripts, images, `304 Not Modified` revalidations
/// - metrics.example.com: JSON event batches answered `202`, `HEAD /health`
/// - downloads.example.com: multi-megabyte downloads
/// - uploads.example.com: multi-megabyte uploads, chunked request bodies
///
/// Every message is recorded in the manifest when its connection is planned; the generator
/// always plays every planned connection to its end, so the manifest matches the capture exactly.
struct TrafficModel {
    private struct Client {
        var address: UInt32
        var nextPort: UInt16
        var userAgent: String
        var bearer: String
        var cookie: String?
    }

    private enum Service: Int, CaseIterable {
        case api, auth, statics, metrics, downloads, uploads

        var host: String {
            [
                "api.example.com", "auth.example.com", "static.example.com", "metrics.example.com",
                "downloads.example.com", "uploads.example.com",
            ][rawValue]
        }
        var address: UInt32 { 0xC613_0000 | UInt32(10 * (rawValue + 1)) }  // 198.19.0.10, .20, …
        /// How often a new connection goes to this service, per 9985: most connections are small API calls,
        /// while about a third of the bytes are in the few downloads and uploads.
        var weight: Int { [8000, 500, 450, 1000, 15, 20][rawValue] }
        var exchanges: ClosedRange<Int> { [2...12, 1...3, 2...8, 1...6, 1...2, 1...2][rawValue] }
    }

    private static let userAgents = [
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_3) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3 Safari/605.1.15",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:123.0) Gecko/20100101 Firefox/123.0",
        "okhttp/4.12.0",
        "ExampleApp/5.2.1 (iPhone; iOS 17.3.1; Scale/3.00)",
        "python-requests/2.31.0",
    ]

    private var generator: SeededGenerator
    private let bodies: BodyCatalogue
    private var clients: [Client]
    private(set) var manifest = Manifest()

    init(seed: UInt64, clientCount: Int = 2000) {
        var generator = SeededGenerator(seed: seed)
        bodies = BodyCatalogue(generator: &generator)
        clients = (0..<clientCount).map { index in
            Client(
                address: 0xC612_0000 | UInt32(index / 250) << 8 | UInt32(index % 250 + 1),
                nextPort: UInt16(generator.int(32768...50000)),
                userAgent: Self.userAgents[generator.int(0...Self.userAgents.count - 1)],
                bearer: generator.token(40),
                cookie: generator.chance(0.4)
                    ? "sid=\(generator.hex(32)); theme=\(generator.chance(0.5) ? "dark" : "light"); _ga=GA1.2.\(generator.int(100_000_000...999_999_999)).1709294400"
                    : nil)
        }
        self.generator = generator
    }

    /// Adds a connection's TLS record overhead (`--tls`) to its group.
    mutating func addTLSOverhead(_ bytes: Int, to key: Manifest.Key) {
        manifest.endpoints[key, default: Manifest.Totals()].tlsOverheadBytes += bytes
    }

    /// Plans the next connection, starting at `time` (microseconds since the epoch).
    mutating func makeConnection(time: UInt64) -> SimulatedConnection {
        let service = Service(rawValue: generator.weighted(Service.allCases.map(\.weight)))!
        let clientIndex = generator.int(0...clients.count - 1)
        let port = clients[clientIndex].nextPort
        clients[clientIndex].nextPort = port >= 60999 ? 32768 : port + 1
        let client = clients[clientIndex]
        let count = generator.int(service.exchanges)
        let serverCloses = generator.chance(0.15)
        let date = httpDate(secondsSinceEpoch: time / 1_000_000)
        var exchanges: [SimulatedConnection.Exchange] = []
        for index in 0..<count {
            let closing = serverCloses && index == count - 1
            exchanges.append(exchange(service, client: client, date: date, closing: closing))
        }
        manifest.connections += 1
        let clientPeer = TCPPeer(
            address: client.address, port: port, mac: client.address,
            sequence: UInt32(truncatingIfNeeded: generator.next()),
            timestampBase: UInt32(truncatingIfNeeded: generator.next()),
            ipIdentification: UInt16(truncatingIfNeeded: generator.next()),
            window: 502)
        let serverPeer = TCPPeer(
            address: service.address, port: 80, mac: FrameBuilder.gatewayMAC,
            sequence: UInt32(truncatingIfNeeded: generator.next()),
            timestampBase: UInt32(truncatingIfNeeded: generator.next()), ipIdentification: 0, window: 509)
        return SimulatedConnection(
            client: clientPeer, server: serverPeer, exchanges: exchanges, serverCloses: serverCloses)
    }

    // MARK: - Exchanges per service

    private mutating func exchange(_ service: Service, client: Client, date: String, closing: Bool)
        -> SimulatedConnection.Exchange
    {
        let g = generator.next()
        let roll = Int(g % 100)
        let id = generator.int(1...50_000)
        switch service {
        case .api:
            switch roll {
            case 0..<35:
                let found = generator.chance(0.92)
                return call(
                    service, "GET", "/api/v1/users/\(id)", template: "/api/v1/users/{id}", client: client,
                    date: date, closing: closing, status: found ? 200 : 404,
                    response: found ? pick(bodies.users) : pick(bodies.notFound),
                    gzip: found && generator.chance(0.5))
            case 35..<50:
                return call(
                    service, "GET", "/api/v1/users/\(id)/orders", template: "/api/v1/users/{id}/orders",
                    client: client, date: date, closing: closing, status: 200, response: pick(bodies.orderLists),
                    gzip: generator.chance(0.7), chunked: true)
            case 50..<63:
                return call(
                    service, "GET", "/api/v1/products", template: "/api/v1/products",
                    query: "page=\(generator.int(1...40))&limit=50", client: client, date: date,
                    closing: closing, status: 200, response: pick(bodies.productPages), gzip: true,
                    extraResponse: [("ETag", "W/\"\(generator.hex(16))\""), ("Cache-Control", "public, max-age=60")])
            case 63..<73:
                return call(
                    service, "POST", "/api/v1/orders", template: "/api/v1/orders", client: client, date: date,
                    closing: closing, request: pick(bodies.orderRequests), status: 201, response: pick(bodies.created),
                    extraResponse: [("Location", "/api/v1/orders/\(generator.int(100_000...999_999))")])
            case 73..<81:
                let empty = generator.chance(0.5)
                return call(
                    service, "PUT", "/api/v1/users/\(id)/settings", template: "/api/v1/users/{id}/settings",
                    client: client, date: date, closing: closing, request: pick(bodies.settingsRequests),
                    status: empty ? 204 : 200, response: empty ? nil : pick(bodies.settingsRequests))
            case 81..<86:
                return call(
                    service, "DELETE", "/api/v1/orders/\(id)", template: "/api/v1/orders/{id}", client: client,
                    date: date, closing: closing, status: 204, response: nil)
            default:
                let query = "q=\(JSONText.words[generator.int(0...19)])+\(JSONText.words[generator.int(0...19)])"
                return call(
                    service, "GET", "/api/v1/search", template: "/api/v1/search", query: query, client: client,
                    date: date, closing: closing, status: 200, response: pick(bodies.searchResults), chunked: true)
            }
        case .auth:
            switch roll {
            case 0..<45:
                let form =
                    "grant_type=password&username=user\(id)%40example.org&password=\(generator.token(16))&client_id=web"
                let request = Body(Array(form.utf8), contentType: "application/x-www-form-urlencoded")
                return call(
                    service, "POST", "/oauth/token", template: "/oauth/token", client: client, date: date,
                    closing: closing, request: request,
                    status: 200, response: pick(bodies.tokens),
                    setCookies: [
                        "sid=\(generator.hex(32)); Path=/; Max-Age=86400; HttpOnly; Secure; SameSite=Lax",
                        "csrf=\(generator.token(32)); Path=/; Secure; SameSite=Strict",
                    ])
            case 45..<85:
                return call(
                    service, "GET", "/api/session", template: "/api/session", client: client, date: date,
                    closing: closing, status: 200, response: pick(bodies.sessions), gzip: generator.chance(0.3),
                    setCookies: generator.chance(0.3)
                        ? ["sid=\(generator.hex(32)); Path=/; Max-Age=86400; HttpOnly; Secure"] : [])
            default:
                return call(
                    service, "POST", "/logout", template: "/logout", client: client, date: date,
                    closing: closing, status: 204, response: nil,
                    setCookies: ["sid=; Path=/; Max-Age=0; HttpOnly; Secure", "csrf=; Path=/; Max-Age=0"])
            }
        case .statics:
            switch roll {
            case 0..<45:
                let names = ["app", "vendor", "runtime", "polyfills", "charts", "editor"]
                let index = generator.int(0...names.count - 1)
                let etag = "\"\(String(index * 7919 + 104_729, radix: 16))-js\""
                if generator.chance(0.35) {
                    return call(
                        service, "GET", "/assets/\(names[index]).js", template: "/assets/\(names[index]).js",
                        client: client, date: date, closing: closing, extraRequest: [("If-None-Match", etag)],
                        status: 304, response: nil, extraResponse: [("ETag", etag)])
                }
                return call(
                    service, "GET", "/assets/\(names[index]).js", template: "/assets/\(names[index]).js",
                    client: client, date: date, closing: closing, status: 200, response: bodies.scripts[index],
                    gzip: true,
                    extraResponse: [("ETag", etag), ("Cache-Control", "public, max-age=31536000, immutable")])
            default:
                return call(
                    service, "GET", "/img/products/\(id)/thumb.jpg", template: "/img/products/{id}/thumb.jpg",
                    client: client, date: date, closing: closing, status: 200, response: pick(bodies.images),
                    extraResponse: [("Cache-Control", "public, max-age=86400"), ("Accept-Ranges", "bytes")])
            }
        case .metrics:
            if roll < 85 {
                return call(
                    service, "POST", "/v1/events", template: "/v1/events", client: client, date: date,
                    closing: closing, request: pick(bodies.eventBatches), status: 202, response: nil,
                    emptyContentLength: true)
            }
            return call(
                service, "HEAD", "/health", template: "/health", client: client, date: date, closing: closing,
                status: 200, response: bodies.health)
        case .downloads:
            let n = generator.int(1...16)
            return call(
                service, "GET", "/downloads/\(n)/firmware.bin", template: "/downloads/{id}/firmware.bin",
                client: client, date: date, closing: closing, status: 200, response: bodies.downloads[n - 1],
                extraResponse: [("Content-Disposition", "attachment; filename=\"firmware-\(n).bin\"")])
        case .uploads:
            if roll < 60 {
                return call(
                    service, "POST", "/v2/uploads", template: "/v2/uploads", client: client, date: date,
                    closing: closing, request: pick(bodies.uploads), status: 201, response: pick(bodies.created))
            }
            return call(
                service, "PUT", "/v2/uploads/\(id)/parts/\(generator.int(1...9))",
                template: "/v2/uploads/{id}/parts/{id}", client: client, date: date, closing: closing,
                request: pick(bodies.uploadParts), requestChunked: true, status: 200, response: pick(bodies.created))
        }
    }

    private mutating func pick(_ pool: [Body]) -> Body { pool[generator.int(0...pool.count - 1)] }

    /// Builds one request and its response and records both in the manifest.
    private mutating func call(
        _ service: Service, _ method: String, _ path: String, template: String, query: String? = nil,
        client: Client, date: String, closing: Bool,
        request: Body? = nil, requestChunked: Bool = false,
        extraRequest: [(String, String)] = [],
        status: Int, response: Body?, gzip: Bool = false, chunked: Bool = false,
        setCookies: [String] = [], extraResponse: [(String, String)] = [], emptyContentLength: Bool = false
    ) -> SimulatedConnection.Exchange {
        // Taken out of the dictionary while it changes, so that its path set is not copied on write.
        let key = Manifest.Key(host: service.host, path: template)
        var totals = manifest.endpoints.removeValue(forKey: key) ?? Manifest.Totals()
        totals.rawPaths.insert(path)
        let requestID = generator.hex(32)

        // Request.
        var head = MessageHead("\(method) \(query.map { path + "?" + $0 } ?? path) HTTP/1.1")
        head.field("Host", service.host)
        head.field("User-Agent", client.userAgent)
        head.field("Accept", service == .statics ? "*/*" : "application/json")
        head.field("Accept-Encoding", "gzip, deflate, br")
        if client.userAgent.hasPrefix("Mozilla") { head.field("Accept-Language", "en-US,en;q=0.9") }
        if service == .api || service == .uploads { head.field("Authorization", "Bearer \(client.bearer)") }
        for (name, value) in extraRequest { head.field(name, value) }
        var requestBody = UnsafeRawBufferPointer(start: nil, count: 0)
        if let request {
            head.field("Content-Type", request.contentType)
            if requestChunked {
                head.field("Transfer-Encoding", "chunked")
                requestBody = request.chunked(gzipped: false)
                totals.chunkedMessages += 1
            } else {
                head.field("Content-Length", String(request.identity.count))
                requestBody = request.identity
            }
            totals.requestEncodedBodyBytes += request.identity.count
            totals.requestDecodedBodyBytes += request.identity.count
        }
        if let cookie = client.cookie, service != .downloads { head.field("Cookie", cookie) }
        head.field("X-Request-ID", requestID)
        if closing { head.field("Connection", "close") }
        let requestHead = head.end()
        totals.requests += 1
        totals.methods[method, default: 0] += 1
        totals.requestHeadBytes += requestHead.count
        totals.requestCookieBytes += head.cookieBytes
        totals.requestBodyBytes += requestBody.count

        // Response.
        head = MessageHead("HTTP/1.1 \(status) \(Self.reason(status))")
        head.field("Server", "nginx/1.24.0")
        head.field("Date", date)
        var responseBody = UnsafeRawBufferPointer(start: nil, count: 0)
        if let response {
            head.field("Content-Type", response.contentType)
            let content = gzip ? response.gzip : response.identity
            if chunked {
                head.field("Transfer-Encoding", "chunked")
                responseBody = response.chunked(gzipped: gzip)
                totals.chunkedMessages += 1
            } else {
                head.field("Content-Length", String(content.count))
                responseBody = content
            }
            if gzip {
                head.field("Content-Encoding", "gzip")
                head.field("Vary", "Accept-Encoding")
                totals.gzipResponses += 1
            }
            if method == "HEAD" {
                // RFC 9110 §9.3.2: the same header fields as GET, and no content.
                responseBody = UnsafeRawBufferPointer(start: nil, count: 0)
            } else {
                totals.responseEncodedBodyBytes += content.count
                totals.responseDecodedBodyBytes += response.identity.count
            }
        } else if emptyContentLength {
            head.field("Content-Length", "0")
        }
        for (name, value) in extraResponse { head.field(name, value) }
        for cookie in setCookies { head.field("Set-Cookie", cookie) }
        head.field("X-Request-ID", requestID)
        head.field("Connection", closing ? "close" : "keep-alive")
        if !closing { head.field("Keep-Alive", "timeout=75") }
        let responseHead = head.end()
        totals.responses += 1
        totals.statuses[status, default: 0] += 1
        totals.responseHeadBytes += responseHead.count
        totals.responseCookieBytes += head.cookieBytes
        totals.responseBodyBytes += responseBody.count

        manifest.endpoints[key] = totals
        return SimulatedConnection.Exchange(
            request: MessageBytes(head: requestHead, body: requestBody),
            response: MessageBytes(head: responseHead, body: responseBody), key: key)
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 304: "Not Modified"
        case 404: "Not Found"
        default: "Unknown"
        }
    }
}
