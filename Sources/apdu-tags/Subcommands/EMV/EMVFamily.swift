// Payment cards in the CLI's family list: `apdu emulate emv PROFILE` and the `apdu emv` group.
import APDUCommandLine
import ArgumentParser
import VirtualCard

extension PaymentCardModel.Profile: ExpressibleByArgument {}
extension PaymentCardModel.Hostile: ExpressibleByArgument {}

struct EMVFamily: EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { APDUCommand.EMVCommand.self }
    static let choosingFlags: [String] = []
    static var emulateForm: any EmulateForm.Type { EmulateEMV.self }

    var chosenBy: String? { nil }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) {
        throw Failure(.usage, "a payment card is emulated with `apdu emulate emv visa|mastercard|amex|contact|interac`")
    }
}
