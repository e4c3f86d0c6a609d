/// The host and port of an MQTT broker, parsed from a URL such as `mqtt://127.0.0.1:1883`,
/// `mqtts://broker.example:8883` or `ws://127.0.0.1:9883/mqtt`.
///
/// The schemes `mqtt` and `tcp` (as in coaty-js) mean plain TCP; `mqtts`, `tls` and `ssl` (as in
/// MQTT.js) mean TLS over TCP; `ws` means MQTT over WebSocket (RFC 6455, binary frames, subprotocol
/// `mqtt`), as browser agents using mqtt.js connect, and `wss` the same over TLS.
public struct MQTTBrokerAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host name or IP literal (IPv6 without brackets).
    public var host: String
    /// The TCP port; 1883 when an `mqtt://` URL has none, 8883 for `mqtts://`, 80 for `ws://`, 443 for
    /// `wss://`.
    public var port: Int
    /// Whether the connection is secured with TLS (`mqtts://`, `wss://`).
    public var usesTLS: Bool
    /// The HTTP request path when the broker is reached over WebSocket (`ws://`, `wss://`), for example
    /// `"/mqtt"`; `nil` for plain TCP.
    public var webSocketPath: String?

    /// Creates an address from its parts.
    ///
    /// - Parameters:
    ///   - host: The host name or IP literal.
    ///   - port: The port. Defaults to 1883.
    ///   - webSocketPath: The path to connect to over WebSocket, or `nil` (the default) for TCP.
    ///   - usesTLS: Whether to connect with TLS; defaults to `false`.
    public init(host: String, port: Int = 1883, webSocketPath: String? = nil, usesTLS: Bool = false) {
        self.host = host
        self.port = port
        self.webSocketPath = webSocketPath
        self.usesTLS = usesTLS
    }

    /// Parses a broker URL: `mqtt://host[:port]`, `tcp://host[:port]`, `mqtts://host[:port]` (also
    /// `tls://`, `ssl://`), `ws://host[:port][/path]` and `wss://host[:port][/path]` (path `/` if
    /// omitted), IPv6 as `mqtt://[::1]:1883`.
    ///
    /// - Throws: ``MQTTBrokerAddress/ParseError`` for another scheme, a missing host, a bad port or a
    ///   path in an `mqtt://` URL.
    public init(parsing url: String) throws(ParseError) {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else {
            throw ParseError(url: url, reason: "expected mqtt://host:port")
        }
        let scheme = url[..<colon].lowercased()
        let usesTLS = ["mqtts", "tls", "ssl", "wss"].contains(scheme)
        guard usesTLS || ["mqtt", "tcp", "ws"].contains(scheme) else {
            throw ParseError(
                url: url,
                reason:
                    "unsupported scheme '\(scheme)' (only mqtt://, tcp://, mqtts://, ws:// and wss:// are supported)"
            )
        }
        let isWebSocket = scheme == "ws" || scheme == "wss"
        var rest = url[url.index(colon, offsetBy: 3)...]
        var path: String?
        if let slash = rest.firstIndex(of: "/") {
            if isWebSocket {
                path = String(rest[slash...])
                guard !path!.contains(where: { $0 == " " || $0.isNewline || $0 == "#" }) else {
                    throw ParseError(url: url, reason: "invalid path '\(path!)'")
                }
            } else {
                guard rest[slash...].allSatisfy({ $0 == "/" }) else {
                    throw ParseError(url: url, reason: "an \(scheme):// broker URL has no path")
                }
            }
            rest = rest[..<slash]
        }
        let host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw ParseError(url: url, reason: "unterminated IPv6 literal")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ParseError(url: url, reason: "unexpected text after the host") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty, !host.contains("@") else { throw ParseError(url: url, reason: "missing or invalid host") }
        var port = isWebSocket ? (usesTLS ? 443 : 80) : (usesTLS ? 8883 : 1883)
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else {
                throw ParseError(url: url, reason: "invalid port '\(portText)'")
            }
            port = value
        }
        self.init(host: String(host), port: port, webSocketPath: isWebSocket ? (path ?? "/") : nil, usesTLS: usesTLS)
    }

    /// The address as a URL, for example `mqtt://127.0.0.1:1883`, `mqtts://127.0.0.1:8883`,
    /// `ws://127.0.0.1:9883/mqtt` or `wss://127.0.0.1:443/mqtt`.
    public var description: String {
        let authority = self.host.contains(":") ? "[\(self.host)]:\(self.port)" : "\(self.host):\(self.port)"
        guard let path = self.webSocketPath else {
            return self.usesTLS ? "mqtts://\(authority)" : "mqtt://\(authority)"
        }
        return self.usesTLS ? "wss://\(authority)\(path)" : "ws://\(authority)\(path)"
    }

    /// Why a broker URL cannot be parsed.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The URL as given.
        public var url: String
        /// What is wrong with it.
        public var reason: String

        public var description: String { "invalid broker URL '\(self.url)': \(self.reason)" }
    }
}
