// `--color` and the colours of text for people.
import ArgumentParser
import Glibc
import ISO7816
import Synchronization

/// `--color`: when to colour text for people.
package enum ColorChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// On a terminal, unless `NO_COLOR` is set or `TERM` is `dumb`.
    case auto
    case always
    case never
}

/// Colour as pcsc_scan has it: success green, warnings yellow, errors red, card names
/// highlighted. Only ever applied to text already made safe, so the escapes are our own.
package struct Style: Sendable {
    /// SGR parameters.
    package let code: String

    package static let success = Style(code: "32")
    package static let warning = Style(code: "33")
    package static let error = Style(code: "1;31")
    package static let name = Style(code: "1;36")
    package static let plain = Style(code: "")

    /// Sets the choice `--color` made (`auto` until a command's options are parsed).
    package static func choose(_ choice: ColorChoice) {
        state.withLock { $0 = State(choice: choice) }
    }

    private struct State {
        package var choice = ColorChoice.auto
        /// The answer per descriptor, worked out once (isatty is a system call; `script` asks per APDU).
        package var decided: [Int32: Bool] = [:]
    }
    private static let state = Mutex(State())

    /// `text` in this style when the stream shows colour, else as it is.
    package func paint(_ text: String, on stream: StandardStream = .standardOutput) -> String {
        !code.isEmpty && Self.enabled(on: stream) ? "\u{1B}[\(code)m" + text + "\u{1B}[0m" : text
    }

    /// Whether colour goes to `stream`: `--color always` and `never` decide; `auto` colours a
    /// terminal only, and never under `NO_COLOR` (any non-empty value) or `TERM=dumb`.
    package static func enabled(on stream: StandardStream) -> Bool {
        state.withLock { s in
            if let known = s.decided[stream.descriptor] { return known }
            let answer: Bool
            switch s.choice {
            case .always: answer = true
            case .never: answer = false
            case .auto:
                if let noColor = getenv("NO_COLOR"), noColor.pointee != 0 { answer = false }
                else if let term = getenv("TERM"), String(cString: term) == "dumb" { answer = false }
                else { answer = stream.isTerminal }
            }
            s.decided[stream.descriptor] = answer
            return answer
        }
    }

    /// The style of a status word: green for success, yellow for a warning (`62xx`, `63xx`),
    /// red for an error, plain when nobody knows.
    package static func of(_ sw: StatusWord) -> Style {
        switch sw.meaning.category {
        case .success: return .success
        case .warning: return .warning
        case .error: return .error
        case .unknown: return .plain
        }
    }
}
