// The service's log format: one JSON object a line on standard error, for log collectors.
import Foundation
import Logging
import Synchronization

/// One JSON object a line on standard error: time, level, message, label and the metadata
/// (Hummingbird's `hb.request.id` among them), for log collectors. Metadata values are written
/// as strings; nothing the service logs holds a key.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    let label: String
    private static let output = Mutex(())

    public init(label: String, level: Logger.Level) {
        self.label = label
        logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        var pairs: [(String, JSON)] = [
            ("time", .string(Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted)))),
            ("level", .string(event.level.rawValue)),
            ("message", .string(event.message.description)),
            ("label", .string(label)),
        ]
        for (key, value) in all.sorted(by: { $0.key < $1.key }) { pairs.append((key, .string(value.description))) }
        let line = JSON.object(pairs) + "\n"
        Self.output.withLock { _ in
            var bytes = Array(line.utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                bytes = bytes.dropFirst(n)
            }
        }
    }
}
