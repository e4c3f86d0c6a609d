import CoatySockets
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads until `count` bytes arrived or EOF.
private func readExactly(_ connection: TCPConnection, count: Int) async throws -> [UInt8] {
    var result: [UInt8] = []
    while result.count < count {
        let chunk = try await connection.read(maxBytes: count - result.count)
        if chunk.isEmpty { break }
        result += chunk
    }
    return result
}

/// Echoes everything it reads until EOF, then closes.
private func echo(_ connection: TCPConnection) async throws {
    defer { connection.close() }
    while true {
        let bytes = try await connection.read()
        if bytes.isEmpty { return }
        try await connection.write(bytes)
    }
}

@Suite(.timeLimit(.minutes(1)))
struct TCPConnectionTests {
    @Test func echoRoundTripOverLoopback() async throws {
        let listener = try TCPListener.bind(port: 0)
        defer { listener.close() }
        #expect(listener.port > 0)
        try await withThrowingTaskGroup { group in
            group.addTask { try await echo(try await listener.accept()) }
            let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
            defer { client.close() }
            #expect(client.remoteDescription == "127.0.0.1:\(listener.port)")
            try await client.write(Array("hello, reactor".utf8))
            let reply = try await readExactly(client, count: 14)
            #expect(String(decoding: reply, as: UTF8.self) == "hello, reactor")
            client.shutdownOutput()
            #expect(try await client.read() == [])
            try await group.waitForAll()
        }
    }

    @Test func connectsByHostName() async throws {
        let listener = try TCPListener.bind(host: "localhost", port: 0)
        defer { listener.close() }
        try await withThrowingTaskGroup { group in
            group.addTask { try await echo(try await listener.accept()) }
            let client = try await TCPConnection.connect(host: "localhost", port: listener.port)
            defer { client.close() }
            try await client.write(contentsOf: [[1, 2], [], [3], [4, 5, 6]])
            #expect(try await readExactly(client, count: 6) == [1, 2, 3, 4, 5, 6])
            client.shutdownOutput()
            try await group.waitForAll()
        }
    }

    @Test func aFailedNameLookupSaysWhyInsteadOfAnErrno() async throws {
        // The empty name fails in the resolver at once, without a DNS query.
        let error = await #expect(throws: SocketError.self) { try await TCPConnection.connect(host: "", port: 1) }
        #expect(error?.reason != nil)
        #expect(error?.description.hasPrefix("getaddrinfo() failed: ") == true)
        #expect(error?.description.contains("errno") == false)
    }

    @Test func aRefusedConnectionIsDescribedOnce() async throws {
        let port = try {
            let listener = try TCPListener.bind(port: 0)
            defer { listener.close() }
            return listener.port
        }()
        let error = await #expect(throws: SocketError.self) {
            try await TCPConnection.connect(host: "127.0.0.1", port: port)
        }
        #expect(error?.description == "connect(127.0.0.1:\(port)) failed: Connection refused (errno \(ECONNREFUSED))")
    }

    @Test func readReturnsEmptyAtEndOfStream() async throws {
        let listener = try TCPListener.bind(port: 0)
        defer { listener.close() }
        try await withThrowingTaskGroup { group in
            group.addTask {
                let server = try await listener.accept()
                try await server.write(Array("bye".utf8))
                server.close()
            }
            let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
            defer { client.close() }
            #expect(try await readExactly(client, count: 3) == Array("bye".utf8))
            #expect(try await client.read() == [])
            #expect(try await client.read() == [])
            try await group.waitForAll()
        }
    }

    @Test func largeWriteToSlowReaderArrivesIntact() async throws {
        let size = 8 * 1024 * 1024
        let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let listener = try TCPListener.bind(port: 0)
        defer { listener.close() }
        try await withThrowingTaskGroup { group in
            group.addTask {
                let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
                defer { client.close() }
                try await client.write(payload)
                client.shutdownOutput()
            }
            let server = try await listener.accept()
            defer { server.close() }
            var received: [UInt8] = []
            received.reserveCapacity(size)
            while true {
                // A slow reader: small reads with a yield in between keep the writer's buffer full.
                let chunk = try await server.read(maxBytes: 4096)
                if chunk.isEmpty { break }
                received += chunk
                await Task.yield()
            }
            #expect(received.count == size)
            // Compared outside #expect so a failure doesn't render 8 MB of bytes.
            let intact = received == payload
            #expect(intact)
            try await group.waitForAll()
        }
    }

    @Test func cancellingPendingReadThrowsCancellationError() async throws {
        let pair = try await LoopbackPair.open()
        defer { pair.close() }
        let (client, server) = (pair.client, pair.server)
        let reader = Task { try await server.read() }
        await Task.yield()
        reader.cancel()
        await #expect(throws: CancellationError.self) { try await reader.value }
        // The connection still works after a cancelled read.
        try await client.write([42])
        #expect(try await server.read() == [42])
    }

    @Test func closeWakesPendingRead() async throws {
        let pair = try await LoopbackPair.open()
        defer { pair.close() }
        let (client, server) = (pair.client, pair.server)
        let reader = Task { try await server.read() }
        await Task.yield()
        server.close()
        server.close()
        let error = await #expect(throws: SocketError.self) { try await reader.value }
        #expect(error?.isClosed == true)
        #expect(server.isClosed)
        // The peer sees the close as end of stream.
        #expect(try await client.read() == [])
    }

    @Test func operationsAfterCloseThrowClosed() async throws {
        let listener = try TCPListener.bind(port: 0)
        defer { listener.close() }
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        client.close()
        let readError = await #expect(throws: SocketError.self) { try await client.read() }
        #expect(readError?.isClosed == true)
        let writeError = await #expect(throws: SocketError.self) { try await client.write([1]) }
        #expect(writeError?.isClosed == true)
        client.shutdownOutput()
    }

    @Test func writingToResetConnectionThrowsInsteadOfSIGPIPE() async throws {
        let pair = try await LoopbackPair.open()
        defer { pair.close() }
        let (client, server) = (pair.client, pair.server)
        server.close()
        #expect(try await client.read() == [])
        let error = await #expect(throws: SocketError.self) {
            for _ in 0..<100 { try await client.write([UInt8](repeating: 1, count: 65_536)) }
        }
        #expect(error?.isConnectionReset == true)
    }

    @Test func connectToClosedPortIsRefused() async throws {
        // A port no parallel test can be listening on (a released ephemeral port could be reused).
        let port = try LoopbackPort.unused()
        let error = await #expect(throws: SocketError.self) {
            _ = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        }
        #expect(error?.errno == ECONNREFUSED)
    }

    @Test func twoHundredConcurrentConnectionsEcho() async throws {
        let listener = try TCPListener.bind(port: 0)
        defer { listener.close() }
        let count = 200
        try await withThrowingTaskGroup { server in
            server.addTask {
                try await withThrowingTaskGroup { connections in
                    for _ in 0..<count {
                        let connection = try await listener.accept()
                        connections.addTask { try await echo(connection) }
                    }
                    try await connections.waitForAll()
                }
            }
            try await withThrowingTaskGroup(of: Bool.self) { clients in
                for index in 0..<count {
                    clients.addTask {
                        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
                        defer { client.close() }
                        let message = Array("client \(index) says hi".utf8)
                        try await client.write(message)
                        let reply = try await readExactly(client, count: message.count)
                        client.shutdownOutput()
                        let end = try await client.read()
                        return reply == message && end.isEmpty
                    }
                }
                var succeeded = 0
                for try await ok in clients where ok { succeeded += 1 }
                #expect(succeeded == count)
            }
            try await server.waitForAll()
        }
    }
}
