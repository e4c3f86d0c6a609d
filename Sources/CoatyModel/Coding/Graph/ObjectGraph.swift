/// The objects of a decoded graph; holds every object strongly.
public struct ObjectGraph: Sendable {
    /// Every object of the graph, in table order.
    public let objects: [CoatyObject]

    /// The root object (the first in the table).
    public var root: CoatyObject { self.objects[0] }

    /// Creates a graph from decoded objects; `objects` must not be empty.
    init(objects: [CoatyObject]) {
        self.objects = objects
    }
}
