// `apdu sun check-token`: the signed verdict apdu-sun-server --redirect hands a landing page
// (issue 51), checked offline as the landing site would.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import ISO7816
import SUN

extension APDUCommand {
    struct SunCheckToken: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check-token",
            abstract: "Check the signed verdict a SUN landing page receives (the sun parameter of apdu-sun-server --redirect).",
            discussion: """
                The token is a JWT (JWS HS256) under the key file's redirectKey: 64 to 128 hex digits, read from \
                --key-file ('#' comments, LF or CRLF) or $APDU_SUN_REDIRECT_KEY, never printed. Only the header \
                {"alg":"HS256"} is accepted; the signature is compared in constant time; an expired token is refused. \
                Exit 0 the token verifies and its verdict is genuine, 1 it verifies but the verdict is a refusal \
                (replay, invalid, malformed, unknownGroup), 65 the token does not verify (changed, another key, \
                expired, not a token), 64 usage.
                """)

        @OptionGroup var output: OutputOptions

        @Argument(help: ArgumentHelp("The token (the sun parameter's value), or the whole landing URL.", valueName: "token"))
        var token: String

        @Option(help: ArgumentHelp("File holding the redirect key (hex). Default: $APDU_SUN_REDIRECT_KEY.", valueName: "file"))
        var keyFile: String?

        @Option(help: ArgumentHelp("Check as of this time (seconds since 1970) instead of now.", valueName: "seconds"))
        var at: Int?

        func validate() throws {
            // Seconds from 1970 to the year 9999: an instant, not an integer at its limits.
            if let at, !(0...253_402_300_799).contains(at) { throw ValidationError("--at is seconds since 1970 (0 to 253402300799)") }
        }

        func run() throws {
            try reportingFailures {
                let key = try redirectKey()
                let text = Self.token(in: token)
                let now = at ?? Int(Date().timeIntervalSince1970)
                let verdict: SUNVerdictToken
                do { verdict = try SUNVerdictToken(verifying: text, key: key, now: now) } catch let error as SUNTokenError {
                    if output.json {
                        Terminal.print(JSON.object([("verified", .bool(false)), ("error", .string(error.kind.rawValue)), ("reason", .string(error.message))]).serialized)
                    }
                    throw Failure(.badData, error.message)
                }
                if output.json {
                    var pairs: [(String, JSON)] = [("verified", .bool(true)), ("genuine", .bool(verdict.isGenuine)), ("verdict", .string(verdict.verdict))]
                    pairs.append(("code", verdict.code.map(JSON.string) ?? .null))
                    pairs.append(("uid", verdict.uid.map(JSON.string) ?? .null))
                    pairs.append(("counter", verdict.counter.map(JSON.int) ?? .null))
                    pairs.append(("tamper", verdict.tamper.map { .object([("permanent", .string($0.permanent.name)), ("current", .string($0.current.name)), ("seal", .string($0.seal.rawValue))]) } ?? .null))
                    pairs.append(("group", verdict.group.map(JSON.string) ?? .null))
                    pairs.append(("issuedAt", .int(verdict.issuedAt)))
                    pairs.append(("expires", .int(verdict.expires)))
                    Terminal.print(JSON.object(pairs).serialized)
                } else {
                    var line = "token verified: \(Terminal.safe(verdict.verdict))"
                    if let uid = verdict.uid { line += ", UID \(Terminal.safe(uid))" }
                    if let counter = verdict.counter { line += ", read counter \(counter)" }
                    if let t = verdict.tamper { line += ", TagTamper \(t.seal.rawValue)" }
                    if let group = verdict.group { line += ", group \(Terminal.safe(group))" }
                    Terminal.print(line + ", expires in \(verdict.expires.subtractingReportingOverflow(now).partialValue) s")
                }
                guard verdict.isGenuine else { throw Failure(.unexpected, "the token verifies, but its verdict is \(Terminal.safe(verdict.verdict)), not genuine") }
            }
        }

        /// The token itself, or the value of a landing URL's `sun` parameter.
        static func token(in text: String) -> String {
            guard let q = text.firstIndex(of: "?") else { return text }
            for pair in text[text.index(after: q)...].split(separator: "&") where pair.hasPrefix("sun=") {
                return String(pair.dropFirst(4))
            }
            return text
        }

        func redirectKey() throws -> [UInt8] {
            let text: String
            let source = keyFile == nil ? "$APDU_SUN_REDIRECT_KEY" : "--key-file"
            if let keyFile {
                guard let data = FileManager.default.contents(atPath: keyFile) else { throw Failure(.usage, "--key-file: cannot read '\(Terminal.safe(keyFile))'") }
                text = String(decoding: data, as: UTF8.self)
            } else if let value = ProcessInfo.processInfo.environment["APDU_SUN_REDIRECT_KEY"], !value.isEmpty {
                text = value
            } else {
                throw Failure(.usage, "no key: give --key-file or set $APDU_SUN_REDIRECT_KEY")
            }
            let digits = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
                .map { $0.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }.joined()
                .filter { !" \t:".contains($0) }
            guard let key = try? Hex.decode(digits), (32...64).contains(key.count) else {
                throw Failure(.usage, "\(source): a redirect key is 64 to 128 hex digits (the value is not shown)")
            }
            return key
        }
    }
}
