// libFuzzer target: the ISO 7816 parsers that take outside input — APDU hex and bytes, ATRs,
// BER-TLV, status words, scriptor scripts, SELECT allowlists. The first byte picks the parser.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let selector = data[0]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let text = String(decoding: bytes, as: UTF8.self)
    switch selector % 6 {
    case 0:
        if let apdu = try? CommandAPDU(bytes: bytes), (try? CommandAPDU(bytes: apdu.bytes)) != apdu {
            fatalError("APDU round trip changed it")
        }
    case 1: _ = try? CommandAPDU(hex: text)
    case 2:
        if let atr = try? ATR(bytes: bytes) { _ = atr.storageCard; _ = atr.tckValid }
    case 3:
        if let tlv = try? BERTLV.decode(bytes) { _ = BERTLV.tree(tlv) }
    case 4: _ = try? APDUScript(parsing: text)
    default: _ = try? SelectPolicy(list: text)
    }
    return 0
}
