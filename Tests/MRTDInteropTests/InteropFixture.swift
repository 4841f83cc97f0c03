import CardCrypto
import ISO7816
import MRTD
import Synchronization
import VirtualCard

// The library's reader (MRTD) against the emulated chip (VirtualCard/MRTD): two sides written
// apart from each other from ICAO 9303 Parts 10 and 11, so where they disagree one of them is
// wrong, and a test says which.

/// Specimens made once per process (RSA key generation is slow), keyed by a name.
enum Specimens {
    static let seed = Array("swift-apdu interop".utf8)
    private static let cache = Mutex([String: MRTDSpecimen]())

    static func named(_ name: String, _ configure: (inout MRTDSpecimen.Options) -> Void = { _ in }) -> MRTDSpecimen {
        if let known = cache.withLock({ $0[name] }) { return known }
        var options = MRTDSpecimen.Options()
        options.seed = seed + Array(name.utf8)
        // ECDSA keys are quick to make; RSA has its own cases.
        options.csca = .ecdsa(parameterID: 12)
        options.documentSigner = .ecdsa(parameterID: 12)
        configure(&options)
        let specimen = try! MRTDSpecimen.generate(options)
        cache.withLock { $0[name] = specimen }
        return specimen
    }

    static var standard: MRTDSpecimen { named("standard") }
}

extension MRTDSpecimen {
    /// The access key the MRZ spells, for the library.
    var mrzKey: MRTDAccessKey {
        let line = Array(mrz[1])
        return try! MRTDAccessKey.mrz(documentNumber: String(line[0..<9]), dateOfBirth: String(line[13..<19]), dateOfExpiry: String(line[21..<27]))
    }

    var canKey: MRTDAccessKey { try! MRTDAccessKey.can(document.can ?? "") }

    /// A trust store holding this specimen's CSCA.
    var trust: TrustStore { TrustStore(certificates: [try! Certificate(der: cscaCertificate)]) }

    /// The document's bytes of an EF, by the library's file name.
    func bytes(_ name: String) -> [UInt8]? {
        VirtualCard.MRTDFile.all.first { $0.fileName == name + ".bin" }.flatMap { document.files[$0] }
    }
}

/// A chip, a channel into it and the library's reader on top.
struct Rig {
    let chip: MRTDChip
    let channel: EmulatedChannel
    let transport: APDUTransport
    let reader: MRTDReader
    /// Every exchange, raw.
    let log = ExchangeLog()

    init(_ specimen: MRTDSpecimen, _ configure: (inout MRTDChip.Configuration) -> Void = { _ in },
         readerExtendedLength: Bool = true, options: (inout MRTDReader.Options) -> Void = { _ in }) {
        self.init(document: specimen.document, configure, readerExtendedLength: readerExtendedLength, options: options)
    }

    init(document: MRTDDocument, _ configure: (inout MRTDChip.Configuration) -> Void = { _ in },
         readerExtendedLength: Bool = true, options: (inout MRTDReader.Options) -> Void = { _ in }) {
        var configuration = MRTDChip.Configuration()
        configure(&configuration)
        chip = MRTDChip(document: document, configuration: configuration)
        channel = EmulatedChannel(card: chip, supportsExtendedLength: readerExtendedLength)
        let log = self.log
        transport = APDUTransport(channel: channel, observer: { log.append($0) })
        var readerOptions = MRTDReader.Options()
        options(&readerOptions)
        reader = MRTDReader(transport: transport, options: readerOptions)
    }
}

final class ExchangeLog: @unchecked Sendable {
    private(set) var exchanges: [Exchange] = []
    func append(_ e: Exchange) { exchanges.append(e) }
    /// The INS bytes of the commands, in order.
    var instructions: [UInt8] { exchanges.compactMap { $0.command.count > 1 ? $0.command[1] : nil } }
}
