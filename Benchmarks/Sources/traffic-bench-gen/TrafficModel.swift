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
        /// How it speaks HTTP/2 (`--h2`), from its User-Agent.
        var http2: HTTP2ClientProfile?
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
        /// `--api`: app traffic, many short keep-alive connections of small JSON calls (1–15 on the API host), no
        /// downloads, and only a few uploads and static files, so that the cost per message, not per byte, decides.
        var apiWeight: Int { [8000, 900, 400, 1200, 0, 40][rawValue] }
        var apiExchanges: ClosedRange<Int> { [1...15, 1...3, 1...4, 1...6, 1...2, 1...2][rawValue] }
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
    /// `--h2`: connections are HTTP/2 (`HTTP2Connection`), and the manifest has HTTP/2 sizes.
    let http2: Bool
    private var http2Generator: SeededGenerator
    /// `--quic`: connections are HTTP/3 over QUIC (`SimulatedQUIC`); the manifest has HTTP/3 sizes. The messages
    /// are built as for HTTP/2 (`http2` is then true too), framed by `SimulatedQUIC`.
    let quic: Bool
    private var quicGenerator: SeededGenerator
    let quicStats = QUICStats()
    /// `--api`: the API-dense mix of services (`Service.apiWeight`), as HTTP/1.1 in cleartext.
    let api: Bool
    private var clients: [Client]
    private(set) var manifest = Manifest()

    init(seed: UInt64, clientCount: Int = 2000, http2: Bool = false, quic: Bool = false, api: Bool = false) {
        self.api = api
        self.http2 = http2 || quic
        self.quic = quic
        quicGenerator = SeededGenerator(seed: seed ^ 0x5155_4943_5155_4943)
        http2Generator = SeededGenerator(seed: seed ^ 0x4832_4832_4832_4832)
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
        for index in clients.indices {
            clients[index].http2 = HTTP2ClientProfile.forUserAgent(clients[index].userAgent)
        }
        self.generator = generator
    }

    /// Adds a connection's TLS record overhead (`--tls`) to its group.
    mutating func addTLSOverhead(_ bytes: Int, to key: Manifest.Key) {
        manifest.endpoints[key, default: Manifest.Totals()].tlsOverheadBytes += bytes
    }

    /// Plans the next connection, starting at `time` (microseconds since the epoch).
    mutating func makeConnection(time: UInt64) -> SimulatedConnection {
        let service = Service(
            rawValue: generator.weighted(Service.allCases.map { api ? $0.apiWeight : $0.weight }))!
        let clientIndex = generator.int(0...clients.count - 1)
        let port = clients[clientIndex].nextPort
        clients[clientIndex].nextPort = port >= 60999 ? 32768 : port + 1
        let client = clients[clientIndex]
        let count = generator.int(api ? service.apiExchanges : service.exchanges)
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
        let connection = SimulatedConnection(
            client: clientPeer, server: serverPeer, exchanges: exchanges, serverCloses: serverCloses)
        if quic {
            // Its own randomness: the model draws exactly what it draws for the cleartext capture.
            let plan = SimulatedQUIC(
                exchanges.map { $0.http2! }, host: service.host, client: clientPeer, server: serverPeer,
                serverCloses: serverCloses, generator: &quicGenerator, stats: quicStats)
            connection.useQUIC(plan)
            for (index, exchange) in exchanges.enumerated() {
                manifest.endpoints[exchange.key]!.addHTTP2(
                    request: plan.requestSizes[index], response: plan.responseSizes[index])
            }
        } else if http2 {
            // Its own randomness: the model draws exactly what it draws for the cleartext capture.
            let plan = HTTP2Connection(
                exchanges.map { $0.http2! }, profile: client.http2!, serverCloses: serverCloses,
                generator: &http2Generator)
            connection.useHTTP2(plan.flights)
            for (index, exchange) in exchanges.enumerated() {
                manifest.endpoints[exchange.key]!.addHTTP2(
                    request: plan.requests[index], response: plan.responses[index])
            }
            manifest.http2.add(plan)
        }
        return connection
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
    ///
    /// The header fields are listed once, in HTTP/1.1 order, and rendered as HTTP/1.1 heads; with `http2` also as
    /// HTTP/2 header lists (RFC 9113 §8.2: names in lower case, `Host` as `:authority`, no connection-specific
    /// fields nor `Transfer-Encoding`; what HTTP/1.1 sent chunked goes without a length). In HTTP/2 the manifest
    /// gets the counts and body sizes here, and the frame sizes from `HTTP2Connection`.
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
        let target = query.map { path + "?" + $0 } ?? path

        // Request.
        var fields = FieldList()
        fields.add("Host", service.host, http1Only: true)
        fields.add("User-Agent", client.userAgent)
        fields.add("Accept", service == .statics ? "*/*" : "application/json")
        fields.add("Accept-Encoding", "gzip, deflate, br")
        if client.userAgent.hasPrefix("Mozilla") { fields.add("Accept-Language", "en-US,en;q=0.9") }
        if service == .api || service == .uploads { fields.add("Authorization", "Bearer \(client.bearer)") }
        for (name, value) in extraRequest { fields.add(name, value) }
        var requestBody = UnsafeRawBufferPointer(start: nil, count: 0)
        var requestContent = requestBody
        if let request {
            fields.add("Content-Type", request.contentType)
            if requestChunked {
                fields.add("Transfer-Encoding", "chunked", http1Only: true)
                requestBody = request.chunked(gzipped: false)
                if !http2 { totals.chunkedMessages += 1 }
            } else {
                fields.add("Content-Length", String(request.identity.count))
                requestBody = request.identity
            }
            requestContent = request.identity
            totals.requestEncodedBodyBytes += request.identity.count
            totals.requestDecodedBodyBytes += request.identity.count
        }
        if let cookie = client.cookie, service != .downloads { fields.add("Cookie", cookie) }
        fields.add("X-Request-ID", requestID)
        if closing { fields.add("Connection", "close", http1Only: true) }
        let requestHead = fields.http1Head("\(method) \(target) HTTP/1.1")
        totals.requests += 1
        totals.methods[method, default: 0] += 1
        if !http2 {
            totals.requestHeadBytes += requestHead.bytes.count
            totals.requestCookieBytes += requestHead.cookieBytes
            totals.requestBodyBytes += requestBody.count
        }
        let http2Request =
            http2
            ? fields.http2Request(
                method: method, authority: service.host, path: target, profile: client.http2!, body: requestContent)
            : nil

        // Response.
        fields = FieldList()
        fields.add("Server", "nginx/1.24.0")
        fields.add("Date", date)
        var responseBody = UnsafeRawBufferPointer(start: nil, count: 0)
        var responseContent = responseBody
        if let response {
            fields.add("Content-Type", response.contentType)
            let content = gzip ? response.gzip : response.identity
            if chunked {
                fields.add("Transfer-Encoding", "chunked", http1Only: true)
                responseBody = response.chunked(gzipped: gzip)
                if !http2 { totals.chunkedMessages += 1 }
            } else {
                fields.add("Content-Length", String(content.count))
                responseBody = content
            }
            responseContent = content
            if gzip {
                fields.add("Content-Encoding", "gzip")
                fields.add("Vary", "Accept-Encoding")
                totals.gzipResponses += 1
            }
            if method == "HEAD" {
                // RFC 9110 §9.3.2: the same header fields as GET, and no content.
                responseBody = UnsafeRawBufferPointer(start: nil, count: 0)
                responseContent = responseBody
            } else {
                totals.responseEncodedBodyBytes += content.count
                totals.responseDecodedBodyBytes += response.identity.count
            }
        } else if emptyContentLength {
            fields.add("Content-Length", "0")
        }
        for (name, value) in extraResponse { fields.add(name, value) }
        for cookie in setCookies { fields.add("Set-Cookie", cookie) }
        fields.add("X-Request-ID", requestID)
        fields.add("Connection", closing ? "close" : "keep-alive", http1Only: true)
        if !closing { fields.add("Keep-Alive", "timeout=75", http1Only: true) }
        let responseHead = fields.http1Head("HTTP/1.1 \(status) \(Self.reason(status))")
        totals.responses += 1
        totals.statuses[status, default: 0] += 1
        if !http2 {
            totals.responseHeadBytes += responseHead.bytes.count
            totals.responseCookieBytes += responseHead.cookieBytes
            totals.responseBodyBytes += responseBody.count
        }

        manifest.endpoints[key] = totals
        var exchange = SimulatedConnection.Exchange(
            request: MessageBytes(head: requestHead.bytes, body: requestBody),
            response: MessageBytes(head: responseHead.bytes, body: responseBody), key: key)
        if let http2Request {
            exchange.http2 = HTTP2Exchange(
                request: http2Request, response: fields.http2Response(status: status, body: responseContent))
        }
        return exchange
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
