// The Core NFC-style session: tags and reader events from PC/SC as async sequences.
import Dispatch
import FoundationEssentials
import Threading
import Glibc
import ISO7816
import NDEF
import NFCTags
import PCSC

/// Delivers the tags and cards presented to PC/SC readers, the way Core NFC's
/// `NFCTagReaderSession` delivers them on an iPhone, with async/await instead of a delegate.
///
/// ```swift
/// let session = TagReaderSession()
/// for try await tag in session.tags() {
///     print(try await tag.ndef.readNDEF())
/// }
/// ```
///
/// A session is a description (which readers, which AIDs may be selected, where backups go);
/// each `tags()` or `events()` sequence watches pcscd on a thread of its own, survives pcscd
/// restarts, and stops (`SCardCancel`) when the task iterating it is cancelled or stops.
public struct TagReaderSession: Sendable {
    /// Which reader to watch: an exact name, an index, or a unique part of a name; nil: all.
    public var reader: String?
    /// The AIDs `NFCISO7816Tag.sendCommand` may SELECT (Core NFC's `select-identifiers`);
    /// nil: any. Refused SELECTs never reach the card.
    public var selectIdentifiers: SelectPolicy?
    /// Where `writeNDEF` keeps the old message first. The default is `apdu`'s own directory, so
    /// `apdu ndef-write --restore` can put it back.
    public var backups: any BackupStore
    /// Sees every APDU exchanged with a delivered tag (for tracing).
    public var observer: (@Sendable (Exchange) -> Void)?

    public init(reader: String? = nil, selectIdentifiers: SelectPolicy? = nil,
                backups: any BackupStore = DirectoryBackupStore.standard, observer: (@Sendable (Exchange) -> Void)? = nil) {
        self.reader = reader
        self.selectIdentifiers = selectIdentifiers
        self.backups = backups
        self.observer = observer
    }

    /// The readers pcscd knows now.
    public static func readers() async throws -> [String] {
        try await offThread { try Context().readers() }
    }

    /// Reader and card events as they happen, from now until the iterating task stops.
    /// Cards already present come first as `.cardPresent`. pcscd going away shows as
    /// `.serviceDown` (and its readers removed); the sequence goes on and reports `.serviceUp`.
    public func events() -> AsyncThrowingStream<ReaderEvent, any Error> {
        monitored { $0 }
    }

    /// Every tag or card presented, as it comes, connected and ready; cards already in a reader
    /// come first. Nothing is sent to a tag until one of its methods is called.
    public func tags() -> AsyncThrowingStream<NFCTag, any Error> {
        monitored { [self] event in
            switch event {
            case let .cardPresent(reader, atr), let .cardInserted(reader, atr):
                // A card gone again, or held exclusively by another program, is skipped.
                guard let card = try? Context().connect(reader: reader) else { return nil }
                return NFCTag(session: self, card: card, atr: atr)
            default:
                return nil
            }
        }
    }

    /// A `ReaderMonitor` on a thread of its own, its events about other readers than `reader`
    /// dropped and the rest turned into elements by `element` (nil: skip); cancelled when the
    /// iterating task stops.
    private func monitored<Element: Sendable>(_ element: @escaping @Sendable (ReaderEvent) -> Element?) -> AsyncThrowingStream<Element, any Error> {
        let requested = reader
        return AsyncThrowingStream { continuation in
            let monitor = ReaderMonitor()
            continuation.onTermination = { _ in monitor.cancel() }
            do throws(DetachedThread.StartError) {
                try DetachedThread.start {
                    do {
                        try monitor.run { event in
                            if let name = event.reader, let requested, !Self.matches(name, requested) { return true }
                            guard let value = element(event) else { return true }
                            if case .terminated = continuation.yield(value) { return false }
                            return true
                        }
                        continuation.finish()
                    } catch {
                        continuation.finish(throwing: error)
                    }
                }
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }

    /// The first tag presented (one already in a reader counts), waiting up to `timeout`
    /// (nil: until the task is cancelled).
    /// - Throws: `ReaderError.noCardWithin` when the time is up, `CancellationError` when cancelled.
    public func firstTag(timeout: Duration? = nil) async throws -> NFCTag {
        let tags = self.tags()
        return try await withThrowingTaskGroup(of: NFCTag?.self) { group in
            group.addTask {
                for try await tag in tags { return tag }
                return nil
            }
            if let timeout {
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let tag = first else {
                try Task.checkCancellation()
                throw ReaderError.noCardWithin(timeout ?? .zero, reader: reader)
            }
            return tag
        }
    }

    static func matches(_ name: String, _ requested: String) -> Bool {
        name == requested || name.lowercased().contains(requested.lowercased())
    }
}

/// Runs blocking PC/SC work on a thread of its own, off the cooperative pool.
func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        do throws(DetachedThread.StartError) {
            try DetachedThread.start { continuation.resume(with: Result { try body() }) }
        } catch {
            continuation.resume(throwing: error)
        }
    }
}
