import CoatyCore
import CoatyModel
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Prints the scene as it happens — one line per event: time, agent, event, object — and counts what
/// happened for the summary. Milestones let the scene wait for progress without sleeping.
final class Narrator: Sendable {
    enum Milestone: Sendable, Equatable {
        case serviceFound(client: String)
        case taskDone(number: Int, by: String)
        case agentRemoved(String)
        case returned(String)
    }

    private struct State {
        var counts: [String: Int] = [:]
        var milestones: [Milestone] = []
        var waiters:
            [(id: Int, predicate: @Sendable (Milestone) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID = 0
    }

    private let state = Mutex(State())
    private let useColour: Bool
    private let output: @Sendable (String) -> Void

    /// - Parameters:
    ///   - colour: Whether to colour the agent names; defaults to standard output being a terminal and
    ///     `NO_COLOR` unset.
    ///   - output: Where lines go; defaults to standard output, unbuffered.
    init(colour: Bool? = nil, output: (@Sendable (String) -> Void)? = nil) {
        self.useColour = colour ?? (StandardStream.output.isTerminal && getenv("NO_COLOR") == nil)
        self.output = output ?? { line in StandardStream.output.write(line + "\n") }
    }

    /// Prints one event line and counts it under `pattern`.
    func event(_ agent: String, _ pattern: String, _ detail: String) {
        self.state.withLock { $0.counts[pattern, default: 0] += 1 }
        self.line(agent, pattern, detail)
    }

    /// Prints a line without counting it.
    func line(_ agent: String, _ what: String, _ detail: String) {
        let agentColumn = pad(agent, 9)
        let whatColumn = pad(what, 18)
        let coloured = self.useColour ? "\u{1B}[\(Self.colour(for: agent))m\(agentColumn)\u{1B}[0m" : agentColumn
        self.output("\(StandardStream.timeOfDay())  \(coloured) \(whatColumn) \(detail)")
    }

    /// Prints a plain line.
    func say(_ text: String) {
        self.output(self.useColour ? "\u{1B}[1m\(text)\u{1B}[0m" : text)
    }

    /// How many events of each pattern were printed.
    var counts: [String: Int] { self.state.withLock { $0.counts } }

    /// Records a milestone and wakes whoever waits for it.
    func reach(_ milestone: Milestone) {
        let woken = self.state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.milestones.append(milestone)
            let matching = state.waiters.filter { $0.predicate(milestone) }
            state.waiters.removeAll { $0.predicate(milestone) }
            return matching.map(\.continuation)
        }
        for continuation in woken { continuation.resume(returning: true) }
    }

    /// Milestones reached so far.
    var milestones: [Milestone] { self.state.withLock { $0.milestones } }

    /// Waits until a milestone matching `predicate` was reached (possibly already), or `timeout` passed.
    ///
    /// - Returns: Whether it was reached.
    func wait(for timeout: Duration = .seconds(20), until predicate: @escaping @Sendable (Milestone) -> Bool) async
        -> Bool
    {
        let id = self.state.withLock { state -> Int? in
            if state.milestones.contains(where: predicate) { return nil }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let already = self.state.withLock { state -> Bool in
                        if state.milestones.contains(where: predicate) { return true }
                        state.waiters.append((id, predicate, continuation))
                        return false
                    }
                    if already { continuation.resume(returning: true) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                let waiter = self.state.withLock { state in
                    let waiter = state.waiters.first { $0.id == id }
                    state.waiters.removeAll { $0.id == id }
                    return waiter
                }
                waiter?.continuation.resume(returning: false)
                return false
            }
            let reached = await group.next() ?? false
            group.cancelAll()
            return reached
        }
    }

    private static func colour(for agent: String) -> Int {
        switch agent.split(separator: " ").first ?? "" {
        case "service": 36
        case "monitor": 35
        case "scene": 1
        default: agent.hasSuffix("A") ? 32 : 33
        }
    }
}

private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}
