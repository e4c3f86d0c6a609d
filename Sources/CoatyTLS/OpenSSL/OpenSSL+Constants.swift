extension OpenSSL {
    /// The values of the OpenSSL 3 macros used (from its public headers, which the build does not
    /// need).
    enum Constant {
        // SSL_CTX_ctrl / SSL_ctrl commands.
        static let setMinimumProtocolVersion: Int32 = 123
        static let setSessionCacheMode: Int32 = 44
        static let addExtraChainCertificate: Int32 = 14
        static let setTLSExtensionHostName: Int32 = 55
        static let hostNameType = 0

        // SSL_CTX_set_options bits.
        static let ignoreUnexpectedEOF: UInt64 = 1 << 7
        static let noTicket: UInt64 = 1 << 14
        static let noRenegotiation: UInt64 = 1 << 30

        // SSL_CTX_set_verify modes.
        static let verifyNone: Int32 = 0
        static let verifyPeer: Int32 = 1
        static let verifyFailIfNoPeerCertificate: Int32 = 2

        // SSL_get_error results.
        static let errorNone: Int32 = 0
        static let errorSSL: Int32 = 1
        static let errorWantRead: Int32 = 2
        static let errorWantWrite: Int32 = 3
        static let errorSyscall: Int32 = 5
        static let errorZeroReturn: Int32 = 6

        // Certificate extensions and general-name types.
        static let subjectAlternativeName: Int32 = 85
        static let generalNameDNS: Int32 = 2
        static let generalNameIPAddress: Int32 = 7

        // libssl error reasons (ERR_GET_REASON) and the library number.
        static let librarySSL = 20
        static let certificateVerifyFailed = 134
        static let peerDidNotReturnCertificate = 199
        static let wrongVersionNumber = 267
        static let unsupportedProtocol = 258
        static let noProtocolsAvailable = 191

        // TLS alerts (RFC 8446 §6).
        static let alertHandshakeFailure = 40
        static let alertBadCertificate = 42
        static let alertCertificateExpired = 45
        static let alertUnknownCA = 48
        static let alertProtocolVersion = 70
        static let alertCertificateRequired = 116

        // X509_V_ERR_… verification results.
        static let verifyOK = 0
        static let verifyNotYetValid = 9
        static let verifyExpired = 10
        static let verifySelfSigned = 18
        static let verifySelfSignedInChain = 19
        static let verifyUnknownIssuerLocally = 20
        static let verifyUnableToVerifyLeaf = 21
        static let verifyHostNameMismatch = 62
        static let verifyIPAddressMismatch = 64
    }
}
