import CoatyCore

extension MQTTPacket {
    /// Appends the complete wire form of this packet (fixed header, variable header, payload).
    ///
    /// The encoder writes the minimal remaining length and refuses packets a strict peer would
    /// reject. On error nothing is appended.
    ///
    /// - Throws: ``MQTTEncodingError`` if a field is out of range or invalid, for example a remaining
    ///   length above 268,435,455, a packet identifier of 0, or a topic with wildcards in a PUBLISH.
    package func encode(into buffer: inout [UInt8]) throws(MQTTEncodingError) {
        let start = buffer.count
        do throws(MQTTEncodingError) {
            try self.encodeUnchecked(into: &buffer)
        } catch {
            buffer.removeSubrange(start...)
            throw error
        }
    }

    /// Returns the complete wire form of this packet.
    ///
    /// - Throws: ``MQTTEncodingError``, as ``encode(into:)``.
    package func encoded() throws(MQTTEncodingError) -> [UInt8] {
        var buffer: [UInt8] = []
        try self.encode(into: &buffer)
        return buffer
    }

    private func encodeUnchecked(into buffer: inout [UInt8]) throws(MQTTEncodingError) {
        switch self {
        case .connect(let connect):
            try Self.encodeConnect(connect, into: &buffer)
        case .connack(let connack):
            buffer.append(MQTTPacketType.connack.rawValue << 4)
            buffer.append(2)
            buffer.append(connack.sessionPresent ? 1 : 0)
            buffer.append(connack.returnCode.rawValue)
        case .publish(let publish):
            try Self.encodePublish(publish, into: &buffer)
        case .puback(let id), .pubrec(let id), .pubrel(let id), .pubcomp(let id), .unsuback(let id):
            guard id != 0 else { throw .invalidPacketIdentifier }
            let type = self.type
            buffer.append(type.rawValue << 4 | (type.requiredFlags ?? 0))
            buffer.append(2)
            buffer.appendUInt16(id)
        case .subscribe(let subscribe):
            guard subscribe.packetID != 0 else { throw .invalidPacketIdentifier }
            guard !subscribe.subscriptions.isEmpty else { throw .emptyPayload(.subscribe) }
            var length = 2
            for subscription in subscribe.subscriptions {
                do throws(TopicError) {
                    try TopicFilter.validate(subscription.filter)
                } catch {
                    throw .invalidTopic(error)
                }
                try MQTTString.validateForEncoding(subscription.filter)
                length += 2 + subscription.filter.utf8.count + 1
            }
            try Self.appendFixedHeader(.subscribe, flags: 0b0010, remainingLength: length, into: &buffer)
            buffer.appendUInt16(subscribe.packetID)
            for subscription in subscribe.subscriptions {
                try MQTTString.encode(subscription.filter, into: &buffer)
                buffer.append(subscription.qos.rawValue)
            }
        case .suback(let suback):
            guard suback.packetID != 0 else { throw .invalidPacketIdentifier }
            guard !suback.returnCodes.isEmpty else { throw .emptyPayload(.suback) }
            try Self.appendFixedHeader(.suback, flags: 0, remainingLength: 2 + suback.returnCodes.count, into: &buffer)
            buffer.appendUInt16(suback.packetID)
            for code in suback.returnCodes { buffer.append(code.rawValue) }
        case .unsubscribe(let unsubscribe):
            guard unsubscribe.packetID != 0 else { throw .invalidPacketIdentifier }
            guard !unsubscribe.filters.isEmpty else { throw .emptyPayload(.unsubscribe) }
            var length = 2
            for filter in unsubscribe.filters {
                do throws(TopicError) {
                    try TopicFilter.validate(filter)
                } catch {
                    throw .invalidTopic(error)
                }
                try MQTTString.validateForEncoding(filter)
                length += 2 + filter.utf8.count
            }
            try Self.appendFixedHeader(.unsubscribe, flags: 0b0010, remainingLength: length, into: &buffer)
            buffer.appendUInt16(unsubscribe.packetID)
            for filter in unsubscribe.filters { try MQTTString.encode(filter, into: &buffer) }
        case .pingreq, .pingresp, .disconnect:
            buffer.append(self.type.rawValue << 4)
            buffer.append(0)
        }
    }

    private static func appendFixedHeader(
        _ type: MQTTPacketType,
        flags: UInt8,
        remainingLength: Int,
        into buffer: inout [UInt8]
    ) throws(MQTTEncodingError) {
        guard remainingLength <= MQTTRemainingLength.maximum else { throw .packetTooLarge(remainingLength) }
        buffer.reserveCapacity(buffer.count + 5 + remainingLength)
        buffer.append(type.rawValue << 4 | flags)
        try MQTTRemainingLength.encode(remainingLength, into: &buffer)
    }

    private static func encodePublish(_ publish: MQTTPublishPacket, into buffer: inout [UInt8])
        throws(MQTTEncodingError)
    {
        do throws(TopicError) {
            try TopicName.validate(publish.topic)
        } catch {
            throw .invalidTopic(error)
        }
        try MQTTString.validateForEncoding(publish.topic)
        switch (publish.qos, publish.packetID) {
        case (.atMostOnce, nil):
            guard !publish.dup else { throw .duplicateWithQoS0 }
        case (.atLeastOnce, let id?), (.exactlyOnce, let id?):
            guard id != 0 else { throw .invalidPacketIdentifier }
        default:
            throw .invalidPacketIdentifier
        }
        let length = 2 + publish.topic.utf8.count + (publish.packetID == nil ? 0 : 2) + publish.payload.count
        var flags = publish.qos.rawValue << 1
        if publish.dup { flags |= 0b1000 }
        if publish.retain { flags |= 0b0001 }
        try Self.appendFixedHeader(.publish, flags: flags, remainingLength: length, into: &buffer)
        try MQTTString.encode(publish.topic, into: &buffer)
        if let id = publish.packetID { buffer.appendUInt16(id) }
        buffer.append(contentsOf: publish.payload)
    }

    private static func encodeConnect(_ connect: MQTTConnectPacket, into buffer: inout [UInt8])
        throws(MQTTEncodingError)
    {
        // Variable header: protocol name, level, flags, keep alive.
        var length = 6 + 1 + 1 + 2
        var flags: UInt8 = connect.cleanSession ? 0b0000_0010 : 0
        try MQTTString.validateForEncoding(connect.clientID)
        length += 2 + connect.clientID.utf8.count
        if let will = connect.will {
            do throws(TopicError) {
                try TopicName.validate(will.topic)
            } catch {
                throw .invalidTopic(error)
            }
            try MQTTString.validateForEncoding(will.topic)
            guard will.payload.count <= MQTTString.maximumByteCount else { throw .fieldTooLong(will.payload.count) }
            flags |= 0b0000_0100 | will.qos.rawValue << 3
            if will.retain { flags |= 0b0010_0000 }
            length += 2 + will.topic.utf8.count + 2 + will.payload.count
        }
        if let username = connect.username {
            try MQTTString.validateForEncoding(username)
            flags |= 0b1000_0000
            length += 2 + username.utf8.count
        }
        if let password = connect.password {
            guard connect.username != nil else { throw .passwordWithoutUsername }
            guard password.count <= MQTTString.maximumByteCount else { throw .fieldTooLong(password.count) }
            flags |= 0b0100_0000
            length += 2 + password.count
        }
        try Self.appendFixedHeader(.connect, flags: 0, remainingLength: length, into: &buffer)
        try MQTTString.encode("MQTT", into: &buffer)
        buffer.append(connect.protocolLevel)
        buffer.append(flags)
        buffer.appendUInt16(connect.keepAliveSeconds)
        try MQTTString.encode(connect.clientID, into: &buffer)
        if let will = connect.will {
            try MQTTString.encode(will.topic, into: &buffer)
            buffer.appendUInt16(UInt16(will.payload.count))
            buffer.append(contentsOf: will.payload)
        }
        if let username = connect.username { try MQTTString.encode(username, into: &buffer) }
        if let password = connect.password {
            buffer.appendUInt16(UInt16(password.count))
            buffer.append(contentsOf: password)
        }
    }
}
