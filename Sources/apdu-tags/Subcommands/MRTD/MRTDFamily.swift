// Passports and ID cards in the CLI: `apdu emulate --mrtd` and the `apdu mrtd` group.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import VirtualCard

/// `--mrtd-access`: which access control the emulated chip opens with.
enum MRTDEmulatedAccess: String, ExpressibleByArgument, CaseIterable {
    case both, bac, pace
    var configuration: MRTDChip.Configuration.AccessControl {
        switch self {
        case .both: return .bacAndPACE
        case .bac: return .bac
        case .pace: return .pace
        }
    }
}

struct MRTDFamily: EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { APDUCommand.MRTDCommand.self }
    static let choosingFlags = ["--mrtd"]
    static var emulateForm: any EmulateForm.Type { EmulateMRTD.self }

    @Flag(help: "Emulate a passport chip (ICAO 9303 eMRTD): BAC, PACE, chip and active authentication, the specimen document unless --data.")
    var mrtd = false

    @Option(help: ArgumentHelp("--mrtd: serve the document in this folder (EF.COM.bin, EF.SOD.bin, DG1.bin … as 'apdu mrtd read --out' writes; ActiveAuthenticationKey.pem, ChipAuthenticationKey.pem and CAN.txt optional).", valueName: "dir"))
    var data: String?

    @Option(help: ArgumentHelp("--mrtd: write the specimen (its files, keys, CAN.txt and its CSCA as CSCA.pem, for --trust) into this folder, then serve it.", valueName: "dir"))
    var saveSpecimen: String?

    @Option(help: ArgumentHelp("--mrtd: access control: both (default), bac (BAC only, no EF.CardAccess) or pace (PACE only).", valueName: "which"))
    var mrtdAccess: MRTDEmulatedAccess = .both

    @Option(help: ArgumentHelp("--mrtd: the specimen's card access number (default 123456).", valueName: "digits"))
    var mrtdCan: String?

    @Flag(help: "--mrtd: no extended length (a bare 67 00 to any extended APDU).")
    var mrtdShortOnly = false

    @Option(help: ArgumentHelp("--mrtd: the largest READ BINARY Ne the chip takes (more is refused with 67 00).", valueName: "n"))
    var mrtdLargestLe: Int?

    @Flag(help: "--mrtd: refuse too large an Le with a bare 67 00 (outside secure messaging), as some chips do.")
    var mrtdBareWrongLength = false

    var chosenBy: String? { mrtd ? "--mrtd" : nil }

    /// The flags as the settings `apdu emulate mrtd` takes.
    var settings: Settings {
        Settings(data: data, saveSpecimen: saveSpecimen, access: mrtdAccess, can: mrtdCan, shortOnly: mrtdShortOnly,
                 largestLe: mrtdLargestLe, bareWrongLength: mrtdBareWrongLength)
    }

    func validate(shared: EmulationOptions) throws {
        let own = [data != nil ? "--data" : nil, saveSpecimen != nil ? "--save-specimen" : nil, mrtdAccess != .both ? "--mrtd-access" : nil,
                   mrtdCan != nil ? "--mrtd-can" : nil, mrtdShortOnly ? "--mrtd-short-only" : nil, mrtdLargestLe != nil ? "--mrtd-largest-le" : nil,
                   mrtdBareWrongLength ? "--mrtd-bare-wrong-length" : nil].compactMap { $0 }
        if !mrtd, let first = own.first { throw ValidationError("\(first) is for --mrtd") }
        try settings.check(prefix: "--mrtd-")
    }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) { try settings.card() }

    /// The specimen is made from a fixed seed: the same document, keys and CSCA at every start,
    /// so a CSCA saved once keeps verifying it.
    static let specimenSeed = Array("apdu emulate --mrtd specimen".utf8)

    /// What the emulated chip serves and how it behaves (`apdu emulate mrtd` and the old `--mrtd` flags).
    struct Settings {
        var data: String?
        var saveSpecimen: String?
        var access: MRTDEmulatedAccess = .both
        var can: String?
        var shortOnly = false
        var largestLe: Int?
        var bareWrongLength = false

        /// `prefix` is what the options' names start with (`--mrtd-` for the old flags, `--` for the new).
        func check(prefix: String) throws {
            if data != nil && (saveSpecimen != nil || can != nil) {
                throw ValidationError("--data serves a document of its own: --save-specimen and \(prefix)can are for the specimen")
            }
            if let can, can.isEmpty || can.count > 12 || !can.allSatisfy(\.isASCII) || !can.allSatisfy(\.isNumber) {
                throw ValidationError("\(prefix)can: a card access number is 1-12 digits")
            }
            if let n = largestLe, !(1...65536).contains(n) { throw ValidationError("\(prefix)largest-le must be 1-65536") }
        }

        /// The chip and the start line's description (the specimen's key is printed: it opens nothing else).
        func card() throws -> (card: any EmulatedCard, description: String) {
            var configuration = MRTDChip.Configuration()
            configuration.accessControl = access.configuration
            configuration.extendedLength = !shortOnly
            if let largestLe { configuration.largestLe = largestLe }
            if bareWrongLength { configuration.oversizedLe = .unprotected }
            let accessText = ["both": "BAC and PACE", "bac": "BAC only", "pace": "PACE only"][access.rawValue] ?? ""
            if let data {
                let document: MRTDDocument
                do { document = try MRTDDocument(directory: data) } catch { throw Failure(.badData, "--data: \(error)") }
                return (MRTDChip(document: document, configuration: configuration), "the eMRTD in \(data) (\(accessText))")
            }
            var options = MRTDSpecimen.Options()
            options.seed = MRTDFamily.specimenSeed
            if let can { options.can = can }
            // A BAC-only chip serves a BAC-only document: no PACEInfo in its signed DG14 either,
            // or every read under --access auto would rightly call the missing EF.CardAccess a
            // downgrade (issue 48).
            if access.rawValue == "bac" { options.pace = [] }
            let specimen: MRTDSpecimen
            do { specimen = try MRTDSpecimen.generate(options) } catch { throw Failure(.unavailable, "the specimen: \(error)") }
            if let saveSpecimen {
                do { try specimen.document.write(to: saveSpecimen) } catch { throw Failure(.usage, "--save-specimen: \(error)") }
            }
            let h = options.holder
            let description = "an eMRTD specimen (\(accessText); MRZ key \(h.documentNumber) / \(h.dateOfBirth) / \(h.dateOfExpiry), CAN \(options.can)"
                + (saveSpecimen.map { "; saved with its CSCA in \($0)" } ?? "") + ")"
            return (MRTDChip(document: specimen.document, configuration: configuration), description)
        }
    }
}
