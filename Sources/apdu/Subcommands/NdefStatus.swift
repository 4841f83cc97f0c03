import ArgumentParser
import ISO7816
import NFCTags
import PCSC

extension APDUCommand {
    struct NdefStatus: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ndef-status",
            abstract: "Say whether a tag is readWrite, readOnly or notSupported, its capacity and current length.")

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        func run() throws {
            try reportingFailures {
                let session: TagSession
                let length: Int?
                do {
                    (session, length) = try TagSession.withTag(readerOptions, trace: traceOptions) { session in
                        (session, try? session.tag.readNDEF().count)
                    }
                } catch let f as Failure where f.status == .unexpected {
                    // No NDEF application, not formatted, or not an NFC Forum tag: Core NFC's notSupported.
                    if output.json {
                        Terminal.print(JSON.object([("status", .string(NDEFStatus.notSupported.rawValue)), ("reason", .string(f.message))]).serialized)
                    } else {
                        Terminal.print("notSupported: \(f.message)")
                    }
                    return
                }
                let tag = session.tag
                let canLock = tag.status == .readWrite
                var details: [(String, JSON)] = []
                var lines: [String] = []
                if let t4 = tag as? Type4Tag {
                    let cc = t4.capabilityContainer
                    details = [("readAccess", .string(cc.readAccess.description)), ("writeAccess", .string(cc.writeAccess.description)),
                               ("mle", .int(cc.mle)), ("mlc", .int(cc.mlc)), ("fileID", .hex(cc.fileID)), ("maxFileSize", .int(cc.maxFileSize))]
                    lines = ["  read access: \(cc.readAccess), write access: \(cc.writeAccess)",
                             "  MLe \(cc.mle), MLc \(cc.mlc), NDEF file \(cc.fileID.hexString) of \(cc.maxFileSize) bytes"]
                } else if let t2 = tag as? Type2Tag {
                    let cc = t2.capabilityContainer
                    details = [("capabilityContainer", .hex(cc.bytes)), ("dataAreaSize", .int(cc.dataAreaSize)),
                               ("staticLockBytes", .hex(t2.header[10...11]))]
                    lines = ["  CC \(Hex.encode(cc.bytes, separator: " ")): data area \(cc.dataAreaSize) bytes, read access \(cc.readAccess), write access \(cc.writeAccess)",
                             "  static lock bytes \(Hex.encode(t2.header[10...11], separator: " ")); chip: \(t2.chip.name) (from the \(t2.chip.evidence))"]
                }
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(session.reader)), ("tag", session.tagJSON), ("status", .string(tag.status.rawValue)),
                        ("capacity", .int(tag.capacity)), ("length", length.map(JSON.int) ?? .null),
                        ("canMakeReadOnly", .bool(canLock)),
                    ] + details).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(session.reader)): \(session.tagDescription)")
                    Terminal.print("  status: \(tag.status.rawValue)")
                    Terminal.print("  capacity: \(tag.capacity) bytes, message: \(length.map { "\($0) bytes" } ?? "unreadable")")
                    for line in lines { Terminal.print(line) }
                    Terminal.print("  can be made read-only: \(canLock ? "yes (apdu ndef-lock --yes)" : "no")")
                }
            }
        }
    }
}
