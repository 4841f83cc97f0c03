// NXP AN10922 key diversification of a DESFire key (AES-128, 2K3DES, 3K3DES).
import CardCrypto
import SUN

extension DESFireKey {
    /// NXP AN10922 key diversification: this card's own key from a master key and M, data that
    /// identify the card (typically its UID ‖ the AID ‖ a system identifier), so that one card's
    /// key, if extracted, opens no other card.
    ///
    /// - AES-128 (§2.2): the SUN module's `AN10922` (CMAC over 01 ‖ M made 32 bytes long).
    /// - 2K3DES (§2.4): CMAC(K, 21 ‖ M) ‖ CMAC(K, 22 ‖ M); 3K3DES (§2.5): constants 31, 32, 33.
    ///
    /// The result keeps the master key's version (libfreefare's convention): for DES-family keys
    /// its version bits are set again.
    /// - Parameter input: M, 1 to 31 bytes for AES; 8 to 31 for DES-family keys, where 01-byte
    ///   shorter inputs would need AN10922's two-block padding that plain CMAC does not do (and
    ///   no published vector pins).
    public func diversified(input: [UInt8]) throws(DESFireError) -> DESFireKey {
        let m = input
        switch type {
        case .aes:
            do {
                return try DESFireKey(.aes, AN10922.diversify(masterKey: bytes, input: m), version: version)
            } catch {
                throw DESFireError(.parameterError, "AN10922: \(error)")
            }
        case .des:
            throw DESFireError(.parameterError, "AN10922 diversifies AES, 2K3DES and 3K3DES keys, not single DES")
        case .tdes2, .tdes3:
            guard (8...31).contains(m.count) else {
                throw DESFireError(.parameterError, "AN10922 input for a \(type) key is 8 to 31 bytes here, not \(m.count)")
            }
            return try DESFireKey(type, diversifiedBytes(input: m)).settingVersion(version)
        }
    }

    /// The raw bytes AN10922 produced, for tests against published vectors (which print them
    /// before any version bits are set).
    func diversifiedBytes(input m: [UInt8]) throws(DESFireError) -> [UInt8] {
        guard type != .aes else { return try diversified(input: m).bytes }
        // 1 + M is 9 bytes or more: CMAC's own padding reaches AN10922's two blocks.
        let constants: [UInt8] = type == .tdes2 ? [0x21, 0x22] : [0x31, 0x32, 0x33]
        do {
            let cmac = try CMAC(type == .tdes2 ? .tdes2 : .tdes3, key: bytes)
            var out: [UInt8] = []
            for c in constants { out += try cmac.mac([c] + m) }
            return out
        } catch {
            throw DESFireError(.parameterError, "AN10922: \(error)")
        }
    }
}
