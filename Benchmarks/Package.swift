// swift-tools-version: 6.2
import PackageDescription

// Micro-benchmarks of playerd's hot paths, in a package of their own so that the main package (and
// CI's test run) never builds the benchmark framework. Run them from this folder:
//     swift package --disable-sandbox benchmark

/// The settings playerd's own targets use: Swift 6 strict concurrency, and warnings fail the build.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "playerd-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "playerd", path: ".."),
        // Only the malloc counters: the default `RuntimeInterposer` trait would pull in
        // swift-runtime-interposer, which the ARC counters need and these benchmarks do not.
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "Audio", package: "playerd"),
                .product(name: "PlayerCore", package: "playerd"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ProtocolBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Audio", package: "playerd"),
                .product(name: "MusicTags", package: "playerd"),
                .product(name: "ControlProtocol", package: "playerd"),
                .product(name: "PlayerCore", package: "playerd"),
                .product(name: "PlayerDaemon", package: "playerd"),
            ],
            path: "Benchmarks/ProtocolBenchmarks",
            swiftSettings: strictSettings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "PlayerCoreBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Audio", package: "playerd"),
                .product(name: "PlayerCore", package: "playerd"),
            ],
            path: "Benchmarks/PlayerCoreBenchmarks",
            swiftSettings: strictSettings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
