import Foundation
import Glibc

// The memory rows of BrokerBenchmark: both brokers run as child processes and are measured the same
// way, by the growth of their VmRSS.

/// The memory of idle connections: what `count` of them added to the resident size of a broker that
/// already serves `count`, and what all of them added to the freshly started one.
struct IdleMemory {
    /// KiB per connection of the second `count`.
    var perConnection: Double
    /// KiB per connection of all of them, from the start, with what the first ones set up once.
    var fromStart: Double
}

/// Opens twice `count` idle connections with one subscription each and returns the broker's resident
/// memory growth per connection (see ``IdleMemory``).
///
/// The growth over the second half is what a connection costs: the first half also pays for what a
/// broker sets up once, under load, for any number of connections (the embedded broker's executor
/// threads and their allocator arenas; mosquitto has none). The resident size is read once it has
/// stopped changing, as the last connections may still be settling.
func idleMemoryPerConnection(_ broker: BrokerProcess, count: Int) throws -> IdleMemory {
    let start = broker.residentKiB
    var clients: [LoadClient] = []
    var readings: [Int] = []
    for half in 0..<2 {
        for index in (half * count)..<((half + 1) * count) {
            let client = try LoadClient(port: broker.port, clientID: "idle-\(index)")
            try client.send(Packets.subscribe("idle/\(index)", qos: 1))
            _ = try client.nextPacket()
            clients.append(client)
        }
        readings.append(settledResidentKiB(broker))
    }
    clients.removeAll()
    return IdleMemory(
        perConnection: Double(readings[1] - readings[0]) / Double(count),
        fromStart: Double(readings[1] - start) / Double(2 * count)
    )
}

/// The broker's resident size once three readings 100 ms apart agree (at most 3 s).
private func settledResidentKiB(_ broker: BrokerProcess) -> Int {
    var last = broker.residentKiB
    var same = 0
    for _ in 0..<30 where same < 2 {
        usleep(100_000)
        let now = broker.residentKiB
        same = now == last ? same + 1 : 0
        last = now
    }
    return last
}

/// Prints the memory per idle connection of both brokers.
func reportIdleMemory(connections: Int) throws {
    var memory: [String: IdleMemory] = [:]
    for start in [{ try BrokerProcess.embedded() }, { try BrokerProcess.mosquitto() }] {
        let broker = try start()
        memory[broker.name] = try idleMemoryPerConnection(broker, count: connections)
        broker.stop()
    }
    let ours = memory["embedded"] ?? IdleMemory(perConnection: 0, fromStart: 0)
    let theirs = memory["mosquitto"] ?? IdleMemory(perConnection: 0, fromStart: 0)
    func ratio(_ a: Double, _ b: Double) -> String { format(b > 0 ? a / b : 0, decimals: 2) + "×" }
    print(
        "\nmemory per idle connection (one subscription each, VmRSS growth over connections "
            + "\(connections + 1)–\(2 * connections)): embedded \(format(ours.perConnection, decimals: 2)) KiB, "
            + "mosquitto \(format(theirs.perConnection, decimals: 2)) KiB, "
            + "ratio \(ratio(ours.perConnection, theirs.perConnection))"
    )
    print(
        "  over all \(2 * connections) from the start: embedded \(format(ours.fromStart, decimals: 2)) KiB, "
            + "mosquitto \(format(theirs.fromStart, decimals: 2)) KiB, ratio \(ratio(ours.fromStart, theirs.fromStart))"
    )
}

/// Connects `count` clean-session clients with one subscription each, then disconnects them all.
func connectAndDisconnect(_ broker: BrokerProcess, count: Int) throws {
    var clients: [LoadClient] = []
    clients.reserveCapacity(count)
    for index in 0..<count {
        let client = try LoadClient(port: broker.port, clientID: "cycle-\(index)")
        try client.send(Packets.subscribe("cycle/\(index)", qos: 1))
        _ = try client.nextPacket()
        clients.append(client)
    }
    for client in clients { try client.send([0xE0, 0x00]) }
    clients.removeAll()
}

/// Prints both brokers' resident size after each round of `connectionsPerRound` connects and
/// disconnects, the brokers taking turns.
///
/// A broker that frees what a connection took stays flat after the first rounds; one that leaks, or
/// whose allocator keeps freed memory, grows round after round.
func reportConnectCycles(rounds: Int, connectionsPerRound: Int) throws {
    let brokers = [try BrokerProcess.embedded(), try BrokerProcess.mosquitto()]
    defer { for broker in brokers { broker.stop() } }
    print(
        "\nresident size (MiB) across \(rounds) rounds of \(connectionsPerRound) connects and disconnects "
            + "(clean sessions, one subscription each):"
    )
    var rows = brokers.map { [format(Double($0.residentKiB) / 1024, decimals: 1)] }
    for _ in 0..<rounds {
        for (index, broker) in brokers.enumerated() {
            try connectAndDisconnect(broker, count: connectionsPerRound)
            // Give the broker a moment to handle the disconnects before reading its size.
            usleep(300_000)
            rows[index].append(format(Double(broker.residentKiB) / 1024, decimals: 1))
        }
    }
    for (broker, row) in zip(brokers, rows) {
        print("  " + pad(broker.name, 11) + row.joined(separator: " → "))
    }
}
