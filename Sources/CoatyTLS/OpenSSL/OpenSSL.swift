import CoatySockets

/// The OpenSSL 3 functions TLS uses, looked up in libssl and libcrypto at run time.
///
/// Loading at run time (not linking) keeps OpenSSL out of the build: an app that never connects with
/// TLS builds and runs with the Swift toolchain alone, and one that does needs only the shared
/// libraries (Debian's `libssl3`), not their headers. Pointers to OpenSSL objects are opaque here.
struct OpenSSL: @unchecked Sendable {
    typealias Pointer = OpaquePointer
    typealias Raw = UnsafeMutableRawPointer

    /// The library, loaded once per process; or why it cannot be used.
    static let shared = Result { () throws(TLSError) -> OpenSSL in try OpenSSL() }

    /// The loaded library, or ``TLSError`` `.libraryUnavailable`.
    static func load() throws(TLSError) -> OpenSSL {
        try self.shared.get()
    }

    // libcrypto: memory BIOs, errors, certificates and keys.
    let BIO_s_mem: @convention(c) () -> Pointer?
    let BIO_new: @convention(c) (Pointer?) -> Pointer?
    let BIO_new_mem_buf: @convention(c) (UnsafeRawPointer?, Int32) -> Pointer?
    let BIO_new_file: @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Pointer?
    let BIO_free: @convention(c) (Pointer?) -> Int32
    let BIO_read: @convention(c) (Pointer?, Raw?, Int32) -> Int32
    let BIO_write: @convention(c) (Pointer?, UnsafeRawPointer?, Int32) -> Int32
    let BIO_ctrl_pending: @convention(c) (Pointer?) -> Int
    let ERR_get_error: @convention(c) () -> UInt
    let ERR_clear_error: @convention(c) () -> Void
    let ERR_peek_error: @convention(c) () -> UInt
    let ERR_error_string_n: @convention(c) (UInt, UnsafeMutablePointer<CChar>?, Int) -> Void
    let X509_verify_cert_error_string: @convention(c) (Int) -> UnsafePointer<CChar>?
    let PEM_read_bio_X509: @convention(c) (Pointer?, Raw?, Raw?, Raw?) -> Pointer?
    let PEM_read_bio_PrivateKey: @convention(c) (Pointer?, Raw?, Raw?, Raw?) -> Pointer?
    let X509_free: @convention(c) (Pointer?) -> Void
    let EVP_PKEY_free: @convention(c) (Pointer?) -> Void
    let X509_STORE_add_cert: @convention(c) (Pointer?, Pointer?) -> Int32
    let X509_get_ext_d2i: @convention(c) (Pointer?, Int32, Raw?, Raw?) -> Raw?
    let X509_get0_notAfter: @convention(c) (Pointer?) -> Pointer?
    let X509_get0_notBefore: @convention(c) (Pointer?) -> Pointer?
    let X509_get_subject_name: @convention(c) (Pointer?) -> Pointer?
    let X509_get_issuer_name: @convention(c) (Pointer?) -> Pointer?
    let X509_NAME_oneline:
        @convention(c) (Pointer?, UnsafeMutablePointer<CChar>?, Int32) -> UnsafeMutablePointer<CChar>?
    let X509_VERIFY_PARAM_set1_ip_asc: @convention(c) (Pointer?, UnsafePointer<CChar>?) -> Int32
    let ASN1_TIME_print: @convention(c) (Pointer?, Pointer?) -> Int32
    let ASN1_STRING_get0_data: @convention(c) (Pointer?) -> UnsafePointer<UInt8>?
    let ASN1_STRING_length: @convention(c) (Pointer?) -> Int32
    let OPENSSL_sk_num: @convention(c) (Pointer?) -> Int32
    let OPENSSL_sk_value: @convention(c) (Pointer?, Int32) -> Raw?
    let GENERAL_NAMES_free: @convention(c) (Pointer?) -> Void

    // libssl: contexts and connections.
    let TLS_client_method: @convention(c) () -> Pointer?
    let TLS_server_method: @convention(c) () -> Pointer?
    let SSL_CTX_new: @convention(c) (Pointer?) -> Pointer?
    let SSL_CTX_free: @convention(c) (Pointer?) -> Void
    let SSL_CTX_ctrl: @convention(c) (Pointer?, Int32, Int, Raw?) -> Int
    let SSL_CTX_set_options: @convention(c) (Pointer?, UInt64) -> UInt64
    let SSL_CTX_set_verify: @convention(c) (Pointer?, Int32, Raw?) -> Void
    let SSL_CTX_set_default_verify_paths: @convention(c) (Pointer?) -> Int32
    let SSL_CTX_get_cert_store: @convention(c) (Pointer?) -> Pointer?
    let SSL_CTX_use_certificate: @convention(c) (Pointer?, Pointer?) -> Int32
    let SSL_CTX_use_PrivateKey: @convention(c) (Pointer?, Pointer?) -> Int32
    let SSL_CTX_check_private_key: @convention(c) (Pointer?) -> Int32
    let SSL_CTX_set_alpn_protos: @convention(c) (Pointer?, UnsafePointer<UInt8>?, UInt32) -> Int32
    let SSL_CTX_set_num_tickets: @convention(c) (Pointer?, Int) -> Int32
    let SSL_new: @convention(c) (Pointer?) -> Pointer?
    let SSL_free: @convention(c) (Pointer?) -> Void
    let SSL_set_bio: @convention(c) (Pointer?, Pointer?, Pointer?) -> Void
    let SSL_set_connect_state: @convention(c) (Pointer?) -> Void
    let SSL_set_accept_state: @convention(c) (Pointer?) -> Void
    let SSL_do_handshake: @convention(c) (Pointer?) -> Int32
    let SSL_read: @convention(c) (Pointer?, Raw?, Int32) -> Int32
    let SSL_write: @convention(c) (Pointer?, UnsafeRawPointer?, Int32) -> Int32
    let SSL_get_error: @convention(c) (Pointer?, Int32) -> Int32
    let SSL_has_pending: @convention(c) (Pointer?) -> Int32
    let SSL_shutdown: @convention(c) (Pointer?) -> Int32
    let SSL_ctrl: @convention(c) (Pointer?, Int32, Int, Raw?) -> Int
    let SSL_set1_host: @convention(c) (Pointer?, UnsafePointer<CChar>?) -> Int32
    let SSL_get0_param: @convention(c) (Pointer?) -> Pointer?
    let SSL_get_verify_result: @convention(c) (Pointer?) -> Int
    let SSL_get_peer_cert_chain: @convention(c) (Pointer?) -> Pointer?
    let SSL_get_version: @convention(c) (Pointer?) -> UnsafePointer<CChar>?
    let SSL_get0_alpn_selected: @convention(c) (Pointer?, Raw?, Raw?) -> Void

    /// Library file names tried in order: OpenSSL 3's on Linux, then Homebrew's on macOS.
    static let libsslNames = ["libssl.so.3", "libssl.3.dylib"]
    static let libcryptoNames = ["libcrypto.so.3", "libcrypto.3.dylib"]

    private init() throws(TLSError) {
        guard let crypto = DynamicLibrary(loadingFirstOf: Self.libcryptoNames),
            let ssl = DynamicLibrary(loadingFirstOf: Self.libsslNames)
        else {
            throw TLSError(.libraryUnavailable, "TLS needs OpenSSL 3 (libssl.so.3): install libssl3")
        }
        var missing: [String] = []
        func look<F>(_ library: DynamicLibrary, _ name: String) -> F {
            if let function = library.function(name, as: F.self) { return function }
            missing.append(name)
            // Never called: a missing name makes the initialiser throw below.
            return unsafeBitCast(Self.unreachable as @convention(c) () -> Void, to: F.self)
        }
        self.BIO_s_mem = look(crypto, "BIO_s_mem")
        self.BIO_new = look(crypto, "BIO_new")
        self.BIO_new_mem_buf = look(crypto, "BIO_new_mem_buf")
        self.BIO_new_file = look(crypto, "BIO_new_file")
        self.BIO_free = look(crypto, "BIO_free")
        self.BIO_read = look(crypto, "BIO_read")
        self.BIO_write = look(crypto, "BIO_write")
        self.BIO_ctrl_pending = look(crypto, "BIO_ctrl_pending")
        self.ERR_get_error = look(crypto, "ERR_get_error")
        self.ERR_clear_error = look(crypto, "ERR_clear_error")
        self.ERR_peek_error = look(crypto, "ERR_peek_error")
        self.ERR_error_string_n = look(crypto, "ERR_error_string_n")
        self.X509_verify_cert_error_string = look(crypto, "X509_verify_cert_error_string")
        self.PEM_read_bio_X509 = look(crypto, "PEM_read_bio_X509")
        self.PEM_read_bio_PrivateKey = look(crypto, "PEM_read_bio_PrivateKey")
        self.X509_free = look(crypto, "X509_free")
        self.EVP_PKEY_free = look(crypto, "EVP_PKEY_free")
        self.X509_STORE_add_cert = look(crypto, "X509_STORE_add_cert")
        self.X509_get_ext_d2i = look(crypto, "X509_get_ext_d2i")
        self.X509_get0_notAfter = look(crypto, "X509_get0_notAfter")
        self.X509_get0_notBefore = look(crypto, "X509_get0_notBefore")
        self.X509_get_subject_name = look(crypto, "X509_get_subject_name")
        self.X509_get_issuer_name = look(crypto, "X509_get_issuer_name")
        self.X509_NAME_oneline = look(crypto, "X509_NAME_oneline")
        self.X509_VERIFY_PARAM_set1_ip_asc = look(crypto, "X509_VERIFY_PARAM_set1_ip_asc")
        self.ASN1_TIME_print = look(crypto, "ASN1_TIME_print")
        self.ASN1_STRING_get0_data = look(crypto, "ASN1_STRING_get0_data")
        self.ASN1_STRING_length = look(crypto, "ASN1_STRING_length")
        self.OPENSSL_sk_num = look(crypto, "OPENSSL_sk_num")
        self.OPENSSL_sk_value = look(crypto, "OPENSSL_sk_value")
        self.GENERAL_NAMES_free = look(crypto, "GENERAL_NAMES_free")
        self.TLS_client_method = look(ssl, "TLS_client_method")
        self.TLS_server_method = look(ssl, "TLS_server_method")
        self.SSL_CTX_new = look(ssl, "SSL_CTX_new")
        self.SSL_CTX_free = look(ssl, "SSL_CTX_free")
        self.SSL_CTX_ctrl = look(ssl, "SSL_CTX_ctrl")
        self.SSL_CTX_set_options = look(ssl, "SSL_CTX_set_options")
        self.SSL_CTX_set_verify = look(ssl, "SSL_CTX_set_verify")
        self.SSL_CTX_set_default_verify_paths = look(ssl, "SSL_CTX_set_default_verify_paths")
        self.SSL_CTX_get_cert_store = look(ssl, "SSL_CTX_get_cert_store")
        self.SSL_CTX_use_certificate = look(ssl, "SSL_CTX_use_certificate")
        self.SSL_CTX_use_PrivateKey = look(ssl, "SSL_CTX_use_PrivateKey")
        self.SSL_CTX_check_private_key = look(ssl, "SSL_CTX_check_private_key")
        self.SSL_CTX_set_alpn_protos = look(ssl, "SSL_CTX_set_alpn_protos")
        self.SSL_CTX_set_num_tickets = look(ssl, "SSL_CTX_set_num_tickets")
        self.SSL_new = look(ssl, "SSL_new")
        self.SSL_free = look(ssl, "SSL_free")
        self.SSL_set_bio = look(ssl, "SSL_set_bio")
        self.SSL_set_connect_state = look(ssl, "SSL_set_connect_state")
        self.SSL_set_accept_state = look(ssl, "SSL_set_accept_state")
        self.SSL_do_handshake = look(ssl, "SSL_do_handshake")
        self.SSL_read = look(ssl, "SSL_read")
        self.SSL_write = look(ssl, "SSL_write")
        self.SSL_get_error = look(ssl, "SSL_get_error")
        self.SSL_has_pending = look(ssl, "SSL_has_pending")
        self.SSL_shutdown = look(ssl, "SSL_shutdown")
        self.SSL_ctrl = look(ssl, "SSL_ctrl")
        self.SSL_set1_host = look(ssl, "SSL_set1_host")
        self.SSL_get0_param = look(ssl, "SSL_get0_param")
        self.SSL_get_verify_result = look(ssl, "SSL_get_verify_result")
        self.SSL_get_peer_cert_chain = look(ssl, "SSL_get_peer_cert_chain")
        self.SSL_get_version = look(ssl, "SSL_get_version")
        self.SSL_get0_alpn_selected = look(ssl, "SSL_get0_alpn_selected")
        guard missing.isEmpty else {
            throw TLSError(
                .libraryUnavailable,
                "TLS needs OpenSSL 3: \(ssl.name) lacks \(missing.joined(separator: ", "))"
            )
        }
    }

    /// The placeholder for a function the library lacks; never called.
    private static let unreachable: @convention(c) () -> Void = { fatalError("missing OpenSSL function") }
}
