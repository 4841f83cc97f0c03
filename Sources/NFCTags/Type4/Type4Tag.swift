// An NFC Forum Type 4 tag over any channel: NDEF application and file selection, reads and the
// NLEN-first write in MLe and MLc pieces, restore and the read-only lock.
import ISO7816

/// An NFC Forum Type 4 tag (or a contact card with the NDEF application) over any channel.
///
/// `detect` selects the NDEF application and reads the capability container; reads and writes
/// then follow the NFC Forum procedures in as few APDUs as MLe, MLc and the channel allow.
public final class Type4Tag {
    /// Told of each step of a write or restore as it begins (see `NDEFTag.writeObserver`).
    public var writeObserver: ((WriteStep) -> Void)?
    public static let aid: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]
    public static let aidV1: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x00]
    /// The most message bytes this tool reads from one tag: a lying NLEN/ENLEN cannot make it
    /// allocate or read more.
    public static let readLimit = 1 << 20

    public let transport: APDUTransport
    public private(set) var capabilityContainer: Type4CapabilityContainer
    /// Whether the tag answered the mapping 1.0 AID (its files are selected with P2 00).
    public let isVersion1: Bool
    /// The UID the contactless reader reports (GET DATA `FF CA`), when it is one.
    public internal(set) var readerUID: [UInt8]?

    init(transport: APDUTransport, capabilityContainer: Type4CapabilityContainer, isVersion1: Bool) {
        self.transport = transport
        self.capabilityContainer = capabilityContainer
        self.isVersion1 = isVersion1
    }

    /// Whether an ATR is the one a PC/SC contactless reader builds for an ISO 14443-4 card
    /// (PC/SC Part 3: 3B 8n 80 01 …), so that `FF CA` goes to the reader, not to a contact card.
    public static func isContactless(atr: [UInt8]) -> Bool {
        atr.count >= 5 && atr[0] == 0x3B && atr[1] & 0xF0 == 0x80 && atr[2] == 0x80 && atr[3] == 0x01
    }

    /// Selects the NDEF application and reads the CC. Throws `.notNDEF` when there is none.
    /// With a contactless ATR, the reader is also asked for the UID first.
    public static func detect(_ transport: APDUTransport, atr: [UInt8]) throws -> Type4Tag {
        var uid: [UInt8]?
        if isContactless(atr: atr) {
            let r = try transport.send(.getUID)
            if r.statusWord == .success, (4...10).contains(r.data.count) { uid = r.data }
        }
        let tag = try detect(transport)
        tag.readerUID = uid
        return tag
    }

    /// Selects the NDEF application and reads the CC. Throws `.notNDEF` when there is none.
    public static func detect(_ transport: APDUTransport) throws -> Type4Tag {
        var v1 = false
        var r = try transport.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 0x04, p2: 0x00, data: aid, ne: 256))
        if r.statusWord != .success {
            // Mapping 1.0 tags know only the 1.0 AID, selected without Le.
            let r1 = try transport.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 0x04, p2: 0x00, data: aidV1))
            guard r1.statusWord == .success else {
                throw TagError(.notNDEF, "no NDEF application on this card (SELECT D2760000850101 answered \(r.statusWord): \(r.statusWord.meaning.text))")
            }
            v1 = true
            r = r1
        }
        try selectFile([0xE1, 0x03], transport: transport, v1: v1, what: "capability container E103")
        // MLe is unknown until the CC is read: a short read of its first 15 bytes first.
        let head = try transport.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 15))
        guard head.statusWord == .success || head.statusWord == .endOfFileReached, head.data.count >= 2 else {
            throw TagError(.badCapabilityContainer, "cannot read the capability container (\(head.statusWord): \(head.statusWord.meaning.text))")
        }
        var ccBytes = head.data
        let ccLength = Int(ccBytes[0]) << 8 | Int(ccBytes[1])
        if ccLength > ccBytes.count && ccLength <= 0x7FFF {
            // A longer CC (extra TLVs, or the 17-byte 3.0 CC): read the rest.
            while ccBytes.count < ccLength {
                let n = min(ccLength - ccBytes.count, 0xFF)
                let more = try transport.send(CommandAPDU(cla: 0, ins: 0xB0, p1: UInt8(ccBytes.count >> 8), p2: UInt8(ccBytes.count & 0xFF), ne: n))
                guard more.statusWord.isSuccess || more.statusWord == .endOfFileReached, !more.data.isEmpty else { break }
                ccBytes += more.data
            }
        }
        let cc = try Type4CapabilityContainer(bytes: ccBytes)
        return Type4Tag(transport: transport, capabilityContainer: cc, isVersion1: v1)
    }

    static func selectFile(_ fid: [UInt8], transport: APDUTransport, v1: Bool, what: String) throws {
        let r = try transport.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 0x00, p2: v1 ? 0x00 : 0x0C, data: fid))
        if r.statusWord == .success { return }
        if !v1 {
            // Some 2.0 tags insist on P2 00.
            let again = try transport.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 0x00, p2: 0x00, data: fid))
            if again.statusWord == .success { return }
        }
        throw TagError(.fileMissing, "cannot select the \(what) (\(r.statusWord): \(r.statusWord.meaning.text))")
    }

    public var status: NDEFStatus {
        switch (capabilityContainer.readAccess, capabilityContainer.writeAccess) {
        case (.granted, .granted): return .readWrite
        case (.granted, _): return .readOnly
        default: return .notSupported
        }
    }

    /// Largest R-APDU data one READ BINARY may ask for: MLe, and 256 unless the channel carries extended Le.
    /// (The channel is asked only when MLe is beyond a short Le.)
    var readChunk: Int {
        let mle = capabilityContainer.mle
        return mle <= 256 ? mle : min(mle, transport.extendedLengthUsable ? 65536 : 256)
    }
    /// Largest C-APDU data one UPDATE BINARY may carry.
    var writeChunk: Int {
        let mlc = capabilityContainer.mlc
        return mlc <= 255 ? mlc : min(mlc, transport.extendedLengthUsable ? 65535 : 255)
    }

    /// Reads `count` bytes of the selected file from `offset`, in as few READ BINARY as allowed.
    /// `upToEnd`: the count is a guess (the length is not known yet), so a file that ends first
    /// (`62 82` with data, ISO 7816-4) gives what it has instead of an error.
    func read(offset: Int, count: Int, upToEnd: Bool = false) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(min(count, Self.readLimit))
        var position = offset
        while out.count < count {
            let want = min(count - out.count, readChunk)
            var chunk: [UInt8]
            let r: ResponseAPDU
            if position + want - 1 <= 0x7FFF {
                r = try transport.send(CommandAPDU(cla: 0, ins: 0xB0, p1: UInt8(position >> 8), p2: UInt8(position & 0xFF), ne: want))
                chunk = r.data
            } else {
                // Beyond 0x7FFF: READ BINARY B1 with offset data object 54; the answer is 53 L data.
                guard readChunk >= 3 else {
                    throw TagError(.beyondReach, "bytes past offset 7FFF come in a 53 data object, which does not fit this tag's MLe of \(readChunk)")
                }
                let le = min(want + 4, readChunk)
                let odo: [UInt8] = [0x54, 0x03, UInt8(position >> 16 & 0xFF), UInt8(position >> 8 & 0xFF), UInt8(position & 0xFF)]
                r = try transport.send(CommandAPDU(cla: 0, ins: 0xB1, p1: 0, p2: 0, data: odo, ne: le))
                guard let ddo = (try? BERTLV.decode(r.data))?.first, ddo.tag == [0x53] else {
                    throw TagError(.readFailed, "READ BINARY at offset \(position) answered without its 53 data object (\(r.statusWord))")
                }
                chunk = Array(ddo.value.prefix(count - out.count))
            }
            // An extended Le the reader refused (now learned): the same bytes in short reads.
            if r.statusWord == .wrongLength, want > 256, !transport.extendedLengthUsable { continue }
            guard r.statusWord == .success || r.statusWord == .endOfFileReached, !chunk.isEmpty else {
                throw TagError(.readFailed, "READ BINARY at offset \(position) failed: \(r.statusWord) (\(r.statusWord.meaning.text))")
            }
            if chunk.count > count - out.count { chunk = Array(chunk.prefix(count - out.count)) }
            out += chunk
            position += chunk.count
            if r.statusWord == .endOfFileReached && upToEnd { break }
            if r.statusWord == .endOfFileReached && out.count < count {
                throw TagError(.lengthLies, "the NDEF file ended at byte \(position), before the \(count + offset) bytes its length promised")
            }
        }
        return out
    }

    /// Reads the NDEF message (the bytes after NLEN/ENLEN; empty when NLEN is 0).
    public func readNDEF() throws -> [UInt8] {
        try readNDEF(selecting: true)
    }

    /// `selecting: false` when this same procedure has just selected the NDEF file.
    func readNDEF(selecting: Bool) throws -> [UInt8] {
        let cc = capabilityContainer
        guard case .granted = cc.readAccess else {
            throw TagError(.readOnly, "the tag does not allow reading its NDEF file (read access \(cc.readAccess))")
        }
        if selecting { try selectNDEFFile() }
        let lf = cc.lengthFieldSize
        // NLEN and the first data in one READ BINARY: a guess at the length, which a file shorter
        // than the CC's maximum may end before (62 82, or a refusal of the over-long Le: then
        // NLEN alone). At least NLEN/ENLEN itself, even from a tag whose MLe is smaller. Past
        // NLEN nothing more is asked for.
        let guess = max(lf, min(readChunk, cc.maxFileSize, Self.readLimit + lf))
        let first: [UInt8]
        do { first = try read(offset: 0, count: guess, upToEnd: true) } catch let e as TagError where e.kind == .readFailed && guess > lf {
            first = try read(offset: 0, count: lf)
        }
        guard first.count >= lf else { throw TagError(.readFailed, "the NDEF file is shorter than its length field") }
        let nlen = first.prefix(lf).reduce(0) { $0 << 8 | Int($1) }
        guard nlen <= cc.maxFileSize - lf else {
            throw TagError(.lengthLies, "the tag claims a \(nlen)-byte message, but its NDEF file holds at most \(cc.maxFileSize - lf)")
        }
        guard nlen <= Self.readLimit else {
            throw TagError(.lengthLies, "the tag claims a \(nlen)-byte message, more than this tool reads (\(Self.readLimit))")
        }
        var message = Array(first.dropFirst(lf).prefix(nlen))
        if message.count < nlen {
            message += try read(offset: lf + message.count, count: nlen - message.count)
        }
        return message
    }

    /// Writes `message` with the NFC Forum procedure: NLEN 0, the body in MLc pieces, the real
    /// NLEN last, then reads it back. A write interrupted at any point leaves either the old
    /// message (before the first UPDATE), NLEN 0, or the new message.
    public func writeNDEF(_ message: [UInt8]) throws {
        try checkWritable(message)
        try selectNDEFFile()
        let current = try read(offset: 0, count: capabilityContainer.lengthFieldSize)
        try write(message, currentLength: current)
    }

    /// Reads the current message and hands a backup of it to `keep` (to save it), then writes
    /// `message` as `writeNDEF` does — selecting the NDEF file once for the whole procedure.
    public func replaceNDEF(with message: [UInt8], keepingOld keep: (TagBackup) throws -> Void) throws {
        try checkWritable(message)
        let old = try readNDEF(selecting: true)
        let lf = capabilityContainer.lengthFieldSize
        let length = Self.lengthField(old.count, size: lf)
        // The backup must be one this tag lets us put back: else a cut would lose the message.
        if lf + old.count - 1 > 0x7FFF && writeChunk < 9 {
            throw TagError(.beyondReach, "the current message (\(old.count) bytes) reaches past offset 7FFF, which only UPDATE BINARY D7 can write, and this tag's MLc of \(capabilityContainer.mlc) is too small for it: its backup could not be put back, so nothing was written")
        }
        try keep(TagBackup(kind: kind, uid: uid, capabilityContainer: capabilityContainer.bytes, start: 0, bytes: length + old, message: old))
        try write(message, currentLength: length)
    }

    /// Puts a backup back without parsing what the tag holds now (its NLEN may lie): the
    /// backup's message with the same NLEN procedure. Refuses another tag's backup (UID, when
    /// both are known and the UID is not a random one) unless `allowingOtherTag`, and a backup
    /// made for another capability container.
    public func restore(_ backup: TagBackup, allowingOtherTag: Bool = false) throws {
        let cc = capabilityContainer
        // A random UID (a phone emulating a tag) says nothing about which tag this is.
        try checkBackupIdentity(backup, uid: uid.flatMap { Self.isRandomUID($0) ? nil : $0 }, allowingOtherTag: allowingOtherTag)
        guard backup.capabilityContainer == cc.bytes || allowingOtherTag else {
            throw TagError(.differentTag, "the backup was made with CC \(backup.capabilityContainer.hexString), the tag now has \(cc.bytes.hexString); nothing was written (--force writes it anyway)")
        }
        let lf = cc.lengthFieldSize
        guard backup.start == 0, backup.bytes.count >= lf else { throw TagError(.differentTag, "the backup holds no NDEF length; nothing was written") }
        let length = Array(backup.bytes.prefix(lf))
        let message = Array(backup.bytes.dropFirst(lf))
        guard length.reduce(0, { $0 << 8 | Int($1) }) == message.count else {
            throw TagError(.lengthLies, "the backup's NLEN does not match its \(message.count) bytes; nothing was written")
        }
        try checkWritable(message)
        try selectNDEFFile()
        let current = try read(offset: 0, count: lf)
        try write(message, currentLength: current)
    }

    /// ISO 14443-3: a 4-byte UID starting 08 is random, new at every activation.
    static func isRandomUID(_ uid: [UInt8]) -> Bool { uid.count == 4 && uid[0] == 0x08 }

    static func lengthField(_ n: Int, size: Int) -> [UInt8] {
        (0..<size).map { UInt8(n >> (8 * (size - 1 - $0)) & 0xFF) }
    }

    func checkWritable(_ message: [UInt8]) throws {
        let cc = capabilityContainer
        guard case .granted = cc.writeAccess else {
            throw TagError(.readOnly, "the tag is read-only (write access \(cc.writeAccess))")
        }
        guard message.count <= cc.capacity else {
            throw TagError(.tooLarge, "the message is \(message.count) bytes; the tag holds \(cc.capacity) (\(message.count - cc.capacity) bytes over)")
        }
        if cc.lengthFieldSize + message.count - 1 > 0x7FFF && writeChunk < 9 {
            throw TagError(.beyondReach, "bytes past offset 7FFF need UPDATE BINARY D7, whose offset and data objects take 8 bytes plus data, more than this tag's MLc of \(cc.mlc) allows; nothing was written")
        }
    }

    /// The one UPDATE BINARY that turns length field `from` into `to`: only the bytes that
    /// differ. When they do not fit in one command (MLc 1 and a 2-byte change), no order of
    /// smaller writes avoids a moment where the length is neither old, 0 nor new: refuse.
    func lengthUpdate(from: [UInt8], to: [UInt8]) throws -> (offset: Int, bytes: [UInt8])? {
        let differing = from.indices.filter { from[$0] != to[$0] }
        guard let first = differing.first, let last = differing.last else { return nil }
        // The whole field in one UPDATE, as the T4T procedure writes it, whenever MLc allows.
        if to.count <= writeChunk { return (0, to) }
        guard last - first + 1 <= writeChunk else {
            throw TagError(.unsafe, "changing the NDEF length from \(from.hexString) to \(to.hexString) takes \(last - first + 1) bytes, but this tag accepts \(writeChunk) per UPDATE BINARY (MLc \(capabilityContainer.mlc)): a pulled card between two writes would leave a length that lies; nothing was written")
        }
        return (first, Array(to[first...last]))
    }

    func selectNDEFFile() throws {
        try Self.selectFile(capabilityContainer.fileID, transport: transport, v1: isVersion1, what: "NDEF file \(capabilityContainer.fileID.hexString)")
    }

    /// The NDEF file must be selected. `currentLength`: NLEN/ENLEN as the tag holds it now.
    func write(_ message: [UInt8], currentLength: [UInt8]) throws {
        let lf = capabilityContainer.lengthFieldSize
        let zero = [UInt8](repeating: 0, count: lf)
        let final = Self.lengthField(message.count, size: lf)
        // Both length changes are planned before the first byte is written.
        let clear = try lengthUpdate(from: currentLength, to: zero)
        let set = try lengthUpdate(from: zero, to: final)
        // The message's bytes, at most `writeChunk` to an UPDATE BINARY.
        var chunks: [(at: Int, count: Int)] = []
        var offset = 0
        while offset < message.count {
            var n = min(writeChunk, message.count - offset)
            if lf + offset + n - 1 > 0x7FFF {
                // UPDATE BINARY D7 spends up to 9 bytes of MLc on its offset and data objects.
                n = min(n, max(1, writeChunk - 9))
            }
            chunks.append((offset, n))
            offset += n
        }
        var progress = WriteProgress(steps: (clear != nil ? 1 : 0) + chunks.count + (chunks.isEmpty ? 0 : 1) + (set != nil ? 1 : 0) + 1, observer: writeObserver)
        // A refused length update is checked on the file: the length field as before, as after
        // (for the commit, with the message read back whole), or neither.
        func lengthReads(before: [UInt8], after: [UInt8], message: [UInt8]? = nil) throws -> WriteProgress.Reading {
            let field = try read(offset: 0, count: lf)
            if field == before { return .notDone }
            guard field == after else { return .neither }
            guard let message else { return .done }
            return try readNDEF(selecting: false) == message ? .done : .neither
        }
        if let clear {
            try progress.step("clear the NDEF length", empties: true, check: { try lengthReads(before: currentLength, after: zero) }) {
                try update(offset: clear.offset, clear.bytes, step: "clear the length")
            }
        } else {
            progress.phase = .emptied
        }
        for (at, n) in chunks {
            try progress.step("write bytes \(at)…\(at + n - 1)") { try update(offset: lf + at, Array(message[at..<(at + n)]), step: "write bytes \(at)…\(at + n - 1)") }
        }
        // The body as the file holds it, before the length makes it the message: an UPDATE the
        // tag never got, answered 90 00 by a reader or a man in the middle (issue 49's matrix),
        // would otherwise leave a mix under the new length. A piece that differs is written again.
        if !chunks.isEmpty {
            let body = try progress.step("read the message back before the NDEF length") { try read(offset: lf, count: message.count) }
            let differing = chunks.filter { body[$0.at..<($0.at + $0.count)] != message[$0.at..<($0.at + $0.count)] }
            for (at, n) in differing {
                try progress.step("write bytes \(at)…\(at + n - 1) again") { try update(offset: lf + at, Array(message[at..<(at + n)]), step: "write bytes \(at)…\(at + n - 1)") }
            }
            if !differing.isEmpty {
                try progress.step("read the bytes written again back") {
                    guard try read(offset: lf, count: message.count) == message else {
                        throw TagError(.verifyFailed, "the message reads back differently after its bytes were written twice; the NDEF length was not written")
                    }
                }
            }
        }
        if let set {
            try progress.step("write the NDEF length", commits: true, check: { try lengthReads(before: zero, after: final, message: message) }) {
                try update(offset: set.offset, set.bytes, step: "write the length")
            }
        } else {
            progress.phase = .committed
        }
        // The body was read back before the length; the length now.
        try confirmWritten(message) {
            try progress.step("read the NDEF length back") {
                let field = try read(offset: 0, count: lf)
                return field == final ? message : try readNDEF(selecting: false)
            }
        }
    }

    func update(offset: Int, _ data: [UInt8], step: String) throws {
        let command: CommandAPDU
        if offset + data.count - 1 <= 0x7FFF {
            command = CommandAPDU(cla: 0, ins: 0xD6, p1: UInt8(offset >> 8), p2: UInt8(offset & 0xFF), data: data)
        } else {
            command = CommandAPDU(cla: 0, ins: 0xD7, p1: 0, p2: 0,
                                  data: [0x54, 0x03, UInt8(offset >> 16 & 0xFF), UInt8(offset >> 8 & 0xFF), UInt8(offset & 0xFF), 0x53]
                                      + BERTLV.encodeLength(data.count) + data)
        }
        let r = try transport.send(command)
        // An extended Lc the reader refused (nothing was written; now learned): short pieces.
        if r.statusWord == .wrongLength, data.count > 255, !transport.extendedLengthUsable {
            var done = 0
            while done < data.count {
                let n = min(writeChunk, data.count - done)
                try update(offset: offset + done, Array(data[done..<(done + n)]), step: step)
                done += n
            }
            return
        }
        guard r.statusWord == .success else {
            throw TagError(r.statusWord == .securityStatusNotSatisfied ? .readOnly : .writeFailed,
                             "the tag refused to \(step): \(r.statusWord) (\(r.statusWord.meaning.text))")
        }
    }

    /// Makes the tag read-only the way Android does for Type 4: FF into the CC's write-access
    /// byte. Returns whether the tag then really refuses writes (checked by rewriting NLEN with
    /// its own value, which changes nothing if the write goes through).
    @discardableResult
    public func makeReadOnly() throws -> Bool {
        let cc = capabilityContainer
        try Self.selectFile([0xE1, 0x03], transport: transport, v1: isVersion1, what: "capability container E103")
        let r = try transport.send(CommandAPDU(cla: 0, ins: 0xD6, p1: 0, p2: UInt8(cc.writeAccessOffset), data: [0xFF]))
        guard r.statusWord == .success else {
            throw TagError(.lockFailed, "the tag refused to change its write access: \(r.statusWord) (\(r.statusWord.meaning.text))")
        }
        let reread = try read(offset: 0, count: cc.bytes.count)
        capabilityContainer = try Type4CapabilityContainer(bytes: reread)
        try selectNDEFFile()
        let nlen = try read(offset: 0, count: cc.lengthFieldSize)
        let probe = try transport.send(CommandAPDU(cla: 0, ins: 0xD6, p1: 0, p2: 0, data: nlen))
        return probe.statusWord != .success
    }
}
