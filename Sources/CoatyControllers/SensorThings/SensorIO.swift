import CoatyCommunication
public import CoatyModel

/// Reads the value of one sensor for a ``SensorSourceController`` (coaty-js `SensorIo`).
///
/// Conform a type that talks to the hardware, a file or a simulation; ``InMemorySensorIO`` keeps a
/// value in memory for tests and examples.
///
/// Where this differs from coaty-js's abstract `SensorIo`:
/// - ``read()`` is `async throws` instead of taking a callback, so a reading that fails says so; the
///   controller then publishes no observation;
/// - there is no `write(_:)`: the controller never writes, so writing belongs to the types that
///   can (``InMemorySensorIO/write(_:)``);
/// - there are no `parameters` or constructor injection: a conforming value carries its own
///   configuration, such as a pin number, and is passed to the controller ready to use;
/// - no GPIO or analog-pin implementations (coaty-js `Aio`, `InputGpio`, `OutputGpio`) are provided.
public protocol SensorIO: Sendable {
    /// Reads the sensor's current value.
    ///
    /// May suspend for as long as the reading takes; the controller calls it once per observation
    /// and never concurrently for a periodic publication.
    ///
    /// - Returns: The value, which becomes the observation's `result`.
    /// - Throws: Whatever prevents reading; `CancellationError` when the task is cancelled.
    func read() async throws -> AnyCodable
}
