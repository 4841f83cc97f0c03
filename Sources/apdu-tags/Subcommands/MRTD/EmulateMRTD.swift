// `apdu emulate mrtd`: a passport chip (ICAO 9303 eMRTD), the specimen or a document folder.
import ArgumentParser
import VirtualCard

struct EmulateMRTD: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "mrtd",
        abstract: "A passport chip (ICAO 9303 eMRTD): BAC, PACE, chip and active authentication; the specimen unless --data.",
        discussion: "apdu emulate mrtd --save-specimen DIR, apdu emulate mrtd --data DIR. The old form: apdu emulate --mrtd.")

    @Option(help: ArgumentHelp("Serve the document in this folder (EF.COM.bin, EF.SOD.bin, DG1.bin … as 'apdu mrtd read --out' writes; ActiveAuthenticationKey.pem, ChipAuthenticationKey.pem and CAN.txt optional).", valueName: "dir"))
    var data: String?

    @Option(help: ArgumentHelp("Write the specimen (its files, keys, CAN.txt and its CSCA as CSCA.pem, for --trust) into this folder, then serve it.", valueName: "dir"))
    var saveSpecimen: String?

    @Option(help: ArgumentHelp("Access control: both (default), bac (BAC only, no EF.CardAccess) or pace (PACE only).", valueName: "which"))
    var access: MRTDEmulatedAccess = .both

    @Option(help: ArgumentHelp("The specimen's card access number (default 123456).", valueName: "digits"))
    var can: String?

    @Flag(help: "No extended length (a bare 67 00 to any extended APDU).")
    var shortOnly = false

    @Option(help: ArgumentHelp("The largest READ BINARY Ne the chip takes (more is refused with 67 00).", valueName: "n"))
    var largestLe: Int?

    @Flag(help: "Refuse too large an Le with a bare 67 00 (outside secure messaging), as some chips do.")
    var bareWrongLength = false

    @OptionGroup var connection: EmulatorConnection

    var settings: MRTDFamily.Settings {
        MRTDFamily.Settings(data: data, saveSpecimen: saveSpecimen, access: access, can: can, shortOnly: shortOnly,
                            largestLe: largestLe, bareWrongLength: bareWrongLength)
    }

    func validate() throws { try settings.check(prefix: "--") }

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) { try settings.card() }
}
