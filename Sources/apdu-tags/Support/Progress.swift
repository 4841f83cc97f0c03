// One line of progress on stderr for long work, shown only on a terminal.
import APDUCommandLine
import Glibc

/// One line of progress on stderr for long work (a whole card dumped, a key dictionary tried, a
/// big write, a batch of readers): only when stderr is a terminal, the output is not JSON and no
/// trace shares stderr, so pipes, logs and scripts see nothing. The line is rewritten in place
/// and erased when the work ends.
struct Progress {
    let enabled: Bool
    let label: String

    /// - Parameters:
    ///   - label: what is being done ("dumping", "trying keys").
    ///   - output, trace: the command's options; nothing shows with `--json` or `--trace` (the
    ///     trace has stderr).
    ///   - wanted: false for work that another line reports (one tag of an `--all-readers` batch).
    init(_ label: String, output: OutputOptions, trace: TraceOptions, wanted: Bool = true) {
        self.label = label
        enabled = wanted && !output.json && !trace.trace && StandardStream.standardError.isTerminal && getenv("TERM").map { String(cString: $0) != "dumb" } ?? false
    }

    /// Shows `done` of `total`, with what is being worked on.
    func update(_ done: Int, of total: Int, _ what: String) {
        guard enabled else { return }
        Terminal.writeError("\r\u{1B}[K\(label) \(what) (\(done)/\(total))")
    }

    /// Erases the line.
    func finish() {
        guard enabled else { return }
        Terminal.writeError("\r\u{1B}[K")
    }
}
