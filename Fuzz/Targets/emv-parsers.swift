// libFuzzer target: the EMV parsers that take a card's or a file's bytes — DOLs, the AFL, CA key
// files, certificate recovery, and a whole read against a card whose answers are the input.
// The first byte picks the parser.

/// A card that answers each command with the next length-prefixed piece of the input, and 90 00.
final class FuzzChannel: CardChannel {
    var rest: ArraySlice<UInt8>
    init(_ bytes: [UInt8]) { rest = bytes[...] }
    var supportsExtendedLength: Bool { false }
    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        guard let n = rest.first else { return [0x6A, 0x82] }
        rest = rest.dropFirst()
        let piece = Array(rest.prefix(Int(n)))
        rest = rest.dropFirst(Int(n))
        return piece.count >= 2 && n & 1 == 1 ? piece : piece + [0x90, 0x00]
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let selector = data[0]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch selector % 5 {
    case 0:
        if let dol = try? DataObjectList(parsing: bytes) {
            let built = dol.build([[0x9F, 0x37]: [1, 2, 3, 4], [0x9F, 0x02]: [0, 1]])
            if built.count != dol.dataLength { fatalError("a DOL built to another length") }
            _ = try? dol.split(built)
        }
    case 1:
        if let afl = try? ApplicationFileLocator(parsing: bytes) { _ = afl.records }
        if let objects = try? EMVTLV.objects(in: bytes) {
            for o in objects where o.value.upperBound > bytes.count { fatalError("a value past the input") }
        }
    case 2: _ = try? CAPublicKeys.parse(capkFile: String(decoding: bytes, as: UTF8.self))
    case 3:
        let n = bytes.count / 2
        let key = EMVPublicKey(modulus: [0xC0] + Array(bytes.prefix(n)), exponent: [0x03])
        let sig = Array(bytes.dropFirst(n)) + [UInt8](repeating: 0, count: max(0, n + 1 - (bytes.count - n)))
        _ = try? EMVCertificates.issuerKey(certificate: Array(sig.prefix(n + 1)), remainder: [], exponent: [0x03], ca: key)
        _ = try? EMVCertificates.dynamicData(sdad: Array(sig.prefix(n + 1)), icc: key, terminalData: [])
    default:
        let reader = PaymentCardReader(transport: APDUTransport(channel: FuzzChannel(bytes)), caKeys: .builtIn,
                                       terminal: TerminalData(date: [0x26, 0x11, 0x27], unpredictableNumber: [1, 2, 3, 4]))
        _ = try? reader.read()
    }
    return 0
}
