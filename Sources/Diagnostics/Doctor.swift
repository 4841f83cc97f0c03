// `apdu doctor`'s checks: pcscd, its socket, readers and drivers, the kernel's NFC modules, CCID
// escape, polkit and exclusive holders, each a finding with its fix.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import PCSC

/// One finding of ``Doctor``.
public struct Diagnosis: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable {
        case ok, warning, failed, skipped
    }
    /// A stable name for scripts: `pcscd-installed`, `pcscd-running`, `pcscd-socket`,
    /// `pcscd-reachable`, `readers`, `nfc-modules`, `ccid-escape`, `polkit`, `exclusive`.
    public let check: String
    public let status: Status
    /// What was found, in one line.
    public let summary: String
    /// What to run or change, when something is wrong.
    public let fix: String?
    /// Further lines (readers with their driver).
    public let details: [String]

    public init(_ check: String, _ status: Status, _ summary: String, fix: String? = nil, details: [String] = []) {
        self.check = check
        self.status = status
        self.summary = summary
        self.fix = fix
        self.details = details
    }
}

/// Why a reader does not show up or a command is refused: the reasons that fill the issue
/// trackers of pcsc-tools, pyscard, nfc-pcsc and libnfc, each checked and given its fix.
/// Runs without root; what it cannot see it reports as `skipped`.
public struct Doctor: Sendable {
    public let system: SystemFiles
    public let environment: [String: String]
    public let isRoot: Bool

    /// - Parameters:
    ///   - system: where `/proc`, `/sys`, `/etc` and `/usr` are read.
    ///   - environment: the process environment (`PCSCLITE_CSOCK_NAME`, `SSH_CONNECTION`).
    ///   - isRoot: whether the checks run as root.
    public init(system: SystemFiles = .live, environment: [String: String], isRoot: Bool) {
        self.system = system
        self.environment = environment
        self.isRoot = isRoot
    }

    /// The socket pcsclite connects to: `$PCSCLITE_CSOCK_NAME`, else the compiled-in default.
    public var socketPath: String { environment["PCSCLITE_CSOCK_NAME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/run/pcscd/pcscd.comm" }

    /// Every check, in the order a person would look.
    public func run() -> [Diagnosis] {
        var out: [Diagnosis] = []
        let binary = ["/usr/sbin/pcscd", "/usr/bin/pcscd", "/usr/local/sbin/pcscd"].first { system.exists($0) }
        out.append(binary.map { Diagnosis("pcscd-installed", .ok, "pcscd is installed at \($0)") }
            ?? Diagnosis("pcscd-installed", .failed, "pcscd is not installed", fix: "sudo apt install pcscd"))

        let daemons = processes(named: "pcscd")
        let socketActivated = system.exists("/lib/systemd/system/pcscd.socket") || system.exists("/usr/lib/systemd/system/pcscd.socket")
        if let daemon = daemons.first {
            out.append(Diagnosis("pcscd-running", .ok, "pcscd is running (pid \(daemon.pid): \(daemon.commandLine))"))
        } else if socketActivated {
            out.append(Diagnosis("pcscd-running", .warning, "pcscd is not running; systemd starts it on the first connection to pcscd.socket",
                                 fix: "sudo systemctl enable --now pcscd.socket"))
        } else {
            out.append(Diagnosis("pcscd-running", binary == nil ? .skipped : .failed, "pcscd is not running",
                                 fix: binary == nil ? nil : "sudo systemctl start pcscd (or run: sudo pcscd)"))
        }

        let socket = socketPath
        let socketThere = SystemFiles.live.isSocket(socket)
        out.append(socketThere
            ? Diagnosis("pcscd-socket", .ok, "socket \(socket)" + (environment["PCSCLITE_CSOCK_NAME"] == nil ? "" : " (from PCSCLITE_CSOCK_NAME)"))
            : Diagnosis("pcscd-socket", .failed, "no socket at \(socket): nothing listens where pcsclite looks",
                        fix: environment["PCSCLITE_CSOCK_NAME"] == nil ? "sudo systemctl start pcscd.socket" : "unset PCSCLITE_CSOCK_NAME, or point it at the socket your pcscd serves"))

        let polkit = polkitState(daemons.first)
        let context: Context?
        do throws(PCSCError) {
            context = try Context()
            out.append(Diagnosis("pcscd-reachable", .ok, "pcscd answers (pcsclite \(Doctor.pcscliteVersion))"))
        } catch {
            context = nil
            let denied = socketThere && polkit.active && !isRoot
            out.append(Diagnosis("pcscd-reachable", .failed, "pcscd does not answer: \(error.message)" + (denied ? " (pcscd runs and listens, so polkit probably refused this user)" : ""),
                                 fix: denied ? "see the polkit check" : "sudo systemctl restart pcscd.socket pcscd"))
        }
        out.append(polkitDiagnosis(polkit, reachable: context != nil))

        var readerStates: [ReaderState] = []
        if let context {
            do throws(PCSCError) {
                let names = try context.readers()
                readerStates = names.map { ReaderState(reader: $0) }
                if !readerStates.isEmpty { _ = try context.statusChange(&readerStates, timeout: .zero) }
                let drivers = loadedDrivers(daemons.first)
                let details = readerStates.map { state in
                    "\(state.reader): \(driver(for: state.reader, loaded: drivers))" + (state.eventState.contains(.present) ? ", card present" : ", no card")
                }
                out.append(readerStates.isEmpty
                    ? Diagnosis("readers", .failed, "pcscd sees no reader", fix: "plug the reader in; an NFC reader may be held by a kernel module (see nfc-modules); `lsusb` shows whether the system sees it")
                    : Diagnosis("readers", .ok, "\(readerStates.count) reader\(readerStates.count == 1 ? "" : "s")", details: details))
            } catch {
                out.append(Diagnosis("readers", .failed, "cannot list readers: \(error.message)", fix: "sudo systemctl restart pcscd"))
            }
        } else {
            out.append(Diagnosis("readers", .skipped, "not checked: pcscd does not answer"))
        }

        out.append(nfcModules())
        out.append(ccidEscape())
        out.append(exclusive(readerStates, checked: context != nil))
        return out
    }

    // MARK: processes

    struct Process {
        let pid: Int
        let commandLine: String
    }

    func processes(named name: String) -> [Process] {
        system.list("/proc").compactMap { entry -> Process? in
            guard let pid = Int(entry), let comm = system.read("/proc/\(entry)/comm"),
                  comm.split(separator: "\n").first.map(String.init) == name else { return nil }
            let raw = system.read("/proc/\(entry)/cmdline") ?? name
            let line = raw.split(separator: "\0").joined(separator: " ")
            return Process(pid: pid, commandLine: line.isEmpty ? name : line)
        }
    }

    // MARK: polkit

    struct PolkitState {
        var active = false
        var known = true
        var note = ""
        var allowAny: String?
    }

    func polkitState(_ daemon: Process?) -> PolkitState {
        var state = PolkitState()
        let binary = ["/usr/sbin/pcscd", "/usr/bin/pcscd"].lazy.compactMap { system.read($0, limit: 4 << 20) }.first
        guard let binary else { state.known = false; state.note = "pcscd not found"; return state }
        guard binary.contains("access_pcsc") else { state.note = "this pcscd is built without polkit"; return state }
        if let daemon, daemon.commandLine.contains("--disable-polkit") { state.note = "pcscd runs with --disable-polkit"; return state }
        state.active = true
        if let policy = system.read("/usr/share/polkit-1/actions/org.debian.pcsc-lite.policy"),
           let action = policy.firstRange(of: "org.debian.pcsc-lite.access_pcsc") {
            let rest = policy[action.upperBound...]
            if let open = rest.firstRange(of: "<allow_any>"), let close = rest.firstRange(of: "</allow_any>"), open.upperBound < close.lowerBound {
                state.allowAny = String(rest[open.upperBound..<close.lowerBound])
            }
        }
        return state
    }

    func polkitDiagnosis(_ state: PolkitState, reachable: Bool) -> Diagnosis {
        guard state.known else { return Diagnosis("polkit", .skipped, "not checked: \(state.note)") }
        guard state.active else { return Diagnosis("polkit", .ok, "not in the way: \(state.note)") }
        if isRoot { return Diagnosis("polkit", .ok, "pcscd asks polkit; root is always allowed") }
        let remote = environment["SSH_CONNECTION"] != nil || environment["XDG_SESSION_ID"] == nil
        let user = environment["USER"] ?? environment["LOGNAME"] ?? "youruser"
        let rule = "/etc/polkit-1/rules.d/50-pcsc.rules: polkit.addRule(function(action, subject) { if ((action.id == \"org.debian.pcsc-lite.access_pcsc\" || action.id == \"org.debian.pcsc-lite.access_card\") && subject.user == \"\(user)\") return polkit.Result.YES; });"
        if !reachable {
            return Diagnosis("polkit", .failed, "pcscd asks polkit, and this user is refused" + (remote ? " (outside a local desktop session: ssh, cron, a service)" : ""),
                             fix: "allow the user with a rule in \(rule)")
        }
        if remote, let any = state.allowAny, any != "yes" {
            return Diagnosis("polkit", .warning, "pcscd asks polkit; allowed now, but the policy gives sessions outside a desktop '\(any)' (ssh, cron, CI may be refused)",
                             fix: "for those, add a rule in \(rule)")
        }
        return Diagnosis("polkit", .ok, "pcscd asks polkit, and this user is allowed")
    }

    // MARK: drivers

    /// Driver bundles in pcscd's memory (readable as root or as pcscd's own user).
    func loadedDrivers(_ daemon: Process?) -> [String]? {
        guard let daemon, let maps = system.read("/proc/\(daemon.pid)/maps", limit: 8 << 20) else { return nil }
        var found: [String] = []
        for line in maps.split(separator: "\n") {
            guard let range = line.firstRange(of: "/pcsc/drivers/") else { continue }
            let path = line[range.upperBound...]
            let name = path.split(separator: "/").first.map(String.init) ?? String(path)
            if !found.contains(name) { found.append(name) }
        }
        return found
    }

    func driver(for reader: String, loaded: [String]?) -> String {
        if reader.hasPrefix("Virtual PCD") { return "vpcd (vsmartcard virtual reader)" }
        guard let loaded else { return "driver not known (pcscd's memory map needs root to read)" }
        if loaded.contains(where: { $0.contains("ccid") }) { return "ccid" }
        return loaded.first.map { "driver \($0)" } ?? "driver not known"
    }

    // MARK: kernel modules

    /// USB NFC readers the kernel's NFC stack claims before pcscd can (drivers/nfc/pn533, port100).
    static let kernelClaimed: [String: String] = [
        "072f:2200": "ACS ACR122U", "04e6:5591": "SCM SCL3711", "04cc:2533": "NXP PN533",
        "054c:02e1": "Sony RC-S360", "054c:06c1": "Sony RC-S380", "054c:06c3": "Sony RC-S380",
    ]
    static let nfcModules = ["pn533_usb", "pn533", "port100", "nfc"]

    func nfcModules() -> Diagnosis {
        guard let modules = system.read("/proc/modules") else { return Diagnosis("nfc-modules", .skipped, "not checked: /proc/modules is not readable") }
        let loaded = modules.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }.filter { Self.nfcModules.contains($0) }
        var held: [String] = []
        for device in system.list("/sys/bus/usb/devices") where !device.contains(":") {
            let base = "/sys/bus/usb/devices/\(device)"
            guard let vendor = system.read(base + "/idVendor")?.split(separator: "\n").first,
                  let product = system.read(base + "/idProduct")?.split(separator: "\n").first else { continue }
            let id = "\(vendor):\(product)".lowercased()
            guard let name = Self.kernelClaimed[id] else { continue }
            for interface in system.list(base) where interface.hasPrefix(device + ":") {
                if let driver = system.linkName(base + "/" + interface + "/driver"), Self.nfcModules.contains(driver) {
                    held.append("\(name) (\(id), USB \(device)) is bound to \(driver)")
                }
            }
        }
        let unload = (loaded.isEmpty ? ["pn533_usb", "pn533", "nfc"] : loaded)
        let fix = "sudo modprobe -r \(unload.joined(separator: " ")); printf 'blacklist pn533_usb\\nblacklist port100\\n' | sudo tee /etc/modprobe.d/blacklist-nfc-pcsc.conf; then unplug and replug the reader"
        if !held.isEmpty {
            return Diagnosis("nfc-modules", .failed, "the kernel's NFC stack holds a reader pcscd should own", fix: fix, details: held)
        }
        if !loaded.isEmpty {
            return Diagnosis("nfc-modules", .warning, "kernel NFC modules loaded (\(loaded.joined(separator: ", "))): they take an ACR122U or RC-S380 plugged in later", fix: fix)
        }
        return Diagnosis("nfc-modules", .ok, "no kernel NFC module (pn533_usb, port100) competes with pcscd")
    }

    // MARK: ccid

    static let ccidInfo = ["/usr/lib/pcsc/drivers/ifd-ccid.bundle/Contents/Info.plist", "/usr/local/lib/pcsc/drivers/ifd-ccid.bundle/Contents/Info.plist"]

    func ccidEscape() -> Diagnosis {
        guard let path = Self.ccidInfo.first(where: { system.exists($0) }) else {
            return Diagnosis("ccid-escape", .skipped, "the ccid driver is not installed (USB readers need it: sudo apt install libccid)")
        }
        guard let plist = system.read(path) else { return Diagnosis("ccid-escape", .skipped, "not checked: \(path) is not readable") }
        guard let key = plist.firstRange(of: "<key>ifdDriverOptions</key>"),
              let open = plist[key.upperBound...].firstRange(of: "<string>"),
              let close = plist[open.upperBound...].firstRange(of: "</string>") else {
            return Diagnosis("ccid-escape", .warning, "\(path) has no ifdDriverOptions; the driver refuses escape commands")
        }
        let text = plist[open.upperBound..<close.lowerBound].trimmingPrefix("0x")
        guard let options = UInt32(text, radix: 16) else {
            return Diagnosis("ccid-escape", .warning, "ifdDriverOptions in \(path) is not a number: \(text)")
        }
        if options & 0x01 != 0 { return Diagnosis("ccid-escape", .ok, "the ccid driver allows escape commands (ifdDriverOptions 0x\(String(options, radix: 16, uppercase: true)))") }
        return Diagnosis("ccid-escape", .warning, "the ccid driver refuses escape commands: reader LED, buzzer and `apdu reader-control` fail (ifdDriverOptions 0x\(String(options, radix: 16, uppercase: true)) in \(path))",
                         fix: "sudo sed -i '/ifdDriverOptions/{n;s|<string>0x[0-9A-Fa-f]*</string>|<string>0x\(String(options | 1, radix: 16, uppercase: true).leftPadded(4))</string>|}' \(path) && sudo systemctl restart pcscd")
    }

    // MARK: exclusive

    func exclusive(_ states: [ReaderState], checked: Bool) -> Diagnosis {
        guard checked else { return Diagnosis("exclusive", .skipped, "not checked: pcscd does not answer") }
        let held = states.filter { $0.eventState.contains(.exclusive) }.map(\.reader)
        guard !held.isEmpty else { return Diagnosis("exclusive", .ok, "no reader is held exclusively by another program") }
        let scdaemon = !processes(named: "scdaemon").isEmpty
        return Diagnosis("exclusive", .failed, "held exclusively by another program: " + held.joined(separator: ", "),
                         fix: scdaemon ? "gpg's scdaemon is running and takes readers for itself: gpgconf --kill scdaemon, and add 'pcsc-shared' to ~/.gnupg/scdaemon.conf"
                                       : "close the program that holds it (one that connected with SCARD_SHARE_EXCLUSIVE); `sudo lsof -U | grep pcscd` lists pcscd's clients")
    }

    /// The pcsclite the process talks to, from its library's file name (`libpcsclite.so.1.0.0`).
    public static var pcscliteVersion: String { PCSCLibrary.version ?? "version not known" }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
