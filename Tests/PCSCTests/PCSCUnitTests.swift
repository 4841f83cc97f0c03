@testable import PCSC
import Foundation
import Testing

@Suite("PCSC pure parts")
struct PCSCUnitTests {
    @Test("every named error maps to its C constant, message and matches in catch")
    func errorMapping() {
        #expect(PCSCError.noService.constantName == "SCARD_E_NO_SERVICE")
        #expect(PCSCError.removedCard.rawValue == 0x8010_0069)
        #expect(PCSCError.removedCard.message == "Card was removed.")
        #expect(PCSCError.timeout.description.contains("SCARD_E_TIMEOUT"))
        #expect(PCSCError.unsupportedFeature == PCSCError.unexpected)
        // An unknown code survives with its value.
        let odd = PCSCError(rawValue: 0x8010_00FE)
        #expect(odd.constantName == nil)
        #expect(odd.description.contains("0x801000FE"))
        func thrower() throws { throw PCSCError.sharingViolation }
        var matched = false
        do { try thrower() } catch PCSCError.sharingViolation { matched = true } catch {}
        #expect(matched)
        // pcsclite 1.9 defines 48 SCARD_E/F/P codes (0x01-0x31 but 0x22) and 11 SCARD_W codes.
        #expect(PCSCError.names.count == 59)
    }

    @Test("multi-strings split without trimming, stop at the empty string, never overrun",
          arguments: [
            ([], []),
            ([0, 0], []),
            (Array("A\0".utf8) + [0], ["A"]),
            (Array("Reader One 00 00\0 spaced \0".utf8) + [0], ["Reader One 00 00", " spaced "]),
            (Array("no terminator".utf8), ["no terminator"]),
            (Array("A\0\0B\0\0".utf8), ["A"]),
            (Array("Lecteur é 00 00\0".utf8) + [0], ["Lecteur é 00 00"]),
          ] as [([UInt8], [String])])
    func multiString(bytes: [UInt8], expected: [String]) {
        #expect(MultiString.split(bytes) == expected)
    }

    @Test("Part 10 feature list and TLV properties parse, truncated input is ignored")
    func features() {
        let list: [UInt8] = [0x12, 0x04, 0x42, 0x33, 0x00, 0x12, 0x13, 0x04, 0x42, 0x00, 0x00, 0x01, 0x06, 0x02, 0xFF]
        let parsed = parseFeatureList(list)
        #expect(parsed[.getTLVProperties] == 0x4233_0012)
        #expect(parsed[.ccidEscapeCommand] == 0x4200_0001)
        #expect(parsed.count == 2)
        let tlv: [UInt8] = [0x0A, 0x04, 0x00, 0x00, 0x01, 0x00, 0x0B, 0x02, 0x2F, 0x07, 0x08, 0x03, 0x41, 0x42, 0x43, 0x0C, 0x09]
        let properties = ReaderProperties(tlv: tlv)
        #expect(properties.maxAPDUDataSize == 65536)
        #expect(properties.vendorID == 0x072F)
        #expect(properties.firmwareID == "ABC")
        #expect(properties.productID == nil)
        #expect(getFeatureRequest == 0x4200_0D48)
    }

    @Test("option sets name themselves")
    func names() {
        #expect(Protocols.t1.name == "T=1")
        #expect(Protocols.any.name == "T=0|T=1")
        #expect(ReaderStatus(rawValue: 0x0003_0022).names == ["changed", "present"])
        #expect(Attribute.atrString.rawValue == 0x0009_0303)
        #expect(Attribute.maxInput.rawValue == 0x0007_A007)
    }
}

/// The grouping rules of the lock that keeps pcsclite's handle lists consistent, checked with
/// stand-in calls (the real ones are exercised through pcscd in the integration tests).
@Suite("HandleTableLock rules")
struct HandleTableLockTests {
    final class Counts: @unchecked Sendable {
        private let lock = NSLockLite()
        private var card = 0, connect = 0, change = 0
        private(set) var violations: [String] = []
        func enter(_ kind: HandleTableLock.Kind) {
            lock.withLock {
                switch kind {
                case .cardCall:
                    if connect + change > 0 { violations.append("card call beside \(connect) connects, \(change) changes") }
                    card += 1
                case .connect:
                    if card + change > 0 { violations.append("connect beside \(card) card calls, \(change) changes") }
                    connect += 1
                case .change:
                    if card + connect + change > 0 { violations.append("change not alone") }
                    change += 1
                }
            }
        }
        func leave(_ kind: HandleTableLock.Kind) {
            lock.withLock {
                switch kind {
                case .cardCall: card -= 1
                case .connect: connect -= 1
                case .change: change -= 1
                }
            }
        }
    }

    @Test("card calls share, connects share, changes run alone — under 12 threads of mixed calls")
    func grouping() {
        let lock = HandleTableLock()
        let counts = Counts()
        let kinds: [HandleTableLock.Kind] = [.cardCall(handle: 1), .cardCall(handle: 2), .cardCall(handle: 3), .connect(reader: "a"),
                                             .connect(reader: "b"), .change(waitsForTransactionsOn: nil)]
        let group = DispatchGroup()
        for t in 0..<12 {
            group.enter()
            Thread {
                defer { group.leave() }
                for i in 0..<400 {
                    let kind = kinds[(t * 7 + i * 5) % kinds.count]
                    lock.with(kind) {
                        counts.enter(kind)
                        usleep(UInt32(20 + (i % 3) * 30))
                        counts.leave(kind)
                    }
                }
            }.start()
        }
        #expect(group.wait(timeout: .now() + 60) == .success, "stuck")
        #expect(counts.violations.isEmpty, "\(counts.violations.prefix(3))")
    }

    @Test("a transaction holder's calls pass a waiting connect, so a call pcscd holds for that transaction cannot deadlock")
    func holderGoesThrough() {
        let lock = HandleTableLock()
        let holderDone = DispatchSemaphore(value: 0)
        let blockedStarted = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        lock.transactionBegan(on: "r1", handle: 1)
        // Another handle's call that pcscd holds back until handle 1's transaction ends.
        finished.enter()
        Thread {
            lock.with(.cardCall(handle: 2)) { blockedStarted.signal(); holderDone.wait() }
            finished.leave()
        }.start()
        blockedStarted.wait()
        // A connect to another reader now waits for the card calls to drain …
        finished.enter()
        Thread { lock.with(.connect(reader: "r2")) {}; finished.leave() }.start()
        usleep(50_000)
        // … and the holder's own calls still go through, ending the transaction.
        finished.enter()
        Thread {
            lock.with(.cardCall(handle: 1)) {}
            lock.with(.cardCall(handle: 1)) {}
            lock.transactionEnded(on: "r1", handle: 1)
            holderDone.signal()
            finished.leave()
        }.start()
        #expect(finished.wait(timeout: .now() + 5) == .success, "deadlock")
    }

    @Test("a connect to a reader this process holds a transaction on waits for its end, and holds nobody back meanwhile")
    func connectWaitsForOwnTransaction() {
        let lock = HandleTableLock()
        let connected = Locked(false)
        lock.transactionBegan(on: "r", handle: 1)
        let done = DispatchSemaphore(value: 0)
        Thread { lock.with(.connect(reader: "r")) { connected.set(true) }; done.signal() }.start()
        usleep(50_000)
        #expect(!connected.value, "the connect ran during the transaction")
        // Another handle's card call is not held back by that connect, which cannot run yet.
        let other = DispatchSemaphore(value: 0)
        Thread { lock.with(.cardCall(handle: 2)) {}; other.signal() }.start()
        #expect(other.wait(timeout: .now() + 2) == .success, "a card call waited behind a connect that could not run")
        lock.transactionEnded(on: "r", handle: 1)
        #expect(done.wait(timeout: .now() + 2) == .success)
        #expect(connected.value)
    }

    final class Locked<T>: @unchecked Sendable {
        private let lock = NSLockLite()
        private var stored: T
        init(_ value: T) { stored = value }
        var value: T { lock.withLock { stored } }
        func set(_ v: T) { lock.withLock { stored = v } }
    }
}
