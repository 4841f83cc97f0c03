// A passport through the public API: a session delivers the chip as an ISO 7816 tag, and its
// passport reader opens, reads and proves it, each call on the tag's queue.
import ISO7816
import MRTD
import Synchronization
import TagReader
import Testing
import TestSupport
import VirtualCard

@Suite("public API: a passport through pcscd")
struct PassportReaderTests {
    static let specimen: MRTDSpecimen = {
        var options = MRTDSpecimen.Options()
        options.seed = Array("public API passport".utf8)
        options.csca = .ecdsa(parameterID: 12)
        options.documentSigner = .ecdsa(parameterID: 12)
        return try! MRTDSpecimen.generate(options)
    }()

    static var mrzKey: MRTDAccessKey {
        let line = Array(specimen.mrz[1])
        return try! MRTDAccessKey.mrz(documentNumber: String(line[0..<9]), dateOfBirth: String(line[13..<19]), dateOfExpiry: String(line[21..<27]))
    }

    @Test("chip info, then the whole document with the MRZ: PACE, every group, both proofs, passive authentication with the CSCA")
    func readDocument() async throws {
        let chip = MRTDChip(document: Self.specimen.document)
        let exchanges = Mutex([Exchange]())
        try await withInsertedCard(chip) { inserted in
            let session = TagReaderSession(reader: inserted.reader, backups: MemoryBackupStore(), observer: { e in exchanges.withLock { $0.append(e) } })
            guard case let .iso7816(tag) = try await session.firstTag(timeout: .seconds(10)) else { Issue.record("a passport is delivered as .iso7816"); return }
            let info = try await tag.passportReader().chipInfo()
            #expect(info.isMRTD && info.hasApplication && info.preferredPACE?.mapping == .generic)
            let passport = tag.passportReader()
            let read = try await passport.readDocument(key: Self.mrzKey)
            #expect(read.access.method == .pace && read.protectedDataGroups == [3, 4])
            let report = read.verify(trust: TrustStore(certificates: [try Certificate(der: Self.specimen.cscaCertificate)]))
            #expect(report.genuine, "\(report.failures)")
            #expect(report.verification.mrz?.surname == "ERIKSSON")
            // The session's observer saw PACE's encrypted nonce marked secret.
            let marked = exchanges.withLock { $0.filter(\.secretResponse) }
            #expect(marked.count == 1 && marked.first?.command.prefix(2) == [0x10, 0x86])
        }
    }

    @Test("BAC step by step: establishAccess, readFile, active authentication; the access cryptograms marked secret")
    func stepByStep() async throws {
        let chip = MRTDChip(document: Self.specimen.document)
        let exchanges = Mutex([Exchange]())
        try await withInsertedCard(chip) { inserted in
            let session = TagReaderSession(reader: inserted.reader, backups: MemoryBackupStore(), observer: { e in exchanges.withLock { $0.append(e) } })
            guard case let .iso7816(tag) = try await session.firstTag(timeout: .seconds(10)) else { Issue.record("not ISO 7816"); return }
            let passport = tag.passportReader()
            let access = try await passport.establishAccess(.bac, key: Self.mrzKey)
            #expect(access.method == .bac && chip.access == .bac)
            guard case let .read(dg1) = try await passport.readFile(.dataGroup(1)!) else { Issue.record("DG1"); return }
            #expect(try DataGroup1(decoding: dg1).mrz.documentNumber == "L898902C")
            guard case let .read(dg15) = try await passport.readFile(.dataGroup(15)!) else { Issue.record("DG15"); return }
            let aa = try await passport.activeAuthentication(dg15: try ChipPublicKey(encoded: dg15), dg14: nil)
            #expect(aa.signatureValid)
            let externalAuthenticate = exchanges.withLock { $0.first { $0.command.count > 1 && $0.command[1] == 0x82 } }
            #expect(externalAuthenticate?.secretRange == 5..<45 && externalAuthenticate?.secretResponse == true)
            #expect(Redaction.hex(externalAuthenticate!).contains("** ** **") && Redaction.responseHex(externalAuthenticate!).hasSuffix("** 90 00"))
            #expect(try await passport.statistics().exchanges > 5)
        }
    }
}
