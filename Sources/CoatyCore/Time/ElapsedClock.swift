#if canImport(Glibc)
    import Glibc
#endif

/// A clock read as the time elapsed since a reference instant, so that state machines and deadlines
/// work with plain `Duration`s whatever the `Clock` behind it (`ContinuousClock` in use, a manual
/// clock in tests): the MQTT client's keep-alive and timeouts, the broker's deadlines.
package struct ElapsedClock: Sendable {
    /// The clock's two operations, behind one reference: the broker keeps a copy per connection.
    private final class Operations: Sendable {
        let now: @Sendable () -> Duration
        let sleep: @Sendable (Duration) async throws -> Void

        init(now: @escaping @Sendable () -> Duration, sleep: @escaping @Sendable (Duration) async throws -> Void) {
            self.now = now
            self.sleep = sleep
        }
    }

    private let operations: Operations

    /// Wraps `clock`, taking its current instant as the reference.
    package init(_ clock: any Clock<Duration>) {
        // The default clock is read on every read and write: give it closures specialised for it, not
        // the generic ones that go through the protocol's witnesses.
        #if os(Linux)
            if clock is ContinuousClock {
                self.operations = Self.continuous()
                return
            }
        #endif
        if let continuous = clock as? ContinuousClock {
            self.operations = Self.erase(continuous)
        } else {
            self.operations = Self.erase(clock)
        }
    }

    private static func erase<C: Clock<Duration>>(_ clock: C) -> Operations {
        let reference = clock.now
        return Operations(
            now: { reference.duration(to: clock.now) },
            sleep: { elapsed in try await clock.sleep(until: reference.advanced(by: elapsed), tolerance: nil) }
        )
    }

    #if os(Linux)
        /// `ContinuousClock` read with one `clock_gettime` of the clock it uses on Linux,
        /// `CLOCK_BOOTTIME`: `ContinuousClock.now` and the `Duration` between two of its instants cost
        /// about four times as much here, once per packet in the broker. Sleeping goes through `ContinuousClock`, whose instants
        /// count the same time.
        private static func continuous() -> Operations {
            let reference = ContinuousClock.now
            let start = Self.bootTime()
            return Operations(
                now: { Self.bootTime() - start },
                sleep: { elapsed in
                    try await ContinuousClock().sleep(until: reference.advanced(by: elapsed), tolerance: nil)
                }
            )
        }

        private static func bootTime() -> Duration {
            var time = timespec()
            clock_gettime(CLOCK_BOOTTIME, &time)
            return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
        }
    #endif

    /// The time elapsed since the reference.
    package var now: Duration { self.operations.now() }

    /// Suspends until `elapsed` has passed since the reference.
    ///
    /// - Throws: `CancellationError` if the task is cancelled first.
    package func sleep(until elapsed: Duration) async throws {
        try await self.operations.sleep(elapsed)
    }

    /// Suspends for `duration`.
    package func sleep(for duration: Duration) async throws {
        try await self.operations.sleep(self.now + duration)
    }
}
