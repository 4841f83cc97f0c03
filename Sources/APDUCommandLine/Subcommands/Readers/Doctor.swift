// `apdu doctor`: the findings of `Diagnostics.Doctor`, printed with their fixes.
import ArgumentParser
import Diagnostics
import FoundationEssentials
import Glibc

extension APDUCommand {
    package struct DoctorCommand: ParsableCommand {
        package init() {}
        package static let configuration = CommandConfiguration(
            commandName: "doctor",
            abstract: "Find out why a reader does not show up or a command is refused, and print the fix.",
            discussion: """
                Checks pcscd (installed, running, its socket, whether it answers), the readers and \
                their drivers, kernel NFC modules that hold a reader pcscd should own, the ccid \
                driver's escape-command switch, polkit, and readers held exclusively by another \
                program. Runs without root; what it cannot see it reports as skipped. Exit code 0 \
                when nothing failed, 1 when a check failed.
                """)

        @OptionGroup package var output: OutputOptions

        // For tests: read /proc, /sys, /etc and /usr under this directory, and check as a user.
        @Option(help: .hidden)
        package var systemRoot: String?

        @Flag(help: .hidden)
        package var asUser = false

        package func run() throws {
            let doctor = Doctor(system: systemRoot.map(SystemFiles.init(root:)) ?? .live,
                                environment: ProcessInfo.processInfo.environment, isRoot: geteuid() == 0 && !asUser)
            let findings = doctor.run()
            let failed = findings.contains { $0.status == .failed }
            if output.json {
                Terminal.print(JSON.object([
                    ("ok", .bool(!failed)), ("socket", .string(doctor.socketPath)),
                    ("checks", .array(findings.map { d in
                        .object([("check", .string(d.check)), ("status", .string(d.status.rawValue)), ("summary", .string(d.summary))]
                                + (d.fix.map { [("fix", JSON.string($0))] } ?? [])
                                + (d.details.isEmpty ? [] : [("details", .array(d.details.map(JSON.string)))]))
                    })),
                ]).serialized)
            } else {
                for d in findings {
                    let mark: String
                    switch d.status {
                    case .ok: mark = Style.success.paint("ok  ")
                    case .warning: mark = Style.warning.paint("warn")
                    case .failed: mark = Style.error.paint("FAIL")
                    case .skipped: mark = "skip"
                    }
                    Terminal.print("\(mark)  \(d.check): \(Terminal.safe(d.summary))")
                    for line in d.details { Terminal.print("        " + Terminal.safe(line)) }
                    if let fix = d.fix, d.status != .ok { Terminal.print("        fix: " + Terminal.safe(fix)) }
                }
            }
            if failed { throw ExitCode(ExitStatus.unexpected.rawValue) }
        }
    }
}
