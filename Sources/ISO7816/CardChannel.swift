// The channel a command APDU travels over, and `APDUTransport`, which does what ISO 7816 leaves
// to the host: GET RESPONSE, Le correction, extended length or chaining.

/// Something that carries one command APDU to a card and brings back its answer: a PC/SC
/// card handle, an emulated card, a recorded transcript. `ISO7816`, `NFCTags` and the tools
/// above them work over any channel.
public protocol CardChannel: AnyObject {
    /// One physical exchange: the encoded command in, the raw response (data + SW1SW2) out.
    func transmit(_ command: [UInt8]) throws -> [UInt8]
    /// Whether extended-length APDUs may be sent (both the reader and the card take them).
    var supportsExtendedLength: Bool { get }
}

/// One physical exchange, as an observer sees it.
public struct Exchange: Sendable, Hashable {
    public var command: [UInt8]
    /// The raw response, or empty when the exchange failed.
    public var response: [UInt8]
    public var duration: Duration
    /// Why this exchange was sent: the caller's command, or a step of the policy.
    public var purpose: Purpose
    /// Bytes of `command` that carry a secret the sender marked (a tag password inside a
    /// reader's wrapper); traces show them as `**`.
    public var secretRange: Range<Int>?
    /// Whether the answer's data is a secret the sender marked (a cryptogram under a key made
    /// from a password, which would let anyone holding the trace guess the password offline:
    /// BAC's EXTERNAL AUTHENTICATE answer); traces show its data as `**`, its status word as it is.
    public var secretResponse = false

    public enum Purpose: String, Sendable, Hashable {
        case command, getResponse, resendWithLe, chained
    }
}

/// Forms a reader accepts that ISO 7816 and PC/SC leave open, as learned on one connection.
public struct ReaderForms: Sendable, Hashable, CustomStringConvertible {
    /// The Le of a storage READ BINARY (`FF B0`), PC/SC Part 3.
    public enum ReadLe: String, Sendable, Hashable {
        /// Le 00 ("up to 256", ISO 7816-4) is accepted.
        case maximum
        /// Le must be the exact count (the reader answers `67 00` or `6C xx` to anything else).
        case exact
    }
    /// nil: not learned yet on this connection.
    public var readBinaryLe: ReadLe?
    /// false: an extended-length APDU was answered `67 00`, though the channel offers extended
    /// length (a reader that announces it and does not carry it); nil: not learned.
    public var extendedLength: Bool?
    public init(readBinaryLe: ReadLe? = nil, extendedLength: Bool? = nil) {
        self.readBinaryLe = readBinaryLe
        self.extendedLength = extendedLength
    }

    public var description: String {
        var parts: [String]
        switch readBinaryLe {
        case nil: parts = ["READ BINARY Le: not needed yet"]
        case .maximum?: parts = ["READ BINARY Le: 00 accepted"]
        case .exact?: parts = ["READ BINARY Le: the exact length required"]
        }
        if extendedLength == false { parts.append("extended-length APDUs refused") }
        return parts.joined(separator: "; ")
    }
}

/// How `APDUTransport` turns one logical command into physical exchanges.
public struct TransmissionPolicy: Sendable, Hashable {
    /// Send exactly what is given and return exactly what comes back: no GET RESPONSE, no Le
    /// correction, no chaining.
    public var raw = false
    /// The most GET RESPONSE rounds for one command before giving up (a card answering 61xx forever).
    public var maxGetResponseRounds = 256
    /// Split data longer than `maxShortData` into a command chain (CLA bit b5) when extended
    /// length is not available.
    public var allowsChaining = true
    /// Largest data field for one short APDU.
    public var maxShortData = 255
    /// Re-send a command answered `6Cxx` with Le = SW2. Off for a command that must reach the
    /// card once (a MACed command, whose counter or session state would move twice, or an
    /// authentication): its `6Cxx` comes back to the caller as the answer.
    public var correctsLe = true

    public init(raw: Bool = false) { self.raw = raw }
    public static let standard = TransmissionPolicy()
}

/// Why a logical command could not be completed.
public enum TransmitError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The card kept answering 61xx past the limit.
    case getResponseLimit(rounds: Int)
    /// The command needs extended length, which this channel cannot carry, and chaining is off.
    case extendedLengthUnsupported(dataLength: Int, ne: Int?)
    /// The card answered fewer than two bytes.
    case malformedResponse([UInt8])
    /// The SELECT policy refused the command before it was sent.
    case refusedSelect(aid: [UInt8])
    /// The command's data is longer than any APDU carries (65,535 bytes): refused unsent, not
    /// sent with a cut length.
    case commandTooLong(dataLength: Int)

    public var description: String {
        switch self {
        case let .getResponseLimit(rounds):
            return "the card still answered 61xx after \(rounds) GET RESPONSE rounds; giving up"
        case let .extendedLengthUnsupported(n, ne):
            return "this command needs extended length (data \(n) bytes\(ne.map { ", Ne \($0)" } ?? "")), which the reader or card does not support"
        case let .malformedResponse(bytes):
            return ResponseAPDU.ResponseError.tooShort(bytes).description
        case let .refusedSelect(aid):
            return "SELECT of AID \(aid.hexString) refused: not in the allowlist"
        case let .commandTooLong(n):
            return "the command's data is \(n) bytes, more than an APDU carries (65,535): not sent"
        }
    }
}

/// Sends logical commands over a `CardChannel`, doing what ISO 7816-3/-4 leave to the host:
///
/// - `61xx`: GET RESPONSE with the original command's CLA and Le = min(SW2, 256), `6100`
///   meaning 256, repeated until the card is done (bounded by `maxGetResponseRounds`);
/// - `6Cxx`: re-send once with Le = SW2;
/// - data too long for a short APDU: extended length when the channel supports it, else
///   command chaining (CLA bit b5), else a clear error;
/// - a SELECT policy checked before anything reaches the card.
///
/// Every physical exchange goes to `observer` with its timing.
public final class APDUTransport {
    public let channel: any CardChannel
    // A transport is one thread's at a time (it is not Sendable), and each access to the four
    // properties below is a whole read or a whole write, never one held across a call: the
    // runtime's dynamic exclusivity checks on them would find nothing and cost about 190
    // instructions per APDU (issue 50).
    @exclusivity(unchecked) public var policy: TransmissionPolicy
    @exclusivity(unchecked) public var selectPolicy: SelectPolicy?
    @exclusivity(unchecked) public var observer: ((Exchange) -> Void)?
    /// What the reader on this connection turned out to speak, learned by the first exchange
    /// that needed it and kept, so the adaptation costs one retry per connection.
    @exclusivity(unchecked) public var forms = ReaderForms()
    /// `6Cxx` re-sends so far: a caller sees from it that its Le was corrected.
    public private(set) var leCorrections = 0
    /// Whether extended-length APDUs may be sent: the channel offers them and the reader has not
    /// refused one on this connection.
    public var extendedLengthUsable: Bool { channel.supportsExtendedLength && forms.extendedLength != false }

    public init(channel: any CardChannel, policy: TransmissionPolicy = .standard, selectPolicy: SelectPolicy? = nil, observer: ((Exchange) -> Void)? = nil) {
        self.channel = channel
        self.policy = policy
        self.selectPolicy = selectPolicy
        self.observer = observer
    }

    /// Sends `command` with the bytes `secret` of its encoding marked, so observers (traces,
    /// recordings) show them as `**`: a key inside a reader's pseudo-APDU, a sector trailer.
    public func send(_ command: CommandAPDU, secret: Range<Int>) throws -> ResponseAPDU {
        try send(command, secret: secret, secretResponse: false)
    }

    /// Sends `command` with the bytes `secret` of its encoding marked and, with `secretResponse`,
    /// the data of every answer to it (GET RESPONSE rounds included), so observers show them as
    /// `**`: BAC's EXTERNAL AUTHENTICATE, whose cryptograms under the MRZ's keys would let a
    /// trace's reader test guesses of the MRZ offline.
    /// Sends a command the card must see once (a MACed or counted command, an authentication):
    /// with `correctsLe` off for it, so a `6Cxx` is its answer, not a reason to send it again.
    public func sendOnce(_ command: CommandAPDU, secret: Range<Int>? = nil, secretResponse: Bool = false) throws -> ResponseAPDU {
        let saved = policy
        policy.correctsLe = false
        defer { policy = saved }
        return try send(command, secret: secret, secretResponse: secretResponse)
    }

    public func send(_ command: CommandAPDU, secret: Range<Int>?, secretResponse: Bool) throws -> ResponseAPDU {
        guard let observer, secret != nil || secretResponse else { return try send(command) }
        let length = command.bytes.count
        self.observer = { exchange in
            var marked = exchange
            // The command's own bytes, sent first or re-sent with a corrected Le (same length).
            if exchange.purpose == .command || (exchange.purpose == .resendWithLe && exchange.command.count == length) {
                marked.secretRange = secret
            }
            marked.secretResponse = secretResponse
            observer(marked)
        }
        defer { self.observer = observer }
        return try send(command)
    }

    /// Sends one logical command and returns the complete response.
    public func send(_ command: CommandAPDU) throws -> ResponseAPDU {
        try send(command, encoded: command.bytes)
    }

    /// The same, with `encoded` the command's `bytes`, made once by a caller that also shows
    /// them (`apdu script` and `send` print every APDU they send, issue 50).
    package func send(_ command: CommandAPDU, encoded: [UInt8]) throws -> ResponseAPDU {
        guard command.data.count <= 65535 else { throw TransmitError.commandTooLong(dataLength: command.data.count) }
        if let selectPolicy, let aid = selectPolicy.refusal(for: command) {
            throw TransmitError.refusedSelect(aid: aid)
        }
        let policy = self.policy
        if policy.raw { return try exchange(encoded, .command) }

        var command = command
        var response: ResponseAPDU
        let needsExtended = command.data.count > policy.maxShortData || (command.ne ?? 0) > 256
        if needsExtended && !extendedLengthUsable {
            guard command.data.count > policy.maxShortData, policy.allowsChaining, (command.ne ?? 0) <= 256 else {
                throw TransmitError.extendedLengthUnsupported(dataLength: command.data.count, ne: command.ne)
            }
            command.forceExtended = false
            response = try sendChained(command)
        } else {
            response = try exchange(encoded, .command)
            // ISO 7816-4: 67 00 is wrong length; to an extended APDU it means the reader (or card)
            // does not take the form. Learned once: the caller splits from then on.
            if needsExtended, response.statusWord == .wrongLength { forms.extendedLength = false }
        }

        return try completed(command, response, policy: policy)
    }

    /// A command the caller holds only encoded (`apdu script`'s lines, validated when the script
    /// was read, issue 50): its length fields are read off the encoding and the command is made
    /// only when something needs it (a SELECT under a policy, extended length, chaining, a
    /// `6Cxx` or `61xx` answer). The same exchanges as `send(_:)` with the decoded command.
    package func send(encoded: [UInt8]) throws -> ResponseAPDU {
        let policy = self.policy
        guard selectPolicy == nil, !policy.raw, let shape = try? CommandAPDU.Shape(encoding: encoded),
              shape.data.count <= policy.maxShortData, (shape.ne ?? 0) <= 256 else {
            return try send(CommandAPDU(bytes: encoded), encoded: encoded)
        }
        let response = try exchange(encoded, .command)
        let sw1 = response.statusWord.sw1
        guard sw1 == 0x61 || (sw1 == 0x6C && policy.correctsLe) else { return response }
        return try completed(CommandAPDU(bytes: encoded), response, policy: policy)
    }

    /// What follows a command's first answer: the `6Cxx` re-send and the GET RESPONSE rounds.
    private func completed(_ command: CommandAPDU, _ first: ResponseAPDU, policy: TransmissionPolicy) throws -> ResponseAPDU {
        var command = command
        var response = first
        if response.statusWord.sw1 == 0x6C, policy.correctsLe {
            command.ne = response.statusWord.sw2 == 0 ? 256 : Int(response.statusWord.sw2)
            command.forceExtended = false
            leCorrections += 1
            response = try exchange(command.bytes, .resendWithLe)
        }

        guard response.statusWord.sw1 == 0x61 else { return response }
        var data = response.data
        var rounds = 0
        // GET RESPONSE keeps the logical channel and secure messaging bits of the original CLA,
        // never the chaining bit (pcsc-sharp sends 00 here, which some cards refuse).
        let cla = command.cla & ~0x10
        while response.statusWord.sw1 == 0x61 {
            rounds += 1
            if rounds > policy.maxGetResponseRounds { throw TransmitError.getResponseLimit(rounds: policy.maxGetResponseRounds) }
            // Le = min(SW2, what the caller still wants); a caller whose Ne is satisfied still
            // gets the card's remaining data, as it said more was there.
            let available = response.statusWord.sw2 == 0 ? 256 : Int(response.statusWord.sw2)
            let wanted = command.ne.map { $0 - data.count }.flatMap { $0 > 0 ? $0 : nil } ?? available
            var getResponse = CommandAPDU(cla: cla, ins: 0xC0, p1: 0, p2: 0, ne: min(available, wanted))
            response = try exchange(getResponse.bytes, .getResponse)
            if response.statusWord.sw1 == 0x6C {
                // GET RESPONSE only fetches what the card holds: asked again, nothing moves twice.
                getResponse.ne = response.statusWord.sw2 == 0 ? 256 : Int(response.statusWord.sw2)
                response = try exchange(getResponse.bytes, .resendWithLe)
            }
            data += response.data
        }
        return ResponseAPDU(data: data, statusWord: response.statusWord)
    }

    /// Sends data in pieces of `maxShortData` with CLA bit b5 set on all but the last; stops at
    /// the first piece the card does not accept with 9000.
    private func sendChained(_ command: CommandAPDU) throws -> ResponseAPDU {
        var offset = 0
        let data = command.data
        while true {
            let end = min(offset + policy.maxShortData, data.count)
            let last = end == data.count
            var piece = CommandAPDU(cla: last ? command.cla : command.cla | 0x10, ins: command.ins, p1: command.p1, p2: command.p2,
                                    data: Array(data[offset..<end]))
            if last { piece.ne = command.ne }
            let response = try exchange(piece.bytes, last ? .command : .chained)
            if last || response.statusWord != .success { return response }
            offset = end
        }
    }

    /// Sends `bytes` as they are and returns the raw answer, with no APDU rules: a contactless
    /// card's native frame (a MIFARE Plus's `60`, whose answer carries no status word). The
    /// observer sees it, with `secret` (a range of `bytes`) and `secretResponse` marked; the
    /// SELECT policy applies to bytes that parse as a command APDU.
    public func transmitRaw(_ bytes: [UInt8], secret: Range<Int>? = nil, secretResponse: Bool = false) throws -> [UInt8] {
        if let selectPolicy, let command = try? CommandAPDU(bytes: bytes), let aid = selectPolicy.refusal(for: command) {
            throw TransmitError.refusedSelect(aid: aid)
        }
        return try observed(bytes, .command, secret: secret, secretResponse: secretResponse)
    }

    private func exchange(_ bytes: [UInt8], _ purpose: Exchange.Purpose) throws -> ResponseAPDU {
        let raw = try observed(bytes, purpose)
        guard raw.count >= 2 else { throw TransmitError.malformedResponse(raw) }
        return ResponseAPDU(splitting: raw)
    }

    /// One physical exchange, timed and shown to the observer (also when it fails).
    private func observed(_ bytes: [UInt8], _ purpose: Exchange.Purpose, secret: Range<Int>? = nil, secretResponse: Bool = false) throws -> [UInt8] {
        // Nobody watching (no trace, no recording): the exchange alone, no clock and no record
        // of it (`apdu script` sends thousands, issue 50).
        guard let observer else { return try channel.transmit(bytes) }
        let start = ContinuousClock.now
        var exchange = Exchange(command: bytes, response: [], duration: .zero, purpose: purpose, secretRange: secret, secretResponse: secretResponse)
        defer {
            exchange.duration = ContinuousClock.now - start
            observer(exchange)
        }
        exchange.response = try channel.transmit(bytes)
        return exchange.response
    }
}
