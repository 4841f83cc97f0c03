import ArgumentParser
import Foundation
import ISO7816

/// Where a SELECT allowlist can come from. Any of them puts a policy in force.
struct AllowlistOptions: ParsableArguments {
    @Option(name: .customLong("allow-aid"), help: ArgumentHelp(
        "Allow SELECT of this AID (repeatable; a trailing * allows a prefix). With any allowlist, other SELECTs by AID exit 77 unsent.",
        valueName: "aid"))
    var allowAIDs: [String] = []

    @Option(name: .customLong("allow-aids"), help: ArgumentHelp(
        "Allowlist file: one AID per line (# comments), or an iOS Info.plist/.entitlements with select-identifiers.",
        valueName: "file"))
    var allowFile: String?

    static let plistKey = "com.apple.developer.nfc.readersession.iso7816.select-identifiers"

    func validate() throws {
        do { _ = try policy() } catch let failure as Failure { throw ValidationError(failure.message) }
    }

    /// The policy in force, or nil when none is configured. `APDU_ALLOW_AIDS` adds entries.
    func policy() throws -> SelectPolicy? {
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
            entries += try Self.entries(fromFile: data, name: allowFile)
        }
        let configured = !allowAIDs.isEmpty || allowFile != nil || !(ProcessInfo.processInfo.environment["APDU_ALLOW_AIDS"] ?? "").isEmpty
        return configured ? SelectPolicy(entries: entries) : nil
    }

    static func entries(fromFile data: Data, name: String) throws -> [SelectPolicy.Entry] {
        let head = data.prefix(64)
        let looksLikePlist = head.starts(with: Array("bplist".utf8)) || String(decoding: head, as: UTF8.self).contains("<?xml") || String(decoding: head, as: UTF8.self).contains("<plist")
        if looksLikePlist {
            let plist: Any
            do { plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil) } catch {
                throw Failure(.badData, "--allow-aids: '\(name)' is not a valid property list")
            }
            guard let dict = plist as? [String: Any], let list = dict[plistKey] else {
                throw Failure(.badData, "--allow-aids: '\(name)' has no \(plistKey) array")
            }
            guard let strings = list as? [String] else {
                throw Failure(.badData, "--allow-aids: \(plistKey) in '\(name)' is not an array of strings")
            }
            do { return try strings.map { try SelectPolicy.Entry(parsing: $0) } } catch {
                throw Failure(.badData, "--allow-aids: '\(name)': \(error)")
            }
        }
        let entries: [SelectPolicy.Entry]
        do { entries = try SelectPolicy(list: TextInput.normalized(data)).entries } catch {
            throw Failure(.badData, "--allow-aids: '\(name)': \(error)")
        }
        // An allowlist file with no AID would refuse every SELECT: almost surely the wrong file.
        guard !entries.isEmpty else { throw Failure(.badData, "--allow-aids: '\(name)' lists no AID") }
        return entries
    }
}
