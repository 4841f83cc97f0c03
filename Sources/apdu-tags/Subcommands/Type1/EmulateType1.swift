// `apdu emulate type1 CHIP`: a Type 1 tag (Topaz 96, Topaz 512) behind a PC/SC reader.
import ArgumentParser
import ISO7816
import VirtualCard

struct EmulateType1: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "type1",
        abstract: "A Type 1 tag (Broadcom Topaz 96 or Topaz 512) behind a PC/SC reader.",
        discussion: """
            apdu emulate type1 topaz512 --reader-form scm. The forms: acs (ACR122U: InDataExchange in direct \
            transmit; no READ8 or 8-byte writes, RSEG of segment 0 only), scm (SCM/Identiv FF 50-FF 60) and \
            read-binary (READ/UPDATE BINARY mapped onto the tag, as Microsoft's NFC stack does; no WRITE-NE).
            """)

    @Argument(help: ArgumentHelp("topaz96 or topaz512.", valueName: "chip"))
    var chip: String

    @Option(help: ArgumentHelp("How the reader carries Type 1 commands: acs, scm (the default) or read-binary.", valueName: "form"))
    var readerForm: Type1Reader.Form = .scm

    @Option(help: ArgumentHelp("The tag's 7-byte UID in hex (UID0 first, as in block 0).", valueName: "hex"))
    var uid: String?

    @Option(help: ArgumentHelp("Load the memory image from this hex file and save every change back to it.", valueName: "file"))
    var memory: String?

    @OptionGroup var connection: EmulatorConnection

    func validate() throws {
        if Type1TagModel.Chip.all[chip] == nil {
            throw ValidationError("unknown type1 chip '\(chip)'; known: \(Type1TagModel.Chip.all.keys.sorted().joined(separator: ", "))")
        }
        if let uid, (try? Hex.decode(uid))?.count != 7 { throw ValidationError("--uid must be 7 bytes in hex") }
    }

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) {
        try Type1Family.card(chip: chip, form: readerForm, uid: uid, memory: memory)
    }
}
