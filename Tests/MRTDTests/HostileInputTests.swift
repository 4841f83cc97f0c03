import CardCrypto
import ISO7816
@testable import MRTD
import Testing

/// Every chip answer truncated, lengthened or altered: a typed error or a verified result,
/// never a trap and never an unverified success.
@Suite("Hostile chip answers")
struct HostileInputTests {
    static func mutations(of answer: [UInt8], _ generator: inout SplitMix) -> [[UInt8]] {
        var out: [[UInt8]] = []
        let body = Array(answer.dropLast(2)), sw = Array(answer.suffix(2))
        for n in 0..<body.count { out.append(Array(body.prefix(n)) + sw) }
        out.append(body + [0x00, 0x81, 0xFF] + sw)
        for _ in 0..<60 where !body.isEmpty {
            var m = body
            m[Int(generator.next() % UInt64(m.count))] = UInt8(truncatingIfNeeded: generator.next())
            out.append(m + sw)
        }
        out.append([0x90])
        return out
    }

    @Test("PACE (G.1) with each chip answer mutated: errors only, and no session unless every token verified")
    func pace() throws {
        var generator = SplitMix(seed: 11)
        for step in 1..<PACETests.g1.count {
            for answer in Self.mutations(of: h(PACETests.g1[step].1), &generator) {
                var script = PACETests.g1.map { ($0.0, $0.1) }
                script[step].1 = answer.hexString
                let chip = ReplayAnyCommand(responses: script.map(\.1))
                let channel = MRTDChannel(transport: APDUTransport(channel: chip))
                let infos = try SecurityInfos(encoded: h(PACETests.g1CardAccess))
                if let result = try? PACE.perform(on: channel, key: PACETests.mrz, info: infos.paceInfos[0], securityInfos: infos, random: PACETests.g1Random) {
                    // Only a mutation the protocol does not read (a trailing 00 pad) may pass.
                    #expect(result.secureMessaging.macKey == h("FE251C7858B356B24514B3BD5F4297D1"), "step \(step): \(answer.hexString)")
                }
            }
        }
    }

    @Test("BAC with the chip's answers mutated: never a session from an answer that does not verify")
    func bac() throws {
        var generator = SplitMix(seed: 12)
        for step in 0..<2 {
            for answer in Self.mutations(of: h(BasicAccessControlTests.exchanges[step].1), &generator) {
                var responses = BasicAccessControlTests.exchanges.prefix(2).map(\.1)
                responses[step] = answer.hexString
                let channel = MRTDChannel(transport: APDUTransport(channel: ReplayAnyCommand(responses: Array(responses))))
                if (try? BasicAccessControl.perform(on: channel, key: BasicAccessControlTests.key, random: BasicAccessControlTests.random)) != nil {
                    #expect(answer == h(BasicAccessControlTests.exchanges[step].1), "\(answer.hexString)")
                }
            }
        }
    }

    @Test("protected answers mutated (D.4's READ BINARY): the MAC catches every change; random bytes never trap")
    func secureMessaging() throws {
        var generator = SplitMix(seed: 13)
        let original = h("8709019FF0EC34F99226519902 90008E08AD55CC17140B2DED 9000")
        for answer in Self.mutations(of: original, &generator) where answer != original {
            let sm = try SecureMessagingTests.session("887022120C06C227")
            _ = try sm.protect(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 4))
            guard let response = try? ResponseAPDU(bytes: answer) else { continue }
            if case .protected? = try? sm.unprotect(response) {
                Issue.record("accepted an altered answer \(answer.hexString)")
            }
        }
        for _ in 0..<3000 {
            let sm = try SecureMessagingTests.session()
            _ = try sm.protect(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 4))
            let random = (0..<Int(generator.next() % 48)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = try? sm.unprotect(ResponseAPDU(data: random, statusWord: .success))
        }
    }

    @Test("a file whose header lies about its length, or a chip that returns nothing: a one-line error")
    func lyingFiles() throws {
        let chip = MRTDReaderTests.chip()
        chip.appFiles[0x0101] = [0x61, 0x82, 0x10, 0x00, 1, 2, 3]
        chip.appFiles[0x0104] = [0x61, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 1]
        chip.appFiles[0x0105] = []
        let reader = MRTDReaderTests.reader(chip)
        _ = try reader.establishAccess(.bac, key: MRTDReaderTests.key)
        for group in [1, 4, 5] {
            do {
                let content = try reader.readFile(.dataGroup(group)!)
                if case let .read(bytes) = content { #expect(bytes.count < 8, "DG\(group)") }
            } catch let error as MRTDProtocolError {
                #expect(!error.message.contains("\n"))
            }
        }
    }

    @Test("Active Authentication with garbage signatures and keys: never a valid verdict, never a trap")
    func activeAuthentication() throws {
        var generator = SplitMix(seed: 14)
        let rsa = try ChipPublicKey(encoded: h(ActiveAuthenticationTests.dg15))
        let curve = try EllipticCurveDomain(named: "brainpoolP256r1")
        let ec = try ChipPublicKey(encoded: h("305A301406072A8648CE3D020106092B2403030208010107034200") + (try curve.keyPair(privateKey: [7])).publicKey)
        for _ in 0..<500 {
            let sig = (0..<Int(generator.next() % 140)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            #expect((try? ActiveAuthentication.verify(signature: sig, challenge: [1, 2, 3, 4, 5, 6, 7, 8], publicKey: rsa))?.signatureValid != true)
            #expect((try? ActiveAuthentication.verify(signature: sig, challenge: [1, 2, 3, 4, 5, 6, 7, 8], publicKey: ec))?.signatureValid != true)
        }
    }
}
