import CoatyCommunication
import CoatyModel
import Testing

@testable import CoatyControllers

/// Which routes an `IOActorController` observes for one actor as associations come and go.
struct ActorRoutesTests {
    @Test func aRouteIsObservedWhileASourceIsAssociatedOnIt() {
        var routes = ActorRoutes()
        let (a, b) = (ObjectID.random(), ObjectID.random())
        #expect(routes.associate(a, on: "r1").added == "r1")
        routes.started(WorkHandle(signal: OneShotSignal()), for: "r1")
        // A second source on the same route, and a rate change, start nothing new.
        #expect(routes.associate(b, on: "r1").added == nil)
        let unchanged = routes.associate(a, on: "r1")
        #expect(unchanged.added == nil && unchanged.released == nil)
        // The first source leaves: the route stays, b still uses it.
        #expect(routes.associate(a, on: nil).released == nil)
        // b moves to another route: r1 is released, r2 starts.
        let moved = routes.associate(b, on: "r2")
        #expect(moved.added == "r2")
        #expect(moved.released != nil)
        routes.started(WorkHandle(signal: OneShotSignal()), for: "r2")
        #expect(routes.removeAll().count == 1)
        #expect(routes.associate(b, on: "r2").added == "r2")
    }
}
