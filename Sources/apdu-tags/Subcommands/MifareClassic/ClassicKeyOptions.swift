// The MIFARE Classic commands' key options: keys from `--key`, `--key-file` and the
// environment, then the public keys, and the reader's key slot.
import APDUCommandLine
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NFCTags

/// MIFARE Classic keys given: `--key`, `--key-file`, `$APDU_MIFARE_KEYS`. Reports name keys by
/// where they came from; their bytes are never printed, and traces show them as `**`.
struct ClassicKeySource: ParsableArguments {
    @Option(name: .customLong("key"), help: ArgumentHelp(
        "A MIFARE Classic key (12 hex digits); repeat for more. Prefer --key-file or $APDU_MIFARE_KEYS: a command line is visible to other users.",
        valueName: "hex"))
    var keys: [String] = []

    @Option(help: ArgumentHelp("File of MIFARE Classic keys, one per line; '#' comments, blank lines and CRLF allowed.", valueName: "file"))
    var keyFile: String?

    static let environment = "APDU_MIFARE_KEYS"

    /// The keys given, in order: --key, --key-file, the environment.
    func given() throws -> [MifareClassicKeyCandidate] {
        var out: [MifareClassicKeyCandidate] = []
        for (i, text) in keys.enumerated() {
            guard let bytes = try? Hex.decode(text), let key = MifareClassicKey(bytes) else {
                throw Failure(.usage, "--key \(i + 1): a key is 12 hex digits (the value is not shown)")
            }
            out.append(MifareClassicKeyCandidate(key, label: "--key \(i + 1)"))
        }
        do {
            if let keyFile {
                guard let data = FileManager.default.contents(atPath: keyFile) else { throw Failure(.usage, "--key-file: cannot read '\(Terminal.safe(keyFile))'") }
                out += try MifareClassicKeyCandidate.parse(TextInput.normalized([UInt8](data)), source: String(keyFile.split(separator: "/").last ?? Substring(keyFile)))
            }
            if let env = ProcessInfo.processInfo.environment[Self.environment], !env.isEmpty {
                let lines = env.split(whereSeparator: { " ,;\t\n".contains($0) }).joined(separator: "\n")
                out += try MifareClassicKeyCandidate.parse(lines, source: "$\(Self.environment) key").map {
                    MifareClassicKeyCandidate($0.key, label: $0.label.components(separatedBy: " key line ").joined(separator: " key "))
                }
            }
        } catch let e as TagError {
            throw Failure(.usage, e.message)
        }
        return out
    }

}

/// The Classic commands' keys: those given, then (unless `--no-public-keys`) the public
/// factory, MAD and NDEF keys; and the reader's key slot.
struct ClassicKeyOptions: ParsableArguments {
    @OptionGroup var source: ClassicKeySource

    @Flag(help: "Do not try the public keys (factory FFFFFFFFFFFF, MAD A0A1A2A3A4A5, NDEF D3F7D3F7D3F7) after the keys given.")
    var noPublicKeys = false

    @Option(help: ArgumentHelp("The reader key slot LOAD KEYS fills (default 0).", valueName: "n"))
    var keySlot: UInt8 = 0

    /// The keys given, then the public ones (unless --no-public-keys); each key once.
    func candidates() throws -> [MifareClassicKeyCandidate] {
        var seen = Set<MifareClassicKey>()
        return (try source.given() + (noPublicKeys ? [] : MifareClassicKeyCandidate.publicKeys)).filter { seen.insert($0.key).inserted }
    }
}
