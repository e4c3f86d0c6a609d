/// A clock read as the time elapsed since a reference instant, so that state machines and deadlines
/// work with plain `Duration`s whatever the `Clock` behind it (`ContinuousClock` in use, a manual
/// clock in tests): the MQTT client's keep-alive and timeouts, the broker's deadlines.
package struct ElapsedClock: Sendable {
    private let readNow: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// Wraps `clock`, taking its current instant as the reference.
    package init(_ clock: any Clock<Duration>) {
        // The default clock is read on every read and write: give it closures specialised for it, not
        // the generic ones that go through the protocol's witnesses.
        if let continuous = clock as? ContinuousClock {
            (self.readNow, self.sleeper) = Self.erase(continuous)
        } else {
            (self.readNow, self.sleeper) = Self.erase(clock)
        }
    }

    private static func erase<C: Clock<Duration>>(
        _ clock: C
    ) -> (@Sendable () -> Duration, @Sendable (Duration) async throws -> Void) {
        let reference = clock.now
        return (
            { reference.duration(to: clock.now) },
            { elapsed in try await clock.sleep(until: reference.advanced(by: elapsed), tolerance: nil) }
        )
    }

    /// The time elapsed since the reference.
    package var now: Duration { self.readNow() }

    /// Suspends until `elapsed` has passed since the reference.
    ///
    /// - Throws: `CancellationError` if the task is cancelled first.
    package func sleep(until elapsed: Duration) async throws {
        try await self.sleeper(elapsed)
    }

    /// Suspends for `duration`.
    package func sleep(for duration: Duration) async throws {
        try await self.sleeper(self.now + duration)
    }
}
