extension MQTTPacketType {
    /// Validates the first byte of a fixed header: packet type and flag bits.
    ///
    /// A broker can reject a connection from this byte alone, before reading anything else.
    ///
    /// - Throws: ``MQTTDecodingError/invalidPacketType(_:)`` for types 0 and 15;
    ///   ``MQTTDecodingError/invalidFlags`` for wrong reserved flags or QoS 0 with DUP;
    ///   ``MQTTDecodingError/invalidQoS(_:)`` for a PUBLISH with QoS 3.
    package init(validatingFirstByte byte: UInt8) throws(MQTTDecodingError) {
        guard let type = MQTTPacketType(rawValue: byte >> 4) else { throw .invalidPacketType(byte >> 4) }
        let flags = byte & 0x0F
        if let required = type.requiredFlags {
            guard flags == required else { throw .invalidFlags }
        } else {
            let qos = (flags >> 1) & 0b11
            guard qos != 3 else { throw .invalidQoS(qos) }
            guard qos != 0 || flags & 0b1000 == 0 else { throw .invalidFlags }
        }
        self = type
    }

    /// Checks a remaining length against the packet type's fixed size, if it has one.
    ///
    /// - Throws: ``MQTTDecodingError/invalidRemainingLength(_:_:)``.
    package func validateRemainingLength(_ length: Int) throws(MQTTDecodingError) {
        if let fixed = self.fixedRemainingLength, fixed != length {
            throw .invalidRemainingLength(self, length)
        }
    }
}
