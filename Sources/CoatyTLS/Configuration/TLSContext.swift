/// An OpenSSL context (`SSL_CTX`) made from a ``TLSConfiguration``: the trusted roots, this side's
/// certificate and key, and the protocol settings that every ``TLSConnection`` made from it shares.
///
/// Loading certificates and keys happens once, here, so a broker pays for it once, not per client,
/// and a bad file is reported before the first connection. Sendable: OpenSSL allows connections to
/// be made from one context on several threads once it is configured, and it is never changed after.
package final class TLSContext: @unchecked Sendable {
    let openssl: OpenSSL
    let context: OpaquePointer
    package let configuration: TLSConfiguration

    /// Makes a context.
    ///
    /// - Throws: ``TLSError`` `.libraryUnavailable` without OpenSSL 3, `.invalidConfiguration` for
    ///   a certificate, key or CA bundle that cannot be read or used.
    package init(_ configuration: TLSConfiguration) throws(TLSError) {
        let openssl = try OpenSSL.load()
        let method = configuration.role == .client ? openssl.TLS_client_method() : openssl.TLS_server_method()
        guard let context = openssl.SSL_CTX_new(method) else {
            throw TLSError(
                .invalidConfiguration,
                "cannot create a TLS context",
                detail: openssl.describe(openssl.takeErrors())
            )
        }
        self.openssl = openssl
        self.context = context
        self.configuration = configuration
        try self.configure()
    }

    deinit {
        self.openssl.SSL_CTX_free(self.context)
    }

    private func configure() throws(TLSError) {
        let openssl = self.openssl
        openssl.clearErrors()
        // TLS 1.2 at least; no renegotiation (the reader never writes, see TLSConnection); a peer that
        // closes TCP without close_notify ends the stream (MQTT's own framing notices truncation).
        _ = openssl.SSL_CTX_ctrl(
            self.context,
            OpenSSL.Constant.setMinimumProtocolVersion,
            self.configuration.allowsTLS12 ? 0x0303 : 0x0304,
            nil
        )
        var options = OpenSSL.Constant.noRenegotiation | OpenSSL.Constant.ignoreUnexpectedEOF
        if self.configuration.role == .server {
            // No session tickets or cache: a server then never writes after the handshake unasked,
            // and client-certificate checks are never skipped by a resumed session.
            options |= OpenSSL.Constant.noTicket
            _ = openssl.SSL_CTX_set_num_tickets(self.context, 0)
            _ = openssl.SSL_CTX_ctrl(self.context, OpenSSL.Constant.setSessionCacheMode, 0, nil)
        }
        _ = openssl.SSL_CTX_set_options(self.context, options)

        let mode: Int32
        switch (self.configuration.role, self.configuration.peerVerification) {
        case (_, .none): mode = OpenSSL.Constant.verifyNone
        case (.client, _), (.server, .optional): mode = OpenSSL.Constant.verifyPeer
        case (.server, .required): mode = OpenSSL.Constant.verifyPeer | OpenSSL.Constant.verifyFailIfNoPeerCertificate
        }
        openssl.SSL_CTX_set_verify(self.context, mode, nil)
        if self.configuration.peerVerification != .none {
            try self.loadTrustedCertificates()
        }
        try self.loadCertificateAndKey()
        if !self.configuration.alpnProtocols.isEmpty {
            var wire: [UInt8] = []
            for name in self.configuration.alpnProtocols {
                let bytes = Array(name.utf8)
                guard (1...255).contains(bytes.count) else {
                    throw TLSError(.invalidConfiguration, "invalid ALPN protocol name '\(name)'")
                }
                wire.append(UInt8(bytes.count))
                wire += bytes
            }
            guard openssl.SSL_CTX_set_alpn_protos(self.context, wire, UInt32(wire.count)) == 0 else {
                throw TLSError(.invalidConfiguration, "cannot set the ALPN protocol names")
            }
        }
    }

    private func loadTrustedCertificates() throws(TLSError) {
        let openssl = self.openssl
        guard let trusted = self.configuration.trustedCertificates else {
            guard openssl.SSL_CTX_set_default_verify_paths(self.context) == 1 else {
                throw TLSError(
                    .invalidConfiguration,
                    "cannot load the system's trusted certificates",
                    detail: openssl.describe(openssl.takeErrors())
                )
            }
            return
        }
        let store = openssl.SSL_CTX_get_cert_store(self.context)
        for certificate in try self.certificates(in: trusted, what: "CA certificates") {
            _ = openssl.X509_STORE_add_cert(store, certificate)
            openssl.X509_free(certificate)
        }
        openssl.clearErrors()
    }

    private func loadCertificateAndKey() throws(TLSError) {
        let openssl = self.openssl
        switch (self.configuration.certificateChain, self.configuration.privateKey) {
        case (nil, nil):
            if self.configuration.role == .server {
                throw TLSError(.invalidConfiguration, "a TLS server needs a certificate and a private key")
            }
            return
        case (.some, nil), (nil, .some):
            throw TLSError(.invalidConfiguration, "a certificate needs its private key, and a key its certificate")
        case (.some(let chain), .some(let keySource)):
            let certificates = try self.certificates(in: chain, what: "certificate")
            guard openssl.SSL_CTX_use_certificate(self.context, certificates[0]) == 1 else {
                certificates.forEach { openssl.X509_free($0) }
                throw TLSError(
                    .invalidConfiguration,
                    "cannot use the certificate in \(Self.name(chain))",
                    detail: openssl.describe(openssl.takeErrors())
                )
            }
            openssl.X509_free(certificates[0])
            for intermediate in certificates.dropFirst() {
                // The context takes ownership of the certificate.
                _ = openssl.SSL_CTX_ctrl(
                    self.context,
                    OpenSSL.Constant.addExtraChainCertificate,
                    0,
                    UnsafeMutableRawPointer(intermediate)
                )
            }
            let key = try self.withBIO(keySource) { bio in openssl.PEM_read_bio_PrivateKey(bio, nil, nil, nil) }
            guard let key else {
                throw TLSError(
                    .invalidConfiguration,
                    "no private key in \(Self.name(keySource))",
                    detail: openssl.describe(openssl.takeErrors())
                )
            }
            defer { openssl.EVP_PKEY_free(key) }
            guard openssl.SSL_CTX_use_PrivateKey(self.context, key) == 1,
                openssl.SSL_CTX_check_private_key(self.context) == 1
            else {
                throw TLSError(
                    .invalidConfiguration,
                    "the private key in \(Self.name(keySource)) does not match the certificate in \(Self.name(chain))",
                    detail: openssl.describe(openssl.takeErrors())
                )
            }
        }
    }

    /// The certificates in `pem`, in order; the caller frees them.
    private func certificates(in pem: TLSConfiguration.PEM, what: String) throws(TLSError) -> [OpaquePointer] {
        let openssl = self.openssl
        let certificates = try self.withBIO(pem) { bio in
            var certificates: [OpaquePointer] = []
            while let certificate = openssl.PEM_read_bio_X509(bio, nil, nil, nil) { certificates.append(certificate) }
            return certificates
        }
        // Reading stops with a "no start line" error at the end of the input.
        let errors = openssl.takeErrors()
        guard !certificates.isEmpty else {
            throw TLSError(.invalidConfiguration, "no \(what) in \(Self.name(pem))", detail: openssl.describe(errors))
        }
        return certificates
    }

    /// Runs `body` with a BIO reading `pem`.
    private func withBIO<Result>(
        _ pem: TLSConfiguration.PEM,
        _ body: (OpaquePointer) -> Result
    ) throws(TLSError) -> Result {
        let openssl = self.openssl
        switch pem {
        case .file(let path):
            guard let bio = openssl.BIO_new_file(path, "r") else {
                openssl.clearErrors()
                throw TLSError(.invalidConfiguration, "cannot read \(path)")
            }
            defer { _ = openssl.BIO_free(bio) }
            return body(bio)
        case .text(let text):
            var bytes = Array(text.utf8)
            let result: Result? = bytes.withUnsafeMutableBytes { buffer in
                // A memory BIO over the buffer; it does not copy, so it lives only inside this closure.
                guard let bio = openssl.BIO_new_mem_buf(buffer.baseAddress, Int32(clamping: buffer.count)) else {
                    return nil
                }
                defer { _ = openssl.BIO_free(bio) }
                return body(bio)
            }
            guard let result else { throw TLSError(.invalidConfiguration, "cannot read the PEM text given") }
            return result
        }
    }

    /// How a PEM source is named in messages.
    static func name(_ pem: TLSConfiguration.PEM) -> String {
        switch pem {
        case .file(let path): return path
        case .text: return "the PEM text given"
        }
    }
}
