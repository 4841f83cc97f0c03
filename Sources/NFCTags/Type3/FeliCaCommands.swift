// FeliCa commands as frames over a tag-command channel (Polling, Request Service, Request
// System Code, Read and Write Without Encryption), with their status errors.
import ISO7816

/// A FeliCa card's error answer: status flag 1 (FF: the command; else the index of the block
/// list element at fault) and status flag 2 (the reason). FeliCa Card User's Manual §4.5.
public struct FeliCaStatusError: Error, Hashable, Sendable, CustomStringConvertible {
    public var flag1: UInt8
    public var flag2: UInt8
    public var command: UInt8
    public init(flag1: UInt8, flag2: UInt8, command: UInt8) {
        self.flag1 = flag1
        self.flag2 = flag2
        self.command = command
    }

    public static func meaning(_ flag2: UInt8) -> String {
        switch flag2 {
        case 0x01: return "purse data under- or overflow"
        case 0x02: return "cashback data exceeded"
        case 0x70: return "memory error"
        case 0x71: return "the memory has been rewritten too often"
        case 0xA1: return "illegal number of services"
        case 0xA2: return "illegal command packet (block count)"
        case 0xA3: return "illegal block list (service order)"
        case 0xA4: return "illegal service type"
        case 0xA5: return "access denied (not authenticated, or read-only)"
        case 0xA6: return "illegal service code list"
        case 0xA7: return "illegal block list (access mode)"
        case 0xA8: return "illegal block number"
        case 0xA9: return "data write failure"
        default: return "error"
        }
    }

    public var description: String {
        "the card answered command \(Hex.encode([command])) with status \(Hex.encode([flag1, flag2])) (\(Self.meaning(flag2)))"
    }
}

/// A FeliCa service code as the NDEF mapping uses it: 000B read, 0009 read/write (sent little-endian).
public struct FeliCaServiceCode: Hashable, Sendable, CustomStringConvertible {
    public var value: UInt16
    public init(_ value: UInt16) { self.value = value }
    public static let ndefRead = FeliCaServiceCode(0x000B)
    public static let ndefReadWrite = FeliCaServiceCode(0x0009)
    var wire: [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    public var description: String { Hex.encode([UInt8(value >> 8), UInt8(value & 0xFF)]) }
}

/// What Polling found: the card's IDm (manufacture ID), PMm (parameters, IC code in byte 1)
/// and the system code it answered for.
public struct FeliCaPolling: Hashable, Sendable {
    public var idm: [UInt8]
    public var pmm: [UInt8]
    public var systemCode: UInt16?
    /// The IC type (PMm byte 1): F0 FeliCa Lite, F1 Lite-S, F2 FeliCa Link in Lite-S mode, …
    public var icCode: UInt8 { pmm.count == 8 ? pmm[1] : 0 }

    public var productName: String {
        switch icCode {
        case 0xF0: return "FeliCa Lite (RC-S965)"
        case 0xF1: return "FeliCa Lite-S (RC-S966)"
        case 0xF2: return "FeliCa Link (RC-S730) in Lite-S mode"
        case 0xE0: return "FeliCa Plug (RC-S926)"
        case 0x00...0x20: return "FeliCa Standard (IC code \(Hex.encode([icCode])))"
        default: return "FeliCa (IC code \(Hex.encode([icCode])))"
        }
    }

    /// FeliCa Lite / Lite-S: user blocks 0-13, the memory configuration block 88h.
    public var isLite: Bool { icCode == 0xF0 || icCode == 0xF1 || icCode == 0xF2 }
}

/// Core NFC's `NFCFeliCaTag` operations as FeliCa frames over a `TagCommandChannel`. Every
/// frame starts with its own length byte (as the PN532 and Part 3 readers carry it); the card's
/// IDm goes in every command after Polling.
public final class FeliCaCommands {
    public let channel: TagCommandChannel
    /// The card's IDm (from Polling, or set by the caller).
    public var idm: [UInt8]

    public init(channel: TagCommandChannel, idm: [UInt8] = []) throws(TagCommandError) {
        self.channel = channel
        self.idm = idm
        try channel.use(.felica)
    }

    /// Sends `command` + `body` with the length byte in front; returns the answer after its
    /// length and response code, checked.
    public func exchange(_ command: UInt8, _ body: [UInt8]) throws -> [UInt8] {
        // The length byte counts itself: a frame is 255 bytes at most.
        guard body.count + 2 <= 0xFF else {
            throw TagError(.beyondReach, "a FeliCa frame of \(body.count + 2) bytes; the length byte allows 255 (fewer blocks per command)")
        }
        let frame = [UInt8(body.count + 2), command] + body
        let answer = try channel.transceive(frame)
        guard case let .data(bytes) = answer, bytes.count >= 2 else {
            throw TagCommandError(.readerRefused, "the card did not answer command \(Hex.encode([command])) (\(answer))")
        }
        guard Int(bytes[0]) == bytes.count, bytes[1] == command &+ 1 else {
            throw TagCommandError(.malformed, "the card answered command \(Hex.encode([command])) with \(bytes.hexString): not a response \(Hex.encode([command &+ 1])) of its own length")
        }
        return Array(bytes[2...])
    }

    /// Polling (00) for `systemCode` (FFFF: any), asking for the system code (request code 01).
    /// Sets `idm`.
    /// - Returns: nil when no card answers for that system code.
    public func polling(systemCode: UInt16 = 0xFFFF) throws -> FeliCaPolling? {
        let frame: [UInt8] = [0x06, 0x00, UInt8(systemCode >> 8), UInt8(systemCode & 0xFF), 0x01, 0x00]
        let answer = try channel.transceive(frame)
        guard case let .data(bytes) = answer else { return nil }
        guard bytes.count >= 18, bytes[1] == 0x01, Int(bytes[0]) == bytes.count else {
            throw TagCommandError(.malformed, "Polling answered \(bytes.hexString)")
        }
        idm = Array(bytes[2..<10])
        let code = bytes.count >= 20 ? UInt16(bytes[18]) << 8 | UInt16(bytes[19]) : nil
        return FeliCaPolling(idm: idm, pmm: Array(bytes[10..<18]), systemCode: code)
    }

    private func checkIDm(_ body: [UInt8], _ command: UInt8) throws -> [UInt8] {
        guard body.count >= 8, Array(body[0..<8]) == idm else {
            throw TagCommandError(.malformed, "the answer to command \(Hex.encode([command])) is for another card (IDm \(Array(body.prefix(8)).hexString))")
        }
        return Array(body[8...])
    }

    private func checkStatus(_ body: [UInt8], _ command: UInt8) throws -> [UInt8] {
        guard body.count >= 2 else { throw TagCommandError(.malformed, "the answer to command \(Hex.encode([command])) has no status flags") }
        guard body[0] == 0 else { throw FeliCaStatusError(flag1: body[0], flag2: body[1], command: command) }
        return Array(body[2...])
    }

    /// Request Service (02): each node's key version; FFFF for a node that does not exist.
    public func requestService(_ nodes: [FeliCaServiceCode]) throws -> [UInt16] {
        let body = try checkIDm(try exchange(0x02, idm + [UInt8(nodes.count)] + nodes.flatMap(\.wire)), 0x02)
        guard body.count == 1 + nodes.count * 2 else { throw TagCommandError(.malformed, "Request Service answered \(body.count) bytes for \(nodes.count) nodes") }
        return (0..<nodes.count).map { UInt16(body[1 + $0 * 2]) | UInt16(body[2 + $0 * 2]) << 8 }
    }

    /// Request System Code (0C): the systems on the card.
    public func requestSystemCode() throws -> [UInt16] {
        let body = try checkIDm(try exchange(0x0C, idm), 0x0C)
        guard let n = body.first, body.count == 1 + Int(n) * 2 else { throw TagCommandError(.malformed, "Request System Code answered \(body.hexString)") }
        return (0..<Int(n)).map { UInt16(body[1 + $0 * 2]) << 8 | UInt16(body[2 + $0 * 2]) }
    }

    /// A block list element: 2-byte form (80 | service index, block) below 256, else 3-byte.
    static func blockList(_ blocks: [Int]) throws(TagError) -> [UInt8] {
        guard blocks.count <= 0xFF else { throw TagError(.beyondReach, "\(blocks.count) blocks in one command; a FeliCa command lists at most 255") }
        if let bad = blocks.first(where: { !(0...0xFFFF).contains($0) }) {
            throw TagError(.beyondReach, "block \(bad) is outside 0-65535, what a FeliCa block list element addresses")
        }
        return blocks.flatMap { $0 < 256 ? [0x80, UInt8($0)] : [0x00, UInt8($0 & 0xFF), UInt8($0 >> 8)] }
    }

    /// Read Without Encryption (06): 16 bytes per block, from `service`.
    public func read(blocks: [Int], service: FeliCaServiceCode = .ndefRead) throws -> [UInt8] {
        let body = try checkStatus(try checkIDm(try exchange(0x06, idm + [0x01] + service.wire + [UInt8(truncatingIfNeeded: blocks.count)] + Self.blockList(blocks)), 0x06), 0x06)
        guard let n = body.first, Int(n) == blocks.count, body.count == 1 + blocks.count * 16 else {
            throw TagCommandError(.malformed, "Read Without Encryption answered \(body.count) bytes for \(blocks.count) blocks")
        }
        return Array(body[1...])
    }

    /// Write Without Encryption (08): `data` is 16 bytes per block, to `service`.
    public func write(blocks: [Int], data: [UInt8], service: FeliCaServiceCode = .ndefReadWrite) throws {
        guard data.count == blocks.count * 16 else {
            throw TagError(.beyondReach, "\(data.count) bytes for \(blocks.count) blocks: a FeliCa block holds 16")
        }
        _ = try checkStatus(try checkIDm(try exchange(0x08, idm + [0x01] + service.wire + [UInt8(truncatingIfNeeded: blocks.count)] + Self.blockList(blocks) + data), 0x08), 0x08)
    }
}
