import CardCrypto
import Glibc
import ISO7816
@testable import MRTD

/// The chip's half of PACE with the generic mapping (Part 11 §4.4.3), for timing whole
/// handshakes in-process and for flows no published transcript covers.
final class PACEChip: CardChannel {
    let password: [UInt8]
    let info: PACEInfo
    let group: any KeyAgreementGroup
    var supportsExtendedLength = false
    private var nonce: [UInt8] = []
    private var mapped: (any KeyAgreementGroup)?
    private var macKey: [UInt8] = []
    private var terminalKey: [UInt8] = []
    private var chipKey: [UInt8] = []
    private var step = 0
    var established = false
    /// Process CPU time spent in the chip's half, in clock() ticks.
    var chipTicks: Int = 0

    init(key: MRTDAccessKey, info: PACEInfo, domain: DomainParameters) {
        password = key.pacePassword
        self.info = info
        group = domain.group
    }

    func transmit(_ bytes: [UInt8]) throws -> [UInt8] {
        let start = clock()
        defer { chipTicks += Int(clock() - start) }
        guard let c = try? CommandAPDU(bytes: bytes) else { return [0x67, 0x00] }
        let cipher = info.cipher.algorithm
        if c.ins == 0x22 { step = 1; established = false; return [0x90, 0x00] }
        guard c.ins == 0x86, let template = try? BERTLV.decode(c.data).first, template.tag == [0x7C] else { return [0x6A, 0x80] }
        let value = template.children?.first?.value ?? []
        do {
            switch step {
            case 1:
                nonce = secureRandomBytes(cipher.blockSize)
                let kPi = KeyDerivation.derive(password, purpose: .password, cipher: cipher)
                let z = try BlockCipher(cipher, key: kPi).encrypt(cbc: nonce)
                step = 2
                return answer(0x80, z)
            case 2:
                let pair = try group.generateKeyPair(random: .system)
                mapped = try group.genericMapping(nonce: nonce, element: try group.agreeElement(privateKey: pair.privateKey, peer: value))
                step = 3
                return answer(0x82, pair.publicKey)
            case 3:
                guard let mapped else { return [0x69, 0x85] }
                let pair = try mapped.generateKeyPair(random: .system)
                terminalKey = try mapped.validatePublicKey(value)
                chipKey = pair.publicKey
                let secret = try mapped.sharedSecret(privateKey: pair.privateKey, peer: terminalKey)
                macKey = KeyDerivation.derive(secret, purpose: .mac, cipher: cipher)
                step = 4
                return answer(0x84, pair.publicKey)
            case 4:
                guard let mapped else { return [0x69, 0x85] }
                let expected = try PACE.authenticationToken(publicKey: chipKey, tag: mapped.publicKeyTag, protocol: info.protocolIdentifier, macKey: macKey, cipher: cipher)
                guard constantTimeEquals(expected, value) else { return [0x63, 0x00] }
                established = true
                step = 0
                return answer(0x86, try PACE.authenticationToken(publicKey: terminalKey, tag: mapped.publicKeyTag, protocol: info.protocolIdentifier, macKey: macKey, cipher: cipher))
            default:
                return [0x69, 0x85]
            }
        } catch {
            return [0x6A, 0x80]
        }
    }

    private func answer(_ tag: UInt8, _ value: [UInt8]) -> [UInt8] {
        let inner = [tag] + BERTLV.encodeLength(value.count) + value
        return [0x7C] + BERTLV.encodeLength(inner.count) + inner + [0x90, 0x00]
    }
}
