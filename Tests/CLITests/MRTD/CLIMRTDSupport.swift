import Foundation
import MRTD
import Synchronization
import TestSupport
import VirtualCard

/// Specimen documents for the CLI tests, each made once per process.
enum CLIMRTDSpecimens {
    private static let cache = Mutex([String: MRTDSpecimen]())

    static func named(_ name: String, _ configure: (inout MRTDSpecimen.Options) -> Void = { _ in }) -> MRTDSpecimen {
        if let known = cache.withLock({ $0[name] }) { return known }
        var options = MRTDSpecimen.Options()
        options.seed = Array("apdu CLI tests \(name)".utf8)
        configure(&options)
        let specimen = try! MRTDSpecimen.generate(options)
        cache.withLock { $0[name] = specimen }
        return specimen
    }

    /// BAC and PACE (ECDH GM AES-128 brainpoolP256r1), chip authentication, RSA active
    /// authentication, RSA document signer and CSCA: as `apdu emulate --mrtd` serves.
    static var standard: MRTDSpecimen { named("standard") }
}

extension MRTDSpecimen {
    /// The two MRZ lines as printed, separated by a newline.
    var mrzText: String { mrz.joined(separator: "\n") }
    var documentNumber: String { String(Array(mrz[1])[0..<9]).replacingOccurrences(of: "<", with: "") }
    var birth: String { String(Array(mrz[1])[13..<19]) }
    var expiry: String { String(Array(mrz[1])[21..<27]) }
    /// MRZ_information (ICAO 9303 Part 11 §9.7.2): number, birth, expiry, each with its check digit.
    var mrzInformation: String {
        let line = Array(mrz[1])
        return String(line[0..<10]) + String(line[13..<20]) + String(line[21..<28])
    }

    /// A temporary folder holding CSCA.pem, CSCA.der and CSCA.ml for --trust.
    func trustFolder() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mrtd-trust-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data(cscaCertificatePEM.utf8).write(to: URL(fileURLWithPath: dir + "/CSCA.pem"))
        try Data(cscaCertificate).write(to: URL(fileURLWithPath: dir + "/CSCA.der"))
        if let list = document.cscaMasterList { try Data(list).write(to: URL(fileURLWithPath: dir + "/CSCA.ml")) }
        return dir
    }
}

/// A temporary path (not created).
func mrtdTemp(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())").path
}

extension CommandResult {
    var document: [String: Any] { ((try? json()) as? [String: Any]) ?? [:] }
}

extension Dictionary where Key == String, Value == Any {
    func object(_ key: String) -> [String: Any] { self[key] as? [String: Any] ?? [:] }
    func string(_ key: String) -> String? { self[key] as? String }
}
