import CoatyCore

extension MQTTPacket {
    /// Decodes exactly one complete packet from `bytes`.
    ///
    /// For streams use ``MQTTPacketDecoder``; this is a convenience for whole packets.
    ///
    /// - Throws: ``MQTTDecodingError``; ``MQTTDecodingError/incompletePacket`` if `bytes` ends before
    ///   the declared length, ``MQTTDecodingError/unexpectedTrailingBytes(_:_:)`` if it goes on after.
    package init(decoding bytes: [UInt8]) throws(MQTTDecodingError) {
        guard let first = bytes.first else { throw .incompletePacket }
        let type = try MQTTPacketType(validatingFirstByte: first)
        guard let (length, lengthBytes) = try MQTTRemainingLength.decode(bytes.dropFirst()) else {
            throw .incompletePacket
        }
        try type.validateRemainingLength(length)
        let bodyStart = 1 + lengthBytes
        let available = bytes.count - bodyStart
        guard available >= length else { throw .incompletePacket }
        guard available == length else { throw .unexpectedTrailingBytes(type, available - length) }
        self = try Self(firstByte: first, body: bytes[bodyStart...])
    }

    /// Decodes a packet from its validated first byte and its complete body (the remaining-length
    /// bytes after the fixed header).
    ///
    /// - Throws: ``MQTTDecodingError`` if the body is not a valid packet of that type.
    package init(firstByte: UInt8, body: ArraySlice<UInt8>) throws(MQTTDecodingError) {
        let type = try MQTTPacketType(validatingFirstByte: firstByte)
        try type.validateRemainingLength(body.count)
        var reader = MQTTByteReader(body, type: type)
        switch type {
        case .connect:
            self = .connect(try Self.decodeConnect(&reader))
        case .connack:
            let flags = try reader.readByte()
            guard flags & 0xFE == 0 else { throw .invalidConnAckFlags(flags) }
            let code = try reader.readByte()
            guard let returnCode = MQTTConnectReturnCode(rawValue: code) else { throw .invalidReturnCode(code) }
            self = .connack(MQTTConnAckPacket(sessionPresent: flags == 1, returnCode: returnCode))
        case .publish:
            self = .publish(try Self.decodePublish(flags: firstByte & 0x0F, &reader))
        case .puback:
            self = .puback(try reader.readPacketID())
        case .pubrec:
            self = .pubrec(try reader.readPacketID())
        case .pubrel:
            self = .pubrel(try reader.readPacketID())
        case .pubcomp:
            self = .pubcomp(try reader.readPacketID())
        case .unsuback:
            self = .unsuback(try reader.readPacketID())
        case .subscribe:
            let id = try reader.readPacketID()
            var subscriptions: [MQTTSubscription] = []
            while !reader.isAtEnd {
                let filter = try Self.readTopicFilter(&reader)
                let requested = try reader.readByte()
                guard let qos = MQTTQoS(rawValue: requested) else { throw .invalidQoS(requested) }
                subscriptions.append(MQTTSubscription(filter: filter, qos: qos))
            }
            guard !subscriptions.isEmpty else { throw .emptyPayload(.subscribe) }
            self = .subscribe(MQTTSubscribePacket(packetID: id, subscriptions: subscriptions))
        case .suback:
            let id = try reader.readPacketID()
            var codes: [MQTTSubAckReturnCode] = []
            codes.reserveCapacity(reader.remainingCount)
            while !reader.isAtEnd {
                let raw = try reader.readByte()
                guard let code = MQTTSubAckReturnCode(rawValue: raw) else { throw .invalidReturnCode(raw) }
                codes.append(code)
            }
            guard !codes.isEmpty else { throw .emptyPayload(.suback) }
            self = .suback(MQTTSubAckPacket(packetID: id, returnCodes: codes))
        case .unsubscribe:
            let id = try reader.readPacketID()
            var filters: [String] = []
            while !reader.isAtEnd {
                filters.append(try Self.readTopicFilter(&reader))
            }
            guard !filters.isEmpty else { throw .emptyPayload(.unsubscribe) }
            self = .unsubscribe(MQTTUnsubscribePacket(packetID: id, filters: filters))
        case .pingreq:
            self = .pingreq
        case .pingresp:
            self = .pingresp
        case .disconnect:
            self = .disconnect
        }
        try reader.expectEnd()
    }

    private static func readTopicName(_ reader: inout MQTTByteReader) throws(MQTTDecodingError) -> String {
        let topic = try reader.readString()
        do throws(TopicError) {
            try TopicName.validate(topic)
        } catch {
            throw .invalidTopic(error)
        }
        return topic
    }

    private static func readTopicFilter(_ reader: inout MQTTByteReader) throws(MQTTDecodingError) -> String {
        let filter = try reader.readString()
        do throws(TopicError) {
            try TopicFilter.validate(filter)
        } catch {
            throw .invalidTopic(error)
        }
        return filter
    }

    private static func decodePublish(
        flags: UInt8,
        _ reader: inout MQTTByteReader
    ) throws(MQTTDecodingError) -> MQTTPublishPacket {
        // The first byte was validated: QoS is 0...2 and DUP is clear for QoS 0.
        guard let qos = MQTTQoS(rawValue: (flags >> 1) & 0b11) else { throw .invalidQoS((flags >> 1) & 0b11) }
        let topic = try Self.readTopicName(&reader)
        let packetID: UInt16? = qos == .atMostOnce ? nil : try reader.readPacketID()
        return MQTTPublishPacket(
            topic: topic,
            payload: reader.readRest(),
            qos: qos,
            retain: flags & 0b0001 != 0,
            dup: flags & 0b1000 != 0,
            packetID: packetID
        )
    }

    private static func decodeConnect(_ reader: inout MQTTByteReader) throws(MQTTDecodingError) -> MQTTConnectPacket {
        let name = try reader.readLengthPrefixed()
        guard name.elementsEqual("MQTT".utf8) else {
            throw .invalidProtocolName(String(decoding: name, as: UTF8.self))
        }
        let level = try reader.readByte()
        guard level == MQTTConnectPacket.protocolLevel311 else { throw .unsupportedProtocolLevel(level) }
        let flags = try reader.readByte()
        let hasWill = flags & 0b0000_0100 != 0
        let willQoSBits = (flags >> 3) & 0b11
        let willRetain = flags & 0b0010_0000 != 0
        let hasPassword = flags & 0b0100_0000 != 0
        let hasUsername = flags & 0b1000_0000 != 0
        guard flags & 0b0000_0001 == 0,
            hasWill || (willQoSBits == 0 && !willRetain),
            !hasPassword || hasUsername
        else { throw .invalidConnectFlags(flags) }
        guard let willQoS = MQTTQoS(rawValue: willQoSBits) else { throw .invalidQoS(willQoSBits) }
        let keepAlive = try reader.readUInt16()
        let clientID = try reader.readString()
        var will: MQTTWill?
        if hasWill {
            let topic = try Self.readTopicName(&reader)
            let payload = Array(try reader.readLengthPrefixed())
            will = MQTTWill(topic: topic, payload: payload, qos: willQoS, retain: willRetain)
        }
        let username = hasUsername ? try reader.readString() : nil
        let password = hasPassword ? Array(try reader.readLengthPrefixed()) : nil
        return MQTTConnectPacket(
            clientID: clientID,
            cleanSession: flags & 0b0000_0010 != 0,
            keepAliveSeconds: keepAlive,
            will: will,
            username: username,
            password: password,
            protocolLevel: level
        )
    }
}
