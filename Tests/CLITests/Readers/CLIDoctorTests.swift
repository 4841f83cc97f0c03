import Foundation
import PCSC
import Testing
import TestSupport
import VirtualCard

/// `apdu doctor`: each diagnosis against the real pcscd with virtual readers, or against a faked
/// tree of /proc, /sys and /usr for what the system files decide.
@Suite("apdu doctor", .serialized)
struct CLIDoctorExclusiveTests {
    /// A fake system root: files written from `files` (path → contents), links from `links`.
    final class FakeRoot {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("doctor-\(UUID())")
        init(_ files: [String: String], links: [String: String] = [:]) throws {
            for (path, text) in files {
                let file = url.appendingPathComponent(String(path.dropFirst()))
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try text.write(to: file, atomically: true, encoding: .utf8)
            }
            for (path, target) in links {
                let file = url.appendingPathComponent(String(path.dropFirst()))
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: target)
            }
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        var path: String { url.path }
    }

    /// A healthy system apart from what `extra` adds: pcscd installed and running, no NFC
    /// module, ccid allowing escapes.
    static let healthy: [String: String] = [
        "/usr/sbin/pcscd": "ELF pcscd access_pcsc",
        "/proc/4242/comm": "pcscd\n",
        "/proc/4242/cmdline": "/usr/sbin/pcscd\0--foreground\0",
        "/proc/modules": "ext4 1000 1 - Live 0x0\n",
        "/usr/lib/pcsc/drivers/ifd-ccid.bundle/Contents/Info.plist": ccidInfo(options: "0x0001"),
    ]

    /// The ccid driver's Info.plist, as far as the check reads it.
    static func ccidInfo(options: String) -> String {
        "<dict>\n\t<key>ifdDriverOptions</key>\n\t<string>\(options)</string>\n</dict>\n"
    }

    /// `doctor --json` under `root`; the checks by name.
    static func doctor(root: String?, asUser: Bool = false, environment: [String: String] = [:]) throws -> (status: Int32, checks: [String: [String: Any]]) {
        let result = try runAPDU(["doctor", "--json"] + (root.map { ["--system-root", $0] } ?? []) + (asUser ? ["--as-user"] : []), environment: environment)
        let doc = try #require(try result.json() as? [String: Any], "\(result.stderr)")
        let checks = try #require(doc["checks"] as? [[String: Any]])
        var byName: [String: [String: Any]] = [:]
        for check in checks { byName[check["check"] as! String] = check }
        #expect((doc["ok"] as? Bool) == (result.status == 0))
        return (result.status, byName)
    }

    static func status(_ check: [String: Any]?) -> String? { check?["status"] as? String }

    @Test("healthy: pcscd answers on its socket, every virtual reader is listed with the vpcd driver, nothing fails")
    func healthy() throws {
        let root = try FakeRoot(Self.healthy)
        let (status, checks) = try Self.doctor(root: root.path)
        #expect(status == 0)
        for name in ["pcscd-installed", "pcscd-running", "pcscd-socket", "pcscd-reachable", "readers", "nfc-modules", "ccid-escape", "exclusive"] {
            #expect(Self.status(checks[name]) == "ok", "\(name): \(checks[name] ?? [:])")
        }
        let details = checks["readers"]?["details"] as? [String] ?? []
        #expect(details.count == ReaderSlots.shared.all.count)
        #expect(details.allSatisfy { $0.contains("vpcd") })
        // The text form prints the same findings for people.
        let text = try runAPDU(["doctor", "--system-root", root.path])
        #expect(text.status == 0 && text.stdout.contains("ok    pcscd-reachable"))
    }

    @Test("pcscd not installed: failed, with the apt command")
    func notInstalled() throws {
        var files = Self.healthy
        files.removeValue(forKey: "/usr/sbin/pcscd")
        let root = try FakeRoot(files)
        let (status, checks) = try Self.doctor(root: root.path)
        #expect(status == 1)
        #expect(Self.status(checks["pcscd-installed"]) == "failed")
        #expect(checks["pcscd-installed"]?["fix"] as? String == "sudo apt install pcscd")
    }

    @Test("pcscd not running and no socket unit: failed, with the start command")
    func notRunning() throws {
        var files = Self.healthy
        files.removeValue(forKey: "/proc/4242/comm")
        files.removeValue(forKey: "/proc/4242/cmdline")
        let root = try FakeRoot(files)
        let (_, checks) = try Self.doctor(root: root.path)
        #expect(Self.status(checks["pcscd-running"]) == "failed")
        #expect((checks["pcscd-running"]?["fix"] as? String)?.contains("systemctl start pcscd") == true)
    }

    @Test("no socket where pcsclite looks: socket and reachability fail, readers are not checked")
    func unreachable() throws {
        let root = try FakeRoot(Self.healthy)
        let (status, checks) = try Self.doctor(root: root.path, environment: ["PCSCLITE_CSOCK_NAME": "/nonexistent/pcscd.comm"])
        #expect(status == 1)
        #expect(Self.status(checks["pcscd-socket"]) == "failed")
        #expect((checks["pcscd-socket"]?["summary"] as? String)?.contains("/nonexistent/pcscd.comm") == true)
        #expect(Self.status(checks["pcscd-reachable"]) == "failed")
        #expect(Self.status(checks["readers"]) == "skipped")
        #expect(Self.status(checks["exclusive"]) == "skipped")
    }

    @Test("polkit: pcscd listens but refuses a user: failed, with a rule to add")
    func polkitRefusal() throws {
        // A socket nobody accepts on: pcsclite's connect is refused, as polkit's refusal ends it.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sock-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("pcscd.comm").path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in path.utf8CString.withUnsafeBytes { raw.copyMemory(from: $0) } }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(bound == 0)
        let root = try FakeRoot(Self.healthy)
        let (status, checks) = try Self.doctor(root: root.path, asUser: true, environment: ["PCSCLITE_CSOCK_NAME": path, "USER": "ci"])
        #expect(status == 1)
        #expect(Self.status(checks["pcscd-socket"]) == "ok")
        #expect(Self.status(checks["pcscd-reachable"]) == "failed")
        #expect(Self.status(checks["polkit"]) == "failed")
        #expect((checks["polkit"]?["fix"] as? String)?.contains("subject.user == \"ci\"") == true)
        // pcscd started with --disable-polkit: polkit is not the cause.
        var files = Self.healthy
        files["/proc/4242/cmdline"] = "/usr/sbin/pcscd\0--disable-polkit\0"
        let other = try FakeRoot(files)
        let (_, again) = try Self.doctor(root: other.path, asUser: true, environment: ["PCSCLITE_CSOCK_NAME": path])
        #expect(Self.status(again["polkit"]) == "ok")
    }

    @Test("an ACR122U bound to pn533_usb: failed, naming the reader, with the modprobe and blacklist fix")
    func pn533Bound() throws {
        var files = Self.healthy
        files["/proc/modules"] = "pn533_usb 20480 0 - Live 0x0\npn533 45056 1 pn533_usb, Live 0x0\nnfc 135168 1 pn533, Live 0x0\n"
        files["/sys/bus/usb/devices/1-1/idVendor"] = "072f\n"
        files["/sys/bus/usb/devices/1-1/idProduct"] = "2200\n"
        files["/sys/bus/usb/devices/1-1/1-1:1.0/bInterfaceClass"] = "ff\n"
        let root = try FakeRoot(files, links: ["/sys/bus/usb/devices/1-1/1-1:1.0/driver": "../../../../bus/usb/drivers/pn533_usb"])
        let (status, checks) = try Self.doctor(root: root.path)
        #expect(status == 1)
        let check = try #require(checks["nfc-modules"])
        #expect(Self.status(check) == "failed")
        #expect((check["details"] as? [String])?.first?.contains("ACS ACR122U (072f:2200, USB 1-1) is bound to pn533_usb") == true)
        #expect((check["fix"] as? String)?.contains("modprobe -r pn533_usb pn533 nfc") == true)
        #expect((check["fix"] as? String)?.contains("blacklist pn533_usb") == true)
    }

    @Test("NFC modules loaded with no reader bound: a warning")
    func modulesLoaded() throws {
        var files = Self.healthy
        files["/proc/modules"] = "port100 20480 0 - Live 0x0\nnfc 135168 1 port100, Live 0x0\n"
        let root = try FakeRoot(files)
        let (status, checks) = try Self.doctor(root: root.path)
        #expect(status == 0)
        #expect(Self.status(checks["nfc-modules"]) == "warning")
        #expect((checks["nfc-modules"]?["fix"] as? String)?.contains("modprobe -r port100 nfc") == true)
    }

    @Test("the ccid driver refusing escape commands: a warning with the Info.plist edit")
    func ccidEscapes() throws {
        var files = Self.healthy
        files["/usr/lib/pcsc/drivers/ifd-ccid.bundle/Contents/Info.plist"] = Self.ccidInfo(options: "0x0004")
        let root = try FakeRoot(files)
        let (_, checks) = try Self.doctor(root: root.path)
        #expect(Self.status(checks["ccid-escape"]) == "warning")
        #expect((checks["ccid-escape"]?["fix"] as? String)?.contains("<string>0x0005</string>") == true)
        var none = Self.healthy
        none.removeValue(forKey: "/usr/lib/pcsc/drivers/ifd-ccid.bundle/Contents/Info.plist")
        let bare = try FakeRoot(none)
        #expect(Self.status(try Self.doctor(root: bare.path).checks["ccid-escape"]) == "skipped")
    }

    @Test("a reader held exclusively by another program: failed, naming the reader")
    func exclusive() async throws {
        try await withInsertedCard(ApplicationHost(applications: [DemoApplication()])) { inserted in
            let context = try Context()
            let card = try context.connect(reader: inserted.reader, share: .exclusive)
            defer { try? card.disconnect() }
            let root = try FakeRoot(Self.healthy)
            let (status, checks) = try Self.doctor(root: root.path)
            #expect(status == 1)
            #expect(Self.status(checks["exclusive"]) == "failed")
            #expect((checks["exclusive"]?["summary"] as? String)?.contains(inserted.reader) == true)
        }
    }
}
