// A tap's SUN message and its verification: SDM keys, AN10922 diversification, the URL parsed
// by template, PICC data decrypted, the SDMMAC checked.

/// Why a SUN message was not accepted, in words a person (or a log) can act on. Never carries
/// key material.
public struct SUNError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// The URL does not carry a SUN message: a parameter missing, not hex, of the wrong length.
        case malformed
        /// The message parses but its MAC does not verify: wrong keys, or a forged or altered URL.
        case invalidMAC
        /// PICC data this verifier cannot use (a UID length other than 7, no UID mirrored).
        case unsupported
        /// The counter is not greater than the last one accepted for this UID.
        case replay
        /// A key of the wrong length.
        case badKey
    }
    public var kind: Kind
    public var message: String
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    public var description: String { message }
}

/// How the tag encrypts its SDM data: AES (16-byte PICC data) or LRP (24 bytes: an 8-byte
/// random counter and 16 encrypted).
public enum SDMEncryption: String, Sendable, Hashable {
    case aes = "AES", lrp = "LRP"
}

/// The two SDM keys a verifier needs: SDMMetaReadKey decrypts the PICC data (UID and read
/// counter), SDMFileReadKey derives the session keys of the MAC and the encrypted file data.
/// Expanded once, for as many verifications as needed, from any number of threads.
///
/// The file-read key is either one key for every tag, or each tag's own, diversified from a
/// master key and the tag's UID (``AN10922``). The meta-read key is always shared: it decrypts
/// the UID, so it cannot depend on it.
public final class SDMKeys: Sendable {
    let metaRead: AES128
    let metaReadBytes: [UInt8]
    private let fileRead: FileReadKey

    enum FileReadKey: Sendable {
        case shared(AES128, [UInt8])
        case diversified(master: AES128, systemIdentifier: [UInt8])
    }

    public init(metaRead: [UInt8], fileRead: [UInt8]) throws(SUNError) {
        self.metaRead = try AES128(key: metaRead)
        metaReadBytes = metaRead
        self.fileRead = .shared(try AES128(key: fileRead), fileRead)
    }

    /// Each tag's SDMFileReadKey diversified from `fileReadMaster` by ``AN10922`` with
    /// M = UID ‖ `systemIdentifier` (0 to 24 bytes).
    public init(metaRead: [UInt8], fileReadMaster: [UInt8], systemIdentifier: [UInt8]) throws(SUNError) {
        guard systemIdentifier.count <= 24 else {
            throw SUNError(.badKey, "a system identifier is at most 24 bytes (M = UID ‖ system identifier is at most 31), not \(systemIdentifier.count)")
        }
        self.metaRead = try AES128(key: metaRead)
        metaReadBytes = metaRead
        self.fileRead = .diversified(master: try AES128(key: fileReadMaster), systemIdentifier: systemIdentifier)
    }

    /// Whether each tag has its own file-read key.
    public var isDiversified: Bool {
        if case .diversified = fileRead { return true }
        return false
    }

    /// The SDMFileReadKey of the tag with `uid`.
    func fileReadKey(uid: [UInt8]) throws(SUNError) -> (aes: AES128, bytes: [UInt8]) {
        switch fileRead {
        case .shared(let aes, let bytes): return (aes, bytes)
        case .diversified(let master, let systemIdentifier):
            let key = master.an10922(uid + systemIdentifier)
            return (try AES128(key: key), key)
        }
    }
}

/// NXP AN10922 key diversification, AES-128: a tag's own key from a master key and data that
/// identify the tag (its UID, then an application and system identifier), so that one tag's
/// key, if extracted, opens no other tag.
///
/// The diversified key is CMAC(master, 01 ‖ M) with the input always made 32 bytes long
/// (AN10922 §2.2): padded with 80 00 … and closed with CMAC's K2 when M is shorter than 31 bytes.
public enum AN10922 {
    /// - Parameters:
    ///   - masterKey: 16 bytes.
    ///   - input: M, 1 to 31 bytes: for SDM, the UID (7) ‖ a system identifier.
    public static func diversify(masterKey: [UInt8], input: [UInt8]) throws(SUNError) -> [UInt8] {
        guard (1...31).contains(input.count) else {
            throw SUNError(.badKey, "AN10922 diversification input is 1 to 31 bytes, not \(input.count)")
        }
        return try AES128(key: masterKey).an10922(input)
    }
}

/// Where a tap's URL carries each part of the message: parameters by name (the common names,
/// or others), or a template URL whose placeholders stand where the tag writes them.
public struct SUNTemplate: Sendable, Hashable {
    public var picc: [String] = ["e", "picc_data"]
    public var mac: [String] = ["c", "cmac", "m"]
    public var file: [String] = ["enc"]
    public var uid: [String] = ["uid"]
    public var counter: [String] = ["ctr"]
    /// The TagTamper status in the clear: two letters (issue 51).
    public var tamper: [String] = ["tt"]
    /// The template URL, when the template was made from one: then each placeholder is read
    /// where it stands and the parameter names above are not used.
    public var pattern: SUNURLPattern?

    /// The common parameter names: `e` / `picc_data`, `c` / `cmac` / `m`, `enc`, `uid` + `ctr`.
    public static let common = SUNTemplate()

    public init() {}

    /// A template URL with placeholders, as given to `apdu ntag424 sdm --url`: whole parameter
    /// values (`https://x.example/t?p={picc}&f={file}&s={mac}`), the bulk layout
    /// (`?e={picc}{file}{mac}`), path segments (`https://x.example/{picc}/{mac}`), or a mix.
    /// `{mac}`, and `{picc}` or `{uid}` (with `{ctr}`), are required; see ``SUNURLPattern``.
    public init(url template: String) throws(SUNError) {
        let pattern = try SUNURLPattern(template)
        (picc, mac, file, uid, counter, tamper) = ([], [], [], [], [], [])
        self.pattern = pattern
    }
}

/// What a valid SUN message says.
public struct SUNResult: Sendable, Hashable {
    public var uid: [UInt8]
    /// SDMReadCtr, when mirrored.
    public var counter: Int?
    /// The decrypted SDM file data, when the URL carries it.
    public var fileData: [UInt8]?
    public var encryption: SDMEncryption
    /// PICCDataTag (nil for plain UID and counter mirroring).
    public var piccDataTag: UInt8?
    /// The TagTamper status the MAC covered, when the verification was told where the tag
    /// mirrors it (issue 51).
    public var tamper: SUNTagTamperStatus? = nil
}

/// One tap's URL, as an NTAG 424 DNA serves it with Secure Dynamic Messaging (SUN), parsed.
///
/// The MAC covers the URL's text from the start of the encrypted file data up to the MAC's own
/// value (SDMMACInputOffset at the file data, as `apdu ntag424 sdm` sets it), and nothing
/// without file data (SDMMACInputOffset = SDMMACOffset): AN12196's layouts.
public struct SUNMessage: Sendable, Hashable {
    /// Encrypted PICC data: 16 bytes (AES) or 24 (LRP); nil with plain `uid` + `ctr` mirroring.
    public var piccData: [UInt8]?
    /// Plain mirroring: the UID and the counter as the URL shows them.
    public var plainUID: [UInt8]?
    public var plainCounter: [UInt8]?
    /// The truncated SDMMAC, 8 bytes.
    public var mac: [UInt8]
    public var encryptedFileData: [UInt8]?
    /// The bytes the MAC covers.
    public var macInput: [UInt8]
    /// The TagTamper letters mirrored in the clear (the `tt` parameter), inside the MAC input.
    public var tamperStatus: [UInt8]? = nil

    /// The longest URL accepted: an NDEF file is 256 bytes on NTAG 424 DNA; anything much longer
    /// is not a tap.
    public static let maximumLength = 2048

    public init(piccData: [UInt8]?, plainUID: [UInt8]? = nil, plainCounter: [UInt8]? = nil, mac: [UInt8], encryptedFileData: [UInt8]? = nil, macInput: [UInt8] = []) {
        self.piccData = piccData
        self.plainUID = plainUID
        self.plainCounter = plainCounter
        self.mac = mac
        self.encryptedFileData = encryptedFileData
        self.macInput = macInput
    }

    /// Parses a tap's URL (or just its query) with `template`: by parameter names, or, for a
    /// template made from a URL, by where its placeholders stand (the whole URL, its path and
    /// query from `/`, or the query alone when the template's placeholders are all in it).
    public init(url: String, template: SUNTemplate = .common) throws(SUNError) {
        guard url.utf8.count <= Self.maximumLength else {
            throw SUNError(.malformed, "the URL is \(url.utf8.count) bytes; a SUN URL is at most \(Self.maximumLength)")
        }
        let bytes = Array(url.utf8)
        if let pattern = template.pattern {
            try self.init(bytes, pattern: pattern)
        } else {
            try self.init(bytes, names: template)
        }
    }

    /// The placeholders of `pattern` read where they stand in `bytes`.
    init(_ bytes: [UInt8], pattern: SUNURLPattern) throws(SUNError) {
        let found = try pattern.match(bytes)
        // The matcher took hex digits of the placeholders' lengths; decoding cannot fail.
        func value(_ p: SUNPlaceholder) -> [UInt8]? { found.ranges[p].flatMap { Self.decodeHex(bytes[$0]) } }
        guard let mac = value(.mac) else { throw SUNError(.malformed, "no SDMMAC where the template puts {mac}") }
        let picc = value(.picc), uid = value(.uid)
        guard picc != nil || uid != nil else { throw SUNError(.malformed, "no PICC data nor UID where the template puts them") }
        // MAC input: from the first of the file data and the TagTamper letters up to the MAC;
        // nothing without either.
        let macStart = found.ranges[.mac]?.lowerBound ?? 0
        let inputStart = [found.ranges[.file]?.lowerBound, found.ranges[.tt]?.lowerBound].compactMap { $0 }.min()
        let input = inputStart.map { Array(bytes[$0..<macStart]) } ?? []
        self.init(piccData: picc, plainUID: uid, plainCounter: value(.ctr), mac: mac, encryptedFileData: value(.file), macInput: input)
        tamperStatus = found.ranges[.tt].map { Array(bytes[$0]) }
    }

    /// The common form: each part in a parameter of one of `template`'s names.
    init(_ bytes: [UInt8], names template: SUNTemplate) throws(SUNError) {
        let start = (bytes.firstIndex(of: UInt8(ascii: "?")).map { $0 + 1 }) ?? 0
        // Parameter name → the value's byte range in the URL (the MAC input is cut from it).
        var values: [String: Range<Int>] = [:]
        var p = start
        while p <= bytes.count {
            let end = bytes[p...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.count
            if let eq = bytes[p..<end].firstIndex(of: UInt8(ascii: "=")) {
                let name = String(decoding: bytes[p..<eq], as: UTF8.self)
                if values[name] == nil { values[name] = (eq + 1)..<end }
            }
            p = end + 1
        }
        func find(_ names: [String]) -> (String, Range<Int>)? {
            for n in names { if let r = values[n] { return (n, r) } }
            return nil
        }
        func hex(_ names: [String], _ what: String, lengths: [Int]) throws(SUNError) -> (Range<Int>, [UInt8])? {
            guard let (name, range) = find(names) else { return nil }
            guard let decoded = Self.decodeHex(bytes[range]), lengths.isEmpty || lengths.contains(decoded.count) else {
                throw SUNError(.malformed, "parameter '\(Self.safe(name))' (\(what)) must be \(lengths.isEmpty ? "hex" : lengths.map { "\($0 * 2)" }.joined(separator: " or ") + " hex digits")")
            }
            return (range, decoded)
        }
        let picc = try hex(template.picc, "PICC data", lengths: [16, 24])
        let uid = try hex(template.uid, "UID", lengths: [7])
        let counter = try hex(template.counter, "read counter", lengths: [3])
        guard let macField = try hex(template.mac, "SDMMAC", lengths: [8]) else {
            throw SUNError(.malformed, "no SDMMAC parameter (\(template.mac.joined(separator: ", ")))")
        }
        guard picc != nil || uid != nil else {
            throw SUNError(.malformed, "no PICC data (\(template.picc.joined(separator: ", "))) nor a plain \(template.uid.first ?? "uid")")
        }
        let file = try hex(template.file, "encrypted file data", lengths: [])
        if let file, file.1.isEmpty || file.1.count % 16 != 0 {
            throw SUNError(.malformed, "the encrypted file data is \(file.1.count) bytes, not whole 16-byte blocks")
        }
        // The TagTamper letters in the clear: two of C, O, I (any other two bytes are kept and
        // shown as unknown; the MAC decides whether they are the tag's).
        var tt: Range<Int>?
        if let (name, range) = find(template.tamper) {
            guard range.count == 2 else { throw SUNError(.malformed, "parameter '\(Self.safe(name))' (TagTamper status) must be 2 letters") }
            tt = range
        }
        // MAC input: from the first of the file data and the TagTamper letters up to the MAC
        // (SDMMACInputOffset at or before both); nothing without either.
        var input: [UInt8] = []
        let inputStart = [file?.0.lowerBound, tt?.lowerBound].compactMap { $0 }.min()
        if let inputStart {
            // Each of them, not only the first: one placed after the MAC would be outside what
            // the MAC covers, and reported as verified all the same (a keyless `&tt=CC` or
            // `&enc=…` appended to a genuine tap).
            guard [file?.0, tt].compactMap({ $0 }).allSatisfy({ $0.upperBound <= macField.0.lowerBound }) else {
                throw SUNError(.malformed, "the encrypted file data or the TagTamper status comes after the SDMMAC: no SDM layout puts it there, and the MAC would not cover it")
            }
            input = Array(bytes[inputStart..<macField.0.lowerBound])
        }
        self.init(piccData: picc?.1, plainUID: uid?.1, plainCounter: counter?.1, mac: macField.1, encryptedFileData: file?.1, macInput: input)
        tamperStatus = tt.map { Array(bytes[$0]) }
    }

    /// Verifies the message with `keys`: decrypts the PICC data, derives the session keys from
    /// the UID and counter, checks the MAC in constant time, decrypts the file data.
    /// - Parameters:
    ///   - keys: the tag's SDM keys (meta-read and file-read, or one key for both).
    ///   - plainEncryption: the cipher of a message whose PICC data is sent in the clear (no tag
    ///     byte says it): AES or LRP.
    ///   - tamper: where the tag mirrors its TagTamper status (SDMOptions bit 3); the status is
    ///     read from there only after the MAC verified.
    /// - Throws: `SUNError` `.invalidMAC`, `.unsupported`, `.malformed`.
    public func verify(keys: SDMKeys, plainEncryption: SDMEncryption = .aes, tamper: SUNTamperPlacement? = nil) throws(SUNError) -> SUNResult {
        var tag: UInt8?
        var uid: [UInt8]
        var counterBytes: [UInt8]?   // as the tag mirrors it in PICC data: least significant first
        var encryption = plainEncryption
        var piccRandom: [UInt8] = []
        if let picc = piccData {
            let plain: [UInt8]
            if picc.count == 24 {
                encryption = .lrp
                piccRandom = Array(picc[0..<8])
                plain = try LRP(key: keys.metaReadBytes).decrypt(Array(picc[8...]), counter: piccRandom)
            } else {
                encryption = .aes
                plain = try keys.metaRead.cbcDecrypt(picc)
            }
            tag = plain[0]
            let uidLength = Int(plain[0] & 0x0F)
            guard plain[0] & 0x80 != 0, uidLength == 7 else {
                // The same work as a real check, so that the answer's timing says nothing.
                if let key = try? keys.fileReadKey(uid: [UInt8](repeating: 0, count: 7)) {
                    _ = try? macCheck(fileKey: key, encryption: encryption, data: [UInt8](repeating: 0, count: 10))
                }
                throw SUNError(.unsupported, "the PICC data mirrors \(plain[0] & 0x80 == 0 ? "no UID" : "a UID of \(uidLength) bytes") (PICCDataTag \(Self.hexString([plain[0]]))); NTAG 424 DNA mirrors 7")
            }
            uid = Array(plain[1..<8])
            if plain[0] & 0x40 != 0 { counterBytes = Array(plain[8..<11]) }
        } else {
            uid = plainUID ?? []
            counterBytes = plainCounter.map { Array($0.reversed()) }
        }
        let data = uid + (counterBytes ?? [])
        let fileKey = try keys.fileReadKey(uid: uid)
        guard try macCheck(fileKey: fileKey, encryption: encryption, data: data) || SUNRemovedChecks.mac else {
            throw SUNError(.invalidMAC, "the SDMMAC does not verify: the keys are not this tag's, or the URL was altered or forged")
        }
        var fileData: [UInt8]?
        if let encrypted = encryptedFileData {
            guard let ctr = counterBytes else { throw SUNError(.unsupported, "encrypted file data needs the read counter mirrored (its IV comes from it)") }
            switch encryption {
            case .aes:
                let sesENC = try AES128(key: fileKey.aes.cmac(Self.sessionVector([0xC3, 0x3C, 0x00, 0x01, 0x00, 0x80], data)))
                let iv = sesENC.encrypt(block: ctr + [UInt8](repeating: 0, count: 13))
                fileData = try sesENC.cbcDecrypt(encrypted, iv: iv)
            case .lrp:
                let master = try LRP(key: fileKey.bytes).cmac(Self.lrpSessionVector(data))
                fileData = try LRP(key: master, updatedKey: 1).decrypt(encrypted, counter: ctr + [0, 0, 0])
            }
        }
        let counter = counterBytes.map { Int($0[0]) | Int($0[1]) << 8 | Int($0[2]) << 16 }
        var status: SUNTagTamperStatus?
        switch tamper {
        case nil: break
        case .fileData(let offset):
            guard let data = fileData, offset >= 0, offset + 2 <= data.count else {
                throw SUNError(.unsupported, "the TagTamper status is mirrored at byte \(offset) of the encrypted file data, but the URL carries \(fileData.map { "\($0.count) bytes of it" } ?? "none")")
            }
            status = SUNTagTamperStatus(bytes: data[offset..<(offset + 2)])
        case .clear:
            guard let bytes = tamperStatus else { throw SUNError(.malformed, "no TagTamper status where the template puts {tt}") }
            status = SUNTagTamperStatus(bytes: bytes)
        }
        return SUNResult(uid: uid, counter: counter, fileData: fileData, encryption: encryption, piccDataTag: tag, tamper: status)
    }

    /// The SDMMAC over `macInput` with the session MAC key from `data` (UID ‖ counter), compared
    /// in constant time with the message's.
    func macCheck(fileKey: (aes: AES128, bytes: [UInt8]), encryption: SDMEncryption, data: [UInt8]) throws(SUNError) -> Bool {
        constantTimeEqual(try Self.sdmMAC(fileKey: fileKey, encryption: encryption, data: data, input: macInput), mac)
    }

    /// The truncated SDMMAC a tag computes over `input`: the session MAC key from SDMFileReadKey
    /// and `data` (UID ‖ SDMReadCtr, SV2 in AES mode), then CMAC or CMAC_LRP. What a tap is
    /// checked against, and what a simulated tap carries.
    static func sdmMAC(fileKey: (aes: AES128, bytes: [UInt8]), encryption: SDMEncryption, data: [UInt8], input: [UInt8]) throws(SUNError) -> [UInt8] {
        let full: [UInt8]
        switch encryption {
        case .aes:
            let sesMAC = try AES128(key: fileKey.aes.cmac(sessionVector([0x3C, 0xC3, 0x00, 0x01, 0x00, 0x80], data)))
            full = sesMAC.cmac(input)
        case .lrp:
            let master = try LRP(key: fileKey.bytes).cmac(lrpSessionVector(data))
            full = try LRP(key: master).cmac(input)
        }
        return truncate(full)
    }

    /// NTAG 424 DNA's truncated MAC: the odd-numbered bytes 1, 3, …, 15.
    public static func truncate(_ mac: [UInt8]) -> [UInt8] { stride(from: 1, to: 16, by: 2).map { mac[$0] } }

    /// SV1 / SV2: the label, then UID ‖ SDMReadCtr, zero-padded to whole blocks (AN12196).
    static func sessionVector(_ label: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var v = label + data
        while v.count % 16 != 0 { v.append(0) }
        return v
    }

    /// The LRP session vector: 00 01 00 80 ‖ UID ‖ SDMReadCtr, zero-padded so that with the
    /// closing 1E E1 it fills whole blocks.
    static func lrpSessionVector(_ data: [UInt8]) -> [UInt8] {
        var v: [UInt8] = [0x00, 0x01, 0x00, 0x80] + data
        while (v.count + 2) % 16 != 0 { v.append(0) }
        return v + [0x1E, 0xE1]
    }

    static func decodeHex(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 2)
        var high: UInt8 = 0
        for (i, c) in text.enumerated() {
            let v: UInt8
            switch c {
            case 0x30...0x39: v = c - 0x30
            case 0x41...0x46: v = c - 0x41 + 10
            case 0x61...0x66: v = c - 0x61 + 10
            default: return nil
            }
            if i % 2 == 0 { high = v } else { out.append(high << 4 | v) }
        }
        return out
    }

    static func hexString(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }

    /// A parameter name from the URL, for a message: printable ASCII only, at most 32 characters.
    static func safe(_ s: String) -> String {
        String(s.unicodeScalars.prefix(32).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
    }
}

/// Where the last accepted read counter of each UID is kept, so a tap's URL is accepted once:
/// the check and the update are one atomic step, whatever the backend.
public protocol SUNCounterStore: Sendable {
    /// Records `counter` for `uid` and returns true when it is greater than the last one
    /// recorded (or the first); false, changing nothing, when it is not: a replay.
    func accept(uid: [UInt8], counter: Int) throws -> Bool
}

extension SUNMessage {
    /// Verifies the message, then refuses it as a replay unless its counter is greater than the
    /// last one `store` accepted for the UID. A message without a mirrored counter cannot be
    /// checked for replay and is refused when a store is given.
    public func verify(keys: SDMKeys, store: any SUNCounterStore, plainEncryption: SDMEncryption = .aes, tamper: SUNTamperPlacement? = nil) throws -> SUNResult {
        let result = try verify(keys: keys, plainEncryption: plainEncryption, tamper: tamper)
        guard let counter = result.counter else {
            throw SUNError(.unsupported, "the message mirrors no read counter, so a replay cannot be told from a tap")
        }
        guard try store.accept(uid: result.uid, counter: counter) else {
            throw SUNError(.replay, "replay: counter \(counter) for UID \(Self.hexString(result.uid)) is not greater than the last one accepted")
        }
        return result
    }
}

#if DEBUG
/// Test-only (issue 49): a check the hostile matrix removes, in its own task, to show that it
/// fails without it. A release build has neither the switch nor the branch.
public enum SUNRemovedChecks {
    /// The comparison of the URL's SDMMAC with ours.
    @TaskLocal public static var mac = false
}
#else
enum SUNRemovedChecks { static let mac = false }
#endif
