// The command APDU (ISO/IEC 7816-3 §12.1, 7816-4 §5.1): its four cases, short and extended
// encoding, and parsing.

/// A command APDU (ISO/IEC 7816-3 §12.1, 7816-4 §5.1): header, optional data, optional Ne.
///
/// `ne` is the number of response bytes wanted: `nil` when there is no Le field, 1…256 in
/// short form (256 encoded as `00`), 1…65536 in extended form (65536 encoded as `0000`).
public struct CommandAPDU: Hashable, Sendable {
    public var cla: UInt8
    public var ins: UInt8
    public var p1: UInt8
    public var p2: UInt8
    public var data: [UInt8]
    /// Expected response length Ne, or `nil` for no Le field.
    public var ne: Int?
    /// Encode in extended form even when short form would do.
    public var forceExtended: Bool

    /// The four cases of ISO/IEC 7816-3.
    public enum Case: String, Hashable, Sendable {
        /// No data, no Le.
        case case1 = "1"
        /// Le only.
        case case2 = "2"
        /// Data only.
        case case3 = "3"
        /// Data and Le.
        case case4 = "4"
    }

    /// Why a byte string is not a command APDU.
    public enum ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        case tooShort(length: Int)
        case lengthMismatch(length: Int, lc: Int, expected: [Int])
        case zeroExtendedLc
        case invalidNe(Int)
        case dataTooLong(Int)
        case hex(Hex.ParseError)

        public var description: String {
            switch self {
            case let .tooShort(n): return "an APDU needs at least 4 bytes (CLA INS P1 P2), got \(n)"
            case let .lengthMismatch(length, lc, expected):
                let e = expected.map(String.init).joined(separator: " or ")
                return "APDU of \(length) bytes does not match its Lc of \(lc) (expected \(e) bytes)"
            case .zeroExtendedLc: return "extended APDU with Lc of 0000 (not allowed)"
            case let .invalidNe(n): return "Ne \(n) is out of range (1…65536)"
            case let .dataTooLong(n): return "command data of \(n) bytes exceeds 65535"
            case let .hex(e): return e.description
            }
        }
    }

    public init(cla: UInt8, ins: UInt8, p1: UInt8, p2: UInt8, data: [UInt8] = [], ne: Int? = nil, forceExtended: Bool = false) {
        self.cla = cla; self.ins = ins; self.p1 = p1; self.p2 = p2
        self.data = data; self.ne = ne; self.forceExtended = forceExtended
    }

    /// Parses an encoded command APDU, short or extended.
    public init(bytes: [UInt8]) throws(ParseError) {
        try self.init(encoding: bytes)
    }

    /// The same over any contiguous bytes (a script line decoded in place, issue 50).
    package init<Bytes: RandomAccessCollection<UInt8>>(encoding bytes: Bytes) throws(ParseError) where Bytes.Index == Int {
        let shape = try Shape(encoding: bytes)
        let s = bytes.startIndex
        self.init(cla: bytes[s], ins: bytes[s + 1], p1: bytes[s + 2], p2: bytes[s + 3],
                  ne: shape.ne, forceExtended: shape.extended)
        if !shape.data.isEmpty { data = Array(bytes[(s + shape.data.lowerBound)..<(s + shape.data.upperBound)]) }
    }

    /// Where an encoding's fields lie (ISO/IEC 7816-3 §12.1.3), read without copying anything:
    /// the one reading of Lc and Le, which `init(encoding:)` builds on and which lets a caller
    /// holding the encoding (`apdu script`, issue 50) send it without making the command.
    package struct Shape: Hashable, Sendable {
        /// The data field's offsets in the encoding; empty for none.
        package var data: Range<Int> = 4..<4
        /// Ne, nil for no Le field.
        package var ne: Int?
        /// Whether the length fields are in extended form.
        package var extended = false

        package init<Bytes: RandomAccessCollection<UInt8>>(encoding bytes: Bytes) throws(ParseError) where Bytes.Index == Int {
            let n = bytes.count, s = bytes.startIndex
            guard n >= 4 else { throw .tooShort(length: n) }
            if n == 4 { return }
            let b5 = Int(bytes[s + 4])
            if n == 5 {
                ne = b5 == 0 ? 256 : b5
                return
            }
            if b5 != 0 {
                // Short Lc.
                if n == 5 + b5 {
                    data = 5..<n
                } else if n == 6 + b5 {
                    data = 5..<(n - 1)
                    let le = Int(bytes[s + n - 1])
                    ne = le == 0 ? 256 : le
                } else {
                    throw .lengthMismatch(length: n, lc: b5, expected: [5 + b5, 6 + b5])
                }
                return
            }
            // b5 == 0 with more bytes: extended form.
            extended = true
            guard n >= 7 else { throw .lengthMismatch(length: n, lc: 0, expected: [5, 7]) }
            let x = Int(bytes[s + 5]) << 8 | Int(bytes[s + 6])
            if n == 7 {
                ne = x == 0 ? 65536 : x
                return
            }
            guard x != 0 else { throw .zeroExtendedLc }
            if n == 7 + x {
                data = 7..<n
            } else if n == 9 + x {
                data = 7..<(n - 2)
                let le = Int(bytes[s + n - 2]) << 8 | Int(bytes[s + n - 1])
                ne = le == 0 ? 65536 : le
            } else {
                throw .lengthMismatch(length: n, lc: x, expected: [7 + x, 9 + x])
            }
        }
    }

    /// The bytes of hex text that encodes a command APDU, checked as `init(hex:)` checks them
    /// (the same errors), without making the command (`apdu send`'s APDUs, issue 50).
    package static func encoding(hex: String) throws(ParseError) -> [UInt8] {
        let bytes: [UInt8]
        do { bytes = try Hex.decode(hex) } catch { throw .hex(error) }
        _ = try Shape(encoding: bytes)
        return bytes
    }

    /// Parses hex text (see `Hex.decode`).
    public init(hex: some StringProtocol) throws(ParseError) {
        let bytes: [UInt8]
        do { bytes = try Hex.decode(hex) } catch { throw .hex(error) }
        try self.init(bytes: bytes)
    }

    /// The same for a `String` (`apdu send`'s arguments), without generic dispatch.
    public init(hex: String) throws(ParseError) {
        let bytes: [UInt8]
        do { bytes = try Hex.decode(hex) } catch { throw .hex(error) }
        try self.init(bytes: bytes)
    }

    public var apduCase: Case {
        switch (data.isEmpty, ne == nil) {
        case (true, true): return .case1
        case (true, false): return .case2
        case (false, true): return .case3
        case (false, false): return .case4
        }
    }

    /// Whether the encoding uses extended length fields.
    public var isExtended: Bool {
        forceExtended || data.count > 255 || (ne ?? 0) > 256
    }

    /// The header as a 4-byte array.
    public var header: [UInt8] { [cla, ins, p1, p2] }

    /// Checks the field ranges that the memberwise initialiser cannot.
    public func validate() throws(ParseError) {
        if let ne, ne < 1 || ne > 65536 { throw .invalidNe(ne) }
        if data.count > 65535 { throw .dataTooLong(data.count) }
    }

    /// The encoded APDU. Call `validate()` first for values from outside; out-of-range Ne is clamped.
    public var bytes: [UInt8] {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: encodedCount) { buffer in
            Array(UnsafeBufferPointer(rebasing: buffer[0..<write(into: buffer)]))
        }
    }

    /// The length of `bytes`.
    public var encodedCount: Int {
        let extended = isExtended
        let lc = data.isEmpty ? 0 : (extended ? 3 : 1)
        let le = ne == nil ? 0 : (extended ? (data.isEmpty ? 3 : 2) : 1)
        return 4 + lc + data.count + le
    }

    /// Writes the encoding into `out`, which has room for `encodedCount` bytes, and returns its
    /// length: the one encoder.
    func write(into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        out[0] = cla; out[1] = ins; out[2] = p1; out[3] = p2
        var o = 4
        let ne = self.ne.map { min(max($0, 1), 65536) }
        let extended = isExtended
        if !data.isEmpty {
            if extended {
                out[4] = 0; out[5] = UInt8(data.count >> 8 & 0xFF); out[6] = UInt8(data.count & 0xFF)
                o = 7
            } else {
                out[4] = UInt8(data.count)
                o = 5
            }
            data.withUnsafeBufferPointer { d in
                _ = UnsafeMutableBufferPointer(rebasing: out[o..<(o + d.count)]).initialize(from: d)
            }
            o += data.count
        }
        if let ne {
            if extended {
                if data.isEmpty { out[o] = 0; o += 1 }
                out[o] = UInt8(ne >> 8 & 0xFF); out[o + 1] = UInt8(ne & 0xFF)
                o += 2
            } else {
                out[o] = UInt8(ne & 0xFF)
                o += 1
            }
        }
        return o
    }
}

extension CommandAPDU: CustomStringConvertible {
    /// `00 A4 04 00 Lc=07 A0000000031010 Le=256 (case 4, short)`-style summary.
    public var description: String {
        var parts = [Hex.encode(header, separator: " ")]
        if !data.isEmpty { parts.append("Lc=\(data.count) \(data.hexString)") }
        if let ne { parts.append("Ne=\(ne)") }
        parts.append("(case \(apduCase.rawValue)\(isExtended ? ", extended" : ""))")
        return parts.joined(separator: " ")
    }
}

extension CommandAPDU {
    /// PC/SC Part 3 GET DATA (FF CA 00 00): the reader answers with the contactless card's UID.
    public static let getUID = CommandAPDU(cla: 0xFF, ins: 0xCA, p1: 0, p2: 0, ne: 256)
}

extension CommandAPDU {
    /// SELECT by DF name (ISO 7816-4 §11.2.2: P1 04, first or only occurrence, FCI), Le 256.
    public static func select(aid: [UInt8]) -> CommandAPDU {
        CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x04, p2: 0x00, data: aid, ne: 256)
    }
}
