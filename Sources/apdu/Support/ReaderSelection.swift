import Foundation
import PCSC

/// Picks the reader a command works on (docs/cli.md, "Choosing a reader"). Connect through
/// `context` afterwards: a wait that outlived a pcscd restart has a new one.
final class ReaderSelection {
    private(set) var context: Context

    init() throws {
        context = try Context()
    }

    /// pcscd went away during a wait: reconnect until `deadline`, or give up with 69.
    private func renewContext(until deadline: ContinuousClock.Instant, after error: PCSCError) throws {
        while ContinuousClock.now < deadline {
            usleep(200_000)
            if let fresh = try? Context() {
                context = fresh
                return
            }
        }
        throw Failure(.unavailable, "pcscd stopped while waiting for a card (\(error.constantName ?? "\(error)")) and did not come back in time")
    }

    static let serviceLost: Set<PCSCError> = [.noService, .serviceStopped, .commError, .invalidHandle, .unknownError, .noReadersAvailable, .unknownReader]

    /// The reader to use, with its card present (waiting up to `wait` for one).
    func chooseReaderWithCard(_ requested: String?, wait: Duration?) throws -> String {
        try chooseCard(requested, wait: wait).reader
    }

    /// The reader to use and the ATR pcscd reported for its card (waiting up to `wait` for one).
    func chooseCard(_ requested: String?, wait: Duration?) throws -> (reader: String, atr: [UInt8]) {
        let readers = try context.readers()
        if let requested {
            let name = try match(requested, in: readers)
            return (name, try waitForCard(in: name, wait: wait))
        }
        if readers.isEmpty {
            throw Failure(.unavailable, "no readers found; plug one in (pcscd sees none)")
        }
        if readers.count == 1 {
            return (readers[0], try waitForCard(in: readers[0], wait: wait))
        }
        var states = readers.map { ReaderState(reader: $0) }
        try context.statusChange(&states, timeout: .zero)
        let withCard = states.filter { $0.eventState.contains(.present) }
        if withCard.count == 1 { return (withCard[0].reader, withCard[0].atr) }
        if withCard.count > 1 {
            throw Failure(.usage, "several readers have a card; choose one with --reader:\n" + listing(withCard.map(\.reader)))
        }
        guard let wait else {
            throw Failure(.unavailable, "no card in any reader (use --wait SECONDS to wait for one)")
        }
        // Wait for the first card in any reader.
        let deadline = ContinuousClock.now + wait
        for i in states.indices { states[i].acknowledge() }
        while ContinuousClock.now < deadline {
            let changed = try context.statusChange(&states, timeout: deadline - ContinuousClock.now)
            if !changed { break }
            if let s = states.first(where: { $0.eventState.hasUsableCard }) {
                return (s.reader, s.atr)
            }
            for i in states.indices { states[i].acknowledge() }
        }
        throw Failure(.unavailable, "no card presented within \(format(wait))")
    }

    /// Resolves `--reader`: exact name, index, or unique case-insensitive substring.
    func match(_ requested: String, in readers: [String]) throws -> String {
        if readers.contains(requested) { return requested }
        if let index = Int(requested) {
            guard readers.indices.contains(index) else {
                throw Failure(.usage, "no reader with index \(index); readers:\n" + listing(readers))
            }
            return readers[index]
        }
        let hits = readers.filter { $0.lowercased().contains(requested.lowercased()) }
        if hits.count == 1 { return hits[0] }
        if hits.isEmpty {
            let known = readers.isEmpty ? " (pcscd sees no readers)" : "; readers:\n" + listing(readers)
            throw Failure(.usage, "unknown reader '\(requested)'\(known)")
        }
        throw Failure(.usage, "'\(requested)' matches several readers; be more specific:\n" + listing(hits))
    }

    /// Returns the card's ATR as pcscd last saw it.
    @discardableResult
    func waitForCard(in reader: String, wait: Duration?) throws -> [UInt8] {
        var states = [ReaderState(reader: reader)]
        try context.statusChange(&states, timeout: .zero)
        if states[0].eventState.hasUsableCard { return states[0].atr }
        if states[0].eventState.contains(.unknown) { throw Failure(.unavailable, "reader '\(reader)' is gone") }
        guard let wait else {
            throw Failure(.unavailable, "no card in reader '\(reader)' (use --wait SECONDS to wait for one)")
        }
        let deadline = ContinuousClock.now + wait
        while ContinuousClock.now < deadline {
            states[0].acknowledge()
            let changed: Bool
            do {
                changed = try context.statusChange(&states, timeout: deadline - ContinuousClock.now)
            } catch {
                guard Self.serviceLost.contains(error) else { throw error }
                try renewContext(until: deadline, after: error)
                states = [ReaderState(reader: reader)]
                continue
            }
            if states[0].eventState.hasUsableCard { return states[0].atr }
            if states[0].eventState.contains(.unknown) {
                // The reader vanished (pcscd restarting): wait for it to come back.
                usleep(200_000)
                states = [ReaderState(reader: reader)]
                continue
            }
            if !changed { break }
        }
        throw Failure(.unavailable, "no card presented in '\(reader)' within \(format(wait))")
    }


    private func listing(_ readers: [String]) -> String {
        readers.map { "  \(Terminal.safe($0))" }.joined(separator: "\n")
    }

    private func format(_ d: Duration) -> String {
        let (s, a) = d.components
        let seconds = Double(s) + Double(a) / 1e18
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}
