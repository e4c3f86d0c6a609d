import CoatyCore
import CoatyTransport

extension MQTTClientStateMachine {
    /// A waiter the shell resumes, and with what.
    struct Resumption: Sendable {
        var token: WaiterToken
        var result: Result<Void, TransportError>
    }

    /// What the shell does when the connection closes: close the byte stream, then resume every waiter
    /// in ``resumptions`` (exchanges, publications waiting for the window, drain, writer, flush and
    /// closed waiters, in that order).
    struct Closure: Sendable {
        /// The connection's failure from now on.
        var failure: TransportError
        var resumptions: [Resumption]
    }

    /// The outcome of a publication or request handed to the machine.
    enum EnqueueAction: Sendable {
        /// Queued for the writer; wake it with this token if it waits.
        case queued(wakeWriter: WaiterToken?)
        /// A QoS 1/2 publication that waits for a free slot in the in-flight window; it is sent, and its
        /// token resumed on its acknowledgement, later.
        case waitingForWindow
        /// Not queued: the outbound buffer is full, or no packet identifier is free (callers that do
        /// not wait only).
        case full
        /// Not queued; the caller fails with this error.
        case failed(TransportError)
    }

    /// The outcome of registering a waiter.
    enum WaitAction: Sendable {
        /// Registered; the token is resumed later.
        case wait
        /// Nothing to wait for; the token was not registered.
        case ready
        /// The connection cannot get there; the token was not registered.
        case failed(TransportError)
    }

    /// What the writer does next.
    enum WriterAction: Sendable, Equatable {
        /// Write the batch it was handed, after resuming these drain waiters (the buffer is empty now).
        case write(drained: [WaiterToken])
        /// Nothing queued: wait (see ``MQTTClientStateMachine/writerWaits(_:)``).
        case idle
        /// The connection has closed.
        case stop
    }

    /// What the reader does after the packets of one read.
    struct ReceiveActions: Sendable {
        /// Messages to hand to the application, in order, before waking the writer, so that what the
        /// application queues in response follows the acknowledgements.
        var deliveries: [TransportMessage] = []
        /// The writer to wake once the deliveries are made.
        var wakeWriter: WaiterToken?
        /// Exchanges completed by the packets.
        var resumptions: [Resumption] = []
        /// Set when a packet broke the protocol: the connection has closed.
        var closure: Closure?
        /// Whether the outbound buffer is above the high-water mark: the reader waits for it to drain
        /// before reading more.
        var isBacklogged = false

        /// Empties the actions, keeping the arrays' storage.
        mutating func reset() {
            self.deliveries.removeAll(keepingCapacity: true)
            self.wakeWriter = nil
            self.resumptions.removeAll(keepingCapacity: true)
            self.closure = nil
            self.isBacklogged = false
        }
    }

    /// What the keep-alive loop does next.
    enum KeepAliveAction: Sendable {
        /// Sleep until this instant (time since the clock's reference), then tick again.
        case sleep(until: Duration)
        /// A PINGREQ was queued; wake the writer, then tick again.
        case ping(wakeWriter: WaiterToken?)
        /// The PINGRESP deadline passed: the connection has closed.
        case close(Closure)
        /// The connection is closing or closed, or keep-alive is off.
        case stop
    }

    /// What the acknowledgement watchdog does after a look.
    enum WatchdogAction: Sendable {
        /// Look again after another half timeout.
        case keepWatching
        /// An exchange stayed unacknowledged for a whole timeout: the connection has closed.
        case close(Closure)
        /// The connection has closed.
        case stop
    }

    /// The outcome of the broker's first packet.
    enum HandshakeAction: Sendable {
        /// CONNACK accepted the connection, with its session-present flag; the machine is connected.
        case accepted(sessionPresent: Bool)
        /// The broker refused the connection or broke the protocol: the connection has closed.
        case failed(Closure)
    }
}
