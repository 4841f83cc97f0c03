// INSTALL [for load], LOAD, INSTALL [for install and make selectable] (Card Specification
// §11.5, §11.6): the load file in as few LOADs as a short APDU, the secure channel's overhead
// counted, allows.
import ISO7816

extension CardManager {
    /// The largest LOAD block whose wrapped command still fits `maxData` bytes of data: the
    /// C-MAC (8 bytes) and, with C-DECRYPTION, padding to the cipher's block.
    public func loadBlockSize(maxData: Int = 255) -> Int {
        guard let channel = secureChannel else { return maxData }
        let level = channel.level
        var n = maxData - (level.contains(.cMAC) ? 8 : 0)
        if level.contains(.cDecryption) {
            let block = channel.session.scp.version == 3 ? 16 : 8
            // Padding always adds 1..block bytes: the padded length is a multiple of `block` ≤ n.
            n = (n / block) * block - 1
        }
        return n
    }

    /// LOAD commands the last `install` sent.
    public var lastLoadCount: Int { loadCount }

    /// Loads `cap` and installs an instance of each applet (or `instance` for the first),
    /// selectable. A load cut between LOADs throws `.interrupted` naming the partial load file
    /// and the command that removes it.
    public func install(_ cap: CAPFile, instance: [UInt8]? = nil, privileges: [UInt8] = [0x00], parameters: [UInt8] = [],
                        includeDescriptor: Bool = false, maxData: Int = 255) throws {
        let isd = isdAID ?? Self.knownISDAIDs[0]
        // Blocks above a short APDU travel in extended length, which both the reader and the card
        // must take; SCP02's C-MAC covers a one-byte Lc, so it stays short.
        if maxData > 255 {
            guard maxData <= 65535 else { throw GlobalPlatformError(.policy, "a LOAD block is at most 65535 bytes") }
            guard transport.extendedLengthUsable else {
                throw GlobalPlatformError(.policy, "blocks of \(maxData) bytes need extended length, which this reader does not pass")
            }
            if secureChannel?.session.scp.version == 2 {
                throw GlobalPlatformError(.policy, "SCP02 MACs a one-byte Lc: LOAD blocks above 255 bytes need SCP03")
            }
        }
        // Everything that could stop the install is checked before its first command: a load
        // cut by a refusal of ours would leave a pending load file for nothing.
        guard (1...16).contains(privileges.count), parameters.count <= 127, (5...16).contains(instance?.count ?? 5),
              cap.applets.allSatisfy({ (5...16).contains($0.count) }), (5...16).contains(cap.package.aid.count), (5...16).contains(isd.count) else {
            throw GlobalPlatformError(.policy, "INSTALL takes AIDs of 5 to 16 bytes, 1 to 16 bytes of privileges and at most 127 bytes of parameters; nothing was sent")
        }
        let block = loadBlockSize(maxData: maxData)
        guard block > 0 else { throw GlobalPlatformError(.policy, "a LOAD block of \(maxData) bytes leaves no room for data at this security level") }
        let data = try cap.loadFileDataBlock(includeDescriptor: includeDescriptor)
        let blocks = stride(from: 0, to: data.count, by: block).map { Array(data[$0..<min($0 + block, data.count)]) }
        guard blocks.count <= 256 else { throw GlobalPlatformError(.policy, "the load file needs \(blocks.count) LOADs of \(block) bytes, more than the 256 block numbers; nothing was sent") }
        let entries = try registry()
        if entries.contains(where: { $0.aid == cap.package.aid }) {
            throw GlobalPlatformError(.policy, "package \(cap.package.aid.hexString) is on the card already: delete it first (apdu gp delete \(cap.package.aid.hexString) --deps)")
        }
        let forLoad = lv(cap.package.aid) + lv(isd) + [0x00, 0x00, 0x00]
        let a = try send(CommandAPDU(cla: 0x80, ins: 0xE6, p1: 0x02, p2: 0x00, data: forLoad, ne: 256))
        guard a.statusWord == .success else { throw GlobalPlatformError(.refused, "INSTALL [for load] refused: \(a.statusWord.hex)", statusWord: a.statusWord) }
        loadCount = 0
        for (n, piece) in blocks.enumerated() {
            let last = n == blocks.count - 1
            let answer: ResponseAPDU
            do {
                answer = try send(CommandAPDU(cla: 0x80, ins: 0xE8, p1: last ? 0x80 : 0x00, p2: UInt8(n), data: piece, ne: 256, forceExtended: maxData > 255))
            } catch {
                throw GlobalPlatformError(.interrupted, "the install was cut at LOAD \(n + 1) of \(blocks.count): the card may hold a partial load file \(cap.package.aid.hexString); apdu gp delete \(cap.package.aid.hexString) removes it (\(error))")
            }
            loadCount += 1
            guard answer.statusWord == .success else {
                throw GlobalPlatformError(.refused, "LOAD \(n + 1) of \(blocks.count) refused (\(answer.statusWord.hex)): the card may hold a partial load file \(cap.package.aid.hexString); apdu gp delete \(cap.package.aid.hexString) removes it",
                                          statusWord: answer.statusWord)
            }
        }
        for (k, applet) in cap.applets.enumerated() {
            let aid = k == 0 ? (instance ?? applet) : applet
            let params = [0xC9, UInt8(parameters.count)] + parameters
            let body = lv(cap.package.aid) + lv(applet) + lv(aid) + lv(privileges) + lv(params) + [0x00]
            let r = try send(CommandAPDU(cla: 0x80, ins: 0xE6, p1: 0x0C, p2: 0x00, data: body, ne: 256))
            guard r.statusWord == .success else {
                throw GlobalPlatformError(.refused, "INSTALL [for install] of \(aid.hexString) refused: \(r.statusWord.hex); the package \(cap.package.aid.hexString) is loaded (apdu gp delete \(cap.package.aid.hexString) removes it)",
                                          statusWord: r.statusWord)
            }
        }
    }

    private func lv(_ v: [UInt8]) -> [UInt8] { [UInt8(v.count)] + v }
}
