// swift-tools-version: 6.1
import PackageDescription

// libFuzzer targets for the engine (project issue 8). A separate package so that the main build never
// needs `-sanitize=fuzzer`; build and run them with `make fuzz` (see ../Makefile.robust.mk and README.md).
// Each target's `@main` calls libFuzzer's `LLVMFuzzerRunDriver` (SwiftPM renames an executable's `main`,
// so libFuzzer's own `main` is never linked); build with `-Xswiftc -sanitize=fuzzer,address`.
let package = Package(
    name: "traffic-fuzz",
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: "traffic", path: "..")],
    targets: [
        .target(name: "CFuzzDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver", .product(name: "TrafficEngine", package: "traffic")]),
        .executableTarget(name: "FuzzPackets", dependencies: ["FuzzSupport"]),
        .executableTarget(name: "FuzzHTTP", dependencies: ["FuzzSupport"]),
        .executableTarget(name: "FuzzChunked", dependencies: ["FuzzSupport"]),
        .executableTarget(name: "FuzzContent", dependencies: ["FuzzSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
