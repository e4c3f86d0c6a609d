/// A failure of the example itself (not of the framework's API), with a message for the user.
struct ExampleError: Error, CustomStringConvertible {
    var description: String
}
