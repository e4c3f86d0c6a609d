import CoatyCommunication
import CoatyCore
import CoatyModel
import Testing

@testable import CoatyControllers

/// The decisions of an `IORouter`, without agents: which pairs are associated, with which route and
/// rate, and which Associates a change publishes (coaty-js `RuleBasedIoRouter`).
struct IORoutingTableTests {
    typealias Output = IORoutingTable.Output

    static let context = IOContext(name: "Kitchen")

    func table(_ rules: [IORouter.Rule] = [.anyCompatible]) -> IORoutingTable {
        var table = IORoutingTable(
            context: Self.context,
            namespace: "ns",
            rules: rules,
            areCompatible: IORouter.valueTypesMatch
        )
        #expect(table.start() == [])
        return table
    }

    func route(_ source: IOSource) -> String { "coaty/3/ns/IOV/\(source.objectID)" }

    @Test func compatiblePairsAreAssociatedOnTheSourcesRoute() {
        var table = self.table()
        let thermometer = IOSource(name: "Thermometer", valueType: "Temperature", updateRate: 500)
        let display = IOActor(name: "Display", valueType: "Temperature", updateRate: 1000.2)
        let raw = IOActor(name: "Raw display", valueType: "Temperature", useRawIoValues: true)
        let other = IOActor(name: "Clock", valueType: "Time")
        #expect(table.nodeAdvertised(IONode(name: "Kitchen", ioSources: [thermometer])) == [])
        let outputs = table.nodeAdvertised(IONode(name: "Kitchen", ioActors: [display, raw, other]))
        // The largest rate, rounded up to whole milliseconds; the raw actor and the clock are not
        // compatible.
        #expect(
            outputs == [
                Output(
                    sourceID: thermometer.objectID,
                    actorID: display.objectID,
                    route: self.route(thermometer),
                    updateRate: 1001
                )
            ]
        )
        // Nodes of another context are not managed.
        #expect(
            table.nodeAdvertised(IONode(name: "Garage", ioActors: [IOActor(name: "D", valueType: "Temperature")])) == []
        )
        #expect(table.managedNodes.count == 2)
    }

    @Test func anExternalRouteIsUsedAsItIs() {
        var table = self.table()
        let source = IOSource(name: "S", valueType: "T", externalRoute: "plant/temperature")
        let actor = IOActor(name: "A", valueType: "T")
        _ = table.nodeAdvertised(IONode(name: "Kitchen", ioSources: [source], ioActors: [actor]))
        #expect(table.associations.map(\.route) == ["plant/temperature"])
    }

    @Test func rulesOfAValueTypeTakePrecedenceOverGlobalOnes() {
        let preferred = IOActor(name: "Preferred", valueType: "T")
        var table = self.table([
            .init(name: "only the preferred", valueType: "T") { $0.actor.name == "Preferred" },
            .init(name: "global: everything") { _ in true },
        ])
        let source = IOSource(name: "S", valueType: "T")
        let otherSource = IOSource(name: "U", valueType: "U")
        let actorT = IOActor(name: "Plain", valueType: "T")
        let actorU = IOActor(name: "U actor", valueType: "U")
        let outputs = table.nodeAdvertised(
            IONode(name: "Kitchen", ioSources: [source, otherSource], ioActors: [actorT, preferred, actorU])
        )
        // T pairs follow the T rule only; U has no rule of its own, so the global one applies.
        #expect(
            Set(outputs.map { [$0.sourceID, $0.actorID] })
                == [[source.objectID, preferred.objectID], [otherSource.objectID, actorU.objectID]]
        )
    }

    @Test func changesPublishOnlyTheDifference() {
        var table = self.table()
        let source = IOSource(name: "S", valueType: "T", updateRate: 100)
        let slow = IOActor(name: "Slow", valueType: "T", updateRate: 50)
        let fast = IOActor(name: "Fast", valueType: "T", updateRate: 400)
        let sourceNode = IONode(name: "Kitchen", ioSources: [source])
        let slowNode = IONode(name: "Kitchen", ioActors: [slow])
        let fastNode = IONode(name: "Kitchen", ioActors: [fast])
        _ = table.nodeAdvertised(sourceNode)
        #expect(table.nodeAdvertised(slowNode).map(\.updateRate) == [100])
        // A second actor raises the source's rate for both: the first is associated again with it.
        let route = self.route(source)
        #expect(
            table.nodeAdvertised(fastNode) == [
                Output(sourceID: source.objectID, actorID: slow.objectID, route: route, updateRate: 400),
                Output(sourceID: source.objectID, actorID: fast.objectID, route: route, updateRate: 400),
            ]
        )
        // Advertising a node again unchanged changes nothing.
        #expect(table.nodeAdvertised(slowNode) == [])
        // The fast actor's agent leaves: it is disassociated and the rate goes back down.
        #expect(
            table.objectsDeadvertised([fastNode.objectID, .random()]) == [
                Output(sourceID: source.objectID, actorID: slow.objectID, route: route, updateRate: 100),
                Output(sourceID: source.objectID, actorID: fast.objectID),
            ]
        )
        // A node advertised again without points counts as deadvertised.
        #expect(
            table.nodeAdvertised(IONode(objectID: slowNode.objectID, name: "Kitchen"))
                == [Output(sourceID: source.objectID, actorID: slow.objectID)]
        )
        #expect(table.managedNodes.map(\.objectID) == [sourceNode.objectID])
    }

    @Test func rulesAndContextChangesReevaluate() {
        var table = self.table([])
        let source = IOSource(name: "S", valueType: "T")
        let actor = IOActor(name: "A", valueType: "T")
        #expect(table.nodeAdvertised(IONode(name: "Kitchen", ioSources: [source], ioActors: [actor])) == [])
        let onlyWhenCooking = IORouter.Rule(name: "cooking") { $0.context.customProperties["cooking"] == true }
        #expect(table.rulesDefined([onlyWhenCooking]) == [])
        let cooking = IOContext(objectID: Self.context.objectID, name: "Kitchen", customProperties: ["cooking": true])
        #expect(table.contextChanged(cooking).count == 1)
        #expect(table.contextChanged(Self.context) == [Output(sourceID: source.objectID, actorID: actor.objectID)])
    }

    @Test func nothingIsAssociatedBeforeStartAndEverythingEndsAtStop() {
        var table = IORoutingTable(
            context: Self.context,
            namespace: "ns",
            rules: [.anyCompatible],
            areCompatible: IORouter.valueTypesMatch
        )
        let source = IOSource(name: "S", valueType: "T")
        let actor = IOActor(name: "A", valueType: "T")
        #expect(table.nodeAdvertised(IONode(name: "Kitchen", ioSources: [source], ioActors: [actor])) == [])
        #expect(table.start().count == 1)
        #expect(table.stop() == [Output(sourceID: source.objectID, actorID: actor.objectID)])
        #expect(table.associations.isEmpty && table.managedNodes.isEmpty)
    }

    @Test func ratesOnTheWire() {
        #expect(IORoutingTable.wireRate(nil) == nil)
        #expect(IORoutingTable.wireRate(100) == 100)
        #expect(IORoutingTable.wireRate(0.1) == 1)
        #expect(IORoutingTable.wireRate(-1) == nil)
        #expect(IORoutingTable.wireRate(.infinity) == nil)
    }
}
