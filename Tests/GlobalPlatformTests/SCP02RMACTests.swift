import ISO7816
import Testing
import VirtualCard
@testable import GlobalPlatform

/// SCP02's R-MAC (Card Specification 2.2 E.4.5) between the library and the emulated card
/// manager, written apart from each other: asked for in EXTERNAL AUTHENTICATE's level (11, 13)
/// where the card's i offers it (b6: i=35, 75), chained answer to answer, and one bit off anywhere
/// in an answer refused. No published SCP02 R-MAC vector was found (pySim's SCP02 has no R-MAC;
/// GlobalPlatformPro's tests have none), so the two implementations check each other.
@Suite("SCP02 R-MAC")
struct SCP02RMACTests {
    /// An emulated card whose next answers can be altered on the way, as a man in the middle would.
    final class AlteringChannel: CardChannel {
        let inner: EmulatedChannel
        /// Flips this bit of the next answer (counted from the answer's first byte).
        var flipBit: Int?
        init(_ card: CardManagerModel) { inner = EmulatedChannel(card: card) }
        var supportsExtendedLength: Bool { inner.supportsExtendedLength }
        func transmit(_ command: [UInt8]) throws -> [UInt8] {
            var answer = try inner.transmit(command)
            if let bit = flipBit, bit / 8 < answer.count - 2 {
                answer[bit / 8] ^= UInt8(1 << (bit % 8))
                flipBit = nil
            }
            return answer
        }
    }

    static func card(i: UInt8) -> CardManagerModel {
        let card = CardManagerModel(.scp02, i: i, pageSize: 1)
        card.preinstall(package: [0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01], modules: [[0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01, 0x01]],
                        instances: [[0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01, 0x01], [0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01, 0x02]])
        return card
    }

    @Test("R-MAC at levels 11 and 13, and by default where i offers it: the registry read answer by answer",
          arguments: [(UInt8(0x35), UInt8?(0x11)), (0x35, 0x13), (0x75, nil), (0x75, 0x11)])
    func levels(_ i: UInt8, _ level: UInt8?) throws {
        let card = Self.card(i: i)
        let manager = CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card)))
        try manager.authenticate(keys: .testKeys, level: level.map(SecurityLevel.init(rawValue:)))
        #expect(manager.secureChannel?.level.rawValue == level ?? 0x13)
        // Pages of one entry: 1 ISD, 2 applications, 1 package, each answer MACed and chained.
        let registry = try manager.registry()
        #expect(registry.map(\.kind) == [.issuerSecurityDomain, .application, .application, .loadFile], "\(registry)")
        // An error word carries its R-MAC too under SCP02: GET DATA of a tag the card lacks.
        #expect(try manager.getData(0x00CF) == nil)
        #expect(try manager.getData(0x0066) != nil)
        #expect(card.current.failedAuthentications == 0)
    }

    @Test("one bit off anywhere in an answer's data or R-MAC is refused", arguments: [UInt8(0x11), 0x13])
    func flipped(_ level: UInt8) throws {
        // GET DATA 66's answer: its data, then the 8 bytes of R-MAC.
        let card = Self.card(i: 0x35)
        let probe = CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card)))
        try probe.authenticate(keys: .testKeys, level: SecurityLevel(rawValue: level))
        let getData = CommandAPDU(cla: 0x80, ins: 0xCA, p1: 0x00, p2: 0x66, ne: 256)
        let clear = try #require(probe.secureChannel).send(getData)
        #expect(clear.statusWord == .success && clear.data.first == 0x66)
        let length = clear.data.count + 8
        for bit in stride(from: 0, to: length * 8, by: 7) {
            let channel = AlteringChannel(card)
            let manager = CardManager(transport: APDUTransport(channel: channel))
            try manager.authenticate(keys: .testKeys, level: SecurityLevel(rawValue: level))
            channel.flipBit = bit
            #expect(throws: GlobalPlatformError.self, "bit \(bit)") { _ = try manager.secureChannel?.send(getData) }
        }
        #expect(card.current.failedAuthentications == 0)
    }

    @Test("an R-MAC answer with no R-MAC is refused; a level i does not offer is refused before EXTERNAL AUTHENTICATE")
    func refusals() throws {
        let card = Self.card(i: 0x15)
        let manager = CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card)))
        #expect(throws: GlobalPlatformError.self) { try manager.authenticate(keys: .testKeys, level: [.cMAC, .rMAC]) }
        #expect(card.current.externalAuthenticates == 0)
        // The library's session against an answer that lacks the 8 bytes.
        var session = try Self.session()
        _ = try session.externalAuthenticate(level: [.cMAC, .rMAC])
        _ = try session.wrap(CommandAPDU(cla: 0x80, ins: 0xCA, p1: 0x00, p2: 0x66, ne: 256))
        #expect(throws: GlobalPlatformError.self) { try session.unwrap(ResponseAPDU(data: [1, 2, 3], statusWord: .success)) }
    }

    static func session() throws -> SecureChannelSession {
        let answer = try InitializeUpdateResponse([UInt8](repeating: 0, count: 10) + [0x20, 0x02, 0x00, 0x01] + [UInt8](repeating: 0x11, count: 14), scp02i: 0x35)
        return try SecureChannelSession(keys: .testKeys, hostChallenge: [UInt8](repeating: 0x22, count: 8), response: answer)
    }
}

extension SCP02RMACTests {
    @Test("an empty kind under SCP02 R-MAC is proven (its 6A 88 carries the R-MAC); a bare 6A 88 in its place is refused")
    func provenAbsence() throws {
        // A card with nothing but its ISD: GET STATUS 40 and 10 answer 6A 88.
        let withRMAC = CardManager(transport: APDUTransport(channel: EmulatedChannel(card: CardManagerModel(.scp02, i: 0x35))))
        try withRMAC.authenticate(keys: .testKeys)
        #expect(try withRMAC.registry().map(\.kind) == [.issuerSecurityDomain])
        #expect(withRMAC.unprovenEmptyKinds.isEmpty)
        let without = CardManager(transport: APDUTransport(channel: EmulatedChannel(card: CardManagerModel(.scp02, i: 0x15))))
        try without.authenticate(keys: .testKeys)
        _ = try without.registry()
        #expect(without.unprovenEmptyKinds == [.application, .loadFile])
        // A man in the middle answering a bare 6A 88 (no R-MAC) to GET STATUS 40.
        final class BareNotFound: CardChannel {
            let inner: EmulatedChannel
            init(_ card: CardManagerModel) { inner = EmulatedChannel(card: card) }
            var supportsExtendedLength: Bool { true }
            func transmit(_ command: [UInt8]) throws -> [UInt8] {
                command.count > 2 && command[1] == 0xF2 && command[2] == 0x40 ? [0x6A, 0x88] : try inner.transmit(command)
            }
        }
        let card = Self.card(i: 0x35)
        let forged = CardManager(transport: APDUTransport(channel: BareNotFound(card)))
        try forged.authenticate(keys: .testKeys)
        #expect(throws: GlobalPlatformError.self) { _ = try forged.registry() }
    }
}
