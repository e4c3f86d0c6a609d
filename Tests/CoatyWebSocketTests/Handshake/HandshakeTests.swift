import CoatyWebSocket
import Testing

/// The opening handshake: the RFC's example, what a server accepts and refuses, and the client's
/// check of the answer.
struct HandshakeTests {
    static let rfcKey = "dGhlIHNhbXBsZSBub25jZQ=="

    private static func request(_ fields: [(name: String, value: String)], startLine: String = "GET /mqtt HTTP/1.1")
        -> HTTPHead
    {
        HTTPHead(startLine: startLine, fields: fields)
    }

    private static let validFields: [(name: String, value: String)] = [
        ("Host", "server.example.com"),
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", Self.rfcKey),
        ("Sec-WebSocket-Version", "13"),
        ("Sec-WebSocket-Protocol", "mqtt"),
    ]

    private static func replacing(_ name: String, with value: String?) -> [(name: String, value: String)] {
        var fields = Self.validFields.filter { $0.name != name }
        if let value { fields.append((name, value)) }
        return fields
    }

    private static func status(of answer: WebSocketHandshake.Answer) -> String {
        switch answer {
        case .accept(let response, _): response.startLine
        case .refuse(let response, _): response.startLine
        }
    }

    @Test func rfcAcceptValue() {
        #expect(WebSocketHandshake.acceptValue(forKey: Self.rfcKey) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func acceptsAValidRequestWithSubprotocolMQTT() throws {
        guard
            case .accept(let response, let subprotocol) = WebSocketHandshake.answer(to: Self.request(Self.validFields))
        else {
            Issue.record("refused")
            return
        }
        #expect(response.startLine == "HTTP/1.1 101 Switching Protocols")
        #expect(response.value(of: "sec-websocket-accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(response.value(of: "Sec-WebSocket-Protocol") == "mqtt")
        #expect(subprotocol == "mqtt")
        // The client's check of that answer.
        #expect(try WebSocketHandshake.validate(response: response, key: Self.rfcKey) == "mqtt")
    }

    @Test(
        arguments: [
            ("mqttv3.1", "mqttv3.1"), ("chat, MQTT", "MQTT"), ("mqttv3.1, mqtt", "mqtt"), (nil, nil),
        ] as [(String?, String?)]
    )
    func selectsAnMQTTSubprotocol(offered: String?, selected: String?) {
        let answer = WebSocketHandshake.answer(
            to: Self.request(Self.replacing("Sec-WebSocket-Protocol", with: offered))
        )
        guard case .accept(let response, let subprotocol) = answer else {
            Issue.record("refused: \(answer)")
            return
        }
        #expect(subprotocol == selected)
        #expect(response.value(of: "Sec-WebSocket-Protocol") == selected)
    }

    @Test func connectionTokensAreCaseInsensitive() {
        let answer = WebSocketHandshake.answer(
            to: Self.request(
                Self.replacing("Connection", with: "keep-alive, UPGRADE").filter { $0.name != "Upgrade" }
                    + [("upgrade", "WebSocket")]
            )
        )
        #expect(Self.status(of: answer) == "HTTP/1.1 101 Switching Protocols")
    }

    @Test(
        arguments: [
            ("Sec-WebSocket-Key", "not base64!", "HTTP/1.1 400 Bad Request"),
            ("Sec-WebSocket-Key", "AAAAAAAAAAAAAAAAAAAA", "HTTP/1.1 400 Bad Request"),  // 15 bytes
            ("Sec-WebSocket-Key", nil, "HTTP/1.1 400 Bad Request"),
            ("Upgrade", nil, "HTTP/1.1 400 Bad Request"),
            ("Upgrade", "h2c", "HTTP/1.1 400 Bad Request"),
            ("Connection", "keep-alive", "HTTP/1.1 400 Bad Request"),
            ("Sec-WebSocket-Protocol", "chat", "HTTP/1.1 400 Bad Request"),
            ("Host", nil, "HTTP/1.1 400 Bad Request"),
            ("Host", "", "HTTP/1.1 400 Bad Request"),
            ("Sec-WebSocket-Version", "8", "HTTP/1.1 426 Upgrade Required"),
            ("Sec-WebSocket-Version", nil, "HTTP/1.1 426 Upgrade Required"),
        ] as [(String, String?, String)]
    )
    func refusesBadRequests(field: String, value: String?, status: String) {
        let answer = WebSocketHandshake.answer(to: Self.request(Self.replacing(field, with: value)))
        #expect(Self.status(of: answer) == status)
        if case .refuse(let response, _) = answer {
            #expect(response.value(of: "Connection") == "close")
        }
    }

    @Test(arguments: ["POST /mqtt HTTP/1.1", "GET /mqtt HTTP/1.0", "GET /mqtt", "GET mqtt HTTP/1.1"])
    func refusesOtherRequestLines(line: String) {
        #expect(
            Self.status(of: WebSocketHandshake.answer(to: Self.request(Self.validFields, startLine: line)))
                == "HTTP/1.1 400 Bad Request"
        )
    }

    @Test func parsesAndEncodesHeads() throws {
        let text = "GET / HTTP/1.1\r\nHost: a\r\nX:  padded \t\r\nx: second\r\n\r\nrest"
        let bytes = Array(text.utf8)
        let end = try #require(HTTPHead.end(in: bytes))
        #expect(Array(bytes[end...]) == Array("rest".utf8))
        let head = try #require(HTTPHead(parsing: bytes[..<end]))
        #expect(head.startLine == "GET / HTTP/1.1")
        #expect(head.value(of: "x") == "padded, second")
        #expect(HTTPHead(parsing: head.encoded[...]) == head)
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\nno colon\r\n\r\n", "GET / HTTP/1.1\r\n folded: x\r\n\r\n", "\r\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nA: b\nC: d\r\n\r\n",
    ])
    func rejectsMalformedHeads(text: String) {
        #expect(HTTPHead(parsing: Array(text.utf8)[...]) == nil)
    }

    /// Resuming the search for the blank line after bytes already searched finds what a search of the
    /// whole buffer finds, wherever the bytes were split.
    @Test func theEndOfAHeadIsFoundWhereverTheBytesWereSplit() {
        let bytes = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\nafter".utf8)
        let whole = HTTPHead.end(in: bytes)
        #expect(whole == bytes.count - 5)
        for split in 0...bytes.count {
            let first = Array(bytes[..<split])
            let found = HTTPHead.end(in: first) ?? HTTPHead.end(in: bytes, searched: split)
            #expect(found == whole, "split at \(split)")
        }
    }

    @Test func clientRejectsWrongAnswers() throws {
        let good = HTTPHead(
            startLine: "HTTP/1.1 101 Switching Protocols",
            fields: [
                ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
            ]
        )
        #expect(try WebSocketHandshake.validate(response: good, key: Self.rfcKey) == nil)
        var wrongAccept = good
        wrongAccept.fields[2].value = "AAAA"
        var notSwitching = good
        notSwitching.startLine = "HTTP/1.1 400 Bad Request"
        var otherProtocol = good
        otherProtocol.fields.append(("Sec-WebSocket-Protocol", "chat"))
        // RFC 6455 §4.1: a subprotocol the client did not offer fails the connection, even an MQTT one.
        var notOffered = good
        notOffered.fields.append(("Sec-WebSocket-Protocol", "mqttv3.1"))
        var noUpgrade = good
        noUpgrade.fields.removeFirst()
        for response in [wrongAccept, notSwitching, otherProtocol, notOffered, noUpgrade] {
            #expect(throws: WebSocketError.self) {
                try WebSocketHandshake.validate(response: response, key: Self.rfcKey)
            }
        }
    }
}
