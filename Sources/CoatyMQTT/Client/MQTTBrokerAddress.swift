/// The host and port of an MQTT broker, parsed from a URL such as `mqtt://127.0.0.1:1883`.
///
/// Only plain TCP is supported: the schemes `mqtt` and `tcp` (as in coaty-js). TLS and WebSocket
/// schemes (`mqtts`, `tls`, `ws`, `wss`) are refused with a clear error.
public struct MQTTBrokerAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host name or IP literal (IPv6 without brackets).
    public var host: String
    /// The TCP port; 1883 when the URL has none.
    public var port: Int

    /// Creates an address from its parts.
    public init(host: String, port: Int = 1883) {
        self.host = host
        self.port = port
    }

    /// Parses a broker URL: `mqtt://host[:port]`, `tcp://host[:port]`, IPv6 as `mqtt://[::1]:1883`.
    ///
    /// - Throws: ``MQTTBrokerAddress/ParseError`` for another scheme, a missing host or a bad port.
    public init(parsing url: String) throws(ParseError) {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else {
            throw ParseError(url: url, reason: "expected mqtt://host:port")
        }
        let scheme = url[..<colon].lowercased()
        guard scheme == "mqtt" || scheme == "tcp" else {
            throw ParseError(url: url, reason: "unsupported scheme '\(scheme)' (only mqtt:// and tcp:// are supported)")
        }
        var rest = url[url.index(colon, offsetBy: 3)...]
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...].allSatisfy({ $0 == "/" }) else {
                throw ParseError(url: url, reason: "a broker URL has no path")
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
        var port = 1883
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else {
                throw ParseError(url: url, reason: "invalid port '\(portText)'")
            }
            port = value
        }
        self.init(host: String(host), port: port)
    }

    /// The address as a URL, for example `mqtt://127.0.0.1:1883`.
    public var description: String {
        self.host.contains(":") ? "mqtt://[\(self.host)]:\(self.port)" : "mqtt://\(self.host):\(self.port)"
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
