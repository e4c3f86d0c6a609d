import CoatyCommunication
import CoatyControllers
import Synchronization

/// Keeps the context a controller receives in `onInit`.
final class ContextBox: Sendable {
    private let value = Mutex<ControllerContext?>(nil)

    func set(_ context: ControllerContext) { self.value.withLock { $0 = context } }

    var context: ControllerContext? { self.value.withLock { $0 } }
}
