/// What the ``JSONTreeEncoder``s of one encoding share: the user info, the object graph being
/// written (if any), and the objects being encoded, to refuse one that contains itself. Without user
/// info it is made only once an object is encoded (see `JSONTreeEncoder.session`).
///
/// One encoding runs on one thread, so nothing here is locked; like the encoders, this type is not
/// `Sendable`.
final class EncodingSession {
    let userInfo: [CodingUserInfoKey: Any]
    /// The object graph this encoding writes a table entry of, if any.
    let graph: ObjectGraphEncodingState?
    /// The objects whose `encode(to:)` is running, outermost first. Unchecked for the reason
    /// `EncodedObject` gives.
    @exclusivity(unchecked) var objectsInProgress: [CoatyObject] = []

    init(userInfo: [CodingUserInfoKey: Any]) {
        self.userInfo = userInfo
        self.graph =
            userInfo.isEmpty ? nil : userInfo[.objectGraphEncodingState] as? ObjectGraphEncodingState
    }
}
