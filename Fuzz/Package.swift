// swift-tools-version: 6.2
import PackageDescription

// libFuzzer targets for playerd's parsers and decoder, in a package of their own so that the main
// package's build never sees sanitizer flags. Each target defines `LLVMFuzzerTestOneInput` and no
// main (libFuzzer brings one). scripts/fuzz.sh builds them with
//     swift build --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
// and runs them on the seed corpus in Corpus/.

/// The settings playerd's own targets use: Swift 6 strict concurrency, and warnings fail the build.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "playerd-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "playerd", path: ".."),
        // The session target's quiet logger; the version playerd itself uses.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "FuzzSupport",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "FuzzRequest",
            dependencies: ["FuzzSupport", .product(name: "ControlProtocol", package: "playerd")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "FuzzArguments",
            dependencies: ["FuzzSupport", .product(name: "ControlProtocol", package: "playerd")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "FuzzFilter",
            dependencies: [
                "FuzzSupport", .product(name: "ControlProtocol", package: "playerd"),
                .product(name: "MusicTags", package: "playerd"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "FuzzStateFile",
            dependencies: ["FuzzSupport", .product(name: "PlayerDaemon", package: "playerd")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "FuzzMP3",
            dependencies: ["FuzzSupport", .product(name: "Audio", package: "playerd")],
            swiftSettings: strictSettings
        ),
        // What every decoder's target checks (FLAC, Vorbis, Opus).
        .target(
            name: "FuzzDecoderSupport",
            dependencies: ["FuzzSupport", .product(name: "Audio", package: "playerd")],
            swiftSettings: strictSettings
        ),
        // The FLAC decoder (FLACDecoder, libFLAC; native and Ogg FLAC).
        .executableTarget(
            name: "FuzzFLAC",
            dependencies: ["FuzzDecoderSupport", .product(name: "Audio", package: "playerd")],
            swiftSettings: strictSettings
        ),
        // The Opus decoder (OpusDecoder, libopusfile).
        .executableTarget(
            name: "FuzzOpus",
            dependencies: ["FuzzDecoderSupport", .product(name: "Audio", package: "playerd")],
            swiftSettings: strictSettings
        ),
        // The Ogg Vorbis decoder (libvorbisfile).
        .executableTarget(
            name: "FuzzVorbis",
            dependencies: ["FuzzDecoderSupport", .product(name: "Audio", package: "playerd")],
            swiftSettings: strictSettings
        ),
        // A radio station's bytes through the stream decoders (StreamDecoders: MP3 feed, FLAC, Ogg),
        // arriving in pieces with reconnections between them.
        .executableTarget(
            name: "FuzzStream",
            dependencies: ["FuzzSupport", .product(name: "Audio", package: "playerd")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "FuzzSession",
            dependencies: [
                "FuzzSupport", .product(name: "PlayerDaemon", package: "playerd"),
                .product(name: "PlayerCore", package: "playerd"), .product(name: "Audio", package: "playerd"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
