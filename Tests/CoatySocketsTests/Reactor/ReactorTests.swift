import Testing

@testable import CoatySockets

/// Each backend driven directly, without TCP: readiness in both directions, many descriptors at
/// once, hang-up, and closing while a task waits. Runs against every backend this system has,
/// whichever the shared reactor is.
@Suite(.timeLimit(.minutes(1)))
struct ReactorTests {
    @Test(arguments: TestReactors.availableKinds)
    func readinessResumesAWaitingRead(kind: ReactorKind) async throws {
        let pair = try SocketPair(on: try TestReactors.reactor(kind))
        defer { pair.close() }
        let seen = try pair.first.reportCount(.read)
        try await withThrowingTaskGroup { group in
            group.addTask { try await pair.first.waitForReport(.read, after: seen) }
            try await pair.second.writeAll([1, 2, 3])
            try await group.waitForAll()
        }
        #expect(try await pair.first.readAvailable() == [1, 2, 3])
    }

    @Test(arguments: TestReactors.availableKinds)
    func readinessResumesAWaitingWrite(kind: ReactorKind) async throws {
        let pair = try SocketPair(on: try TestReactors.reactor(kind))
        defer { pair.close() }
        let buffered = pair.first.fillSendBuffer()
        #expect(buffered > 0)
        let seen = try pair.first.reportCount(.write)
        try await withThrowingTaskGroup { group in
            // The buffer is full: only the reader below can make room and end this wait.
            group.addTask { try await pair.first.waitForReport(.write, after: seen) }
            var received = 0
            while received < buffered {
                let chunk = try await pair.second.readAvailable(maxBytes: 65_536)
                try #require(!chunk.isEmpty)
                received += chunk.count
            }
            try await group.waitForAll()
        }
        let tail = [UInt8](repeating: 9, count: 100)
        try await pair.first.writeAll(tail)
        #expect(try await pair.second.readAvailable() == tail)
    }

    @Test(arguments: TestReactors.availableKinds)
    func manyDescriptorsWaitAtOnce(kind: ReactorKind) async throws {
        let reactor = try TestReactors.reactor(kind)
        let pairs = try (0..<200).map { _ in try SocketPair(on: reactor) }
        defer { for pair in pairs { pair.close() } }
        try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for (index, pair) in pairs.enumerated() {
                let seen = try pair.first.reportCount(.read)
                group.addTask {
                    try await pair.first.waitForReport(.read, after: seen)
                    return (index, try await pair.first.readAvailable())
                }
            }
            // Answer the last-armed first, so no answer can ride on the order of arming.
            for (index, pair) in pairs.enumerated().reversed() {
                try await pair.second.writeAll([UInt8(truncatingIfNeeded: index)])
            }
            var answered = Set<Int>()
            for try await (index, bytes) in group {
                #expect(bytes == [UInt8(truncatingIfNeeded: index)])
                answered.insert(index)
            }
            #expect(answered.count == pairs.count)
        }
    }

    @Test(arguments: TestReactors.availableKinds)
    func closeWhileWaitingThrowsClosedAndTheReactorCarriesOn(kind: ReactorKind) async throws {
        let reactor = try TestReactors.reactor(kind)
        let pair = try SocketPair(on: reactor)
        let seen = try pair.first.reportCount(.read)
        let waiter = Task { try await pair.first.waitForReport(.read, after: seen) }
        await Task.yield()
        pair.close()
        let error = await #expect(throws: SocketError.self) { try await waiter.value }
        #expect(error?.isClosed == true)
        // The new pair may reuse the closed descriptors' numbers: its reports must reach it, not them.
        let next = try SocketPair(on: reactor)
        defer { next.close() }
        let nextSeen = try next.first.reportCount(.read)
        try await withThrowingTaskGroup { group in
            group.addTask { try await next.first.waitForReport(.read, after: nextSeen) }
            try await next.second.writeAll([42])
            try await group.waitForAll()
        }
        #expect(try await next.first.readAvailable() == [42])
    }

    @Test(arguments: TestReactors.availableKinds)
    func hangUpEndsAWaitingRead(kind: ReactorKind) async throws {
        let pair = try SocketPair(on: try TestReactors.reactor(kind))
        defer { pair.first.close() }
        let seen = try pair.first.reportCount(.read)
        try await withThrowingTaskGroup { group in
            group.addTask { try await pair.first.waitForReport(.read, after: seen) }
            pair.second.close()
            try await group.waitForAll()
        }
        #expect(try await pair.first.readAvailable() == [])
    }
}
