// Waits on every reader and, for each tag presented, prints its URL and whether an iPhone would
// open it by background reading. Runs until interrupted (or for --count N tags).
import Foundation
import NDEF
import TagReader

let arguments = CommandLine.arguments
let count = arguments.firstIndex(of: "--count").flatMap { arguments.dropFirst($0 + 1).first }.flatMap { Int($0) }
var seen = 0

do {
    for try await tag in TagReaderSession().tags() {
        let line: String
        do {
            let message = try await tag.ndef.readNDEF()
            let verdict = BackgroundReadingVerdict(message: message)
            let url = verdict.uri ?? message.records.lazy.compactMap { record -> String? in
                if case let .uri(uri)? = try? record.content() { return uri } else { return nil }
            }.first
            line = "\(url.map(TerminalText.escaping) ?? "(no URL)")  \(verdict.displayLine)"
        } catch {
            line = "cannot read the tag: \(error)"
        }
        print("\(TerminalText.escaping(tag.reader)): \(line)")
        seen += 1
        if let count, seen >= count { break }
    }
} catch {
    print("kiosk: \(error)")
    exit(1)
}
