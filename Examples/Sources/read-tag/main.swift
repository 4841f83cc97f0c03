// Waits for a tag on any reader and prints its NDEF message.
import Foundation
import NDEF
import TagReader

do {
    let tag = try await TagReaderSession().firstTag()
    let message = try await tag.ndef.readNDEF()
    print("\(TerminalText.escaping(tag.reader)): \(message.records.count) record(s)")
    for line in message.displayLines() { print(line) }
} catch {
    print("read-tag: \(error)")
    exit(1)
}
