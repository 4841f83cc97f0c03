// `apdu plus info`: which MIFARE Plus, which level, its storage and UID, the originality signature
// checked, and the evidence for each claim. No key, no write.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags

extension APDUCommand {
    struct PlusInfo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Describe a MIFARE Plus: generation, storage, security level, UID, the NXP originality signature checked, and the evidence for each.",
            discussion: """
                Needs no key and writes nothing. Asks GetVersion (EV1, EV2), reads the ATS's historical bytes, and only \
                where those leave the level open sends the WritePerso probe (block 9090, which no card has: SL0 answers \
                09, SL3 0B). Read_Sig's signature (secp224r1 over the UID) is checked with NXP's MIFARE Plus EV1 and EV2 \
                keys; one that does not verify is reported (exit 0). A card in SL1 is told by the reader's PC/SC card name \
                (0036/0037); one the reader calls a MIFARE Classic (0001/0002) by its answer to GetVersion (EV1, EV2); \
                an S or X the reader calls a Classic cannot be told from one here.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        func run() throws {
            try reportingPlusFailures {
                let (reader, id) = try withPlusCard(readerOptions, traceOptions) { reader, transport, atr in
                    let uid = try? transport.send(.getUID)
                    let known = uid.flatMap { $0.statusWord == .success && (4...10).contains($0.data.count) ? $0.data : nil }
                    return (reader, try MifarePlusCard.identify(transport, atr: atr, uid: known).1)
                }
                let verdict: String
                switch (id.signature, id.signatureKey) {
                case (nil, _): verdict = id.generation.hasVersion ? "not given (Read_Sig unanswered)" : "none (the \(id.generation) has no Read_Sig)"
                case (_?, let key?): verdict = "valid (\(key.name))"
                case (let sig?, nil) where sig.allSatisfy({ $0 == 0 }): verdict = "blank (all zeros): not signed by NXP"
                case (_?, nil): verdict = id.uid == nil ? "not checked: no UID to check it against" : "INVALID: it does not verify with NXP's MIFARE Plus keys"
                }
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)), ("generation", .string(id.generation.rawValue)), ("name", .string(id.summary)),
                        ("securityLevel", id.level.map { .int($0.rawValue) } ?? .null), ("storage", id.storage.map(JSON.int) ?? .null),
                        ("uid", id.uid.map { .hex($0) } ?? .null), ("historicalBytes", .hex(id.historicalBytes)),
                        ("version", id.version.map { .hex($0) } ?? .null),
                        ("originality", .object([("signature", id.signature.map { .hex($0) } ?? .null),
                                                 ("valid", id.signature == nil || id.uid == nil ? .null : .bool(id.signatureKey != nil)),
                                                 ("key", id.signatureKey.map { .string($0.name) } ?? .null), ("words", .string(verdict))])),
                        ("evidence", .array(id.evidence.map { .object([("claim", .string($0.claim)), ("evidence", .string($0.evidence))]) })),
                    ]).serialized)
                    return
                }
                Terminal.print("\(Terminal.safe(reader)): \(id.summary)")
                if let uid = id.uid { Terminal.print("  UID \(uid.hexString)") }
                if let storage = id.storage { Terminal.print("  storage \(storage) bytes (\(id.sectors!) sectors)") } else { Terminal.print("  storage unknown (nothing the card said tells 2K from 4K)") }
                Terminal.print("  originality signature: \(verdict)")
                for e in id.evidence { Terminal.print("  \(e.claim): \(Terminal.safe(e.evidence))") }
            }
        }
    }
}
