// The vpcd reader slots of Scripts/with-virtual-readers, handed out one test at a time, and
// helpers that insert a virtual card for a test's duration.
import Foundation
import PCSC
import VirtualCard

/// One vpcd reader slot from `Scripts/with-virtual-readers`.
public struct ReaderSlot: Sendable, Hashable {
    public var port: UInt16
    public var reader: String
}

public struct VirtualReadersMissing: Error, CustomStringConvertible {
    public init() {}
    public var description: String {
        "no virtual readers: integration tests run beside a private pcscd; use Scripts/test, or Scripts/with-virtual-readers 16 swift test"
    }
}

/// Hands out the slots `Scripts/with-virtual-readers` announced, one test at a time per slot,
/// so tests running in parallel never share a reader.
public actor ReaderSlots {
    public static let shared = ReaderSlots()

    private var free: [ReaderSlot]
    /// Waiting requests, served in order, each as soon as enough slots are free.
    private var waiters: [(count: Int, continuation: CheckedContinuation<[ReaderSlot], Never>)] = []
    public nonisolated let all: [ReaderSlot]

    init() {
        let env = ProcessInfo.processInfo.environment
        let ports = (env["APDU_VPCD_PORTS"] ?? "").split(separator: " ").compactMap { UInt16($0) }
        let names = (env["APDU_VPCD_READERS"] ?? "").split(separator: "\n").map(String.init)
        all = zip(ports, names).map { ReaderSlot(port: $0, reader: $1) }
        free = all
    }

    /// Takes a free slot, waiting for one if all are in use. Throws when there are none at all.
    public func acquire() async throws -> ReaderSlot {
        try await acquire(count: 1)[0]
    }

    /// Takes `count` slots at once — all or nothing, so two tests that each need several never
    /// hold part of what the other waits for.
    public func acquire(count: Int) async throws -> [ReaderSlot] {
        guard !all.isEmpty, all.count >= count else { throw VirtualReadersMissing() }
        if waiters.isEmpty && free.count >= count { return take(count) }
        return await withCheckedContinuation { waiters.append((count, $0)) }
    }

    public func release(_ slot: ReaderSlot) {
        free.append(slot)
        while let first = waiters.first, free.count >= first.count {
            waiters.removeFirst()
            first.continuation.resume(returning: take(first.count))
        }
    }

    private func take(_ count: Int) -> [ReaderSlot] {
        let taken = Array(free.suffix(count))
        free.removeLast(count)
        return taken
    }
}

public struct Timeout: Error, CustomStringConvertible {
    public var what: String
    public var description: String { "timed out waiting for \(what)" }
}

/// Waits until pcscd reports the reader's card present (or absent).
public func waitForCard(in reader: String, present: Bool, timeout: Duration = .seconds(10)) throws {
    let context = try Context()
    var states = [ReaderState(reader: reader)]
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        try context.statusChange(&states, timeout: .milliseconds(500))
        let s = states[0].eventState
        if present ? s.hasUsableCard : s.contains(.empty) { return }
        states[0].acknowledge()
    }
    throw Timeout(what: "card \(present ? "insertion" : "removal") in \(reader)")
}

/// A card inserted into a slot for the duration of a test.
public final class InsertedCard: @unchecked Sendable {
    public let slot: ReaderSlot
    public let client: VPCDClient
    public var reader: String { slot.reader }

    init(slot: ReaderSlot, client: VPCDClient) {
        self.slot = slot
        self.client = client
    }

    /// Pulls the card and waits until pcscd has noticed.
    public func remove() throws {
        client.stop()
        try waitForCard(in: slot.reader, present: false)
    }
}

/// Inserts `card` into a free slot, runs `body`, then removes the card and frees the slot.
public func withInsertedCard<R: Sendable>(
    _ card: any EmulatedCard, faults: Faults = .none,
    _ body: (InsertedCard) async throws -> R
) async throws -> R {
    let slot = try await ReaderSlots.shared.acquire()
    do {
        let result = try await withCard(card, in: slot, faults: faults, body)
        await ReaderSlots.shared.release(slot)
        return result
    } catch {
        await ReaderSlots.shared.release(slot)
        throw error
    }
}

/// Inserts `card` into `slot` (one the caller holds, e.g. from `withEmptySlot`), runs `body`,
/// then removes the card: the same reader again and again, as a person re-presents a tag.
public func withCard<R: Sendable>(
    _ card: any EmulatedCard, in slot: ReaderSlot, faults: Faults = .none,
    _ body: (InsertedCard) async throws -> R
) async throws -> R {
    let client = VPCDClient(port: slot.port, card: card, faults: faults)
    client.start()
    let inserted = InsertedCard(slot: slot, client: client)
    do {
        try waitForCard(in: slot.reader, present: true)
        let result = try await body(inserted)
        try inserted.remove()
        return result
    } catch {
        client.stop()
        try? waitForCard(in: slot.reader, present: false)
        throw error
    }
}

/// Inserts each of `cards` into a slot of its own (taken all at once), runs `body` with the slots
/// in the same order, then removes the cards and frees the slots once pcscd has seen them go.
public func withInsertedCards<R: Sendable>(
    _ cards: [any EmulatedCard], _ body: ([ReaderSlot]) async throws -> R
) async throws -> R {
    let slots = try await ReaderSlots.shared.acquire(count: cards.count)
    let clients = zip(slots, cards).map { VPCDClient(port: $0.port, card: $1) }
    clients.forEach { $0.start() }
    defer {
        // Free the slots only once pcscd has seen the cards go, so the next test starts clean.
        clients.forEach { $0.stop() }
        for s in slots { try? waitForCard(in: s.reader, present: false) }
        Task { for s in slots { await ReaderSlots.shared.release(s) } }
    }
    for slot in slots { try waitForCard(in: slot.reader, present: true) }
    return try await body(slots)
}

/// Runs `apdu emulate ARGUMENTS --port PORT` into `slot` until `body` is done, then stops it and
/// waits until pcscd has seen the card go. Returns `body`'s result and the emulator's standard
/// error (its start line and load report).
public func withEmulator<R>(_ arguments: [String], in slot: ReaderSlot, _ body: () throws -> R) throws -> (result: R, stderr: String) {
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("emulator-\(UUID()).log").path
    defer { try? FileManager.default.removeItem(atPath: log) }
    let emulator = try startAPDU(["emulate"] + arguments + ["--port", String(slot.port)], errorLog: log)
    defer {
        emulator.terminate()
        emulator.waitUntilExit()
        try? waitForCard(in: slot.reader, present: false)
    }
    try waitForCard(in: slot.reader, present: true)
    let result = try body()
    return (result, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
}

/// A free slot with no card in it, for tests that manage insertion themselves.
public func withEmptySlot<R: Sendable>(_ body: (ReaderSlot) async throws -> R) async throws -> R {
    let slot = try await ReaderSlots.shared.acquire()
    defer { Task { await ReaderSlots.shared.release(slot) } }
    // A card an earlier test pulled may not have left pcscd's view yet.
    try waitForCard(in: slot.reader, present: false)
    return try await body(slot)
}
