import CoatyCommunication
public import CoatyModel

extension SensorSourceController {
    /// How an observation is published (coaty-js `ObservationPublicationType`, without `"none"`,
    /// which is a `nil` ``Sampling``).
    public enum ObservationPublication: Sendable, Hashable {
        /// As a Channel event on `CHN:<sensor object id>`.
        case channel
        /// As an Advertise event (`ADV:CoatyObject` and `ADV::coaty.sensorThings.Observation`).
        case advertise
    }

    /// Publishing observations of a sensor on their own, every interval (coaty-js
    /// `observationPublicationType` with `samplingInterval`).
    public struct Sampling: Sendable, Hashable {
        /// How each observation is published.
        public var publication: ObservationPublication
        /// The time between two observations; must be positive.
        public var interval: Duration

        /// Creates a sampling.
        public init(publication: ObservationPublication, interval: Duration) {
            self.publication = publication
            self.interval = interval
        }

        /// Channelled observations every `interval`.
        public static func channel(every interval: Duration) -> Sampling {
            Sampling(publication: .channel, interval: interval)
        }

        /// Advertised observations every `interval`.
        public static func advertise(every interval: Duration) -> Sampling {
            Sampling(publication: .advertise, interval: interval)
        }
    }

    /// A sensor to register when the controller is initialised (coaty-js `SensorDefinition`).
    public struct SensorDefinition: Sendable {
        /// The sensor.
        public var sensor: Sensor
        /// What reads its values.
        public var io: any SensorIO
        /// How and how often to publish its observations on their own; `nil` for on demand only.
        public var sampling: Sampling?

        /// Creates a definition.
        public init(_ sensor: Sensor, io: any SensorIO, sampling: Sampling? = nil) {
            self.sensor = sensor
            self.io = io
            self.sampling = sampling
        }
    }
}
