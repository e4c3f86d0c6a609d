#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A shared library loaded at run time (`dlopen`), for an optional OS library that the package must
/// not need to build: OpenSSL for TLS. Never unloaded: its functions stay valid for the process.
package struct DynamicLibrary: @unchecked Sendable {
    /// The `dlopen` handle; the library stays loaded for the life of the process.
    private let handle: UnsafeMutableRawPointer
    /// The file name that was loaded, for messages.
    package let name: String

    /// Loads the first of `names` that the dynamic loader finds.
    ///
    /// - Returns: The library, or `nil` when none of `names` can be loaded.
    package init?(loadingFirstOf names: [String]) {
        for name in names {
            if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) {
                self.handle = handle
                self.name = name
                return
            }
        }
        return nil
    }

    /// The function named `name`, as `type` (a `@convention(c)` function type), or `nil` when the
    /// library lacks it. The caller must give the function's real C signature.
    package func function<Function>(_ name: String, as type: Function.Type) -> Function? {
        guard let symbol = dlsym(self.handle, name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }
}
