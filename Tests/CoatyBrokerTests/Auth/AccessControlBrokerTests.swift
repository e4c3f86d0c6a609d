import CoatyBroker
import CoatyMQTTPackets
import Testing

/// Authentication and access control over real sockets, with the byte-level client.
@Suite(.timeLimit(.minutes(1)))
struct AccessControlBrokerTests {
    static let acl = """
        topic open/#

        user reader
        topic read #
        topic deny secret/#

        user writer
        topic write allowed/#
        topic write secret/#
        topic write will/#
        """

    /// Without the retained `$SYS` topics, so that retained counts are the tests' own.
    private func configuration() throws -> MQTTBroker.Configuration {
        MQTTBroker.Configuration(accessControlList: try AccessControlList(parsing: Self.acl), systemTopicInterval: nil)
    }

    private func publish(
        _ client: RawMQTTClient,
        _ topic: String,
        qos: MQTTQoS,
        packetID: UInt16?,
        retain: Bool = false
    )
        async throws
    {
        try await client.send(
            .publish(
                MQTTPublishPacket(
                    topic: topic,
                    payload: Array(topic.utf8),
                    qos: qos,
                    retain: retain,
                    packetID: packetID
                )
            )
        )
    }

    /// The topic of the next PUBLISH the client receives.
    private func nextTopic(_ client: inout RawMQTTClient) async throws -> String? {
        let packet = try await client.receivePacket { if case .publish = $0 { true } else { false } }
        guard case .publish(let publish) = packet else { return nil }
        return publish.topic
    }

    @Test func aDeniedSubscriptionGetsFailureForThatFilterOnly() async throws {
        try await MQTTBroker.withRunning(configuration: try self.configuration()) { broker in
            var client = try await RawMQTTClient.connected(port: broker.port, clientID: "r", username: "reader")
            try await client.send(
                .subscribe(
                    MQTTSubscribePacket(
                        packetID: 7,
                        subscriptions: [
                            MQTTSubscription(filter: "a/#", qos: .atLeastOnce),
                            MQTTSubscription(filter: "secret/#", qos: .atLeastOnce),
                            MQTTSubscription(filter: "secret/+/x", qos: .atMostOnce),
                        ]
                    )
                )
            )
            let suback = try await client.receivePacket()
            #expect(
                suback
                    == .suback(
                        MQTTSubAckPacket(packetID: 7, returnCodes: [.granted(.atLeastOnce), .failure, .failure])
                    )
            )
            #expect(broker.statistics.subscriptions == 1)
            // The writer may not read at all.
            var writer = try await RawMQTTClient.connected(port: broker.port, clientID: "w", username: "writer")
            #expect(
                try await writer.subscribe("allowed/#", qos: .atMostOnce)
                    == .suback(.init(packetID: 1, returnCodes: [.failure]))
            )
        }
    }

    @Test(arguments: [MQTTQoS.atMostOnce, .atLeastOnce, .exactlyOnce])
    func aDeniedPublicationIsAcknowledgedButNotDelivered(qos: MQTTQoS) async throws {
        try await MQTTBroker.withRunning(configuration: try self.configuration()) { broker in
            var reader = try await RawMQTTClient.connected(port: broker.port, clientID: "r", username: "reader")
            _ = try await reader.subscribe("#", qos: .atLeastOnce)
            var writer = try await RawMQTTClient.connected(port: broker.port, clientID: "w", username: "writer")
            let packetID: UInt16? = qos == .atMostOnce ? nil : 5
            try await self.publish(writer, "denied/x", qos: qos, packetID: packetID)
            switch qos {
            case .atMostOnce: break
            case .atLeastOnce: #expect(try await writer.receivePacket() == .puback(5))
            case .exactlyOnce:
                #expect(try await writer.receivePacket() == .pubrec(5))
                try await writer.send(.pubrel(5))
                #expect(try await writer.receivePacket() == .pubcomp(5))
            }
            // Messages from one publisher arrive in order, so a delivered "denied/x" would come first.
            try await self.publish(writer, "allowed/x", qos: .atMostOnce, packetID: nil)
            #expect(try await self.nextTopic(&reader) == "allowed/x")
        }
    }

    @Test func messagesAreDeliveredOnlyOnTopicsTheSubscriberMayRead() async throws {
        try await MQTTBroker.withRunning(configuration: try self.configuration()) { broker in
            var reader = try await RawMQTTClient.connected(port: broker.port, clientID: "r", username: "reader")
            _ = try await reader.subscribe("#", qos: .atMostOnce)
            var anonymous = try await RawMQTTClient.connected(port: broker.port, clientID: "a")
            _ = try await anonymous.subscribe("#", qos: .atMostOnce)
            let writer = try await RawMQTTClient.connected(port: broker.port, clientID: "w", username: "writer")
            try await self.publish(writer, "secret/x", qos: .atMostOnce, packetID: nil)
            try await self.publish(writer, "allowed/x", qos: .atMostOnce, packetID: nil)
            // "allowed/x" has been routed to every subscriber once the reader has it: anonymous clients
            // read open/# only, so the anonymous subscriber's first message is the later "open/x".
            #expect(try await self.nextTopic(&reader) == "allowed/x")
            try await self.publish(anonymous, "open/x", qos: .atMostOnce, packetID: nil)
            #expect(try await self.nextTopic(&anonymous) == "open/x")
            #expect(try await self.nextTopic(&reader) == "open/x")
        }
    }

    @Test func retainedMessagesAreSentOnlyIfReadable() async throws {
        try await MQTTBroker.withRunning(configuration: try self.configuration()) { broker in
            var writer = try await RawMQTTClient.connected(port: broker.port, clientID: "w", username: "writer")
            for topic in ["secret/kept", "allowed/kept"] {
                try await self.publish(writer, topic, qos: .atLeastOnce, packetID: 1, retain: true)
                #expect(try await writer.receivePacket() == .puback(1))
            }
            #expect(broker.statistics.retainedMessages == 2)
            var reader = try await RawMQTTClient.connected(port: broker.port, clientID: "r", username: "reader")
            _ = try await reader.subscribe("#", qos: .atMostOnce)
            #expect(try await self.nextTopic(&reader) == "allowed/kept")
            try await self.publish(writer, "allowed/live", qos: .atMostOnce, packetID: nil)
            #expect(try await self.nextTopic(&reader) == "allowed/live")
        }
    }

    @Test func aWillOnATopicTheClientMayNotWriteIsDiscarded() async throws {
        try await MQTTBroker.withRunning(configuration: try self.configuration()) { broker in
            let events = broker.events()
            var reader = try await RawMQTTClient.connected(port: broker.port, clientID: "r", username: "reader")
            _ = try await reader.subscribe("#", qos: .atMostOnce)
            for (clientID, topic) in [("denied-will", "forbidden/will"), ("allowed-will", "will/gone")] {
                let client = try await RawMQTTClient.connected(
                    port: broker.port,
                    clientID: clientID,
                    will: MQTTWill(topic: topic, payload: [1]),
                    username: "writer"
                )
                client.close()
                _ = await events.first {
                    if case .clientDisconnected(let id, _) = $0 { return id == clientID }
                    return false
                }
            }
            #expect(try await self.nextTopic(&reader) == "will/gone")
        }
    }

    @Test func anonymousClientsFollowAllowAnonymous() async throws {
        let passwordFile = PasswordFile(parsing: PasswordFileTests.pbkdf2Line)
        for (allow, code) in [(nil, UInt8(5)), (false, 5), (true, 0)] as [(Bool?, UInt8)] {
            let configuration = MQTTBroker.Configuration(passwordFile: passwordFile, allowAnonymous: allow)
            try await MQTTBroker.withRunning(configuration: configuration) { broker in
                var client = try await RawMQTTClient.connect(port: broker.port)
                try await client.send(.connect(MQTTConnectPacket(clientID: "anon")))
                try await client.expect([0x20, 0x02, 0x00, code])
            }
        }
        #expect(MQTTBroker.Configuration().allowsAnonymousClients)
        #expect(!MQTTBroker.Configuration(passwordFile: passwordFile).allowsAnonymousClients)
    }

    @Test func usersOfThePasswordFileAndTheCredentialsAreAccepted() async throws {
        let configuration = MQTTBroker.Configuration(
            credentials: .init(username: "single", password: "one"),
            passwordFile: PasswordFile(parsing: PasswordFileTests.pbkdf2Line + "\n" + PasswordFileTests.sha512Line)
        )
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            for (username, password, code) in [
                ("alice", "secret", UInt8(0)), ("bob", "secret", 0), ("single", "one", 0), ("alice", "one", 4),
                ("single", "secret", 4), ("nobody", "secret", 4),
            ] {
                var client = try await RawMQTTClient.connect(port: broker.port)
                try await client.send(
                    .connect(MQTTConnectPacket(clientID: "c", username: username, password: Array(password.utf8)))
                )
                try await client.expect([0x20, 0x02, 0x00, code])
                client.close()
            }
            // A user name without a password is refused too.
            var client = try await RawMQTTClient.connect(port: broker.port)
            try await client.send(.connect(MQTTConnectPacket(clientID: "c", username: "alice")))
            try await client.expect([0x20, 0x02, 0x00, 4])
        }
    }
}
