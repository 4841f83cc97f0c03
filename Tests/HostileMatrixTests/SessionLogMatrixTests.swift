import Foundation
import ISO7816
import TestSupport
import Testing
import VirtualCard

/// The session-log parsers (pcsc-spy, pcscd --debug --apdu, our recordings) under every line
/// mutation: a value, or a `SessionLogError` naming its line; never a trap.
@Suite("Hostile matrix: session logs")
struct SessionLogMatrixTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/pcsc-logs")

    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".log") }.sorted()

    /// What `replay convert` and `emulate replay` go on: every session's reader, ATR and exchanges.
    static func parse(_ text: String) throws -> String {
        let log = try SessionLog(parsing: Array(text.utf8))
        var out = ["\(log.format)"] + log.notes
        for (n, session) in log.sessions.enumerated() {
            out.append("session \(n + 1): \(session.reader ?? "-") \(session.atr.map { Hex.encode($0) } ?? "-") resets \(session.resets)")
            for e in session.exchanges {
                out.append("\(e.line): \(e.command.map { $0.map { Hex.encode([$0]) } ?? "**" }.joined()) -> \(e.response.map { $0.map { Hex.encode([$0]) } ?? "**" }.joined())")
            }
            _ = ReplayCard(session: session, order: .strict).atr
        }
        return out.joined(separator: "\n")
    }

    @Test("every log, every line mutated", arguments: names)
    func matrix(_ name: String) throws {
        let text = try String(contentsOf: Self.folder.appendingPathComponent(name), encoding: .utf8)
        let report = HostileLogMatrix.run(family: "session log", operation: name, text: text, parse: Self.parse) { $0 is SessionLogError }
        HostileMatrixLog.record(report)
        HostileKnownIssues.expectNoFailures(report)
    }
}
