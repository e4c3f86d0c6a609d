#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The values of the environment variables the options read (``Options/environmentVariables``).
func environment() -> [String: String] {
    var environment: [String: String] = [:]
    for name in Options.environmentVariables {
        if let value = getenv(name) { environment[name] = String(cString: value) }
    }
    return environment
}
