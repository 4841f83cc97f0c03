// `apdu mrtd read`: read a passport or ID card with its MRZ or CAN, and prove it genuine.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import Glibc
import ISO7816
import MRTD

extension MRTDAccessMethod: ExpressibleByArgument {}

extension APDUCommand {
    struct MRTDRead: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "read",
            abstract: "Read a passport or ID card with its MRZ or CAN, and prove it genuine.",
            discussion: """
                Opens the chip with PACE when it offers it (else BAC), reads EF.COM, EF.SOD and every data group they list \
                (DG3/DG4 are reported as protected: they need terminal authentication), runs chip authentication (DG14) \
                and active authentication (DG15), and verifies every data group's hash, the Document Signer's signature \
                and, with --trust, its chain to a CSCA. The document is called genuine only when every step holds: a chip that \
                withholds DG14 or DG15 while EF.SOD lists them is a copy of the data on another chip, not the document.

                The key: --mrz (the printed lines; check digits verified), --document-number with --birth and --expiry, or \
                --can; from a file with --mrz-file/--can-file, or from $APDU_MRTD_MRZ/$APDU_MRTD_CAN, so that it stays out \
                of shell history. It is never printed, logged, traced or recorded; --trace shows the protected APDUs with \
                BAC's and PACE's password cryptograms as **. The output holds the document's data: that is what was asked.

                Exit codes: 0 read and proven as far as asked; 1 the chip refused (not this document's key, PACE failed \
                without --allow-bac-fallback, no face with --face); 64 usage; 65 not proven genuine (a hash, the \
                signature, the chain, chip or active authentication failed; a data group EF.SOD lists, or DG1 or DG2, was \
                withheld (only DG3/DG4 refused with 69 82 are excused); a proof the document offers was withheld, refused, \
                unusable or could not finish; EF.CardSecurity's signature did not verify for PACE-CAM; the access downgraded: \
                BAC while the signed DG14 lists PACE, or no PACE-CAM while DG14 lists it and no other proof held); 69 no reader or \
                card; 74 card removed or I/O. --data-groups reads the groups named, listed in EF.COM or not.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var keyOptions: MRTDKeyOptions
        @OptionGroup var trustOptions: MRTDTrustOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        @Option(help: ArgumentHelp("Access control: auto (PACE when the chip offers it, else BAC), pace or bac.", valueName: "method"))
        var access: MRTDAccessMethod = .auto

        @Flag(help: "When PACE fails, try BAC (the output says it happened). Without it a failed PACE is an error.")
        var allowBACFallback = false

        @Option(help: ArgumentHelp("Write the face (DG2) here as the chip served it; the extension is set to the image's format (.jpg, .jp2, .j2k).", valueName: "file"))
        var face: String?

        @Option(help: ArgumentHelp("Write every file read, raw, into this folder (EF.COM.bin, EF.SOD.bin, DG1.bin …), for 'apdu mrtd verify'.", valueName: "dir"))
        var out: String?

        @Option(help: ArgumentHelp("Read only these data groups (e.g. 1,2,11), listed in EF.COM or not; default DG1, DG2 and every one EF.COM or EF.SOD lists.", valueName: "list"))
        var dataGroups: String?

        @Flag(help: "Do not run chip authentication (DG14).")
        var noChipAuthentication = false

        @Flag(help: "Do not run active authentication (DG15).")
        var noActiveAuthentication = false

        func validate() throws {
            if let dataGroups { _ = try Self.groups(dataGroups) }
            if let face, face.isEmpty { throw ValidationError("--face needs a file name") }
        }

        static func groups(_ text: String) throws -> Set<Int> {
            var out: Set<Int> = []
            for part in text.split(separator: ",") {
                let trimmed = part.filter { $0 != " " }.uppercased()
                let digits = trimmed.hasPrefix("DG") ? String(trimmed.dropFirst(2)) : trimmed
                guard let n = Int(digits), (1...16).contains(n) else {
                    throw ValidationError("--data-groups: '\(Terminal.safe(String(part)))' is not a data group number 1-16")
                }
                out.insert(n)
            }
            guard !out.isEmpty else { throw ValidationError("--data-groups: no data group given") }
            return out
        }

        func run() throws {
            try reportingFailures {
                let key = try keyOptions.key()
                let trust = try trustOptions.load()
                var request = MRTDReadRequest()
                request.access = access
                request.dataGroups = try dataGroups.map(Self.groups)
                request.chipAuthentication = !noChipAuthentication
                request.activeAuthentication = !noActiveAuthentication
                var options = MRTDReader.Options()
                options.allowBACFallback = allowBACFallback
                let progress = Progress("reading", output: output, trace: traceOptions)
                let (readerName, read) = try withMRTDReader(readerOptions, traceOptions, options: options) { name, _, passport in
                    let read = try passport.readDocument(key: key, request: request) { file, done, total in progress.update(done, of: total, file) }
                    return (name, read)
                }
                progress.finish()
                var view = MRTDView(report: read.verify(trust: trust), read: read, reader: readerName, trustGiven: trust != nil)
                if let out { try writeDump(read.dump, to: out) }
                // The document was read: its summary is printed even when the face cannot be written.
                var faceFailure: Failure?
                if let face {
                    do { view.faceFile = try writeFace(view, to: face) } catch let failure as Failure { faceFailure = failure }
                }
                try finish(view, json: output.json, then: faceFailure)
            }
        }
    }
}

/// Prints the view and ends with the exit code it calls for: 0 when proven as far as asked,
/// 65 with the first reason otherwise, else `then` (a face that could not be written).
func finish(_ view: MRTDView, json: Bool, then later: Failure? = nil) throws {
    if json {
        Terminal.print(view.json.serialized)
    } else {
        for line in view.lines { Terminal.print(line) }
    }
    let unproven = view.unproven
    if let first = unproven.first {
        throw Failure(.badData, "not proven genuine: \(first)" + (unproven.count > 1 ? " (and \(unproven.count - 1) more)" : ""))
    }
    if let later { throw later }
}

/// Writes the face as served under the extension of its format; returns the path written.
/// The extension given is kept when it names the format (`.jpeg` for JPEG too); another one is
/// replaced, no extension gets one: the bytes are never converted.
func writeFace(_ view: MRTDView, to path: String) throws -> String {
    guard let face = view.face else {
        if case let .failure(error)? = view.verification.dataGroups[2] { throw Failure(.badData, "--face: \(error.description)") }
        throw Failure(.unexpected, "--face: the document has no face image (DG2 was not read)")
    }
    let format = face.image.format
    let accepted: [String]
    switch format {
    case .jpeg: accepted = ["jpg", "jpeg", "jpe"]
    case .jpeg2000: accepted = ["jp2"]
    case .jpeg2000Codestream: accepted = ["j2k", "j2c", "jpc"]
    default: accepted = [format.fileExtension]
    }
    let slash = path.lastIndex(of: "/")
    let name = slash.map { path[path.index(after: $0)...] } ?? Substring(path)
    var target = path
    if let dot = name.lastIndex(of: "."), dot != name.startIndex {
        let given = name[name.index(after: dot)...].lowercased()
        if !accepted.contains(given) {
            target = String(path[..<dot]) + "." + format.fileExtension
            // No conversion (a PNG, say): image libraries would weigh on every command's start.
            Terminal.warning("--face: the image is \(format.rawValue.uppercased()), written as served to \(target) (no conversion to .\(given))")
        }
    } else {
        target = path + "." + format.fileExtension
    }
    try writePrivate(face.image.bytes, to: target, option: "--face")
    return target
}

/// Writes every file of the dump into `directory` (created when missing), readable by the
/// owner only: it is someone's identity document.
func writeDump(_ dump: MRTDDump, to directory: String) throws {
    if !FileManager.default.fileExists(atPath: directory) {
        guard mkdir(directory, 0o700) == 0 else {
            throw Failure(.usage, "--out: cannot create '\(Terminal.safe(directory))': \(String(cString: strerror(errno)))")
        }
    }
    for file in dump.files {
        try writePrivate(file.bytes, to: directory.hasSuffix("/") ? directory + file.name : directory + "/" + file.name, option: "--out")
    }
}
