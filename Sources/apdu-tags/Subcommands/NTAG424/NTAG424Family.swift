// NTAG 424 DNA in the CLI: `apdu emulate --ntag424` and the `apdu ntag424` group.
import APDUCommandLine
import ArgumentParser
import ISO7816
import VirtualCard

extension NTAG424TagModel.Hostile: ExpressibleByArgument {}

struct NTAG424Family: EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { APDUCommand.NTAG424.self }
    static let choosingFlags = ["--ntag424"]
    static var emulateForm: any EmulateForm.Type { EmulateNTAG424.self }

    @Flag(help: "Emulate an NTAG 424 DNA as shipped (all-zero keys, empty NDEF file): EV2, secure messaging, SDM.")
    var ntag424 = false

    var chosenBy: String? { ntag424 ? "--ntag424" : nil }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) { Self.card() }

    /// The tag as shipped, and the start line's description.
    static func card(tagTamper: Bool = false, hostile: NTAG424TagModel.Hostile? = nil) -> (card: any EmulatedCard, description: String) {
        let tag = NTAG424TagModel(tagTamper: tagTamper, hostile: hostile)
        return (ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [tag], uid: tag.uid),
                "NTAG 424 DNA\(tagTamper ? " TagTamper" : "") as shipped (UID \(tag.uid.hexString), all-zero keys)\(hostile.map { ", hostile: \($0.rawValue)" } ?? "")")
    }
}
