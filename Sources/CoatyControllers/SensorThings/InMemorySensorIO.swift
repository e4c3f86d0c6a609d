import CoatyCommunication
public import CoatyModel
import Synchronization

/// A ``SensorIO`` that reads back the last value written (coaty-js `MockSensorIo`): for tests,
/// examples and sensors whose values come from the application rather than hardware.
///
/// ```swift
/// let io = InMemorySensorIO(value: 21.5)
/// io.write(22.0)   // the next observation's result is 22.0
/// ```
public final class InMemorySensorIO: SensorIO {
    private let current: Mutex<AnyCodable>

    /// Creates the IO holding `value`; by default `0`, as in coaty-js.
    public init(value: AnyCodable = 0) {
        self.current = Mutex(value)
    }

    /// The value the next read returns.
    public var value: AnyCodable { self.current.withLock { $0 } }

    /// Replaces the value that reads return.
    public func write(_ value: AnyCodable) {
        self.current.withLock { $0 = value }
    }

    /// Returns the value last written, without suspending.
    public func read() async -> AnyCodable {
        self.value
    }
}
