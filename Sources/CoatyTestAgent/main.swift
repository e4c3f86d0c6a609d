// A small Coaty agent for multi-process tests over MQTT (Tests/CoatyMQTTTests/AgentProcessTests.swift).
//
//   CoatyTestAgent <broker URL> <identity object id> <name>
//
// It joins (advertising its identity), answers the call `coaty.test.add` with the sum of its two
// parameters, answers Raw events on `coaty-test/ping` with the same payload on `coaty-test/pong`,
// advertises a `coaty.test.Echo` object for every Channel event it receives on `echo`, retrieves its
// stored `coaty.test.Thing` for Queries of that type, completes Updates of it with the name suffixed
// " (updated)", publishes the IO value {"value":42} on the route of every Associate it receives in the
// IO context `TestContext` (acting as the IO source), and leaves
// gracefully (Deadvertise, DISCONNECT) when its standard input reaches end of file.
import CoatyCommunication
import CoatyCore
import CoatyMQTT
import CoatyModel
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    FileHandle.standardError.write(Data("usage: CoatyTestAgent <broker URL> <identity id> <name>\n".utf8))
    exit(2)
}
let identity = Identity(objectID: ObjectID(arguments[2]), name: arguments[3])
let manager = CommunicationManager(
    transport: MQTTTransport(brokerURL: arguments[1]),
    configuration: .init(
        identity: identity,
        initialReconnectDelay: .milliseconds(100),
        maximumReconnectDelay: .seconds(1)
    )
)

try await withThrowingTaskGroup(of: Void.self) { group in
    let states = manager.observeCommunicationState()
    group.addTask { try await manager.run() }
    let calls = try await manager.observeCall("coaty.test.add")
    let pings = try await manager.observeRaw("coaty-test/ping")
    let channel = try await manager.observeChannel("echo")
    let queries = await manager.observeQuery()
    let updates = try await manager.observeUpdate(objectType: "coaty.test.Thing")
    let associations = try await manager.observeAssociate(ioContextName: "TestContext")
    let stored = CoatyObject(objectType: "coaty.test.Thing", name: "stored thing", parentObjectID: identity.objectID)
    group.addTask {
        for await query in queries where query.objectTypes == ["coaty.test.Thing"] {
            try query.retrieve(RetrieveEvent(objects: query.objectFilter.apply(to: [stored])))
        }
    }
    group.addTask {
        for await update in updates {
            let updated = CoatyObject(
                objectType: update.object.objectType,
                objectID: update.object.objectID,
                name: update.object.name + " (updated)"
            )
            try update.complete(CompleteEvent(updated))
        }
    }
    group.addTask {
        for await association in associations {
            guard let route = association.associatingRoute else { continue }
            try await manager.publish(try IOValueEvent(route: route, value: ["value": 42]))
        }
    }
    group.addTask {
        for await call in calls {
            let sum = (call.parameter(at: 0)?.intValue ?? 0) + (call.parameter(at: 1)?.intValue ?? 0)
            try call.returnResult(.int(sum))
        }
    }
    group.addTask {
        for await ping in pings {
            try await manager.publish(try RawEvent(topic: "coaty-test/pong", payload: ping.payload))
        }
    }
    group.addTask {
        for await event in channel {
            let echo = CoatyObject(
                objectType: "coaty.test.Echo",
                name: "echo of \(event.object?.name ?? event.objects?.first?.name ?? "?")"
            )
            try await manager.publish(AdvertiseEvent(echo))
        }
    }
    // Leave when stdin closes (the test closes its end of the pipe); finish() only acts once running.
    for await state in states where state == .online { break }
    _ = FileHandle.standardInput.readDataToEndOfFile()
    manager.finish()
    try await group.next()
    group.cancelAll()
}
