// swift-tools-version: 6.2
import PackageDescription

// apdu-sun-server: the SUN verification service, a product of its own so that the `apdu` tool
// (the package one folder up) keeps its lean build and start-up. It takes the SUN verifier, the
// embedded counter store and ISO7816's hex encoding from there, and adds the server stack:
// Hummingbird (HTTP), postgres-nio (counters shared by many instances), swift-service-lifecycle
// (signals, graceful shutdown), swift-log and swift-prometheus (logs and metrics).
let package = Package(
    name: "apdu-sun-server",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "apdu-sun-server", targets: ["apdu-sun-server"]),
        .library(name: "SUNService", targets: ["SUNService"]),
    ],
    dependencies: [
        .package(name: "swift-apdu", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // Keys, counter stores, the HTTP application: everything but the command line.
        .target(
            name: "SUNService",
            dependencies: [
                .product(name: "SUN", package: "swift-apdu"),
                .product(name: "SUNStore", package: "swift-apdu"),
                .product(name: "ISO7816", package: "swift-apdu"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .executableTarget(
            name: "apdu-sun-server",
            dependencies: ["SUNService", .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "NIOCore", package: "swift-nio"), .product(name: "Logging", package: "swift-log"), .product(name: "SUNStore", package: "swift-apdu"), .product(name: "SUN", package: "swift-apdu")]
        ),
        // Fresh, valid tap URLs for Scripts/bench sun-serve and the tests; not shipped.
        .executableTarget(name: "sun-taps", dependencies: [.product(name: "SUN", package: "swift-apdu")]),
        // The tests provision emulated NTAG 424 DNA tags (NFCTags, VirtualCard) and send what they serve.
        .testTarget(name: "SUNServiceTests", dependencies: [
            "SUNService", .product(name: "SUN", package: "swift-apdu"), .product(name: "NFCTags", package: "swift-apdu"),
            .product(name: "VirtualCard", package: "swift-apdu"), .product(name: "ISO7816", package: "swift-apdu"), .product(name: "NDEF", package: "swift-apdu"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
