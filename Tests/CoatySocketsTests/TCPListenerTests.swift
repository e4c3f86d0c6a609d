import CoatySockets
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite(.timeLimit(.minutes(1)))
struct TCPListenerTests {
    @Test func bindsPortZeroToAFreePort() throws {
        let first = try TCPListener.bind(port: 0)
        defer { first.close() }
        let second = try TCPListener.bind(port: 0)
        defer { second.close() }
        #expect(first.port > 0 && second.port > 0)
        #expect(first.port != second.port)
    }

    @Test func bindingABusyPortFails() throws {
        let first = try TCPListener.bind(port: 0)
        defer { first.close() }
        let error = #expect(throws: SocketError.self) { _ = try TCPListener.bind(port: first.port) }
        #expect(error?.errno == EADDRINUSE)
    }

    @Test func rebindingAfterCloseSucceeds() async throws {
        // Not port 0: a released ephemeral port may be taken by a parallel test before the rebind.
        let port = try LoopbackPort.unused()
        let first = try TCPListener.bind(port: port)
        // Leave a connection behind so the port has TIME_WAIT state; SO_REUSEADDR allows the rebind.
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        let server = try await first.accept()
        server.close()
        client.close()
        first.close()
        let second = try TCPListener.bind(port: port)
        defer { second.close() }
        #expect(second.port == port)
    }

    @Test func cancellingPendingAcceptThrowsCancellationError() async throws {
        let listener = try TCPListener.bind(port: 0)
        defer { listener.close() }
        let acceptor = Task { try await listener.accept() }
        await Task.yield()
        acceptor.cancel()
        await #expect(throws: CancellationError.self) { _ = try await acceptor.value }
        // Still usable afterwards.
        async let accepted = listener.accept()
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        defer { client.close() }
        let server = try await accepted
        server.close()
    }

    @Test func closeWakesPendingAccept() async throws {
        let listener = try TCPListener.bind(port: 0)
        let acceptor = Task { try await listener.accept() }
        await Task.yield()
        listener.close()
        let error = await #expect(throws: SocketError.self) { _ = try await acceptor.value }
        #expect(error?.isClosed == true)
    }

    @Test func invalidAddressIsReported() {
        #expect(throws: SocketError.self) { _ = try TCPListener.bind(host: "not an address!", port: 0) }
        #expect(throws: SocketError.self) { _ = try TCPListener.bind(port: 70_000) }
    }
}
