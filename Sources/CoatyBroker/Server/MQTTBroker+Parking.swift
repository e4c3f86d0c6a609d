import Synchronization

extension MQTTBroker {
    /// Serves each parked connection that wakes in a task of its own (see ``ParkedConnections``) until
    /// cancelled; then closes the parked ones and returns once every one has ended.
    func serveParkedConnections() async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                while let batch = await self.parked.next() {
                    for woken in batch {
                        group.addTask {
                            if await woken.connection.serve(woken) == .closed {
                                self.openConnections.subtract(1, ordering: .relaxed)
                            }
                        }
                    }
                }
            }
        } onCancel: {
            self.parked.stop()
        }
    }
}
