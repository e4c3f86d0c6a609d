import Dispatch
import Synchronization

/// Runs handlers at deadlines, all through one Dispatch timer for the whole process.
///
/// It exists for timeouts on a hot path such as ``EventStream/first(timeout:clock:isolation:)``, where almost
/// every timeout is cancelled long before it fires. Arming a timer of its own for each one costs a
/// system call and a wake-up of Dispatch's timer thread (about a tenth of a Call → Return round trip,
/// measured in Docs/Benchmarks.md), and a child task sleeping beside the waiting one costs more. Here
/// scheduling and cancelling only touch a heap under a lock; the shared timer is re-armed only when a
/// new deadline is earlier than every pending one, which equal timeouts never are.
///
/// Handlers run on a global Dispatch queue; they must be short and must not block.
final class DeadlineTimer: Sendable {
    /// The timer every ``EventStream`` uses.
    static let shared = DeadlineTimer()

    /// A scheduled handler, to cancel it.
    struct Token: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        let deadline: UInt64
        let id: UInt64
    }

    private struct State {
        /// A binary min-heap by deadline; cancelled entries stay until they surface or a compaction.
        var heap: [Entry] = []
        var handlers: [UInt64: @Sendable () -> Void] = [:]
        var nextID: UInt64 = 0
        /// The deadline the Dispatch timer is armed for, `UInt64.max` when disarmed.
        var armedDeadline = UInt64.max
    }

    private let state = Mutex(State())
    private nonisolated(unsafe) let source: any DispatchSourceTimer

    init() {
        let source = DispatchSource.makeTimerSource(queue: .global())
        self.source = source
        source.setEventHandler { [weak self] in self?.fire() }
        source.schedule(deadline: .distantFuture)
        source.resume()
    }

    deinit {
        self.source.cancel()
    }

    /// Calls `handler` once `delay` has passed, unless cancelled first.
    func schedule(after delay: Duration, _ handler: @escaping @Sendable () -> Void) -> Token {
        let deadline = Self.deadline(after: delay)
        return self.state.withLock { state in
            state.nextID += 1
            let id = state.nextID
            state.handlers[id] = handler
            Self.push(Entry(deadline: deadline, id: id), onto: &state.heap)
            if state.heap.count > 1024 && state.heap.count > 4 * state.handlers.count { Self.compact(&state) }
            if deadline < state.armedDeadline {
                state.armedDeadline = deadline
                self.source.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline))
            }
            return Token(id: id)
        }
    }

    /// Cancels a handler; it is not called if it has not started yet.
    func cancel(_ token: Token) {
        _ = self.state.withLock { $0.handlers.removeValue(forKey: token.id) }
    }

    private func fire() {
        let now = DispatchTime.now().uptimeNanoseconds
        let due = self.state.withLock { state -> [@Sendable () -> Void] in
            var due: [@Sendable () -> Void] = []
            while let first = state.heap.first, first.deadline <= now {
                Self.popFirst(from: &state.heap)
                if let handler = state.handlers.removeValue(forKey: first.id) { due.append(handler) }
            }
            // Drop cancelled entries at the top, so the timer is armed for a live one.
            while let first = state.heap.first, state.handlers[first.id] == nil { Self.popFirst(from: &state.heap) }
            state.armedDeadline = state.heap.first?.deadline ?? UInt64.max
            self.source.schedule(
                deadline: state.armedDeadline == UInt64.max
                    ? .distantFuture : DispatchTime(uptimeNanoseconds: state.armedDeadline)
            )
            return due
        }
        for handler in due { handler() }
    }

    /// `delay` from now in Dispatch's uptime nanoseconds, clamped to `[now, UInt64.max - 1]`.
    private static func deadline(after delay: Duration) -> UInt64 {
        let now = DispatchTime.now().uptimeNanoseconds
        let (seconds, attoseconds) = delay.components
        guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return now }
        let (secondsInNanoseconds, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let nanoseconds = secondsInNanoseconds &+ UInt64(max(0, attoseconds / 1_000_000_000))
        guard !overflow, nanoseconds < UInt64.max - 1 - now else { return UInt64.max - 1 }
        return now + nanoseconds
    }

    private static func compact(_ state: inout State) {
        let live = state.heap.filter { state.handlers[$0.id] != nil }
        state.heap = []
        state.heap.reserveCapacity(live.count)
        for entry in live { Self.push(entry, onto: &state.heap) }
    }

    private static func push(_ entry: Entry, onto heap: inout [Entry]) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private static func popFirst(from heap: inout [Entry]) {
        guard !heap.isEmpty else { return }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
