import ArgumentParser
import Foundation
import ISO7816
import NFCTags
import TagReader

/// `--reader-dialect` and the NTAG21x password (`--password-file`, `APDU_TAG_PASSWORD`).
struct TagAccessOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "How the reader reaches a tag's own commands: transparent (PC/SC Part 3), acr122u, or storage. Default: from the reader's name and a harmless probe.",
        valueName: "dialect"))
    var readerDialect: ReaderDialect?

    @Option(help: ArgumentHelp(
        "File holding the NTAG21x password as 8 hex digits, optionally followed by the expected PACK (4 hex digits); '#' comments allowed. Default: $APDU_TAG_PASSWORD. Never printed; redacted in traces.",
        valueName: "file"))
    var passwordFile: String?

    /// The password from the file or the environment; nil when neither gives one.
    func password() throws -> Type2Password? {
        let text: String
        let source: String
        if let passwordFile {
            guard let data = FileManager.default.contents(atPath: passwordFile) else {
                throw Failure(.usage, "--password-file: cannot read '\(Terminal.safe(passwordFile))'")
            }
            text = TextInput.normalized([UInt8](data))
            source = "--password-file"
        } else if let env = ProcessInfo.processInfo.environment["APDU_TAG_PASSWORD"], !env.isEmpty {
            text = env
            source = "APDU_TAG_PASSWORD"
        } else {
            return nil
        }
        return try Self.parse(text, source: source)
    }

    /// "PWD [PACK]" in hex, separators and comments allowed. The error never shows the text.
    static func parse(_ text: String, source: String) throws -> Type2Password {
        let content = TextInput.normalized(text).split(separator: "\n").map { $0.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }
            .joined(separator: " ")
        let words = content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
        guard let bytes = try? Hex.decode(words.joined()), let password = Type2Password(password: Array(bytes.prefix(4)), pack: bytes.count == 6 ? Array(bytes.suffix(2)) : nil),
              bytes.count == 4 || bytes.count == 6 else {
            throw Failure(.usage, "\(source): a password is 8 hex digits, optionally followed by a 4-digit PACK (the value is not shown)")
        }
        return password
    }

    func access() throws -> TagAccess { TagAccess(dialect: readerDialect, password: try password()) }
}

extension ReaderDialect: ExpressibleByArgument {}
