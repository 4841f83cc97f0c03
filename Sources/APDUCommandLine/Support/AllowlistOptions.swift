// The SELECT allowlist options (`--allow-aid`, `--allow-aids`, `$APDU_ALLOW_AIDS`) turned into
// the policy in force.
import ArgumentParser
import CardReaders
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816

/// Where a SELECT allowlist can come from. Any of them puts a policy in force.
package struct AllowlistOptions: ParsableArguments {
    package init() {}
    @Option(name: .customLong("allow-aid"), help: ArgumentHelp(
        "Allow SELECT of this AID (repeatable; a trailing * allows a prefix). With any allowlist, other SELECTs by AID exit 77 unsent.",
        valueName: "aid"))
    package var allowAIDs: [String] = []

    @Option(name: .customLong("allow-aids"), help: ArgumentHelp(
        "Allowlist file: one AID per line (# comments), or an iOS Info.plist/.entitlements with select-identifiers.",
        valueName: "file"))
    package var allowFile: String?

    package func validate() throws {
        do { _ = try policy() } catch let failure as Failure { throw ValidationError(failure.message) }
    }

    /// The policy in force, or nil when none is configured. `APDU_ALLOW_AIDS` adds entries.
    package func policy() throws -> SelectPolicy? {
        var entries: [SelectPolicy.Entry] = []
        do {
            for text in allowAIDs { entries.append(try SelectPolicy.Entry(parsing: text)) }
            if let env = ProcessInfo.processInfo.environment["APDU_ALLOW_AIDS"], !env.isEmpty {
                entries += try SelectPolicy(list: env).entries
            }
        } catch {
            throw Failure(.usage, "--allow-aid: \(error)")
        }
        if let allowFile {
            guard let data = FileManager.default.contents(atPath: allowFile) else {
                throw Failure(.usage, "--allow-aids: cannot read '\(allowFile)'")
            }
            do { entries += try SelectPolicy(allowlistFile: data, name: allowFile).entries } catch {
                throw Failure(.badData, "--allow-aids: \(error)")
            }
        }
        let configured = !allowAIDs.isEmpty || allowFile != nil || !(ProcessInfo.processInfo.environment["APDU_ALLOW_AIDS"] ?? "").isEmpty
        return configured ? SelectPolicy(entries: entries) : nil
    }
}
