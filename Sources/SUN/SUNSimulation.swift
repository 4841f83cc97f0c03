// A tap's URL made from SDM keys, UID and counter, for tests and load generation without a tag.

extension SDMKeys {
    /// The URL a tag with these keys serves on a tap (AES mode, `e={picc}&c={mac}`): PICC data
    /// with the UID and `counter` encrypted under the meta-read key, and the SDMMAC from the
    /// tag's file-read key (diversified from the UID where these keys say so).
    ///
    /// For tests and load generation of a verifier, which need fresh, valid taps without a tag
    /// in a reader; a real tag's taps come from the tag.
    /// - Parameters:
    ///   - uid: 7 bytes.
    ///   - counter: the read counter, below 2²⁴.
    ///   - padding: the 5 bytes a tag fills at random after the counter.
    ///   - base: the URL before the query, e.g. `https://sun.example/brand`.
    public func simulatedTap(uid: [UInt8], counter: Int, padding: [UInt8] = [0, 0, 0, 0, 0], base: String) throws(SUNError) -> String {
        guard uid.count == 7 else { throw SUNError(.unsupported, "a simulated tap has a 7-byte UID, not \(uid.count)") }
        guard (0..<(1 << 24)).contains(counter), padding.count == 5 else {
            throw SUNError(.malformed, "a read counter is 0 to 16777215 and the padding 5 bytes")
        }
        let ctr: [UInt8] = [UInt8(counter & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter >> 16 & 0xFF)]
        let picc = try metaRead.cbcEncrypt([0xC7] + uid + ctr + padding)
        let mac = try SUNMessage.sdmMAC(fileKey: try fileReadKey(uid: uid), encryption: .aes, data: uid + ctr, input: [])
        return "\(base)?e=\(SUNMessage.hexString(picc))&c=\(SUNMessage.hexString(mac))"
    }
}
