import ISO7816
import NFCTags
import Testing
import VirtualCard

/// A native tag model behind a reader of each dialect, as the Type 5 and Type 3 tests drive it.
enum NativePaths {
    enum Path: String, CaseIterable, Sendable { case transparent, acr122u, storage }

    static func channel(_ model: any NativeTagModel, _ path: Path, observer: ((Exchange) -> Void)? = nil) -> (APDUTransport, TagCommandChannel, ContactlessReader) {
        let reader = ContactlessReader(path == .transparent ? .transparent : path == .acr122u ? .acr122u : .storageOnly, tag: model)
        let transport = APDUTransport(channel: EmulatedChannel(card: reader), observer: observer)
        let dialect: ReaderDialect = path == .transparent ? .transparent : path == .acr122u ? .acr122u : .storageOnly
        return (transport, TagCommandChannel(transport: transport, dialect: dialect, readerName: "test reader"), reader)
    }

    static func type5(_ model: ISO15693TagModel, _ path: Path = .transparent, tolerant: Bool = false) throws -> (Type5Tag, TagCommandChannel, ContactlessReader) {
        let (transport, commands, reader) = channel(model, path)
        return (try Type5Tag.detect(transport, atr: model.atr, tolerant: tolerant, commands: commands), commands, reader)
    }

    static func type3(_ model: FeliCaTagModel, _ path: Path = .transparent, tolerant: Bool = false) throws -> (Type3Tag, TagCommandChannel, ContactlessReader) {
        let (transport, commands, reader) = channel(model, path)
        return (try Type3Tag.detect(transport, commands: commands, tolerant: tolerant), commands, reader)
    }
}
