// swift-tools-version: 6.1
import Foundation
import PackageDescription

// Release builds skip dynamic exclusivity checks in the engine: the packet path touches class state
// for every segment, and the checks cost about a tenth of the run (measured with perf). Debug builds,
// which run the tests, keep them.
//
// Full cross-module optimization: the engine is split into targets by stage (sessions, spool, aggregation,
// concurrency), and without it small hot functions such as the spool reader's varint decoding stop being
// inlined across the split (measured: +19 % instructions on the 100 MiB bench until this flag).
//
// Profile-guided optimization: release builds use the execution profile in Benchmarks/pgo/traffic.profdata (LLVM
// IR-level PGO: hot paths laid out straight, inlining and register allocation by measured counts; measured −6 %
// instructions and −5 to −9 % wall time on the API-dense benchmark). `make pgo-profile` (scripts/pgo-profile.sh)
// remakes it from captures of the benchmark generator with another seed than the benchmarks'. A function changed
// since is compiled as without a profile. SwiftPM does not see the profile as an input, nor these flags as a reason
// to compile again: the script empties the release build folder. TRAFFIC_PGO=0 builds without the profile (the
// instrumented build that makes it does; in a build folder of its own).
// The profile's format is the one of the LLVM in Swift 6.3: older compilers cannot read it, so they build without.
let profile = Context.packageDirectory + "/Benchmarks/pgo/traffic.profdata"
#if compiler(>=6.3)
let profileFlags = Context.environment["TRAFFIC_PGO"] != "0" && FileManager.default.fileExists(atPath: profile)
    ? ["-Xfrontend", "-ir-profile-use=" + profile] : []
#else
let profileFlags: [String] = []
#endif
let engineSettings: [SwiftSetting] = [
    .unsafeFlags(
        ["-enforce-exclusivity=unchecked", "-cross-module-optimization"]
            + profileFlags,
        .when(configuration: .release)),
]
/// With the profile, LTO's code generation in lld splits each function's cold blocks out into `.text.split` (machine
/// function splitting) and keeps the `.text.hot` and `.text.unlikely` sections apart: the hot path of the HTTP/1
/// parser alone, with all it inlines, was larger than the 32 KiB instruction cache. Cachegrind on the 1 GiB API
/// bench (`--jobs 1`): I1 misses −2 %; wall time −0 to −4 % (noise of the VM).
let profileLinkerSettings: [LinkerSetting] = profileFlags.isEmpty ? [] : [
    .unsafeFlags(
        ["-Xlinker", "-mllvm=-enable-split-machine-functions", "-Xlinker", "-z", "-Xlinker", "keep-text-section-prefix"],
        .when(configuration: .release))
]
/// The other targets of the `traffic` binary (output, checks, the command line): the profile only.
let profileSettings: [SwiftSetting] = profileFlags.isEmpty ? [] : [.unsafeFlags(profileFlags, .when(configuration: .release))]

// The targets are the pipeline: capture → wire → reassembly → sessions → HTTP/TLS → analysis → output.
// A target imports only targets below it. Each C library is imported by exactly one Swift target
// (CPcap by TrafficCapture; CZlib, CBrotli and CZstd by TrafficCodecs).
let package = Package(
    name: "traffic",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "traffic", targets: ["traffic"]),
        // The engine as a library, for the benchmarks package in Benchmarks/.
        .library(
            name: "TrafficEngine",
            targets: ["TrafficCapture", "TrafficWire", "TrafficReassembly", "TrafficSessions", "TrafficHTTP", "TrafficHTTP2", "TrafficHTTP3",
                      "TrafficTLS", "TrafficQUIC", "TrafficHTTP3", "TrafficConcurrency", "TrafficAggregation", "TrafficAnalysis",
                      "TrafficOutput", "TrafficCodecs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // AES-GCM, ChaChaPoly, HMAC and HKDF (Crypto) and AES-CBC (_CryptoExtras) for TLS record protection:
        // no cipher or hash in this package is hand-written.
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // Tests only: NIOHPACK's encoder is the independent oracle for our HPACK decoder (which counts
        // representation bytes and decodes without allocating; see Sources/TrafficHTTP2/HPACK).
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CPcap", pkgConfig: "libpcap",
            providers: [.apt(["libpcap-dev"]), .brew(["libpcap"])]),
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        .systemLibrary(
            name: "CBrotli", pkgConfig: "libbrotlidec",
            providers: [.apt(["libbrotli-dev"]), .brew(["brotli"])]),
        .systemLibrary(
            name: "CZstd", pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]),

        // Threads, conditions and queues: a leaf the engine and the table renderer share.
        .target(name: "TrafficConcurrency", swiftSettings: engineSettings),
        .target(name: "TrafficCodecs", dependencies: ["CZlib", "CBrotli", "CZstd"], swiftSettings: engineSettings),
        .target(name: "TrafficCapture", dependencies: ["CPcap", "TrafficCodecs"], swiftSettings: engineSettings),
        .target(name: "TrafficWire", dependencies: ["TrafficCapture"], swiftSettings: engineSettings),
        .target(name: "TrafficReassembly", dependencies: ["TrafficWire"], swiftSettings: engineSettings),
        // The session layer: protocol detection and the stream-analyzer seam that every protocol stage sits behind.
        .target(name: "TrafficSessions", dependencies: ["TrafficReassembly"], swiftSettings: engineSettings),
        .target(name: "TrafficHTTP", dependencies: ["TrafficSessions", "TrafficCodecs"], swiftSettings: engineSettings),
        // HTTP/2 (RFC 9113) and HPACK (RFC 7541): frames to request and response records, gRPC message sizes.
        .target(name: "TrafficHTTP2", dependencies: ["TrafficSessions", "TrafficHTTP", "TrafficCodecs"], swiftSettings: engineSettings),
        // HTTP/3 (RFC 9114) and QPACK (RFC 9204): the decrypted, ordered stream bytes the QUIC transport hands over,
        // to request and response records.
        .target(
            name: "TrafficHTTP3", dependencies: ["TrafficSessions", "TrafficHTTP", "TrafficHTTP2", "TrafficCodecs"],
            swiftSettings: engineSettings),
        .target(
            name: "TrafficTLS",
            dependencies: [
                "TrafficSessions", "TrafficConcurrency",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: engineSettings),
        // QUIC (RFC 9000, 9001, 9369): connections found by content and connection IDs, named from the Initials
        // without keys, decrypted with a key log into ordered stream bytes for HTTP/3.
        .target(
            name: "TrafficQUIC",
            dependencies: [
                "TrafficWire", "TrafficReassembly", "TrafficTLS",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: engineSettings),
        // Aggregation: records into groups, path normalisation, the report and its summary, and the temporary
        // files of sorted runs (groups and records) it spills to. The spool format was a target of its own for a
        // while: its varint reader then stopped being inlined into group parsing (+3 % instructions), so it
        // lives here, where its only users are.
        .target(
            name: "TrafficAggregation",
            dependencies: ["TrafficCapture", "TrafficWire", "TrafficReassembly", "TrafficSessions", "TrafficConcurrency"],
            swiftSettings: engineSettings),
        // The engine: reads captures through the stages on worker threads into the aggregation.
        .target(
            name: "TrafficAnalysis",
            dependencies: [
                "TrafficAggregation",
                "TrafficCapture", "TrafficWire", "TrafficReassembly", "TrafficSessions", "TrafficHTTP", "TrafficHTTP2",
                "TrafficTLS", "TrafficQUIC", "TrafficHTTP3", "TrafficConcurrency",
            ],
            swiftSettings: engineSettings),
        .target(
            name: "TrafficOutput",
            dependencies: ["TrafficAggregation", "TrafficAnalysis", "TrafficTLS", "TrafficQUIC", "TrafficConcurrency"],
            swiftSettings: profileSettings),
        // Baselines, budgets and regression checks for CI (`traffic baseline|check|diff`).
        .target(
            name: "TrafficMerge",
            dependencies: ["TrafficAggregation", "TrafficCapture", "TrafficOutput"],
            swiftSettings: profileSettings),
        .target(
            name: "TrafficCheck",
            dependencies: ["TrafficAggregation", "TrafficAnalysis", "TrafficOutput", "TrafficMerge", .product(name: "Yams", package: "Yams")],
            swiftSettings: profileSettings),
        .executableTarget(
            name: "traffic",
            dependencies: [
                "TrafficSessions", "TrafficAggregation", "TrafficAnalysis", "TrafficOutput", "TrafficCheck", "TrafficQUIC", "TrafficMerge",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: profileSettings,
            linkerSettings: profileLinkerSettings),

        // Helpers shared by several test targets.
        .target(name: "TrafficTestSupport", path: "Tests/TrafficTestSupport"),
        .testTarget(name: "TrafficCodecsTests", dependencies: ["TrafficCodecs", "TrafficTestSupport"]),
        .testTarget(name: "TrafficCaptureTests", dependencies: ["TrafficCapture"]),
        .testTarget(
            name: "TrafficWireTests",
            dependencies: [
                "TrafficWire", "TrafficTestSupport", .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(
            name: "TrafficReassemblyTests",
            dependencies: [
                "TrafficReassembly", "TrafficTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(
            name: "TrafficHTTPTests",
            dependencies: [
                "TrafficHTTP", "TrafficCapture", "TrafficWire", "TrafficReassembly", "TrafficSessions", "TrafficTestSupport",
            ]),
        .testTarget(
            name: "TrafficHTTP2Tests",
            dependencies: [
                "TrafficHTTP2", "TrafficSessions", "TrafficCodecs", "TrafficCapture", "TrafficWire", "TrafficReassembly",
                "TrafficTestSupport", .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(
            name: "TrafficHTTP3Tests",
            dependencies: [
                "TrafficHTTP3", "TrafficHTTP2", "TrafficSessions", "TrafficCodecs", "TrafficCapture", "TrafficWire",
                "TrafficReassembly", "TrafficTestSupport",
            ],
            // The generator of QPACKOracleFixtures.swift.
            exclude: ["make-qpack-fixtures.py"]),
        .testTarget(
            name: "TrafficTLSTests",
            dependencies: [
                "TrafficTLS", "TrafficSessions", "TrafficTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // The generator of Protection/TLSProtectionVectors.swift.
            exclude: ["Protection/make-tls12-vectors.py"]),
        .testTarget(
            name: "TrafficQUICTests",
            dependencies: [
                "TrafficQUIC", "TrafficWire", "TrafficTLS", "TrafficTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(
            name: "TrafficSessionsTests",
            dependencies: ["TrafficSessions", "TrafficHTTP", "TrafficCapture", "TrafficWire", "TrafficReassembly"]),
        .testTarget(
            name: "TrafficAnalysisTests",
            dependencies: [
                "TrafficAggregation", "TrafficAnalysis", "TrafficCapture", "TrafficCodecs", "TrafficConcurrency",
                "TrafficHTTP2", "TrafficReassembly", "TrafficSessions", "TrafficTLS", "TrafficTestSupport", "TrafficWire",
            ]),
        .testTarget(name: "TrafficCheckTests", dependencies: ["TrafficCheck", "TrafficAggregation"]),
        .testTarget(name: "TrafficOutputTests", dependencies: ["TrafficOutput", "TrafficAggregation", "TrafficCapture", "TrafficSessions"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TrafficAggregation", "TrafficAnalysis", "TrafficOutput", "TrafficMerge"]),
    ],
    swiftLanguageModes: [.v6]
)
