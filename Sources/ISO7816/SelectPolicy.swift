// The allowlist of AIDs that SELECT by DF name may reach, checked before a command is sent.

/// An allowlist of application identifiers for SELECT by DF name, the desktop twin of iOS's
/// `com.apple.developer.nfc.readersession.iso7816.select-identifiers`.
///
/// Entries match exactly; an entry written with a trailing `*` matches every AID that starts
/// with it. When a policy is in force, a SELECT by DF name (INS A4, P1 04) for any other AID is
/// refused before it reaches the card.
public struct SelectPolicy: Sendable, Hashable {
    public struct Entry: Sendable, Hashable, CustomStringConvertible {
        public var aid: [UInt8]
        public var isPrefix: Bool
        public var description: String { aid.hexString + (isPrefix ? "*" : "") }

        /// Parses `A0000000031010` or `A000000003*`.
        public init(parsing text: some StringProtocol) throws(EntryError) {
            var t = Substring(text).filter { !$0.isWhitespace }
            isPrefix = t.hasSuffix("*")
            if isPrefix { t.removeLast() }
            do { aid = try Hex.decode(t) } catch { throw EntryError(text: String(text), reason: error.description) }
            guard (1...16).contains(aid.count) else {
                throw EntryError(text: String(text), reason: "an AID has 1 to 16 bytes, this has \(aid.count)")
            }
            if !isPrefix && aid.count < 5 {
                throw EntryError(text: String(text), reason: "an AID has at least 5 bytes (RID); write a prefix with a trailing *")
            }
        }

        public init(aid: [UInt8], isPrefix: Bool = false) {
            self.aid = aid
            self.isPrefix = isPrefix
        }

        public func matches(_ candidate: [UInt8]) -> Bool {
            isPrefix ? candidate.starts(with: aid) : candidate == aid
        }
    }

    public struct EntryError: Error, Hashable, Sendable, CustomStringConvertible {
        public var text: String
        public var reason: String
        public var description: String { "invalid AID '\(text)': \(reason)" }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    /// Parses a list: one AID per line (or separated by commas or semicolons; spaces inside an
    /// AID are fine), `#` starts a comment.
    public init(list text: String) throws(EntryError) {
        var entries: [Entry] = []
        for line in TextInput.normalized(text).split(separator: "\n") {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            for token in content.split(whereSeparator: { $0 == "," || $0 == ";" }) where token.contains(where: { !$0.isWhitespace }) {
                entries.append(try Entry(parsing: token))
            }
        }
        self.entries = entries
    }

    public func allows(_ aid: [UInt8]) -> Bool { entries.contains { $0.matches(aid) } }

    /// The AID a command would SELECT against the policy, or `nil` when it may be sent.
    public func refusal(for command: CommandAPDU) -> [UInt8]? {
        guard command.ins == 0xA4, command.p1 == 0x04, command.cla & 0x80 == 0 else { return nil }
        return allows(command.data) ? nil : command.data
    }

    /// The same for a command held as its encoding (`apdu script`'s and `send`'s APDUs, checked
    /// before anything is sent); nil for bytes that are no command APDU.
    public func refusal(forEncoded encoded: [UInt8]) -> [UInt8]? {
        guard let command = try? CommandAPDU(bytes: encoded) else { return nil }
        return refusal(for: command)
    }
}
