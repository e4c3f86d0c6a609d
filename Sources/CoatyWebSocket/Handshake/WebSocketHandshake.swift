/// The opening handshake of RFC 6455 §4, as pure functions over ``HTTPHead``s: a client's request, a
/// server's answer to it, and the client's check of that answer.
package enum WebSocketHandshake {
    /// The GUID RFC 6455 appends to the key before hashing.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The subprotocols a server selects, in order of preference: `mqtt` (MQTT 3.1.1 and 5, what
    /// mqtt.js and paho send) and `mqttv3.1` (older clients; mosquitto accepts it too).
    package static let mqttSubprotocols = ["mqtt", "mqttv3.1"]

    /// The largest handshake head accepted, request or response: 8 KiB.
    package static let defaultMaximumHeadSize = 8192

    /// The `Sec-WebSocket-Accept` value for a `Sec-WebSocket-Key`: base64(SHA-1(key + GUID)).
    package static func acceptValue(forKey key: String) -> String {
        Base64.encode(SHA1.hash(Array((key + Self.guid).utf8)))
    }

    /// A fresh `Sec-WebSocket-Key`: 16 random bytes in base64.
    package static func makeKey<Generator: RandomNumberGenerator>(using generator: inout Generator) -> String {
        Base64.encode((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    // MARK: - Client

    /// The one subprotocol a client of this package offers.
    package static let offeredSubprotocol = "mqtt"

    /// A client's opening request for `path` on `host:port`, offering subprotocol `mqtt`.
    package static func request(host: String, port: Int, path: String, key: String) -> HTTPHead {
        let hostField = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return HTTPHead(
            startLine: "GET \(path) HTTP/1.1",
            fields: [
                ("Host", hostField),
                ("Upgrade", "websocket"),
                ("Connection", "Upgrade"),
                ("Sec-WebSocket-Key", key),
                ("Sec-WebSocket-Version", "13"),
                ("Sec-WebSocket-Protocol", Self.offeredSubprotocol),
            ]
        )
    }

    /// Checks a server's response to a request made with `key`.
    ///
    /// - Returns: The subprotocol the server selected, if it named one.
    /// - Throws: ``WebSocketError`` `.handshakeFailed`: not a 101, a missing or wrong `Upgrade`,
    ///   `Connection` or `Sec-WebSocket-Accept`, or a subprotocol other than the `mqtt` the request
    ///   offered (RFC 6455 §4.1: the client fails a connection whose server selected one it did not
    ///   offer).
    package static func validate(response: HTTPHead, key: String) throws(WebSocketError) -> String? {
        let status = response.startLine.split(separator: " ", maxSplits: 2)
        guard status.count >= 2, status[0].hasPrefix("HTTP/1."), status[1] == "101" else {
            throw WebSocketError(.handshakeFailed, "the server answered '\(response.startLine)' instead of 101")
        }
        guard response.tokens(of: "Upgrade").contains("websocket") else {
            throw WebSocketError(.handshakeFailed, "the response lacks 'Upgrade: websocket'")
        }
        guard response.tokens(of: "Connection").contains("upgrade") else {
            throw WebSocketError(.handshakeFailed, "the response lacks 'Connection: Upgrade'")
        }
        guard response.value(of: "Sec-WebSocket-Accept") == Self.acceptValue(forKey: key) else {
            throw WebSocketError(.handshakeFailed, "wrong or missing Sec-WebSocket-Accept")
        }
        guard let selected = response.value(of: "Sec-WebSocket-Protocol") else { return nil }
        guard selected == Self.offeredSubprotocol else {
            throw WebSocketError(.handshakeFailed, "the server selected subprotocol '\(selected)'")
        }
        return selected
    }

    // MARK: - Server

    /// A server's decision on an opening request.
    package enum Answer: Sendable, Hashable {
        /// Accept: send `response` (101 Switching Protocols) and speak WebSocket with `subprotocol`.
        case accept(response: HTTPHead, subprotocol: String?)
        /// Refuse: send `response` (400, 426, …) and close; `reason` says why, for logs.
        case refuse(response: HTTPHead, reason: String)
    }

    /// Answers an opening request.
    ///
    /// Accepts a `GET` over HTTP/1.1 or later with `Upgrade: websocket`, a `Connection` field whose
    /// tokens include `upgrade` (case-insensitive), `Sec-WebSocket-Version: 13` and a
    /// `Sec-WebSocket-Key` that is the base64 of 16 bytes, and a `Host` field (RFC 6455 §4.2.1); any
    /// path is accepted. Of the offered subprotocols it selects `mqtt` or, failing that, `mqttv3.1`,
    /// compared case-insensitively as mosquitto does and answered in the client's own spelling, which
    /// is what a client checks its offer against; a request that offers others only is refused, and
    /// one that offers none is accepted without a subprotocol. A wrong version is answered with 426 and
    /// `Sec-WebSocket-Version: 13` (RFC 6455 §4.4), anything else wrong with 400.
    package static func answer(to request: HTTPHead) -> Answer {
        let parts = request.startLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "GET", parts[1].hasPrefix("/") || parts[1].contains("://"),
            parts[2].hasPrefix("HTTP/1."), parts[2] != "HTTP/1.0"
        else {
            return Self.refusal(400, "Bad Request", reason: "not a GET over HTTP/1.1: '\(request.startLine)'")
        }
        guard request.value(of: "Host").map({ !$0.isEmpty }) == true else {
            return Self.refusal(400, "Bad Request", reason: "no Host field")
        }
        guard request.tokens(of: "Upgrade").contains("websocket") else {
            return Self.refusal(400, "Bad Request", reason: "no 'Upgrade: websocket'")
        }
        guard request.tokens(of: "Connection").contains("upgrade") else {
            return Self.refusal(400, "Bad Request", reason: "no 'upgrade' in the Connection field")
        }
        guard request.value(of: "Sec-WebSocket-Version") == "13" else {
            return Self.refusal(
                426,
                "Upgrade Required",
                reason: "unsupported Sec-WebSocket-Version '\(request.value(of: "Sec-WebSocket-Version") ?? "")'",
                fields: [("Sec-WebSocket-Version", "13")]
            )
        }
        guard let key = request.value(of: "Sec-WebSocket-Key"), Base64.decode(key)?.count == 16 else {
            return Self.refusal(400, "Bad Request", reason: "a missing or malformed Sec-WebSocket-Key")
        }
        let offered = (request.value(of: "Sec-WebSocket-Protocol") ?? "").split(separator: ",")
            .map { String($0.trimmingASCIISpaces()) }.filter { !$0.isEmpty }
        let subprotocol = Self.mqttSubprotocols.lazy.compactMap { wanted in
            offered.first { $0.lowercased() == wanted }
        }.first
        if !offered.isEmpty && subprotocol == nil {
            return Self.refusal(400, "Bad Request", reason: "no MQTT subprotocol offered: \(offered)")
        }
        var fields: [(name: String, value: String)] = [
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Accept", Self.acceptValue(forKey: key)),
        ]
        if let subprotocol { fields.append(("Sec-WebSocket-Protocol", subprotocol)) }
        return .accept(
            response: HTTPHead(startLine: "HTTP/1.1 101 Switching Protocols", fields: fields),
            subprotocol: subprotocol
        )
    }

    /// The answer to a request head larger than allowed: 431 Request Header Fields Too Large.
    package static let tooLarge = Self.refusalHead(431, "Request Header Fields Too Large", fields: [])

    /// The answer to a request that is not valid HTTP: 400 Bad Request.
    package static let badRequest = Self.refusalHead(400, "Bad Request", fields: [])

    private static func refusal(
        _ status: Int,
        _ text: String,
        reason: String,
        fields: [(name: String, value: String)] = []
    ) -> Answer {
        .refuse(response: Self.refusalHead(status, text, fields: fields), reason: reason)
    }

    private static func refusalHead(_ status: Int, _ text: String, fields: [(name: String, value: String)]) -> HTTPHead
    {
        HTTPHead(
            startLine: "HTTP/1.1 \(status) \(text)",
            fields: fields + [("Connection", "close"), ("Content-Length", "0")]
        )
    }
}
