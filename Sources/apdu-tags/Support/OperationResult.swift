// A tag-command operation's findings, printed as JSON fields or as lines.
import APDUCommandLine
import TagReader

/// What a tag-command operation found (`iso15693`, `felica`, `tag-info` on Types 5 and 3): the
/// same facts as JSON fields and as lines for people.
struct OperationResult {
    var json: [(String, JSON)]
    var lines: [String]
}

extension OutputOptions {
    /// One JSON document (`reader`, then `header`, then the result's fields) or the lines.
    func print(_ result: OperationResult, reader: String, header: [(String, JSON)] = []) {
        if json {
            Terminal.print(JSON.object([("reader", .string(reader))] + header + result.json).serialized)
        } else {
            for line in result.lines { Terminal.print(line) }
        }
    }
}
