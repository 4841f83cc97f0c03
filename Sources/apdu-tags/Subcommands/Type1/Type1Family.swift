// Type 1 tags (Topaz) in the CLI: `apdu emulate type1 CHIP`; the NDEF commands, `tag-info` and
// `transceive` serve them. No old `apdu emulate --type1` flag: the family came after the forms.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import ISO7816
import VirtualCard

extension Type1Reader.Form: ExpressibleByArgument {}

struct Type1Family: EmulatedFamily {
    static let choosingFlags: [String] = []
    static var emulateForm: any EmulateForm.Type { EmulateType1.self }

    var chosenBy: String? { nil }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) {
        throw Failure(.usage, "a Type 1 tag is emulated with `apdu emulate type1 topaz96|topaz512`")
    }

    /// The tag behind its reader, and the start line's description.
    static func card(chip name: String, form: Type1Reader.Form, uid: String?, memory: String?) throws -> (card: any EmulatedCard, description: String) {
        let chip = Type1TagModel.Chip.all[name]!
        var image: [UInt8]?
        if let memory, FileManager.default.fileExists(atPath: memory) {
            image = try readMessageFile(memory, option: "--memory")
            guard image!.count == chip.memorySize else {
                throw Failure(.badData, "--memory \(memory): \(image!.count) bytes; a \(chip.name) has \(chip.memorySize)")
            }
        }
        let uidBytes = try uid.map { try Hex.decode($0) } ?? image.map { Array($0[0..<7]) } ?? [0xB2, 0x56, 0x54, 0x00, 0x1A, 0x2B, 0x25]
        let tag = Type1TagModel(chip: chip, uid: uidBytes, memory: image)
        if let memory {
            tag.onChange = { saveMemoryImage($0, to: memory, bytesPerLine: 8) }
        }
        return (Type1Reader(form, tag: tag), "\(chip.name) (Type 1, \(chip.memorySize) bytes, HR \(Hex.encode([chip.hr0, chip.hr1]))) behind a reader of the \(form.rawValue) form")
    }
}
