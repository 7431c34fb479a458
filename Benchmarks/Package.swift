// swift-tools-version: 6.1
import PackageDescription

// Benchmarks for `traffic`, kept out of the main package so that `make test` never builds them.
//
// - traffic-bench-gen: writes a deterministic, realistic HTTP/1.1 capture (or its HTTPS or HTTP/2 form) and its
//   MANIFEST.json.
// - traffic-bench-floor: the bare libpcap read loop, the floor any analyzer is measured against.
// - TrafficStages: per-stage micro-benchmarks (ordo-one/benchmark), run with
//   `swift package --package-path Benchmarks benchmark`.
//
// The C modules are named Bench* so that they cannot clash with the main package's CPcap/CZlib,
// which the TrafficEngine product pulls into the same build.
let package = Package(
    name: "traffic-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        // Named, so that `.product(package: "traffic")` works whatever the checkout directory is called.
        .package(name: "traffic", path: ".."),
        // RuntimeInterposer (a default trait) needs swift-runtime-interposer, which the local mirror lacks;
        // MallocInterposer alone gives the malloc counters the stage benchmarks report.
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .systemLibrary(
            name: "BenchCPcap", pkgConfig: "libpcap",
            providers: [.apt(["libpcap-dev"]), .brew(["libpcap"])]),
        .systemLibrary(
            name: "BenchCZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        // TrafficEngine for TrafficTLS's record protection (`--tls` seals records with TLSRecordDecryptor.seal).
        .executableTarget(
            name: "traffic-bench-gen",
            dependencies: ["BenchCZlib", .product(name: "TrafficEngine", package: "traffic")]),
        .executableTarget(name: "traffic-bench-floor", dependencies: ["BenchCPcap"]),
        .executableTarget(
            name: "TrafficStages",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "TrafficEngine", package: "traffic"),
            ],
            path: "Benchmarks/TrafficStages",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
    ],
    swiftLanguageModes: [.v6]
)
