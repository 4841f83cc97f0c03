// Reading a payment card without changing it: SELECT, one GET PROCESSING OPTIONS, the records
// the AFL names, GET DATA, the transaction log, and offline data authentication. The commands
// this code can send are listed in `PaymentCardReader.instructions`; no other reaches the card.
import CardCrypto
import ISO7816

/// What the terminal side puts into the card's PDOL and DDOL: neutral values (amount 0), today's
/// date, a fresh unpredictable number.
public struct TerminalData: Sendable, Hashable {
    /// Terminal country code (9F1A), 2 bytes BCD: given, else the card's issuer country (5F28)
    /// when the FCI has it, else 0840.
    public var country: [UInt8]?
    /// Transaction currency code (5F2A): given, else the card's (9F42), else 0840 (US dollar).
    public var currency: [UInt8]?
    /// 9A, YYMMDD in BCD.
    public var date: [UInt8]
    public var unpredictableNumber: [UInt8]

    public static let defaultCountry: [UInt8] = [0x08, 0x40]
    public static let defaultCurrency: [UInt8] = [0x08, 0x40]

    public init(country: [UInt8]? = nil, currency: [UInt8]? = nil, date: [UInt8], unpredictableNumber: [UInt8] = secureRandomBytes(4)) {
        self.country = country
        self.currency = currency
        self.date = date
        self.unpredictableNumber = unpredictableNumber
    }

    /// The values by tag, for `DataObjectList.build`: TTQ with EMV mode, amount 0, terminal
    /// type 22, a non-zero 9F6E (Amex refuses GPO when it is zero), the rest zero-filled.
    func values(cardCountry: [UInt8]?, cardCurrency: [UInt8]?) -> [[UInt8]: [UInt8]] {
        [
            [0x9F, 0x66]: [0x36, 0x00, 0x40, 0x00],
            [0x9F, 0x02]: [0, 0, 0, 0, 0, 0], [0x9F, 0x03]: [0, 0, 0, 0, 0, 0],
            [0x9F, 0x1A]: country ?? cardCountry ?? Self.defaultCountry,
            [0x5F, 0x2A]: currency ?? cardCurrency ?? Self.defaultCurrency,
            [0x9A]: date, [0x9C]: [0x00], [0x9F, 0x37]: unpredictableNumber,
            [0x9F, 0x35]: [0x22], [0x9F, 0x6E]: [0xD8, 0xB0, 0x00, 0x00],
            [0x9F, 0x33]: [0xE0, 0xF0, 0xC8], [0x9F, 0x40]: [0x60, 0x00, 0xF0, 0xA0, 0x01],
            [0x95]: [0, 0, 0, 0, 0],
        ]
    }
}

/// A card's transaction log entry (9F4D / DF60, decoded with the log format 9F4F).
public struct PaymentLogEntry: Sendable, Hashable {
    /// Minor units (9F02).
    public var amount: Int?
    /// ISO 4217 numeric (5F2A), "0978".
    public var currency: String?
    /// "2026-11-27" (9A).
    public var date: String?
    public var type: UInt8?
    /// ISO 3166 numeric (9F1A).
    public var country: String?
    public var atc: Int?
    public var fields: [[UInt8]: [UInt8]]
}

/// Which offline data authentication the card offers and what came of it.
public struct ODAResult: Sendable, Hashable {
    public enum Method: String, Sendable, Hashable { case sda = "SDA", dda = "DDA", fdda = "fDDA", cda = "CDA", none }
    public enum Outcome: String, Sendable, Hashable {
        case verified, failed
        /// The keys in use hold no key of the card's RID: not checked, nothing said either way.
        case noCAKey = "no-ca-key"
        /// The keys in use hold the card's RID but not the index its 8F names: the proof the
        /// card offers cannot be done (EMV Book 2 §5.2, §6.2). Unproven, not failed: no
        /// certificate or signature was found wrong.
        case unknownCAIndex = "unknown-ca-index"
        case notOffered = "not-offered"
        /// CDA alone: it signs GENERATE AC's answer, which a read never asks for.
        case notVerified = "not-verified"
    }
    public var method: Method
    public var result: Outcome
    /// Every method the AIP and the answers offer.
    public var offered: [Method]
    /// What failed, or why nothing could be proven.
    public var reason: String?
    public var caIndex: UInt8?
    public var caKeyIsTest = false
    /// SDA's Data Authentication Code; DDA/fDDA's ICC Dynamic Number.
    public var dataAuthenticationCode: [UInt8]?
    public var iccDynamicNumber: [UInt8]?
}

/// Everything a read found.
public struct PaymentCardRead: Sendable {
    public var application: PaymentApplication
    /// Each tag's value, from the FCI, GPO, records and GET DATA: the one in a signed record when
    /// a signed record gives the tag, else the GPO answer's, else the first (`conflicts` names a
    /// tag given with different values).
    public var data: [[UInt8]: [UInt8]]
    public var pan: String?
    public var expiry: EMVMonth?
    public var atc: Int?
    public var lastOnlineATC: Int?
    public var pinTriesLeft: Int?
    public var log: [PaymentLogEntry]
    public var oda: ODAResult
    /// The records read: SFI, record number, the bytes.
    public var records: [(sfi: Int, record: Int, bytes: [UInt8])]
    /// Records the AFL names that the card did not give, and its answer ("SFI 2 record 1: 6A83").
    public var unreadableRecords: [String] = []
    /// Where the card strayed from EMV and the read went on (a GPO answer in a 70 template).
    public var notes: [String] = []
    /// Whether offline data authentication verified the PAN shown: it is in the signed records
    /// (SDA), or it is the PAN the verified ICC certificate names (DDA, fDDA).
    public var panProven = false
    /// Tags the card gave with different values, and where: "5A (Application PAN): SFI 4
    /// record 1, SFI 1 record 2". Any of them fails a verdict that would otherwise pass.
    public var conflicts: [String] = []
    /// The terminal's values GET PROCESSING OPTIONS sent in its PDOL data (amount, currency,
    /// unpredictable number…): what fDDA's signature covers, so it is checked against these and
    /// not against values worked out again after the records (whose 9F42 may differ).
    public var terminalValues: [[UInt8]: [UInt8]] = [:]
    /// Tags a record offline data authentication covers gives (the AFL's "records involved in
    /// offline data authentication", Book 3 §10.2): the static data SDA signs and DDA/fDDA's ICC
    /// certificate hashes. A tag outside it (an unsigned record, the FCI, the GPO answer, GET
    /// DATA) is not vouched for by any verdict (issue 48).
    public var signedTags: Set<[UInt8]> = []
    /// The tag the expiry shown came from: 5F24, else 57, 9F6B or 56.
    public var expiryTag: [UInt8]?

    /// Whether the verdict vouches for a tag's value: ODA verified, and the value shown is from a
    /// signed record.
    public func covered(_ tag: [UInt8]) -> Bool { oda.result == .verified && signedTags.contains(tag) }
    /// Whether the verdict vouches for the expiry shown.
    public var expiryProven: Bool { expiryTag.map(covered) ?? false }
}

/// Reads payment cards over any `CardChannel`, changing nothing on them.
public final class PaymentCardReader {
    /// Every instruction this type can send: SELECT, READ RECORD, GET PROCESSING OPTIONS (once
    /// per selection), GET DATA, INTERNAL AUTHENTICATE. Never GENERATE AC, VERIFY, EXTERNAL
    /// AUTHENTICATE, PUT DATA, UPDATE RECORD, PIN CHANGE/UNBLOCK, APPLICATION BLOCK/UNBLOCK or
    /// CARD BLOCK.
    public static let instructions: Set<UInt8> = [0xA4, 0xB2, 0xA8, 0xCA, 0x88]

    public let transport: APDUTransport
    public var caKeys: CAPublicKeys
    public var terminal: TerminalData
    /// Commands sent so far.
    public internal(set) var exchanges = 0
    private var gpoSent = false

    /// A new selection: one GET PROCESSING OPTIONS is allowed again.
    func selected() { gpoSent = false }

    public init(transport: APDUTransport, caKeys: CAPublicKeys = CAPublicKeys(), terminal: TerminalData) {
        self.transport = transport
        self.caKeys = caKeys
        self.terminal = terminal
    }

    /// One command; private answers (records, GPO) are marked so traces show them as `**`.
    func send(_ command: CommandAPDU, privateAnswer: Bool = false) throws -> ResponseAPDU {
        precondition(Self.instructions.contains(command.ins), "the EMV reader sends only SELECT, READ RECORD, GPO, GET DATA and INTERNAL AUTHENTICATE")
        exchanges += 1
        // GET PROCESSING OPTIONS moves the ATC and is allowed once per selection: a 6Cxx to it is
        // its answer, never a reason to send it again with another Le.
        if command.ins == 0xA8 { return try transport.sendOnce(command, secretResponse: privateAnswer) }
        return try transport.send(command, secret: nil, secretResponse: privateAnswer)
    }

    /// Selects the application (`aid`, else the highest-priority one the card lists), sends one
    /// GET PROCESSING OPTIONS, reads the AFL's records, the counters and the log, and runs
    /// offline data authentication.
    /// - Throws: `PaymentCardError` (`.noApplication`, `.refused` for a refused GPO,
    ///   `.malformed`), or the channel's errors (a card pulled: PCSCError / TransmitError).
    public func read(aid requested: [UInt8]? = nil) throws -> PaymentCardRead {
        // The candidates in priority order; a blocked one (62 83) is skipped (Book 1 §12.4).
        let candidates = try requested.map { [PaymentApplication(aid: $0, source: .aidList)] } ?? applications(probe: false).filter { !$0.blocked }
        var chosen: (PaymentApplication, ResponseAPDU)?
        var refusals: [String] = []
        for candidate in candidates {
            let r = try select(candidate.aid)
            if r.statusWord == .success || (r.statusWord == StatusWord(0x62, 0x85) && !r.data.isEmpty) { chosen = (candidate, r); break }
            refusals.append("\(candidate.aid.hexString): \(r.statusWord == StatusWord(0x62, 0x83) ? "blocked (62 83)" : "\(r.statusWord) (\(r.statusWord.meaning.text))")")
        }
        guard let chosen else {
            throw PaymentCardError(.noApplication, "no payment application could be selected (\(refusals.joined(separator: "; ")))")
        }
        var app = chosen.0
        let selected = chosen.1
        // Every value the card gives, where, and whether it is signed; `data` is the value shown
        // (issue 48: the first value was kept, so an unsigned record read before the signed one
        // put its PAN beside "verified").
        var sightings = EMVDataSightings()
        var data: [[UInt8]: [UInt8]] { sightings.values }
        func keep(_ answer: [UInt8], _ objects: [EMVDataObject], from source: String, rank: EMVDataSightings.Rank) {
            for o in objects where !o.constructed { sightings.add(o.tagBytes, Array(answer[o.value]), from: source, rank: rank) }
        }
        keep(selected.data, try objects(selected.data, what: "the FCI"), from: "the FCI", rank: .unsigned)
        let named = application(aid: data[[0x84]] ?? app.aid, source: app.source) { data[$0] }
        app.label = app.label ?? named.label
        app.preferredName = app.preferredName ?? named.preferredName
        app.priority = app.priority ?? named.priority
        app.kernelIdentifier = app.kernelIdentifier ?? named.kernelIdentifier

        // GET PROCESSING OPTIONS, once per selection (a second is 69 85 on real cards, and each
        // moves the ATC).
        guard !gpoSent else { throw PaymentCardError(.refused, "GET PROCESSING OPTIONS was sent already since this selection") }
        gpoSent = true
        var pdol: DataObjectList?
        if let raw = data[[0x9F, 0x38]] {
            do throws(EMVFormatError) { pdol = try DataObjectList(parsing: raw) } catch { throw PaymentCardError(.malformed, "the PDOL: \(error.message)") }
        }
        let values = terminal.values(cardCountry: data[[0x5F, 0x28]], cardCurrency: data[[0x9F, 0x42]])
        let pdolData = pdol?.build(values) ?? []
        // 83, its length and the data in one short APDU (a card asking for more is refused
        // before anything is sent, not sent with a cut length).
        guard pdolData.count <= 252 else {
            throw PaymentCardError(.malformed, "the PDOL (9F38) asks for \(pdolData.count) bytes; GET PROCESSING OPTIONS carries at most 252")
        }
        let gpo = try send(CommandAPDU(cla: 0x80, ins: 0xA8, p1: 0, p2: 0, data: [0x83] + BERTLV.encodeLength(pdolData.count) + pdolData, ne: 256), privateAnswer: true)
        if gpo.statusWord == .conditionsNotSatisfied {
            throw PaymentCardError(.refused, "the card refused GET PROCESSING OPTIONS with 69 85 (conditions of use not satisfied)\(pdol == nil ? "" : " to the PDOL data \(pdolData.hexString)")")
        }
        guard gpo.statusWord == .success else {
            throw PaymentCardError(.refused, "the card refused GET PROCESSING OPTIONS: \(gpo.statusWord) (\(gpo.statusWord.meaning.text))")
        }
        let gpoObjects = try decode(gpo.data, what: "the GET PROCESSING OPTIONS answer")
        var gpoSDAD: [UInt8]?
        var notes: [String] = []
        if let f1 = gpoObjects.first(where: { $0.tag == [0x80] }) {
            guard f1.value.count >= 2 else { throw PaymentCardError(.malformed, "the GET PROCESSING OPTIONS answer (format 80) has no AIP") }
            sightings.add([0x82], Array(f1.value.prefix(2)), from: "the GPO answer", rank: .gpo)
            if f1.value.count > 2 { sightings.add([0x94], Array(f1.value.dropFirst(2)), from: "the GPO answer", rank: .gpo) }
        } else if let f2 = gpoObjects.first(where: { $0.tag == [0x77] }), let children = f2.children {
            for o in EMVRecordSet.flatten(children) where o.children == nil { sightings.add(o.tag, o.value, from: "the GPO answer", rank: .gpo) }
            gpoSDAD = children.first { $0.tag == [0x9F, 0x4B] }?.value
            // Its own AIP: one in the FCI is not the answer's (issue 48).
            guard EMVRecordSet.flatten(children).contains(where: { $0.tag == [0x82] }) else {
                throw PaymentCardError(.malformed, "the GET PROCESSING OPTIONS answer (format 77) has no AIP (82)")
            }
        } else if let record = gpoObjects.first(where: { $0.tag == [0x70] }), let children = record.children {
            // Seen on real Interac cards: the answer is a record template. Its data is read as
            // it is (reads liberal); without an AIP nothing is offered for ODA.
            for o in EMVRecordSet.flatten(children) where o.children == nil { sightings.add(o.tag, o.value, from: "the GPO answer", rank: .gpo) }
            notes.append("the GET PROCESSING OPTIONS answer is a 70 template, not format 80 or 77: its data was read as it is")
            if data[[0x82]] == nil { notes.append("no AIP (82): no offline data authentication is offered") }
        } else {
            throw PaymentCardError(.malformed, "the GET PROCESSING OPTIONS answer is neither format 80 nor 77: \(gpo.data.prefix(4).hexString)…")
        }
        // The AIP is 2 bytes (Book 3 Annex A), wherever it came from (issue 48: 82 00 trapped).
        if let aip = data[[0x82]], aip.count != 2 {
            throw PaymentCardError(.malformed, "the AIP (82) is \(aip.count) bytes (\(aip.hexString)); EMV's is 2")
        }
        let afl: ApplicationFileLocator?
        if let raw = data[[0x94]] {
            do throws(EMVFormatError) { afl = try ApplicationFileLocator(parsing: raw) } catch { throw PaymentCardError(.malformed, error.message) }
        } else if data[[0x57]] != nil || data[[0x9F, 0x6B]] != nil || data[[0x56]] != nil {
            afl = nil   // everything came in the GPO answer (track data there)
        } else {
            throw PaymentCardError(.malformed, "the GET PROCESSING OPTIONS answer has no AFL (94) and no track 2: nothing says where the card's data is")
        }

        // The records the AFL names.
        var records: [(sfi: Int, record: Int, bytes: [UInt8])] = []
        var staticData: [UInt8] = []
        var unreadable: [String] = [], signedMissing: [String] = []
        for (sfi, record, signed) in afl?.records ?? [] {
            let r = try send(CommandAPDU(cla: 0x00, ins: 0xB2, p1: UInt8(record), p2: UInt8(sfi << 3 | 0x04), ne: 256), privateAnswer: true)
            guard r.statusWord == .success else {
                // Named but not given: said, and read on (a read-only tool shows what it can);
                // a signed one leaves offline data authentication unable to pass.
                let what = "SFI \(sfi) record \(record): \(r.statusWord)"
                unreadable.append(what)
                if signed { signedMissing.append(what) }
                continue
            }
            records.append((sfi, record, r.data))
            let objects = try objects(r.data, what: "record \(record) of SFI \(sfi)")
            if sfi <= 10 {
                let top = objects.filter { $0.depth == 0 }
                guard top.count == 1, top[0].tag == 0x70 else {
                    throw PaymentCardError(.malformed, "record \(record) of SFI \(sfi) is not one 70 template")
                }
                if signed { staticData += r.data[top[0].value] }
            } else if signed {
                staticData += r.data
            }
            keep(r.data, objects, from: "SFI \(sfi) record \(record)", rank: signed ? .signed : .unsigned)
        }

        // Counters and the log format; 6A88 (not available) is not an error.
        var getData: [[UInt8]: [UInt8]] = [:]
        for tag in [[0x9F, 0x36], [0x9F, 0x13], [0x9F, 0x17], [0x9F, 0x4F]] as [[UInt8]] {
            let r = try send(CommandAPDU(cla: 0x80, ins: 0xCA, p1: tag[0], p2: tag[1], ne: 256))
            guard r.statusWord == .success, let o = (try? BERTLV.decode(r.data))?.first(where: { $0.tag == tag }) else { continue }
            getData[tag] = o.value
            sightings.add(tag, o.value, from: "GET DATA", rank: .unsigned)
        }

        let log = try readLog(data: data)
        // The PAN from 5A, else track 2 (57, or Mastercard's 9F6B), else track 1 (56); the expiry
        // from 5F24, else the tracks.
        // 9F6B is track 2 on Mastercard-style kernels, Visa's Card CVM Limit (6 bytes) on Visa's.
        let mastercardTrack2 = data[[0x9F, 0x6B]].flatMap { v in app.kernel != .visa && v.count > 6 && Self.track2PAN(v).count >= 12 ? v : nil }
        let track2 = data[[0x57]] ?? mastercardTrack2
        let panSources: [(tag: [UInt8], pan: String?)] = [([0x5A], data[[0x5A]].map { EMVCertificates.digits($0) }), ([0x57], data[[0x57]].map(Self.track2PAN)),
                                                          ([0x9F, 0x6B], mastercardTrack2.map(Self.track2PAN)), ([0x56], data[[0x56]].flatMap(Self.track1PAN))]
        let pan = panSources.lazy.compactMap(\.pan).first
        var conflicts = sightings.conflicts.map { c in "\(c.tag.hexString) (\(EMVTags.name(c.tag, kernel: app.kernel))): \(c.sources.joined(separator: ", "))" }
        // One card, one PAN: 5A and the tracks must agree, or what is shown is only one of them.
        let pans = panSources.filter { $0.pan != nil }
        if Set(pans.map(\.pan)).count > 1 { conflicts.append("the PAN: \(pans.map(\.tag.hexString).joined(separator: ", ")) give different PANs") }
        var expiry: EMVMonth?, expiryTag: [UInt8]?
        if let e = data[[0x5F, 0x24]], e.count == 3, let y = EMVMonth.bcd(e[0]), let m = EMVMonth.bcd(e[1]), (1...12).contains(m) {
            expiry = EMVMonth(year: EMVMonth.year(yy: y), month: m)
            expiryTag = [0x5F, 0x24]
        }
        if expiry == nil, let e = track2.flatMap(Self.track2Expiry) { expiry = e; expiryTag = data[[0x57]] != nil ? [0x57] : [0x9F, 0x6B] }
        if expiry == nil, let e = data[[0x56]].flatMap(Self.track1Expiry) { expiry = e; expiryTag = [0x56] }
        var oda = try authenticate(app: app, data: data, staticData: staticData, gpoSDAD: gpoSDAD, pan: pan, terminalValues: values)
        if !signedMissing.isEmpty, oda.method != .none, oda.result == .verified || oda.result == .failed || oda.result == .notVerified {
            oda.result = .failed
            oda.reason = "the card did not give the signed record\(signedMissing.count == 1 ? "" : "s") \(signedMissing.joined(separator: ", ")) that \(oda.method.rawValue) covers"
        }
        // A tag given twice with different values: the signature covers one of them at most, and
        // the output could show the other. No verdict stands beside it (issue 48).
        if !conflicts.isEmpty, oda.result == .verified || oda.result == .notVerified {
            oda.result = .failed
            oda.reason = "the card gives different values for \(conflicts.joined(separator: "; ")): what it shows is not only what it signed"
        }
        let panProven = oda.result == .verified && (oda.method == .dda || oda.method == .fdda
                                                   || panSources.contains { $0.pan != nil && $0.pan == pan && sightings.signedTags.contains($0.tag) })
        func int(_ v: [UInt8]?) -> Int? { v.map { $0.reduce(0) { $0 << 8 | Int($1) } } }
        return PaymentCardRead(application: app, data: data, pan: pan, expiry: expiry, atc: int(getData[[0x9F, 0x36]] ?? data[[0x9F, 0x36]]),
                               lastOnlineATC: int(getData[[0x9F, 0x13]]), pinTriesLeft: int(getData[[0x9F, 0x17]]), log: log, oda: oda, records: records,
                               unreadableRecords: unreadable, notes: notes, panProven: panProven, conflicts: conflicts, terminalValues: values,
                               signedTags: sightings.signedTags, expiryTag: expiryTag)
    }

    func decode(_ bytes: [UInt8], what: String) throws -> [TLV] {
        do { return try BERTLV.decode(bytes) } catch { throw PaymentCardError(.malformed, "\(what) does not parse: \(error)") }
    }

    /// Every data object of an answer (`EMVTLV`), or the answer is malformed.
    func objects(_ bytes: [UInt8], what: String) throws -> [EMVDataObject] {
        do throws(EMVFormatError) { return try EMVTLV.objects(in: bytes) } catch { throw PaymentCardError(.malformed, "\(what) does not parse: \(error.message)") }
    }

    /// The log named by the FCI (9F4D, or Visa's DF60: SFI and count), decoded with 9F4F.
    func readLog(data: [[UInt8]: [UInt8]]) throws -> [PaymentLogEntry] {
        guard let entry = data[[0x9F, 0x4D]] ?? data[[0xDF, 0x60]], entry.count == 2, (1...30).contains(Int(entry[0])),
              let formatBytes = data[[0x9F, 0x4F]] else { return [] }
        let format: DataObjectList
        do throws(EMVFormatError) { format = try DataObjectList(parsing: formatBytes) } catch { throw PaymentCardError(.malformed, "the log format (9F4F): \(error.message)") }
        var out: [PaymentLogEntry] = []
        for record in 1...max(1, Int(entry[1])) {
            let r = try send(CommandAPDU(cla: 0x00, ins: 0xB2, p1: UInt8(record), p2: entry[0] << 3 | 0x04, ne: 256))
            guard r.statusWord == .success else { break }
            guard let fields = try? format.split(r.data) else { break }
            var map: [[UInt8]: [UInt8]] = [:]
            for f in fields { map[f.tag] = f.value }
            func bcd(_ v: [UInt8]?) -> String? { v.map { $0.map { String($0 >> 4, radix: 16) + String($0 & 0x0F, radix: 16) }.joined() } }
            let date = map[[0x9A]].flatMap { d -> String? in
                d.count == 3 ? "\(EMVMonth.bcd(d[0]).map { EMVMonth.year(yy: $0) } ?? 0)-\(bcd([d[1]])!)-\(bcd([d[2]])!)" : nil
            }
            let amount = bcd(map[[0x9F, 0x02]]).flatMap { Int($0) }
            out.append(PaymentLogEntry(amount: amount, currency: bcd(map[[0x5F, 0x2A]]), date: date, type: map[[0x9C]]?.first,
                                       country: bcd(map[[0x9F, 0x1A]]), atc: map[[0x9F, 0x36]].map { $0.reduce(0) { $0 << 8 | Int($1) } }, fields: map))
        }
        return out
    }

    static func track2PAN(_ t2: [UInt8]) -> String {
        let digits = t2.flatMap { [Int($0 >> 4), Int($0 & 0x0F)] }
        return digits.prefix { $0 != 0x0D }.map(String.init).joined()
    }

    /// Track 1 (56, ASCII `B<PAN>^<name>^<YYMM>…`): the PAN.
    static func track1PAN(_ t1: [UInt8]) -> String? {
        let text = String(decoding: t1, as: UTF8.self)
        guard text.first == "B", let caret = text.firstIndex(of: "^") else { return nil }
        let pan = String(text[text.index(after: text.startIndex)..<caret])
        return pan.allSatisfy(\.isNumber) && !pan.isEmpty ? pan : nil
    }

    /// Track 1's expiry, the 4 digits after the second `^`.
    static func track1Expiry(_ t1: [UInt8]) -> EMVMonth? {
        let parts = String(decoding: t1, as: UTF8.self).split(separator: "^", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[2].count >= 4, let yy = Int(parts[2].prefix(2)), let mm = Int(parts[2].dropFirst(2).prefix(2)), (1...12).contains(mm) else { return nil }
        return EMVMonth(year: EMVMonth.year(yy: yy), month: mm)
    }

    static func track2Expiry(_ t2: [UInt8]) -> EMVMonth? {
        let digits = t2.flatMap { [Int($0 >> 4), Int($0 & 0x0F)] }
        guard let sep = digits.firstIndex(of: 0x0D), digits.count >= sep + 5 else { return nil }
        let y = digits[sep + 1] * 10 + digits[sep + 2], m = digits[sep + 3] * 10 + digits[sep + 4]
        return (1...12).contains(m) ? EMVMonth(year: EMVMonth.year(yy: y), month: m) : nil
    }
}

/// How a PAN is shown unless asked: its first 6 and last 4 digits.
public enum EMVMasking {
    /// `476173******0119`.
    public static func masked(_ pan: String) -> String {
        guard pan.count > 10 else { return String(repeating: "*", count: pan.count) }
        return String(pan.prefix(6)) + String(repeating: "*", count: pan.count - 10) + String(pan.suffix(4))
    }
}
