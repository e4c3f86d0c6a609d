/// The host and port of an MQTT broker, parsed from a URL such as `mqtt://127.0.0.1:1883` or
/// `ws://127.0.0.1:9883/mqtt`.
///
/// The schemes `mqtt` and `tcp` (as in coaty-js) mean plain TCP; `ws` means MQTT over WebSocket
/// (RFC 6455, binary frames, subprotocol `mqtt`), as browser agents using mqtt.js connect. TLS schemes
/// (`mqtts`, `tls`, `wss`) are refused with a clear error.
public struct MQTTBrokerAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host name or IP literal (IPv6 without brackets).
    public var host: String
    /// The TCP port; 1883 when an `mqtt://` URL has none, 80 for `ws://`.
    public var port: Int
    /// The HTTP request path when the broker is reached over WebSocket (`ws://`), for example
    /// `"/mqtt"`; `nil` for plain TCP.
    public var webSocketPath: String?

    /// Creates an address from its parts.
    ///
    /// - Parameters:
    ///   - host: The host name or IP literal.
    ///   - port: The port. Defaults to 1883.
    ///   - webSocketPath: The path to connect to over WebSocket, or `nil` (the default) for TCP.
    public init(host: String, port: Int = 1883, webSocketPath: String? = nil) {
        self.host = host
        self.port = port
        self.webSocketPath = webSocketPath
    }

    /// Parses a broker URL: `mqtt://host[:port]`, `tcp://host[:port]`, `ws://host[:port][/path]`
    /// (path `/` if omitted), IPv6 as `mqtt://[::1]:1883`.
    ///
    /// - Throws: ``MQTTBrokerAddress/ParseError`` for another scheme, a missing host, a bad port or a
    ///   path in an `mqtt://` URL.
    public init(parsing url: String) throws(ParseError) {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else {
            throw ParseError(url: url, reason: "expected mqtt://host:port")
        }
        let scheme = url[..<colon].lowercased()
        guard scheme == "mqtt" || scheme == "tcp" || scheme == "ws" else {
            throw ParseError(
                url: url,
                reason: "unsupported scheme '\(scheme)' (only mqtt://, tcp:// and ws:// are supported)"
            )
        }
        let isWebSocket = scheme == "ws"
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
                    throw ParseError(url: url, reason: "an mqtt:// broker URL has no path")
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
        var port = isWebSocket ? 80 : 1883
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else {
                throw ParseError(url: url, reason: "invalid port '\(portText)'")
            }
            port = value
        }
        self.init(host: String(host), port: port, webSocketPath: isWebSocket ? (path ?? "/") : nil)
    }

    /// The address as a URL, for example `mqtt://127.0.0.1:1883` or `ws://127.0.0.1:9883/mqtt`.
    public var description: String {
        let authority = self.host.contains(":") ? "[\(self.host)]:\(self.port)" : "\(self.host):\(self.port)"
        guard let path = self.webSocketPath else { return "mqtt://\(authority)" }
        return "ws://\(authority)\(path)"
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
