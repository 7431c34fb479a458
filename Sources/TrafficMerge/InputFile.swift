#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads small input files (baselines, budgets, reports) whole, with the system's reason on failure.
package enum InputFile {
    /// The file's bytes, or the `strerror` text of why they cannot be read.
    package static func read(_ path: String) -> Result<[UInt8], ReadFailure> {
        guard let file = fopen(path, "rb") else { return .failure(ReadFailure(reason: String(cString: strerror(errno)))) }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            bytes += chunk[..<count]
            if count < chunk.count {
                if ferror(file) != 0 { return .failure(ReadFailure(reason: String(cString: strerror(errno)))) }
                return .success(bytes)
            }
        }
    }

    /// The `strerror` text of a failed read.
    package struct ReadFailure: Error {
        package var reason: String
    }

    /// True when the first non-blank byte is `{`: a JSON report or baseline rather than a capture.
    package static func looksLikeJSON(_ path: String) -> Bool {
        guard path != "-", let file = fopen(path, "rb") else { return false }
        defer { fclose(file) }
        var byte: Int32 = fgetc(file)
        while byte == 0x20 || byte == 0x0a || byte == 0x0d || byte == 0x09 { byte = fgetc(file) }
        return byte == 0x7b
    }
}
