#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A resolved socket address (IPv4 or IPv6), stored as raw `sockaddr_storage` bytes.
struct SocketAddress: Sendable {
    var family: Int32
    var storage: sockaddr_storage
    var length: socklen_t

    /// Resolves `host` (an IPv4 or IPv6 literal, or a name such as `localhost`) and `port`.
    ///
    /// Name lookups go through `getaddrinfo`, which may block for non-local names.
    static func resolve(host: String, port: Int, passive: Bool) throws(SocketError) -> [SocketAddress] {
        guard (0...65_535).contains(port) else { throw SocketError(errno: EINVAL, call: "getaddrinfo(port \(port))") }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = PlatformShims.streamSocketType
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let list else {
            guard rc != EAI_SYSTEM else { throw SocketError(errno: errno, call: "getaddrinfo(\(host))") }
            let reason = gai_strerror(rc).map { String(cString: $0) } ?? "error \(rc)"
            throw SocketError(errno: EINVAL, call: "getaddrinfo(\(host))", reason: reason)
        }
        defer { freeaddrinfo(list) }
        var result: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let info = cursor {
            if let address = info.pointee.ai_addr,
                info.pointee.ai_family == AF_INET || info.pointee.ai_family == AF_INET6
            {
                var storage = sockaddr_storage()
                let length = info.pointee.ai_addrlen
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length)))
                }
                result.append(SocketAddress(family: info.pointee.ai_family, storage: storage, length: length))
            }
            cursor = info.pointee.ai_next
        }
        guard !result.isEmpty else { throw SocketError(errno: EADDRNOTAVAIL, call: "getaddrinfo(\(host))") }
        return result
    }

    /// Calls `body` with the address as a `sockaddr` pointer.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafeBytes(of: self.storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), self.length)
        }
    }

    /// The numeric host and port, for example `"127.0.0.1:50312"` or `"[::1]:1883"`.
    var description: String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let rc = self.withSockAddr { address, length in
            getnameinfo(
                address,
                length,
                &host,
                socklen_t(host.count),
                &service,
                socklen_t(service.count),
                NI_NUMERICHOST | NI_NUMERICSERV
            )
        }
        guard rc == 0 else { return "?" }
        let hostString = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let serviceString = String(decoding: service.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return self.family == AF_INET6 ? "[\(hostString)]:\(serviceString)" : "\(hostString):\(serviceString)"
    }

    /// The port number.
    var port: Int {
        withUnsafeBytes(of: self.storage) { raw in
            if self.family == AF_INET6 {
                return Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            }
            return Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
        }
    }

    /// The local address of a socket (`getsockname`).
    static func local(of fd: Int32) -> SocketAddress? {
        Self.query(fd, getsockname)
    }

    /// The peer address of a socket (`getpeername`).
    static func peer(of fd: Int32) -> SocketAddress? {
        Self.query(fd, getpeername)
    }

    private static func query(
        _ fd: Int32,
        _ call: (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?) -> Int32
    ) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutableBytes(of: &storage) { raw in
            call(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        guard rc == 0 else { return nil }
        return SocketAddress(family: Int32(storage.ss_family), storage: storage, length: length)
    }
}
