// `apdu emulate emv PROFILE`: a payment card under the emulator's own test CA.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import VirtualCard

struct EmulateEMV: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "emv",
        abstract: "A payment card (EMV) signed under the emulator's own test CA.",
        discussion: """
            apdu emulate emv visa --save-ca-keys ca.txt, then apdu emv read --ca-keys ca.txt. Profiles: visa (fDDA, \
            a log), mastercard (DDA, CDA offered), amex (SDA; GPO refused when 9F6E is zero), contact (a PSE with a \
            blocked application), interac (the AID list: 62 85, partial selection). --hostile makes the profile \
            misbehave as issue 48's reviews found (see docs/emv.md); the read must fail it, never verify it.
            """)

    @Argument(help: ArgumentHelp("visa, mastercard, amex, contact or interac.", valueName: "profile"))
    var profile: PaymentCardModel.Profile

    @Option(help: ArgumentHelp("Write the emulator's test CA keys (capk.txt lines) to this file.", valueName: "file"))
    var saveCaKeys: String?

    @Option(help: ArgumentHelp("A hostile variant of the profile: \(PaymentCardModel.Hostile.allCases.map { "\($0.rawValue) (\($0.profile.rawValue))" }.joined(separator: ", ")).",
                               valueName: "name"))
    var hostile: PaymentCardModel.Hostile?

    @OptionGroup var connection: EmulatorConnection

    func validate() throws {
        if let hostile, hostile.profile != profile {
            throw ValidationError("--hostile \(hostile.rawValue) is a variant of the \(hostile.profile.rawValue) profile, not \(profile.rawValue)")
        }
    }

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) {
        if let saveCaKeys {
            do { try PaymentCardModel.caKeyFile.write(toFile: saveCaKeys, atomically: true, encoding: .utf8) } catch {
                throw Failure(.unavailable, "--save-ca-keys \(Terminal.safe(saveCaKeys)): cannot write the file")
            }
        }
        if let hostile { return (PaymentCardModel(hostile: hostile), "a hostile \(profile.rawValue) payment card, \(hostile.rawValue) (test CA index E1)") }
        return (PaymentCardModel(profile), "a \(profile.rawValue) payment card (test CA index E1)")
    }
}
