// A secure channel over any CardChannel: opened by INITIALIZE UPDATE and EXTERNAL AUTHENTICATE,
// with the card's cryptogram checked between them, so a wrong key never reaches the command the
// card counts (issue 52). Then itself a CardChannel: any APDU can travel through it.
import CardCrypto
import ISO7816

/// A GlobalPlatform secure channel session (SCP02 or SCP03) as a `CardChannel`: every command
/// sent through it is wrapped at the session's level and every answer unwrapped and checked.
public final class SecureChannel: CardChannel {
    public let transport: APDUTransport
    public private(set) var session: SecureChannelSession
    /// What INITIALIZE UPDATE said: the key version, the protocol, the diversification data.
    public let cardAnswer: InitializeUpdateResponse
    public var level: SecurityLevel { session.level }
    /// Commands wrapped since the channel opened (EXTERNAL AUTHENTICATE included).
    public private(set) var commandsSent = 0

    init(transport: APDUTransport, session: SecureChannelSession, cardAnswer: InitializeUpdateResponse) {
        self.transport = transport
        self.session = session
        self.cardAnswer = cardAnswer
    }

    /// Opens a session with the Security Domain selected on `transport`.
    ///
    /// Sends INITIALIZE UPDATE, checks what it answers (the key version asked for, the
    /// protocol, the card's cryptogram under `keys`, in constant time) and only then EXTERNAL
    /// AUTHENTICATE, once: a wrong key throws `.wrongKeys` with nothing counted sent, and no
    /// step is ever retried.
    /// - Parameters:
    ///   - transport: the channel to the card, its Security Domain selected.
    ///   - keys: the static keys (diversified here when they say so).
    ///   - level: the level to ask for; nil: the highest the card's protocol offers.
    ///   - scp02i: SCP02's i parameter (from the card recognition data), which INITIALIZE
    ///     UPDATE's answer does not carry.
    ///   - hostChallenge: for tests with published vectors; random otherwise.
    ///   - scp03i: SCP03's i parameter as the card recognition data names it, when read: an
    ///     INITIALIZE UPDATE answer that names another (a lower level offered, say) stops the
    ///     session before EXTERNAL AUTHENTICATE, as the cryptogram does not cover it.
    ///   - protocolVersion: the protocol the caller asked for (2 or 3, `apdu send --scp`); an
    ///     INITIALIZE UPDATE answer naming another stops the session before EXTERNAL
    ///     AUTHENTICATE. Nil: the card's.
    public static func open(over transport: APDUTransport, keys: StaticKeys, level: SecurityLevel? = nil, scp02i: UInt8 = 0x15,
                            scp03i: UInt8? = nil, protocolVersion: UInt8? = nil, hostChallenge: [UInt8]? = nil) throws -> SecureChannel {
        try open(over: transport, keys: keys, level: level, scp02i: scp02i, scp03i: scp03i, protocolVersion: protocolVersion,
                 hostChallenge: hostChallenge, probeOnly: false)
    }

    /// INITIALIZE UPDATE and the card's cryptogram checked, no EXTERNAL AUTHENTICATE: whether
    /// `keys` are the card's, at no cost to its counter. The channel returned is not open.
    static func probe(over transport: APDUTransport, keys: StaticKeys) throws -> SecureChannel {
        try open(over: transport, keys: keys, level: nil, scp02i: 0x15, scp03i: nil, protocolVersion: nil, hostChallenge: nil, probeOnly: true)
    }

    private static func open(over transport: APDUTransport, keys: StaticKeys, level: SecurityLevel?, scp02i: UInt8, scp03i: UInt8?,
                             protocolVersion: UInt8?, hostChallenge: [UInt8]?, probeOnly: Bool) throws -> SecureChannel {
        let challenge = hostChallenge ?? secureRandomBytes(8)
        let initialize = CommandAPDU(cla: 0x80, ins: 0x50, p1: keys.version, p2: 0, data: challenge, ne: 256)
        let answer = try sendOnce(initialize, over: transport)
        switch answer.statusWord.rawValue {
        case 0x9000: break
        case 0x6A88:
            throw GlobalPlatformError(.keyVersionNotHeld, "the card holds no key set \(keys.description) (INITIALIZE UPDATE: 6A 88); nothing counted was sent",
                                      statusWord: answer.statusWord)
        case 0x6983, 0x6982, 0x6985:
            throw GlobalPlatformError(.locked, "the card refuses to authenticate (INITIALIZE UPDATE: \(answer.statusWord.hex)): its Security Domain is locked or its keys blocked",
                                      statusWord: answer.statusWord)
        default:
            throw GlobalPlatformError(.refused, "INITIALIZE UPDATE refused: \(answer.statusWord.hex)", statusWord: answer.statusWord)
        }
        let parsed = try InitializeUpdateResponse(answer.data, scp02i: scp02i)
        if let protocolVersion, parsed.scp.version != protocolVersion {
            throw GlobalPlatformError(.policy, "asked for SCP0\(protocolVersion), the card answered INITIALIZE UPDATE with \(parsed.scp): stopped before EXTERNAL AUTHENTICATE, the card's counter untouched")
        }
        if keys.version != 0, parsed.keyVersion != keys.version {
            throw GlobalPlatformError(.keyVersionNotHeld, "asked for key version \(hex(keys.version)), the card answered with \(hex(parsed.keyVersion)); nothing counted was sent")
        }
        let aes = parsed.scp.version == 3
        let cardKeys = try keys.diversified(with: parsed.diversificationData, aes: aes)
        var session = try SecureChannelSession(keys: cardKeys, hostChallenge: challenge, response: parsed)
        guard session.cardCryptogramMatches(parsed.cardCryptogram) else {
            var tried = keys
            tried.version = parsed.keyVersion
            throw GlobalPlatformError(.wrongKeys, "wrong keys for \(tried.description) (\(parsed.scp)): the card's cryptogram does not match, stopped before EXTERNAL AUTHENTICATE, the card's counter untouched")
        }
        if probeOnly { return SecureChannel(transport: transport, session: session, cardAnswer: parsed) }
        // What the cryptogram does not cover is checked before anything counted: SCP02's i (only
        // 15, 55 and their R-MAC forms 35, 75 are spoken here: another would MAC commands the card
        // then counts as wrong) and SCP03's, against the card recognition data.
        if parsed.scp.version == 2, parsed.scp.i & ~0x60 != 0x15 {
            throw GlobalPlatformError(.policy, "\(parsed.scp) is not one this tool speaks (SCP02 i=15, 35, 55 or 75): stopped before EXTERNAL AUTHENTICATE, the card's counter untouched")
        }
        if parsed.scp.version == 3, let scp03i, scp03i != parsed.scp.i {
            throw GlobalPlatformError(.malformed, "the card recognition data names SCP03 i=\(hex(scp03i)) but INITIALIZE UPDATE answered i=\(hex(parsed.scp.i)) (which its cryptogram does not cover): altered on the way, or a card at odds with itself; stopped before EXTERNAL AUTHENTICATE, the card's counter untouched (--level asks for a level outright)")
        }
        let wanted = level ?? parsed.scp.offered
        guard wanted.isValid, wanted.contains(.cMAC) else {
            throw GlobalPlatformError(.policy, "security level \(wanted) is not one a secure channel can take (C-MAC is always on; R-ENCRYPTION needs R-MAC)")
        }
        guard parsed.scp.offered.isSuperset(of: wanted) else {
            throw GlobalPlatformError(.policy, "\(parsed.scp) does not offer \(wanted) (it offers \(parsed.scp.offered))")
        }
        let authenticate = try session.externalAuthenticate(level: wanted)
        let result = try sendOnce(authenticate, over: transport)
        guard result.statusWord == .success else {
            throw GlobalPlatformError(.authenticationRefused, "EXTERNAL AUTHENTICATE refused (\(result.statusWord.hex)) although the card's cryptogram checked out",
                                      statusWord: result.statusWord)
        }
        let channel = SecureChannel(transport: transport, session: session, cardAnswer: parsed)
        channel.commandsSent = 1
        return channel
    }

    /// Sends `command` wrapped; returns the card's answer unwrapped. `secret`: bytes of the
    /// wrapped command's encoding that traces show as `**` (PUT KEY's key data).
    public func send(_ command: CommandAPDU, secret: Bool = false) throws -> ResponseAPDU {
        let wrapped = try session.wrap(command)
        commandsSent += 1
        let answer = try Self.sendOnce(wrapped, over: transport, secret: secret)
        return try session.unwrap(answer)
    }

    /// Sends a command the card must see once: a `6Cxx` answer is not followed by the same
    /// command with another Le (a MACed command re-sent would move the session's counter and
    /// the card's state twice; an authentication re-sent is a second try), it is the answer.
    static func sendOnce(_ command: CommandAPDU, over transport: APDUTransport, secret: Bool = false) throws -> ResponseAPDU {
        try transport.sendOnce(command, secret: secret ? 0..<command.encodedCount : nil)
    }

    public func transmit(_ command: [UInt8]) throws -> [UInt8] {
        let answer = try send(try CommandAPDU(bytes: command))
        return answer.data + [answer.statusWord.sw1, answer.statusWord.sw2]
    }

    public var supportsExtendedLength: Bool { transport.extendedLengthUsable }

    /// PUT KEY's key data: the key enciphered under the session's DEK.
    public func encipherKey(_ key: [UInt8]) throws -> [UInt8] { try session.encipherKey(key) }
}

func hex(_ byte: UInt8) -> String { String(byte, radix: 16, uppercase: true).leftPadded(2) }

extension StatusWord {
    /// "6A 88".
    var hex: String { "\(GlobalPlatform.hex(sw1)) \(GlobalPlatform.hex(sw2))" }
}
