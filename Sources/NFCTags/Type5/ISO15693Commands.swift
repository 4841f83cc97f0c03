// ISO/IEC 15693-3 requests over a tag-command channel (system information, block reads, writes,
// locks, security status, custom commands), with their flags and errors.
import ISO7816

/// ISO/IEC 15693-3 request flags (bits 1-8 of the first byte; with the inventory flag clear).
public struct ISO15693Flags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let twoSubcarriers = ISO15693Flags(rawValue: 0x01)
    public static let highDataRate = ISO15693Flags(rawValue: 0x02)
    public static let inventory = ISO15693Flags(rawValue: 0x04)
    public static let protocolExtension = ISO15693Flags(rawValue: 0x08)
    public static let select = ISO15693Flags(rawValue: 0x10)
    public static let address = ISO15693Flags(rawValue: 0x20)
    /// Write-alike commands: the tag answers after the reader's EOF (TI Tag-it needs it).
    public static let option = ISO15693Flags(rawValue: 0x40)
}

/// An ISO 15693 tag's error answer (response flag bit 1 set, then the error code).
public struct ISO15693Error: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: UInt8
    /// The command it answered.
    public var command: UInt8
    public init(code: UInt8, command: UInt8) {
        self.code = code
        self.command = command
    }

    /// ISO/IEC 15693-3 Table 7.
    public static func meaning(_ code: UInt8) -> String {
        switch code {
        case 0x01: return "command not supported"
        case 0x02: return "command not recognised"
        case 0x03: return "option not supported"
        case 0x0F: return "unknown error"
        case 0x10: return "block not available"
        case 0x11: return "block already locked"
        case 0x12: return "block locked, its content cannot change"
        case 0x13: return "block not successfully programmed"
        case 0x14: return "block not successfully locked"
        default: return code >= 0xA0 && code <= 0xDF ? "custom command error" : "error"
        }
    }

    public var description: String {
        "the tag answered command \(Hex.encode([command])) with error \(Hex.encode([code])) (\(Self.meaning(code)))"
    }
}

/// GET SYSTEM INFORMATION's answer (ISO/IEC 15693-3 §10.4.12), standard or extended.
public struct ISO15693SystemInfo: Sendable, Hashable {
    /// As sent on air: least significant byte first (E0 last).
    public var uid: [UInt8]
    public var dsfid: UInt8?
    public var afi: UInt8?
    public var blockCount: Int?
    public var blockSize: Int?
    public var icReference: UInt8?

    /// The UID as people write it: E0 first.
    public var displayUID: [UInt8] { uid.reversed() }
    /// The IC manufacturer code (ISO/IEC 7816-6): 04 NXP, 02 ST, 07 TI.
    public var manufacturer: UInt8 { uid.count == 8 ? uid[6] : 0 }

    /// Parses the answer after the response flags. `extended`: the Extended Get System Info
    /// layout (2-byte block count).
    public init(parsing body: [UInt8], extended: Bool) throws(TagCommandError) {
        func bad(_ why: String) -> TagCommandError { TagCommandError(.malformed, "GET SYSTEM INFO answered \(body.hexString): \(why)") }
        guard body.count >= 9 else { throw bad("too short") }
        let info = body[0]
        uid = Array(body[1..<9])
        var p = 9
        func take(_ n: Int) throws(TagCommandError) -> [UInt8] {
            guard p + n <= body.count else { throw bad("the info flags \(Hex.encode([info])) announce more than it holds") }
            defer { p += n }
            return Array(body[p..<(p + n)])
        }
        if info & 0x01 != 0 { dsfid = try take(1)[0] }
        if info & 0x02 != 0 { afi = try take(1)[0] }
        if info & 0x04 != 0 {
            if extended {
                let m = try take(3)
                blockCount = (Int(m[0]) | Int(m[1]) << 8) + 1
                blockSize = Int(m[2] & 0x1F) + 1
            } else {
                let m = try take(2)
                blockCount = Int(m[0]) + 1
                blockSize = Int(m[1] & 0x1F) + 1
            }
        }
        if info & 0x08 != 0 { icReference = try take(1)[0] }
    }

    public init(uid: [UInt8], dsfid: UInt8? = nil, afi: UInt8? = nil, blockCount: Int? = nil, blockSize: Int? = nil, icReference: UInt8? = nil) {
        self.uid = uid
        self.dsfid = dsfid
        self.afi = afi
        self.blockCount = blockCount
        self.blockSize = blockSize
        self.icReference = icReference
    }

    /// "NXP", "STMicroelectronics", "Texas Instruments", …
    public var manufacturerName: String {
        switch manufacturer {
        case 0x02: return "STMicroelectronics"
        case 0x04: return "NXP"
        case 0x05: return "Infineon"
        case 0x07: return "Texas Instruments"
        case 0x16: return "EM Microelectronic"
        default: return "manufacturer \(Hex.encode([manufacturer]))"
        }
    }
}

/// Core NFC's `NFCISO15693Tag` operations as ISO 15693-3 frames over a `TagCommandChannel`.
///
/// Requests are addressed (flags 22: high data rate, address, the UID LSB first) once the UID
/// is known, as Core NFC sends them; TI Tag-it chips get the option flag on write and lock
/// (they answer only after the reader's EOF). Block numbers past 255 go in the extended
/// commands (30-3C, 2-byte block numbers, LSB first).
public final class ISO15693Commands {
    public let channel: TagCommandChannel
    /// The UID on air (LSB first); nil until GET SYSTEM INFO or `address(_:)` sets it.
    public private(set) var uid: [UInt8]?
    /// Add the option flag to write-alike commands (TI Tag-it).
    public var optionFlagOnWrites = false

    public init(channel: TagCommandChannel) throws(TagCommandError) {
        self.channel = channel
        try channel.use(.iso15693)
    }

    /// Addresses every later request to the tag with this UID (LSB first, as on air).
    public func address(_ uid: [UInt8]) {
        self.uid = uid
        optionFlagOnWrites = uid.count == 8 && uid[6] == 0x07
    }

    /// Sends one request: flags (addressed when the UID is known), the command, the IC
    /// manufacturer code for custom commands, the UID and the parameters. Returns the answer
    /// after the response flags.
    /// - Throws: `ISO15693Error` for an error answer, `TagCommandError` when nothing or garbage came back.
    public func request(_ command: UInt8, parameters: [UInt8] = [], manufacturer: UInt8? = nil, flags extra: ISO15693Flags = []) throws -> [UInt8] {
        var flags: ISO15693Flags = [.highDataRate]
        flags.formUnion(extra)
        var frame: [UInt8] = []
        if let uid { flags.insert(.address); frame = uid }
        frame = [flags.rawValue, command] + (manufacturer.map { [$0] } ?? []) + frame + parameters
        let answer = try channel.transceive(frame)
        guard case let .data(bytes) = answer, !bytes.isEmpty else {
            throw TagCommandError(.readerRefused, "the tag did not answer command \(Hex.encode([command])) (\(answer))")
        }
        if bytes[0] & 0x01 != 0 {
            guard bytes.count >= 2 else { throw TagCommandError(.malformed, "the tag answered \(bytes.hexString): an error flag without a code") }
            throw ISO15693Error(code: bytes[1], command: command)
        }
        return Array(bytes.dropFirst())
    }

    /// A block number (or block count less one) on the wire: one byte, two (LSB first) with
    /// the extended commands. Outside that range it is an error, never a wrapped number.
    private func blockNumber(_ block: Int, extended: Bool, what: String = "block") throws(TagError) -> [UInt8] {
        guard (0...(extended ? 0xFFFF : 0xFF)).contains(block) else {
            throw TagError(.beyondReach, "\(what) \(block) is outside 0-\(extended ? 65535 : 255), what \(extended ? "the extended commands" : "ISO 15693 commands (without the extended form)") address")
        }
        return extended ? [UInt8(block & 0xFF), UInt8(block >> 8)] : [UInt8(block)]
    }

    /// A block count for READ MULTIPLE BLOCKS and the security status: 1 at least.
    private func countNumber(_ count: Int, extended: Bool) throws(TagError) -> [UInt8] {
        guard count >= 1 else { throw TagError(.beyondReach, "a count of \(count) blocks: 1 at least") }
        return try blockNumber(count - 1, extended: extended, what: "a count of blocks less one,")
    }

    /// GET SYSTEM INFORMATION (2B); with `extended`, Extended Get System Info (3B) asking for
    /// DSFID, AFI, memory size and IC reference. Addresses later requests to the UID it brings.
    public func getSystemInfo(extended: Bool = false) throws -> ISO15693SystemInfo {
        let body = extended ? try request(0x3B, parameters: [0x0F]) : try request(0x2B)
        let info = try ISO15693SystemInfo(parsing: body, extended: extended)
        if uid == nil { address(info.uid) }
        return info
    }

    /// GET SYSTEM INFORMATION, then the extended form where the standard answer leaves the
    /// memory size out (ST25DV64K and other tags past 256 blocks); the standard answer when the
    /// tag has no extended one.
    public func systemInfoWithMemorySize() throws -> ISO15693SystemInfo {
        let info = try getSystemInfo()
        guard info.blockSize == nil, let ext = try? getSystemInfo(extended: true) else { return info }
        return ext
    }

    /// READ SINGLE BLOCK (20 / 30).
    public func readSingleBlock(_ block: Int, blockSize: Int, extended: Bool = false) throws -> [UInt8] {
        let body = try request(extended ? 0x30 : 0x20, parameters: try blockNumber(block, extended: extended))
        guard body.count == blockSize else {
            throw TagCommandError(.malformed, "READ SINGLE BLOCK \(block) answered \(body.count) bytes, \(blockSize) expected")
        }
        return body
    }

    /// READ MULTIPLE BLOCKS (23 / 33): `count` blocks from `first`.
    public func readMultipleBlocks(_ first: Int, count: Int, blockSize: Int, extended: Bool = false) throws -> [UInt8] {
        let params = try blockNumber(first, extended: extended) + countNumber(count, extended: extended)
        let body = try request(extended ? 0x33 : 0x23, parameters: params)
        guard body.count == count * blockSize else {
            throw TagCommandError(.malformed, "READ MULTIPLE BLOCKS \(first)+\(count) answered \(body.count) bytes, \(count * blockSize) expected")
        }
        return body
    }

    /// WRITE SINGLE BLOCK (21 / 31).
    public func writeSingleBlock(_ block: Int, data: [UInt8], extended: Bool = false) throws {
        _ = try request(extended ? 0x31 : 0x21, parameters: try blockNumber(block, extended: extended) + data, flags: optionFlagOnWrites ? .option : [])
    }

    /// LOCK BLOCK (22 / 32): permanent.
    public func lockBlock(_ block: Int, extended: Bool = false) throws {
        _ = try request(extended ? 0x32 : 0x22, parameters: try blockNumber(block, extended: extended), flags: optionFlagOnWrites ? .option : [])
    }

    /// GET MULTIPLE BLOCK SECURITY STATUS (2C / 3C): one byte per block, bit 0 = locked.
    public func securityStatus(_ first: Int, count: Int, extended: Bool = false) throws -> [Bool] {
        let body = try request(extended ? 0x3C : 0x2C, parameters: try blockNumber(first, extended: extended) + countNumber(count, extended: extended))
        guard body.count == count else {
            throw TagCommandError(.malformed, "GET MULTIPLE BLOCK SECURITY STATUS answered \(body.count) bytes for \(count) blocks")
        }
        return body.map { $0 & 0x01 != 0 }
    }

    /// A custom (A0-DF) or proprietary (E0-FF) command with the IC manufacturer code after it.
    public func customCommand(_ code: UInt8, manufacturer: UInt8, parameters: [UInt8] = []) throws -> [UInt8] {
        try request(code, parameters: parameters, manufacturer: manufacturer)
    }
}
