// swift-tools-version: 6.2
import PackageDescription

/// Settings every target of ours shares: Swift 6 strict concurrency, and warnings fail the build.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "playerd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "playfile", targets: ["playfile"]),
        .library(name: "Audio", targets: ["Audio"]),
        .library(name: "PlayerCore", targets: ["PlayerCore"]),
        .library(name: "ControlProtocol", targets: ["ControlProtocol"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
    ],
    targets: [
        .systemLibrary(
            name: "CMPG123",
            pkgConfig: "libmpg123",
            providers: [.apt(["libmpg123-dev"])]
        ),
        .systemLibrary(
            name: "CALSA",
            pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]
        ),
        .target(
            name: "Audio",
            dependencies: ["CMPG123", "CALSA"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "PlayerCore",
            dependencies: ["Audio"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ControlProtocol",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "playfile",
            dependencies: [
                "Audio",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "AudioTests",
            dependencies: ["Audio"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "PlayerCoreTests",
            dependencies: ["PlayerCore"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ControlProtocolTests",
            dependencies: ["ControlProtocol"],
            swiftSettings: strictSettings
        ),
    ]
)
