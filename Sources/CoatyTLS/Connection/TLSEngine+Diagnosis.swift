extension TLSEngine {
    /// Turns a failed OpenSSL call into an error that says what failed, in the user's terms: which
    /// certificate check failed and why, or which alert the peer sent.
    ///
    /// - Parameters:
    ///   - errorKind: What `SSL_get_error` returned.
    ///   - errors: The error queue after the call.
    ///   - duringHandshake: Whether the handshake was under way.
    func failure(errorKind: Int32, errors: [OpenSSL.QueuedError], duringHandshake: Bool) -> TLSError {
        typealias C = OpenSSL.Constant
        let detail = self.openssl.describe(errors)
        let reasons = Set(errors.filter { $0.library == C.librarySSL }.map(\.reason))
        let verification = self.openssl.SSL_get_verify_result(self.ssl)
        if reasons.contains(C.certificateVerifyFailed) && verification != C.verifyOK {
            return self.certificateFailure(verification, detail: detail)
        }
        if reasons.contains(C.peerDidNotReturnCertificate) {
            return TLSError(
                .certificateRejected,
                "\(self.peerName) sent no client certificate, and one is required",
                detail: detail
            )
        }
        if let alert = reasons.lazy.filter({ $0 > 1000 && $0 < 1256 }).map({ $0 - 1000 }).first {
            return self.alertFailure(alert, detail: detail, duringHandshake: duringHandshake)
        }
        if reasons.contains(C.wrongVersionNumber) || reasons.contains(C.unsupportedProtocol)
            || reasons.contains(C.noProtocolsAvailable)
        {
            let what = duringHandshake ? "no TLS version in common with" : "unexpected data from"
            return TLSError(.protocolViolation, "\(what) \(self.peerName); is it speaking TLS?", detail: detail)
        }
        if errorKind == C.errorSyscall || errors.isEmpty {
            let when = duringHandshake ? "during the TLS handshake" : "without closing TLS"
            return TLSError(.handshakeFailed, "\(self.peerName) closed the connection \(when)", detail: detail)
        }
        if duringHandshake {
            return TLSError(.handshakeFailed, "the TLS handshake with \(self.peerName) failed", detail: detail)
        }
        return TLSError(.protocolViolation, "invalid TLS data from \(self.peerName)", detail: detail)
    }

    /// The error for an alert the peer sent.
    private func alertFailure(_ alert: Int, detail: String?, duringHandshake: Bool) -> TLSError {
        typealias C = OpenSSL.Constant
        let peer = self.role == .client ? "the broker" : "the client \(self.peerName)"
        switch alert {
        case C.alertCertificateRequired:
            return TLSError(.certificateRejected, "\(peer) requires a client certificate", detail: detail)
        case C.alertHandshakeFailure where self.role == .client && !self.hasCertificate:
            return TLSError(
                .handshakeFailed,
                "the broker ended the handshake (handshake_failure): it may require a client certificate",
                detail: detail
            )
        case C.alertBadCertificate, C.alertUnknownCA, C.alertCertificateExpired:
            let whose = self.role == .client ? "our client certificate" : "the server's certificate"
            return TLSError(.certificateRejected, "\(peer) refused \(whose)", detail: detail)
        case C.alertProtocolVersion:
            return TLSError(.handshakeFailed, "no TLS version in common with \(peer)", detail: detail)
        default:
            let when = duringHandshake ? "the handshake" : "the connection"
            return TLSError(.handshakeFailed, "\(peer) ended \(when) with TLS alert \(alert)", detail: detail)
        }
    }

    /// The error for a peer certificate that failed verification (`X509_V_ERR_…` in `result`).
    func certificateFailure(_ result: Int, detail: String?) -> TLSError {
        typealias C = OpenSSL.Constant
        let reason = self.openssl.describeVerification(result)
        let leaf = self.peerCertificate
        let subject =
            self.role == .client ? "the certificate of \(self.peerName)" : "the client certificate of \(self.peerName)"
        let message: String
        switch result {
        case C.verifyExpired:
            message =
                "\(subject) expired on \(leaf.flatMap { self.date(self.openssl.X509_get0_notAfter($0)) } ?? "an earlier date")"
        case C.verifyNotYetValid:
            message =
                "\(subject) is not valid before \(leaf.flatMap { self.date(self.openssl.X509_get0_notBefore($0)) } ?? "a later date")"
        case C.verifySelfSigned:
            message = "\(subject) is not trusted: self-signed"
        case C.verifySelfSignedInChain:
            message =
                "\(subject) is not trusted: its chain ends in a self-signed certificate that is not a trusted root"
        case C.verifyUnknownIssuerLocally, C.verifyUnableToVerifyLeaf:
            let issuer =
                leaf.flatMap { self.name(self.openssl.X509_get_issuer_name($0)) }.map { " (issued by \($0))" } ?? ""
            message = "\(subject) is not trusted: its issuer is not a trusted CA\(issuer)"
        case C.verifyHostNameMismatch, C.verifyIPAddressMismatch:
            let names = leaf.map { self.hostNames(of: $0) } ?? []
            let what = names.isEmpty ? "another host" : names.joined(separator: ", ")
            message = "host name mismatch: the certificate is for \(what), not \(self.peerName)"
        default:
            message = "\(subject) is not trusted: \(reason)"
        }
        return TLSError(.certificateRejected, message, detail: detail ?? reason)
    }

    /// The peer's own certificate as received, also when it failed verification (the client keeps
    /// the chain it was sent), or `nil`.
    private var peerCertificate: OpaquePointer? {
        guard let chain = self.openssl.SSL_get_peer_cert_chain(self.ssl), self.openssl.OPENSSL_sk_num(chain) > 0,
            let first = self.openssl.OPENSSL_sk_value(chain, 0)
        else { return nil }
        return OpaquePointer(first)
    }

    /// The DNS names and IP addresses of a certificate's subject alternative names, or its subject
    /// when it has none.
    private func hostNames(of certificate: OpaquePointer) -> [String] {
        typealias C = OpenSSL.Constant
        guard let raw = self.openssl.X509_get_ext_d2i(certificate, C.subjectAlternativeName, nil, nil) else {
            return self.name(self.openssl.X509_get_subject_name(certificate)).map { [$0] } ?? []
        }
        let names = OpaquePointer(raw)
        defer { self.openssl.GENERAL_NAMES_free(names) }
        var result: [String] = []
        for index in 0..<self.openssl.OPENSSL_sk_num(names) {
            // GENERAL_NAME is { int type; union { ASN1_STRING *…; } d; }: the pointer follows the
            // int at pointer alignment.
            guard let entry = self.openssl.OPENSSL_sk_value(names, index) else { continue }
            let type = entry.load(as: Int32.self)
            let value = entry.load(fromByteOffset: MemoryLayout<UnsafeRawPointer>.stride, as: OpaquePointer?.self)
            guard let value, let data = self.openssl.ASN1_STRING_get0_data(value) else { continue }
            let bytes = Array(UnsafeBufferPointer(start: data, count: Int(self.openssl.ASN1_STRING_length(value))))
            switch type {
            case C.generalNameDNS:
                result.append(String(decoding: bytes, as: UTF8.self))
            case C.generalNameIPAddress where bytes.count == 4:
                result.append(bytes.map(String.init).joined(separator: "."))
            case C.generalNameIPAddress where bytes.count == 16:
                let groups = stride(from: 0, to: 16, by: 2).map {
                    String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
                }
                result.append(groups.joined(separator: ":"))
            default:
                continue
            }
        }
        return result
    }

    /// A certificate time as OpenSSL prints it, for example `"Jan  1 00:00:00 2024 GMT"`.
    private func date(_ time: OpaquePointer?) -> String? {
        guard let time, let bio = self.openssl.BIO_new(self.openssl.BIO_s_mem()) else { return nil }
        defer { _ = self.openssl.BIO_free(bio) }
        guard self.openssl.ASN1_TIME_print(bio, time) == 1 else { return nil }
        let text = String(decoding: self.openssl.drain(bio), as: UTF8.self)
        return text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    /// A distinguished name in OpenSSL's one-line form, for example `"/CN=Test CA"`.
    private func name(_ name: OpaquePointer?) -> String? {
        guard let name else { return nil }
        var buffer = [CChar](repeating: 0, count: 512)
        return buffer.withUnsafeMutableBufferPointer { pointer in
            self.openssl.X509_NAME_oneline(name, pointer.baseAddress, Int32(pointer.count)).map { String(cString: $0) }
        }
    }
}
