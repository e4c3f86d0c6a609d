import CoatyCommunication
import CoatyTransport

/// The in-process transport with each connection wrapped, for tests that change how a connection
/// behaves (leave out optional methods, fail on demand).
struct WrappingTransport: Transport {
    let base: InProcessTransport
    let wrap: @Sendable (any TransportConnection) -> any TransportConnection

    func withConnection<Result: Sendable>(
        _ options: TransportConnectOptions,
        onMessage: @escaping @Sendable (TransportMessage) -> Void,
        _ body: (any TransportConnection) async throws -> Result
    ) async throws -> Result {
        try await self.base.withConnection(options, onMessage: onMessage) { connection in
            try await body(self.wrap(connection))
        }
    }
}
