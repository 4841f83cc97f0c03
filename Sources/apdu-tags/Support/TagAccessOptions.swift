// How to reach a tag: the reader dialect, the NTAG21x password and the MIFARE Classic keys, and
// the restore commands printed for them.
import APDUCommandLine
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NFCTags
import TagReader

/// `--reader-dialect`: how the reader reaches a tag's own commands.
struct DialectOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "How the reader reaches a tag's own commands: transparent (PC/SC Part 3), acr122u, or storage. Default: from the reader's name and a harmless probe.",
        valueName: "dialect"))
    var readerDialect: ReaderDialect?
}

/// `--reader-dialect`, the NTAG21x password (`--password-file`, `APDU_TAG_PASSWORD`) and
/// MIFARE Classic keys (`--key`, `--key-file`, `APDU_MIFARE_KEYS`).
struct TagAccessOptions: ParsableArguments {
    @OptionGroup var dialect: DialectOptions
    @OptionGroup var classicKeys: ClassicKeySource
    var readerDialect: ReaderDialect? { dialect.readerDialect }

    @Option(help: ArgumentHelp(
        "File holding the NTAG21x password as 8 hex digits, optionally followed by the expected PACK (4 hex digits); '#' comments allowed. Default: $APDU_TAG_PASSWORD. Never printed; redacted in traces.",
        valueName: "file"))
    var passwordFile: String?

    /// The password from the file or the environment; nil when neither gives one.
    func password() throws -> Type2Password? {
        try Self.load(file: passwordFile, option: "--password-file", environment: "APDU_TAG_PASSWORD")
    }

    /// A password from `file` (named `option` in errors), else from the variable `environment`;
    /// nil when neither gives one.
    static func load(file: String?, option: String, environment: String) throws -> Type2Password? {
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw Failure(.usage, "\(option): cannot read '\(Terminal.safe(file))'")
            }
            return try parse(TextInput.normalized([UInt8](data)), source: option)
        }
        guard let env = ProcessInfo.processInfo.environment[environment], !env.isEmpty else { return nil }
        return try parse(env, source: environment)
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

    func access() throws -> TagAccess { TagAccess(dialect: readerDialect, password: try password(), classicKeys: try classicKeys.given()) }

    /// The `ndef-write --restore` command for `backup` on `reader`, to paste as it is: with this
    /// command's dialect, and its password and key *sources* (files; variables still set are
    /// read again). A key typed with `--key` is not repeated (it would be printed): `--key KEY`
    /// stands for it.
    func restoreCommand(reader: String, backup: String) -> String {
        command(["ndef-write"], reader: reader, then: ["--restore", Terminal.shellQuoted(backup)])
    }

    /// `apdu SUBCOMMAND -r READER` with this command's access flags, then `then` (quoted already).
    func command(_ subcommand: [String], reader: String, then tail: [String] = []) -> String {
        var words = ["apdu"] + subcommand + ["-r", Terminal.shellQuoted(reader)]
        if let d = readerDialect { words += ["--reader-dialect", d.rawValue] }
        if let f = passwordFile { words += ["--password-file", Terminal.shellQuoted(f)] }
        if let f = classicKeys.keyFile { words += ["--key-file", Terminal.shellQuoted(f)] }
        words += classicKeys.keys.flatMap { _ in ["--key", "KEY"] }
        return (words + tail).joined(separator: " ")
    }

    /// What to run for a tag found interrupted (a Type 3 tag with WriteF 0F): the restore of
    /// its newest backup in apdu's backup directory, or, with none there, a new write.
    func interruptedAdvice(reader: String, kind: String, uid: [UInt8]?) -> String {
        if let path = DirectoryBackupStore.standard.newest(kind: kind, uid: uid) {
            return "put the previous message back with: \(restoreCommand(reader: reader, backup: path))"
        }
        return "no backup of this tag is in \(DirectoryBackupStore.standard.directory); write a new message (apdu ndef-write -r \(Terminal.shellQuoted(reader)) --text …)"
    }
}

extension ReaderDialect: ExpressibleByArgument {}
