import Testing

@testable import CoatySockets

/// `ReactorLoad` fed rounds of handling and waiting, as the reactor's thread reports them.
struct ReactorLoadTests {
    /// Feeds `rounds` rounds of `busy` nanoseconds handling followed by `idle` nanoseconds waiting.
    private func feed(_ load: inout ReactorLoad, rounds: Int, busy: Int64, idle: Int64, from start: inout Int64) {
        for _ in 0..<rounds {
            load.waiting(at: start)
            start += idle
            load.woke(at: start)
            start += busy
        }
    }

    @Test func aThreadThatMostlyWaitsHasRoom() {
        var load = ReactorLoad()
        var now: Int64 = 1_000
        #expect(load.hasRoom)
        self.feed(&load, rounds: 50, busy: 5_000, idle: 30_000, from: &now)
        #expect(load.hasRoom)
    }

    @Test func aThreadThatMostlyHandlesReportsHasNoRoom() {
        var load = ReactorLoad()
        var now: Int64 = 1_000
        self.feed(&load, rounds: 50, busy: 30_000, idle: 1_000, from: &now)
        #expect(!load.hasRoom)
    }

    @Test func roomComesBackWhenTheLoadEnds() {
        var load = ReactorLoad()
        var now: Int64 = 1_000
        self.feed(&load, rounds: 50, busy: 30_000, idle: 1_000, from: &now)
        #expect(!load.hasRoom)
        // A few quiet rounds are not yet enough to outweigh the busy history ...
        self.feed(&load, rounds: 1, busy: 2_000, idle: 20_000, from: &now)
        #expect(!load.hasRoom)
        // ... a longer quiet spell is.
        self.feed(&load, rounds: 30, busy: 2_000, idle: 20_000, from: &now)
        #expect(load.hasRoom)
    }

    @Test func oneLongWaitOutweighsABusySpell() {
        var load = ReactorLoad()
        var now: Int64 = 1_000
        self.feed(&load, rounds: 50, busy: 10_000, idle: 1_000, from: &now)
        #expect(!load.hasRoom)
        // A second of silence: the next lone message is handled on the thread.
        self.feed(&load, rounds: 1, busy: 10_000, idle: 1_000_000_000, from: &now)
        #expect(load.hasRoom)
    }

    /// A request/response exchange over TLS: about 30 µs handling each message, 70 µs waiting for the
    /// answer. One round in which the thread was preempted for 5 ms must not take the room away.
    @Test func aPreemptedRoundDoesNotTakeTheRoomAway() {
        var load = ReactorLoad()
        var now: Int64 = 1_000
        self.feed(&load, rounds: 50, busy: 30_000, idle: 70_000, from: &now)
        #expect(load.hasRoom)
        self.feed(&load, rounds: 1, busy: 5_000_000, idle: 70_000, from: &now)
        self.feed(&load, rounds: 1, busy: 30_000, idle: 70_000, from: &now)
        #expect(load.hasRoom)
    }

    /// Long rounds with hardly any wait between them are load, capped or not.
    @Test func longRoundsBackToBackLeaveNoRoom() {
        var load = ReactorLoad()
        var now: Int64 = 1_000
        self.feed(&load, rounds: 50, busy: 2_000_000, idle: 10_000, from: &now)
        #expect(!load.hasRoom)
    }

    @Test func onlyALoneReportIsHandledOnTheThread() {
        let load = ReactorLoad()
        #expect(load.mayHandleReads(reports: 1))
        #expect(!load.mayHandleReads(reports: 2))
        #expect(!load.mayHandleReads(reports: 0))
    }
}
