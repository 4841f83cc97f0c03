// GlobalPlatform cards in the CLI's family list: `apdu emulate gp` and the `apdu gp` group.
import APDUCommandLine
import ArgumentParser
import VirtualCard

extension CardManagerModel.SCP: ExpressibleByArgument {}
extension CardManagerModel.Hostile: ExpressibleByArgument {}

struct GlobalPlatformFamily: EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { APDUCommand.GPCommand.self }
    static let choosingFlags: [String] = []
    static var emulateForm: any EmulateForm.Type { EmulateGP.self }

    var chosenBy: String? { nil }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) {
        throw Failure(.usage, "a GlobalPlatform card is emulated with `apdu emulate gp [scp02|scp03]`")
    }
}
