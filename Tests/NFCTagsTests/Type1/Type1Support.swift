import ISO7816
import NFCTags
import Testing
import VirtualCard

/// A Type 1 tag model behind a reader model, detected the way the CLI detects it.
enum Type1Harness {
    /// Detects the tag behind `reader` over `channel` (a plain channel when nil).
    static func detect(_ reader: Type1Reader, channel: (any CardChannel)? = nil, tolerant: Bool = false,
                       observer: ((Exchange) -> Void)? = nil) throws -> Type1Tag {
        let transport = APDUTransport(channel: channel ?? CutChannel(card: reader, cutAfter: nil), observer: observer)
        let commands = reader.form == .acs ? TagCommandChannel(transport: transport, dialect: .acr122u, readerName: "ACS ACR122U") : nil
        return try Type1Tag.detect(transport, atr: reader.atr, readerName: reader.form.rawValue, tolerant: tolerant, commands: commands)
    }

    /// Whether a pseudo-APDU carries a write to the tag, in any form.
    static func isWrite(_ c: [UInt8]) -> Bool {
        guard c.count > 4, c[0] == 0xFF else { return false }
        if c[1] == 0x00, c.count > 8, c[5] == 0xD4, c[6] == 0x40 { return [0x53, 0x1A, 0x54, 0x1B].contains(c[8]) }
        return [0x56, 0x58, 0x5E, 0x60, 0xD6].contains(c[1])
    }

    /// A memory image from `blocks` (block number → 8 bytes), zeros elsewhere.
    static func image(size: Int, _ blocks: [Int: [UInt8]]) -> [UInt8] {
        var m = [UInt8](repeating: 0, count: size)
        for (b, bytes) in blocks { m.replaceSubrange((b * 8)..<(b * 8 + bytes.count), with: bytes) }
        return m
    }
}

