import CoatyBroker
import TestSupport

/// A broker whose keep-alive deadlines run on a ``ManualClock`` that only the test moves, so that a
/// keep-alive runs out when the test says and not when a loaded machine happens to be slow.
enum ManualBrokerClock {
    /// The default configuration with its deadlines on `clock`.
    static func configuration(clock: ManualClock) -> MQTTBroker.Configuration {
        var configuration = MQTTBroker.Configuration()
        configuration.clock = clock
        return configuration
    }

    /// Moves `clock` on by `duration` and returns once the broker's sweeper, woken if its next look
    /// was due, has looked at every connection and sleeps again.
    static func advance(_ clock: ManualClock, by duration: Duration) async {
        await clock.waitForSleepers(count: 1)
        clock.advance(by: duration)
        await clock.waitForSleepers(count: 1)
    }
}
