import Foundation
import SUN
import Testing

/// Issue 51: the verdict as a page for a browser, through the real server over HTTP. The same
/// tap URL gets a page for `Accept: text/html` and today's JSON otherwise; every page carries
/// the safety headers; every value from the request is escaped; the signed redirect checks with
/// a JWT library.
@Suite("apdu-sun-server: the verdict page, its headers and escaping, the signed redirect")
struct PageTests {
    static let browser = ["Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"]
    static let an12196 = "/?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086"
    static let redirectKey = String(repeating: "5A", count: 32)
    static let tagtt = "/tt?picc_data=FDD387BF32A33A7C40CF259675B3A1E2&enc=EA050C282D8E9043E28F7A171464D697&cmac=758110182134ECE9"

    /// The test key file with a look for the factory group, a TagTamper group (sdm-backend's
    /// layout), and a redirect key.
    static let keys = """
        {
          "default": "factory",
          "redirectKey": "\(redirectKey)",
          "groups": {
            "factory": { "metaReadKey": "\(zeroKey)", "fileReadKey": "\(zeroKey)",
                         "page": { "brand": "Acme <Tea> & \\"Co\\"", "productURL": "https://acme.example/tea?x=1&y=2", "colour": "#0A5" } },
            "nxp": { "metaReadKey": "\(zeroKey)", "fileReadKey": "\(zeroKey)", "template": "https://x.example/?picc_data={picc}&enc={file}&cmac={mac}" },
            "tt": { "metaReadKey": "\(zeroKey)", "fileReadKey": "\(zeroKey)", "tamper": "file" }
          }
        }
        """

    /// Headers every page must carry.
    static func expectPageHeaders(_ a: HTTPAnswer, builtIn: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.headers["content-type"] == "text/html; charset=utf-8", sourceLocation: sourceLocation)
        let csp = a.headers["content-security-policy"] ?? ""
        #expect(csp.hasPrefix("default-src 'none'; style-src 'unsafe-inline'") && !csp.contains("script-src"), sourceLocation: sourceLocation)
        #expect(a.headers["x-content-type-options"] == "nosniff", sourceLocation: sourceLocation)
        #expect(a.headers["referrer-policy"] == "no-referrer", sourceLocation: sourceLocation)
        #expect(a.headers["cache-control"] == "no-store", sourceLocation: sourceLocation)
        if builtIn { #expect(a.body.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"), sourceLocation: sourceLocation) }
        // No external resource, no script, no event handler: the page stands alone.
        for banned in ["<script", "src=", "@import", "url(", "javascript:", " on"] {
            #expect(!a.body.lowercased().contains(banned + (banned == " on" ? "load=" : "")), "\(banned)", sourceLocation: sourceLocation)
        }
    }

    @Test("HTML for a browser, JSON for a script: valid, replayed, forged, malformed and unknown-group taps of AN12196")
    func pageAndJSON() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", Self.keys), database: scratch.file("c.sqlite"), scratch: scratch)
        let c = try HTTPConnection(port: server.port)

        let valid = try c.get(Self.an12196, headers: Self.browser)
        #expect(valid.status == 200)
        Self.expectPageHeaders(valid)
        #expect(valid.body.contains("<h1>Genuine</h1>") && valid.body.contains("04DE5F1EACC040") && valid.body.contains("<dd>61</dd>"))
        #expect(valid.body.contains(" UTC</dd>") && valid.body.contains("data-verdict=\"genuine\""))
        // The group's look: the brand escaped, the product link escaped in its attribute, the colour.
        #expect(valid.body.contains("Acme &lt;Tea&gt; &amp; &quot;Co&quot;") && !valid.body.contains("<Tea>"))
        #expect(valid.body.contains("href=\"https://acme.example/tea?x=1&amp;y=2\"") && valid.body.contains("background:#0A5"))

        let replay = try c.get(Self.an12196, headers: Self.browser)
        #expect(replay.status == 409 && replay.body.contains("Already used: this link was opened before") && replay.body.contains("04DE5F1EACC040"))
        Self.expectPageHeaders(replay)
        #expect(!replay.body.contains("acme.example"), "a refusal offers no way on to the product")

        let forged = try c.get("/nxp?picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E463EF1F459635736738962&cmac=ECC1E7F6C6C73BF7", headers: Self.browser)
        #expect(forged.status == 403 && forged.body.contains("<h1>Not genuine</h1>") && !forged.body.contains("04958CAA5C5E80"))
        Self.expectPageHeaders(forged)

        let malformed = try c.get("/?e=00&c=11", headers: Self.browser)
        #expect(malformed.status == 400 && malformed.body.contains("Not genuine") && malformed.body.contains("not the link of a tag"))
        Self.expectPageHeaders(malformed)

        let unknown = try c.get("/nope?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086", headers: Self.browser)
        #expect(unknown.status == 404 && unknown.body.contains("Not genuine") && unknown.body.contains("no product line"))
        Self.expectPageHeaders(unknown)

        // The same taps asked for as JSON, or with no Accept at all: today's JSON, unchanged.
        let fresh = try freshTaps(count: 1, first: 900)[0]
        for headers in [["Accept": "application/json"], [:], ["Accept": "*/*"], ["Accept": "application/json, text/html;q=0.5"]] {
            let json = try c.get(Self.an12196, headers: headers)
            #expect(json.status == 409 && json.headers["content-type"] == "application/json" && json.json["code"] as? String == "replay", "\(headers)")
            #expect(json.body == "{\"valid\":false,\"uid\":\"04DE5F1EACC040\",\"counter\":61,\"fileData\":null,\"code\":\"replay\",\"reason\":\"counter 61 is not greater than the last one accepted for this UID\"}\n")
        }
        let json = try c.get(fresh, headers: ["Accept": "application/json"])
        #expect(json.status == 200 && json.body.hasPrefix("{\"valid\":true,\"uid\":") && json.body.hasSuffix(",\"fileData\":null}\n"))
        #expect(server.stop() == 0)
    }

    @Test("Accept-Language picks German where asked (q-values), English otherwise")
    func languages() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", Self.keys), database: scratch.file("c.sqlite"), scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        let taps = try freshTaps(count: 3, first: 910)
        let de = try c.get(taps[0], headers: Self.browser.merging(["Accept-Language": "de-DE,de;q=0.9,en;q=0.8"]) { $1 })
        #expect(de.status == 200 && de.body.contains("<html lang=\"de\">") && de.body.contains("<h1>Echt</h1>") && de.body.contains("Weiter zu Acme"))
        let replay = try c.get(taps[0], headers: Self.browser.merging(["Accept-Language": "de"]) { $1 })
        #expect(replay.body.contains("Bereits verwendet: dieser Link wurde schon einmal geöffnet"))
        let en = try c.get(taps[1], headers: Self.browser.merging(["Accept-Language": "fr-CH, de;q=0.2, en;q=0.9"]) { $1 })
        #expect(en.body.contains("<html lang=\"en\">") && en.body.contains("<h1>Genuine</h1>"))
        let odd = try c.get(taps[2], headers: Self.browser.merging(["Accept-Language": ";;;q=x,,de;q=7"]) { $1 })
        #expect(odd.status == 200 && odd.body.contains("<h1>Genuine</h1>"))
        #expect(server.stop() == 0)
    }

    @Test("Hostile parameters and paths: <script>, quotes, long values, invalid UTF-8 are escaped or refused, never echoed raw", arguments: [
        "/?%3Cscript%3Ealert(1)%3C/script%3E=1&e=<script>alert(1)</script>&c=94EED9EE65337086",
        "/?e=EF963FF7828658A599F3041510671E88&c=\"><script>alert(1)</script>",
        "/%3Cscript%3Ealert('x')%3C%2Fscript%3E?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086",
        "/a\"b'c<d>?e=1",
        "/?cmac='\"><img%20src=x%20onerror=alert(1)>&e=EF963FF7828658A599F3041510671E88",
        "/?e=" + String(repeating: "<b>", count: 600) + "&c=94EED9EE65337086",
        "/?e=%FF%FE%C0%AF&c=%80%81",
        "/%FF%C3%28?e=1",
    ])
    func hostile(target: String) throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", Self.keys), database: scratch.file("c.sqlite"), scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        let a = try c.get(target, headers: Self.browser)
        #expect([400, 403, 404].contains(a.status), "\(a.status)")
        if a.headers["content-type"]?.hasPrefix("text/html") == true {
            Self.expectPageHeaders(a)
            #expect(a.body.contains("Not genuine"))
        }
        for raw in ["<script", "<img", "<b>", "<d>", "onerror=alert", "\"><script", "'x'", "b'c"] {
            #expect(!a.body.contains(raw), "\(raw) echoed raw")
        }
        #expect(!a.body.utf8.contains(0xFF) && String(data: Data(a.body.utf8), encoding: .utf8) != nil)
        #expect(try c.get("/healthz").status == 200)
        #expect(server.stop() == 0)
    }

    @Test("Raw invalid UTF-8 and control bytes in the request line: refused or escaped, the server stays up")
    func rawBytes() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", Self.keys), database: scratch.file("c.sqlite"), scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        var request = Array("GET /".utf8) + [0xFF, 0xC3, 0x28, 0x3C] + Array("script?e=".utf8) + [0xFE, 0x01] + Array(" HTTP/1.1\r\nHost: x\r\nAccept: text/html\r\n\r\n".utf8)
        let sent = request.withUnsafeMutableBytes { Glibc.send(c.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        #expect(sent == request.count)
        if let a = try? c.readAnswer() {
            #expect([400, 404].contains(a.status), "\(a.status)")
            #expect(!a.body.contains("<script") && !a.body.utf8.contains(0xFF) && !a.body.utf8.contains(0x01))
        }
        #expect(try HTTPConnection(port: server.port).get("/healthz").status == 200)
        request = []
        #expect(server.stop() == 0)
    }

    @Test("429 and 503 pages say to try again; 429 keeps Retry-After")
    func retryPages() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", Self.keys), database: scratch.file("c.sqlite"),
                                       arguments: ["--rate-limit", "0.001", "--rate-burst", "1"], scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        _ = try c.get(Self.an12196, headers: Self.browser)
        let limited = try c.get(Self.an12196, headers: Self.browser.merging(["Accept-Language": "de"]) { $1 })
        #expect(limited.status == 429 && limited.headers["retry-after"] == "1" && limited.body.contains("Bitte versuchen Sie es erneut"))
        Self.expectPageHeaders(limited)
        let json = try c.get(Self.an12196)
        #expect(json.status == 429 && json.json["code"] as? String == "rateLimited")
        #expect(server.stop() == 0)
    }

    @Test("--pages DIR: the operator's template, values escaped, a group's own file; an unknown placeholder stops the start (64)")
    func templates() throws {
        let scratch = Scratch()
        let dir = scratch.file("pages")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        _ = scratch.write("pages/page.html", "<!doctype html><title>{{headline}}</title><p id=v>{{verdict}}</p><p>{{ uid }}/{{counter}}/{{status}}/{{lang}}</p><p>{{reason}}</p>")
        _ = scratch.write("pages/nxp.html", "<p>NXP {{headline}} {{uid}}</p>")
        let server = try ServerProcess(keys: scratch.write("keys.json", Self.keys), database: scratch.file("c.sqlite"), arguments: ["--pages", dir], scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        let a = try c.get(Self.an12196, headers: Self.browser)
        #expect(a.status == 200 && a.body == "<!doctype html><title>Genuine</title><p id=v>genuine</p><p>04DE5F1EACC040/61/200/en</p><p></p>")
        Self.expectPageHeaders(a, builtIn: false)
        let n = try c.get("/nxp?picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E463EF1F459635736738962&cmac=ECC1E7F6C6C73BF6", headers: Self.browser)
        #expect(n.body == "<p>NXP Genuine 04958CAA5C5E80</p>")
        let hostile = try c.get("/?'<x>'=1&e=<i>&c=94EED9EE65337086", headers: Self.browser)
        #expect(hostile.status == 400 && !hostile.body.contains("<i>") && hostile.body.contains("&lt;i&gt;") || !hostile.body.contains("<i>"))
        #expect(server.stop() == 0)
        _ = scratch.write("pages/page.html", "<p>{{secret}}</p>")
        let bad = try runServer(["--keys", scratch.file("keys.json"), "--database", scratch.file("d.sqlite"), "--pages", dir])
        #expect(bad.status == 64 && bad.stderr.contains("{{secret}}") && bad.stderr.split(separator: "\n").filter { $0.contains("{{secret}}") }.count == 1, "\(bad.stderr)")
    }

    @Test("TagTamper: sdm-backend's /tagtt example in JSON (tamper closed/closed) and on the page (Seal intact)")
    func tamper() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", Self.keys), database: scratch.file("c.sqlite"), scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        let page = try c.get(Self.tagtt, headers: Self.browser)
        #expect(page.status == 200 && page.body.contains("0469879A226880") && page.body.contains(">Seal intact</p>") && page.body.contains("<dd>CC</dd>"))
        let json = try c.get(Self.tagtt)
        #expect(json.status == 409)
        #expect((json.json["tamper"] as? [String: String]) == ["permanent": "closed", "current": "closed", "seal": "intact"])
        let altered = try c.get(Self.tagtt.replacingOccurrences(of: "enc=EA05", with: "enc=EB05"))
        #expect(altered.status == 403 && altered.json["code"] as? String == "invalidMAC")
        #expect(server.stop() == 0)
    }
}

/// The signed redirect (issue 51).
@Suite("apdu-sun-server --redirect: the verdict as a signed token")
struct RedirectTokenTests {
    /// The `sun` parameter of a Location.
    static func token(_ location: String?) -> String? {
        guard let location, let q = location.firstIndex(of: "?") else { return nil }
        return location[location.index(after: q)...].split(separator: "&").first { $0.hasPrefix("sun=") }.map { String($0.dropFirst(4)) }
    }

    /// PyJWT (pip-installed when missing) decodes the token: "OK <claims>" or the exception's name.
    static func pyjwt(_ token: String, keyHex: String) throws -> String {
        let script = """
            import sys, json, jwt
            try:
                claims = jwt.decode(sys.argv[1], key=bytes.fromhex(sys.argv[2]), algorithms=["HS256"], issuer="apdu-sun-server")
                print("OK " + json.dumps(claims, sort_keys=True))
            except Exception as e:
                print(type(e).__name__)
            """
        if try spawn("/usr/bin/env", ["python3", "-c", "import jwt"]).status != 0 {
            _ = try spawn("/usr/bin/env", ["python3", "-m", "pip", "install", "--quiet", "PyJWT"])
        }
        return try spawn("/usr/bin/env", ["python3", "-c", script, token, keyHex]).output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a valid tap's redirect verifies with PyJWT and SUNVerdictToken; a changed byte, another key, an expired token are refused")
    func signed() throws {
        let scratch = Scratch()
        _ = try Self.pyjwt("x", keyHex: "00")  // installs PyJWT when missing, before the clock runs
        let server = try ServerProcess(keys: scratch.write("keys.json", PageTests.keys), database: scratch.file("c.sqlite"),
                                       arguments: ["--redirect", "https://brand.example/landing?lang=en", "--redirect-ttl", "5"], scratch: scratch)
        #expect(!server.log.contains("--redirect-unsigned"))
        let c = try HTTPConnection(port: server.port)
        let valid = try c.get(PageTests.an12196, headers: PageTests.browser)
        #expect(valid.status == 302 && valid.headers["location"]?.hasPrefix("https://brand.example/landing?lang=en&sun=") == true)
        #expect(valid.headers["location"]?.contains("valid=") == false && valid.headers["cache-control"] == "no-store")
        let token = try #require(Self.token(valid.headers["location"]))
        let key = PageTests.redirectKey
        let decoded = try Self.pyjwt(token, keyHex: key)
        #expect(decoded.hasPrefix("OK "), "\(decoded)")
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(decoded.dropFirst(3).utf8)) as? [String: Any])
        #expect(claims["verdict"] as? String == "genuine" && claims["valid"] as? Bool == true && claims["uid"] as? String == "04DE5F1EACC040")
        #expect(claims["counter"] as? Int == 61 && claims["group"] as? String == "factory" && claims["code"] == nil)
        let iat = try #require(claims["iat"] as? Int), exp = try #require(claims["exp"] as? Int)
        #expect(exp - iat == 5)
        let now = Int(Date().timeIntervalSince1970)
        #expect(try SUNVerdictToken(verifying: token, key: hexBytes(key), now: now).isGenuine)

        // One changed character of the token, another key: refused by both.
        var chars = Array(token)
        let middle = token.firstIndex(of: ".")!.utf16Offset(in: token) + 5
        chars[middle] = chars[middle] == "A" ? "B" : "A"
        #expect(try Self.pyjwt(String(chars), keyHex: key) == "InvalidSignatureError")
        #expect(throws: SUNTokenError.self) { try SUNVerdictToken(verifying: String(chars), key: hexBytes(key), now: now) }
        let other = String(repeating: "5B", count: 32)
        #expect(try Self.pyjwt(token, keyHex: other) == "InvalidSignatureError")

        // A replay's token says so, with its code.
        let replay = try c.get(PageTests.an12196)
        let replayToken = try #require(Self.token(replay.headers["location"]))
        let r = try SUNVerdictToken(verifying: replayToken, key: hexBytes(key), now: now)
        #expect(r.verdict == "replay" && r.code == "replay" && !r.isGenuine && r.uid == "04DE5F1EACC040")
        let forged = try c.get("/?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337087")
        let f = try SUNVerdictToken(verifying: try #require(Self.token(forged.headers["location"])), key: hexBytes(key), now: now)
        #expect(f.verdict == "invalid" && f.code == "invalidMAC" && f.uid == nil)
        let malformed = try c.get("/?e=00")
        #expect(try SUNVerdictToken(verifying: try #require(Self.token(malformed.headers["location"])), key: hexBytes(key), now: now).verdict == "malformed")

        // --redirect-ttl 5: six seconds on, the token is expired for both.
        Thread.sleep(forTimeInterval: 6)
        #expect(try Self.pyjwt(token, keyHex: key) == "ExpiredSignatureError")
        #expect { try SUNVerdictToken(verifying: token, key: hexBytes(key), now: Int(Date().timeIntervalSince1970)) } throws: { ($0 as? SUNTokenError)?.kind == .expired }
        #expect(server.stop() == 0)
    }

    @Test("--redirect without a redirectKey stops the start (65); a short key is refused; --redirect-unsigned without --redirect is usage (64)")
    func startChecks() throws {
        let scratch = Scratch()
        let noKey = try runServer(["--keys", scratch.write("keys.json", keyFileText), "--database", scratch.file("c.sqlite"), "--redirect", "https://x.example/"])
        #expect(noKey.status == 65 && noKey.stderr.split(separator: "\n").last?.hasPrefix("apdu-sun-server: --redirect signs each verdict: the key file needs") == true, "\(noKey.stderr)")
        let short = PageTests.keys.replacingOccurrences(of: PageTests.redirectKey, with: "00112233")
        let bad = try runServer(["--keys", scratch.write("short.json", short), "--database", scratch.file("d.sqlite"), "--redirect", "https://x.example/"])
        #expect(bad.status == 65 && bad.stderr.contains("redirectKey") && !bad.stderr.contains("00112233"), "\(bad.stderr)")
        let usage = try runServer(["--keys", scratch.file("keys.json"), "--database", scratch.file("e.sqlite"), "--redirect-unsigned"])
        #expect(usage.status == 64 && usage.stderr.contains("--redirect-unsigned"))
    }
}
