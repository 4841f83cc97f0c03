// swift-tools-version: 6.0
import PackageDescription

// libcrypto and libsqlite3 linked from their archives (libssl-dev, libsqlite3-dev ship them): as
// shared libraries they cost every start of the tool ~4,900 symbol lookups for their own tables,
// whatever the command (`apdu sw` uses neither); static, those references are resolved at link
// time. Scripts/bench startup measures it.
let staticCrypto: [LinkerSetting] = [.linkedLibrary(":libcrypto.a"), .linkedLibrary("pthread"), .linkedLibrary("dl")]

let package = Package(
    name: "swift-apdu",
    products: [
        .executable(name: "apdu", targets: ["apdu"]),
        // The commands that need a tag family; `apdu` runs it for them (see docs/architecture.md).
        .executable(name: "apdu-tags", targets: ["apdu-tags"]),
        .library(name: "PCSC", targets: ["PCSC"]),
        .library(name: "ISO7816", targets: ["ISO7816"]),
        .library(name: "NDEF", targets: ["NDEF"]),
        .library(name: "NFCTags", targets: ["NFCTags"]),
        .library(name: "VirtualCard", targets: ["VirtualCard"]),
        .library(name: "CardReaders", targets: ["CardReaders"]),
        .library(name: "TagReader", targets: ["TagReader"]),
        // The SUN (Secure Dynamic Messaging) verifier alone: no pcsclite, for web backends.
        .library(name: "SUN", targets: ["SUN"]),
        // Passports and ID cards over any APDU channel, without the reader stack.
        .library(name: "MRTD", targets: ["MRTD"]),
        .library(name: "EMV", targets: ["EMV"]),
        // GlobalPlatform card management (SCP02, SCP03, the registry, CAP files) over any channel.
        .library(name: "GlobalPlatform", targets: ["GlobalPlatform"]),
        .library(name: "SUNStore", targets: ["SUNStore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // BER/DER for the ASN.1 of passports (SecurityInfos, EF.SOD, DG14, DG15), which may use
        // BER's indefinite lengths; FoundationEssentials only.
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        // `swift package generate-documentation`: the DocC catalogs, built in CI (Scripts/docs).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CPCSCLite",
            pkgConfig: "libpcsclite",
            providers: [.apt(["libpcsclite-dev"])]
        ),
        // ECDSA on secp128r1 (NXP originality signatures), which swift-crypto lacks.
        .systemLibrary(
            name: "COpenSSL",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(name: "PCSC", dependencies: ["CPCSCLite"]),
        // `apdu doctor`: why a reader does not show up, read from pcscd, /proc and /sys.
        .target(name: "Diagnostics", dependencies: ["PCSC"]),
        // Threads for blocking work without Foundation's Thread (kept out of the CLI's start path).
        .target(name: "Threading"),
        .target(name: "ISO7816"),
        // The ciphers, MACs, hashes and CRCs of card protocols (DES, 3DES, AES, CMAC, retail MAC):
        // libcrypto, shared by secure messaging (NTAG 424, DESFire, passports) and the emulators.
        .target(name: "CardCrypto", dependencies: ["COpenSSL"], linkerSettings: staticCrypto),
        .target(name: "NDEF"),
        .target(name: "NFCTags", dependencies: ["ISO7816", "NDEF", "CardCrypto", "COpenSSL", "SUN"]),
        // Passports and ID cards (ICAO 9303): MRZ, LDS, BAC, PACE, secure messaging, passive, active
        // and chip authentication over any APDU channel; libcrypto, no reader stack.
        .target(name: "MRTD", dependencies: ["ISO7816", "CardCrypto", "COpenSSL", .product(name: "SwiftASN1", package: "swift-asn1")]),
        // Payment cards (EMV), read-only: the data dictionary, DOLs, the AFL, offline data
        // authentication and the CA keys; pure, over any CardChannel.
        .target(name: "EMV", dependencies: ["ISO7816", "CardCrypto", "COpenSSL"]),
        // GlobalPlatform card management: SCP02 and SCP03 secure channels (the card's cryptogram
        // checked before anything counted), the registry, CAP files; pure, over any CardChannel.
        .target(name: "GlobalPlatform", dependencies: ["ISO7816", "CardCrypto", "COpenSSL"]),
        // NTAG 424 DNA SUN verification (AES and LRP): libcrypto only, no reader stack.
        .target(name: "SUN", dependencies: ["COpenSSL", "CardCrypto"], linkerSettings: staticCrypto),
        // SQLite (libsqlite3) for the SUN replay counters.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // The embedded SUN counter store: one SQLite file, for one verifier machine.
        .target(name: "SUNStore", dependencies: ["SUN", "CSQLite"], linkerSettings: [.linkedLibrary(":libsqlite3.a"), .linkedLibrary("m")]),
        // The emulated cards; the eMRTD chip's PACE, chip/active authentication and specimen (X.509, CMS)
        // take their EC, DH and RSA arithmetic from libcrypto.
        .target(name: "VirtualCard", dependencies: ["ISO7816", "NDEF", "Threading", "SUN", "CardCrypto", "COpenSSL"]),
        // A reader and its card over PC/SC, one level up from pcsclite: choosing a reader, waiting for
        // a card, connecting, reader events, the ISO 7816 channel over a card, reader escapes, the
        // SELECT allowlist file. No tag family: what `apdu send` and the other APDU commands stand on.
        .target(name: "CardReaders", dependencies: ["PCSC", "ISO7816", "Threading"]),
        // Readers, sessions and tags for Swift programs: the engine under the apdu commands.
        .target(name: "TagReader", dependencies: ["CardReaders", "PCSC", "ISO7816", "NDEF", "NFCTags", "Threading", "MRTD", "EMV", "GlobalPlatform"]),
        // The CLI's shared parts (output, options, exit codes) and the commands that need no tag
        // family: status words, APDUs, readers, NDEF offline.
        .target(
            name: "APDUCommandLine",
            dependencies: ["PCSC", "ISO7816", "NDEF", "CardReaders", "Diagnostics", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // `apdu`: the core commands, and the door to apdu-tags for the rest. It links no tag
        // family, so the Swift runtime's conformance scans at its start cover only what it runs.
        .executableTarget(
            name: "apdu",
            dependencies: ["APDUCommandLine", "Diagnostics", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // Every command: the families' groups, the NDEF commands they serve, the emulator, SUN.
        .executableTarget(
            name: "apdu-tags",
            dependencies: [
                "APDUCommandLine", "PCSC", "ISO7816", "NDEF", "NFCTags", "VirtualCard", "CardReaders", "TagReader", "Diagnostics", "SUN", "SUNStore",
                "MRTD", "EMV", "GlobalPlatform", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Benchmark driver for Scripts/bench; not a product.
        .executableTarget(name: "apdu-bench", dependencies: ["PCSC", "ISO7816", "NDEF", "NFCTags", "TagReader", "SUN", "VirtualCard", "MRTD", "EMV"]),
        // The start-up floor of an ArgumentParser tool, for Scripts/bench startup; not a product.
        .executableTarget(name: "startup-floor", dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // Virtual-reader helpers shared by the integration and CLI tests; not a product.
        .target(name: "TestSupport", dependencies: ["PCSC", "VirtualCard", "ISO7816"]),
        .testTarget(name: "PCSCTests", dependencies: ["PCSC"]),
        .testTarget(name: "ISO7816Tests", dependencies: ["ISO7816"]),
        .testTarget(name: "CardCryptoTests", dependencies: ["CardCrypto"]),
        .testTarget(name: "GlobalPlatformTests", dependencies: ["GlobalPlatform", "ISO7816", "CardCrypto", "VirtualCard"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "EMVTests", dependencies: ["EMV", "ISO7816", "CardCrypto", "COpenSSL", "VirtualCard"]),
        .testTarget(name: "MRTDTests", dependencies: ["MRTD", "ISO7816", "CardCrypto", "COpenSSL", .product(name: "SwiftASN1", package: "swift-asn1")]),
        // The library's reader against the emulated chip, written apart from each other.
        .testTarget(name: "MRTDInteropTests", dependencies: ["MRTD", "VirtualCard", "ISO7816", "CardCrypto"]),
        .testTarget(name: "SUNTests", dependencies: ["SUN", "SUNStore", "CardCrypto"]),
        .testTarget(name: "NDEFTests", dependencies: ["NDEF", "TestSupport"]),
        .testTarget(name: "NFCTagsTests", dependencies: ["NFCTags", "NDEF", "ISO7816", "CardCrypto", "VirtualCard", "TestSupport", "SUN"]),
        .testTarget(name: "VirtualCardTests", dependencies: ["VirtualCard", "ISO7816", "CardCrypto", "COpenSSL"]),
        .testTarget(name: "IntegrationTests", dependencies: ["PCSC", "ISO7816", "VirtualCard", "TestSupport"]),
        .testTarget(name: "TagReaderTests", dependencies: ["TagReader", "PCSC", "NFCTags", "NDEF", "ISO7816", "VirtualCard", "TestSupport", "MRTD"]),
        // Only public API, as a program that adds the package sees it: no @testable import.
        .testTarget(name: "PublicAPITests", dependencies: ["TagReader", "NFCTags", "NDEF", "ISO7816", "VirtualCard", "TestSupport", "SUN", "MRTD"]),
        // The hostile matrix (issue 49): every family's reader under a man in the middle, in-process.
        .testTarget(name: "HostileMatrixTests", dependencies: ["TestSupport", "VirtualCard", "ISO7816", "EMV", "MRTD", "GlobalPlatform", "SUN", "NFCTags", "NDEF", "CardCrypto"]),
        .testTarget(name: "CLITests", dependencies: ["VirtualCard", "ISO7816", "PCSC", "NFCTags", "NDEF", "TestSupport", "Diagnostics", "SUN", "MRTD", "CardCrypto"]),
    ],
    swiftLanguageModes: [.v6]
)
