// The HTTP side of the service: its options, the routes that verify taps and serve health and
// metrics, and the JSON and redirect answers.
import Foundation
import HTTPTypes
import ISO7816
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import SUN

/// How the service answers, besides its keys and store.
public struct ServiceOptions: Sendable {
    /// With a URL, every verdict is a `302` to it with the verdict as a signed token in its
    /// `sun` parameter (or, with `redirectUnsigned`, in plain `valid`, `uid`, `counter`, `code`);
    /// without, a JSON answer or, for a browser, a page.
    public var redirect: String?
    /// The old unsigned redirect query, which anyone can type (issue 51): only when asked.
    public var redirectUnsigned = false
    /// How long a redirect's token is valid, in seconds.
    public var redirectTTL = 300
    /// The operator's page templates (`--pages`); nil: the built-in page.
    public var pages: PageTemplates?
    /// The longest request target (path and query) accepted; longer ones get a 400.
    public var maximumURLBytes = 2048
    /// Per client address: requests a second and the burst; nil for no limit.
    public var rateLimit: (rate: Double, burst: Double)?
    /// A header that carries the client's address (e.g. `X-Forwarded-For` behind a load
    /// balancer that sets it); its last entry is used. Nil: the connection's peer address.
    public var clientAddressHeader: String?
    /// A connection must deliver a complete request head within this time.
    public var requestTimeout: TimeAmount = .seconds(10)
    /// A connection with nothing to do is closed after this time.
    public var idleTimeout: TimeAmount = .seconds(60)
    public init() {}
}

/// The request context: the client's address (for rate limiting) besides Hummingbird's own.
public struct SUNRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let peer: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress
    }
}

/// Builds the HTTP side: `GET /` and `GET /GROUP` verify a tap, as does any path a group's
/// template puts placeholders in (`GET /brand/{picc}/{mac}`); `GET /healthz` and `GET /metrics`
/// serve operations.
public struct ServiceRoutes: Sendable {
    public let verifier: Verifier
    public let options: ServiceOptions
    let limiter: RateLimiter?

    public init(verifier: Verifier, options: ServiceOptions) {
        self.verifier = verifier
        self.options = options
        limiter = options.rateLimit.map { RateLimiter(rate: $0.rate, burst: $0.burst) }
    }

    public func router() -> Router<SUNRequestContext> {
        let router = Router(context: SUNRequestContext.self)
        router.get("/healthz") { _, _ in await health() }
        router.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"], body: .init(byteBuffer: ByteBuffer(bytes: verifier.metrics.text())))
        }
        router.get("/") { request, context in await tap(request, context) }
        // Every other path: a group's name (one segment), or a tap whose template puts
        // placeholders in the path (the verifier finds its group).
        router.get("/**") { request, context in await tap(request, context) }
        return router
    }

    public func http1Configuration() -> HTTP1Channel.Configuration {
        let limit = options.requestTimeout
        return HTTP1Channel.Configuration(additionalChannelHandlers: [RequestDeadlineHandler(limit: limit)], idleTimeout: options.idleTimeout)
    }

    func health() async -> Response {
        do {
            try await verifier.store.check()
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{\"status\":\"ok\",\"store\":\(JSON.quoted(verifier.store.displayName))}\n")))
        } catch {
            return Response(status: .serviceUnavailable, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{\"status\":\"unavailable\",\"reason\":\"the counter store does not answer\"}\n")))
        }
    }

    func clientAddress(_ request: Request, _ context: SUNRequestContext) -> String {
        if let name = options.clientAddressHeader, let field = HTTPField.Name(name), let value = request.headers[field],
           let last = value.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty
        {
            return last
        }
        return context.peer?.ipAddress ?? "unknown"
    }

    func tap(_ request: Request, _ context: SUNRequestContext) async -> Response {
        let started = ContinuousClock.now
        let metrics = verifier.metrics
        let requestID = context.id
        let html = VerdictPage.wantsHTML(request.headers[.accept])
        let language = request.headers[.acceptLanguage]
        if let limiter, !limiter.allow(clientAddress(request, context)) {
            metrics.rateLimited.increment()
            if html { return page(PageVerdict(status: 429, kind: .rateLimited, time: Self.now()), language: language, look: nil, requestID: requestID, extra: [.retryAfter: "1"]) }
            return answer(429, ["valid": .bool(false), "code": .string("rateLimited"), "reason": .string("too many requests from this address; retry later")], requestID: requestID, extra: [.retryAfter: "1"])
        }
        let target = request.uri.string
        let verdict: Verdict
        if target.utf8.count > options.maximumURLBytes {
            verdict = .malformed(reason: "the URL is \(target.utf8.count) bytes; at most \(options.maximumURLBytes) are accepted")
        } else {
            let query = request.uri.query ?? ""
            let path = request.uri.path
            // One path segment names a group; else the group parameter (looked for only then:
            // parsing every parameter costs on the hot path).
            let segment = path.count > 1 && !path.dropFirst().contains("/") ? String(path.dropFirst()) : nil
            let parameter = Self.mentionsGroup(query) ? request.uri.queryParameters["group"].map(String.init) : nil
            verdict = await verifier.verify(group: segment ?? parameter, path: path, query: query, groupParameter: parameter)
        }
        let logger = context.logger
        let response: Response
        switch verdict {
        case .valid(let result, let name):
            metrics.verifications.increment()
            metrics.valid.increment()
            logger.debug("tap valid", metadata: ["group": "\(name)", "uid": "\(Hex.encode(result.uid))", "counter": "\(result.counter ?? -1)"])
            response = verdictAnswer(200, valid: true, code: nil, reason: nil, result: result, group: name, html: html, language: language, requestID: requestID)
        case .invalid(let code, let reason, let name):
            metrics.verifications.increment()
            metrics.invalid.increment()
            logger.info("tap refused", metadata: ["group": "\(name)", "code": "\(code)", "reason": "\(reason)"])
            response = verdictAnswer(403, valid: false, code: code, reason: reason, result: nil, group: name, html: html, language: language, requestID: requestID)
        case .replay(let result, let reason, let name):
            metrics.verifications.increment()
            metrics.replays.increment()
            logger.info("tap refused: replay", metadata: ["group": "\(name)", "uid": "\(Hex.encode(result.uid))", "counter": "\(result.counter ?? -1)"])
            response = verdictAnswer(409, valid: false, code: "replay", reason: reason, result: result, group: name, html: html, language: language, requestID: requestID)
        case .malformed(let reason):
            metrics.verifications.increment()
            metrics.malformed.increment()
            logger.info("request refused: malformed", metadata: ["reason": "\(reason)"])
            response = verdictAnswer(400, valid: false, code: "malformed", reason: reason, result: nil, group: nil, html: html, language: language, requestID: requestID)
        case .unknownGroup(let name):
            metrics.verifications.increment()
            metrics.malformed.increment()
            let reason = "no tag group named \"\(KeyRing.safe(name))\""
            logger.info("request refused: unknown group", metadata: ["group": "\(KeyRing.safe(name))"])
            response = verdictAnswer(404, valid: false, code: "unknownGroup", reason: reason, result: nil, group: nil, html: html, language: language, requestID: requestID)
        case .unavailable(let detail):
            metrics.unavailable.increment()
            logger.error("counter store unavailable", metadata: ["error": "\(detail)"])
            if html {
                response = page(PageVerdict(status: 503, kind: .unavailable, time: Self.now()), language: language, look: nil, requestID: requestID, extra: [.retryAfter: "1"])
                metrics.latency.record(ContinuousClock.now - started)
                return response
            }
            response = answer(503, ["valid": .null, "code": .string("unavailable"), "reason": .string("the counter store did not answer; retry later")], requestID: requestID, extra: [.retryAfter: "1"])
        }
        metrics.latency.record(ContinuousClock.now - started)
        return response
    }

    /// Whether the query has a parameter named `group` (a byte scan: String.contains goes
    /// through Foundation's string search, which costs more than the whole check).
    static func mentionsGroup(_ query: String) -> Bool {
        let name = Array("group=".utf8)
        var utf8 = query.utf8[...]
        while !utf8.isEmpty {
            if utf8.starts(with: name) { return true }
            guard let amp = utf8.firstIndex(of: UInt8(ascii: "&")) else { return false }
            utf8 = utf8[utf8.index(after: amp)...]
        }
        return false
    }

    func verdictAnswer(_ status: Int, valid: Bool, code: String?, reason: String?, result: SUNResult?, group: String?, html: Bool, language: String?, requestID: String) -> Response {
        if let redirect = options.redirect {
            var query: [String] = []
            if options.redirectUnsigned {
                query.append("valid=\(valid ? 1 : 0)")
                if let result {
                    query.append("uid=\(Hex.encode(result.uid))")
                    if let counter = result.counter { query.append("counter=\(counter)") }
                }
                if let code { query.append("code=\(code)") }
            } else {
                let now = Self.now()
                let token = SUNVerdictToken(verdict: valid ? "genuine" : Self.verdictName(code), code: code, uid: result.map { Hex.encode($0.uid) },
                                            counter: result?.counter, tamper: result?.tamper, group: group, issuedAt: now, expires: now + options.redirectTTL)
                // The key was checked at start (SUNServer.run): every group has one.
                guard let key = verifier.keys.redirectKey(group: group), let signed = try? token.signed(key: key) else {
                    return answer(503, ["valid": .null, "code": .string("unavailable"), "reason": .string("no key signs this verdict")], requestID: requestID)
                }
                query.append("sun=" + signed)
            }
            let location = redirect + (redirect.contains("?") ? "&" : "?") + query.joined(separator: "&")
            return Response(status: .found, headers: [.location: location, .cacheControl: "no-store", .referrerPolicy: "no-referrer", .requestID: requestID])
        }
        if html {
            let kind: PageVerdict.Kind
            switch status {
            case 200: kind = .genuine
            case 409: kind = .replay
            case 400: kind = .malformed
            case 404: kind = .unknownGroup
            default: kind = .notGenuine
            }
            let verdict = PageVerdict(status: status, kind: kind, uid: result.map { Hex.encode($0.uid) }, counter: result?.counter, tamper: result?.tamper,
                                      reason: reason, group: group, time: Self.now())
            return page(verdict, language: language, look: group.flatMap { verifier.keys.groups[$0]?.look }, requestID: requestID)
        }
        // Written straight into one string: this is every tap's answer.
        var body = valid ? "{\"valid\":true" : "{\"valid\":false"
        body.reserveCapacity(96 + (reason?.utf8.count ?? 0) + 2 * (result?.fileData?.count ?? 0))
        if let result {
            body += ",\"uid\":\""
            body += Hex.encode(result.uid)
            body += "\",\"counter\":"
            body += result.counter.map(String.init) ?? "null"
            body += ",\"fileData\":"
            body += result.fileData.map { "\"" + Hex.encode($0) + "\"" } ?? "null"
            if let t = result.tamper {
                body += ",\"tamper\":{\"permanent\":\"" + t.permanent.name + "\",\"current\":\"" + t.current.name + "\",\"seal\":\"" + t.seal.rawValue + "\"}"
            }
        }
        if let code { body += ",\"code\":" + JSON.quoted(code) }
        if let reason { body += ",\"reason\":" + JSON.quoted(reason) }
        body += "}\n"
        return jsonResponse(status, body, requestID: requestID)
    }

    func answer(_ status: Int, _ pairs: KeyValuePairs<String, JSON>, requestID: String, extra: HTTPFields = [:]) -> Response {
        jsonResponse(status, JSON.object(pairs.map { ($0.key, $0.value) }) + "\n", requestID: requestID, extra: extra)
    }

    /// The verdict's name in a token for a refusal's code.
    static func verdictName(_ code: String?) -> String {
        switch code {
        case "replay": "replay"
        case "malformed": "malformed"
        case "unknownGroup": "unknownGroup"
        default: "invalid"
        }
    }

    static func now() -> Int { Int(time(nil)) }

    /// A page for a browser: the built-in one or the operator's, with the page headers.
    func page(_ verdict: PageVerdict, language: String?, look: PageLook?, requestID: String, extra: HTTPFields = [:]) -> Response {
        let body = VerdictPage.render(verdict, strings: PageStrings.negotiate(language), look: look, templates: options.pages)
        var headers = VerdictPage.headers
        headers[.requestID] = requestID
        headers.append(contentsOf: extra)
        return Response(status: .init(code: verdict.status), headers: headers, body: .init(byteBuffer: body))
    }

    /// A JSON answer: never cached, with the request's id.
    func jsonResponse(_ status: Int, _ body: String, requestID: String, extra: HTTPFields = [:]) -> Response {
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store", .vary: "Accept, Accept-Language", .requestID: requestID]
        headers.append(contentsOf: extra)
        return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

extension HTTPField.Name {
    static let requestID = HTTPField.Name("X-Request-Id")!
}

/// The few JSON values the answers need, written by hand (no reflection on the hot path).
enum JSON: Sendable {
    case string(String), int(Int), bool(Bool), null

    var text: String {
        switch self {
        case .string(let s): Self.quoted(s)
        case .int(let i): String(i)
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        }
    }

    static func object(_ pairs: [(String, JSON)]) -> String {
        "{" + pairs.map { quoted($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
    }

    /// A JSON string: quotes, backslashes and every control character escaped.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let h = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
