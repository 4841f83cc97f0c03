import Glibc
import ISO7816
import Testing
import VirtualCard

/// The chip behind a vpcd connection: this test plays vpcd (a listening socket speaking its
/// framing), so a pulled card is a closed connection, as pcscd sees it.
@Suite("eMRTD chip: a pulled card")
struct MRTDPulledCardTests {
    /// One side of vpcd's protocol: 2-byte big-endian length, then the body.
    final class FakeVPCD {
        let listener: Int32
        let port: UInt16
        var connection: Int32 = -1

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            guard bound == 0, listen(fd, 1) == 0 else { close(fd); throw Unavailable() }
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            listener = fd
            port = UInt16(bigEndian: address.sin_port)
        }

        struct Unavailable: Error {}

        deinit {
            if connection >= 0 { close(connection) }
            close(listener)
        }

        func accept() { connection = Glibc.accept(listener, nil, nil) }

        func hangUp() {
            shutdown(connection, Int32(SHUT_RDWR))
            close(connection)
            connection = -1
        }

        func send(_ body: [UInt8]) {
            let frame = [UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
            _ = frame.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        func receive() -> [UInt8] {
            func exactly(_ n: Int) -> [UInt8] {
                var out = [UInt8](repeating: 0, count: n)
                var got = 0
                while got < n {
                    let r = out.withUnsafeMutableBytes { recv(connection, $0.baseAddress! + got, n - got, 0) }
                    if r <= 0 { return [] }
                    got += r
                }
                return out
            }
            let header = exactly(2)
            guard header.count == 2 else { return [] }
            return exactly(Int(header[0]) << 8 | Int(header[1]))
        }

        func transmit(_ apdu: [UInt8]) -> [UInt8] {
            send(apdu)
            return receive()
        }
    }

    /// Lets the test speak through the fake vpcd as if it were the card.
    final class Wire: EmulatedCard, @unchecked Sendable {
        let vpcd: FakeVPCD
        init(vpcd: FakeVPCD) { self.vpcd = vpcd }
        var atr: [UInt8] { [] }
        func reset() {}
        func process(_ apdu: [UInt8]) -> [UInt8] { vpcd.transmit(apdu) }
    }

    @Test("the connection closed mid-session: back in the reader, the chip has no keys")
    func pulledCard() throws {
        var options = MRTDSpecimen.Options()
        options.seed = Array("pulled".utf8)
        options.activeAuthentication = nil
        options.chipAuthentication = nil
        let specimen = try MRTDSpecimen.generate(options)
        let chip = MRTDChip(document: specimen.document)
        let vpcd = try FakeVPCD()
        let client = VPCDClient(port: vpcd.port, card: chip, reconnects: true)
        client.start()
        defer { client.stop() }
        vpcd.accept()
        vpcd.send([0x01])                       // power on
        var reader = TestReader(Wire(vpcd: vpcd))
        try reader.selectApplication()
        try reader.openBAC(number: "L898902C<", birth: "690806", expiry: "340623")
        #expect(try reader.read(fileIdentifier: 0x011E) == specimen.document.files[.com])
        #expect(chip.access == .bac)

        vpcd.hangUp()
        // The client notices, powers the card off, and comes back.
        vpcd.accept()
        for _ in 0..<100 where client.connectionCount < 2 { usleep(10_000) }
        #expect(client.connectionCount == 2)
        #expect(chip.access == nil)
        // No power-on this time: only the pull itself can have ended the session.
        #expect(throws: TestReader<Wire>.Failure.status(StatusWord(rawValue: 0x6988))) { _ = try reader.read(fileIdentifier: 0x011E) }
    }
}
