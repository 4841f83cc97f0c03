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
                do { session = try TagSession.open(readerOptions, trace: traceOptions) } catch let f as Failure where f.message.hasPrefix("no NDEF application") {
                    if output.json {
                        Terminal.print(JSON.object([("status", .string(NDEFStatus.notSupported.rawValue)), ("reason", .string(f.message))]).serialized)
                    } else {
                        Terminal.print("notSupported: \(f.message)")
                    }
                    return
                }
                let tag = session.tag
                let cc = tag.capabilityContainer
                var length: Int?
                if case .granted = cc.readAccess {
                    length = try? session.card.withTransaction { try tag.readNDEF().count }
                }
                try? session.card.disconnect()
                let canLock = tag.status == .readWrite
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(session.reader)), ("tag", session.tagJSON), ("status", .string(tag.status.rawValue)),
                        ("capacity", .int(cc.capacity)), ("length", length.map(JSON.int) ?? .null),
                        ("readAccess", .string(cc.readAccess.description)), ("writeAccess", .string(cc.writeAccess.description)),
                        ("canMakeReadOnly", .bool(canLock)), ("mle", .int(cc.mle)), ("mlc", .int(cc.mlc)),
                        ("fileID", .hex(cc.fileID)), ("maxFileSize", .int(cc.maxFileSize)),
                    ]).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(session.reader)): Type 4 tag, mapping \(cc.versionString)")
                    Terminal.print("  status: \(tag.status.rawValue)")
                    Terminal.print("  capacity: \(cc.capacity) bytes, message: \(length.map { "\($0) bytes" } ?? "unknown")")
                    Terminal.print("  read access: \(cc.readAccess), write access: \(cc.writeAccess)")
                    Terminal.print("  MLe \(cc.mle), MLc \(cc.mlc), NDEF file \(cc.fileID.hexString) of \(cc.maxFileSize) bytes")
                    Terminal.print("  can be made read-only: \(canLock ? "yes (apdu ndef-lock --yes)" : "no")")
                }
            }
        }
    }
}
