// Waits for a tag on any reader and prints its NDEF message.
import NDEF
import TagReader

let tag = try await TagReaderSession().firstTag()
let message = try await tag.ndef.readNDEF()
print("\(tag.reader): \(message.records.count) record(s)")
for line in message.displayLines() {
    print(line)
}
