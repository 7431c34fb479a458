/// How `check` and `diff` render their outcome (`--format`).
public enum CheckFormat: String, CaseIterable, Sendable {
    /// Aligned text for terminals and CI logs.
    case table
    /// GitHub-flavoured markdown for PR comments and `$GITHUB_STEP_SUMMARY`.
    case markdown
    case json
    /// JUnit XML: one test case per endpoint; `check` only.
    case junit
    /// One self-contained page (a CI artifact): verdict, failures in red, before/after bars.
    case html
}
