import Foundation
import Testing
import TestSupport
import VirtualCard

/// `apdu gp info`'s ISD through pcscd (issue 52): its AID from the SELECT answer without keys,
/// its life cycle only with keys (GET STATUS in a secure channel), and said plainly when not read.
@Suite("apdu gp info: the ISD's AID and life cycle")
struct CLIGPInfoTests {
    @Test("without keys: the AID from the FCI, the life cycle said not read, nothing counted sent")
    func withoutKeys() async throws {
        let card = CLIGlobalPlatformTests.card(.scp03)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp", "info", "--json", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            #expect(doc["isd"] as? String == "A000000151000000" && doc["isdFrom"] as? String == "fci")
            #expect(doc["lifeCycleRead"] as? Bool == false && doc["isdLifeCycle"] is NSNull && doc["securityLevel"] is NSNull, "\(doc)")
            let text = try runAPDU(["gp", "info", "-r", inserted.reader])
            #expect(text.status == 0 && text.stdout.contains("ISD A000000151000000 (from the SELECT answer's FCI (tag 84))")
                    && text.stdout.contains("life cycle: not read: only GET STATUS gives it, in a secure channel"), "\(text.stdout)")
            let alone = try runAPDU(["gp", "info", "--level", "03", "-r", inserted.reader])
            #expect(alone.status == 64, "\(alone.stderr)")
        }
        #expect(!card.current.received.contains(0x50) && !card.current.received.contains(0xF2) && card.current.externalAuthenticates == 0)
    }

    @Test("with keys: the life cycle and privileges from GET STATUS 80, at every protocol",
          arguments: [(CardManagerModel.SCP.scp02, UInt8(0x15)), (.scp02, 0x35), (.scp03, 0x70)])
    func withKeys(_ scp: CardManagerModel.SCP, _ i: UInt8) async throws {
        let card = CLIGlobalPlatformTests.card(scp, i: i)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp", "info", "--json", "--test-keys", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            #expect(doc["lifeCycleRead"] as? Bool == true && doc["isdLifeCycle"] as? String == "SECURED" && doc["isdLifeCycleByte"] as? String == "0F", "\(doc)")
            #expect((doc["isdPrivileges"] as? [String])?.contains("SecurityDomain") == true && doc["isd"] as? String == "A000000151000000")
            let text = try runAPDU(["gp", "info", "--test-keys", "-r", inserted.reader])
            #expect(text.status == 0 && text.stdout.contains("life cycle: SECURED (GET STATUS 80, C-MAC") && text.stdout.contains("CPLC:"), "\(text.stdout)")
        }
        #expect(card.current.failedAuthentications == 0 && card.current.externalAuthenticates == 2)
    }

    @Test("a wrong key stops at the card's cryptogram: exit 1, one line, the counter untouched")
    func wrongKey() async throws {
        let card = CLIGlobalPlatformTests.card(.scp03)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp", "info", "--key", "00112233445566778899AABBCCDDEEFF", "-r", inserted.reader])
            #expect(r.status == 1 && r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("counter untouched"), "\(r.stderr)")
        }
        #expect(card.current.externalAuthenticates == 0 && card.current.failedAuthentications == 0)
    }
}
