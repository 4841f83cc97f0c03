import ArgumentParser
import Foundation
import ISO7816
import NDEF
import NFCTags
import PCSC

extension APDUCommand {
    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print reader and card events as they happen, until interrupted.",
            discussion: "Survives readers unplugged and pcscd restarts (reconnecting with backoff). With --json, one object per line.")

        @OptionGroup var output: OutputOptions

        @Option(help: ArgumentHelp("Stop after this many events (for scripts).", valueName: "n"))
        var count: Int?

        @Flag(help: "Read the NDEF message of every tag presented and print it (the desktop counterpart of iPhone background reading).")
        var ndef = false

        @OptionGroup var traceOptions: TraceOptions

        @Option(help: ArgumentHelp("Card-name list for ATRs.", valueName: "file"))
        var smartcardList = "/usr/share/pcsc/smartcard_list.txt"

        func validate() throws {
            if let count, count < 1 { throw ValidationError("--count must be 1 or more") }
        }

        func run() throws {
            restoreTerminationSignals()
            let names = try? String(contentsOfFile: smartcardList, encoding: .utf8)
            var emitted = 0
            var backoff: UInt32 = 100_000
            var announcedDown = false
            var known: [String: ReaderState] = [:]
            func emit(_ event: String, _ reader: String?, _ atr: [UInt8]? = nil, _ detail: String? = nil) {
                var cardName: String?
                if let atr, let names { cardName = ATR.names(forHex: atr.hexString, list: names).first }
                if output.json {
                    var m: [(String, JSON)] = [("event", .string(event)), ("time", .string(ISO8601DateFormatter().string(from: Date())))]
                    if let reader { m.append(("reader", .string(reader))) }
                    if let atr { m.append(("atr", .hex(atr))) }
                    if let cardName { m.append(("name", .string(cardName))) }
                    if let detail { m.append(("detail", .string(detail))) }
                    Terminal.print(JSON.object(m).serialized)
                } else {
                    var line = event
                    if let reader { line += "  \(Terminal.safe(reader))" }
                    if let atr { line += "  ATR \(Hex.encode(atr, separator: " "))" }
                    if let cardName { line += "  (\(Terminal.safe(cardName)))" }
                    if let detail { line += "  \(Terminal.safe(detail))" }
                    Terminal.print(line)
                }
                emitted += 1
            }
            func done() -> Bool { count.map { emitted >= $0 } ?? false }
            func readTag(_ reader: String, _ atr: [UInt8]) {
                guard ndef else { return }
                do {
                    let (session, message) = try TagSession.withTag(context: try Context(), reader: reader, atr: atr, trace: traceOptions) { session in
                        (session, try session.tag.readNDEF())
                    }
                    let (json, decoded, decodeError) = ndefReadJSON(session: session, message: message)
                    if output.json {
                        guard case var .object(members) = json else { return }
                        members.insert(("event", .string("ndef")), at: 0)
                        Terminal.print(JSON.object(members).serialized)
                    } else {
                        Terminal.print("ndef  \(Terminal.safe(reader))  \(message.count) bytes")
                        if let decoded {
                            for line in NDEFRender.lines(decoded, strict: true) { Terminal.print("  " + line) }
                            Terminal.print("  " + NDEFRender.verdictLine(BackgroundReadingVerdict(message: decoded)))
                        }
                        if let decodeError { Terminal.print("  malformed: \(Terminal.safe(decodeError.description))") }
                    }
                } catch {
                    let message: String
                    switch error {
                    case let f as Failure: message = f.message
                    case let e as TagError: message = e.message
                    case let e as PCSCError: message = e.failure.message
                    default: message = "\(error)"
                    }
                    emit("ndef-error", reader, nil, message)
                    return
                }
                emitted += 1
            }

            while !done() {
                let context: Context
                do { context = try Context() } catch {
                    if !announcedDown {
                        emit("service-down", nil, nil, "pcscd is not reachable; retrying")
                        announcedDown = true
                    }
                    usleep(backoff)
                    backoff = min(backoff * 2, 2_000_000)
                    continue
                }
                if announcedDown {
                    emit("service-up", nil, nil, "connected to pcscd again")
                    announcedDown = false
                }
                backoff = 100_000
                do {
                    try watch(context, &known, emit, readTag, done)
                } catch let error as PCSCError {
                    // A dying pcscd shows up as several different codes (no service, comm error,
                    // unknown or unavailable reader…); a watch outlives all of them. Only an
                    // explicit cancel ends it. Unexpected codes wait a little, so a persistent
                    // error repeats slowly and visibly instead of spinning.
                    if error == .cancelled {
                        Terminal.error(error.failure.message)
                        throw ExitCode(error.failure.status.rawValue)
                    }
                    emit("service-down", nil, nil, "pcscd went away (\(error.constantName ?? "\(error)")); reconnecting")
                    announcedDown = true
                    for (name, _) in known { emit("reader-removed", name) }
                    known = [:]
                    if !ReaderSelection.serviceLost.contains(error) { usleep(500_000) }
                    continue
                }
            }
        }

        func watch(_ context: Context, _ known: inout [String: ReaderState],
                   _ emit: (String, String?, [UInt8]?, String?) -> Void,
                   _ readTag: (String, [UInt8]) -> Void, _ done: () -> Bool) throws {
            while !done() {
                let readers = try context.readers()
                for gone in known.keys where !readers.contains(gone) {
                    emit("reader-removed", gone, nil, nil)
                    known[gone] = nil
                    if done() { return }
                }
                for name in readers where known[name] == nil {
                    emit("reader-added", name, nil, nil)
                    known[name] = ReaderState(reader: name)
                    if done() { return }
                }
                if done() { return }
                var states = readers.map { known[$0]! }
                // pcsclite takes at most 16 states per wait; with 16 readers the once-a-second
                // reader list check below stands in for the pseudo-reader.
                if states.count < 16 { states.append(ReaderState(reader: ReaderState.plugAndPlayNotification)) }
                // A bounded wait so a reader list change is noticed even where the pseudo-reader
                // is not reported (pcscd 1.9 counts only during the wait).
                try context.statusChange(&states, timeout: .seconds(1))
                for state in states where state.reader != ReaderState.plugAndPlayNotification {
                    guard let before = known[state.reader] else { continue }
                    let was = before.currentState, now = state.eventState
                    let countChanged = state.eventCount != before.currentEventCount && was != .unaware
                    if now.contains(.unknown) { continue }
                    if was == .unaware {
                        if now.contains(.present) {
                            emit("card-present", state.reader, state.atr, nil)
                            if !done() { readTag(state.reader, state.atr) }
                        }
                    } else if now.contains(.present) && (!was.contains(.present) || countChanged) {
                        if was.contains(.present) { emit("card-removed", state.reader, nil, nil) }
                        emit("card-inserted", state.reader, state.atr, nil)
                        if !done() { readTag(state.reader, state.atr) }
                    } else if now.contains(.empty) && was.contains(.present) {
                        emit("card-removed", state.reader, nil, nil)
                    }
                    var updated = state
                    updated.acknowledge()
                    known[state.reader] = updated
                    if done() { return }
                }
            }
        }
    }
}
