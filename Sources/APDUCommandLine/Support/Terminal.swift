// Output for people, safe for any bytes a card sends: buffered standard output, errors,
// escaping and shell quoting.
import Glibc
import ISO7816
import NDEF
import PCSC
import Synchronization

/// Output for people, safe for any bytes a card sends.
///
/// Standard output goes through a buffer of our own. By default every line is written as it is
/// printed (a pipe reader sees `watch` events at once); ``batch()`` lets a command that prints
/// many lines (`script`) gather them into few `write` calls. Errors and warnings flush what is
/// buffered first, so the two streams keep their order on a terminal.
package enum Terminal {
    /// Writes a line to stdout.
    package static func print(_ line: String) {
        standardOutput.withLock { $0.append(line, newline: true) }
    }

    /// Writes a line made straight into stdout's buffer by `make` (hex of an exchange, issue 50:
    /// no String per line), then a newline. Only our own text and hex go in: never a card's text.
    package static func printLine(_ make: (inout [UInt8]) -> Void) {
        standardOutput.withLock { $0.appendLine(make) }
    }

    /// Writes bytes to stdout as they are (`ndef encode --binary`).
    package static func write(_ bytes: [UInt8]) {
        standardOutput.withLock { $0.append(bytes) }
    }

    /// A message on stderr prefixed with `apdu:`. The first line says what went wrong; any
    /// further lines (a reader listing) are our own text, each made safe separately.
    package static func error(_ message: String) {
        let lines = message.split(separator: "\n", omittingEmptySubsequences: false).map { safe(String($0)) }
        writeError(Style.error.paint("apdu: ", on: .standardError) + lines.joined(separator: "\n") + "\n")
    }

    package static func warning(_ message: String) {
        writeError(Style.warning.paint("apdu: warning: ", on: .standardError) + safe(message) + "\n")
    }

    /// Writes our own text to stderr as it is (a trace line, a status note), after what stdout holds.
    package static func writeError(_ text: String) {
        flush()
        StandardStream.standardError.write(Array(text.utf8))
    }

    /// From now on, stdout gathers lines and writes them when the buffer fills or on ``flush()``
    /// (when the process ends, at the latest); on a terminal every line still shows at once.
    package static func batch() {
        standardOutput.withLock { $0.batching = !StandardStream.standardOutput.isTerminal }
    }

    /// Writes whatever stdout holds.
    package static func flush() {
        standardOutput.withLock { $0.flush() }
    }

    /// Text with every control character (C0, DEL, C1) and bidi/format control shown as an
    /// escape, so nothing from a card can move the cursor, recolour or retitle a terminal.
    package static func safe(_ text: String) -> String { TerminalText.escaping(text) }

    /// A word a POSIX shell reads back as itself: bare when it is plain, else in single quotes
    /// (control characters escaped by `safe` first, so the line stays printable).
    package static func shellQuoted(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { s in
            s.isASCII && (("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s) || "/._-+:=@%,".unicodeScalars.contains(s))
        }
        if plain { return text }
        return "'" + safe(text).split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// Bytes as text where printable ASCII, `.` otherwise (hex dumps).
    package static func ascii(_ bytes: some Sequence<UInt8>) -> String {
        String(bytes.map { (0x20..<0x7F).contains($0) ? Character(UnicodeScalar($0)) : "." })
    }

    /// `value` in decimal, right-aligned in `width` columns (`%5d`).
    package static func padded(_ value: Int, width: Int) -> String {
        let text = String(value)
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// `value` as four upper-case hex digits (`%04X`: system codes, card names).
    package static func hex4(_ value: UInt16) -> String {
        Hex.encode([UInt8(value >> 8), UInt8(value & 0xFF)])
    }

    private static let standardOutput = Mutex(OutputBuffer())
}

/// Standard output's pending bytes.
private struct OutputBuffer: ~Copyable {
    package var bytes: [UInt8] = []
    package var batching = false
    /// Written in one call once this much is pending.
    package static let limit = 64 * 1024

    package init() {
        bytes.reserveCapacity(Self.limit + 4096)
        // Whatever is buffered when the process ends (a return from main, `exit`) is written.
        atexit { Terminal.flush() }
    }

    package mutating func append(_ line: String, newline: Bool) {
        bytes.append(contentsOf: line.utf8)
        if newline { bytes.append(0x0A) }
        if !batching || bytes.count >= Self.limit { flush() }
    }

    package mutating func appendLine(_ make: (inout [UInt8]) -> Void) {
        make(&bytes)
        bytes.append(0x0A)
        if !batching || bytes.count >= Self.limit { flush() }
    }

    package mutating func append(_ raw: [UInt8]) {
        bytes.append(contentsOf: raw)
        if !batching || bytes.count >= Self.limit { flush() }
    }

    package mutating func flush() {
        guard !bytes.isEmpty else { return }
        StandardStream.standardOutput.write(bytes)
        bytes.removeAll(keepingCapacity: true)
    }
}

/// A standard file descriptor, written and read with plain system calls (no Foundation).
package struct StandardStream: Sendable {
    package let descriptor: Int32

    package static let standardInput = StandardStream(descriptor: 0)
    package static let standardOutput = StandardStream(descriptor: 1)
    package static let standardError = StandardStream(descriptor: 2)

    package var isTerminal: Bool { isatty(descriptor) == 1 }

    /// Writes all of `bytes`, going on after interrupted or short writes. A closed pipe ends the
    /// write quietly (the reader has gone; SIGPIPE, when not ignored, ends the process first).
    package func write(_ bytes: [UInt8]) {
        FileIO.write(bytes, to: descriptor)
    }

    /// Everything up to end of file; nil when the read fails (a directory, a closed descriptor).
    package func readToEnd() -> [UInt8]? { FileIO.readAll(descriptor: descriptor) }
}
