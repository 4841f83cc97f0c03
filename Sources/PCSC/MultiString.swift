// pcsclite's multi-string (NUL-separated, ended by an empty string) split into Swift strings.

/// pcsclite's multi-string: NUL-terminated strings one after another, ended by an empty one.
enum MultiString {
    /// Splits a multi-string buffer into its strings, each decoded as UTF-8 without trimming,
    /// so a reader name round-trips to `SCardConnect` as it came. Stops at the first empty
    /// string or the end of the buffer, whichever comes first; never reads past `bytes`.
    static func split(_ bytes: some Collection<UInt8>) -> [String] {
        var result: [String] = []
        var current: [UInt8] = []
        for byte in bytes {
            if byte == 0 {
                if current.isEmpty { break }
                result.append(String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
            } else {
                current.append(byte)
            }
        }
        if !current.isEmpty { result.append(String(decoding: current, as: UTF8.self)) }
        return result
    }
}
