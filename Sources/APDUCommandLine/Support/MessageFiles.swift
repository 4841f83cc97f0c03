// Message files and pipes read as raw bytes or hex text (a BOM and CRLF line ends allowed).
import FoundationEssentials
import ISO7816

/// Reads a message file: raw bytes, or hex text.
package func readMessageFile(_ path: String, option: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw Failure(.usage, "\(option): cannot read '\(Terminal.safe(path))'")
    }
    return rawOrHex(data)
}

/// File or pipe contents as bytes: hex text (with separators) is decoded, anything else is raw.
package func rawOrHex(_ data: some Collection<UInt8>) -> [UInt8] {
    let bytes = [UInt8](data)
    // Hex text may come with a UTF-8 byte order mark and CRLF line ends (Windows editors).
    let text = TextInput.droppingByteOrderMark(bytes)
    if !text.isEmpty, text.allSatisfy({ Hex.isHexOrSeparator($0) }), let decoded = try? Hex.decode(String(decoding: text, as: UTF8.self)) {
        return decoded
    }
    return bytes
}
