// `apdu emulate plus LEVEL`: a MIFARE Plus in SL0 (factory), SL1 (as a Classic) or SL3 (NDEF
// formatted, AN10787).
import APDUCommandLine
import ArgumentParser
import ISO7816
import VirtualCard

struct EmulatePlus: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "plus",
        abstract: "A MIFARE Plus (S, X, EV1, EV2) in SL0, SL1 or SL3.",
        discussion: """
            sl0: as shipped, every key FF…FF, waiting for WritePerso. sl1: a MIFARE Classic (Plus 2K/4K card name) \
            whose key 9003 is FF…FF for the switch to SL3. sl3: formatted for NDEF as NXP AN10787 lays it out: sector \
            0 (and 16) key A A0A1…A7 twice, other sectors key A D3F7 eight times, every key B and 9000-9003 B0 \
            sixteen times, a URI record. apdu emulate plus sl3 --generation ev1.
            """)

    @Argument(help: ArgumentHelp("sl0, sl1 or sl3.", valueName: "level"))
    var level: MifarePlusModel.Level

    @Option(help: ArgumentHelp("s, x, ev1 (the default) or ev2.", valueName: "generation"))
    var generation: MifarePlusModel.Generation = .ev1

    @Option(help: ArgumentHelp("32 (2K, the default) or 40 (4K).", valueName: "n"))
    var sectors: Int = 32

    @Option(help: ArgumentHelp("The 7-byte UID (default 04505D1AB76880, proxmark3's traced card).", valueName: "hex"))
    var uid: String?

    @Option(help: ArgumentHelp("The 56-byte signature Read_Sig returns on EV1/EV2 (default: zeros, an unsigned chip).", valueName: "hex"))
    var signature: String?

    @Option(help: ArgumentHelp("native (frames pass as they are, the default) or iso-only (a reader that passes only ISO 7816 APDUs).", valueName: "form"))
    var readerForm: MifarePlusModel.ReaderForm = .native

    @Option(help: ArgumentHelp("A hostile variant, for tests: \(MifarePlusModel.Hostile.allCases.map(\.rawValue).joined(separator: ", ")) (answered as done, not done).", valueName: "name"))
    var hostile: MifarePlusModel.Hostile?

    @OptionGroup var connection: EmulatorConnection

    func validate() throws {
        guard sectors == 32 || sectors == 40 else { throw ValidationError("--sectors: 32 (2K) or 40 (4K)") }
        if let uid, (try? Hex.decode(uid))?.count != 7 { throw ValidationError("--uid: 7 bytes in hex") }
        if let signature, (try? Hex.decode(signature))?.count != 56 { throw ValidationError("--signature: 56 bytes in hex") }
    }

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) {
        let uid = try self.uid.map { try Hex.decode($0) } ?? [0x04, 0x50, 0x5D, 0x1A, 0xB7, 0x68, 0x80]
        let signature = try self.signature.map { try Hex.decode($0) }
        let model: MifarePlusModel
        switch level {
        case .sl3:
            model = .ndefFormatted(generation, sectors: sectors, uid: uid, message: MifarePlusModel.presetMessage, signature: signature, readerForm: readerForm,
                                   hostile: hostile)
        case .sl0, .sl1:
            model = MifarePlusModel(generation, level: level, sectors: sectors, uid: uid, signature: signature, readerForm: readerForm, hostile: hostile)
        }
        return (model, "a MIFARE Plus \(generation.rawValue.uppercased()) \(sectors == 32 ? "2K" : "4K") in SL\(level.rawValue)\(readerForm == .isoOnly ? " behind a reader that passes only ISO 7816 APDUs" : "")"
                + (hostile.map { ", hostile: \($0.rawValue)" } ?? ""))
    }
}
