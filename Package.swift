// swift-tools-version: 6.2
import PackageDescription

/// Settings every target of ours shares: Swift 6 strict concurrency, and warnings fail the build.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
]

/// Release executables link with lld and pack their relative relocations (DT_RELR, glibc 2.36+):
/// a PIE's table of relocations is then a few kilobytes instead of a megabyte that the dynamic linker
/// reads and applies at every start. With gold, playerd's idle RSS was 13.6 MB; with this, 11.3 MB.
let executableLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(
        ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"],
        .when(platforms: [.linux], configuration: .release))
]

let package = Package(
    name: "playerd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "playerd", targets: ["playerd"]),
        .executable(name: "playerctl", targets: ["playerctl"]),
        .executable(name: "playfile", targets: ["playfile"]),
        .executable(name: "playerd-mpris", targets: ["playerd-mpris"]),
        .library(name: "MusicTags", targets: ["MusicTags"]),
        .library(name: "Audio", targets: ["Audio"]),
        .library(name: "PlayerCore", targets: ["PlayerCore"]),
        .library(name: "StreamInput", targets: ["StreamInput"]),
        .library(name: "ControlProtocol", targets: ["ControlProtocol"]),
        .library(name: "PlayerClient", targets: ["PlayerClient"]),
        .library(name: "Library", targets: ["Library"]),
        .library(name: "PlayerDaemon", targets: ["PlayerDaemon"]),
        .library(name: "MPRIS", targets: ["MPRIS"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
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
        // libsoxr: the FIFO output resamples songs to the fixed rate snapserver reads.
        .systemLibrary(
            name: "CSoxr",
            pkgConfig: "soxr",
            providers: [.apt(["libsoxr-dev"])]
        ),
        // The reference decoder of each format beside MP3: libFLAC, libvorbisfile (libogg under it),
        // libopusfile (libopus and libogg under it).
        .systemLibrary(
            name: "CFLAC",
            pkgConfig: "flac",
            providers: [.apt(["libflac-dev"])]
        ),
        .systemLibrary(
            name: "CVorbisFile",
            pkgConfig: "vorbisfile",
            providers: [.apt(["libvorbis-dev"])]
        ),
        .systemLibrary(
            name: "COpusFile",
            pkgConfig: "opusfile",
            providers: [.apt(["libopusfile-dev"])]
        ),
        // libchromaprint's header (libchromaprint-dev): `getfingerprint`'s audio fingerprints, as MPD
        // computes them. Not linked: the library is loaded on first use (see shim.h).
        .systemLibrary(name: "CChromaprint"),
        // The tag vocabulary (MPD's names) and a song's tags: plain values shared by Audio, which reads
        // them, ControlProtocol, whose filters name them, and the library, which stores them.
        .target(
            name: "MusicTags",
            swiftSettings: strictSettings
        ),
        .target(
            name: "Audio",
            dependencies: ["CMPG123", "CFLAC", "CVorbisFile", "COpusFile", "CALSA", "CSoxr", "MusicTags"],
            swiftSettings: strictSettings
        ),
        // Internet radio: HTTP(S) streams read into a bounded buffer on one shared event loop (NIO, with
        // NIOSSL and the system's trust roots for https), ICY metadata taken out, reconnection with
        // backoff; station lists (m3u, pls) and their fetching. The decoders read it as a StreamByteSource.
        .target(
            name: "StreamInput",
            dependencies: [
                "Audio",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // statfs(2) for the directory walk; part of glibc, so no package or pkg-config.
        .systemLibrary(name: "CStatFS"),
        .target(
            name: "PlayerCore",
            dependencies: ["Audio", "CStatFS", "StreamInput"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ControlProtocol",
            dependencies: ["MusicTags"],
            swiftSettings: strictSettings
        ),
        // The music library: the scanner, the SQLite store (GRDB), queries from parsed filters, stored
        // playlists, cover art. GRDB links the system SQLite (libsqlite3-dev).
        .target(
            name: "Library",
            dependencies: [
                "Audio", "MusicTags", "PlayerCore", "ControlProtocol", "CStatFS",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C interface, for the scan's inserts (the same system library GRDB links).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings,
            // MPD's collation (`Collation`): the ICU that Foundation carries, whose C functions
            // Foundation's own libraries do not export to its users.
            linkerSettings: [.linkedLibrary("_FoundationICU")]
        ),
        .target(
            name: "PlayerClient",
            dependencies: ["ControlProtocol"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "PlayerDaemon",
            dependencies: [
                "PlayerCore",
                "ControlProtocol",
                "MusicTags",
                "Library",
                "StreamInput",
                "CChromaprint",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Release builds leave out the dynamic exclusivity checks (the static ones stay, and debug
            // builds, which the tests run, keep both): the session's state is class properties, and a
            // check at each access cost about a thousand instructions of a `status` round trip, a tenth.
            swiftSettings: strictSettings + [
                .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))
            ]
        ),
        // sd-bus (libsystemd, apt libsystemd-dev): the MPRIS vtables and the variadic calls Swift cannot
        // import, as plain C functions.
        .target(
            name: "CSdBus",
            cSettings: [.unsafeFlags(["-Wall", "-Wextra", "-Werror"])],
            linkerSettings: [.linkedLibrary("systemd")]
        ),
        // MPRIS on the session bus for an MPD-protocol server: a client of the protocol, so it needs
        // nothing of the daemon (playerd runs it in-process over a socketpair; playerd-mpris over a socket).
        .target(
            name: "MPRIS",
            dependencies: ["CSdBus", "PlayerClient", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        // The web remote (`--http`): a page and a JSON API over HTTP, and change events over a WebSocket,
        // served by Hummingbird. Like MPRIS it is a client of the protocol: each browser's session is a
        // network client of the daemon (the same permissions, passwords and limits as TCP), reached over
        // a socketpair that playerd hands it. The page's files are embedded in the binary.
        .target(
            name: "WebRemote",
            dependencies: [
                "PlayerClient",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [
                .embedInCode("Assets/index.html"),
                .embedInCode("Assets/app.css"),
                .embedInCode("Assets/app.js"),
                .embedInCode("Assets/icon.svg"),
                .embedInCode("Assets/openapi.yaml"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "playerd",
            dependencies: [
                "PlayerDaemon", "MPRIS", "WebRemote", "PlayerClient", "Audio", "StreamInput",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings,
            linkerSettings: executableLinkerSettings
        ),
        .executableTarget(
            name: "playerctl",
            dependencies: [
                "PlayerClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings,
            linkerSettings: executableLinkerSettings
        ),
        .executableTarget(
            name: "playerd-mpris",
            dependencies: [
                "MPRIS", "PlayerClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings,
            linkerSettings: executableLinkerSettings
        ),
        .executableTarget(
            name: "playfile",
            dependencies: [
                "Audio",
                "MusicTags",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings,
            linkerSettings: executableLinkerSettings
        ),
        .executableTarget(
            name: "daemon-bench",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "engine-bench",
            dependencies: ["PlayerCore"],
            swiftSettings: strictSettings
        ),
        // A private pulseaudio for the hardware mixer's tests (the ALSA `pulse` control needs no card).
        .target(
            name: "PulseTestSupport",
            path: "Tests/PulseTestSupport",
            swiftSettings: strictSettings
        ),
        // Songs of every format made at test time, with their reference decoders' PCM.
        .target(
            name: "FormatTestSupport",
            path: "Tests/FormatTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "AudioTests",
            dependencies: ["Audio", "MusicTags", "PulseTestSupport", "FormatTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "PlayerCoreTests",
            dependencies: ["PlayerCore", "FormatTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StreamInputTests",
            dependencies: [
                "StreamInput", "Audio",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            // The loopback server the tests run, read by path.
            exclude: ["stream_server.py"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ControlProtocolTests",
            dependencies: ["ControlProtocol"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LibraryTests",
            dependencies: [
                "Library", "Audio", "MusicTags", "ControlProtocol", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "PlayerClientTests",
            dependencies: ["PlayerClient"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MPRISTests",
            dependencies: ["MPRIS", "PlayerClient"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "WebRemoteTests",
            dependencies: ["WebRemote"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "PlayerDaemonTests",
            dependencies: [
                "PlayerDaemon", "PlayerClient", "ControlProtocol", "PulseTestSupport", "FormatTestSupport",
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // Read at run time from the source tree, by path.
            exclude: ["Transcripts", "python", "Differential"],
            swiftSettings: strictSettings
        ),
    ]
)
