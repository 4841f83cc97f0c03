import ISO7816
import Testing
import VirtualCard
@testable import GlobalPlatform

/// The protocol a caller asks for (`apdu send --scp`), held to by the library: a card that answers
/// INITIALIZE UPDATE with the other stops the session before EXTERNAL AUTHENTICATE, whatever its
/// card recognition data said (here none is read: `SecureChannel.open` straight after SELECT).
@Suite("GlobalPlatform: the protocol asked for")
struct ProtocolChoiceTests {
    @Test("INITIALIZE UPDATE naming the other protocol stops before EXTERNAL AUTHENTICATE; the same protocol opens",
          arguments: [(CardManagerModel.SCP.scp02, UInt8(3)), (.scp03, 2)])
    func otherProtocol(_ scp: CardManagerModel.SCP, _ asked: UInt8) throws {
        let card = CardManagerModel(scp)
        let transport = APDUTransport(channel: EmulatedChannel(card: card))
        _ = try transport.send(CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x04, p2: 0x00, data: CardManager.knownISDAIDs[0], ne: 256))
        #expect {
            _ = try SecureChannel.open(over: transport, keys: .testKeys, protocolVersion: asked)
        } throws: { ($0 as? GlobalPlatformError)?.kind == .policy && "\($0)".contains("stopped before EXTERNAL AUTHENTICATE") }
        #expect(card.current.received.contains(0x50) && card.current.externalAuthenticates == 0)
        let channel = try SecureChannel.open(over: transport, keys: .testKeys, protocolVersion: scp == .scp02 ? 2 : 3)
        #expect(channel.session.scp.version == (scp == .scp02 ? 2 : 3) && card.current.externalAuthenticates == 1)
    }
}
