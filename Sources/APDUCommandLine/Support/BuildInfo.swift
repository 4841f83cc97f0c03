// What `apdu --version` reports: the tool, its revision and the pcsclite it uses.
import PCSC

/// What `apdu --version` reports. `Scripts/package` stamps the revision into its build copy;
/// a development build says it has none.
package enum BuildInfo {
    package static let gitRevision: String? = nil

    /// The lines of `apdu --version`: the tool, the commit it was built from, and the pcsclite
    /// it talks to (the installed package and the loaded file) with the release it was built against.
    package static var versionLines: [String] {
        [
            "apdu \(APDUCommand.version)",
            "git \(gitRevision ?? "revision not recorded (a development build)")",
            "pcsclite \(PCSCLibrary.version ?? PCSCLibrary.headerVersion); built against \(PCSCLibrary.headerVersion)",
        ]
    }
}
