// A SUN URL template turned into the NDEF file to write and the SDM settings whose offsets
// point into it.
import NDEF
import SUN

/// A SUN URL template turned into the URI record to write and the SDM settings whose offsets
/// point into it: every offset is where its placeholder stands in the URL. Any layout
/// `SUNURLPattern` (module SUN) reads: parameters (`https://example.com/t?e={picc}&c={mac}`,
/// `…?uid={uid}&ctr={ctr}&c={mac}`, `…?e={picc}&enc={file}&c={mac}`), the bulk layout
/// (`…?e={picc}{file}{mac}`), path segments (`https://t.example/{picc}/{mac}`,
/// `https://t.example/{picc}{mac}`), or a mix with fixed parameters.
public struct SUNURLTemplate: Sendable, Hashable {
    /// The template, read: what a verifier parses the served URLs with.
    public var pattern: SUNURLPattern
    /// The URI the NDEF file holds, the placeholders filled with ASCII zeros of their length
    /// ({file} with its data, then zeros).
    public var uri: String
    /// The URI with every placeholder's characters as `0`: what a served URL must match outside
    /// the hex the tag mirrors there.
    public var shape: String
    public var settings: SDMSettings
    /// The NDEF file: NLEN and the one-record message.
    public var fileContents: [UInt8]

    /// Placeholder lengths in ASCII hex as a tag provisioned here writes them (AES mode): {picc}
    /// 32, {uid} 14, {ctr} 6, {mac} 16; {file} 32 for every 16 bytes of file data.
    public static let lengths: [String: Int] = ["{picc}": 32, "{uid}": 14, "{ctr}": 6, "{file}": 32, "{mac}": 16, "{tt}": 2]

    /// - Parameters:
    ///   - template: the URL with placeholders.
    ///   - metaReadKey: the key that encrypts the PICC data (SDMMetaReadKey), 0-4.
    ///   - fileReadKey: the key of the MAC and the file data (SDMFileReadKey), 0-4.
    ///   - fileData: with `{file}`, the text the tag encrypts on every read: 16 bytes or a
    ///     multiple of 16 (default 16 ASCII zeros).
    ///   - counterLimit: SDMReadCtrLimit: the reads after which the tag stops serving (nil: none).
    ///   - mirrorsCounter: whether the read counter is mirrored (without it a URL verifies but a
    ///     replay cannot be told from a tap; no `{ctr}`, `{file}` or limit then).
    ///   - fileSize: the NDEF file's size (256 on NTAG 424 DNA).
    ///   - tamper: where an NTAG 424 DNA TagTamper mirrors its status: `.fileData(offset:)`,
    ///     bytes `offset` and `offset + 1` of the plain file data (encrypted and MACed with it),
    ///     or `.clear`, where the template puts `{tt}` (inside the MAC input). Nil: not mirrored.
    /// - Throws: `NTAG424Error` `.malformed` (the template's own checks, see `SUNURLPattern`,
    ///   and those of these options) or `.lengthError` (a URL past the NDEF file), one line each.
    public init(_ template: String, metaReadKey: UInt8 = 2, fileReadKey: UInt8 = 2, fileData: [UInt8]? = nil, counterLimit: Int? = nil,
                mirrorsCounter: Bool = true, fileSize: Int = 256, tamper: SUNTamperPlacement? = nil) throws {
        let pattern: SUNURLPattern
        do { pattern = try SUNURLPattern(template) } catch { throw NTAG424Error(.malformed, error.message) }
        let has = Set(pattern.placeholders)
        let picc = has.contains(.picc)
        if has.contains(.uid) {
            guard has.contains(.ctr) == mirrorsCounter else {
                throw NTAG424Error(.malformed, mirrorsCounter ? "plain mirroring needs both {uid} and {ctr}" : "without the counter, plain mirroring is {uid} alone")
            }
        }
        guard mirrorsCounter || (!has.contains(.file) && counterLimit == nil) else {
            throw NTAG424Error(.malformed, "{file} and a counter limit need the read counter mirrored")
        }
        guard fileReadKey < 5 else {
            throw NTAG424Error(.malformed, "{mac} and {file} need a file-read key (SDMFileReadKey) 0-4, not \(fileReadKey)")
        }
        guard !picc || metaReadKey < 5 else {
            throw NTAG424Error(.malformed, "{picc} needs a meta-read key (SDMMetaReadKey) 0-4, not \(metaReadKey)")
        }
        if let data = fileData {
            guard has.contains(.file) else { throw NTAG424Error(.malformed, "file data is given, but the template has no {file} to serve it") }
            guard !data.isEmpty, data.count % 16 == 0 else { throw NTAG424Error(.malformed, "{file}'s data is 16 bytes or a multiple of 16, not \(data.count)") }
        }
        let plainFile = fileData ?? [UInt8](repeating: 0x30, count: 16)
        // TTStatusOffset's rules (NT4H2421Tx, ChangeFileSettings): the two letters lie inside the
        // file, overlap no other mirror, and lie inside the MAC input (SDMMACInputOffset ≤
        // TTStatusOffset, TTStatusOffset + 2 ≤ SDMMACOffset) or inside the plain half of the
        // encrypted file data.
        switch tamper {
        case nil:
            guard !has.contains(.tt) else { throw NTAG424Error(.malformed, "the template has {tt}, but TagTamper mirroring is not asked for (--tamper clear)") }
        case .clear:
            guard has.contains(.tt) else { throw NTAG424Error(.malformed, "--tamper clear mirrors the status where the template puts {tt}, and it has none") }
        case .fileData(let offset):
            guard !has.contains(.tt) else { throw NTAG424Error(.malformed, "the template has {tt}: give --tamper clear, or drop {tt} to mirror the status in the file data") }
            guard has.contains(.file) else { throw NTAG424Error(.malformed, "--tamper file mirrors the status in the encrypted file data: the template needs {file}") }
            guard offset >= 0, offset + 2 <= plainFile.count else {
                throw NTAG424Error(.malformed, "the TagTamper status at byte \(offset) of the file data does not fit its \(plainFile.count) bytes")
            }
        }

        var uri: [UInt8] = [], shape: [UInt8] = []
        var positions: [SUNPlaceholder: Int] = [:]
        for part in pattern.parts {
            switch part {
            case let .literal(text):
                uri += text
                shape += text
            case let .placeholder(p):
                positions[p] = uri.count
                let length = p == .file ? 2 * plainFile.count : Self.lengths[p.description] ?? 0
                // NT4H2421Gx §9.3.6: the plain file data fills the first half of its placeholder.
                // {tt} holds "II" until the chip writes its letters there.
                let fill: UInt8 = p == .tt ? UInt8(ascii: "I") : 0x30
                uri += p == .file ? plainFile + [UInt8](repeating: 0x30, count: plainFile.count) : [UInt8](repeating: fill, count: length)
                shape += [UInt8](repeating: fill, count: length)
            }
        }
        let uriText = String(decoding: uri, as: UTF8.self)
        let record = NDEFRecord.uri(uriText)
        let message = try NDEFMessage(records: [record]).encoded()
        // In the file: NLEN (2), the record header (flags, type length, payload length), the type
        // "U", the prefix code, then the URI without the prefix the code abbreviates.
        let abbreviated = uri.count - (record.payload.count - 1)
        guard positions.values.allSatisfy({ $0 >= abbreviated }) else { throw NTAG424Error(.malformed, "a placeholder inside the URL's scheme") }
        guard message.count + 2 <= fileSize else {
            throw NTAG424Error(.lengthError, "the URL makes a \(message.count)-byte message; the NDEF file holds \(fileSize - 2)")
        }
        guard message.count < 256, record.payload.count < 256 else { throw NTAG424Error(.lengthError, "the URL is too long for a short record") }
        func offset(_ p: SUNPlaceholder) -> Int? { positions[p].map { 2 + 3 + 1 + 1 + $0 - abbreviated } }
        var s = SDMSettings()
        s.metaRead = picc ? .key(metaReadKey) : .free
        s.fileRead = .key(fileReadKey)
        s.mirrorsUID = true
        s.mirrorsCounter = mirrorsCounter
        s.counterLimit = counterLimit
        s.piccDataOffset = offset(.picc)
        s.uidOffset = offset(.uid)
        s.counterOffset = offset(.ctr)
        s.encryptsFileData = has.contains(.file)
        s.encOffset = offset(.file)
        s.encLength = s.encryptsFileData ? 2 * plainFile.count : nil
        s.macOffset = offset(.mac)
        switch tamper {
        case .clear: s.tamperOffset = offset(.tt)
        case .fileData(let at): s.tamperOffset = s.encOffset.map { $0 + at }
        case nil: break
        }
        // The MAC covers the text from the first of the file data and the clear TagTamper
        // letters up to the MAC (as verifiers cut it), else nothing.
        s.macInputOffset = [s.encOffset, tamper == .clear ? s.tamperOffset : nil].compactMap { $0 }.min() ?? s.macOffset
        self.pattern = pattern
        settings = s
        self.uri = uriText
        self.shape = String(decoding: shape, as: UTF8.self)
        fileContents = [UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
    }
}
