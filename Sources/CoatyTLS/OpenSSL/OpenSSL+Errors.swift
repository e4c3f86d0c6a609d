extension OpenSSL {
    /// One entry of OpenSSL's (thread-local) error queue.
    struct QueuedError: Sendable, Hashable {
        /// The packed error code.
        var code: UInt

        /// The library the error comes from (`ERR_GET_LIB`); 20 is libssl.
        var library: Int { self.isSystemError ? 2 : Int((self.code >> 23) & 0xFF) }
        /// The reason (`ERR_GET_REASON`); for libssl, 1000 + an alert number is an alert the peer sent.
        var reason: Int { self.isSystemError ? Int(self.code & 0x7FFF_FFFF) : Int(self.code & 0x7F_FFFF) }
        /// Whether this is a saved `errno` rather than an OpenSSL error (`ERR_SYSTEM_ERROR`).
        var isSystemError: Bool { self.code & (1 << 31) != 0 }

        /// The reason number of an alert received from the peer.
        static func alertReason(_ alert: Int) -> Int { 1000 + alert }
    }

    /// Empties the error queue, so that what follows an operation belongs to it.
    ///
    /// Peeks first: the queue is nearly always empty, and clearing it walks all its slots (about
    /// thirty calls into OpenSSL) where peeking reads one index.
    func clearErrors() {
        if self.ERR_peek_error() != 0 { self.ERR_clear_error() }
    }

    /// Removes and returns the queued errors, oldest first.
    func takeErrors() -> [QueuedError] {
        var errors: [QueuedError] = []
        while true {
            let code = self.ERR_get_error()
            guard code != 0 else { return errors }
            errors.append(QueuedError(code: code))
        }
    }

    /// OpenSSL's text for `errors`, joined with "; ", or `nil` for none.
    func describe(_ errors: [QueuedError]) -> String? {
        guard !errors.isEmpty else { return nil }
        return errors.map { error in
            var buffer = [CChar](repeating: 0, count: 256)
            buffer.withUnsafeMutableBufferPointer { self.ERR_error_string_n(error.code, $0.baseAddress, $0.count) }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }.joined(separator: "; ")
    }

    /// OpenSSL's description of a certificate verification result (`X509_V_ERR_…`).
    func describeVerification(_ result: Int) -> String {
        self.X509_verify_cert_error_string(result).map { String(cString: $0) } ?? "verification error \(result)"
    }

    /// Everything a memory BIO holds, removed from it.
    func drain(_ bio: Pointer) -> [UInt8] {
        let count = self.BIO_ctrl_pending(bio)
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let read = self.BIO_read(bio, buffer.baseAddress, Int32(clamping: count))
            initialized = max(0, Int(read))
        }
    }
}
