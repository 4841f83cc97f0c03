import Foundation
import ISO7816
import PCSC
import Testing
import TestSupport
import VirtualCard

func demoCard(_ behaviour: HostBehaviour = HostBehaviour()) -> ApplicationHost {
    ApplicationHost(applications: [DemoApplication()], behaviour: behaviour)
}

/// Asks pcscd to re-read reader.conf.d (`pcscd -H`).
func rescanReaders() -> Int32 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/sbin/pcscd")
    p.arguments = ["-H"]
    try? p.run()
    p.waitUntilExit()
    return p.terminationStatus
}

let selectDemo: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x06] + DemoApplication.defaultAID + [0x00]

@Suite("PC/SC through a real pcscd")
struct PCSCIntegrationTests {
    @Test("the virtual readers are listed byte-exact")
    func readersListed() async throws {
        let slots = ReaderSlots.shared.all
        #expect(!slots.isEmpty, "\(VirtualReadersMissing())")
        let readers = try Context().readers()
        for slot in slots {
            #expect(readers.contains(slot.reader))
        }
    }

    @Test("insertion and removal are seen by a status-change wait")
    func insertAndRemove() async throws {
        try await withEmptySlot { slot in
            let context = try Context()
            var states = [ReaderState(reader: slot.reader)]
            try context.statusChange(&states, timeout: .zero)
            #expect(states[0].eventState.contains(.empty))
            states[0].acknowledge()
            let before = states[0].eventCount

            let client = VPCDClient(port: slot.port, card: demoCard())
            client.start()
            defer { client.stop() }
            let changed = try context.statusChange(&states, timeout: .seconds(5))
            #expect(changed)
            #expect(states[0].eventState.contains(.present))
            #expect(states[0].atr == ApplicationHost.defaultATR)
            #expect(states[0].eventCount != before)
            states[0].acknowledge()

            client.stop()
            #expect(try context.statusChange(&states, timeout: .seconds(5)))
            #expect(states[0].eventState.contains(.empty))
        }
    }

    @Test("a wait with nothing happening times out and returns false")
    func statusChangeTimeout() async throws {
        try await withEmptySlot { slot in
            let context = try Context()
            var states = [ReaderState(reader: slot.reader)]
            try context.statusChange(&states, timeout: .zero)
            states[0].acknowledge()
            let start = ContinuousClock.now
            #expect(try context.statusChange(&states, timeout: .milliseconds(300)) == false)
            #expect(ContinuousClock.now - start >= .milliseconds(250))
        }
    }

    @Test("cancel interrupts a wait from another thread")
    func cancelWait() async throws {
        try await withEmptySlot { slot in
            let context = try Context()
            var states = [ReaderState(reader: slot.reader)]
            try context.statusChange(&states, timeout: .zero)
            states[0].acknowledge()
            let waiter = Thread {
                usleep(200_000)
                try? context.cancel()
            }
            waiter.start()
            #expect(throws: PCSCError.cancelled) {
                try context.statusChange(&states, timeout: .seconds(10))
            }
        }
    }

    @Test("the plug-and-play pseudo-reader waits quietly while no reader comes or goes")
    func plugAndPlay() throws {
        // pcscd 1.9.9 cannot add vpcd readers at run time (serial readers are read at start),
        // so this checks the pseudo-reader is accepted and times out cleanly.
        let context = try Context()
        var states = [ReaderState(reader: ReaderState.plugAndPlayNotification)]
        #expect(try context.statusChange(&states, timeout: .milliseconds(300)) == false)
    }

    @Test("transmit round trip, status and attributes")
    func transmit() async throws {
        try await withInsertedCard(demoCard()) { inserted in
            let card = try Context().connect(reader: inserted.reader)
            let fci = try card.transmit(selectDemo)
            #expect(Array(fci.suffix(2)) == [0x90, 0x00])
            #expect(fci.first == 0x6F)
            let echo = try card.transmit([0x00, 0xEE, 0x00, 0x00, 0x03, 0xCA, 0xFE, 0x01])
            #expect(echo == [0xCA, 0xFE, 0x01, 0x90, 0x00])
            let status: CardStatus
            do { status = try card.status() } catch { Issue.record("status: \(error)"); throw error }
            #expect(status.readerNames == [inserted.reader])
            #expect(status.atr == ApplicationHost.defaultATR)
            #expect(status.state.contains(.present))
            #expect(!card.activeProtocol.isEmpty)
            // vpcd implements no reader attributes: asking must be a clean PCSCError, never a crash.
            for attribute in [Attribute.deviceFriendlyName, .vendorName, .atrString, .maxInput] {
                #expect(throws: PCSCError.self) { _ = try card.attribute(attribute) }
            }
            // Nor the Part 10 feature request: an empty list, not an error.
            #expect(card.features().isEmpty)
            try card.disconnect()
        }
    }

    /// pcsclite's client walks every context's handle list at the start of each card call while
    /// connect and disconnect change those lists unlocked (see PCSC.HandleTableLock). Without
    /// that lock, a 3-second run of this test crashed the process about one time in six;
    /// `Scripts/stress` runs it for 30 s (APDU_CONCURRENCY_SECONDS).
    @Test("threads connecting, transmitting and disconnecting at once on four readers: no crash, every exchange whole")
    func concurrentHandles() async throws {
        try await withInsertedCards((0..<4).map { _ in demoCard() }) { slots in
            let seconds = ProcessInfo.processInfo.environment["APDU_CONCURRENCY_SECONDS"].flatMap(Double.init) ?? 3
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            let cycles = Locked(0)
            let failures = Locked([String]())
            let group = DispatchGroup()
            for t in 0..<16 {
                let reader = slots[t % slots.count].reader
                group.enter()
                Thread {
                    defer { group.leave() }
                    while ContinuousClock.now < deadline {
                        do {
                            let card = try Context().connect(reader: reader)
                            let fci = try card.transmit(selectDemo)
                            if fci.suffix(2) != [0x90, 0x00] { failures.withLock { $0.append("thread \(t): SELECT \(fci.suffix(2))") } }
                            let payload: [UInt8] = [UInt8(t), 0x5A, 0xA5]
                            let echo = try card.transmit([0x00, 0xEE, 0x00, 0x00, 0x03] + payload)
                            if echo != payload + [0x90, 0x00] { failures.withLock { $0.append("thread \(t): \(echo)") } }
                            try card.disconnect()
                            cycles.withLock { $0 += 1 }
                        } catch {
                            failures.withLock { $0.append("thread \(t): \(error)") }
                            return
                        }
                    }
                }.start()
            }
            group.wait()
            #expect(failures.current.isEmpty, "\(failures.current.prefix(5))")
            #expect(cycles.current > 100, "only \(cycles.current) cycles")
            print("concurrent handles: \(cycles.current) connect/transmit/disconnect cycles on 16 threads in \(seconds) s")
        }
    }

    @Test("an extended response far beyond 258 bytes fits the receive buffer")
    func extendedResponse() async throws {
        try await withInsertedCard(demoCard()) { inserted in
            let card = try Context().connect(reader: inserted.reader)
            _ = try card.transmit(selectDemo)
            // ECHO with extended Le FFFD: 65533 pattern bytes + SW, the most vpcd's 2-byte framing carries.
            let answer = try card.transmit([0x00, 0xEE, 0x00, 0x00, 0x00, 0xFF, 0xFD])
            try #require(answer.count == 65535)
            #expect(answer[300] == UInt8(300 & 0xFF))
            #expect(Array(answer.suffix(2)) == [0x90, 0x00])
        }
    }

    @Test("a transaction keeps another handle's exchange out until it ends")
    func transaction() async throws {
        try await withInsertedCard(demoCard()) { inserted in
            let card = try Context().connect(reader: inserted.reader)
            let other = try Context().connect(reader: inserted.reader)
            let otherDone = Locked<ContinuousClock.Instant?>(nil)
            let transactionEnd = try card.withTransaction { () -> ContinuousClock.Instant in
                let thread = Thread {
                    _ = try? other.transmit(selectDemo)
                    otherDone.withLock { $0 = .now }
                }
                thread.start()
                usleep(300_000)
                #expect(otherDone.current == nil, "the other handle got in during the transaction")
                let answer = try card.transmit(selectDemo)
                #expect(answer.suffix(2) == [0x90, 0x00])
                return .now
            }
            let deadline = ContinuousClock.now + .seconds(5)
            while otherDone.current == nil && ContinuousClock.now < deadline { usleep(10_000) }
            let done = try #require(otherDone.current)
            #expect(done >= transactionEnd)
        }
    }

    /// The calls pcscd holds back for a transaction must not deadlock with PCSC.HandleTableLock:
    /// while one handle holds a transaction and another's transmit waits for it, a third thread
    /// disconnects and a fourth connects to the same reader; all finish once the transaction ends.
    @Test("transactions, waiting transmits, connects and disconnects on other threads: no deadlock")
    func transactionsWithConnectsAndDisconnects() async throws {
        try await withInsertedCards((0..<2).map { _ in demoCard() }) { slots in
            let holder = try Context().connect(reader: slots[0].reader)
            let waiter = try Context().connect(reader: slots[0].reader)
            let elsewhere = try Context().connect(reader: slots[1].reader)
            let finished = Locked([String]())
            let group = DispatchGroup()
            func spawn(_ name: String, _ body: @escaping @Sendable () throws -> Void) {
                group.enter()
                Thread {
                    defer { group.leave() }
                    do { try body(); finished.withLock { $0.append(name) } } catch { finished.withLock { $0.append("\(name) failed: \(error)") } }
                }.start()
            }
            try holder.withTransaction {
                spawn("transmit") { _ = try waiter.transmit(selectDemo) }
                usleep(100_000)
                spawn("disconnect") { try elsewhere.disconnect() }
                spawn("connect") { try Context().connect(reader: slots[0].reader).disconnect() }
                usleep(200_000)
                #expect(!finished.current.contains("transmit"), "the waiting transmit got in during the transaction")
                let answer = try holder.transmit(selectDemo)
                #expect(answer.suffix(2) == [0x90, 0x00])
            }
            let inTime = group.wait(timeout: .now() + 10) == .success
            #expect(inTime, "deadlock: only \(finished.current) finished")
            #expect(Set(finished.current) == ["transmit", "disconnect", "connect"])
        }
    }

    @Test("a reset by another handle is reported, and reconnect recovers")
    func resetAndReconnect() async throws {
        try await withInsertedCard(demoCard()) { inserted in
            let context = try Context()
            let card = try context.connect(reader: inserted.reader)
            _ = try card.transmit(selectDemo)
            let other = try context.connect(reader: inserted.reader)
            try other.disconnect(.reset)
            #expect(throws: PCSCError.resetCard) { try card.transmit(selectDemo) }
            try card.reconnect()
            // The reset deselected the application: ECHO now finds no application.
            #expect(try card.transmit([0x00, 0xEE, 0x00, 0x00, 0x01, 0x01]) == [0x6D, 0x00])
            #expect(try card.transmit(selectDemo).suffix(2) == [0x90, 0x00])
        }
    }

    @Test("a card pulled mid-exchange gives the removed-card error, not a hang")
    func pulledCard() async throws {
        try await withInsertedCard(demoCard(), faults: Faults(removeAfter: 1)) { inserted in
            let card = try Context().connect(reader: inserted.reader)
            _ = try card.transmit(selectDemo)
            let start = ContinuousClock.now
            var failure: PCSCError?
            do {
                let r = try card.transmit(selectDemo)
                Issue.record("transmit after the pull answered \(r.hexString)")
            } catch let e as PCSCError { failure = e }
            #expect(failure == .removedCard)
            #expect(ContinuousClock.now - start < .seconds(5))
            // Whatever the driver said for the broken exchange, the next call knows the card is gone.
            #expect(throws: PCSCError.removedCard) { try card.transmit(selectDemo) }
            print("pulled card: first error \(failure.map(String.init(describing:)) ?? "none")")
        }
    }

    @Test("connecting to an unknown reader is a clear error")
    func unknownReader() throws {
        #expect(throws: PCSCError.unknownReader) {
            _ = try Context().connect(reader: "No Such Reader 00 00")
        }
    }
}
