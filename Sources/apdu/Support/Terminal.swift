import Foundation
import NDEF

/// Output for people, safe for any bytes a card sends.
enum Terminal {
    /// Writes to stdout.
    static func print(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// A message on stderr prefixed with `apdu:`. The first line says what went wrong; any
    /// further lines (a reader listing) are our own text, each made safe separately.
    static func error(_ message: String) {
        let lines = message.split(separator: "\n", omittingEmptySubsequences: false).map { safe(String($0)) }
        FileHandle.standardError.write(Data(("apdu: " + lines.joined(separator: "\n") + "\n").utf8))
    }

    static func warning(_ message: String) {
        FileHandle.standardError.write(Data(("apdu: warning: " + safe(message) + "\n").utf8))
    }

    /// Text with every control character (C0, DEL, C1) and bidi/format control shown as an
    /// escape, so nothing from a card can move the cursor, recolour or retitle a terminal.
    static func safe(_ text: String) -> String { TerminalText.escaping(text) }

    /// A word a POSIX shell reads back as itself: bare when it is plain, else in single quotes
    /// (control characters escaped by `safe` first, so the line stays printable).
    static func shellQuoted(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "/._-+:=@%,".unicodeScalars.contains($0)) }
        if plain { return text }
        return "'" + safe(text).replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Bytes as text where printable ASCII, `.` otherwise (hex dumps).
    static func ascii(_ bytes: some Sequence<UInt8>) -> String {
        String(bytes.map { (0x20..<0x7F).contains($0) ? Character(UnicodeScalar($0)) : "." })
    }
}
