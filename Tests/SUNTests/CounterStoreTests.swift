import Foundation
import SUN
import SUNStore
import Synchronization
import Testing

@Suite("SUN replay counters in SQLite: atomic check-and-update, migrations, concurrent verifiers")
struct CounterStoreTests {
    func path() -> String { FileManager.default.temporaryDirectory.appendingPathComponent("sun-\(UUID()).sqlite").path }

    @Test("a counter is accepted once and only when it grows; the file keeps it across opens")
    func acceptOnce() throws {
        let file = path()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let uid: [UInt8] = [0x04, 0xDE, 0x5F, 0x1E, 0xAC, 0xC0, 0x40]
        let store = try SQLiteCounterStore(path: file)
        #expect(try store.accept(uid: uid, counter: 61))
        #expect(try !store.accept(uid: uid, counter: 61))
        #expect(try !store.accept(uid: uid, counter: 60))
        #expect(try store.accept(uid: uid, counter: 62))
        #expect(try store.accept(uid: [1, 2, 3, 4, 5, 6, 7], counter: 0))
        let again = try SQLiteCounterStore(path: file)
        #expect(try again.lastCounter(uid: uid) == 62)
        #expect(try !again.accept(uid: uid, counter: 62))
    }

    @Test("through verify: the AN12196 tap accepted, the same URL again refused as a replay")
    func replay() throws {
        let file = path()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let zero = [UInt8](repeating: 0, count: 16)
        let keys = try SDMKeys(metaRead: zero, fileRead: zero)
        let m = try SUNMessage(url: "https://ntag.nxp.com/424?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086")
        let store = try SQLiteCounterStore(path: file)
        #expect(try m.verify(keys: keys, store: store).counter == 61)
        do {
            _ = try m.verify(keys: keys, store: store)
            Issue.record("a replay was accepted")
        } catch let e as SUNError {
            #expect(e.kind == .replay)
        }
    }

    @Test("two stores on one file, eight threads, the same 500 taps each: no tap accepted twice, every UID ends at its last counter")
    func concurrent() throws {
        let file = path()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let stores = [try SQLiteCounterStore(path: file), try SQLiteCounterStore(path: file)]
        let accepted = Mutex<[[Int]]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let store = stores[worker % 2]
            for tap in 0..<500 {
                let uid: [UInt8] = [0x04, UInt8(tap % 50), 0, 0, 0, 0, 0]
                if (try? store.accept(uid: uid, counter: tap / 50 + 1)) == true { accepted.withLock { $0.append([tap % 50, tap / 50 + 1]) } }
            }
        }
        let taps = accepted.withLock { $0 }
        // Each (UID, counter) at most once: the threads race, a lower counter that arrives late is refused.
        #expect(Set(taps).count == taps.count && taps.count >= 50, "\(taps.count) accepted")
        for u in 0..<50 { #expect(try stores[0].lastCounter(uid: [0x04, UInt8(u), 0, 0, 0, 0, 0]) == 10) }
    }

    @Test("a file of a newer schema, or not a database: one clear error")
    func badFiles() throws {
        let file = path()
        defer { try? FileManager.default.removeItem(atPath: file) }
        FileManager.default.createFile(atPath: file, contents: Data("not a database, just text".utf8))
        #expect(throws: CounterStoreError.self) { try SQLiteCounterStore(path: file) }
        #expect(throws: CounterStoreError.self) { try SQLiteCounterStore(path: "/proc/no/such/dir/x.sqlite") }
    }
}
