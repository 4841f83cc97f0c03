// The options DESFire subcommands share: the application, keys, and how they are parsed.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import ISO7816
import NFCTags

extension DESFireAuthenticationScheme: ExpressibleByArgument {}
extension CommMode: ExpressibleByArgument {}

/// The application a command addresses: `--app AID` (6 hex digits, most significant first, as
/// `apdu desfire ls` prints them; 000000 the card level).
struct DESFireAppOption: ParsableArguments {
    @Option(help: ArgumentHelp("The application: 6 hex digits as 'ls' prints them (000000: the card level).", valueName: "aid"))
    var app: String = "000000"

    func validate() throws { _ = try aid() }

    func aid() throws -> DESFireApplicationID {
        guard let aid = DESFireApplicationID(hex: app) else { throw ValidationError("--app: an AID is 6 hex digits (F21190), not '\(app)'") }
        return aid
    }
}

/// The key to authenticate with: `--key KEYNO:TYPE:HEX`, `--key-file FILE` (that text; '#'
/// comments allowed), else `$APDU_DESFIRE_KEY`. Never printed.
struct DESFireKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Authenticate with this key: KEYNO:TYPE:HEX (TYPE des, 2k3des, 3k3des, aes). Prefer --key-file or $APDU_DESFIRE_KEY: arguments show in 'ps'.", valueName: "n:type:hex"))
    var key: String?

    @Option(help: ArgumentHelp("File holding KEYNO:TYPE:HEX. Default: $APDU_DESFIRE_KEY.", valueName: "file"))
    var keyFile: String?

    @Option(help: ArgumentHelp("Authentication: legacy (0A), iso (1A), aes (AA), ev2 (71). Default: by key type and card (EV2First for AES on EV2/EV3).", valueName: "scheme"))
    var auth: DESFireAuthenticationScheme?

    /// The key given, or nil.
    func resolved() throws -> (number: UInt8, key: DESFireKey)? {
        if let key { return try DESFireKeyText.parse(key, numbered: true, source: "--key") }
        if let text = try DESFireKeyText.load(file: keyFile, option: "--key-file", environment: "APDU_DESFIRE_KEY") {
            return try DESFireKeyText.parse(text, numbered: true, source: keyFile == nil ? "$APDU_DESFIRE_KEY" : "--key-file")
        }
        return nil
    }
}

/// Parses key text without ever showing it.
enum DESFireKeyText {
    /// The text of `file`, else of the variable `environment`; nil when neither gives one.
    static func load(file: String?, option: String, environment: String) throws -> String? {
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else { throw Failure(.usage, "\(option): cannot read '\(Terminal.safe(file))'") }
            return TextInput.normalized([UInt8](data))
        }
        guard let value = ProcessInfo.processInfo.environment[environment], !value.isEmpty else { return nil }
        return value
    }

    /// The first line of key text that is not blank or a comment, without its comment and spaces.
    static func firstLine(_ text: String) -> String {
        text.split(separator: "\n").map { String($0.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "") }
            .map { $0.filter { !$0.isWhitespace } }.first { !$0.isEmpty } ?? ""
    }

    /// "KEYNO:TYPE:HEX" (numbered) or "TYPE:HEX", an AES key optionally ":VERSION" (decimal or
    /// 0x hex) after it; '#' comments and blank lines allowed.
    static func parse(_ text: String, numbered: Bool, source: String) throws -> (number: UInt8, key: DESFireKey) {
        var fields = firstLine(text).split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let shape = numbered ? "KEYNO:TYPE:HEX" : "TYPE:HEX"
        var number: UInt8 = 0
        if numbered {
            guard fields.count >= 3, let n = UInt8(fields[0]), n <= 13 else { throw Failure(.usage, "\(source): a key is \(shape) with KEYNO 0-13 (the value is not shown)") }
            number = n
            fields.removeFirst()
        }
        guard fields.count == 2 || fields.count == 3, let type = DESFireKeyType(rawValue: fields[0].lowercased()) else {
            throw Failure(.usage, "\(source): a key is \(shape) with TYPE des, 2k3des, 3k3des or aes (the value is not shown)")
        }
        guard let bytes = try? Hex.decode(fields[1].filter { !" \t-".contains($0) }), bytes.count == type.keySize else {
            throw Failure(.usage, "\(source): a \(type) key is \(type.keySize * 2) hex digits (the value is not shown)")
        }
        var version: UInt8 = 0
        if fields.count == 3 {
            let v = fields[2].lowercased()
            guard type == .aes, let parsed = v.hasPrefix("0x") ? UInt8(v.dropFirst(2), radix: 16) : UInt8(v) else {
                throw Failure(.usage, "\(source): only an AES key takes a version after its hex (DES-family keys carry theirs in their bits)")
            }
            version = parsed
        }
        do { return (number, try DESFireKey(type, bytes, version: version)) } catch { throw Failure(.usage, "\(source): \(error)") }
    }
}

/// A hex argument that is not a secret (data to write, a DF name).
func hexArgument(_ text: String, option: String, allowEmpty: Bool = false) throws -> [UInt8] {
    do { return try Hex.decode(text, allowEmpty: allowEmpty) } catch { throw ValidationError("\(option): \(error)") }
}
