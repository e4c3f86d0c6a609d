import CoatyCore
import Foundation
import Testing

@testable import CoatyBroker

/// `MQTTBroker.Configuration.persistence` through the Swift API: a data directory is one broker's at
/// a time, and a directory that cannot be made is refused when binding.
@Suite(.timeLimit(.minutes(1)))
struct DataDirectoryTests {
    private func withDirectory(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coaty-data-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory.path)
    }

    @Test func aDataDirectoryInUseIsRefusedUntilItsBrokerStops() async throws {
        try await self.withDirectory { path in
            let configuration = MQTTBroker.Configuration(persistence: .init(directory: path))
            try await MQTTBroker.withRunning(configuration: configuration) { _ in
                let error = #expect(throws: BrokerError.self) {
                    try MQTTBroker.bind(configuration: configuration)
                }
                #expect(error?.code == .persistenceFailed)
                #expect(error?.message.contains("in use by another broker") == true)
            }
            // Stopped, it released the directory, and its log holds a valid, empty state.
            try await MQTTBroker.withRunning(configuration: configuration) { broker in
                #expect(broker.statistics.sessions == 0)
            }
            let log = try Array(Data(contentsOf: URL(fileURLWithPath: path + "/broker.log")))
            #expect(log == PersistenceLogCodec.header)
        }
    }

    @Test func aDataDirectoryThatCannotBeCreatedOrAZeroIntervalIsRefused() async throws {
        let missingParent = MQTTBroker.Configuration(persistence: .init(directory: "/nonexistent/coaty/data"))
        let error = #expect(throws: BrokerError.self) { try MQTTBroker.bind(configuration: missingParent) }
        #expect(error?.code == .persistenceFailed)
        try await self.withDirectory { path in
            let zero = MQTTBroker.Configuration(persistence: .init(directory: path, syncInterval: .zero))
            let error = #expect(throws: BrokerError.self) { try MQTTBroker.bind(configuration: zero) }
            #expect(error?.code == .invalidConfiguration)
        }
    }
}
