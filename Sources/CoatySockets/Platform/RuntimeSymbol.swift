#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// C functions looked up in the running process by name, for the few that the C library has but
/// Swift's Glibc module does not declare (`accept4`, `posix_spawn_file_actions_addclosefrom_np`).
package enum RuntimeSymbol {
    /// The function named `name`, as `type` (a `@convention(c)` function type), or `nil` where the C
    /// library lacks it. The caller must give the function's real C signature.
    package static func lookUp<Function>(_ name: String, as type: Function.Type) -> Function? {
        guard let library = dlopen(nil, RTLD_NOW), let symbol = dlsym(library, name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }
}
