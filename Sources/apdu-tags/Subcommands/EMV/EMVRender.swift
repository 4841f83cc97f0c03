// What `apdu emv read` prints: the PAN masked to its first 6 and last 4 digits, the name and
// track data hidden, unless --show-pan.
import APDUCommandLine
import EMV
import ISO7816

struct EMVRender {
    let read: PaymentCardRead
    let showPAN: Bool

    var pan: String? { read.pan.map { showPAN ? $0 : EMVMasking.masked($0) } }
    var kernel: EMVKernel? { read.application.kernel }

    var json: [(String, JSON)] {
        let oda = read.oda
        var m: [(String, JSON)] = [
            ("aid", .hex(read.application.aid)), ("label", .optional(read.application.label)), ("preferredName", .optional(read.application.preferredName)),
            ("kernel", .optional(kernel?.rawValue)), ("pan", .optional(pan)), ("panMasked", .bool(!showPAN)), ("panProven", .bool(read.panProven)),
            ("expiry", .optional(read.expiry?.description)), ("atc", read.atc.map(JSON.int) ?? .null),
            ("lastOnlineAtc", read.lastOnlineATC.map(JSON.int) ?? .null), ("unreadableRecords", .array(read.unreadableRecords.map(JSON.string))), ("notes", .array(read.notes.map(JSON.string))), ("conflicts", .array(read.conflicts.map(JSON.string))), ("pinTriesLeft", read.pinTriesLeft.map(JSON.int) ?? .null),
            ("log", .array(read.log.map { e in
                .object([("amount", e.amount.map(JSON.int) ?? .null), ("currency", .optional(e.currency)), ("date", .optional(e.date)),
                         ("type", e.type.map { .hex([$0]) } ?? .null), ("country", .optional(e.country)), ("atc", e.atc.map(JSON.int) ?? .null)])
            })),
            ("oda", .object([("method", .string(oda.method.rawValue)), ("result", .string(oda.result.rawValue)),
                             ("offered", .array(oda.offered.map { .string($0.rawValue) })), ("reason", .optional(oda.reason)),
                             ("caIndex", oda.caIndex.map { .hex([$0]) } ?? .null), ("testKey", .bool(oda.caKeyIsTest)),
                             ("dataAuthenticationCode", oda.dataAuthenticationCode.map { .hex($0) } ?? .null),
                             ("iccDynamicNumber", oda.iccDynamicNumber.map { .hex($0) } ?? .null)])),
        ]
        // What the verdict vouches for, field by field: only values from records ODA covers,
        // and only when it verified (issue 48). The counters, the log and the label never are.
        m.append(("covered", .object(coverage.map { ($0.key, JSON.bool($0.covered)) })))
        if showPAN {
            m.append(("cardholderName", .optional(read.data[[0x5F, 0x20]].map(EMVText.printable))))
            m.append(("track2", read.data[[0x57]].map { .hex($0) } ?? .null))
        }
        m.append(("tags", .object(read.data.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { tag in
            let info = EMVTags.info(tag, kernel: kernel)
            let hidden = !showPAN && info?.privacy != nil
            return (tag.hexString, .object([("name", .string(EMVTags.name(tag, kernel: kernel))),
                                            ("value", hidden ? .string("(hidden: --show-pan)") : .hex(read.data[tag]!)),
                                            ("signed", .bool(read.signedTags.contains(tag)))]))
        })))
        return m
    }

    /// Each field shown, by its JSON name and text label, and whether the verdict vouches for it.
    var coverage: [(key: String, label: String, covered: Bool)] {
        var out: [(key: String, label: String, covered: Bool)] = [("pan", "PAN", read.panProven), ("expiry", "expiry", read.expiryProven)]
        if read.data[[0x5F, 0x20]] != nil { out.append(("cardholderName", "name", read.covered([0x5F, 0x20]))) }
        out += [("label", "label", false), ("atc", "ATC", false), ("lastOnlineAtc", "last online ATC", false), ("pinTriesLeft", "PIN tries", false), ("log", "log", false)]
        return out
    }

    var lines: [String] {
        var out: [String] = []
        let app = read.application
        let verified = read.oda.result == .verified
        let unsigned = "  (unsigned: the verdict does not cover it)"
        out.append("  application \(app.aid.hexString)  \(Terminal.safe(app.label ?? ""))" + (kernel.map { ", kernel \($0)" } ?? ""))
        out.append("  PAN         \(pan ?? "(none)")" + (showPAN ? "" : "  (masked; --show-pan shows it)")
                   + (verified && !read.panProven ? "  (not covered by the verified signature)" : ""))
        if showPAN, let name = read.data[[0x5F, 0x20]] {
            out.append("  name        \(Terminal.safe(EMVText.printable(name)))" + (verified && !read.covered([0x5F, 0x20]) ? unsigned : ""))
        }
        out.append("  expiry      \(read.expiry?.description ?? "(none)")" + (verified && read.expiry != nil && !read.expiryProven ? unsigned : ""))
        out.append("  ATC         \(read.atc.map(String.init) ?? "-"), last online \(read.lastOnlineATC.map(String.init) ?? "-"), PIN tries left \(read.pinTriesLeft.map(String.init) ?? "-")")
        let oda = read.oda
        let verdict: String
        switch oda.result {
        case .verified: verdict = "✓ \(oda.method.rawValue) verified" + (oda.caKeyIsTest ? " (under a TEST CA key)" : "")
        case .failed: verdict = "✗ \(oda.method.rawValue) FAILED: \(oda.reason ?? "")"
        case .noCAKey: verdict = "– \(oda.method.rawValue) offered, not checked: \(oda.reason ?? "")"
        case .unknownCAIndex: verdict = "✗ \(oda.method.rawValue) UNPROVEN: \(oda.reason ?? "")"
        case .notOffered: verdict = "– none offered"
        case .notVerified: verdict = "– \(oda.method.rawValue) offered, not verified: \(oda.reason ?? "")"
        }
        out.append("  offline data authentication: \(verdict)")
        if verified {
            let shown = coverage.filter { $0.key != "cardholderName" || showPAN }
            let yes = shown.filter(\.covered).map(\.label), no = shown.filter { !$0.covered }.map(\.label)
            out.append("  signed      \(yes.isEmpty ? "nothing shown" : yes.joined(separator: ", ")); not signed: \(no.joined(separator: ", "))")
        }
        for note in read.notes { out.append("  note: \(note)") }
        for conflict in read.conflicts { out.append("  conflict: \(Terminal.safe(conflict))") }
        if !read.unreadableRecords.isEmpty { out.append("  records the AFL names but the card did not give: \(read.unreadableRecords.joined(separator: ", "))") }
        if !read.log.isEmpty {
            out.append("  log (\(read.log.count) entries):")
            for e in read.log {
                out.append("    \(e.date ?? "?")  \(e.amount.map(String.init) ?? "?") (currency \(e.currency ?? "?"))  country \(e.country ?? "?")")
            }
        }
        return out
    }
}
