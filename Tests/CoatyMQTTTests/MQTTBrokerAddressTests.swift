import CoatyMQTT
import Testing

/// Broker URLs: which schemes, hosts and ports `MQTTBrokerAddress` accepts.
@Suite
struct MQTTBrokerAddressTests {
    @Test func parsesHostsAndPorts() throws {
        #expect(
            try MQTTBrokerAddress(parsing: "mqtt://127.0.0.1:1883") == MQTTBrokerAddress(host: "127.0.0.1", port: 1883)
        )
        #expect(try MQTTBrokerAddress(parsing: "mqtt://localhost") == MQTTBrokerAddress(host: "localhost", port: 1883))
        #expect(
            try MQTTBrokerAddress(parsing: "tcp://broker.example:4000/")
                == MQTTBrokerAddress(host: "broker.example", port: 4000)
        )
        #expect(try MQTTBrokerAddress(parsing: "MQTT://[::1]:1884") == MQTTBrokerAddress(host: "::1", port: 1884))
        #expect(MQTTBrokerAddress(host: "::1", port: 1884).description == "mqtt://[::1]:1884")
    }

    @Test func parsesWebSocketURLs() throws {
        #expect(
            try MQTTBrokerAddress(parsing: "ws://127.0.0.1:9883/mqtt")
                == MQTTBrokerAddress(host: "127.0.0.1", port: 9883, webSocketPath: "/mqtt")
        )
        #expect(
            try MQTTBrokerAddress(parsing: "WS://broker.example")
                == MQTTBrokerAddress(host: "broker.example", port: 80, webSocketPath: "/")
        )
        #expect(
            try MQTTBrokerAddress(parsing: "ws://[::1]:8080/a/b?x=1")
                == MQTTBrokerAddress(host: "::1", port: 8080, webSocketPath: "/a/b?x=1")
        )
        #expect(
            MQTTBrokerAddress(host: "::1", port: 8080, webSocketPath: "/mqtt").description == "ws://[::1]:8080/mqtt"
        )
        #expect(throws: MQTTBrokerAddress.ParseError.self) { try MQTTBrokerAddress(parsing: "ws://h:1/a b") }
    }

    @Test func parsesTLSURLs() throws {
        #expect(
            try MQTTBrokerAddress(parsing: "mqtts://broker.example")
                == MQTTBrokerAddress(host: "broker.example", port: 8883, usesTLS: true)
        )
        #expect(try MQTTBrokerAddress(parsing: "tls://h:1") == MQTTBrokerAddress(host: "h", port: 1, usesTLS: true))
        #expect(
            try MQTTBrokerAddress(parsing: "SSL://[::1]") == MQTTBrokerAddress(host: "::1", port: 8883, usesTLS: true)
        )
        #expect(MQTTBrokerAddress(host: "::1", port: 8883, usesTLS: true).description == "mqtts://[::1]:8883")
        let secureWebSocket = MQTTBrokerAddress(host: "h", port: 443, webSocketPath: "/mqtt", usesTLS: true)
        #expect(try MQTTBrokerAddress(parsing: "wss://h/mqtt") == secureWebSocket)
        #expect(secureWebSocket.description == "wss://h:443/mqtt")
    }

    @Test(arguments: [
        "mqtts://h/x", "wss://h:x", "h:1883", "mqtt://", "mqtt://h:0", "mqtt://h:65536", "mqtt://[::1", "mqtt://h/path",
    ])
    func rejectsOtherURLs(url: String) {
        #expect(throws: MQTTBrokerAddress.ParseError.self) { try MQTTBrokerAddress(parsing: url) }
    }
}
