import CoatyCore
import CoatyMQTTPackets

extension BrokerMessage {
    /// Appends this message as a PUBLISH packet, straight from the stored topic bytes.
    ///
    /// The topic was validated when the message entered the broker, so no re-validation is needed.
    /// Messages larger than MQTT's maximum remaining length cannot exist here, because ingress is bounded
    /// by the broker's maximum packet size.
    func encodePublish(packetID: UInt16?, dup: Bool, into buffer: inout [UInt8]) {
        var flags: UInt8 = self.qos.rawValue << 1
        if self.retain { flags |= 0x01 }
        if dup { flags |= 0x08 }
        buffer.append(0x30 | flags)
        MQTTRemainingLength.append(2 + self.topic.count + self.payload.count + (packetID == nil ? 0 : 2), to: &buffer)
        buffer.append(UInt8(truncatingIfNeeded: self.topic.count >> 8))
        buffer.append(UInt8(truncatingIfNeeded: self.topic.count))
        buffer.append(contentsOf: self.topic)
        if let packetID {
            buffer.append(UInt8(truncatingIfNeeded: packetID >> 8))
            buffer.append(UInt8(truncatingIfNeeded: packetID))
        }
        buffer.append(contentsOf: self.payload)
    }
}
