import CoatyCommunication
import CoatyModel

extension CoatyObject {
    /// A copy made through the object's JSON and decoded through `family`, as coaty-js clones an
    /// object; with `parent`, its `parentObjectId` is that id. Controllers copy what they keep or
    /// re-advertise, so that later changes to a mutable subclass do not reach it.
    ///
    /// - Throws: `CommunicationError` with code `.invalidArgument` if the object does not encode as
    ///   a JSON object; an encoding or decoding error.
    func copied(parent: ObjectID? = nil, family: ObjectFamily) throws -> CoatyObject {
        guard case .object(var members) = try self.jsonValue else {
            throw CommunicationError(.invalidArgument, "object \(self.objectID) does not encode as a JSON object")
        }
        if let parent { members["parentObjectId"] = .string(parent.rawValue) }
        return try CoatyJSONDecoder(family: family).decode(CoatyObject.self, fromValue: .object(members))
    }
}
