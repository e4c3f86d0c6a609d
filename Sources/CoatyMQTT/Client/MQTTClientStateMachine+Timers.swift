import CoatyCore
import CoatyMQTTPackets
import CoatyTransport

extension MQTTClientStateMachine {
    /// The keep-alive loop looks at the time.
    ///
    /// PINGREQ goes out after half a keep-alive without traffic in either direction. The connection
    /// fails when no whole packet has been received for a whole keep-alive while a PINGREQ is
    /// outstanding: a dead link is noticed one keep-alive after the last packet received, within the
    /// 1½ × keep-alive the standard gives the broker [MQTT-3.1.2-24]. The loop sleeps until the next
    /// instant at which it has something to do. It stops once the connection is closing.
    mutating func keepAliveTick(at now: Duration) -> KeepAliveAction {
        let keepAlive = self.keepAlive
        guard keepAlive > .zero else { return .stop }
        enum Step {
            case sleep(Duration)
            case ping(WaiterToken?)
            case dead
        }
        let step = self.withLink(whileClosing: false) { link, _ -> Step in
            if link.isPingOutstanding {
                let deadline = link.lastReceived + keepAlive
                return now >= deadline ? .dead : .sleep(deadline)
            }
            let pingAt = min(link.lastReceived, link.lastSent) + keepAlive / 2
            guard now >= pingAt else { return .sleep(pingAt) }
            link.isPingOutstanding = true
            link.enqueueControl(.pingreq)
            return .ping(link.takeWriter())
        }
        switch step {
        case nil:
            return .stop
        case .sleep(let deadline):
            return .sleep(until: deadline)
        case .ping(let writer):
            return .ping(wakeWriter: writer)
        case .dead:
            let error = TransportError(
                .connectionLost,
                "no PINGRESP from \(self.broker) within the keep-alive of \(keepAlive.components.seconds) s"
            )
            return self.fail(error).map { .close($0) } ?? .stop
        }
    }

    /// The acknowledgement watchdog looks at the exchanges in flight, once every half
    /// ``acknowledgementTimeout``.
    ///
    /// An exchange that was in flight two looks ago and still is has waited at least the whole timeout,
    /// so it is noticed within 1½ times it. Exchanges are told apart by their sequence, which is never
    /// reused, so a packet identifier used again meanwhile does not count as old. The publish path pays
    /// nothing for this: no clock is read per exchange.
    mutating func acknowledgementCheck() -> WatchdogAction {
        let overdue = self.withLink { link, _ -> (UInt16, Exchange)? in
            let older = link.olderMark
            if let (id, exchange) = link.exchanges.first(where: { $0.value.sequence < older }) {
                return (id, exchange)
            }
            link.olderMark = link.previousMark
            link.previousMark = link.nextSequence
            return nil
        }
        switch overdue {
        case nil:
            return .stop
        case .some(nil):
            return .keepWatching
        case .some(.some(let (id, exchange))):
            let timeout = self.acknowledgementTimeout.map { "\($0)" } ?? "the timeout"
            let error = TransportError(
                .connectionLost,
                "no \(exchange.stage.awaitedPacket) for packet \(id) from \(self.broker) within \(timeout)"
            )
            return self.fail(error).map { .close($0) } ?? .stop
        }
    }
}
