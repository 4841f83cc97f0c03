// NTAG 424 DNA TagTamper's status (issue 51): two ASCII letters, permanent then current, as the
// chip mirrors them into the SDM data (SDMOptions bit 3, TTStatusOffset) and answers GetTTStatus.

/// The TagTamper loop's status: the permanent letter latches open (NT4H2421Tx §8.9: once the
/// loop was seen open it stays `O`), the current one says how the loop is now.
///
/// - `CC`: intact. `OC`: opened, then closed again. `OO`: open now. `II`: TagTamper not enabled.
public struct SUNTagTamperStatus: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        /// `C`: the loop is (was always) closed.
        case closed
        /// `O`: the loop is (was once) open.
        case open
        /// `I`: TagTamper is not enabled on this tag.
        case notEnabled
        /// Any other byte: not a status the chip writes.
        case unknown(UInt8)

        public init(byte: UInt8) {
            switch byte {
            case UInt8(ascii: "C"): self = .closed
            case UInt8(ascii: "O"): self = .open
            case UInt8(ascii: "I"): self = .notEnabled
            default: self = .unknown(byte)
            }
        }

        /// The name in JSON and in the verdict token.
        public var name: String {
            switch self {
            case .closed: "closed"
            case .open: "open"
            case .notEnabled: "notEnabled"
            case .unknown: "unknown"
            }
        }

        public init?(name: String) {
            switch name {
            case "closed": self = .closed
            case "open": self = .open
            case "notEnabled": self = .notEnabled
            default: return nil
            }
        }

        public var byte: UInt8 {
            switch self {
            case .closed: UInt8(ascii: "C")
            case .open: UInt8(ascii: "O")
            case .notEnabled: UInt8(ascii: "I")
            case .unknown(let b): b
            }
        }
    }

    /// What the status says about the seal, in one word.
    public enum Seal: String, Sendable, Hashable {
        /// `CC`: never opened.
        case intact
        /// `OC`: opened, then closed again.
        case reclosed
        /// `OO` (or `CO`, which the latch makes impossible): open now.
        case open
        /// `II`: the tag does not watch a loop.
        case notEnabled
        /// Letters the chip does not write.
        case unknown
    }

    public var permanent: State
    public var current: State

    public init(permanent: State, current: State) {
        self.permanent = permanent
        self.current = current
    }

    /// The two bytes as the chip mirrors them, permanent first; nil unless exactly two.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 2 else { return nil }
        self.init(permanent: State(byte: bytes[bytes.startIndex]), current: State(byte: bytes[bytes.index(after: bytes.startIndex)]))
    }

    public var bytes: [UInt8] { [permanent.byte, current.byte] }

    public var seal: Seal {
        switch (permanent, current) {
        case (.closed, .closed): .intact
        case (.open, .closed): .reclosed
        case (.open, .open), (.closed, .open): .open
        case (.notEnabled, .notEnabled): .notEnabled
        default: .unknown
        }
    }
}

/// Where a tag mirrors its TagTamper status in the SUN message (SDMOptions bit 3).
public enum SUNTamperPlacement: Sendable, Hashable {
    /// Inside the encrypted file data, `offset` bytes from its start (TTStatusOffset −
    /// SDMENCOffset): encrypted and MACed with it, the layout sdm-backend reads at offset 0.
    case fileData(offset: Int)
    /// In the clear, where the template puts `{tt}` (or the `tt` parameter): inside the MAC
    /// input, so an altered letter fails the MAC.
    case clear
}
