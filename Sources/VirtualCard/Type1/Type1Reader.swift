// PC/SC readers with a Type 1 tag on them: the ACS, SCM/Identiv and READ/UPDATE BINARY forms,
// each as its vendor documents it, and the ways real readers of a form differ.
import ISO7816

/// A contactless reader holding a Type 1 tag, as pcscd sees it through vpcd.
///
/// - `.acs`: ACR122U API 2.04 §7.4. ATR card name `F0 04`; `FF 00 00 00 Lc D4 40 01 cmd ADD
///   DAT` (InDataExchange) answered `D5 41 00 data`, the address stripped, `D5 41 01` when the
///   tag is silent; `D4 02` (GetFirmwareVersion) as a PN532 answers it. The PN532 sends RID,
///   RALL, READ, WRITE-E, WRITE-NE, and RSEG of segment 0; READ8 and the 8-byte writes time out
///   (nfcpy `clf/pn532.py`).
/// - `.scm`: SCL3711 / uTrust reference manuals §6.4.1: ATR `3B 82 80 01 02 44 45`; `FF 50`
///   RID … `FF 60` WRITE-NE8, the address in P2, answered with the data alone.
/// - `.binary`: Microsoft's NFC class extension (`StorageClassJewel.cpp`): Part 3 ATR with card
///   name `00 30`; READ BINARY with Le choosing the command, UPDATE BINARY Lc 01 / 08; the tag's
///   answer passed on as it is (with its address), or the data alone (`Model.dataOnly`).
public final class Type1Reader: EmulatedCard, @unchecked Sendable {
    public enum Form: String, Sendable, CaseIterable {
        case acs, scm, binary = "read-binary"
    }

    /// How one reader of a form behaves where readers differ.
    public struct Model: Sendable, Hashable, CustomStringConvertible {
        public var form: Form
        /// The status word for a pseudo-APDU the reader does not have.
        public var unsupported: [UInt8] = [0x6A, 0x81]
        /// ACS: a direct transmit with a trailing Le refused with `67 00`.
        public var acsRefusesLe = false
        /// READ BINARY form: answers carry the data alone (no address byte, no HR on RALL's data).
        public var dataOnly = false
        /// SCM form: the writes (`FF 56`, `FF 58`, `FF 5E`, `FF 60`) go without an Le, as the
        /// SCL3711 reference manual §6.4.1 gives them, and one with an Le is refused with `67 00`
        /// before anything reaches the tag; `false`: a reader that wants the Le and refuses the
        /// manual's form the same way.
        public var scmWritesWithoutLe = true

        public init(_ form: Form) { self.form = form }

        public var description: String {
            var parts = [form.rawValue, "unsupported \(unsupported.hexString)"]
            if form == .acs { parts.append(acsRefusesLe ? "Le refused" : "Le accepted") }
            if form == .binary { parts.append(dataOnly ? "data only" : "the tag's answer as it is") }
            if form == .scm { parts.append(scmWritesWithoutLe ? "writes without Le" : "writes with Le") }
            return parts.joined(separator: ", ")
        }

        /// Readers along every axis: two per form, the axes crossed.
        public static func generated() -> [Model] {
            let unsupported: [[UInt8]] = [[0x6A, 0x81], [0x6E, 0x00], [0x6D, 0x00], [0x68, 0x00]]
            var out: [Model] = []
            for (f, form) in Form.allCases.enumerated() {
                for i in 0..<2 {
                    var m = Model(form)
                    m.unsupported = unsupported[(f + i) % unsupported.count]
                    m.acsRefusesLe = form == .acs && i == 1
                    m.dataOnly = form == .binary && i == 1
                    m.scmWritesWithoutLe = !(form == .scm && i == 1)
                    out.append(m)
                }
            }
            return out
        }
    }

    public let model: Model
    public let tag: Type1TagModel
    private let exchangeCount = Locked(0)

    public init(_ form: Form, tag: Type1TagModel) {
        self.model = Model(form)
        self.tag = tag
    }

    public init(model: Model, tag: Type1TagModel) {
        self.model = model
        self.tag = tag
    }

    public var form: Form { model.form }
    /// Pseudo-APDUs received.
    public var exchanges: Int { exchangeCount.current }

    public var atr: [UInt8] {
        switch form {
        case .acs: return [0x3B, 0x8F, 0x80, 0x01, 0x80, 0x4F, 0x0C, 0xA0, 0x00, 0x00, 0x03, 0x06, 0x03, 0xF0, 0x04, 0x00, 0x00, 0x00, 0x00, 0x9F]
        case .scm: return [0x3B, 0x82, 0x80, 0x01, 0x02, 0x44, 0x45]
        case .binary:
            let body: [UInt8] = [0x8F, 0x80, 0x01, 0x80, 0x4F, 0x0C, 0xA0, 0x00, 0x00, 0x03, 0x06, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x00]
            return [0x3B] + body + [body.reduce(0, ^)]
        }
    }

    public func reset() {}

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        exchangeCount.withLock { $0 += 1 }
        guard apdu.count >= 4, apdu[0] == 0xFF else { return [0x6E, 0x00] }
        if apdu[1] == 0xCA, apdu[2] == 0 { return tag.uid + [0x90, 0x00] }
        switch (form, apdu[1]) {
        case (.acs, 0x00): return acs(apdu)
        case (.scm, 0x50...0x60) where apdu[1] % 2 == 0: return scm(apdu)
        case (.binary, 0xB0), (.binary, 0xD6): return binary(apdu)
        default: return model.unsupported
        }
    }

    // MARK: ACS (PN532 InDataExchange)

    private func acs(_ apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 7, apdu[2] == 0, apdu[3] == 0 else { return model.unsupported }
        let lc = Int(apdu[4])
        guard apdu.count >= 5 + lc, lc >= 2, apdu[5] == 0xD4 else { return [0x67, 0x00] }
        if model.acsRefusesLe, apdu.count > 5 + lc { return [0x67, 0x00] }
        let command = Array(apdu[5..<(5 + lc)])
        switch command[1] {
        case 0x02: return [0xD5, 0x03, 0x32, 0x01, 0x06, 0x07, 0x90, 0x00]
        case 0x40 where command.count >= 4 && command[2] == 0x01:
            let t1t = Array(command[3...])
            let code = t1t[0]
            let silent: [UInt8] = [0xD5, 0x41, 0x01, 0x90, 0x00]
            // The PN532 cannot send the 8-byte commands, nor RSEG past segment 0: they time out.
            if [0x02, 0x54, 0x1B].contains(code) || (code == 0x10 && t1t.count > 1 && t1t[1] != 0) { return silent }
            let operands = Array(t1t.dropFirst())
            let address = operands.first ?? 0
            let data = operands.count > 1 ? [operands[1]] : [0]
            guard let answer = tag.execute(code: code, address: address, data: data) else { return silent }
            // The address is stripped from READ, WRITE and RSEG answers.
            let payload = [0x01, 0x53, 0x1A, 0x10].contains(code) ? Array(answer.dropFirst()) : answer
            return [0xD5, 0x41, 0x00] + payload + [0x90, 0x00]
        default:
            return [0xD5, command[1] &+ 1, 0x90, 0x00]
        }
    }

    // MARK: SCM / Identiv

    private func scm(_ apdu: [UInt8]) -> [UInt8] {
        let codes: [UInt8: UInt8] = [0x50: 0x78, 0x52: 0x00, 0x54: 0x01, 0x56: 0x53, 0x58: 0x1A, 0x5A: 0x10, 0x5C: 0x02, 0x5E: 0x54, 0x60: 0x1B]
        guard let code = codes[apdu[1]], apdu[2] == 0 else { return model.unsupported }
        let writes: Set<UInt8> = [0x53, 0x1A, 0x54, 0x1B]
        var data: [UInt8] = [0]
        if writes.contains(code) {
            guard apdu.count >= 5 else { return [0x67, 0x00] }
            let lc = Int(apdu[4])
            guard lc == ([0x54, 0x1B].contains(code) ? 8 : 1), apdu.count == 5 + lc || apdu.count == 6 + lc else { return [0x67, 0x00] }
            guard (apdu.count == 5 + lc) == model.scmWritesWithoutLe else { return [0x67, 0x00] }
            data = Array(apdu[5..<(5 + lc)])
        }
        guard let answer = tag.execute(code: code, address: apdu[3], data: data) else { return [0x64, 0x01] }
        return (code == 0x78 || code == 0x00 ? answer : Array(answer.dropFirst())) + [0x90, 0x00]
    }

    // MARK: READ / UPDATE BINARY (Microsoft's mapping)

    private func binary(_ apdu: [UInt8]) -> [UInt8] {
        let p1 = apdu[2], p2 = apdu[3]
        if apdu[1] == 0xB0 {
            guard apdu.count == 5 else { return [0x67, 0x00] }
            let code: UInt8, address: UInt8
            switch apdu[4] {
            case 0x00 where p1 == 0 && p2 == 0: (code, address) = (0x00, 0)
            case 0x06 where p1 == 0 && p2 == 0: (code, address) = (0x78, 0)
            case 0x01 where p1 <= 0x0F && p2 <= 7: (code, address) = (0x01, p1 << 3 | p2)
            case 0x08 where p2 == 0: (code, address) = (0x02, p1)
            case 0x80 where p1 == 0 && p2 <= 3: (code, address) = (0x10, p2 << 4)
            default: return [0x6B, 0x00]
            }
            guard let answer = tag.execute(code: code, address: address, data: [0]) else { return [0x69, 0x81] }
            guard model.dataOnly else { return answer + [0x90, 0x00] }
            return (code == 0x78 || code == 0x00 ? answer : Array(answer.dropFirst())) + [0x90, 0x00]
        }
        guard apdu.count >= 5 else { return [0x67, 0x00] }
        let lc = Int(apdu[4])
        guard apdu.count == 5 + lc else { return [0x67, 0x00] }
        let data = Array(apdu[5...])
        let result: [UInt8]?
        switch lc {
        case 1 where p1 <= 0x0F && p2 <= 7: result = tag.execute(code: 0x53, address: p1 << 3 | p2, data: data)
        case 8 where p2 == 0: result = tag.execute(code: 0x54, address: p1, data: data)
        default: return [0x6B, 0x00]
        }
        return result == nil ? [0x69, 0x81] : [0x90, 0x00]
    }
}
