import CoatyMQTTPackets
import Testing

struct MQTTPacketCodingTests {
    static let roundTripPackets: [MQTTPacket] = [
        .connect(MQTTConnectPacket(clientID: "p")),
        .connect(MQTTConnectPacket(clientID: "", cleanSession: true, keepAliveSeconds: 0)),
        .connect(MQTTConnectPacket(clientID: "persistent", cleanSession: false, keepAliveSeconds: 65_535)),
        .connect(
            MQTTConnectPacket(
                clientID: "agent-1",
                will: MQTTWill(topic: "coaty/3/-/DAD/x", payload: [0, 1, 2], qos: .exactlyOnce, retain: true),
                username: "user \u{2A6D4}",
                password: [0, 0xFF, 0x00]
            )
        ),
        .connect(MQTTConnectPacket(clientID: "w", will: MQTTWill(topic: "w", payload: [], qos: .atLeastOnce))),
        .connect(MQTTConnectPacket(clientID: "u", username: "")),
        .connect(MQTTConnectPacket(clientID: "u", username: "name", password: [])),
        .connack(MQTTConnAckPacket()),
        .connack(MQTTConnAckPacket(sessionPresent: true, returnCode: .accepted)),
        .connack(MQTTConnAckPacket(returnCode: .unacceptableProtocolVersion)),
        .connack(MQTTConnAckPacket(returnCode: .identifierRejected)),
        .connack(MQTTConnAckPacket(returnCode: .notAuthorized)),
        .publish(MQTTPublishPacket(topic: "a/b", payload: Array("hello".utf8))),
        .publish(MQTTPublishPacket(topic: "a", payload: [], retain: true)),
        .publish(MQTTPublishPacket(topic: "/", payload: [0], qos: .atLeastOnce, packetID: 1)),
        .publish(
            MQTTPublishPacket(
                topic: "\u{FEFF}x",
                payload: [1],
                qos: .exactlyOnce,
                retain: true,
                dup: true,
                packetID: 65_535
            )
        ),
        .publish(
            MQTTPublishPacket(
                topic: "big",
                payload: Array(repeating: 7, count: 200_000),
                qos: .atLeastOnce,
                packetID: 9
            )
        ),
        .puback(1), .pubrec(2), .pubrel(0x1234), .pubcomp(65_535), .unsuback(7),
        .subscribe(
            MQTTSubscribePacket(packetID: 0x1234, subscriptions: [MQTTSubscription(filter: "p", qos: .exactlyOnce)])
        ),
        .subscribe(
            MQTTSubscribePacket(
                packetID: 2,
                subscriptions: [
                    MQTTSubscription(filter: "#", qos: .atMostOnce),
                    MQTTSubscription(filter: "coaty/3/+/ADV:Task/+", qos: .atLeastOnce),
                    MQTTSubscription(filter: "$SYS/#", qos: .exactlyOnce),
                ]
            )
        ),
        .suback(MQTTSubAckPacket(packetID: 0x1234, returnCodes: [.granted(.exactlyOnce)])),
        .suback(MQTTSubAckPacket(packetID: 3, returnCodes: [.granted(.atMostOnce), .failure, .granted(.atLeastOnce)])),
        .unsubscribe(MQTTUnsubscribePacket(packetID: 5, filters: ["a/+", "b/#", "c"])),
        .pingreq, .pingresp, .disconnect,
    ]

    @Test(arguments: roundTripPackets)
    func packetRoundTrips(packet: MQTTPacket) throws {
        let bytes = try packet.encoded()
        #expect(try MQTTPacket(decoding: bytes) == packet)
        // The fixed header carries the packet type and the minimal remaining length.
        #expect(bytes[0] >> 4 == packet.type.rawValue)
        let length = try #require(try MQTTRemainingLength.decode(bytes.dropFirst()))
        #expect(1 + length.byteCount + length.value == bytes.count)
        #expect(length.byteCount == MQTTRemainingLength.byteCount(for: length.value))
    }

    @Test func roundTripsCoverEveryPacketType() {
        #expect(Set(Self.roundTripPackets.map(\.type)) == Set(MQTTPacketType.allCases))
    }

    @Test(arguments: 0...255)
    func firstByteValidationFollowsTable2_2(byte: Int) {
        let firstByte = UInt8(byte)
        let type = firstByte >> 4
        let flags = firstByte & 0x0F
        let valid: Bool =
            switch type {
            case 0, 15: false
            case 3: (flags >> 1) & 0b11 != 3 && !((flags >> 1) & 0b11 == 0 && flags & 0b1000 != 0)
            case 6, 8, 10: flags == 0b0010
            default: flags == 0
            }
        #expect(((try? MQTTPacketType(validatingFirstByte: firstByte)) != nil) == valid)
    }

    @Test func defaultConnectFromConformanceData() throws {
        let bytes = hex(
            "10 23 00 04 4D 51 54 54 04 02 00 3C 00 17 76 33 2E 31 2E 31 20 50 49 4E 47 52 45 51 20 43 30 20 76 61 6C 69 64"
        )
        let expected = MQTTConnectPacket(clientID: "v3.1.1 PINGREQ C0 valid", cleanSession: true, keepAliveSeconds: 60)
        #expect(try MQTTPacket(decoding: bytes) == .connect(expected))
        #expect(try MQTTPacket.connect(expected).encoded() == bytes)
    }

    @Test(arguments: [
        (
            "34 0C 0001 70 0001 6d657373616765",
            MQTTPacket.publish(
                MQTTPublishPacket(topic: "p", payload: Array("message".utf8), qos: .exactlyOnce, packetID: 1)
            )
        ),
        (
            "82 06 1234 0001 70 02",
            .subscribe(
                MQTTSubscribePacket(packetID: 0x1234, subscriptions: [MQTTSubscription(filter: "p", qos: .exactlyOnce)])
            )
        ),
        ("90 03 1234 02", .suback(MQTTSubAckPacket(packetID: 0x1234, returnCodes: [.granted(.exactlyOnce)]))),
        ("10 12 0004 4D515454 04 02 003C 0006 68656C706572", .connect(MQTTConnectPacket(clientID: "helper"))),
        ("20 02 00 00", .connack(MQTTConnAckPacket())),
        ("20 02 00 01", .connack(MQTTConnAckPacket(returnCode: .unacceptableProtocolVersion))),
        ("40 02 0001", .puback(1)), ("50 02 0001", .pubrec(1)), ("62 02 0001", .pubrel(1)),
        ("70 02 0001", .pubcomp(1)), ("B0 02 0001", .unsuback(1)),
        ("A2 05 0001 0001 70", .unsubscribe(MQTTUnsubscribePacket(packetID: 1, filters: ["p"]))),
        ("C0 00", .pingreq), ("D0 00", .pingresp), ("E0 00", .disconnect),
        (
            "31 0A 0005 746F706963 6D7367",
            .publish(MQTTPublishPacket(topic: "topic", payload: Array("msg".utf8), retain: true))
        ),
        (
            "3A 08 0001 70 0007 414243",
            .publish(
                MQTTPublishPacket(topic: "p", payload: Array("ABC".utf8), qos: .atLeastOnce, dup: true, packetID: 7)
            )
        ),
        ("30 06 0004 F0AA9B94", .publish(MQTTPublishPacket(topic: "\u{2A6D4}", payload: []))),
    ])
    func knownByteVectorsDecodeAndEncode(bytes: String, expected: MQTTPacket) throws {
        #expect(try MQTTPacket(decoding: hex(bytes)) == expected)
        #expect(try expected.encoded() == hex(bytes))
    }

    @Test func connectWithEverythingHasTheStandardLayout() throws {
        let connect = MQTTConnectPacket(
            clientID: "c",
            cleanSession: false,
            keepAliveSeconds: 10,
            will: MQTTWill(topic: "w", payload: [0xAA], qos: .atLeastOnce, retain: true),
            username: "u",
            password: [0x00]
        )
        // Flags: username, password, will retain, will QoS 1, will flag; clean session off.
        #expect(
            try MQTTPacket.connect(connect).encoded()
                == hex("10 19 0004 4D515454 04 EC 000A 0001 63 0001 77 0001 AA 0001 75 0001 00")
        )
    }

    @Test(arguments: [
        // Fixed-header flags.
        ("C1 00", MQTTDecodingError.invalidFlags), ("C2 00", .invalidFlags), ("C8 00", .invalidFlags),
        ("D1 00", .invalidFlags), ("E4 00", .invalidFlags), ("41 02 0001", .invalidFlags),
        ("60 02 0001", .invalidFlags), ("63 02 0001", .invalidFlags), ("80 06 1234 0001 70 00", .invalidFlags),
        ("A0 05 0001 0001 70", .invalidFlags), ("11 0D 0004 4D515454 04 02 000A 0001 70", .invalidFlags),
        ("21 02 00 00", .invalidFlags), ("92 03 1234 00", .invalidFlags), ("B8 02 0001", .invalidFlags),
        ("36 0C 0001 70 0001 6d657373616765", .invalidQoS(3)), ("38 08 0001 70 6d657373", .invalidFlags),
        ("3F 03 0001 70", .invalidQoS(3)),
        // Reserved packet types.
        ("00 00", .invalidPacketType(0)), ("F0 00", .invalidPacketType(15)),
        // Wrong remaining length for fixed-size packets, trailing bytes, truncation.
        ("C0 01 00", .invalidRemainingLength(.pingreq, 1)), ("D0 01 00", .invalidRemainingLength(.pingresp, 1)),
        ("E0 01 00", .invalidRemainingLength(.disconnect, 1)), ("40 03 0001 00", .invalidRemainingLength(.puback, 3)),
        ("40 01 01", .invalidRemainingLength(.puback, 1)), ("20 03 00 00 00", .invalidRemainingLength(.connack, 3)),
        ("30 02 0003", .truncatedPacket(.publish)), ("32 04 0001 70 00", .truncatedPacket(.publish)),
        ("82 05 1234 0001 70", .truncatedPacket(.subscribe)),
        ("82 07 1234 0001 70 02 00", .truncatedPacket(.subscribe)),
        ("10 0E 0004 4D515454 04 02 000A 0001 70 00", .unexpectedTrailingBytes(.connect, 1)),
        ("10 0C 0004 4D515454 04 02 000A 0001", .truncatedPacket(.connect)),
        // Packet identifier 0.
        ("40 02 0000", .zeroPacketIdentifier), ("50 02 0000", .zeroPacketIdentifier),
        ("62 02 0000", .zeroPacketIdentifier),
        ("70 02 0000", .zeroPacketIdentifier), ("B0 02 0000", .zeroPacketIdentifier),
        ("32 05 0001 70 0000", .zeroPacketIdentifier),
        ("82 06 0000 0001 70 00", .zeroPacketIdentifier), ("A2 05 0000 0001 70", .zeroPacketIdentifier),
        ("90 03 0000 00", .zeroPacketIdentifier),
        // SUBSCRIBE / UNSUBSCRIBE / SUBACK payloads.
        ("82 02 1234", .emptyPayload(.subscribe)), ("A2 02 1234", .emptyPayload(.unsubscribe)),
        ("90 02 1234", .emptyPayload(.suback)), ("82 06 1234 0001 70 03", .invalidQoS(3)),
        ("82 06 1234 0001 70 04", .invalidQoS(4)), ("82 06 1234 0001 70 80", .invalidQoS(0x80)),
        ("90 03 1234 03", .invalidReturnCode(3)), ("90 03 1234 81", .invalidReturnCode(0x81)),
        // CONNACK.
        ("20 02 02 00", .invalidConnAckFlags(2)), ("20 02 00 06", .invalidReturnCode(6)),
        // CONNECT header and flags.
        ("10 0D 0004 4D515454 06 00 000A 0001 70", .unsupportedProtocolLevel(6)),
        ("10 0D 0004 4D515454 03 02 000A 0001 70", .unsupportedProtocolLevel(3)),
        ("10 0F 0006 4D5149736470 03 02 000A 0001 70", .invalidProtocolName("MQIsdp")),
        ("10 0D 0004 4D515455 04 02 000A 0001 70", .invalidProtocolName("MQTU")),
        ("10 0D 0004 4D515454 04 01 000A 0001 70", .invalidConnectFlags(0x01)),
        ("10 0D 0004 4D515454 04 22 000A 0001 70", .invalidConnectFlags(0x22)),  // will retain without will
        ("10 0D 0004 4D515454 04 0A 000A 0001 70", .invalidConnectFlags(0x0A)),  // will QoS 1 without will
        ("10 0D 0004 4D515454 04 42 000A 0001 70", .invalidConnectFlags(0x42)),  // password without username
        ("10 12 0004 4D515454 04 1E 000A 0001 70 0001 77 0000", .invalidQoS(3)),  // will QoS 3
        ("10 0D 0004 4D515454 04 06 000A 0001 70", .truncatedPacket(.connect)),  // will flag, no will fields
        ("10 0D 0004 4D515454 04 82 000A 0001 70", .truncatedPacket(.connect)),  // username flag, no username
        // Strings.
        ("10 0F 0004 4D515454 04 02 000A 0003 EDA080", .invalidUTF8),
        ("10 0D 0004 4D515454 04 02 000A 0001 00", .disallowedCodePoint(0)),
        ("10 0D 0004 4D515454 04 02 000A 0001 01", .disallowedCodePoint(1)),
        ("10 0E 0004 4D515454 04 02 000A 0002 C280", .disallowedCodePoint(0x80)),
        ("10 0F 0004 4D515454 04 02 000A 0003 EFBFBF", .disallowedCodePoint(0xFFFF)),
        ("10 12 0004 4D515454 04 06 000A 0001 70 0001 1F 0000", .disallowedCodePoint(0x1F)),  // will topic
        ("10 10 0004 4D515454 04 82 000A 0001 70 0001 7F", .disallowedCodePoint(0x7F)),  // username
        ("30 04 0002 C080", .invalidUTF8), ("30 05 0003 EDA080", .invalidUTF8),
        ("30 03 0001 00", .disallowedCodePoint(0)),
        ("30 05 0003 EFBFBF", .disallowedCodePoint(0xFFFF)),
        ("82 08 1234 0003 EDA080 00", .invalidUTF8), ("A2 05 1234 0001 9F", .invalidUTF8),
        ("82 06 1234 0001 0A 00", .disallowedCodePoint(0x0A)),
    ])
    func malformedPacketsAreRejected(bytes: String, error: MQTTDecodingError) {
        #expect(throws: error) { try MQTTPacket(decoding: hex(bytes)) }
        // The streaming decoder reports the same error.
        var decoder = MQTTPacketDecoder()
        decoder.append(hex(bytes))
        #expect(throws: error) { try decoder.next() }
    }

    @Test(arguments: [
        "30 02 0000",  // zero-length topic name
        "30 05 0003 612F23",  // '#' in a topic name
        "30 03 0001 2B",  // '+' in a topic name
        "82 05 1234 0000 00",  // zero-length filter
        "82 07 1234 0002 2361 00",  // '#a'
        "82 08 1234 0003 23 2F 61 00",  // '#/a'
        "82 07 1234 0002 612B 00",  // 'a+'
        "A2 04 1234 0000",  // zero-length filter
        "A2 06 1234 0002 612B",  // 'a+'
        "10 12 0004 4D515454 04 06 000A 0001 70 0001 23 0000",  // wildcard will topic
        "10 11 0004 4D515454 04 06 000A 0001 70 0000 0000",  // empty will topic
    ])
    func invalidTopicsAreRejected(bytes: String) {
        #expect {
            try MQTTPacket(decoding: hex(bytes))
        } throws: { error in
            if case .invalidTopic = error as? MQTTDecodingError { true } else { false }
        }
    }

    @Test(arguments: [
        ("30 06 0004 F0AA9B94", "4-byte character in a topic"),
        ("10 0F 0004 4D515454 04 02 000A 0003 EFBBBF", "BOM client identifier"),
        ("10 0C 0004 4D515454 04 02 000A 0000", "empty client identifier, clean session"),
        ("10 0C 0004 4D515454 04 00 000A 0000", "empty client identifier, persistent session"),
        ("10 12 0004 4D515454 04 C2 000A 0001 70 0000 0001 00", "password containing 0x00"),
        ("10 0E 0004 4D515454 04 82 000A 0000 0000", "empty username"),
    ])
    func acceptedEdgeCasesDecode(bytes: String, label: String) throws {
        let packet = try MQTTPacket(decoding: hex(bytes))
        #expect(try packet.encoded() == hex(bytes), "\(label)")
    }

    @Test(arguments: ["", "30", "30 05 0001 70", "C0", "82 80"])
    func incompleteInputIsReported(bytes: String) {
        #expect(throws: MQTTDecodingError.incompletePacket) { try MQTTPacket(decoding: hex(bytes)) }
    }

    @Test func trailingInputAfterAPacketIsReported() {
        #expect(throws: MQTTDecodingError.unexpectedTrailingBytes(.pingreq, 2)) {
            try MQTTPacket(decoding: hex("C0 00 C0 00"))
        }
    }

    @Test func errorsDescribeThemselves() {
        #expect(
            MQTTDecodingError.disallowedCodePoint(0x1F).description == "string contains disallowed code point U+001F"
        )
        #expect(MQTTDecodingError.unsupportedProtocolLevel(5).description == "unsupported protocol level 5")
        #expect(
            MQTTDecodingError.invalidRemainingLength(.pingreq, 1).description
                == "invalid remaining length 1 for PINGREQ"
        )
        #expect(MQTTEncodingError.packetTooLarge(268_435_456).description.contains("268435456"))
    }

    @Test func bomIsPreservedInDecodedStrings() throws {
        let packet = try MQTTPacket(decoding: hex("10 0F 0004 4D515454 04 02 000A 0003 EFBBBF"))
        guard case .connect(let connect) = packet else {
            Issue.record("expected CONNECT, got \(packet)")
            return
        }
        #expect(Array(connect.clientID.utf8) == [0xEF, 0xBB, 0xBF])
    }

    @Test func emptyClientIDWithPersistentSessionIsLeftToTheBroker() throws {
        let packet = try MQTTPacket(decoding: hex("10 0C 0004 4D515454 04 00 000A 0000"))
        #expect(packet == .connect(MQTTConnectPacket(clientID: "", cleanSession: false, keepAliveSeconds: 10)))
    }

    @Test(arguments: [
        (MQTTPacket.puback(0), MQTTEncodingError.invalidPacketIdentifier),
        (.unsuback(0), .invalidPacketIdentifier),
        (.publish(MQTTPublishPacket(topic: "a", payload: [], qos: .atLeastOnce)), .invalidPacketIdentifier),
        (
            .publish(MQTTPublishPacket(topic: "a", payload: [], qos: .atLeastOnce, packetID: 0)),
            .invalidPacketIdentifier
        ),
        (.publish(MQTTPublishPacket(topic: "a", payload: [], packetID: 1)), .invalidPacketIdentifier),
        (.publish(MQTTPublishPacket(topic: "a", payload: [], dup: true)), .duplicateWithQoS0),
        (.publish(MQTTPublishPacket(topic: "a\u{1}", payload: [])), .disallowedCodePoint(1)),
        (.subscribe(MQTTSubscribePacket(packetID: 1, subscriptions: [])), .emptyPayload(.subscribe)),
        (
            .subscribe(
                MQTTSubscribePacket(packetID: 0, subscriptions: [MQTTSubscription(filter: "a", qos: .atMostOnce)])
            ),
            .invalidPacketIdentifier
        ),
        (.unsubscribe(MQTTUnsubscribePacket(packetID: 1, filters: [])), .emptyPayload(.unsubscribe)),
        (.suback(MQTTSubAckPacket(packetID: 1, returnCodes: [])), .emptyPayload(.suback)),
        (.connect(MQTTConnectPacket(clientID: "c", password: [1])), .passwordWithoutUsername),
        (.connect(MQTTConnectPacket(clientID: "c\u{0}")), .disallowedCodePoint(0)),
        (
            .connect(MQTTConnectPacket(clientID: "c", username: "u", password: Array(repeating: 0, count: 65_536))),
            .fieldTooLong(65_536)
        ),
    ])
    func encoderRefusesInvalidPackets(packet: MQTTPacket, error: MQTTEncodingError) {
        var buffer: [UInt8] = [0xAB]
        #expect(throws: error) { try packet.encode(into: &buffer) }
        #expect(buffer == [0xAB], "nothing is appended on error")
    }

    @Test(arguments: [
        MQTTPacket.publish(MQTTPublishPacket(topic: "a/#", payload: [])),
        .publish(MQTTPublishPacket(topic: "", payload: [])),
        .subscribe(MQTTSubscribePacket(packetID: 1, subscriptions: [MQTTSubscription(filter: "a#", qos: .atMostOnce)])),
        .unsubscribe(MQTTUnsubscribePacket(packetID: 1, filters: [""])),
        .connect(MQTTConnectPacket(clientID: "c", will: MQTTWill(topic: "+", payload: []))),
    ])
    func encoderRefusesInvalidTopics(packet: MQTTPacket) {
        #expect {
            try packet.encoded()
        } throws: { error in
            if case .invalidTopic = error as? MQTTEncodingError { true } else { false }
        }
    }

    @Test(arguments: [
        (0, 2), (124, 2), (125, 3), (16_380, 3), (16_381, 4), (2_097_148, 4), (2_097_149, 5),
        (268_435_452, 5),
    ])
    func publishAtRemainingLengthBoundaries(payloadCount: Int, headerCount: Int) throws {
        // Topic "p" takes 3 bytes, so the remaining length is payloadCount + 3.
        let publish = MQTTPacket.publish(
            MQTTPublishPacket(topic: "p", payload: Array(repeating: 0x5A, count: payloadCount))
        )
        let bytes = try publish.encoded()
        #expect(bytes.count == headerCount + 3 + payloadCount)
        if payloadCount <= 2_097_149 {
            #expect(try MQTTPacket(decoding: bytes) == publish)
        }
    }

    @Test func encoderRefusesPacketsAboveTheMaximumRemainingLength() {
        // Topic "p" (3 bytes) + 268,435,453 bytes of payload = 268,435,456.
        let publish = MQTTPacket.publish(
            MQTTPublishPacket(topic: "p", payload: Array(repeating: 0, count: 268_435_453))
        )
        #expect(throws: MQTTEncodingError.packetTooLarge(268_435_456)) { try publish.encoded() }
    }
}
