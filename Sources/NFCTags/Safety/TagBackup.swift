// The backup of what a tag held before a write, kept as a small readable text file so it can
// be put back byte for byte.
import ISO7816

/// What a tag held before a write: enough to put it back byte for byte, without trusting
/// anything the tag holds afterwards (a cut write may leave a length that lies).
///
/// - Type 1: the bytes from 0C (the first TLV) to the end of the NDEF TLV (and its terminator),
///   the CC (with the magic number E1) and the UID.
/// - Type 2: the data-area bytes from the first TLV up to the end of the NDEF TLV (and its
///   terminator), whole pages, with the CC and the UID they belong to.
/// - Type 4: the NDEF file's NLEN/ENLEN and message.
/// - Type 5: the bytes after the CC up to the end of the NDEF TLV (and its terminator), with the CC.
/// - Type 3: the attribute block (as `cc`) and the message's data blocks from block 1 (`start` 16).
/// - MIFARE Classic (`classic`): the NDEF sectors' data blocks (trailers left out) from the first
///   up to the end of the NDEF TLV (and its terminator), with MAD1/MAD2 as `cc`.
///
/// Saved as a small text file (`encoded()`), one `key value` per line, so a person can read it:
///
/// ```
/// # apdu tag backup: put it back with `apdu ndef-write --restore FILE`
/// format 1
/// kind type2
/// uid 04A1B2C3D4E580
/// cc E1103E00
/// start 16
/// bytes 0103A00C340312D1010E55036578616D706C652E636F6DFE00
/// message D1010E55036578616D706C652E636F6D
/// ```
public struct TagBackup: Sendable, Hashable {
    public static let header = "# apdu tag backup: put it back with `apdu ndef-write --restore FILE`"

    /// `type1`, `type2`, `type3`, `type4`, `type5` or `classic`; nil for a bare message (an older backup, or any NDEF file).
    public var kind: String?
    public var uid: [UInt8]?
    /// Type 2: the CC (page 3); Type 4: the capability container file.
    public var capabilityContainer: [UInt8]
    /// Type 2: the absolute byte address of `bytes`; Type 4: 0 (offset in the NDEF file).
    public var start: Int
    public var bytes: [UInt8]
    /// The message that was on the tag.
    public var message: [UInt8]
    /// Where it came from, for people.
    public var reader: String?

    public init(kind: String?, uid: [UInt8]?, capabilityContainer: [UInt8], start: Int, bytes: [UInt8], message: [UInt8], reader: String? = nil) {
        self.kind = kind
        self.uid = uid
        self.capabilityContainer = capabilityContainer
        self.start = start
        self.bytes = bytes
        self.message = message
        self.reader = reader
    }

    /// A bare NDEF message to write the usual way (no bytes to restore exactly).
    public init(message: [UInt8]) {
        self.init(kind: nil, uid: nil, capabilityContainer: [], start: 0, bytes: [], message: message)
    }

    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "backup line \(line): \(reason)" }
    }

    public func encoded() -> String {
        var lines = [Self.header, "format 1"]
        if let kind { lines.append("kind \(kind)") }
        if let uid { lines.append("uid \(uid.hexString)") }
        if let reader { lines.append("reader \(reader.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : String($0) }.joined())") }
        lines.append("cc \(capabilityContainer.hexString)")
        lines.append("start \(start)")
        lines.append("bytes \(bytes.hexString)")
        lines.append("message \(message.hexString)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Whether file contents are a backup in this format (else treat them as a bare message).
    public static func isBackup(_ bytes: [UInt8]) -> Bool {
        TextInput.droppingByteOrderMark(bytes).starts(with: Array("# apdu tag backup".utf8))
    }

    public init(parsing text: String) throws(ParseError) {
        var values: [String: (String, Int)] = [:]
        for (index, raw) in TextInput.normalized(text).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.drop(while: { $0 == " " || $0 == "\t" })
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: " ", maxSplits: 1)
            let key = String(parts[0])
            guard values[key] == nil else { throw ParseError(line: index + 1, reason: "'\(key)' appears twice") }
            let value = parts.count > 1 ? String(parts[1].reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed()) : ""
            values[key] = (value, index + 1)
        }
        func hex(_ key: String, required: Bool = true) throws(ParseError) -> [UInt8]? {
            guard let (text, line) = values[key] else {
                if required { throw ParseError(line: 0, reason: "no '\(key)' line") }
                return nil
            }
            do { return try Hex.decode(text, allowEmpty: true) } catch { throw ParseError(line: line, reason: "\(key): \(error)") }
        }
        guard values["format"]?.0 == "1" else { throw ParseError(line: values["format"]?.1 ?? 0, reason: "unknown backup format (1 expected)") }
        let kind = values["kind"]?.0
        guard let kind, ["type1", "type2", "type3", "type4", "type5", "classic"].contains(kind) else {
            throw ParseError(line: values["kind"]?.1 ?? 0, reason: "kind must be type1, type2, type3, type4, type5 or classic")
        }
        guard let (startText, startLine) = values["start"], let start = Int(startText), (0...0xFFFF).contains(start) else {
            throw ParseError(line: values["start"]?.1 ?? 0, reason: "start must be a byte address")
        }
        _ = startLine
        self.init(kind: kind, uid: try hex("uid", required: false), capabilityContainer: try hex("cc")!, start: start,
                  bytes: try hex("bytes")!, message: try hex("message")!, reader: values["reader"]?.0)
        guard !bytes.isEmpty || kind == "type3" else { throw ParseError(line: values["bytes"]!.1, reason: "no bytes to restore") }
    }
}
