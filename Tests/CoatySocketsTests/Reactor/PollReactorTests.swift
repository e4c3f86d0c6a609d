import Testing

@testable import CoatySockets

/// What only the poll backend has: arming a descriptor wakes its blocked thread, and a descriptor
/// nobody waits on is not polled.
@Suite(.timeLimit(.minutes(1)))
struct PollReactorTests {
    @Test func armingWakesTheThreadBlockedInPoll() async throws {
        // A reactor of its own, whose thread polls nothing but its wake channel and this pair. After
        // each exchange the thread goes straight back into `poll` with nothing armed, so only the
        // wake-up can make it poll the descriptor that the next exchange arms.
        let reactor = try #require(PollReactor.start())
        let pair = try SocketPair(on: reactor)
        defer { pair.close() }
        for round in 0..<10 {
            let seen = try pair.first.reportCount(.read)
            try await withThrowingTaskGroup { group in
                group.addTask { try await pair.first.waitForReport(.read, after: seen) }
                try await pair.second.writeAll([UInt8(round)])
                try await group.waitForAll()
            }
            #expect(try await pair.first.readAvailable() == [UInt8(round)])
        }
        #expect(reactor.completedRounds >= 10)
    }

    @Test func aHungUpDescriptorNobodyReadsDoesNotMakeTheThreadSpin() async throws {
        let reactor = try #require(PollReactor.start())
        let idle = try SocketPair(on: reactor)
        defer { idle.first.close() }
        let seen = try idle.first.reportCount(.read)
        try await withThrowingTaskGroup { group in
            group.addTask { try await idle.first.waitForReport(.read, after: seen) }
            idle.second.close()
            try await group.waitForAll()
        }
        // `idle.first` stays open, readable at end of stream and hung up, with nobody waiting on it.
        let before = reactor.completedRounds
        let busy = try SocketPair(on: reactor)
        defer { busy.close() }
        for round in 0..<50 {
            let busySeen = try busy.first.reportCount(.read)
            try await withThrowingTaskGroup { group in
                group.addTask { try await busy.first.waitForReport(.read, after: busySeen) }
                try await busy.second.writeAll([UInt8(round)])
                try await group.waitForAll()
            }
            #expect(try await busy.first.readAvailable() == [UInt8(round)])
        }
        // Each exchange takes two or three rounds (a wake-up, then the data); a thread that kept polling
        // the hung-up descriptor would have gone round thousands of times.
        #expect(reactor.completedRounds - before < 200)
    }

    @Test func closingAPolledDescriptorReachesThePeerAtOnce() async throws {
        // While `poll` runs, the kernel holds every file in its set, so a socket closed under it stays
        // open until the thread leaves `poll`. Nothing else happens here, so without the wake-up on
        // deregistering, `second` would never see the end of stream and the test would hit its limit.
        let reactor = try #require(PollReactor.start())
        let pair = try SocketPair(on: reactor)
        let probe = try SocketPair(on: reactor)
        defer {
            pair.second.close()
            probe.close()
        }
        try await withThrowingTaskGroup { group in
            let peerSeen = try pair.second.reportCount(.read)
            group.addTask { try await pair.second.waitForReport(.read, after: peerSeen) }
            let ownSeen = try pair.first.reportCount(.read)
            group.addTask { _ = try? await pair.first.waitForReport(.read, after: ownSeen) }
            // A report on the probe comes from a set built after both waits armed their descriptors,
            // and is delivered after the thread built its next set, which still holds `first`.
            let probeSeen = try probe.first.reportCount(.read)
            try await withThrowingTaskGroup { probeGroup in
                probeGroup.addTask { try await probe.first.waitForReport(.read, after: probeSeen) }
                try await probe.second.writeAll([1])
                try await probeGroup.waitForAll()
            }
            pair.first.close()
            try await group.waitForAll()
        }
        #expect(try await pair.second.readAvailable() == [], "the peer sees the end of stream")
    }
}
