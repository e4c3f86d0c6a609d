/// An IO context (`coaty.IoContext`): the scope in which IO sources and actors are routed.
///
/// Its ``CoatyObject/name`` is the IO context name, which must be a valid event filter when
/// associating. Apps add context properties (such as an operating state) as custom properties.
open class IOContext: CoatyObject, @unchecked Sendable {
    /// `coaty.IoContext`.
    override open class var objectType: String { CoreType.ioContext.objectType }
    /// ``CoreType/ioContext``.
    override public class var coreType: CoreType { .ioContext }
}
