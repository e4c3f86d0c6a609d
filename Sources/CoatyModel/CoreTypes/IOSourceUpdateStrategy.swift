/// How an IO source throttles values when they come faster than its ``IOPoint/updateRate``
/// (coaty-js `IoSourceBackpressureStrategy`); a number on the wire.
public enum IOSourceUpdateStrategy: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Let the IO router choose.
    case `default` = 0
    /// No throttling.
    case none = 1
    /// Emit the most recent value at each interval.
    case sample = 2
    /// Emit a value, then ignore values for the interval.
    case throttle = 3
}
