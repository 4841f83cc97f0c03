// Emulated payment cards, written from the public specifications (EMV Books 1-3, the Visa,
// Mastercard and Amex contactless kernels' public data): directories, PDOLs, GPO formats 80 and
// 77, AFL records, counters, logs, and SDA, DDA and fDDA signed by the card under the emulator's
// own test CA. They answer only what a reader may ask; anything else (GENERATE AC, VERIFY,
// PUT DATA, …) is recorded in `forbiddenCommands` and refused.
import CardCrypto
import ISO7816

public final class PaymentCardModel: EmulatedCard, @unchecked Sendable {
    public enum Profile: String, Sendable, CaseIterable {
        /// Visa contactless: PPSE, a PDOL, GPO format 77 with track 2 and fDDA, records from 2, a log (DF60).
        case visa
        /// Mastercard: PPSE, no PDOL, GPO format 80, DDA by INTERNAL AUTHENTICATE (CDA offered too), a log (9F4D).
        case mastercard
        /// American Express: a PDOL with 9F35 and 9F6E (GPO refused when 9F6E is zero), SDA, records 2-4.
        case amex
        /// A contact card: no PPSE, a PSE whose first application is blocked (62 83).
        case contact
        /// Interac through the AID list: no directory, SELECT answered 62 85 with an FCI, and two
        /// Visa applications found by partial selection.
        case interac
    }

    struct Application {
        var aid: [UInt8]
        var label: String
        var priority: UInt8?
        var kernel: UInt8?
        var selectStatus: [UInt8] = [0x90, 0x00]
        var pdol: [UInt8]?
        var format77 = false
        var aip: [UInt8]
        var afl: [UInt8]
        var records: [Int: [UInt8]] = [:]          // sfi << 8 | record → record bytes
        var oda: String = "none"
        var logEntry: (tag: [UInt8], sfi: UInt8, count: UInt8)?
        var requiresNonZero9F6E = false
        // What a hostile profile (PaymentCardModel+Hostile.swift) changes: objects added to the
        // FCI, the AIP the GPO answer gives (none at all when `gpoOmitsAIP`), track 2 left out of
        // the format 77 answer, one ICC Dynamic Number for every INTERNAL AUTHENTICATE.
        var fciExtra: [UInt8] = []
        var gpoAIP: [UInt8]?
        var gpoOmitsAIP = false
        var gpoTrack2 = true
        var fixedIDN: [UInt8]?
    }

    public let profile: Profile
    /// The hostile variant of the profile, if this card is one (issue 48).
    public let hostile: Hostile?
    public let pan: String
    public static let cardholderName = "TEST/CARDHOLDER"
    var applications: [Application] = []
    var directory: [[UInt8]] = []       // PSE records
    var hasPPSE = true, hasPSE = false
    let logFormat: [UInt8] = [0x9A, 0x03, 0x9F, 0x21, 0x03, 0x9F, 0x02, 0x06, 0x5F, 0x2A, 0x02, 0x9F, 0x1A, 0x02, 0x9C, 0x01, 0x9F, 0x36, 0x02]
    /// The log's entries: amount in minor units, currency, date YYMMDD, country.
    public static let logEntries: [(amount: Int, currency: String, date: String, country: String)] = [
        (1234, "0978", "261120", "0250"), (500, "0840", "261101", "0840"), (9999, "0826", "261015", "0826"),
    ]

    struct State {
        var selected: Int?           // application index
        var directorySelected = false
        var gpoDone = false
        var atc = 0x0017
        var lastPrefix: [UInt8]?
        var received: [UInt8] = []
        var forbidden: [[UInt8]] = []
    }
    private let state = Locked(State())

    /// Instructions received, in order.
    public var receivedInstructions: [UInt8] { state.current.received }
    /// Commands a reader must never send a payment card (GENERATE AC, VERIFY, …), as received.
    public var forbiddenCommands: [[UInt8]] { state.current.forbidden }
    /// The ATC now (each GET PROCESSING OPTIONS moves it).
    public var atc: Int { state.current.atc }

    public let atr: [UInt8] = [0x3B, 0x8A, 0x80, 0x01] + Array("EMV-SPECIM".utf8) + [0x00]

    /// The emulator's test CA key as a line of proxmark3's capk.txt, for `apdu emv read --ca-keys`.
    /// `expiry` is the key's YYMMDD (a past one makes an expired CA key, issue 48).
    public static func caKeyLine(rid: [UInt8], expiry: String = "491231") -> String {
        let ca = PaymentTestKeys.ca
        let sum = Digest.sha1.hash(rid + [PaymentTestKeys.caIndex] + ca.modulus + ca.exponent)
        func colons(_ b: [UInt8]) -> String { b.map { Hex.encode([$0]).lowercased() }.joined(separator: ":") }
        return "\(colons(rid)) \(Hex.encode([PaymentTestKeys.caIndex]).lowercased()) \(expiry) rsa \(colons(ca.exponent)) \(colons(ca.modulus)) sha1 \(colons(sum))"
    }

    /// The capk.txt lines for every scheme the profiles use.
    public static var caKeyFile: String { caKeyFile(expiry: "491231") }

    /// The same lines with another expiry (YYMMDD).
    public static func caKeyFile(expiry: String) -> String {
        [[0xA0, 0x00, 0x00, 0x00, 0x03], [0xA0, 0x00, 0x00, 0x00, 0x04], [0xA0, 0x00, 0x00, 0x00, 0x25]].map { caKeyLine(rid: $0, expiry: expiry) }.joined(separator: "\n") + "\n"
    }

    public convenience init(_ profile: Profile) { self.init(profile, hostile: nil) }

    /// A card that misbehaves as `hostile` says, on the profile it names.
    public convenience init(hostile: Hostile) { self.init(hostile.profile, hostile: hostile) }

    init(_ profile: Profile, hostile: Hostile?) {
        self.profile = profile
        self.hostile = hostile
        switch profile {
        case .visa: pan = "4761739001010119"
        case .mastercard: pan = "5413330089020011"
        case .amex: pan = "374245455400126"
        case .contact: pan = "6759649826438453"
        case .interac: pan = "4506445006931933"
        }
        build()
        if let hostile { personalise(hostile) }
    }

    // MARK: Personalisation

    static func tlv(_ tag: [UInt8], _ value: [UInt8]) -> [UInt8] { tag + BERTLV.encodeLength(value.count) + value }
    static func bcd(_ digits: String) -> [UInt8] {
        var d = Array(digits.utf8).map { $0 == UInt8(ascii: "D") ? UInt8(0x0D) : $0 == UInt8(ascii: "F") ? 0x0F : $0 - 0x30 }
        if d.count % 2 == 1 { d.append(0x0F) }
        return stride(from: 0, to: d.count, by: 2).map { d[$0] << 4 | d[$0 + 1] }
    }
    var track2: [UInt8] { Self.bcd(pan + "D" + "4912" + "2011000000000000") }
    var panCN: [UInt8] { Array((Self.bcd(pan) + [UInt8](repeating: 0xFF, count: 10)).prefix(10)) }
    func record(_ objects: [UInt8]) -> [UInt8] { Self.tlv([0x70], objects) }

    /// The certificates, issued over `staticData` (the signed records and, with 9F4A, the AIP).
    func certificateRecord(rid: [UInt8], staticData: [UInt8], icc: Bool, ssad: Bool, dac: [UInt8] = [0xDA, 0xC1]) -> [UInt8] {
        let ca = PaymentTestKeys.ca, issuer = PaymentTestKeys.issuer, card = PaymentTestKeys.icc
        let issuerID = Array((Self.bcd(String(pan.prefix(6))) + [0xFF, 0xFF]).prefix(4))
        let (issuerCert, issuerRemainder) = PaymentCardSigner.certificate(format: 0x02, identity: issuerID, expiry: [0x12, 0x49], serial: [0x00, 0x00, 0x01],
                                                                          subject: issuer.modulus, subjectExponent: issuer.exponent,
                                                                          signerModulus: ca.modulus, signerPrivateExponent: ca.privateExponent)
        var objects = Self.tlv([0x8F], [PaymentTestKeys.caIndex]) + Self.tlv([0x9F, 0x32], issuer.exponent) + Self.tlv([0x92], issuerRemainder) + Self.tlv([0x90], issuerCert)
        if ssad {
            objects += Self.tlv([0x93], PaymentCardSigner.ssad(staticData: staticData, dac: dac, signerModulus: issuer.modulus, signerPrivateExponent: issuer.privateExponent))
        }
        if icc {
            let (iccCert, iccRemainder) = PaymentCardSigner.certificate(format: 0x04, identity: panCN, expiry: [0x12, 0x49], serial: [0x00, 0x00, 0x02],
                                                                        subject: card.modulus, subjectExponent: card.exponent,
                                                                        signerModulus: issuer.modulus, signerPrivateExponent: issuer.privateExponent, staticData: staticData)
            objects += Self.tlv([0x9F, 0x46], iccCert) + Self.tlv([0x9F, 0x47], card.exponent) + Self.tlv([0x9F, 0x48], iccRemainder)
        }
        return record(objects)
    }

    /// The signed records' values (SFI 1-10: the 70 template's value), then the AIP.
    func staticData(_ app: Application, withAIP: Bool) -> [UInt8] {
        var out: [UInt8] = []
        for i in stride(from: 0, to: app.afl.count, by: 4) {
            let sfi = Int(app.afl[i] >> 3), first = Int(app.afl[i + 1]), signed = Int(app.afl[i + 3])
            for r in first..<(first + signed) {
                guard let bytes = app.records[sfi << 8 | r], let o = try? BERTLV.decode(bytes).first else { continue }
                out += o.value
            }
        }
        return out + (withAIP ? app.aip : [])
    }

    func build() {
        let name = Self.tlv([0x5F, 0x20], Array(Self.cardholderName.utf8))
        let common = Self.tlv([0x5A], Self.bcd(pan)) + Self.tlv([0x5F, 0x24], [0x49, 0x12, 0x31]) + Self.tlv([0x5F, 0x25], [0x24, 0x01, 0x01]) + Self.tlv([0x5F, 0x28], [0x08, 0x40])
        let visaPDOL: [UInt8] = [0x9F, 0x66, 0x04, 0x9F, 0x02, 0x06, 0x9F, 0x03, 0x06, 0x9F, 0x1A, 0x02, 0x95, 0x05, 0x5F, 0x2A, 0x02, 0x9A, 0x03, 0x9C, 0x01, 0x9F, 0x37, 0x04]
        switch profile {
        case .visa:
            var app = Application(aid: [0xA0, 0x00, 0x00, 0x00, 0x03, 0x10, 0x10], label: "VISA CREDIT", priority: 1, kernel: 0x03, pdol: visaPDOL, format77: true,
                                  aip: [0x20, 0x40], afl: [0x10, 0x02, 0x03, 0x02, 0x18, 0x01, 0x01, 0x00], oda: "fdda", logEntry: ([0xDF, 0x60], 0x0B, 3))
            app.records[2 << 8 | 2] = record(common + Self.tlv([0x9F, 0x07], [0xFF, 0x00]) + Self.tlv([0x9F, 0x4A], [0x82]))
            app.records[2 << 8 | 3] = record(name + Self.tlv([0x9F, 0x1F], Array("1234567890".utf8)) + Self.tlv([0x5F, 0x30], [0x02, 0x01]))
            app.records[3 << 8 | 1] = certificateRecord(rid: Array(app.aid.prefix(5)), staticData: staticData(app, withAIP: true), icc: true, ssad: false)
            applications = [app]
        case .mastercard:
            var app = Application(aid: [0xA0, 0x00, 0x00, 0x00, 0x04, 0x10, 0x10], label: "MASTERCARD", priority: 1, kernel: 0x02,
                                  aip: [0x39, 0x80], afl: [0x08, 0x01, 0x01, 0x00, 0x10, 0x01, 0x02, 0x01, 0x18, 0x01, 0x01, 0x00], oda: "dda",
                                  logEntry: ([0x9F, 0x4D], 0x0B, 3))
            app.records[1 << 8 | 1] = record(Self.tlv([0x9F, 0x6B], track2) + Self.tlv([0x9F, 0x6C], [0x00, 0x01]))
            app.records[2 << 8 | 1] = record(common + Self.tlv([0x9F, 0x49], [0x9F, 0x37, 0x04]) + Self.tlv([0x8C], [0x9F, 0x02, 0x06, 0x9F, 0x37, 0x04]))
            app.records[2 << 8 | 2] = record(name)
            app.records[3 << 8 | 1] = certificateRecord(rid: Array(app.aid.prefix(5)), staticData: staticData(app, withAIP: false), icc: true, ssad: false)
            applications = [app]
        case .amex:
            var app = Application(aid: [0xA0, 0x00, 0x00, 0x00, 0x25, 0x01, 0x08, 0x01], label: "AMERICAN EXPRESS", priority: 1, kernel: 0x04,
                                  pdol: [0x9F, 0x35, 0x01, 0x9F, 0x6E, 0x04, 0x9F, 0x02, 0x06, 0x9F, 0x37, 0x04],
                                  aip: [0x40, 0x00], afl: [0x08, 0x02, 0x04, 0x02], oda: "sda", requiresNonZero9F6E: true)
            app.records[1 << 8 | 2] = record(common)
            app.records[1 << 8 | 3] = record(name + Self.tlv([0x57], track2))
            app.records[1 << 8 | 4] = certificateRecord(rid: Array(app.aid.prefix(5)), staticData: staticData(app, withAIP: false), icc: false, ssad: true)
            applications = [app]
        case .contact:
            hasPPSE = false
            hasPSE = true
            var blocked = Application(aid: [0xA0, 0x00, 0x00, 0x00, 0x04, 0x30, 0x60], label: "MAESTRO", priority: 1, kernel: nil,
                                      selectStatus: [0x62, 0x83], aip: [0x00, 0x00], afl: [0x08, 0x01, 0x01, 0x00])
            blocked.records[1 << 8 | 1] = record(common)
            var app = Application(aid: [0xA0, 0x00, 0x00, 0x00, 0x04, 0x10, 0x10], label: "DEBIT MASTERCARD", priority: 2, kernel: nil,
                                  aip: [0x00, 0x00], afl: [0x08, 0x01, 0x01, 0x00])
            app.records[1 << 8 | 1] = record(common + name)
            applications = [blocked, app]
            directory = [record(Self.tlv([0x61], Self.tlv([0x4F], blocked.aid) + Self.tlv([0x50], Array("MAESTRO".utf8)) + Self.tlv([0x87], [0x01]))
                                + Self.tlv([0x61], Self.tlv([0x4F], app.aid) + Self.tlv([0x50], Array("DEBIT MASTERCARD".utf8)) + Self.tlv([0x87], [0x02])))]
        case .interac:
            hasPPSE = false
            var interac = Application(aid: [0xA0, 0x00, 0x00, 0x02, 0x77, 0x10, 0x10], label: "INTERAC", priority: 1, kernel: nil,
                                      selectStatus: [0x62, 0x85], aip: [0x00, 0x00], afl: [0x08, 0x01, 0x01, 0x00])
            interac.records[1 << 8 | 1] = record(common + name)
            var visa1 = Application(aid: [0xA0, 0x00, 0x00, 0x00, 0x03, 0x10, 0x10, 0x01], label: "VISA ONE", priority: 2, kernel: nil, aip: [0x00, 0x00], afl: [0x08, 0x01, 0x01, 0x00])
            visa1.records[1 << 8 | 1] = record(common)
            var visa2 = visa1
            visa2.aid = [0xA0, 0x00, 0x00, 0x00, 0x03, 0x10, 0x10, 0x02]
            visa2.label = "VISA TWO"
            visa2.priority = 3
            applications = [interac, visa1, visa2]
        }
    }

    // MARK: Commands

    public func reset() { state.withLock { $0.selected = nil; $0.directorySelected = false; $0.gpoDone = false; $0.lastPrefix = nil } }

    static let ppse = Array("2PAY.SYS.DDF01".utf8), pse = Array("1PAY.SYS.DDF01".utf8)

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        guard let c = try? CommandAPDU(bytes: apdu) else { return [0x67, 0x00] }
        state.withLock { $0.received.append(c.ins) }
        switch (c.cla, c.ins) {
        case (0x00, 0xA4): return select(c)
        case (0x00, 0xB2): return readRecord(c)
        case (0x80, 0xA8): return processingOptions(c)
        case (0x80, 0xCA): return getData(c)
        case (0x00, 0x88): return internalAuthenticate(c)
        default:
            state.withLock { $0.forbidden.append(apdu) }
            return [0x6D, 0x00]
        }
    }

    func fci(_ app: Application) -> [UInt8] {
        var a5 = Self.tlv([0x50], Array(app.label.utf8))
        if let p = app.priority { a5 += Self.tlv([0x87], [p]) }
        if let pdol = app.pdol { a5 += Self.tlv([0x9F, 0x38], pdol) }
        if let log = app.logEntry { a5 += Self.tlv([0xBF, 0x0C], Self.tlv(log.tag, [log.sfi, log.count])) }
        a5 += app.fciExtra
        return Self.tlv([0x6F], Self.tlv([0x84], app.aid) + Self.tlv([0xA5], a5))
    }

    func select(_ c: CommandAPDU) -> [UInt8] {
        guard c.p1 == 0x04 else { return [0x6A, 0x86] }
        let name = c.data
        if name == Self.ppse {
            guard hasPPSE else { return [0x6A, 0x82] }
            state.withLock { $0.selected = nil; $0.directorySelected = false; $0.gpoDone = false }
            let entries = applications.map { app in
                Self.tlv([0x61], Self.tlv([0x4F], app.aid) + Self.tlv([0x50], Array(app.label.utf8)) + (app.priority.map { Self.tlv([0x87], [$0]) } ?? [])
                         + (app.kernel.map { Self.tlv([0x9F, 0x2A], [$0]) } ?? []))
            }.flatMap { $0 }
            return Self.tlv([0x6F], Self.tlv([0x84], name) + Self.tlv([0xA5], Self.tlv([0xBF, 0x0C], entries))) + [0x90, 0x00]
        }
        if name == Self.pse {
            guard hasPSE else { return [0x6A, 0x82] }
            state.withLock { $0.selected = nil; $0.directorySelected = true; $0.gpoDone = false }
            return Self.tlv([0x6F], Self.tlv([0x84], name) + Self.tlv([0xA5], Self.tlv([0x88], [0x01]))) + [0x90, 0x00]
        }
        // By AID: exact or partial (a prefix), P2 02 the next one with that prefix.
        let matching = applications.indices.filter { applications[$0].aid.starts(with: name) }
        let previous = state.current.selected
        let index: Int?
        if c.p2 & 0x03 == 0x02, state.current.lastPrefix == name, let previous {
            index = matching.first { $0 > previous }
        } else {
            index = matching.first
        }
        guard let index else { return [0x6A, 0x82] }
        let app = applications[index]
        state.withLock { $0.selected = index; $0.directorySelected = false; $0.gpoDone = false; $0.lastPrefix = name }
        return fci(app) + app.selectStatus
    }

    func readRecord(_ c: CommandAPDU) -> [UInt8] {
        let sfi = Int(c.p2 >> 3), rec = Int(c.p1)
        let s = state.current
        if s.directorySelected {
            guard sfi == 1, rec >= 1, rec <= directory.count else { return [0x6A, 0x83] }
            return directory[rec - 1] + [0x90, 0x00]
        }
        guard let i = s.selected else { return [0x69, 0x85] }
        let app = applications[i]
        if let log = app.logEntry, sfi == Int(log.sfi) {
            guard rec >= 1, rec <= Self.logEntries.count else { return [0x6A, 0x83] }
            let e = Self.logEntries[rec - 1]
            let amount = Self.bcd(String(repeating: "0", count: 12 - String(e.amount).count) + String(e.amount))
            return Self.bcd(e.date) + [0x12, 0x30, 0x00] + amount + Self.bcd(e.currency) + Self.bcd(e.country) + [0x00] + [0x00, UInt8(rec)] + [0x90, 0x00]
        }
        guard let bytes = app.records[sfi << 8 | rec] else { return [0x6A, 0x83] }
        return bytes + [0x90, 0x00]
    }

    func processingOptions(_ c: CommandAPDU) -> [UInt8] {
        guard let i = state.current.selected, applications[i].selectStatus != [0x62, 0x83] else { return [0x69, 0x85] }
        guard !state.current.gpoDone else { return [0x69, 0x85] }
        let app = applications[i]
        guard c.data.count >= 2, c.data[0] == 0x83 else { return [0x6A, 0x80] }
        let pdolData = Array(c.data.dropFirst(2))
        let entries = (try? Self.dol(app.pdol ?? [])) ?? []
        guard pdolData.count == entries.reduce(0, { $0 + $1.1 }) else { return [0x67, 0x00] }
        var values: [[UInt8]: [UInt8]] = [:]
        var at = 0
        for (tag, length) in entries { values[tag] = Array(pdolData[at..<(at + length)]); at += length }
        if app.requiresNonZero9F6E, values[[0x9F, 0x6E]]?.allSatisfy({ $0 == 0 }) ?? true { return [0x69, 0x85] }
        let atc = state.withLock { s -> Int in s.gpoDone = true; s.atc += 1; return s.atc }
        let atcBytes: [UInt8] = [UInt8(atc >> 8), UInt8(atc & 0xFF)]
        guard app.format77 else { return Self.tlv([0x80], (app.gpoAIP ?? app.aip) + app.afl) + [0x90, 0x00] }
        var body = (app.gpoOmitsAIP ? [] : Self.tlv([0x82], app.gpoAIP ?? app.aip)) + Self.tlv([0x94], app.afl)
            + (app.gpoTrack2 ? Self.tlv([0x57], track2) : []) + Self.tlv([0x5F, 0x34], [0x01])
            + Self.tlv([0x9F, 0x10], [0x06, 0x01, 0x12, 0x03, 0xA0, 0x00, 0x00]) + Self.tlv([0x9F, 0x26], secureRandomBytes(8))
            + Self.tlv([0x9F, 0x27], [0x80]) + Self.tlv([0x9F, 0x36], atcBytes) + Self.tlv([0x9F, 0x6C], [0x00, 0x00])
        if app.oda == "fdda" {
            // Visa fDDA: 9F69 (version 01, the card's unpredictable number, the CTQ), then the
            // SDAD over UN ‖ amount ‖ currency ‖ 9F69, format 95.
            let related: [UInt8] = [0x01] + secureRandomBytes(4) + [0x00, 0x00]
            let signed = (values[[0x9F, 0x37]] ?? []) + (values[[0x9F, 0x02]] ?? []) + (values[[0x5F, 0x2A]] ?? []) + related
            body += Self.tlv([0x9F, 0x69], related) + Self.tlv([0x9F, 0x4B], signDynamic(idn: atcBytes, over: signed, format: 0x95))
        }
        return Self.tlv([0x77], body) + [0x90, 0x00]
    }

    func signDynamic(idn: [UInt8], over data: [UInt8], format: UInt8) -> [UInt8] {
        PaymentCardSigner.sdad(idn: idn, terminalData: data, format: format, signerModulus: PaymentTestKeys.icc.modulus, signerPrivateExponent: PaymentTestKeys.icc.privateExponent)
    }

    static func dol(_ bytes: [UInt8]) throws -> [([UInt8], Int)] {
        var out: [([UInt8], Int)] = []
        var i = 0
        while i < bytes.count {
            var tag = [bytes[i]]; i += 1
            if tag[0] & 0x1F == 0x1F { while i < bytes.count { tag.append(bytes[i]); i += 1; if tag.last! & 0x80 == 0 { break } } }
            guard i < bytes.count else { throw DOLError() }
            out.append((tag, Int(bytes[i]))); i += 1
        }
        return out
    }

    func getData(_ c: CommandAPDU) -> [UInt8] {
        let tag = [c.p1, c.p2]
        let s = state.current
        switch tag {
        case [0x9F, 0x36]: return Self.tlv(tag, [UInt8(s.atc >> 8), UInt8(s.atc & 0xFF)]) + [0x90, 0x00]
        case [0x9F, 0x17]: return Self.tlv(tag, [0x03]) + [0x90, 0x00]
        case [0x9F, 0x4F]:
            guard let i = s.selected, applications[i].logEntry != nil else { return [0x6A, 0x88] }
            return Self.tlv(tag, logFormat) + [0x90, 0x00]
        default: return [0x6A, 0x88]
        }
    }

    func internalAuthenticate(_ c: CommandAPDU) -> [UInt8] {
        guard let i = state.current.selected, applications[i].oda == "dda" else { return [0x6D, 0x00] }
        return Self.tlv([0x80], signDynamic(idn: applications[i].fixedIDN ?? secureRandomBytes(8), over: c.data, format: 0x05)) + [0x90, 0x00]
    }
}

struct DOLError: Error {}
