import FoundationEssentials

/// The mosquitto broker conformance data in `Tests/Fixtures/mosquitto-broker-sequences` (see its README.md),
/// restricted to the MQTT 3.1.1 groups.
struct BrokerSequences {
    struct Group: Decodable {
        var group: String
        var tests: [Test]
    }

    struct Test: Decodable {
        var name: String
        var ver: Int?
        var connect: Bool?
        var expect_disconnect: Bool?
        var msgs: [Message]
    }

    struct Message: Decodable {
        var type: String
        var payload: String?
    }

    /// One test with its file, for reporting.
    struct Case: CustomStringConvertible {
        var file: String
        var group: String
        var test: Test

        var fullName: String { "\(self.group) \(self.test.name)" }
        var connects: Bool { self.test.connect ?? true }
        var expectsDisconnect: Bool { self.test.expect_disconnect ?? true }
        var sends: [[UInt8]] { self.test.msgs.filter { $0.type == "send" }.compactMap(\.payload).map(hex) }
        var receives: [[UInt8]] { self.test.msgs.filter { $0.type == "recv" }.compactMap(\.payload).map(hex) }
        var description: String { "\(self.file): \(self.fullName)" }
    }

    /// The package root, found by walking up from this file to the directory holding Package.swift.
    static func packageRoot(from filePath: String = #filePath) -> URL? {
        var url = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
            url = url.deletingLastPathComponent()
        }
        return nil
    }

    /// All MQTT 3.1.1 cases (groups `v3.1.1 …`, `REGRESSIONS`, `BROKER CHECK`), in file order.
    static func load() throws -> [Case] {
        guard let root = packageRoot() else { return [] }
        let directory = root.appendingPathComponent("Tests/Fixtures/mosquitto-broker-sequences")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }
            .sorted()
        var cases: [Case] = []
        for file in files {
            let data = try Data(contentsOf: directory.appendingPathComponent(file))
            for group in try JSONDecoder().decode([Group].self, from: data)
            where group.group.hasPrefix("v3.1.1 ") || group.group == "REGRESSIONS" || group.group == "BROKER CHECK" {
                for test in group.tests { cases.append(Case(file: file, group: group.group, test: test)) }
            }
        }
        return cases
    }
}
