/// Why a line of a password or ACL file is not valid; the reason never quotes secrets.
struct AuthFileProblem: Error, Sendable, Hashable {
    var reason: String

    init(_ reason: String) { self.reason = reason }
}
