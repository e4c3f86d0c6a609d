/// A SUBACK packet: the server's answer to SUBSCRIBE, one return code per filter (§3.9).
package struct MQTTSubAckPacket: Sendable, Hashable {
    /// The packet identifier of the SUBSCRIBE being acknowledged.
    package var packetID: UInt16
    /// One return code per requested subscription, in order; at least one.
    package var returnCodes: [MQTTSubAckReturnCode]

    /// Creates a SUBACK packet.
    package init(packetID: UInt16, returnCodes: [MQTTSubAckReturnCode]) {
        self.packetID = packetID
        self.returnCodes = returnCodes
    }
}

/// The outcome of one subscription in a SUBACK: the granted QoS or failure (§3.9.3).
package enum MQTTSubAckReturnCode: Sendable, Hashable {
    /// The subscription was accepted with this maximum QoS (wire values 0, 1, 2).
    case granted(MQTTQoS)
    /// The subscription was refused (wire value 0x80).
    case failure

    /// Decodes a wire value; `nil` for anything other than 0, 1, 2 and 0x80.
    package init?(rawValue: UInt8) {
        if rawValue == 0x80 {
            self = .failure
        } else if let qos = MQTTQoS(rawValue: rawValue) {
            self = .granted(qos)
        } else {
            return nil
        }
    }

    /// The wire value.
    package var rawValue: UInt8 {
        switch self {
        case .granted(let qos): qos.rawValue
        case .failure: 0x80
        }
    }
}
