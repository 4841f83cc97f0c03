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
    public static func open(over transport: APDUTransport, keys: StaticKeys, level: SecurityLevel? = nil, scp02i: UInt8 = 0x15,
                            hostChallenge: [UInt8]? = nil) throws -> SecureChannel {
        try open(over: transport, keys: keys, level: level, scp02i: scp02i, hostChallenge: hostChallenge, probeOnly: false)
    }

    /// INITIALIZE UPDATE and the card's cryptogram checked, no EXTERNAL AUTHENTICATE: whether
    /// `keys` are the card's, at no cost to its counter. The channel returned is not open.
    static func probe(over transport: APDUTransport, keys: StaticKeys) throws -> SecureChannel {
        try open(over: transport, keys: keys, level: nil, scp02i: 0x15, hostChallenge: nil, probeOnly: true)
    }

    private static func open(over transport: APDUTransport, keys: StaticKeys, level: SecurityLevel?, scp02i: UInt8,
                             hostChallenge: [UInt8]?, probeOnly: Bool) throws -> SecureChannel {
        let challenge = hostChallenge ?? secureRandomBytes(8)
        let initialize = CommandAPDU(cla: 0x80, ins: 0x50, p1: keys.version, p2: 0, data: challenge, ne: 256)
        let answer = try transport.send(initialize)
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
        let wanted = level ?? parsed.scp.offered
        guard wanted.isValid, wanted.contains(.cMAC) else {
            throw GlobalPlatformError(.policy, "security level \(wanted) is not one a secure channel can take (C-MAC is always on; R-ENCRYPTION needs R-MAC)")
        }
        guard parsed.scp.offered.isSuperset(of: wanted) else {
            throw GlobalPlatformError(.policy, "\(parsed.scp) does not offer \(wanted) (it offers \(parsed.scp.offered))")
        }
        let authenticate = try session.externalAuthenticate(level: wanted)
        let result = try transport.send(authenticate)
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
        let answer = secret ? try transport.send(wrapped, secret: 0..<wrapped.encodedCount) : try transport.send(wrapped)
        return try session.unwrap(answer)
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
