import CoatyBroker
import CoatyCore
import CoatyMQTT
import CoatyMQTTPackets
import CoatyTLS
import CoatyTransport
import Foundation
import TestSupport
import Testing

/// A TLS client that floods the broker with valid records and never reads is bounded like a plain
/// one: the broker stops reading it once its replies back up, drops it as a slow consumer, its memory
/// does not follow the flood, and other TLS clients are served after.
@Suite(
    .enabled(if: TestCertificates.isAvailable, "needs openssl and libssl3"),
    .timeLimit(.minutes(1))
)
struct TLSFloodTests {
    /// The flood: PUBLISHes of 16 KiB on a topic the client subscribed itself, so each comes back to
    /// it, written as fast as TLS takes them, up to 256 MiB (far beyond every bound), never read.
    @Test func aClientFloodingRecordsAndNeverReadingIsDroppedWithBoundedMemory() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let configuration = MQTTBroker.Configuration(
            tls: .init(
                port: 0,
                certificateFile: certificates.path("server.pem"),
                keyFile: certificates.path("server.key")
            )
        )
        try await MQTTBroker.withRunning(configuration: configuration) { broker in
            let port = try #require(broker.tlsPort)
            let events = broker.events()
            let context = try TLSContext(
                TLSConfiguration(
                    role: .client,
                    peerVerification: .optional,
                    trustedCertificates: .file(certificates.caFile)
                )
            )
            let flooder = try await TLSConnection.connect(host: "127.0.0.1", port: port, context: context)
            defer { flooder.close() }
            var opening: [UInt8] = []
            try MQTTPacket.connect(MQTTConnectPacket(clientID: "flooder", keepAliveSeconds: 1)).encode(into: &opening)
            try MQTTPacket.subscribe(
                MQTTSubscribePacket(packetID: 1, subscriptions: [MQTTSubscription(filter: "flood", qos: .atMostOnce)])
            ).encode(into: &opening)
            try await flooder.write(opening)
            var chunk: [UInt8] = []
            for _ in 0..<16 {
                try MQTTPacket.publish(
                    MQTTPublishPacket(topic: "flood", payload: [UInt8](repeating: 0x46, count: 16_384))
                )
                .encode(into: &chunk)
            }
            let residentBefore = residentKiB(ofProcess: getpid()) << 10
            let flood = chunk
            let reason = await withTaskGroup(of: String?.self, returning: String?.self) { group in
                group.addTask {
                    // Ends when the broker closes the connection or stops reading for good; a broker
                    // that took all 256 MiB without dropping the client fails the test by its time limit.
                    var written = 0
                    while written < 256 << 20,
                        (try? await withTimeout(.seconds(5), { try await flooder.write(flood) })) != nil
                    {
                        written += flood.count
                    }
                    return nil
                }
                group.addTask {
                    let event = await events.first {
                        if case .clientDisconnected("flooder", _) = $0 { true } else { false }
                    }
                    guard case .clientDisconnected(_, let reason) = event else { return nil }
                    return reason
                }
                defer { group.cancelAll() }
                while let result = await group.next() {
                    if let result { return result }
                }
                return nil
            }
            let growth = (residentKiB(ofProcess: getpid()) << 10) - residentBefore
            #expect(reason?.hasPrefix("slow consumer: ") == true, "\(reason ?? "not dropped")")
            // Socket and TLS buffers and the client's queue, with room for the allocator; the flood
            // offered up to 256 MiB.
            #expect(growth < 64 << 20, "resident memory grew by \(growth >> 20) MiB")

            try await expectTLSListenerServes(port: port, caFile: certificates.caFile)
        }
    }
}
