// `apdu mrtd verify`: re-verify a dump offline, without the card.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import MRTD

extension APDUCommand {
    struct MRTDVerify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Verify a document read earlier with 'apdu mrtd read --out DIR', without the card.",
            discussion: """
                Decodes the files (EF.COM.bin, EF.SOD.bin, DG1.bin … DG16.bin) and runs passive authentication: every \
                data group's hash against EF.SOD, the Document Signer's signature and, with --trust, its chain to a CSCA. \
                Chip and active authentication need the chip, so offline the chip is never proven genuine; exit 0 means \
                the data is what the issuer signed, as far as asked. Exit codes: 0 proven as far as asked; 64 usage; 65 \
                not proven (a step failed or could not run) or a file that does not decode.
                """)

        @Argument(help: ArgumentHelp("The folder 'apdu mrtd read --out' wrote.", valueName: "dir"))
        var directory: String

        @OptionGroup var trustOptions: MRTDTrustOptions
        @OptionGroup var output: OutputOptions

        @Option(help: ArgumentHelp("Write the face (DG2) here as stored; the extension is set to the image's format.", valueName: "file"))
        var face: String?

        func run() throws {
            try reportingFailures {
                guard FileManager.default.fileExists(atPath: directory) else {
                    throw Failure(.usage, "'\(Terminal.safe(directory))' does not exist (a folder 'apdu mrtd read --out' wrote)")
                }
                let trust = try trustOptions.load()
                let dump = try mrtdFailures { try MRTDDump(directory: directory) }
                var view = MRTDView(report: MRTDReport(dump: dump, trust: trust), read: nil, reader: nil, trustGiven: trust != nil)
                var faceFailure: Failure?
                if let face {
                    do { view.faceFile = try writeFace(view, to: face) } catch let failure as Failure { faceFailure = failure }
                }
                try finish(view, json: output.json, then: faceFailure)
            }
        }
    }
}
