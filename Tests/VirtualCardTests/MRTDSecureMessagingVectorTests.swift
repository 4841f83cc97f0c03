import ISO7816
import Testing
@testable import VirtualCard

/// AES secure messaging pinned by a real chip's session, as gmrtd's tests record it
/// (`iso7816/secure_messaging_test.go`: an MSE:Set AT for chip authentication, and a 223-byte
/// READ BINARY answer): ICAO 9303 prints no AES worked example.
@Suite("eMRTD chip: AES secure messaging against a recorded session")
struct MRTDSecureMessagingVectorTests {
    static func hex(_ s: String) -> [UInt8] { (try? Hex.decode(s)) ?? [] }

    @Test("a protected MSE:Set AT unwraps to its plain command (SSC …BA → …BB)")
    func command() throws {
        var channel = try ChipSecureChannel(algorithm: .aes128, encryptionKey: Self.hex("cc86415f2ed7e8fd663b754265695ae1"),
                                            macKey: Self.hex("581e84b8ee06c4d3eee30461498d7fb3"), ssc: Self.hex("000000000000000000000000000000ba"))
        let protected = try CommandAPDU(bytes: Self.hex("0c2241a41d871101980953d37f67558690045d78a853b18a8e08929767a2cef172e200"))
        let inner = try channel.unwrap(protected)
        #expect(inner == CommandAPDU(cla: 0x00, ins: 0x22, p1: 0x41, p2: 0xA4, data: Self.hex("800a04007f000702020302028401c3"), ne: nil))
        #expect(channel.ssc == Self.hex("000000000000000000000000000000bb"))
    }

    @Test("223 bytes and 9000 wrap to the chip's answer byte for byte (SSC …0B → …0C)")
    func answer() throws {
        var channel = try ChipSecureChannel(algorithm: .aes128, encryptionKey: Self.hex("a8e85e938514ec67ae33cda3d43d3c48"),
                                            macKey: Self.hex("27f1adeb705a049a305b0c619b14b9b3"), ssc: Self.hex("0000000000000000000000000000000b"))
        let plain = Self.hex("""
            a729901d1a71874700133107ec53306404307bc382c63d8c150c3c72080ace05afa0c2bea28e4fb22787139165efba91f90f8aa5814a503ad4eb04a8c7dd22ce\
            2826043004a8c7dd22ce28268b39b55416f0447c2fb77de107dcd2a62e880ea53eeb62d57cb4390295dbc9943ab78696fa504c110461041d1c64f068cf45ffa2\
            a63a81b7c13f6b8847a3e77ef14fe3db7fcafe0cbd10e8e826e03436d646aaef87b2e247d4af1e8abe1d7520f9c2a45cb1eb8e95cfd55262b70b29feec5864e1\
            9c054ff99129280e4646217791811142820341263c53150231008cb91e82a3
            """)
        #expect(plain.count == 223)
        let wrapped = channel.wrap(ResponseAPDU(data: plain, statusWord: .success), oddINS: false)
        #expect(wrapped.bytes == Self.hex("""
            8781e1012fabf9e0655d7e987fd28a8aeb19c9cadd990d49399799ed1fe465bcea56da9ba3024291d40d23d7f1e00485d71faddc6d8c1382e8028dd22efdcc72\
            ed47663d56d20dd6c4b867956fe0507313083ae7fc54fb46133f184febbe13ad6fd3e2616a1f4a829e75ada1a0e443ca738288f6014be8a7745d8259b089e6be\
            e35bcc4bf5b63db5fdd84244f67eca099213b70a861b4487225aa68af684278fceb4cb809de42be3ee95b0e0d72bcdb0ed47cb56efc264e04a9397a90e81ad1d\
            81efa2d14b2ca8ec7bd997f4b1c1fd344d5dee8589c38b227ca4cb35810060a7cc76403e990290008e083eb47ef4fa82afc99000
            """))
        // 223 is what a protected AES answer to a short APDU can carry: the chip's own limit.
        #expect(channel.capacity(within: 256, oddINS: false) == 223)
    }
}
