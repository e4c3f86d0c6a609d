/// The text of an error made of a code, a message and an optional cause, as the framework's error
/// types print themselves: `code: message (cause)`.
///
/// Many messages already quote their cause (`"cannot connect to …: \(error)"`, or a topic error's own
/// description), and the cause is kept as `underlying` for code that inspects it. Printing it a
/// second time made lines such as `connect failed: cannot connect to mqtt://…: connect(…) failed:
/// Connection refused (errno 111) (connect(…) failed: Connection refused (errno 111))`, so the cause
/// is added only when the message does not already contain it.
///
/// - Parameters:
///   - code: The kind of failure.
///   - message: The human-readable explanation.
///   - underlying: The cause, if any.
/// - Returns: The error's description.
package func describeError(code: some CustomStringConvertible, message: String, underlying: (any Error)?) -> String {
    let head = "\(code): \(message)"
    guard let underlying else { return head }
    let cause = String(describing: underlying)
    return message.contains(cause) ? head : "\(head) (\(cause))"
}
