import Synchronization

/// The task waiting until a queued subscription is in place, resumed once: by the send loop when it
/// has subscribed (or given the connection up), or at once when the task is cancelled, so that an
/// observation never outlasts its task's cancellation while a connection keeps its subscribe pending.
final class SubscriptionWaiter: Sendable {
    private enum Slot {
        case empty
        case waiting(CheckedContinuation<Void, Never>)
        case done
    }

    private let slot = Mutex(Slot.empty)

    /// Suspends until ``resume()``; returns at once if it was already called.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = self.slot.withLock { slot -> Bool in
                    guard case .empty = slot else { return true }
                    slot = .waiting(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            self.resume()
        }
    }

    /// Resumes the waiting task; later calls do nothing.
    func resume() {
        let continuation = self.slot.withLock { slot -> CheckedContinuation<Void, Never>? in
            defer { slot = .done }
            guard case .waiting(let continuation) = slot else { return nil }
            return continuation
        }
        continuation?.resume()
    }
}
