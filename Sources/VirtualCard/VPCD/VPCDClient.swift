// The card side of vsmartcard's vpcd protocol, which puts an emulated card into a reader slot,
// with faults to inject.
import Dispatch
import FoundationEssentials
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// Misbehaviours to inject, on any card model.
public struct Faults: Sendable, Hashable {
    /// Close the connection instead of answering APDU number `removeAfter + 1`: the card is
    /// pulled after answering `removeAfter` APDUs (status polls don't count).
    public var removeAfter: Int?
    /// Wait this long before every answer.
    public var delay: Duration?
    /// Answer every APDU with these bytes instead of the model's response (a one-byte answer,
    /// a response of garbage…).
    public var garbage: [UInt8]?

    public init(removeAfter: Int? = nil, delay: Duration? = nil, garbage: [UInt8]? = nil) {
        self.removeAfter = removeAfter
        self.delay = delay
        self.garbage = garbage
    }

    public static let none = Faults()
}

/// Puts an `EmulatedCard` into a vpcd reader slot: the card side of vsmartcard's vpcd protocol.
///
/// vpcd (pcscd's driver) listens on a TCP port per slot; a card connects to it. Each message
/// is a 2-byte big-endian length and a body; a 1-byte body 00, 01, 02 or 04 is a control (power
/// off, power on, reset, send ATR), anything else a frame to answer (an APDU, or a 1-byte native
/// command such as MIFARE Plus's GetVersion `60`). Closing the socket removes the
/// card. pcscd polls presence by asking for the ATR, so answers must come fast at any time.
public final class VPCDClient: @unchecked Sendable {
    public let host: String
    public let port: UInt16
    public let card: any EmulatedCard
    public let faults: Faults
    /// Reconnect when pcscd goes away (restart) instead of ending.
    public let reconnects: Bool

    private let state = Locked(State())
    private let started = Locked(false)
    private let finished = DispatchSemaphore(value: 0)

    struct State {
        var fd: Int32 = -1
        var stopped = false
        var connected = false
        var apdus = 0
        var removedByFault = false
        var connections = 0
    }

    public init(host: String = "127.0.0.1", port: UInt16, card: any EmulatedCard, faults: Faults = .none, reconnects: Bool = true) {
        self.host = host
        self.port = port
        self.card = card
        self.faults = faults
        self.reconnects = reconnects
    }

    deinit { stop() }

    /// APDUs answered so far (controls and status polls not counted).
    public var apduCount: Int { state.current.apdus }
    /// Whether a vpcd connection is open now: the reader sees the card.
    public var isConnected: Bool { state.current.connected }
    /// Whether the `removeAfter` fault has pulled the card.
    public var wasRemovedByFault: Bool { state.current.removedByFault }
    /// How many times the client has connected (more than 1 after a pcscd restart).
    public var connectionCount: Int { state.current.connections }

    /// Runs the client on its own thread. Returns at once.
    public func start() {
        // Marked before the thread runs, so a stop() right after start() waits for it.
        started.withLock { $0 = true }
        do throws(DetachedThread.StartError) {
            try DetachedThread.start(stackSize: 1 << 20) { [self] in
                try? run()
                finished.signal()
            }
        } catch {
            started.withLock { $0 = false }
            state.withLock { $0.stopped = true }
        }
    }

    /// Removes the card: closes the connection and ends the client. Idempotent.
    public func stop() {
        let (fd, hadThread) = state.withLock { s -> (Int32, Bool) in
            let first = !s.stopped
            s.stopped = true
            return (s.fd, first && started.current)
        }
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
        if hadThread { finished.wait() }
    }

    /// Waits until vpcd has accepted the connection.
    public func waitUntilConnected(timeout: Duration = .seconds(10)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if isConnected { return true }
            usleep(2_000)
        }
        return isConnected
    }

    /// Serves the card on the calling thread until `stop()`, a removal fault, or (without
    /// `reconnects`) the end of the connection.
    public func run() throws {
        var backoff: UInt32 = 20_000
        while !state.current.stopped {
            let fd: Int32
            do {
                fd = try connectSocket()
            } catch {
                if !reconnects { throw error }
                usleep(backoff)
                backoff = min(backoff * 2, 500_000)
                continue
            }
            backoff = 20_000
            let proceed = state.withLock { s -> Bool in
                if s.stopped { return false }
                s.fd = fd
                s.connected = true
                s.connections += 1
                return true
            }
            if !proceed { close(fd); break }
            let end = serve(fd)
            // A card that leaves the reader loses power: its volatile state (a secure
            // messaging session, a selected application) is gone when it comes back.
            card.powerOff()
            state.withLock { s in
                s.fd = -1
                s.connected = false
            }
            close(fd)
            switch end {
            case .stopped, .removedByFault: return
            case .peerClosed:
                if !reconnects { return }
            }
        }
    }

    enum End { case stopped, removedByFault, peerClosed }

    private func serve(_ fd: Int32) -> End {
        var header = [UInt8](repeating: 0, count: 2)
        var body = [UInt8](repeating: 0, count: 65_546)
        while true {
            guard readFully(fd, &header, count: 2) else { return state.current.stopped ? .stopped : .peerClosed }
            let length = Int(header[0]) << 8 | Int(header[1])
            guard length <= body.count, readFully(fd, &body, count: length) else {
                return state.current.stopped ? .stopped : .peerClosed
            }
            // A 1-byte body is a control when it is one of vpcd's four; any other is a 1-byte
            // frame for the card (a contactless card's native command: MIFARE Plus GetVersion
            // `60`, `AF`, CommitPerso `AA`), which the driver passes the same way and awaits.
            if length == 1, [0, 1, 2, 4].contains(body[0]) {
                switch body[0] {
                case 0: card.powerOff()
                case 1, 2: card.reset()
                default:
                    guard send(fd, card.atr) else { return .peerClosed }
                }
                continue
            }
            let apdu = Array(body[0..<length])
            let pulled = state.withLock { s -> Bool in
                if let n = faults.removeAfter, s.apdus >= n {
                    s.removedByFault = true
                    return true
                }
                s.apdus += 1
                return false
            }
            if pulled { return .removedByFault }
            var answer = card.process(apdu)
            if let delay = faults.delay {
                let (s, a) = delay.components
                usleep(UInt32(max(0, s) * 1_000_000 + a / 1_000_000_000_000))
            }
            if let garbage = faults.garbage { answer = garbage }
            // vpcd's 2-byte length cannot frame more; a real reader would fail the exchange too.
            if answer.count > 0xFFFF { answer = [0x6F, 0x00] }
            guard send(fd, answer) else { return .peerClosed }
        }
    }

    private func send(_ fd: Int32, _ message: [UInt8]) -> Bool {
        // One packet with the length and the body: vpcd reads them back to back.
        var frame = [UInt8(message.count >> 8 & 0xFF), UInt8(message.count & 0xFF)]
        frame += message
        var offset = 0
        while offset < frame.count {
            let n = frame[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    private func readFully(_ fd: Int32, _ buffer: inout [UInt8], count: Int) -> Bool {
        var offset = 0
        while offset < count {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + offset, count - offset, 0) }
            if n == 0 { return false }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
            // vpcd sends the length and the body as separate writes; without re-arming
            // quick ACK every read, the kernel delays our ACK and vpcd's next write by ~40 ms.
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        return true
    }

    private func connectSocket() throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw VPCDError.resolve(host: host, message: String(cString: gai_strerror(rc)))
        }
        defer { freeaddrinfo(list) }
        var lastErrno: Int32 = 0
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            let fd = socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol)
            if fd >= 0 {
                if connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 {
                    var one: Int32 = 1
                    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                    setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &one, socklen_t(MemoryLayout<Int32>.size))
                    return fd
                }
                lastErrno = errno
                close(fd)
            } else {
                lastErrno = errno
            }
            ai = a.pointee.ai_next
        }
        throw VPCDError.connect(host: host, port: port, message: String(cString: strerror(lastErrno)))
    }
}

public enum VPCDError: Error, CustomStringConvertible, Sendable {
    case resolve(host: String, message: String)
    case connect(host: String, port: UInt16, message: String)

    public var description: String {
        switch self {
        case let .resolve(host, message): return "cannot resolve \(host): \(message)"
        case let .connect(host, port, message):
            return "cannot reach vpcd at \(host):\(port): \(message) (is pcscd running with a vpcd reader on that port?)"
        }
    }
}
