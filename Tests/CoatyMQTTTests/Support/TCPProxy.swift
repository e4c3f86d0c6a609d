import CoatySockets
import CoatyTransport
import Synchronization

/// A loopback TCP proxy in front of a broker, for tests that need a link to fail in a precise way:
/// it can swallow what clients send (as a link that died in one direction would) and cut every
/// connection at once.
final class TCPProxy: Sendable {
    private struct State {
        var swallowsClientBytes = false
        var connections: [TCPConnection] = []
    }

    let listener: TCPListener
    private let upstreamPort: Int
    private let state = Mutex(State())
    private let swallowed: AsyncStream<Int>.Continuation
    /// The size of every chunk of client bytes swallowed, in order.
    let swallowedChunks: AsyncStream<Int>

    var url: String { "mqtt://127.0.0.1:\(self.listener.port)" }

    private init(upstreamPort: Int) throws {
        self.listener = try TCPListener.bind(port: 0)
        self.upstreamPort = upstreamPort
        (self.swallowedChunks, self.swallowed) = AsyncStream.makeStream()
    }

    /// Runs a proxy to `upstreamPort` on loopback while `body` runs, then closes it and its connections.
    static func withProxy<Result: Sendable>(
        to upstreamPort: Int,
        _ body: (TCPProxy) async throws -> Result
    ) async throws -> Result {
        let proxy = try TCPProxy(upstreamPort: upstreamPort)
        return try await withThrowingTaskGroup { group in
            group.addTask { await proxy.acceptLoop() }
            defer {
                proxy.listener.close()
                proxy.cutAll()
                group.cancelAll()
            }
            return try await body(proxy)
        }
    }

    /// From now on, bytes from clients are dropped (`true`) or forwarded (`false`).
    func swallowClientBytes(_ swallow: Bool) {
        self.state.withLock { $0.swallowsClientBytes = swallow }
    }

    /// Closes every connection on both sides, as a failed link would.
    func cutAll() {
        let connections = self.state.withLock { state in
            defer { state.connections = [] }
            return state.connections
        }
        for connection in connections { connection.close() }
    }

    private func acceptLoop() async {
        await withDiscardingTaskGroup { group in
            while let client = try? await self.listener.accept() {
                group.addTask {
                    guard let upstream = try? await TCPConnection.connect(host: "127.0.0.1", port: self.upstreamPort)
                    else {
                        client.close()
                        return
                    }
                    self.state.withLock { $0.connections += [client, upstream] }
                    await withDiscardingTaskGroup { pumps in
                        pumps.addTask { await self.pump(from: client, to: upstream, fromClient: true) }
                        pumps.addTask { await self.pump(from: upstream, to: client, fromClient: false) }
                    }
                }
            }
        }
    }

    /// Copies bytes until either side ends, then closes both.
    private func pump(from source: TCPConnection, to destination: TCPConnection, fromClient: Bool) async {
        defer {
            source.close()
            destination.close()
        }
        while let bytes = try? await source.read(), !bytes.isEmpty {
            if fromClient, self.state.withLock({ $0.swallowsClientBytes }) {
                self.swallowed.yield(bytes.count)
                continue
            }
            guard (try? await destination.write(bytes)) != nil else { return }
        }
    }
}
