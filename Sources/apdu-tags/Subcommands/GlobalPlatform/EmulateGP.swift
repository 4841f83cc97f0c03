// `apdu emulate gp [scp02|scp03]`: a GlobalPlatform card manager for `apdu gp` to talk to.
import APDUCommandLine
import ArgumentParser
import ISO7816
import VirtualCard

struct EmulateGP: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "gp",
        abstract: "A GlobalPlatform card manager (Issuer Security Domain) with SCP02 or SCP03.",
        discussion: """
            The keys are the well-known test keys 40..4F (key version 20 for SCP02, 30 for SCP03) unless --key says \
            otherwise. The card counts failed EXTERNAL AUTHENTICATEs and locks itself after --max-failures (10, as \
            real cards do). It keeps a registry, loads CAP files (recording the package and its applets, never \
            running Java Card code) and its applets answer SELECT. --hostile makes it misbehave as the hostile \
            matrix of issue 52 does (see docs/globalplatform.md).
            """)

    @Argument(help: ArgumentHelp("scp02 or scp03 (default scp03).", valueName: "protocol"))
    var scp: CardManagerModel.SCP = .scp03

    @Option(help: ArgumentHelp("The i parameter, in hex (SCP02: 15, 55, or 35, 75 with R-MAC; SCP03: 00, 10, 70).", valueName: "hex"))
    var i: String?

    @Option(help: ArgumentHelp("The card's key (ENC = MAC = DEK), in hex: 16 bytes for SCP02, 16/24/32 for SCP03.", valueName: "hex"))
    var key: String?

    @Option(help: ArgumentHelp("The key version, in hex.", valueName: "hex"))
    var keyVersion: String?

    @Option(help: "Failed authentications before the card locks.")
    var maxFailures = 10

    @Option(help: "GET STATUS entries per answer before 63 10 (more data).")
    var pageSize = 8

    @Option(help: ArgumentHelp("A hostile variant: \(CardManagerModel.Hostile.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "name"))
    var hostile: CardManagerModel.Hostile?

    @OptionGroup var connection: EmulatorConnection

    func validate() throws {
        if let key, (try? Hex.decode(key)).map({ scp == .scp02 ? $0.count == 16 : [16, 24, 32].contains($0.count) }) != true {
            throw ValidationError("--key must be \(scp == .scp02 ? "16 bytes" : "16, 24 or 32 bytes") in hex")
        }
        if let i, (try? Hex.decode(i))?.count != 1 { throw ValidationError("--i is one byte in hex") }
        if let keyVersion, (try? Hex.decode(keyVersion))?.count != 1 { throw ValidationError("--key-version is one byte in hex") }
        if maxFailures < 1 || pageSize < 1 { throw ValidationError("--max-failures and --page-size are at least 1") }
    }

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) {
        let keyBytes = try key.map { try Hex.decode($0) } ?? Array(0x40...0x4F)
        let version = try keyVersion.map { try Hex.decode($0)[0] } ?? (scp == .scp02 ? 0x20 : 0x30)
        let card = CardManagerModel(scp, keys: .init(version: version, enc: keyBytes, mac: keyBytes, dek: keyBytes), i: try i.map { try Hex.decode($0)[0] },
                                    maxFailures: maxFailures, pageSize: pageSize, hostile: hostile)
        return (card, "a GlobalPlatform card manager, \(scp.rawValue.uppercased()) i=\(Hex.encode([card.i])), key version \(Hex.encode([version]))\(hostile.map { ", hostile: \($0.rawValue)" } ?? "")")
    }
}
