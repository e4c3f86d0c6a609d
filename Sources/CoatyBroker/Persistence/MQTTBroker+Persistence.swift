extension MQTTBroker {
    /// Where and how a broker keeps its state across restarts (see ``Configuration/persistence``).
    ///
    /// Persistent sessions (CleanSession=0) with their subscriptions, their QoS 1/2 messages queued
    /// and in flight, the inbound QoS 2 packet ids not yet released, and the retained messages are
    /// written to an append-only log, `broker.log` in ``directory``, and restored when a broker starts
    /// with the same directory. Clean sessions and QoS 0 messages are not kept, as in mosquitto.
    ///
    /// - A clean shutdown (cancelling ``MQTTBroker/run()``, which `coaty broker` does on SIGTERM and
    ///   SIGINT) writes and syncs everything first: nothing acknowledged is lost.
    /// - After a crash or SIGKILL, changes of the last ``syncInterval`` may be lost (plus the time of a
    ///   write): the log is appended to and synced once per interval, and also whenever about 1 MiB of
    ///   changes has accumulated.
    /// - A log cut short or damaged is recovered up to the first damaged record; the broker logs what
    ///   it discarded at `.warning` and keeps the damaged file as `broker.log.damaged`.
    public struct Persistence: Sendable, Hashable {
        /// The data directory, created (mode 0700) if missing; its parent must exist. One broker at a
        /// time may use it.
        public var directory: String
        /// How often changes are written to the log and synced: the most that a crash can lose.
        /// Defaults to 1 second; must be more than zero.
        public var syncInterval: Duration

        /// Creates persistence settings.
        ///
        /// - Parameters:
        ///   - directory: The data directory.
        ///   - syncInterval: How often changes are written and synced. Defaults to 1 second.
        public init(directory: String, syncInterval: Duration = .seconds(1)) {
            self.directory = directory
            self.syncInterval = syncInterval
        }
    }
}
