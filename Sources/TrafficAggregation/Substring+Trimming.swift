/// Option lists like `host, path` allow spaces around their commas.
extension Substring {
    package func trimmingCharacters() -> String {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
