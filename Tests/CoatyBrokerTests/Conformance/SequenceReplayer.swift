/// Replays one conformance sequence against a broker, following FORMAT.md's rules: 2 s per socket
/// operation, default CONNECT built from the full test name, helper publishes on a second connection,
/// and the final disconnect or PINGREQ check.
struct SequenceReplayer {
    let port: Int
    let timeout: Duration = .seconds(2)

    /// Runs the sequence; returns `nil` on pass, or why it failed.
    func replay(_ selected: SelectedSequence) async -> String? {
        let test = selected.sequence
        var client: RawMQTTClient
        do {
            client = try await RawMQTTClient.connect(port: self.port, timeout: self.timeout)
        } catch {
            return "connect: \(error)"
        }
        defer { client.close() }
        do {
            if test.connect ?? true {
                try await client.send(
                    Self.defaultConnect(clientID: selected.fullName, version: test.ver ?? 4),
                    timeout: self.timeout
                )
                try await client.expect([0x20, 0x02, 0x00, 0x00], timeout: self.timeout)
            }
            for (index, step) in test.msgs.enumerated() {
                switch step.type {
                case "send":
                    guard let payload = step.payload.flatMap(bytes(hex:)) else { return "step \(index): bad hex" }
                    try await client.send(payload, timeout: self.timeout)
                case "recv":
                    guard let payload = step.payload.flatMap(bytes(hex:)) else { return "step \(index): bad hex" }
                    do {
                        try await client.expect(payload, timeout: self.timeout)
                    } catch {
                        return "step \(index) recv: \(error)"
                    }
                case "publish":
                    try await self.helperPublish(
                        topic: step.topic ?? "",
                        qos: step.qos ?? 0,
                        payload: step.payload ?? ""
                    )
                default:
                    return "step \(index): unknown type \(step.type)"
                }
            }
        } catch {
            return "\(error)"
        }
        if test.expectDisconnect ?? true {
            return await client.isClosedByPeer(timeout: self.timeout) ? nil : "still connected (or sent extra bytes)"
        }
        do {
            try await client.send([0xC0, 0x00], timeout: self.timeout)
            try await client.expect([0xD0, 0x00], timeout: self.timeout)
            return nil
        } catch {
            return "ping check: \(error)"
        }
    }

    private func helperPublish(topic: String, qos: Int, payload: String) async throws {
        var helper = try await RawMQTTClient.connect(port: self.port, timeout: self.timeout)
        defer { helper.close() }
        try await helper.send(Self.defaultConnect(clientID: "helper", version: 4), timeout: self.timeout)
        try await helper.expect([0x20, 0x02, 0x00, 0x00], timeout: self.timeout)
        let topicBytes = Array(topic.utf8)
        let body =
            [UInt8(topicBytes.count >> 8), UInt8(topicBytes.count & 0xFF)] + topicBytes
            + (qos > 0 ? [0x00, 0x01] : []) + Array(payload.utf8)
        try await helper.send([0x30 | UInt8(qos << 1)] + Self.remainingLength(body.count) + body, timeout: self.timeout)
        switch qos {
        case 1:
            try await helper.expect([0x40, 0x02, 0x00, 0x01], timeout: self.timeout)
        case 2:
            try await helper.expect([0x50, 0x02, 0x00, 0x01], timeout: self.timeout)
            try await helper.send([0x62, 0x02, 0x00, 0x01], timeout: self.timeout)
            try await helper.expect([0x70, 0x02, 0x00, 0x01], timeout: self.timeout)
        default:
            break
        }
    }

    /// The default CONNECT of FORMAT.md: clean session, keep-alive 60, client id = full test name.
    static func defaultConnect(clientID: String, version: Int) -> [UInt8] {
        let name: [UInt8] = version == 3 ? Array("MQIsdp".utf8) : Array("MQTT".utf8)
        var body: [UInt8] = [0x00, UInt8(name.count)] + name + [UInt8(version), 0x02, 0x00, 0x3C]
        if version == 5 { body += [0x03, 0x21, 0x00, 0x14] }
        let id = Array(clientID.utf8)
        body += [UInt8(id.count >> 8), UInt8(id.count & 0xFF)] + id
        return [0x10] + Self.remainingLength(body.count) + body
    }

    static func remainingLength(_ value: Int) -> [UInt8] {
        var value = value
        var result: [UInt8] = []
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value > 0 { byte |= 0x80 }
            result.append(byte)
        } while value > 0
        return result
    }
}
