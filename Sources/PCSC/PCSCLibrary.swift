// Which pcsc-lite the process uses: the headers' release, the loaded file and the Debian
// package version.
internal import CPCSCLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which pcsc-lite this process uses: for `apdu --version` and `apdu doctor`, and for bug reports.
public enum PCSCLibrary {
    /// The pcsc-lite release whose headers the PCSC module was compiled against.
    public static let headerVersion: String = PCSCLITE_VERSION_NUMBER

    /// The libpcsclite file mapped into this process, from `/proc/self/maps`.
    public static var loadedPath: String? {
        guard let maps = readFile("/proc/self/maps") else { return nil }
        for line in maps.split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = line[slash...]
            if path.split(separator: "/").last?.hasPrefix("libpcsclite.so") == true { return String(path) }
        }
        return nil
    }

    /// The installed libpcsclite1 package's version, from dpkg's database (Debian and derivatives).
    public static var packageVersion: String? {
        guard let status = readFile("/var/lib/dpkg/status") else { return nil }
        var inPackage = false
        for line in status.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("Package: ") {
                let name = line.dropFirst(9)
                inPackage = name == "libpcsclite1" || name.hasPrefix("libpcsclite1:")
            }
            else if inPackage && line.hasPrefix("Version: ") { return String(line.dropFirst(9)) }
        }
        return nil
    }

    /// One line: the package version (or the headers' release) and the loaded file.
    public static var version: String? {
        let release = packageVersion ?? headerVersion
        return loadedPath.map { "\(release) (\($0))" } ?? release
    }

    private static func readFile(_ path: String) -> String? {
        FileIO.read(path: path).map { String(decoding: $0, as: UTF8.self) }
    }
}
