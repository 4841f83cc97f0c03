// Finding a card's payment applications (EMV Book 1 §12.3): PPSE, then PSE, then a list of
// known AIDs; SELECT only, so the card's counters do not move.
import ISO7816

/// One payment application as the card lists it.
public struct PaymentApplication: Sendable, Hashable {
    public enum Source: String, Sendable, Hashable {
        /// The contactless directory `2PAY.SYS.DDF01`.
        case ppse
        /// The contact directory `1PAY.SYS.DDF01` and its records.
        case pse
        /// SELECT of a known AID.
        case aidList = "aid-list"
    }
    public var aid: [UInt8]
    public var label: String?
    public var preferredName: String?
    /// Application Priority Indicator (87): 1 highest, nil none.
    public var priority: Int?
    /// Kernel Identifier (9F2A).
    public var kernelIdentifier: [UInt8]?
    public var source: Source
    /// The application answered SELECT with 62 83 (blocked): listed, never used.
    public var blocked = false

    /// The kernel from 9F2A, else from the RID.
    public var kernel: EMVKernel? {
        kernelIdentifier?.first.flatMap(EMVKernel.init(kernelIdentifier:)) ?? EMVKernel(rid: Array(aid.prefix(5)))
    }
}

/// Why the card could not be read as a payment card.
public struct PaymentCardError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// No payment application, or the card ended the search (6A81).
        case noApplication
        /// GET PROCESSING OPTIONS refused (6985: conditions of use not satisfied).
        case refused
        /// The card's data does not parse or contradicts itself.
        case malformed
    }
    public var kind: Kind
    public var message: String
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    public var description: String { message }
}

/// The AIDs tried when the card has no directory (EMV Book 1 §12.3.3), each a prefix the card
/// may extend (partial selection).
public enum KnownPaymentAIDs {
    public static let all: [(name: String, aid: [UInt8])] = [
        ("Visa", [0xA0, 0x00, 0x00, 0x00, 0x03, 0x10, 0x10]),
        ("Visa Electron", [0xA0, 0x00, 0x00, 0x00, 0x03, 0x20, 0x10]),
        ("V PAY", [0xA0, 0x00, 0x00, 0x00, 0x03, 0x20, 0x20]),
        ("Visa Plus", [0xA0, 0x00, 0x00, 0x00, 0x03, 0x80, 0x10]),
        ("Mastercard", [0xA0, 0x00, 0x00, 0x00, 0x04, 0x10, 0x10]),
        ("Maestro", [0xA0, 0x00, 0x00, 0x00, 0x04, 0x30, 0x60]),
        ("Mastercard Cirrus", [0xA0, 0x00, 0x00, 0x00, 0x04, 0x60, 0x00]),
        ("American Express", [0xA0, 0x00, 0x00, 0x00, 0x25, 0x01]),
        ("JCB", [0xA0, 0x00, 0x00, 0x00, 0x65, 0x10, 0x10]),
        ("Discover", [0xA0, 0x00, 0x00, 0x01, 0x52, 0x30, 0x10]),
        ("Diners Club / Discover", [0xA0, 0x00, 0x00, 0x01, 0x52, 0x40, 0x10]),
        ("UnionPay debit", [0xA0, 0x00, 0x00, 0x03, 0x33, 0x01, 0x01, 0x01]),
        ("UnionPay credit", [0xA0, 0x00, 0x00, 0x03, 0x33, 0x01, 0x01, 0x02]),
        ("Interac", [0xA0, 0x00, 0x00, 0x02, 0x77, 0x10, 0x10]),
        ("CB (Cartes Bancaires)", [0xA0, 0x00, 0x00, 0x00, 0x42, 0x10, 0x10]),
        ("girocard", [0xA0, 0x00, 0x00, 0x03, 0x59, 0x10, 0x10, 0x02, 0x80, 0x01]),
        ("RuPay", [0xA0, 0x00, 0x00, 0x05, 0x24, 0x10, 0x10]),
        ("Mir", [0xA0, 0x00, 0x00, 0x06, 0x58, 0x10, 0x10]),
        ("Dankort", [0xA0, 0x00, 0x00, 0x01, 0x21, 0x10, 0x10]),
        ("Bancomat", [0xA0, 0x00, 0x00, 0x01, 0x41, 0x00, 0x01]),
    ]
}

extension PaymentCardReader {
    static let ppseName = Array("2PAY.SYS.DDF01".utf8)
    static let pseName = Array("1PAY.SYS.DDF01".utf8)

    /// SELECT by name (P2 00 first, 02 next), with Le.
    func select(_ name: [UInt8], next: Bool = false) throws -> ResponseAPDU {
        selected()
        return try send(CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x04, p2: next ? 0x02 : 0x00, data: name, ne: 256))
    }

    /// The card's payment applications: PPSE, else PSE, else the known AIDs (Book 1 §12.3): 6A81
    /// ends the search, 6A82 tries the next source; an application answering 62 83 is listed as
    /// blocked; 62 85 with an FCI is accepted; a partial AID is followed with SELECT next.
    /// Sends no GET PROCESSING OPTIONS. `probe`: each application a directory lists is selected
    /// too, to learn whether it is blocked and what its FCI adds (its preferred name).
    public func applications(probe: Bool = true) throws -> [PaymentApplication] {
        var listed = try directoryApplications()
        guard probe else { return listed }
        for i in listed.indices where listed[i].source != .aidList {
            let r = try select(listed[i].aid)
            listed[i].blocked = r.statusWord == StatusWord(0x62, 0x83)
            let fci = application(fci: r.data, aid: listed[i].aid, source: listed[i].source)
            listed[i].preferredName = listed[i].preferredName ?? fci.preferredName
            listed[i].label = listed[i].label ?? fci.label
        }
        return listed
    }

    func directoryApplications() throws -> [PaymentApplication] {
        let ppse = try select(Self.ppseName)
        if ppse.statusWord == StatusWord(0x6A, 0x81) { throw PaymentCardError(.noApplication, "the card refused SELECT of the payment directory with 6A81 (function not supported): it ends the search (EMV Book 1 §12.3)") }
        if ppse.statusWord == .success || ppse.statusWord == StatusWord(0x62, 0x85) {
            let apps = try directoryEntries(fci: ppse.data, source: .ppse)
            if !apps.isEmpty { return sorted(apps) }
        }
        let pse = try select(Self.pseName)
        if pse.statusWord == StatusWord(0x6A, 0x81) { throw PaymentCardError(.noApplication, "the card answered SELECT of 1PAY.SYS.DDF01 with 6A81: it ends the search") }
        if pse.statusWord == .success, let sfi = try fciValue(pse.data, [0x88])?.first {
            var apps: [PaymentApplication] = []
            for record in 1...16 {
                let r = try send(CommandAPDU(cla: 0x00, ins: 0xB2, p1: UInt8(record), p2: sfi << 3 | 0x04, ne: 256))
                if r.statusWord == StatusWord(0x6A, 0x83) { break }
                guard r.statusWord == .success else { break }
                apps += try directoryEntries(fci: r.data, source: .pse)
            }
            if !apps.isEmpty { return sorted(apps) }
        }
        var found: [PaymentApplication] = []
        for (_, aid) in KnownPaymentAIDs.all {
            var next = false
            for _ in 0..<8 {
                let r = try select(aid, next: next)
                if r.statusWord == StatusWord(0x6A, 0x81) { throw PaymentCardError(.noApplication, "the card answered SELECT of \(aid.hexString) with 6A81: it ends the search") }
                let blocked = r.statusWord == StatusWord(0x62, 0x83)
                guard r.statusWord == .success || blocked || (r.statusWord == StatusWord(0x62, 0x85) && !r.data.isEmpty) else { break }
                let name = (try? fciValue(r.data, [0x84])) ?? nil
                var app = application(fci: r.data, aid: name ?? aid, source: .aidList)
                app.blocked = blocked
                if !found.contains(where: { $0.aid == app.aid }) { found.append(app) }
                // A partial AID: the card may hold more applications starting with it.
                guard let name, name.count > aid.count, name.starts(with: aid) else { break }
                next = true
            }
        }
        guard !found.isEmpty else { throw PaymentCardError(.noApplication, "no payment application: no PPSE, no PSE, and none of \(KnownPaymentAIDs.all.count) known AIDs answered SELECT") }
        return sorted(found)
    }

    /// Priority 1 first; applications without a priority after, in the card's order.
    func sorted(_ apps: [PaymentApplication]) -> [PaymentApplication] {
        apps.enumerated().sorted { a, b in
            let pa = a.element.priority ?? Int.max, pb = b.element.priority ?? Int.max
            return pa != pb ? pa < pb : a.offset < b.offset
        }.map(\.element)
    }

    /// The 61 entries of a directory (PPSE FCI's BF0C, or a PSE record's 70).
    func directoryEntries(fci: [UInt8], source: PaymentApplication.Source) throws -> [PaymentApplication] {
        let objects: [TLV]
        do { objects = try BERTLV.decode(fci) } catch { throw PaymentCardError(.malformed, "the directory does not parse: \(error)") }
        var out: [PaymentApplication] = []
        func walk(_ list: [TLV]) {
            for o in list {
                if o.tag == [0x61], let c = o.children, let aid = c.first(where: { $0.tag == [0x4F] })?.value, (5...16).contains(aid.count) {
                    out.append(application(entry: c, aid: aid, source: source))
                } else if let c = o.children { walk(c) }
            }
        }
        walk(objects)
        return out
    }

    func application(entry c: [TLV], aid: [UInt8], source: PaymentApplication.Source) -> PaymentApplication {
        application(aid: aid, source: source) { tag in c.first { $0.tag == tag }?.value }
    }

    /// An application from its data objects (`value` finds one by tag): label, preferred name,
    /// priority, kernel.
    func application(aid: [UInt8], source: PaymentApplication.Source, value: ([UInt8]) -> [UInt8]?) -> PaymentApplication {
        PaymentApplication(aid: aid, label: value([0x50]).map(EMVText.printable), preferredName: value([0x9F, 0x12]).map(EMVText.printable),
                           priority: value([0x87])?.first.map { Int($0 & 0x0F) }.flatMap { $0 == 0 ? nil : $0 },
                           kernelIdentifier: value([0x9F, 0x2A]), source: source)
    }

    func application(fci: [UInt8], aid: [UInt8], source: PaymentApplication.Source) -> PaymentApplication {
        let all = (try? BERTLV.decode(fci)).map(EMVRecordSet.flatten) ?? []
        return application(entry: all, aid: aid, source: source)
    }

    func fciValue(_ fci: [UInt8], _ tag: [UInt8]) throws -> [UInt8]? {
        guard let objects = try? BERTLV.decode(fci) else { throw PaymentCardError(.malformed, "the FCI \(fci.hexString) does not parse") }
        return EMVRecordSet.flatten(objects).first { $0.tag == tag }?.value
    }
}

/// Text from a card shown safely: printable ASCII, anything else as `.`.
public enum EMVText {
    public static func printable(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.map { (0x20...0x7E).contains($0) ? $0 : 0x2E }, as: UTF8.self).trimmingSpaces()
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        while s.first == " " { s = s.dropFirst() }
        return String(s)
    }
}

/// Helpers over decoded data objects.
enum EMVRecordSet {
    /// Every primitive object, depth first.
    static func flatten(_ objects: [TLV]) -> [TLV] {
        objects.flatMap { o in o.children.map { [o] + flatten($0) } ?? [o] }
    }
}
