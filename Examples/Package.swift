// swift-tools-version: 6.0
// Programs that use swift-apdu as a library, the way an app would: by path here, by URL elsewhere.
import PackageDescription

let package = Package(
    name: "swift-apdu-examples",
    dependencies: [.package(name: "swift-apdu", path: "..")],
    targets: [
        .executableTarget(name: "read-tag", dependencies: [
            .product(name: "TagReader", package: "swift-apdu"), .product(name: "NDEF", package: "swift-apdu"),
        ]),
        .executableTarget(name: "kiosk", dependencies: [
            .product(name: "TagReader", package: "swift-apdu"), .product(name: "NDEF", package: "swift-apdu"),
        ]),
        .executableTarget(name: "select-get-data", dependencies: [
            .product(name: "TagReader", package: "swift-apdu"), .product(name: "ISO7816", package: "swift-apdu"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
