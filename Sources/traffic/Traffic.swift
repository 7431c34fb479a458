import ArgumentParser
@main struct Traffic: ParsableCommand {}
