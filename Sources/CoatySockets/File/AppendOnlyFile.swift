import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file opened for appending, written with blocking `write(2)` and made durable with `fsync(2)`:
/// the I/O under the broker's persistence log.
///
/// Appends from one process land in the order written. ``close()`` is idempotent; every other
/// method throws ``SocketError/closed(_:)`` after it.
package final class AppendOnlyFile: Sendable {
    private let descriptor: Mutex<Int32>
    /// The file's path, for messages.
    package let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = Mutex(descriptor)
        self.path = path
    }

    deinit {
        let fd = self.descriptor.withLock { $0 }
        if fd >= 0 { PlatformShims.close(fd) }
    }

    /// Opens (creating it with mode 0600 if missing) the file at `path` for appending.
    ///
    /// - Throws: ``SocketError`` from `open`.
    package static func open(_ path: String) throws(SocketError) -> AppendOnlyFile {
        let fd = PlatformShims.openFile(path, flags: O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, mode: 0o600)
        guard fd >= 0 else { throw SocketError(errno: errno, call: "open(\(path))") }
        return AppendOnlyFile(descriptor: fd, path: path)
    }

    /// Takes an exclusive advisory lock on the file without waiting (`flock`), so that two processes
    /// never write the same data; it is held until ``close()`` or the process ends.
    ///
    /// - Throws: ``SocketError`` with `EWOULDBLOCK` if another process holds the lock.
    package func lockExclusively() throws(SocketError) {
        try self.withDescriptor("flock") { fd throws(SocketError) in
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                throw SocketError(errno: errno, call: "flock(\(self.path))")
            }
        }
    }

    /// Appends all of `bytes`, retrying short writes and `EINTR`.
    ///
    /// - Throws: ``SocketError`` from `write`; part of `bytes` may have been written.
    package func append(_ bytes: [UInt8]) throws(SocketError) {
        try self.withDescriptor("write") { fd throws(SocketError) in
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { buffer in
                    PlatformShims.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw SocketError(errno: errno, call: "write(\(self.path))")
                }
                offset += written
            }
        }
    }

    /// Waits until everything appended is on the storage device (`fsync`).
    ///
    /// - Throws: ``SocketError`` from `fsync`.
    package func synchronize() throws(SocketError) {
        try self.withDescriptor("fsync") { fd throws(SocketError) in
            while fsync(fd) != 0 {
                guard errno == EINTR else { throw SocketError(errno: errno, call: "fsync(\(self.path))") }
            }
        }
    }

    /// Closes the file. Calling it again does nothing.
    package func close() {
        let fd = self.descriptor.withLock { descriptor in
            defer { descriptor = -1 }
            return descriptor
        }
        if fd >= 0 { PlatformShims.close(fd) }
    }

    private func withDescriptor<Result>(
        _ call: String,
        _ body: (Int32) throws(SocketError) -> Result
    ) throws(SocketError) -> Result {
        try self.descriptor.withLock { fd throws(SocketError) in
            guard fd >= 0 else { throw SocketError.closed(call) }
            return try body(fd)
        }
    }
}
