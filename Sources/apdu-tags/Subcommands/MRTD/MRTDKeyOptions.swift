// The key that opens a passport or ID card chip, from the command line, a file or the
// environment; never echoed, in errors or anywhere else.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import MRTD

/// `--mrz`, `--mrz-file`, `--document-number`/`--birth`/`--expiry`, `--can`, `--can-file`, or
/// `$APDU_MRTD_MRZ` / `$APDU_MRTD_CAN`. Values are taken as strings and checked here, so that no
/// parse error can repeat them.
struct MRTDKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The MRZ as printed: TD1 (3 lines of 30), TD2 (2 of 36) or TD3 (2 of 44), lines separated by spaces or newlines. Its check digits are verified. Arguments stay in shell history: prefer --mrz-file or $APDU_MRTD_MRZ.", valueName: "lines"))
    var mrz: String?

    @Option(help: ArgumentHelp("Read the MRZ from this file ('-': standard input).", valueName: "file"))
    var mrzFile: String?

    @Option(help: ArgumentHelp("The document number (with --birth and --expiry instead of the whole MRZ).", valueName: "number"))
    var documentNumber: String?

    @Option(help: ArgumentHelp("The holder's date of birth, YYMMDD.", valueName: "YYMMDD"))
    var birth: String?

    @Option(help: ArgumentHelp("The document's date of expiry, YYMMDD.", valueName: "YYMMDD"))
    var expiry: String?

    @Option(help: ArgumentHelp("The card access number printed on the document (PACE only). Prefer --can-file or $APDU_MRTD_CAN.", valueName: "digits"))
    var can: String?

    @Option(help: ArgumentHelp("Read the CAN from this file ('-': standard input).", valueName: "file"))
    var canFile: String?

    static let mrzVariable = "APDU_MRTD_MRZ"
    static let canVariable = "APDU_MRTD_CAN"

    func validate() throws {
        let fields = [documentNumber, birth, expiry].filter { $0 != nil }.count
        if fields > 0 && fields < 3 { throw ValidationError("--document-number, --birth and --expiry go together") }
        let sources = [mrz != nil, mrzFile != nil, fields == 3, can != nil, canFile != nil].filter { $0 }.count
        if sources > 1 { throw ValidationError("give one key: --mrz, --mrz-file, --document-number with --birth and --expiry, --can or --can-file") }
    }

    /// Whether a key was given at all (options or environment).
    var isGiven: Bool {
        mrz != nil || mrzFile != nil || documentNumber != nil || can != nil || canFile != nil
            || Self.environment(Self.mrzVariable) != nil || Self.environment(Self.canVariable) != nil
    }

    /// The access key. An option wins; else $APDU_MRTD_MRZ, else $APDU_MRTD_CAN.
    /// - Throws: `Failure(.usage)` naming the option and the problem, never the value.
    func key() throws -> MRTDAccessKey {
        if let mrz { return try Self.mrzKey(mrz, source: "--mrz") }
        if let mrzFile { return try Self.mrzKey(try Self.read(mrzFile, option: "--mrz-file"), source: "--mrz-file") }
        if let documentNumber, let birth, let expiry {
            do { return try MRTDAccessKey.mrz(documentNumber: documentNumber, dateOfBirth: birth, dateOfExpiry: expiry) } catch {
                throw Failure(.usage, error.message)
            }
        }
        if let can { return try Self.canKey(can, source: "--can") }
        if let canFile { return try Self.canKey(try Self.read(canFile, option: "--can-file"), source: "--can-file") }
        if let text = Self.environment(Self.mrzVariable) { return try Self.mrzKey(text, source: "$\(Self.mrzVariable)") }
        if let text = Self.environment(Self.canVariable) { return try Self.canKey(text, source: "$\(Self.canVariable)") }
        throw Failure(.usage, "no key: give --mrz, --mrz-file, --document-number/--birth/--expiry, --can or --can-file (or set $\(Self.mrzVariable) or $\(Self.canVariable))")
    }

    static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The MRZ's three fields, every check digit verified; the error names the field, not its value.
    static func mrzKey(_ text: String, source: String) throws -> MRTDAccessKey {
        let zone: MachineReadableZone
        do { zone = try MachineReadableZone(parsing: text, checkDigits: .enforce) } catch {
            throw Failure(.usage, "\(source): \(error.message)")
        }
        do {
            return try MRTDAccessKey.mrz(documentNumber: zone.documentNumber, dateOfBirth: zone.dateOfBirth.text, dateOfExpiry: zone.dateOfExpiry.text)
        } catch {
            throw Failure(.usage, "\(source): \(error.message)")
        }
    }

    static func canKey(_ text: String, source: String) throws -> MRTDAccessKey {
        do { return try MRTDAccessKey.can(String(text.filter { !$0.isWhitespace })) } catch {
            throw Failure(.usage, "\(source): \(error.message)")
        }
    }

    /// A key file's text ('-': standard input).
    static func read(_ path: String, option: String) throws -> String {
        let bytes: [UInt8]?
        if path == "-" {
            bytes = StandardStream.standardInput.readToEnd()
        } else {
            bytes = FileManager.default.contents(atPath: path).map { [UInt8]($0) }
        }
        guard let bytes else { throw Failure(.usage, "\(option): cannot read '\(Terminal.safe(path))'") }
        guard bytes.count <= 4096 else { throw Failure(.usage, "\(option): '\(Terminal.safe(path))' is too large for a key") }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// `--trust`: where passive authentication's CSCAs come from.
struct MRTDTrustOptions: ParsableArguments {
    @Option(help: ArgumentHelp("CSCA certificates to chain the Document Signer to: a PEM or DER file, a folder of them, or an ICAO or German master list (.ml, its own signature checked). Repeatable.", valueName: "path"))
    var trust: [String] = []

    func validate() throws {
        for path in trust where !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("--trust: '\(Terminal.safe(path))' does not exist")
        }
    }

    /// The trust store, nil when no --trust was given (the chain is then not checked).
    func load() throws -> TrustStore? {
        guard !trust.isEmpty else { return nil }
        return try mrtdFailures { try TrustStore.load(paths: trust) }
    }
}
