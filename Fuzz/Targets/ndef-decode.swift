// libFuzzer target: the NDEF decoder, strict and relaxed, and every typed interpretation.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let message = try? NDEFMessage(decoding: bytes) {
        for record in message.records { _ = try? record.content() }
        _ = BackgroundReadingVerdict(message: message)
        // Whatever decodes strictly must encode and decode back to itself.
        if let again = try? message.encoded(), (try? NDEFMessage(decoding: again)) != message {
            fatalError("round trip changed the message")
        }
    }
    let relaxed = NDEFMessage.decodeRelaxed(bytes)
    for record in relaxed.message.records { _ = try? record.content(strict: false) }
    return 0
}
