/// The kind of media of an ``Annotation``; a number on the wire.
public enum AnnotationType: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Text.
    case text = 0
    /// An image.
    case image = 1
    /// Audio.
    case audio = 2
    /// Video.
    case video = 3
    /// A 3D object.
    case object3D = 4
    /// A PDF document.
    case pdf = 5
    /// A URL of a web document.
    case webDocumentURL = 6
    /// A URL of live data.
    case liveDataURL = 7
}
