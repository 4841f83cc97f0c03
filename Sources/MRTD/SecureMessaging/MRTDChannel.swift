// The channel every MRTD protocol step talks through: plain before access control, protected
// once it has run.
import ISO7816

/// An `APDUTransport` with the secure-messaging session on top of it, when there is one.
///
/// Before access control, commands go as they are. After it, every command is protected and
/// every answer checked (`SecureMessaging`); the transport's observer sees the protected APDUs,
/// never keys or plain data. When the session ends (a MAC that does not verify, `69 87`,
/// `69 88`, a bare error status), every later `send` throws `.secureMessagingEnded` until access
/// control installs new keys.
public final class MRTDChannel {
    /// The transport under the protection.
    public let transport: APDUTransport
    /// The current session; nil before access control.
    public internal(set) var secureMessaging: SecureMessaging?

    /// A channel over `transport`, plain until access control installs a session.
    public init(transport: APDUTransport, secureMessaging: SecureMessaging? = nil) {
        self.transport = transport
        self.secureMessaging = secureMessaging
    }

    /// Whether commands are protected now (access control ran and the session still holds).
    public var isSecured: Bool { secureMessaging.map { !$0.hasEnded } ?? false }

    /// Whether extended-length APDUs may be sent (the reader's side; the chip's is learned apart).
    public var extendedLengthUsable: Bool { transport.extendedLengthUsable }

    /// Sends `command`, protected when a session is up. A bare error status from the chip under
    /// secure messaging throws `.unprotectedStatus` and ends the session (nothing authenticates
    /// it: see `SecureMessaging.unprotect`); a broken session throws `.secureMessagingEnded`.
    public func send(_ command: CommandAPDU) throws -> ResponseAPDU {
        guard let sm = secureMessaging else { return try transport.send(command) }
        guard !sm.hasEnded else {
            throw MRTDProtocolError(.secureMessagingEnded, "secure messaging has ended: access control must run again")
        }
        let protected = try sm.protect(command)
        let extendedBefore = transport.forms.extendedLength
        let response: ResponseAPDU
        do {
            response = try transport.send(protected)
        } catch TransmitError.extendedLengthUnsupported {
            // Refused before anything reached the chip: its SSC did not move, so neither does ours.
            sm.decrementCounter()
            throw TransmitError.extendedLengthUnsupported(dataLength: protected.data.count, ne: protected.ne)
        } catch {
            // The exchange may or may not have reached the chip: the counters can no longer be trusted.
            sm.end()
            throw error
        }
        switch try sm.unprotect(response) {
        case let .protected(answer):
            // The transport takes 67 00 to an extended APDU as the reader refusing the form; an
            // answer whose MAC verifies came from the chip, so the reader carried it.
            if extendedBefore != false, transport.forms.extendedLength == false { transport.forms.extendedLength = extendedBefore }
            return answer
        case let .unprotected(sw):
            throw MRTDProtocolError(.unprotectedStatus, "the chip answered \(sw) (\(sw.meaning.text)) outside secure messaging", statusWord: sw)
        }
    }
}
