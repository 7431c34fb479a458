import CFuzzDriver

#if canImport(Glibc)
import Glibc
#endif

/// Hands control to libFuzzer with `callback` as the target; libFuzzer parses the command line
/// (`-max_total_time=`, corpus directories, crash files to replay) and never returns normally.
public func runFuzzer(_ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
}
