import CoatyBroker
import CoatyMQTT

/// The TLS options of the client subcommands: `--cafile`, `--cert`, `--key` and `--insecure`, for an
/// `mqtts://` or `wss://` broker.
struct ClientTLSOptions: Equatable {
    /// The CA certificates to trust instead of the system's (`--cafile`).
    var caFile: String?
    /// The client certificate (`--cert`) and its key (`--key`), for brokers that require one.
    var certificateFile: String?
    var keyFile: String?
    /// `--insecure`: do not verify the broker's certificate.
    var isInsecure = false

    /// Consumes a TLS option; returns false if `name` is not one.
    mutating func parse(_ name: String, inline: String?, scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch name {
        case "cafile": self.caFile = try scanner.value(for: name, inline: inline)
        case "cert": self.certificateFile = try scanner.value(for: name, inline: inline)
        case "key": self.keyFile = try scanner.value(for: name, inline: inline)
        case "insecure": self.isInsecure = try scanner.flag(name, inline: inline)
        default: return false
        }
        return true
    }

    /// Checks that a certificate comes with its key, and that TLS options go with an `mqtts://` or
    /// `wss://` broker.
    func validate(broker: String, subcommand: String) throws(UsageError) {
        if (self.certificateFile == nil) != (self.keyFile == nil) {
            throw UsageError("'--cert' and '--key' go together", subcommand: subcommand)
        }
        let isSet = self.caFile != nil || self.certificateFile != nil || self.isInsecure
        if isSet && !broker.hasPrefix("mqtts://") && !broker.hasPrefix("wss://") {
            throw UsageError(
                "'--cafile', '--cert', '--key' and '--insecure' are for an mqtts:// or wss:// broker, not '\(broker)'",
                subcommand: subcommand
            )
        }
    }

    /// The transport's TLS options.
    var transportOptions: MQTTTransport.TLSOptions {
        MQTTTransport.TLSOptions(
            trustedCertificates: self.caFile.map { .file($0) },
            certificateVerification: self.isInsecure ? .disabled : .full,
            clientCertificate: self.certificateFile.map { .file($0) },
            clientKey: self.keyFile.map { .file($0) }
        )
    }
}

/// The TLS listener options of `coaty broker`: `--tls-port`, `--wss-port`, `--cert`, `--key`,
/// `--cafile` and `--require-certificate`.
struct BrokerTLSOptions: Equatable {
    var port: Int?
    /// The port of the WebSocket-over-TLS listener.
    var webSocketPort: Int?
    var certificateFile: String?
    var keyFile: String?
    var caFile: String?
    var requiresClientCertificate = false

    /// Consumes a TLS option; returns false if `name` is not one.
    mutating func parse(_ name: String, inline: String?, scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch name {
        case "tls-port", "wss-port":
            let port = try parsePort(try scanner.value(for: name, inline: inline), option: name, subcommand: "broker")
            if name == "tls-port" { self.port = port } else { self.webSocketPort = port }
        case "cert": self.certificateFile = try scanner.value(for: name, inline: inline)
        case "key": self.keyFile = try scanner.value(for: name, inline: inline)
        case "cafile": self.caFile = try scanner.value(for: name, inline: inline)
        case "require-certificate": self.requiresClientCertificate = try scanner.flag(name, inline: inline)
        default: return false
        }
        return true
    }

    /// The listener, `nil` without `--tls-port`.
    ///
    /// - Throws: ``UsageError`` for `--tls-port` without `--cert` and `--key`, TLS options without
    ///   `--tls-port`, or `--require-certificate` without `--cafile`.
    func listener() throws(UsageError) -> MQTTBroker.TLSListener? {
        guard let port = self.port else {
            if self.certificateFile != nil || self.keyFile != nil || self.caFile != nil
                || self.requiresClientCertificate || self.webSocketPort != nil
            {
                throw UsageError(
                    "'--wss-port', '--cert', '--key', '--cafile' and '--require-certificate' need '--tls-port'",
                    subcommand: "broker"
                )
            }
            return nil
        }
        guard let certificateFile = self.certificateFile, let keyFile = self.keyFile else {
            throw UsageError("'--tls-port' needs '--cert' and '--key'", subcommand: "broker")
        }
        if self.requiresClientCertificate && self.caFile == nil {
            throw UsageError("'--require-certificate' needs '--cafile' to check the certificates", subcommand: "broker")
        }
        return MQTTBroker.TLSListener(
            port: port,
            certificateFile: certificateFile,
            keyFile: keyFile,
            caFile: self.caFile,
            requiresClientCertificate: self.requiresClientCertificate,
            webSocketPort: self.webSocketPort
        )
    }
}
