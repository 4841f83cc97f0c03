// The PC/SC Part 3 storage READ BINARY, sent with the Le form this connection's reader takes.
import ISO7816

extension APDUTransport {
    /// A PC/SC Part 3 storage READ BINARY (`FF B0 P1 P2 Le`) of `block`, with the Le this
    /// connection's reader takes.
    ///
    /// Readers differ: most take Le 00 ("up to 256", ISO 7816-4) and the exact count alike; some
    /// answer `67 00` to anything but the block size, or `6C xx` naming it. The first form is
    /// what this connection learned, else the exact size where `size` is known (no extra
    /// exchange on any reader seen so far) and Le 00 where it is not (a Type 5 tag's first
    /// block, which tells the block size). A `67 00` gets the other form once (for an unknown
    /// size, the ISO 15693 block sizes 4, then 8); a `6C xx` is re-sent with Le xx by the
    /// transport. The form that worked is kept in `forms` for the rest of the connection.
    /// Any other status word is the tag's or the reader's answer, returned as it is.
    /// - Parameters:
    ///   - block: the block (page, for Type 2) number, P1-P2.
    ///   - size: the bytes one block holds, when known.
    public func storageReadBinary(block: Int, size: Int?) throws -> ResponseAPDU {
        let tries: [Int]
        switch (forms.readBinaryLe, size) {
        case let (.exact?, n?): tries = [n]
        case (.exact?, nil): tries = [4, 8]
        case (.maximum?, _): tries = [256]
        case let (nil, n?): tries = [n, 256]
        case (nil, nil): tries = [256, 4, 8]
        }
        var response = ResponseAPDU(data: [], statusWord: .wrongLength)
        for le in tries {
            let corrections = leCorrections
            response = try send(CommandAPDU(cla: 0xFF, ins: 0xB0, p1: UInt8(truncatingIfNeeded: block >> 8), p2: UInt8(truncatingIfNeeded: block), ne: le))
            guard response.statusWord != .wrongLength else { continue }
            if response.statusWord == .success {
                forms.readBinaryLe = le == 256 && leCorrections == corrections ? .maximum : .exact
            }
            return response
        }
        return response
    }
}
