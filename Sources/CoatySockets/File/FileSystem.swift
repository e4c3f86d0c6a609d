#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whole-file operations for data that must survive a crash: reading a file, creating a directory
/// and replacing a file atomically and durably.
package enum FileSystem {
    /// The contents of the file at `path`, or `nil` if it does not exist.
    ///
    /// - Throws: ``SocketError`` from `open` (other than `ENOENT`) or `read`.
    package static func contents(ofFile path: String) throws(SocketError) -> [UInt8]? {
        let fd = PlatformShims.openFile(path, flags: O_RDONLY | O_CLOEXEC, mode: 0)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw SocketError(errno: errno, call: "open(\(path))")
        }
        defer { PlatformShims.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw SocketError(errno: errno, call: "read(\(path))")
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Creates the directory at `path` (mode 0700) unless it exists; its parent must exist.
    ///
    /// - Throws: ``SocketError`` from `mkdir`, or `ENOTDIR` if `path` is something else.
    package static func createDirectory(_ path: String) throws(SocketError) {
        if mkdir(path, 0o700) == 0 { return }
        let code = errno
        var status = stat()
        guard code == EEXIST, stat(path, &status) == 0 else { throw SocketError(errno: code, call: "mkdir(\(path))") }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw SocketError(errno: ENOTDIR, call: "mkdir(\(path))") }
    }

    /// Renames `source` to `destination`, replacing it, and makes the rename durable.
    ///
    /// - Throws: ``SocketError`` from `rename` or from syncing the directory.
    package static func rename(_ source: String, to destination: String) throws(SocketError) {
        guard PlatformShims.rename(source, destination) == 0 else {
            throw SocketError(errno: errno, call: "rename(\(source), \(destination))")
        }
        try Self.synchronizeDirectory(of: destination)
    }

    /// Replaces the file at `path` with `bytes` so that a crash at any moment leaves either the old
    /// or the new contents: writes `path.tmp`, syncs it, renames it over `path` and syncs the directory.
    ///
    /// - Throws: ``SocketError`` from any of those steps; `path` is then unchanged.
    package static func replaceFile(_ path: String, with bytes: [UInt8]) throws(SocketError) {
        let temporary = path + ".tmp"
        _ = unlink(temporary)
        let file = try AppendOnlyFile.open(temporary)
        defer { file.close() }
        try file.append(bytes)
        try file.synchronize()
        try Self.rename(temporary, to: path)
    }

    /// Syncs the directory holding `path`, so that a file created or renamed there survives a crash.
    private static func synchronizeDirectory(of path: String) throws(SocketError) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let fd = PlatformShims.openFile(directory.isEmpty ? "/" : directory, flags: O_RDONLY | O_CLOEXEC, mode: 0)
        guard fd >= 0 else { throw SocketError(errno: errno, call: "open(\(directory))") }
        defer { PlatformShims.close(fd) }
        while fsync(fd) != 0 {
            guard errno == EINTR else { throw SocketError(errno: errno, call: "fsync(\(directory))") }
        }
    }
}
