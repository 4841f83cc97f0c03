// The `--memory FILE` of the emulated tags: the memory saved back as hex, a block per line.
import FoundationEssentials
import ISO7816

/// Writes a tag's memory to `path` as hex lines of `bytesPerLine` (a Type 2 page, a Type 1 block,
/// a Classic block), which `readMessageFile` reads back. Best effort: the emulator goes on if
/// the file cannot be written.
func saveMemoryImage(_ bytes: [UInt8], to path: String, bytesPerLine: Int) {
    let lines = stride(from: 0, to: bytes.count, by: bytesPerLine).map { Hex.encode(bytes[$0..<min($0 + bytesPerLine, bytes.count)], separator: " ") }
    try? (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
}
