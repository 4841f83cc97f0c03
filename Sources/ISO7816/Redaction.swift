// Which bytes of an exchange are a secret (a PIN, a key, a tag password, a cryptogram made with
// a key, a PAN), and their hex with those bytes shown as `**`. One table, `Redaction.rules`,
// serves traces, recordings (`--record`) and imported session logs alike (issue 48): a wrapper
// or a family added here reaches all three.

/// Which commands and answers carry a secret, and how to show them without it: for traces,
/// recordings and logs of what was sent.
public enum Redaction {
    /// VERIFY, CHANGE REFERENCE DATA, DISABLE and ENABLE VERIFICATION REQUIREMENT, RESET RETRY
    /// COUNTER (ISO 7816-4 §11.5.6-§11.5.10), with the even and odd INS forms: their data field
    /// is a PIN, a PUK or a new reference value.
    public static let secretInstructions: Set<UInt8> = [0x20, 0x21, 0x24, 0x26, 0x28, 0x2C]

    /// One secret found in an exchange: what it is and which bytes hold it.
    public struct Secret: Sendable, Hashable {
        /// `VERIFY: a PIN`, `the response: a PAN (5A)`.
        public var what: String
        /// Bytes of the command that hold it.
        public var command: Range<Int>?
        /// Bytes of the response (its data; the status word is never a secret) that hold it.
        public var response: Range<Int>?
    }

    /// One line of the table: a command shape and the part of it, or of its answer, that is secret.
    public struct Rule: Sendable {
        /// Where a rule looks.
        public enum Shape: Sendable {
            /// An ISO 7816 command: its class (`nil`: any), INS, and P1-P2 when they matter.
            case apdu(classes: Classes, ins: Set<UInt8>, p1p2: Set<UInt16>? = nil)
            /// A contactless card's own frame, by its first byte, in the wrappers it travels in.
            case frame(codes: Set<UInt8>, wrappers: Set<Wrapper>)
        }

        public enum Classes: Sendable {
            /// Any class byte.
            case any
            /// PC/SC Part 3's reader class, `FF`.
            case reader
            /// Not `FF` (a reader command) and not `9x` (a DESFire or Plus frame in ISO wrapping).
            case interindustry
            /// Not `FF`.
            case card
        }

        /// How a card's frame reaches it through PC/SC.
        public enum Wrapper: Sendable, Hashable {
            /// ISO 7816-4 wrapping of a native command (`90 CODE 00 00 Lc data 00`: DESFire, Plus).
            case iso
            /// Inside a reader's pseudo-APDU: the ACR122U's direct transmit (`FF 00 00 00 Lc D4 42
            /// frame`) or InDataExchange (`… D4 40 Tg frame`), or a PC/SC Part 3 transparent
            /// exchange (`FF C2 00 01 Lc … 95 L frame`).
            case reader
            /// The frame as the whole command, for readers that pass native frames (Plus).
            case bare
        }

        /// Which bytes of the command: of the APDU's data field, or of the frame after its code.
        public enum Part: Sendable {
            case nothing
            case all
            /// Bytes `lowerBound..<upperBound` of it (clamped to what is there).
            case bytes(Range<Int>)
        }

        /// Which bytes of the answer.
        public enum Answer: Sendable {
            case nothing
            /// The answer's data.
            case data
            /// The data of an answer that opens `7C L 80`: PACE's encrypted nonce.
            case paceNonce
        }

        public var what: String
        public var shape: Shape
        public var command: Part
        public var answer: Answer

        public init(_ what: String, _ shape: Shape, command: Part, answer: Answer = .nothing) {
            self.what = what
            self.shape = shape
            self.command = command
            self.answer = answer
        }
    }

    /// Every rule traces, recordings and imported logs redact by.
    public static let rules: [Rule] = [
        Rule("VERIFY: a PIN", .apdu(classes: .any, ins: [0x20, 0x21]), command: .all),
        Rule("CHANGE REFERENCE DATA: a PIN", .apdu(classes: .any, ins: [0x24, 0x25]), command: .all),
        Rule("DISABLE VERIFICATION REQUIREMENT: a PIN", .apdu(classes: .any, ins: [0x26, 0x27]), command: .all),
        Rule("ENABLE VERIFICATION REQUIREMENT: a PIN", .apdu(classes: .any, ins: [0x28, 0x29]), command: .all),
        Rule("RESET RETRY COUNTER: a PIN", .apdu(classes: .any, ins: [0x2C, 0x2D]), command: .all),
        // PC/SC Part 3 §3.2.2.1.4: a MIFARE Classic key for the reader's key slot.
        Rule("LOAD KEYS: a reader key", .apdu(classes: .reader, ins: [0x82]), command: .all),
        // BAC's EXTERNAL AUTHENTICATE (ICAO 9303-11 §4.3): under keys made from the MRZ, so the
        // cryptogram and its answer let anyone holding them try MRZs offline.
        Rule("EXTERNAL/MUTUAL AUTHENTICATE: a cryptogram made with a key (BAC's, from the MRZ)",
             .apdu(classes: .interindustry, ins: [0x82]), command: .all, answer: .data),
        Rule("GENERAL AUTHENTICATE: PACE's encrypted nonce (made with the MRZ or CAN)",
             .apdu(classes: .interindustry, ins: [0x86]), command: .nothing, answer: .paceNonce),
        // OpenPGP card 3.4 §7.2.8: PUT DATA odd INS to 3FFF (the extended header list) imports a
        // private key; 00D5 is the AES key for PSO:ENC/DEC, D1/D2 the secure messaging keys.
        Rule("OpenPGP key import (PUT DATA 3FFF): a private key", .apdu(classes: .card, ins: [0xDB], p1p2: [0x3FFF]), command: .all),
        Rule("OpenPGP PUT DATA: a symmetric key (D1, D2, D5)", .apdu(classes: .card, ins: [0xDA], p1p2: [0x00D1, 0x00D2, 0x00D5]), command: .all),
        // Yubico's PIV extensions: SET MANAGEMENT KEY (FF FF FF|FE) and IMPORT ASYMMETRIC KEY (FE).
        Rule("PIV SET MANAGEMENT KEY: a management key", .apdu(classes: .card, ins: [0xFF], p1p2: [0xFFFF, 0xFFFE]), command: .all),
        Rule("PIV IMPORT ASYMMETRIC KEY: a private key", .apdu(classes: .card, ins: [0xFE]), command: .all),
        // GlobalPlatform PUT KEY (Card Specification §11.8, issue 52): keys enciphered under the
        // DEK, and their check values. (EXTERNAL AUTHENTICATE, CLA 84, is the rule above.)
        Rule("GlobalPlatform PUT KEY: keys under the DEK", .apdu(classes: .card, ins: [0xD8]), command: .all),
        // NTAG21x / Ultralight EV1 PWD_AUTH: 1B and the four password bytes.
        Rule("PWD_AUTH: a tag password", .frame(codes: [0x1B], wrappers: [.reader]), command: .bytes(0..<4)),
        // MIFARE Classic AUTH (60 key A, 61 key B): block, then the six key bytes, then the UID.
        Rule("MIFARE Classic authentication: a sector key", .frame(codes: [0x60, 0x61], wrappers: [.reader]), command: .bytes(1..<7)),
        Rule("DESFire authentication: cryptograms made with a key", .frame(codes: [0x0A, 0x1A, 0xAA, 0x71, 0x77, 0xAF], wrappers: [.iso, .reader]),
             command: .all, answer: .data),
        // MIFARE Plus (AN10922, the EV1 data sheet §8.7): AuthenticateFirst 70 and NonFirst 76
        // answer RndB under the key; the second step 72 carries RndA and RndB', answered with TI
        // and RndA' under it. WritePerso A8 writes a key in SL0; a plain write A3 may write one.
        Rule("MIFARE Plus authentication: cryptograms made with a key", .frame(codes: [0x70, 0x76], wrappers: [.iso, .reader, .bare]),
             command: .nothing, answer: .data),
        Rule("MIFARE Plus authentication: cryptograms made with a key", .frame(codes: [0x72], wrappers: [.iso, .reader, .bare]),
             command: .all, answer: .data),
        Rule("MIFARE Plus WritePerso: a key or block", .frame(codes: [0xA8], wrappers: [.iso, .reader, .bare]), command: .bytes(2..<18)),
        Rule("MIFARE Plus plain write: a block (it may be a key)", .frame(codes: [0xA3], wrappers: [.iso, .reader, .bare]), command: .bytes(2..<18)),
    ]

    /// The EMV data objects that hold a card's number or its holder, found in any answer:
    /// 5A (PAN), 57 and 9F6B (track 2), 56 and 9F1F (track 1), 9F20 (track 2 discretionary data),
    /// 5F20 and 9F0B (the cardholder's name, and its extension: EMV Book 3 Annex A).
    public static let cardholderTags: [[UInt8]: String] = [
        [0x5A]: "a PAN (5A)", [0x57]: "track 2 data (57)", [0x9F, 0x6B]: "track 2 data (9F6B)", [0x56]: "track 1 data (56)",
        [0x9F, 0x1F]: "track 1 discretionary data (9F1F)", [0x5F, 0x20]: "the cardholder's name (5F20)", [0x9F, 0x20]: "track 2 discretionary data (9F20)",
        [0x9F, 0x0B]: "the cardholder's name, extended (9F0B)",
        // The ICC public key certificate holds the whole PAN, which anyone recovers with the
        // scheme's public CA key and the issuer certificate beside it (9F48 is its remainder).
        [0x9F, 0x46]: "the ICC public key certificate, which holds the PAN (9F46)", [0x9F, 0x48]: "the ICC public key remainder (9F48)",
        [0x5F, 0x53]: "an IBAN (5F53)", [0x9F, 0x24]: "the payment account reference (9F24)",
    ]

    // MARK: - Finding

    /// Every secret the table finds in an exchange; `response` may be empty (a command alone).
    public static func secrets(command: [UInt8], response: [UInt8] = []) -> [Secret] {
        var out: [Secret] = []
        func add(_ what: String, _ c: Range<Int>?, _ r: Range<Int>?) {
            let c = c.flatMap { $0.isEmpty ? nil : $0 }, r = r.flatMap { $0.isEmpty ? nil : $0 }
            guard c != nil || r != nil else { return }
            let secret = Secret(what: what, command: c, response: r)
            if !out.contains(secret) { out.append(secret) }
        }
        let answerData = response.count > 2 ? 0..<(response.count - 2) : nil
        if !command.isEmpty {
            let apdu = dataField(command)
            let frames = Self.frames(command, data: apdu, response: response)
            for rule in rules {
                switch rule.shape {
                case let .apdu(classes, ins, p1p2):
                    // A native frame may be shorter than an APDU header (Plus's `76 BNr BNr`).
                    guard command.count >= 4, classes.admits(command[0]), ins.contains(command[1]),
                          p1p2.map({ $0.contains(UInt16(command[2]) << 8 | UInt16(command[3])) }) ?? true else { continue }
                    let c = apdu.flatMap { rule.command.range(in: $0) }
                    var r: Range<Int>?
                    switch rule.answer {
                    case .nothing: r = nil
                    case .data: r = answerData
                    case .paceNonce: r = response.count > 4 && response[0] == 0x7C && response[2] == 0x80 ? answerData : nil
                    }
                    add(rule.what, c, r)
                case let .frame(codes, wrappers):
                    for frame in frames where wrappers.contains(frame.wrapper) && codes.contains(command[frame.code]) {
                        let body = (frame.code + 1)..<frame.end
                        add(rule.what, rule.command.range(in: body), rule.answer == .nothing ? nil : frame.answer)
                    }
                }
            }
        }
        if let answerData {
            for (what, range) in cardholderData(response, in: answerData, command: command) {
                add("the response: \(what)", nil, range)
            }
        }
        return out
    }

    /// Whether the command carries a secret by the table (a PIN, a key, a tag password, a cryptogram).
    public static func isSecret(_ command: [UInt8]) -> Bool {
        // `apdu script` and `send` ask for every command they print: the quick check first.
        mayHoldSecret(command) && secrets(command: command).contains { $0.command != nil }
    }

    /// The data field of a short or extended command; a log may hold one whose Lc lies, so a
    /// field that runs past the end is taken as everything after the header.
    static func dataField(_ command: [UInt8]) -> Range<Int>? {
        guard command.count > 5 else { return nil }
        let lc = Int(command[4])
        if lc != 0 {
            // Short: Lc, data, maybe Le.
            return 5..<min(command.count, 5 + lc)
        }
        guard command.count > 7 else { return nil }
        let extended = Int(command[5]) << 8 | Int(command[6])
        guard extended > 0 else { return nil }
        return 7..<min(command.count, 7 + extended)
    }

    /// A card frame inside a command: where its code byte is, where it ends, and where its
    /// answer's data is.
    struct Frame {
        var wrapper: Rule.Wrapper
        var code: Int
        var end: Int
        var answer: Range<Int>?
    }

    static func frames(_ command: [UInt8], data: Range<Int>?, response: [UInt8]) -> [Frame] {
        var out: [Frame] = []
        let answerBeforeSW = response.count > 2 ? 0..<(response.count - 2) : nil
        if command.count >= 4, command[0] == 0x90 {
            out.append(Frame(wrapper: .iso, code: 1, end: data?.upperBound ?? 2, answer: answerBeforeSW))
        }
        if command.count >= 4, command[0] == 0xFF, let data {
            // The PN53x's answer: D5 41|43, a status byte, the card's answer, then the reader's SW.
            let pn53xAnswer = response.count > 5 && response[0] == 0xD5 ? 3..<(response.count - 2) : answerBeforeSW
            if command[1] == 0x00, data.count > 2, command[data.lowerBound] == 0xD4, command[data.lowerBound + 1] == 0x42 {
                out.append(Frame(wrapper: .reader, code: data.lowerBound + 2, end: data.upperBound, answer: pn53xAnswer))
            } else if command[1] == 0x00, data.count > 3, command[data.lowerBound] == 0xD4, command[data.lowerBound + 1] == 0x40 {
                out.append(Frame(wrapper: .reader, code: data.lowerBound + 3, end: data.upperBound, answer: pn53xAnswer))
            } else if command[1] == 0xC2, let frame = dataObject(0x95, in: command, data), !frame.isEmpty {
                let answer = answerBeforeSW.flatMap { dataObject(0x97, in: response, $0) } ?? answerBeforeSW
                out.append(Frame(wrapper: .reader, code: frame.lowerBound, end: frame.upperBound, answer: answer))
            }
        }
        // A bare frame answers with its status byte first; it has no status word.
        out.append(Frame(wrapper: .bare, code: 0, end: command.count, answer: response.count > 1 ? 1..<response.count : nil))
        return out
    }

    /// The value of the first data object `tag` among the simple TLVs of `range` (PC/SC Part 3's
    /// transparent exchange: one-byte tags, lengths as BER).
    static func dataObject(_ tag: UInt8, in bytes: [UInt8], _ range: Range<Int>) -> Range<Int>? {
        var i = range.lowerBound
        while i + 1 < range.upperBound {
            var length = Int(bytes[i + 1]), start = i + 2
            if length == 0x81, start < range.upperBound {
                length = Int(bytes[start]); start += 1
            } else if length == 0x82, start + 1 < range.upperBound {
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1]); start += 2
            } else if length >= 0x80 {
                return nil
            }
            let end = min(start + length, range.upperBound)
            if bytes[i] == tag { return start..<end }
            i = start + length
        }
        return nil
    }

    /// The values of ``cardholderTags`` in a BER-TLV answer, constructed objects walked. An
    /// answer to an EMV command (READ RECORD, GET PROCESSING OPTIONS, GET DATA) or one that opens
    /// with an EMV template whose lengths do not hold up is also searched byte by byte: a wrong
    /// template length must not hide the PAN inside it (issue 48).
    static func cardholderData(_ bytes: [UInt8], in range: Range<Int>, command: [UInt8]) -> [(String, Range<Int>)] {
        var found: [(String, Range<Int>)] = []
        var whole = true
        func walk(_ range: Range<Int>, depth: Int) {
            var i = range.lowerBound
            // Nesting past eight levels is not walked: the answer is then searched byte by byte.
            guard depth < 8 else { whole = false; return }
            while i < range.upperBound {
                if bytes[i] == 0x00 || bytes[i] == 0xFF { i += 1; continue }
                var tagEnd = i + 1
                if bytes[i] & 0x1F == 0x1F { while tagEnd < range.upperBound, bytes[tagEnd] & 0x80 != 0 { tagEnd += 1 }; tagEnd += 1 }
                guard tagEnd < range.upperBound, let (length, valueStart) = berLength(bytes, at: tagEnd, limit: range.upperBound),
                      valueStart + length <= range.upperBound else {
                    whole = false
                    return
                }
                let tag = Array(bytes[i..<tagEnd])
                if let name = cardholderTags[tag] {
                    found.append((name, valueStart..<(valueStart + length)))
                } else if bytes[i] & 0x20 != 0 {
                    walk(valueStart..<(valueStart + length), depth: depth + 1)
                }
                i = valueStart + length
            }
        }
        walk(range, depth: 0)
        let emvCommand = command.count >= 2 && [0xB2, 0xA8, 0xCA, 0xCB].contains(command[1]) && command[0] != 0xFF
        let emvTemplate = [0x70, 0x77, 0x6F, 0x80, 0x5A, 0x57, 0x56].contains(bytes[range.lowerBound])
        guard !whole, emvCommand || emvTemplate else { return found }
        var i = range.lowerBound
        while i < range.upperBound {
            let one = [bytes[i]], two = i + 1 < range.upperBound ? [bytes[i], bytes[i + 1]] : []
            let tag = cardholderTags[two] != nil ? two : cardholderTags[one] != nil ? one : nil
            guard let tag, let name = cardholderTags[tag], let (length, start) = berLength(bytes, at: i + tag.count, limit: range.upperBound),
                  length > 0, start < range.upperBound else {
                i += 1
                continue
            }
            let value = start..<min(start + length, range.upperBound)
            if !found.contains(where: { $0.1.overlaps(value) }) { found.append((name, value)) }
            i = value.upperBound
        }
        return found
    }

    /// A BER length at `at`: the length and where the value starts; nil when it is not one
    /// (more than three length bytes) or runs past `limit`.
    static func berLength(_ bytes: [UInt8], at: Int, limit: Int) -> (Int, Int)? {
        guard at < limit else { return nil }
        let first = Int(bytes[at])
        guard first & 0x80 != 0 else { return (first, at + 1) }
        let count = first & 0x7F
        guard (1...3).contains(count), at + 1 + count <= limit else { return nil }
        return (bytes[(at + 1)..<(at + 1 + count)].reduce(0) { $0 << 8 | Int($1) }, at + 1 + count)
    }

    // MARK: - Showing

    /// The INS bytes of the table's APDU rules and the codes of its bare frames: a command that
    /// matches neither, and is no ISO-wrapped or reader frame, holds no secret by the table.
    /// Bit sets of the 256 byte values, not `Set`s: asked for every command a script prints,
    /// a lookup is a shift and a mask instead of a hash (issue 50).
    static let (apduInstructions, bareCodes): (ByteSet, ByteSet) = {
        var ins = ByteSet(), bare = ByteSet()
        for rule in rules {
            switch rule.shape {
            case let .apdu(_, set, _): for b in set { ins.insert(b) }
            case let .frame(codes, wrappers): if wrappers.contains(.bare) { for b in codes { bare.insert(b) } }
            }
        }
        return (ins, bare)
    }()

    /// A set of byte values as four 64-bit words.
    struct ByteSet {
        private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        mutating func insert(_ b: UInt8) {
            let bit = UInt64(1) << (b & 63)
            switch b >> 6 {
            case 0: words.0 |= bit
            case 1: words.1 |= bit
            case 2: words.2 |= bit
            default: words.3 |= bit
            }
        }

        @inline(__always)
        func contains(_ b: UInt8) -> Bool {
            let word: UInt64
            switch b >> 6 {
            case 0: word = words.0
            case 1: word = words.1
            case 2: word = words.2
            default: word = words.3
            }
            return word >> (b & 63) & 1 != 0
        }
    }

    /// Whether the table could find a secret in the command alone: `apdu send` and `script` ask
    /// this for every command they print, so most are waved through after two bit tests.
    static func mayHoldSecret(_ command: [UInt8]) -> Bool {
        guard let first = command.first else { return false }
        return first == 0x90 || first == 0xFF || bareCodes.contains(first) || (command.count >= 4 && apduInstructions.contains(command[1]))
    }

    /// Hex of a command, its secret bytes by the table replaced by `**` per byte (so the length
    /// still shows).
    public static func hex(_ command: [UInt8], showSecrets: Bool = false, separator: String = " ") -> String {
        guard !showSecrets, mayHoldSecret(command) else { return Hex.encode(command, separator: separator) }
        let hidden = secrets(command: command).compactMap(\.command)
        return masked(command, hidden, separator: separator)
    }

    /// Hex of an exchange's response: its data shown as `**` per byte when the sender marked it
    /// secret (`Exchange.secretResponse`) or the table finds a secret in it, the status word
    /// always as it is.
    public static func responseHex(_ exchange: Exchange, showSecrets: Bool = false, separator: String = " ") -> String {
        let r = exchange.response
        guard !showSecrets, r.count > 2 else { return Hex.encode(r, separator: separator) }
        if exchange.secretResponse {
            let hidden = Array(repeating: "**", count: r.count - 2).joined(separator: separator)
            return hidden + separator + Hex.encode(r.suffix(2), separator: separator)
        }
        let hidden = secrets(command: exchange.command, response: r).compactMap(\.response)
        return masked(r, hidden, separator: separator)
    }

    /// Hex of an exchange's command: its marked secret bytes (`Exchange.secretRange`) and the
    /// secrets the table finds shown as `**`.
    public static func hex(_ exchange: Exchange, showSecrets: Bool = false, separator: String = " ") -> String {
        let c = exchange.command
        guard !showSecrets else { return Hex.encode(c, separator: separator) }
        var hidden = secrets(command: c, response: exchange.response).compactMap(\.command)
        if let range = exchange.secretRange { hidden.append(range) }
        return masked(c, hidden, separator: separator)
    }

    /// `bytes` as hex with every byte in `hidden` shown as `**`.
    static func masked(_ bytes: [UInt8], _ hidden: [Range<Int>], separator: String) -> String {
        guard !hidden.isEmpty else { return Hex.encode(bytes, separator: separator) }
        var secret = [Bool](repeating: false, count: bytes.count)
        for range in hidden { for i in range.clamped(to: 0..<bytes.count) { secret[i] = true } }
        return bytes.indices.map { secret[$0] ? "**" : Hex.encode([bytes[$0]]) }.joined(separator: separator)
    }
}

extension Redaction.Rule.Classes {
    func admits(_ cla: UInt8) -> Bool {
        switch self {
        case .any: true
        case .reader: cla == 0xFF
        case .interindustry: cla != 0xFF && cla & 0xF0 != 0x90
        case .card: cla != 0xFF
        }
    }
}

extension Redaction.Rule.Part {
    /// The bytes of `field` this part names, clamped to it; nil for none.
    func range(in field: Range<Int>) -> Range<Int>? {
        switch self {
        case .nothing: return nil
        case .all: return field.isEmpty ? nil : field
        case let .bytes(part):
            let range = (field.lowerBound + part.lowerBound)..<(field.lowerBound + part.upperBound)
            let clamped = range.clamped(to: field)
            return clamped.isEmpty ? nil : clamped
        }
    }
}
