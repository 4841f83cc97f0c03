// `apdu emulate type2 CHIP`: a Type 2 tag (Ultralight, NTAG21x) behind a PC/SC reader.
import ArgumentParser
import VirtualCard

struct EmulateType2: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "type2",
        abstract: "A Type 2 tag (MIFARE Ultralight, NTAG21x) behind a PC/SC reader.",
        discussion: "apdu emulate type2 ntag215 --reader-model acr122u. The old form: apdu emulate --type2 CHIP.")

    @Argument(help: ArgumentHelp("ntag210, ntag212, ntag213, ntag215, ntag216, ultralight, ultralight-c, ultralight-ev1-mf0ul11, … (an unknown name lists them).", valueName: "chip"))
    var chip: String

    @Option(help: ArgumentHelp("The tag's 7-byte UID in hex.", valueName: "hex"))
    var uid: String?

    @Option(help: ArgumentHelp("The 32-byte originality signature READ_SIG returns (default: zeros, an unsigned chip).", valueName: "hex"))
    var signature: String?

    @Option(help: ArgumentHelp("Load the memory image from this hex file and save every change back to it.", valueName: "file"))
    var memory: String?

    @Option(help: ArgumentHelp("The reader around the tag: storage (pseudo-APDUs only; the default), transparent (PC/SC Part 3) or acr122u.", valueName: "model"))
    var readerModel: ContactlessReader.Dialect?

    @OptionGroup var connection: EmulatorConnection

    func validate() throws { try Type2Family.check(chip: chip, chipOption: "type2 chip", uid: uid, signature: signature) }

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) {
        try Type2Family.card(chip: chip, uid: uid, signature: signature, memory: memory, readerModel: readerModel)
    }
}
