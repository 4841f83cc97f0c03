// MIFARE Plus in the CLI's family list: `apdu emulate plus LEVEL` and the `apdu plus` group.
import APDUCommandLine
import ArgumentParser
import VirtualCard

extension MifarePlusModel.Generation: ExpressibleByArgument {}
extension MifarePlusModel.Level: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument.lowercased() {
        case "sl0": self = .sl0
        case "sl1": self = .sl1
        case "sl3": self = .sl3
        default: return nil
        }
    }
}
extension MifarePlusModel.ReaderForm: ExpressibleByArgument {}
extension MifarePlusModel.Hostile: ExpressibleByArgument {}

struct MifarePlusFamily: EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { APDUCommand.Plus.self }
    static let choosingFlags: [String] = []
    static var emulateForm: any EmulateForm.Type { EmulatePlus.self }

    var chosenBy: String? { nil }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) {
        throw Failure(.usage, "a MIFARE Plus is emulated with `apdu emulate plus sl0|sl1|sl3`")
    }
}
