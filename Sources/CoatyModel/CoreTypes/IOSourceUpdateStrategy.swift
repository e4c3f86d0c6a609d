/// How an IO source throttles values when they come faster than its ``IOPoint/updateRate``
/// (coaty-js `IoSourceBackpressureStrategy`); a number on the wire.
public enum IOSourceUpdateStrategy: Int, Sendable, Hashable, Codable, CaseIterable {
    /// ``sample`` when the source has a recommended update rate, else ``none`` (coaty-js `Default`).
    case `default` = 0
    /// No throttling.
    case none = 1
    /// Emit the most recent value at each interval.
    case sample = 2
    /// Emit a value only once the interval has passed without another one (coaty-js `Throttle`, which is
    /// rxjs `debounceTime`).
    case throttle = 3
}
