import Foundation
import Glibc

// The memory rows of BrokerBenchmark: both brokers run as child processes and are measured the same
// way, by the growth of their VmRSS.

/// Opens `count` idle connections with one subscription each and returns the broker's resident memory
/// growth per connection, in KiB.
func idleMemoryPerConnection(_ broker: BrokerProcess, count: Int) throws -> Double {
    let before = broker.residentKiB
    var clients: [LoadClient] = []
    for index in 0..<count {
        let client = try LoadClient(port: broker.port, clientID: "idle-\(index)")
        try client.send(Packets.subscribe("idle/\(index)", qos: 1))
        _ = try client.nextPacket()
        clients.append(client)
    }
    let after = broker.residentKiB
    clients.removeAll()
    return Double(after - before) / Double(count)
}

/// Prints the memory per idle connection of both brokers.
func reportIdleMemory(connections: Int) throws {
    var memory: [String: Double] = [:]
    for start in [{ try BrokerProcess.embedded() }, { try BrokerProcess.mosquitto() }] {
        let broker = try start()
        memory[broker.name] = try idleMemoryPerConnection(broker, count: connections)
        broker.stop()
    }
    let ours = memory["embedded"] ?? 0
    let theirs = memory["mosquitto"] ?? 0
    print(
        "\nmemory per idle connection (\(connections) connections, one subscription each, VmRSS growth): "
            + "embedded \(format(ours, decimals: 1)) KiB, mosquitto \(format(theirs, decimals: 1)) KiB, "
            + "ratio \(format(theirs > 0 ? ours / theirs : 0, decimals: 2))×"
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
