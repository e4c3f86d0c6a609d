#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An error from the operating system's socket or file API, or from using a socket or file after it was closed.
///
/// Carries the `errno` value and the name of the call that failed, like NIO's `IOError`.
package struct SocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `errno` value reported by the failing call (`EBADF` for ``isClosed`` errors).
    package var errno: Int32
    /// The name of the system call or operation that failed, for example `"connect"`.
    package var call: String
    /// Whether the error means the socket was closed by this side (``TCPConnection/close()`` or
    /// ``TCPListener/close()``), possibly while an operation was waiting.
    package var isClosed: Bool
    /// What went wrong, when `errno` does not say it: a name lookup fails with its own codes
    /// (`gai_strerror`), and `errno` is then only `EINVAL`.
    package var reason: String?

    /// Creates an error from an `errno` value.
    ///
    /// - Parameters:
    ///   - errno: The `errno` value.
    ///   - call: The failing call.
    ///   - reason: The failure in words when `errno` does not describe it.
    package init(errno: Int32, call: String, reason: String? = nil) {
        self.errno = errno
        self.call = call
        self.isClosed = false
        self.reason = reason
    }

    /// The error thrown by operations on a closed socket.
    package static func closed(_ call: String) -> SocketError {
        var error = SocketError(errno: EBADF, call: call)
        error.isClosed = true
        return error
    }

    /// Whether the peer reset or broke the connection (`ECONNRESET`, `EPIPE`, `ENOTCONN`, `ETIMEDOUT`).
    package var isConnectionReset: Bool {
        self.errno == ECONNRESET || self.errno == EPIPE || self.errno == ENOTCONN || self.errno == ETIMEDOUT
    }

    package var description: String {
        if self.isClosed {
            return "\(self.call): socket closed"
        }
        if let reason = self.reason {
            return "\(self.call) failed: \(reason)"
        }
        let message = strerror(self.errno).map { String(cString: $0) } ?? "unknown error"
        return "\(self.call) failed: \(message) (errno \(self.errno))"
    }
}
