import CoatyCommunication
import CoatyControllers
import CoatyModel

/// What the example's agents share: the IO context they are routed in, its value type, how readings
/// are told apart, and the router's rule.
enum Home {
    /// The IO context's name: the IO nodes of every agent carry it.
    static let contextName = "com.example.Home"
    /// The value type of the thermometer and of the displays: equal value types make them compatible.
    static let temperature = "com.example.Temperature"
    /// The context property the rule reads, which the sensor agent updates.
    static let livingRoomOccupied = "livingRoomOccupied"
    /// The IO node characteristic that says which room a display is in.
    static let room = "room"

    /// The context the router starts with: someone is in the living room.
    static func context() -> IOContext {
        IOContext(name: contextName, customProperties: [livingRoomOccupied: true])
    }

    /// Every display shows the temperature, except the living room's while nobody is there: the
    /// router evaluates the rule again whenever the context changes.
    static let rules: [IORouter.Rule] = [
        .init(
            name: "Displays show the temperature, the living room's only while someone is there",
            valueType: temperature
        ) { candidate in
            candidate.actorNode.characteristics?[room] != "living room"
                || candidate.context.customProperties[livingRoomOccupied] != false
        }
    ]

    /// Reading number `number` in degrees Celsius: 20.1 °C, 20.2 °C, …, so a display's value tells which
    /// reading it was.
    static func celsius(reading number: Int) -> Double {
        Double(200 + number) / 10
    }

    /// The reading number of a temperature made by ``celsius(reading:)``.
    static func reading(celsius: Double) -> Int {
        Int((celsius * 10).rounded()) - 200
    }

    /// A temperature as the displays show it, with one decimal.
    static func format(_ celsius: Double) -> String {
        let tenths = Int((celsius * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10)) °C"
    }
}
