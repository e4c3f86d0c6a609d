/// The identity of a Coaty agent (`coaty.Identity`): every agent advertises one when it connects.
///
/// It has no fields beyond ``CoatyObject``'s; apps may add custom properties.
open class Identity: CoatyObject, @unchecked Sendable {
    /// `coaty.Identity`.
    override open class var objectType: String { CoreType.identity.objectType }
    /// ``CoreType/identity``.
    override public class var coreType: CoreType { .identity }
}
