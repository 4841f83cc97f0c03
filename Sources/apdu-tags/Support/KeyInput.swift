// An AES-128 key read from a file or an environment variable, never shown in an error.
import APDUCommandLine
import FoundationEssentials
import ISO7816

/// 16 bytes of key from `file` (32 hex digits; separators and '#' comments allowed), else
/// from the variable `environment`. The text is never shown in an error.
func aesKey(file: String?, option: String, environment: String) throws -> [UInt8] {
    let text: String
    if let file {
        guard let data = FileManager.default.contents(atPath: file) else { throw Failure(.usage, "\(option): cannot read '\(Terminal.safe(file))'") }
        text = TextInput.normalized([UInt8](data))
    } else if let value = ProcessInfo.processInfo.environment[environment], !value.isEmpty {
        text = value
    } else {
        throw Failure(.usage, "no key: give \(option) or set $\(environment)")
    }
    let digits = text.split(separator: "\n").map { $0.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }.joined()
        .filter { !" \t:,-".contains($0) }
    guard let key = try? Hex.decode(digits), key.count == 16 else {
        throw Failure(.usage, "\(file == nil ? "$" + environment : option): an AES-128 key is 32 hex digits (the value is not shown)")
    }
    return key
}
