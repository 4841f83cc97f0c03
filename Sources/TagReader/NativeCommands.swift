// A tag's own commands through whichever reader holds it, the desktop `sendMiFareCommand`.
import ISO7816
import NFCTags
import PCSC

/// A tag's own commands through whatever reader holds it: the desktop `sendMiFareCommand`.
public enum NativeCommands {
    /// Chooses the reader, connects, begins a transaction, opens the reader's tag-command
    /// channel (`dialect`, or from the reader's name and a probe) and runs `body`. The
    /// transparent session ends, then the transaction, then the connection, on every path.
    /// - Throws: `ReaderError`, `PCSCError`, `TagCommandError`, and what `body` throws.
    public static func run<T>(reader requested: String?, wait: Duration?, observer: ((Exchange) -> Void)? = nil, dialect: ReaderDialect? = nil,
                              _ body: (_ reader: String, _ atr: [UInt8], _ commands: TagCommandChannel) throws -> T) throws -> T {
        let selection = try ReaderSelection()
        let (reader, atr) = try selection.chooseCard(requested, wait: wait)
        let card = try selection.connect(reader, until: .now + max(wait ?? .zero, ReaderSelection.defaultPatience), transaction: true)
        defer { try? card.disconnect() }
        return try card.endingTransaction { try run(card: card, atr: atr, observer: observer, dialect: dialect, body) }
    }

    /// The same on a connection (and transaction) the caller holds.
    public static func run<T>(card: Card, atr: [UInt8], observer: ((Exchange) -> Void)? = nil, dialect: ReaderDialect? = nil,
                              _ body: (_ reader: String, _ atr: [UInt8], _ commands: TagCommandChannel) throws -> T) throws -> T {
        let transport = APDUTransport(channel: PCSCChannel(card: card), observer: observer)
        let commands = try TagCommandChannel.open(transport: transport, readerName: card.reader, override: dialect)
        return try commands.session { try body(card.reader, atr, $0) }
    }
}

extension MiFareTag {
    /// Sends a native command (`30 04` READ, `60` GET_VERSION, …) through the reader's dialect
    /// and returns the tag's answer, as Core NFC's `sendMiFareCommand` does: the reader adds the
    /// CRC. Runs in a transaction of its own; the transparent session ends with it.
    /// - Throws: `TagCommandError` `.noRawPath` on a storage-only reader, and the reader's errors.
    public func sendMiFareCommand(_ frame: [UInt8], dialect: ReaderDialect? = nil) async throws -> TagAnswer {
        let observer = connection.session.observer
        let atr = connection.atr
        return try await connection.perform { card in
            try card.withTransaction {
                try NativeCommands.run(card: card, atr: atr, observer: observer, dialect: dialect) { _, _, commands in try commands.transceive(frame) }
            }
        }
    }
}
