internal import COpenSSL
import CardCrypto
import ISO7816
@testable import VirtualCard

// The test terminal's PACE, chip authentication and active authentication, written here from
// ICAO 9303 Part 11 and BSI TR-03110 apart from the chip's code. Only libcrypto's arithmetic
// (the chip module's thin EllipticCurve / ModularGroup wrappers, and EVP for the checks) is
// shared.

extension TestReader {
    enum PACEPassword { case mrz(number: String, birth: String, expiry: String), can(String) }

    /// PACE with Generic or Chip Authentication Mapping (Part 11 §4.4.3); returns CA_IC when
    /// the chip sent Chip Authentication Mapping data (DO 8A).
    @discardableResult
    mutating func openPACE(mapping: UInt8, cipher: CipherAlgorithm, parameterID: Int, password: PACEPassword,
                           sendParameterID: Bool = true) throws(Failure) -> [UInt8]? {
        let cipherArc: UInt8 = switch cipher { case .tdes2: 1; case .aes128: 2; case .aes192: 3; default: 4 }
        let oid: [UInt8] = [0x04, 0x00, 0x7F, 0x00, 0x07, 0x02, 0x02, 0x04, mapping, cipherArc]
        let secret: [UInt8]
        let reference: UInt8
        switch password {
        case .mrz(let n, let b, let e): secret = Digest.sha1.hash(TestKDF.mrzInformation(n, b, e)); reference = 1
        case .can(let can): secret = Array(can.utf8); reference = 2
        }
        var mse = [0x80, UInt8(oid.count)] + oid + [0x83, 0x01, reference]
        if sendParameterID { mse += [0x84, 0x01, UInt8(parameterID)] }
        let set = card.process([0x00, 0x22, 0xC1, 0xA4, UInt8(mse.count)] + mse)
        guard set == [0x90, 0x00] else { throw .status(StatusWord(set[0], set[1])) }

        func ga(_ chained: Bool, _ tag: UInt8, _ value: [UInt8]) throws(Failure) -> [UInt8] {
            let inner: [UInt8] = value.isEmpty && tag == 0 ? [] : TestSecureMessaging.tlv(tag, value)
            let data = TestSecureMessaging.tlv(0x7C, inner)
            let answer = card.process(CommandAPDU(cla: chained ? 0x10 : 0x00, ins: 0x86, p1: 0, p2: 0, data: data, ne: 256).bytes)
            guard answer.count >= 2, answer.suffix(2) == [0x90, 0x00] else { throw .status(StatusWord(answer[answer.count - 2], answer[answer.count - 1])) }
            guard let outer = try? BERTLV.decode(Array(answer.dropLast(2))).first, outer.tag == [0x7C] else { throw .broken(answer) }
            return outer.value
        }
        func value(_ objects: [UInt8], _ tag: UInt8) throws(Failure) -> [UInt8] {
            guard let o = try? BERTLV.decode(objects).first(where: { $0.tag == [tag] }) else { throw .broken(objects) }
            return o.value
        }

        // Step 1: the nonce.
        let kPi = TestKDF.key(secret, 3, cipher)
        let z = try value(try ga(true, 0, []), 0x80)
        let nonce = BigNumber(bytes: try! BlockCipher(cipher, key: kPi).decrypt(cbc: z))
        let elliptic = mapping != 1
        let parameters = StandardDomainParameters(id: parameterID)!
        var chipMappingKey: [UInt8] = []
        let terminalEphemeral: [UInt8], chipEphemeral: [UInt8], shared: [UInt8]
        if elliptic {
            let curve = parameters.makeCurve()!
            // Step 2: Ĝ = s·G + x_T·PK_map,IC.
            let mapSecret = BigNumber(bytes: secureRandomBytes(curve.orderSize - 1))
            chipMappingKey = try value(try ga(true, 0x81, curve.multiply(generatorBy: mapSecret)!.uncompressed), 0x82)
            guard let chipMap = curve.point(chipMappingKey) else { throw .broken(chipMappingKey) }
            let h = curve.multiply(generatorBy: nil, point: chipMap, by: mapSecret)!
            let mapped = curve.with(generator: curve.add(curve.multiply(generatorBy: nonce)!, h)!)!
            // Step 3.
            let ephemeral = BigNumber(bytes: secureRandomBytes(curve.orderSize - 1))
            terminalEphemeral = mapped.multiply(generatorBy: ephemeral)!.uncompressed
            chipEphemeral = try value(try ga(true, 0x83, terminalEphemeral), 0x84)
            guard let chipPoint = mapped.point(chipEphemeral) else { throw .broken(chipEphemeral) }
            shared = mapped.multiply(generatorBy: nil, point: chipPoint, by: ephemeral)!.x
        } else {
            let group = parameters.makeGroup()!
            let mapSecret = BigNumber(bytes: secureRandomBytes(group.q.byteCount - 1))
            chipMappingKey = try value(try ga(true, 0x81, group.power(mapSecret).bytes(length: group.size)), 0x82)
            guard let chipMap = group.element(chipMappingKey) else { throw .broken(chipMappingKey) }
            let mapped = group.with(generator: group.multiply(group.power(nonce), group.power(chipMap, mapSecret)))
            let ephemeral = BigNumber(bytes: secureRandomBytes(group.q.byteCount - 1))
            terminalEphemeral = mapped.power(ephemeral).bytes(length: group.size)
            chipEphemeral = try value(try ga(true, 0x83, terminalEphemeral), 0x84)
            guard let chipValue = mapped.element(chipEphemeral) else { throw .broken(chipEphemeral) }
            shared = mapped.power(chipValue, ephemeral).bytes(length: group.size)
        }
        let kEnc = TestKDF.key(shared, 1, cipher), kMac = TestKDF.key(shared, 2, cipher)
        func token(_ key: [UInt8]) -> [UInt8] {
            let inner = [0x06, UInt8(oid.count)] + oid + [elliptic ? 0x86 : 0x84] + BERTLV.encodeLength(key.count) + key
            let input = [0x7F, 0x49] + BERTLV.encodeLength(inner.count) + inner
            if cipher.isAES { return Array(try! CMAC(cipher, key: kMac).mac(input).prefix(8)) }
            return try! RetailMAC.mac(key: kMac, data: Padding.pad(input, blockSize: 8))
        }
        // Step 4: the tokens.
        let last = try ga(false, 0x85, token(chipEphemeral))
        guard constantTimeEquals(try value(last, 0x86), token(terminalEphemeral)) else { throw .broken(last) }
        sm = TestSecureMessaging(cipher: cipher, encryptionKey: kEnc, macKey: kMac, ssc: [UInt8](repeating: 0, count: cipher.blockSize))
        guard let cam = try? value(last, 0x8A) else { return nil }
        // CAM (Part 11 §4.4.3.5.2): CA_IC, deciphered with IV = E(KS_enc, FF…FF).
        let k = try! BlockCipher(cipher, key: kEnc)
        let iv = try! k.encrypt(block: [UInt8](repeating: 0xFF, count: cipher.blockSize))
        guard let plain = try? k.decrypt(cbc: cam, iv: iv), let ca = Padding.unpad(plain, blockSize: cipher.blockSize) else { throw .broken(cam) }
        lastChipMappingKey = chipMappingKey
        return ca
    }

    /// Chip authentication with DG14's key (Part 11 §6.2): MSE:Set AT + GENERAL AUTHENTICATE for
    /// AES, MSE:Set KAT for 3DES; then new keys and SSC 0.
    mutating func chipAuthenticate(chipKey: EVPKey, protocolOID: [UInt8], cipher: CipherAlgorithm, viaKAT: Bool) throws(Failure) {
        let (ephemeral, shared) = chipKey.agree()
        if viaKAT {
            let kat = try send(CommandAPDU(cla: 0, ins: 0x22, p1: 0x41, p2: 0xA6, data: TestSecureMessaging.tlv(0x91, ephemeral)))
            guard kat.statusWord == .success else { throw .status(kat.statusWord) }
        } else {
            let set = try send(CommandAPDU(cla: 0, ins: 0x22, p1: 0x41, p2: 0xA4, data: TestSecureMessaging.tlv(0x80, protocolOID)))
            guard set.statusWord == .success else { throw .status(set.statusWord) }
            let ga = try send(CommandAPDU(cla: 0, ins: 0x86, p1: 0, p2: 0, data: TestSecureMessaging.tlv(0x7C, TestSecureMessaging.tlv(0x80, ephemeral)), ne: 256))
            guard ga.statusWord == .success, ga.data == [0x7C, 0x00] else { throw .status(ga.statusWord) }
        }
        sm = TestSecureMessaging(cipher: cipher, encryptionKey: TestKDF.key(shared, 1, cipher), macKey: TestKDF.key(shared, 2, cipher),
                                 ssc: [UInt8](repeating: 0, count: cipher.blockSize))
    }
}

/// A public key libcrypto parsed from a SubjectPublicKeyInfo (DG14, DG15), with the checks a
/// terminal runs on it.
final class EVPKey {
    let pointer: OpaquePointer

    init?(subjectPublicKeyInfo spki: [UInt8]) {
        var p: UnsafePointer<UInt8>? = nil
        let key = spki.withUnsafeBufferPointer { b -> OpaquePointer? in
            p = b.baseAddress
            return d2i_PUBKEY(nil, &p, b.count)
        }
        guard let key else { ERR_clear_error(); return nil }
        pointer = key
    }

    deinit { EVP_PKEY_free(pointer) }

    /// The public point (EC) or value (DH) as libcrypto encodes it.
    var publicBytes: [UInt8] { Self.publicBytes(of: pointer) }

    static func publicBytes(of key: OpaquePointer?) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 1024)
        var n = 0
        guard EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", &out, out.count, &n) == 1 else { ERR_clear_error(); return [] }
        return Array(out.prefix(n))
    }

    /// A fresh key pair on the same parameters and the shared secret with this key: the
    /// terminal's ephemeral public key as it goes on the wire, and K (x, or y^x as long as p).
    func agree() -> ([UInt8], [UInt8]) {
        let gen = EVP_PKEY_CTX_new(pointer, nil)!
        defer { EVP_PKEY_CTX_free(gen) }
        var mine: OpaquePointer? = nil
        EVP_PKEY_keygen_init(gen)
        EVP_PKEY_keygen(gen, &mine)
        defer { EVP_PKEY_free(mine) }
        let ephemeral = Self.publicBytes(of: mine)
        let derive = EVP_PKEY_CTX_new(mine, nil)!
        defer { EVP_PKEY_CTX_free(derive) }
        EVP_PKEY_derive_init(derive)
        EVP_PKEY_CTX_set_dh_pad(derive, 1)
        EVP_PKEY_derive_set_peer(derive, pointer)
        var n = 0
        EVP_PKEY_derive(derive, nil, &n)
        var secret = [UInt8](repeating: 0, count: n)
        EVP_PKEY_derive(derive, &secret, &n)
        ERR_clear_error()
        return (ephemeral, Array(secret.prefix(n)))
    }

    /// ISO/IEC 9796-2 scheme 1 with SHA-1 (Part 11 §6.1.2): the RSA public operation without
    /// padding gives 6A ‖ M1 ‖ SHA-1(M1 ‖ challenge) ‖ BC.
    func verifiesISO9796(_ signature: [UInt8], challenge: [UInt8]) -> Bool {
        let ctx = EVP_PKEY_CTX_new(pointer, nil)!
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_encrypt_init(ctx) == 1, EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) == 1 else { return false }
        var n = 0
        guard EVP_PKEY_encrypt(ctx, nil, &n, signature, signature.count) == 1 else { ERR_clear_error(); return false }
        var j = [UInt8](repeating: 0, count: n)
        guard EVP_PKEY_encrypt(ctx, &j, &n, signature, signature.count) == 1, n > 22 else { ERR_clear_error(); return false }
        guard j[0] == 0x6A, j[n - 1] == 0xBC else { return false }
        let m1 = Array(j[1..<(n - 21)])
        return Array(j[(n - 21)..<(n - 1)]) == Digest.sha1.hash(m1 + challenge)
    }

    /// ECDSA with SHA-256 over `message`, the signature plain r ‖ s (TR-03111).
    func verifiesPlainECDSA(_ signature: [UInt8], message: [UInt8]) -> Bool {
        let half = signature.count / 2
        func integer(_ b: ArraySlice<UInt8>) -> [UInt8] {
            var v = Array(b.drop { $0 == 0 })
            if v.isEmpty { v = [0] }
            if v[0] & 0x80 != 0 { v.insert(0, at: 0) }
            return [0x02, UInt8(v.count)] + v
        }
        let body = integer(signature[..<half]) + integer(signature[half...])
        let der = [0x30, UInt8(body.count)] + body
        let ctx = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, pointer) == 1 else { return false }
        let ok = EVP_DigestVerify(ctx, der, der.count, message, message.count) == 1
        ERR_clear_error()
        return ok
    }
}
