import CoatyCommunication
import CoatyControllers
import CoatyMQTT
import CoatyModel

/// One agent of the example in its own process, against any broker: `io-routing router|sensor|display`.
///
/// The sensor publishes its readings once it is associated and leaves; a display leaves when its
/// association ends (the sensor left) or, with `--shows`, after showing that many readings; the
/// sensor leaves early when its association ends (every display left); the router leaves once every
/// association it made has ended.
enum AgentRole {
    static func run(_ options: Options) async throws {
        let narrator = Narrator()
        func configuration(_ name: String, _ nodes: [IONode] = []) -> Container.Configuration {
            Container.Configuration(
                transport: MQTTTransport(
                    configuration: .init(
                        brokerURL: options.broker,
                        username: options.username,
                        password: options.password,
                        tls: .init(trustedCertificates: options.caFile.map { .file($0) })
                    )
                ),
                communication: .init(identity: Identity(name: name), ioNodes: nodes, namespace: options.namespace)
            )
        }
        switch options.role {
        case .router:
            let router = IORouter(context: Home.context(), rules: Home.rules)
            let log = RouterLog(router: router, narrator: narrator)
            try await Container.withRunning(configuration: configuration("router"), controllers: [router, log]) { _ in
                narrator.say("router: routing \(Home.contextName) on \(options.broker)")
                var routed = false
                for await count in log.activeCounts {
                    if count > 0 {
                        routed = true
                    } else if routed {
                        break
                    }
                }
                narrator.say("router: every association has ended; leaving")
            }
        case .sensor:
            let sensor = SensorController(narrator: narrator)
            try await Container.withRunning(
                configuration: configuration("sensor", [sensor.node]),
                controllers: sensor.controllers
            ) { _ in
                narrator.say("sensor: joined \(options.broker); waiting for the router to associate the thermometer")
                guard try await sensor.association().first(where: { $0 }) != nil else { return }
                let published = try await sensor.publish(readings: 1...options.readings, pacing: .milliseconds(100))
                let early = published < options.readings ? " before its association ended" : ""
                narrator.say("sensor: published \(published) readings\(early); leaving")
            }
        case .display:
            let display = DisplayController(room: options.room, narrator: narrator)
            try await Container.withRunning(
                configuration: configuration("\(options.room) display", [display.node]),
                controllers: display.controllers
            ) { _ in
                let leaving = options.shows.map { "after \($0) readings or " } ?? ""
                narrator.say(
                    "\(options.room) display: joined \(options.broker); leaving \(leaving)when its association ends"
                )
                let associations = try display.association()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        var associated = false
                        for await state in associations {
                            if state {
                                associated = true
                            } else if associated {
                                return
                            }
                        }
                    }
                    if let shows = options.shows {
                        group.addTask {
                            var shown = 0
                            for await _ in display.readings {
                                shown += 1
                                if shown == shows { return }
                            }
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
            narrator.say("\(options.room) display: showed \(HomeScene.describe(display.shown)); left")
        case .scene, .help:
            throw ExampleError(description: "\(options.role) is not a single agent")
        }
    }
}
