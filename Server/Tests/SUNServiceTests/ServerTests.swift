import Foundation
import SUN
import Testing

/// The server as a process, on the embedded SQLite store, over real HTTP on loopback.
@Suite("apdu-sun-server over HTTP (SQLite)")
struct ServerTests {
    @Test("AN12196's taps through HTTP: valid once, then a replay; file data decrypted; forged and malformed refused")
    func publishedVectors() throws {
        let scratch = Scratch()
        let keys = scratch.write("keys.json", keyFileText)
        let server = try ServerProcess(keys: keys, database: scratch.file("c.sqlite"), scratch: scratch)
        let c = try HTTPConnection(port: server.port)

        let tap = "/?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086"
        let first = try c.get(tap)
        #expect(first.status == 200)
        #expect(first.json["valid"] as? Bool == true && first.json["uid"] as? String == "04DE5F1EACC040" && first.json["counter"] as? Int == 61)
        #expect(first.headers["x-request-id"]?.isEmpty == false && first.headers["content-type"] == "application/json")
        let again = try c.get(tap)
        #expect(again.status == 409 && again.json["code"] as? String == "replay" && again.json["valid"] as? Bool == false)

        // The NXP group's template: PICC data, encrypted file data, MAC over the file data.
        let file = "/nxp?picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E463EF1F459635736738962&cmac=ECC1E7F6C6C73BF6"
        let withFile = try c.get(file)
        #expect(withFile.status == 200 && withFile.json["uid"] as? String == "04958CAA5C5E80" && withFile.json["counter"] as? Int == 8)
        #expect(withFile.json["fileData"] as? String == "78787878787878787878787878787878")
        // The same group by parameter instead of path.
        #expect(try c.get("/?group=nxp&picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E463EF1F459635736738962&cmac=ECC1E7F6C6C73BF6").status == 409)

        let forged = try c.get("/nxp?picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E463EF1F459635736738962&cmac=ECC1E7F6C6C73BF7")
        #expect(forged.status == 403 && forged.json["code"] as? String == "invalidMAC")
        // A tap of the factory group verified with the brand group's keys: invalid, not a crash.
        let wrongGroup = try c.get("/brand?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086")
        #expect(wrongGroup.status == 403 || wrongGroup.status == 400)
        #expect(server.stop() == 0)
        #expect(server.log.contains("\"message\":\"stopped\""))
    }

    @Test("Hostile input gets a 400 (or 404) with a one-line reason, never a 500, and the server stays up", arguments: [
        ("/?e=ZZ963FF7828658A599F3041510671E88&c=94EED9EE65337086", 400),
        ("/?e=EF963FF7828658A599F3041510671E&c=94EED9EE65337086", 400),
        ("/?e=EF963FF7828658A599F3041510671E88&c=94EED9EE6533708", 400),
        ("/?e=EF963FF7828658A599F3041510671E88", 400),
        ("/?utm_source=x&foo=bar", 400),
        ("/", 400),
        ("/?e=%00%01%02&c=%FF", 400),
        ("/?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086&e=00", 409),
        ("/nope?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086", 404),
        ("/%2e%2e%2fetc?e=1", 404),
        ("/?e=" + String(repeating: "A", count: 5000) + "&c=94EED9EE65337086", 400),
        ("/?picc_data=EF963FF7828658A599F3041510671E88EF963FF7828658A5&c=94EED9EE65337086", 403),
        ("/?uid=04DE5F1EACC040&c=94EED9EE65337086", 403),
        ("/nxp?picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E&cmac=ECC1E7F6C6C73BF6", 400),
    ])
    func hostile(target: String, status: Int) throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", keyFileText), database: scratch.file("c.sqlite"), scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        // One valid tap first, so that a repeated one is a replay.
        #expect(try c.get("/?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086").status == 200)
        let answer = try c.get(target)
        #expect(answer.status == status, "\(answer.status) \(answer.body)")
        #expect(answer.json["valid"] as? Bool == false)
        let reason = answer.json["reason"] as? String ?? ""
        #expect(!reason.isEmpty && !reason.contains("\n"))
        #expect(!answer.body.contains("Error(") && !answer.body.contains("/work/"))
        #expect(try c.get("/healthz").status == 200)
        #expect(server.stop() == 0)
    }

    @Test("--redirect --redirect-unsigned: every verdict is a 302 to the landing page with the verdict in the query, and a warning at start")
    func redirect() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", keyFileText), database: scratch.file("c.sqlite"),
                                       arguments: ["--redirect", "https://brand.example/landing?lang=en", "--redirect-unsigned"], scratch: scratch)
        #expect(server.log.contains("--redirect-unsigned") && server.log.contains("anyone can type"))
        let c = try HTTPConnection(port: server.port)
        let valid = try c.get("/?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086")
        #expect(valid.status == 302 && valid.headers["location"] == "https://brand.example/landing?lang=en&valid=1&uid=04DE5F1EACC040&counter=61")
        let replay = try c.get("/?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086")
        #expect(replay.status == 302 && replay.headers["location"] == "https://brand.example/landing?lang=en&valid=0&uid=04DE5F1EACC040&counter=61&code=replay")
        let bad = try c.get("/?e=00")
        #expect(bad.status == 302 && bad.headers["location"] == "https://brand.example/landing?lang=en&valid=0&code=malformed")
    }

    @Test("--template names the parameters of groups without a template of their own; a group's own template wins")
    func template() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", keyFileText), database: scratch.file("c.sqlite"),
                                       arguments: ["--template", "https://t.example/x?p={picc}&s={mac}"], scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        #expect(try c.get("/?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086").status == 400)
        let answer = try c.get("/?p=EF963FF7828658A599F3041510671E88&s=94EED9EE65337086")
        #expect(answer.status == 200 && answer.json["counter"] as? Int == 61)
        #expect(try c.get("/nxp?picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E463EF1F459635736738962&cmac=ECC1E7F6C6C73BF6").status == 200)
        #expect(server.stop() == 0)
        let bad = try runServer(["--keys", scratch.file("keys.json"), "--database", scratch.file("d.sqlite"), "--template", "https://t.example/x?p={picc}"])
        #expect(bad.status == 64 && bad.stderr.contains("--template"))
    }

    @Test("Keys never appear in logs, metrics or answers, whatever is asked")
    func keysNeverShown() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", keyFileText), database: scratch.file("c.sqlite"), scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        var bodies = ""
        let brandKeys = try SDMKeys(metaRead: hexBytes(metaKey), fileReadMaster: hexBytes(masterKey), systemIdentifier: Array("Brand".utf8))
        let tap = try brandKeys.simulatedTap(uid: [0x04, 9, 9, 9, 9, 9, 9], counter: 5, base: "/brand")
        for target in [tap, tap, tap.replacingOccurrences(of: "c=", with: "c=0"), "/brand?e=00&c=00", "/brand?e=\(metaKey)&c=\(masterKey.prefix(16))", "/metrics", "/healthz"] {
            bodies += try c.get(target).body
        }
        server.signal(SIGHUP)
        Thread.sleep(forTimeInterval: 0.3)
        bodies += try c.get("/metrics").body
        #expect(server.stop() == 0)
        let derived = try AN10922.diversify(masterKey: hexBytes(masterKey), input: [0x04, 9, 9, 9, 9, 9, 9] + Array("Brand".utf8))
        let derivedHex = derived.map { String(format: "%02X", $0) }.joined()
        let log = server.log
        #expect(log.contains("tap valid") && log.contains("replay") && log.contains("keys reloaded"))
        for secret in [metaKey, masterKey, derivedHex] {
            #expect(!log.uppercased().contains(secret), "a key in the log")
            #expect(!bodies.uppercased().contains(secret), "a key in an answer")
        }
    }

    @Test("SIGHUP re-reads the key file: a new group serves at once; a broken file keeps the old keys")
    func reload() throws {
        let scratch = Scratch()
        let keys = scratch.write("keys.json", keyFileText)
        let server = try ServerProcess(keys: keys, database: scratch.file("c.sqlite"), scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        let lateKeys = try SDMKeys(metaRead: hexBytes(masterKey), fileRead: hexBytes(metaKey))
        let taps = try (1...3).map { try lateKeys.simulatedTap(uid: [0x04, 7, 7, 7, 7, 7, 7], counter: $0, base: "/late") }
        #expect(try c.get(taps[0]).status == 404)
        scratch.write("keys.json", keyFileText.replacingOccurrences(of: "\"groups\": {", with: "\"groups\": {\n \"late\": { \"metaReadKey\": \"\(masterKey)\", \"fileReadKey\": \"\(metaKey)\" },"))
        server.signal(SIGHUP)
        #expect(try poll { try c.get(taps[0]).status == 200 })
        // A broken file: refused, logged, counted; the keys in use stay.
        scratch.write("keys.json", "{ \"groups\": ")
        server.signal(SIGHUP)
        #expect(try poll { server.log.contains("keys not reloaded") })
        #expect(try c.get(taps[1]).status == 200)
        let metrics = try c.get("/metrics").body
        #expect(metrics.contains("sun_key_reloads_total 1") && metrics.contains("sun_key_reload_failures_total 1"))
        #expect(server.stop() == 0)
    }

    @Test("Slow clients: no complete request head within --request-timeout → 408 with a reason, connection closed, others served")
    func slowClient() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", keyFileText), database: scratch.file("c.sqlite"),
                                       arguments: ["--request-timeout", "1"], scratch: scratch)
        let slow = try HTTPConnection(port: server.port)
        try slow.send("GET /?e=EF963FF7828658A599F3041510671E88&c=94EE")
        Thread.sleep(forTimeInterval: 0.5)
        try slow.send("D9EE")
        let other = try HTTPConnection(port: server.port)
        #expect(try other.get("/healthz").status == 200)
        let answer = try slow.readAnswer()
        #expect(answer.status == 408 && (answer.json["reason"] as? String)?.contains("within 1 s") == true)
        #expect(slow.isClosedByPeer())
        #expect(try other.get("/?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086").status == 200)
        #expect(server.stop() == 0)
    }

    @Test("Rate limit per client address: the burst passes, then 429 with Retry-After; a forwarded address has its own bucket")
    func rateLimit() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", keyFileText), database: scratch.file("c.sqlite"),
                                       arguments: ["--rate-limit", "1", "--rate-burst", "5", "--client-address-header", "X-Forwarded-For"], scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        let statuses = try (0..<7).map { _ in try c.get("/?e=00", headers: ["X-Forwarded-For": "198.51.100.7, 203.0.113.9"]).status }
        #expect(statuses == [400, 400, 400, 400, 400, 429, 429])
        let limited = try c.get("/?e=00", headers: ["X-Forwarded-For": "203.0.113.9"])
        #expect(limited.status == 429 && limited.headers["retry-after"] == "1" && limited.json["code"] as? String == "rateLimited")
        #expect(try c.get("/?e=00", headers: ["X-Forwarded-For": "203.0.113.10"]).status == 400)
        // Probes are never limited.
        #expect(try c.get("/healthz", headers: ["X-Forwarded-For": "203.0.113.9"]).status == 200)
        #expect(try c.get("/metrics").body.contains("sun_rate_limited_total 3"))
        #expect(server.stop() == 0)
    }

    @Test("Metrics count verdicts and latency, in Prometheus text")
    func metrics() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", keyFileText), database: scratch.file("c.sqlite"), scratch: scratch)
        let taps = try freshTaps(count: 20, first: 1)
        let answers = sendAll(taps + taps.prefix(5) + ["/?e=00"], port: server.port, workers: 4)
        #expect(answers.filter { $0.status == 200 }.count == 20 && answers.filter { $0.status == 409 }.count == 5)
        let text = try HTTPConnection(port: server.port).get("/metrics").body
        for line in ["sun_verifications_total 26", "sun_valid_total 20", "sun_replays_total 5", "sun_malformed_total 1", "sun_invalid_total 0", "sun_verification_duration_seconds_count 26"] {
            #expect(text.contains(line + "\n"), "\(line)")
        }
        #expect(server.stop() == 0)
    }

    @Test("One SQLite file, 1,000 fresh taps each sent twice at once: exactly 1,000 accepted")
    func sqliteConcurrency() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", keyFileText), database: scratch.file("c.sqlite"),
                                       arguments: ["--rate-limit", "0"], scratch: scratch)
        let taps = try freshTaps(count: 1000, first: 10_000)
        // Each tap twice, the copies next to each other, so two workers race for it.
        let answers = sendAll(taps.flatMap { [$0, $0] }, port: server.port, workers: 16)
        #expect(answers.filter { $0.status == 200 }.count == 1000)
        #expect(answers.filter { $0.status == 409 }.count == 1000)
        #expect(server.stop() == 0)
    }

    @Test("Start-up failures: documented exit codes and one-line messages")
    func startFailures() throws {
        let scratch = Scratch()
        let keys = scratch.write("keys.json", keyFileText)
        let db = scratch.file("c.sqlite")
        var r = try runServer(["--keys", scratch.file("missing.json"), "--database", db])
        #expect(r.status == 66 && r.stderr.contains("cannot read the key file"))
        r = try runServer(["--keys", scratch.write("bad.json", "{\"groups\": {\"g\": {\"metaReadKey\": \"\(metaKey)\"}}}"), "--database", db])
        #expect(r.status == 65 && r.stderr.contains("fileReadKey") && !r.stderr.contains(metaKey))
        r = try runServer(["--keys", keys, "--database", db, "--listen", "nonsense"])
        #expect(r.status == 64)
        for (option, value) in [("--rate-limit", "1e-30"), ("--rate-limit", "-1"), ("--rate-limit", "nan"), ("--rate-limit", "inf"),
                                ("--rate-burst", "0.5"), ("--rate-burst", "1e30")] {
            r = try runServer(["--keys", keys, "--database", db, "--listen", "127.0.0.1:0", option, value])
            #expect(r.status == 64 && r.stderr.contains(option), "\(option) \(value): \(r.stderr)")
        }
        // SQLite is for one instance: a second server on the same file is refused.
        let first = try ServerProcess(keys: keys, database: db, scratch: scratch)
        r = try runServer(["--keys", keys, "--database", db, "--listen", "127.0.0.1:0"])
        #expect(r.status == 69 && r.stderr.contains("in use by another apdu-sun-server") && r.stderr.contains("postgres://"))
        // A port in use.
        r = try runServer(["--keys", keys, "--database", scratch.file("d.sqlite"), "--listen", "127.0.0.1:\(first.port)"])
        #expect(r.status == 71 && r.stderr.contains("cannot listen"))
        #expect(first.stop() == 0)
        r = try runServer(["--keys", keys, "--database", "postgres://", "--listen", "127.0.0.1:0"])
        #expect(r.status == 69 && r.stderr.contains("--database"))
    }
}

func hexBytes(_ s: String) -> [UInt8] {
    let d = Array(s.utf8)
    return stride(from: 0, to: d.count, by: 2).map { UInt8(String(decoding: d[$0..<($0 + 2)], as: UTF8.self), radix: 16)! }
}

/// Polls `condition` for up to 5 s.
func poll(_ condition: () throws -> Bool) throws -> Bool {
    for _ in 0..<100 {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return false
}
