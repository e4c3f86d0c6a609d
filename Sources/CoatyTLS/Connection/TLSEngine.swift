/// One TLS connection's OpenSSL state (`SSL` with two memory BIOs), without any I/O of its own.
///
/// The network bytes go through memory: what arrives from the socket is fed in with ``feed(_:)``,
/// and what TLS has to send is taken out of the returned steps. So the sockets stay on our reactor,
/// non-blocking, and OpenSSL never touches a file descriptor. Not thread-safe: ``TLSConnection`` keeps
/// it behind a lock and calls it only from inside.
final class TLSEngine {
    let openssl: OpenSSL
    let ssl: OpaquePointer
    /// What arrives from the peer (OpenSSL reads it).
    private let input: OpaquePointer
    /// What is to be sent to the peer (OpenSSL writes it).
    private let output: OpaquePointer
    let role: TLSConfiguration.Role
    /// The host the client connects to (and verifies), for messages; the peer's address on a server.
    let peerName: String
    /// Whether this side presents a certificate.
    let hasCertificate: Bool
    /// Set when the stream has ended (close_notify or EOF) or failed.
    private var isFinished = false
    private var failure: TLSError?

    /// The outcome of one handshake step; `output` is to be sent to the peer first.
    enum HandshakeStep {
        case done(output: [UInt8])
        case needsInput(output: [UInt8])
        case failed(TLSError, output: [UInt8])
    }

    /// The outcome of one read.
    enum ReadStep {
        case data([UInt8])
        case needsInput
        case end
        case failed(TLSError)

        /// The outcome of one read into a caller's buffer: `data` counts the bytes written.
        enum Counted {
            case data(Int)
            case needsInput
            case end
            case failed(TLSError)
        }

        /// `counted`, with `bytes` as the data it counted.
        init(_ counted: Counted, bytes: [UInt8]) {
            switch counted {
            case .data: self = .data(bytes)
            case .needsInput: self = .needsInput
            case .end: self = .end
            case .failed(let failure): self = .failed(failure)
            }
        }
    }

    /// Creates the state of one connection.
    ///
    /// - Parameters:
    ///   - context: The shared settings and certificates.
    ///   - peerName: For a client, the server's host name or IP literal: sent as SNI (names only) and,
    ///     unless verification is off, required in the server's certificate. For a server, the
    ///     client's address, for messages.
    init(context: TLSContext, peerName: String) throws(TLSError) {
        let openssl = context.openssl
        openssl.clearErrors()
        guard let ssl = openssl.SSL_new(context.context),
            let input = openssl.BIO_new(openssl.BIO_s_mem()),
            let output = openssl.BIO_new(openssl.BIO_s_mem())
        else {
            throw TLSError(
                .handshakeFailed,
                "cannot create a TLS connection",
                detail: openssl.describe(openssl.takeErrors())
            )
        }
        // The connection owns both BIOs from here on and frees them with itself.
        openssl.SSL_set_bio(ssl, input, output)
        self.openssl = openssl
        self.ssl = ssl
        self.input = input
        self.output = output
        self.role = context.configuration.role
        self.peerName = peerName
        self.hasCertificate = context.configuration.certificateChain != nil
        switch self.role {
        case .server:
            openssl.SSL_set_accept_state(ssl)
        case .client:
            openssl.SSL_set_connect_state(ssl)
            try self.setUpClient(verifies: context.configuration.peerVerification != .none)
        }
    }

    deinit {
        self.openssl.SSL_free(self.ssl)
    }

    private func setUpClient(verifies: Bool) throws(TLSError) {
        let isIPAddress = Self.isIPAddress(self.peerName)
        if !isIPAddress {
            // SNI (RFC 6066) is for names only, never IP literals.
            _ = self.peerName.withCString { name in
                self.openssl.SSL_ctrl(
                    self.ssl,
                    OpenSSL.Constant.setTLSExtensionHostName,
                    OpenSSL.Constant.hostNameType,
                    UnsafeMutableRawPointer(mutating: name)
                )
            }
        }
        guard verifies else { return }
        let isSet =
            isIPAddress
            ? self.openssl.X509_VERIFY_PARAM_set1_ip_asc(self.openssl.SSL_get0_param(self.ssl), self.peerName)
            : self.openssl.SSL_set1_host(self.ssl, self.peerName)
        guard isSet == 1 else {
            throw TLSError(.invalidConfiguration, "cannot verify the host name '\(self.peerName)'")
        }
    }

    /// Whether `host` is an IPv4 or IPv6 literal rather than a name.
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in UInt8(part) != nil }
    }

    // MARK: - Steps

    /// Hands bytes received from the peer to TLS.
    func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { self.feed($0) }
    }

    /// Hands bytes received from the peer to TLS; the memory BIO copies them.
    func feed(_ buffer: UnsafeRawBufferPointer) {
        _ = self.openssl.BIO_write(self.input, buffer.baseAddress, Int32(buffer.count))
    }

    /// Advances the handshake with what was fed so far.
    func handshake() -> HandshakeStep {
        self.openssl.clearErrors()
        let result = self.openssl.SSL_do_handshake(self.ssl)
        if result == 1 { return .done(output: self.takeOutput()) }
        let error = self.openssl.SSL_get_error(self.ssl, result)
        if error == OpenSSL.Constant.errorWantRead { return .needsInput(output: self.takeOutput()) }
        let failure = self.failure(errorKind: error, errors: self.openssl.takeErrors(), duringHandshake: true)
        return .failed(failure, output: self.takeOutput())
    }

    /// The most plaintext one TLS record carries, and so the most one read here returns.
    static let recordPlaintextLimit = 16_384

    /// Decrypts up to `maxBytes` bytes of application data, and at most one record's worth
    /// (``recordPlaintextLimit``): the caller reads again for more.
    ///
    /// It decrypts into a temporary buffer and returns an array of exactly the bytes that came. An
    /// array allocated with `maxBytes` of capacity (64 KiB for a connection's reads) would keep that
    /// much memory for every small message for as long as the reader holds on to it.
    func read(maxBytes: Int) -> ReadStep {
        // Before a buffer is allocated: most reads after a record find nothing.
        if let answer = self.answerWithoutOpenSSL { return ReadStep(answer, bytes: []) }
        let capacity = min(max(1, maxBytes), Self.recordPlaintextLimit)
        return withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { buffer in
            let step = self.readFromOpenSSL(into: buffer)
            guard case .data(let count) = step else { return ReadStep(step, bytes: []) }
            return ReadStep(step, bytes: Array(UnsafeRawBufferPointer(rebasing: buffer[..<count])))
        }
    }

    /// Decrypts application data into `buffer` (not empty): `.data` holds the number of bytes
    /// written to its start.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadStep.Counted {
        self.answerWithoutOpenSSL ?? self.readFromOpenSSL(into: buffer)
    }

    /// What a read answers without asking OpenSSL, or `nil`: the failure or end already met, or
    /// `.needsInput` with nothing fed and nothing buffered. That is the common case after a record has
    /// been read, and one that would otherwise cost a failed `SSL_read` and its error bookkeeping for
    /// every message.
    private var answerWithoutOpenSSL: ReadStep.Counted? {
        if let failure = self.failure { return .failed(failure) }
        if self.isFinished { return .end }
        if self.holdsNothing { return .needsInput }
        return nil
    }

    /// One `SSL_read` into `buffer`, and what it came to.
    private func readFromOpenSSL(into buffer: UnsafeMutableRawBufferPointer) -> ReadStep.Counted {
        self.openssl.clearErrors()
        let count = self.openssl.SSL_read(self.ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if count > 0 { return .data(Int(count)) }
        let kind = self.openssl.SSL_get_error(self.ssl, count)
        switch kind {
        case OpenSSL.Constant.errorWantRead:
            return .needsInput
        case OpenSSL.Constant.errorZeroReturn:
            self.isFinished = true
            return .end
        default:
            let failure = self.failure(errorKind: kind, errors: self.openssl.takeErrors(), duringHandshake: false)
            self.failure = failure
            return .failed(failure)
        }
    }

    /// Whether nothing was fed that TLS has not taken and TLS buffers nothing: a read would only ask
    /// for more input. (`SSL_has_pending` may say yes for a partial record; then the read asks.)
    private var holdsNothing: Bool {
        self.openssl.BIO_ctrl_pending(self.input) == 0 && self.openssl.SSL_has_pending(self.ssl) == 0
    }

    /// Marks the end of the peer's bytes (TCP EOF): the stream ends, a partial record is dropped.
    func peerClosed() {
        self.isFinished = true
    }

    /// Encrypts `chunks`, in order, and returns the records to send (with anything TLS had queued
    /// before, such as a key update answer).
    func encrypt(_ chunks: [[UInt8]]) throws(TLSError) -> [UInt8] {
        if let failure = self.failure { throw failure }
        self.openssl.clearErrors()
        for chunk in chunks where !chunk.isEmpty {
            let written = chunk.withUnsafeBytes { buffer in
                self.openssl.SSL_write(self.ssl, buffer.baseAddress, Int32(clamping: buffer.count))
            }
            // With memory BIOs a write takes everything at once, or fails for good.
            guard written == chunk.count else {
                let kind = self.openssl.SSL_get_error(self.ssl, written)
                let failure = self.failure(errorKind: kind, errors: self.openssl.takeErrors(), duringHandshake: false)
                self.failure = failure
                throw failure
            }
        }
        return self.takeOutput()
    }

    /// The close_notify alert to send before half-closing, with anything queued before it.
    func closeNotify() -> [UInt8] {
        self.openssl.clearErrors()
        _ = self.openssl.SSL_shutdown(self.ssl)
        self.openssl.clearErrors()
        return self.takeOutput()
    }

    /// What TLS has written for the peer so far.
    private func takeOutput() -> [UInt8] {
        self.openssl.drain(self.output)
    }

    // MARK: - After the handshake

    /// The TLS version agreed, for example `"TLSv1.3"`.
    var version: String {
        self.openssl.SSL_get_version(self.ssl).map { String(cString: $0) } ?? "TLS"
    }

    /// The ALPN protocol the server chose, if any.
    var negotiatedProtocol: String? {
        var name: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        withUnsafeMutablePointer(to: &name) { namePointer in
            withUnsafeMutablePointer(to: &length) { lengthPointer in
                self.openssl.SSL_get0_alpn_selected(
                    self.ssl,
                    UnsafeMutableRawPointer(namePointer),
                    UnsafeMutableRawPointer(lengthPointer)
                )
            }
        }
        guard let name, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: name, count: Int(length)), as: UTF8.self)
    }
}
