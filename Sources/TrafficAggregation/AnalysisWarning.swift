/// A problem with the input that did not stop the analysis; the command prints these to stderr.
public struct AnalysisWarning: Sendable, CustomStringConvertible, Equatable {
    public var capture: String
    public var message: String
    public var description: String { "warning: \(capture): \(message)" }

    public init(capture: String, message: String) {
        self.capture = capture
        self.message = message
    }
}
