import FoundationEssentials

/// One group of mosquitto's broker conformance data (see `Tests/Fixtures/mosquitto-broker-sequences/README.md`).
struct BrokerSequenceGroup: Decodable {
    var group: String
    var tests: [BrokerSequence]
    var disable: Bool?
}

/// One test sequence: optional default CONNECT, steps, then the disconnect or ping check.
struct BrokerSequence: Decodable {
    struct Step: Decodable {
        var type: String
        var payload: String?
        var topic: String?
        var qos: Int?
    }

    var name: String
    var ver: Int?
    var connect: Bool?
    var expectDisconnect: Bool?
    var msgs: [Step]

    enum CodingKeys: String, CodingKey {
        case name, ver, connect, msgs
        case expectDisconnect = "expect_disconnect"
    }
}

/// A sequence selected for the run, keyed by (file, group, name) for the expected-failure list.
struct SelectedSequence: Sendable, CustomStringConvertible {
    var file: String
    var group: String
    var sequence: BrokerSequence

    var fullName: String { "\(self.group) \(self.sequence.name)" }
    var description: String { "\(self.file): \(self.fullName)" }
}

extension BrokerSequence: Sendable {}
extension BrokerSequence.Step: Sendable {}

enum BrokerSequenceLoader {
    /// Loads every file in sorted byte order and selects the MQTT 3.1.1 set exactly as FORMAT.md says.
    static func load311(from directory: String) throws -> [SelectedSequence] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasSuffix(".json") }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        var selected: [SelectedSequence] = []
        for file in files {
            let data = try Data(contentsOf: URL(filePath: directory).appending(path: file))
            let groups = try JSONDecoder().decode([BrokerSequenceGroup].self, from: data)
            for group in groups where group.disable != true {
                guard group.group.hasPrefix("v3.1.1 ") || group.group == "REGRESSIONS" || group.group == "BROKER CHECK"
                else { continue }
                for test in group.tests {
                    selected.append(SelectedSequence(file: file, group: group.group, sequence: test))
                }
            }
        }
        return selected
    }
}
