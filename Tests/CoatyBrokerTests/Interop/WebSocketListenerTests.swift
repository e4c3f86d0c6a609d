import CoatyBroker
import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyMQTTPackets
import CoatySockets
import CoatyTransport
import CoatyWebSocket
import TestSupport
import Testing

/// The broker's WebSocket listener: paho-mqtt over `transport="websockets"` with our client on TCP,
/// the handshake timeout, refused handshakes and the frame limit.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketListenerTests {
    /// paho subscribes over WebSocket to `to_paho`, then publishes (QoS 2) to `from_paho`, and prints
    /// the message it receives; it gives up after 20 s.
    static let pahoScript = #"""
        import os, sys, threading, paho.mqtt.client as mqtt
        threading.Timer(20, lambda: os._exit(3)).start()
        port, to_paho, from_paho = int(sys.argv[1]), sys.argv[2], sys.argv[3]
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="paho-ws", transport="websockets")
        c.ws_set_options(path="/mqtt")
        def on_connect(c, u, *a): c.subscribe(to_paho, qos=1)
        def on_subscribe(c, u, *a): c.publish(from_paho, b"from paho \xff\x00" * 2000, qos=2)
        def on_message(c, u, m):
            sys.stdout.write(f"{m.topic} {m.qos} {m.payload.hex()}\n"); sys.stdout.flush(); c.disconnect()
        c.on_connect, c.on_subscribe, c.on_message = on_connect, on_subscribe, on_message
        c.connect("127.0.0.1", port, 60)
        c.loop_forever(timeout=1.0)
        os._exit(0)
        """#

    @Test func pahoOverWebSocketExchangesWithATCPClient() async throws {
        let configuration = MQTTBroker.Configuration(webSocketPort: 0)
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let webSocketPort = try #require(broker.webSocketPort)
            let events = broker.events()
            let (messages, continuation) = AsyncStream.makeStream(of: TransportMessage.self)
            let transport = MQTTTransport(brokerURL: "mqtt://127.0.0.1:\(broker.port)")
            try await transport.withMQTTConnection(.init(clientID: "tcp"), onMessage: { continuation.yield($0) }) {
                connection in
                try await connection.subscribe(to: [TopicFilter("ws/from-paho")], qos: .exactlyOnce)
                try await withThrowingTaskGroup(of: ProcessResult.self) { group in
                    group.addTask {
                        try await runProcess(
                            "/usr/bin/env",
                            ["python3", "-c", Self.pahoScript, "\(webSocketPort)", "ws/to-paho", "ws/from-paho"]
                        )
                    }
                    var iterator = messages.makeAsyncIterator()
                    let received = await iterator.next()
                    #expect(received?.topic == "ws/from-paho")
                    #expect(received?.qos == .exactlyOnce)
                    #expect(
                        received?.payload
                            == Array(repeating: Array("from paho ".utf8) + [0xFF, 0x00], count: 2000).flatMap { $0 }
                    )
                    // paho subscribed before it published, so this reaches it.
                    try await connection.publish(
                        TransportMessage(topic: "ws/to-paho", payload: [0x00, 0x01, 0xFE], qos: .atLeastOnce)
                    )
                    let result = try #require(try await group.next())
                    #expect(result.status == 0, "\(result.errorOutput)")
                    #expect(result.output == "ws/to-paho 1 0001fe\n")
                }
            }
            // paho's client id, from its CONNECT over WebSocket.
            _ = await events.first {
                if case .clientConnected("paho-ws", _, _) = $0 { true } else { false }
            }
        }
    }

    /// A peer that opens a TCP connection to the WebSocket port and says nothing is closed after the
    /// connect timeout.
    @Test func silentPeerIsClosedAfterTheConnectTimeout() async throws {
        let configuration = MQTTBroker.Configuration(connectTimeout: .milliseconds(300), webSocketPort: 0)
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: try #require(broker.webSocketPort))
            let start = ContinuousClock.now
            let bytes = try? await tcp.read()
            #expect(bytes?.isEmpty ?? true)
            #expect(ContinuousClock.now - start >= .milliseconds(250))
        }
    }

    @Test func malformedHandshakeIsAnsweredWith400AndTheListenerKeepsServing() async throws {
        try await MQTTBroker.withRunning(configuration: MQTTBroker.Configuration(webSocketPort: 0)) { broker in
            let webSocketPort = try #require(broker.webSocketPort)
            let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: webSocketPort)
            try await tcp.write(Array("GET /mqtt HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n".utf8))
            var response: [UInt8] = []
            while let chunk = try? await tcp.read(), !chunk.isEmpty { response += chunk }
            #expect(String(decoding: response, as: UTF8.self).hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
            let transport = MQTTTransport(brokerURL: "ws://127.0.0.1:\(webSocketPort)/")
            try await transport.withConnection(.init(clientID: "after"), onMessage: { _ in }) { connection in
                try await connection.publish(TransportMessage(topic: "a", payload: [1], qos: .atLeastOnce))
            }
        }
    }

    /// Connects to the broker's WebSocket port and completes the opening handshake by hand; returns the
    /// connection and the bytes that came after the 101 response in the same reads.
    static func openWebSocket(port: Int) async throws -> (TCPConnection, [UInt8]) {
        let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        let key = "dGhlIHNhbXBsZSBub25jZQ=="
        try await tcp.write(WebSocketHandshake.request(host: "127.0.0.1", port: port, path: "/", key: key).encoded)
        var bytes: [UInt8] = []
        while HTTPHead.end(in: bytes) == nil {
            let chunk = try await tcp.read()
            try #require(!chunk.isEmpty)
            bytes += chunk
        }
        let end = try #require(HTTPHead.end(in: bytes))
        #expect(String(decoding: bytes[..<end], as: UTF8.self).hasPrefix("HTTP/1.1 101 "))
        return (tcp, Array(bytes[end...]))
    }

    /// After a client's DISCONNECT the broker ends the WebSocket with a close frame (1000), so a
    /// browser sees a normal closure.
    @Test func disconnectIsFollowedByANormalClose() async throws {
        try await MQTTBroker.withRunning(configuration: MQTTBroker.Configuration(webSocketPort: 0)) { broker in
            let webSocketPort = try #require(broker.webSocketPort)
            let (tcp, afterHead) = try await Self.openWebSocket(port: webSocketPort)
            let connect = try MQTTPacket.connect(.init(clientID: "leaving")).encoded()
            let disconnect = try MQTTPacket.disconnect.encoded()
            try await tcp.write(
                WebSocketFrame(opcode: .binary, payload: connect + disconnect).encoded(maskingKey: 0x0102_0304)
            )
            var answer = afterHead
            while let chunk = try? await tcp.read(), !chunk.isEmpty { answer += chunk }
            var decoder = WebSocketFrameDecoder(role: .client, maximumFrameSize: 1 << 16, maximumMessageSize: 1 << 16)
            decoder.append(answer)
            var frames: [WebSocketFrame] = []
            while let frame = try decoder.next() { frames.append(frame) }
            #expect(frames.first?.opcode == .binary)  // the CONNACK
            #expect(frames.last.flatMap(WebSocketFrameDecoder.closeCode(of:)) == 1000, "\(frames)")
        }
    }

    /// A frame above the limit (the maximum packet size, at least 64 KiB) is refused from its header
    /// with close code 1009.
    @Test func oversizedFrameIsClosedWith1009() async throws {
        let configuration = MQTTBroker.Configuration(maximumPacketSize: 100_000, webSocketPort: 0)
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let webSocketPort = try #require(broker.webSocketPort)
            let (tcp, _) = try await Self.openWebSocket(port: webSocketPort)
            // A binary frame announcing 100,001 bytes (masked, 64-bit length); only its header is sent.
            try await tcp.write([0x82, 0xFF, 0, 0, 0, 0, 0, 0x01, 0x86, 0xA1, 1, 2, 3, 4])
            var answer: [UInt8] = []
            while let chunk = try? await tcp.read(), !chunk.isEmpty { answer += chunk }
            var decoder = WebSocketFrameDecoder(role: .client, maximumFrameSize: 125, maximumMessageSize: 125)
            decoder.append(answer)
            let close = try #require(try decoder.next())
            #expect(WebSocketFrameDecoder.closeCode(of: close) == 1009)
        }
    }
}
