/// Where an ``Annotation``'s media is stored; a number on the wire.
public enum AnnotationStatus: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Stored on the creating device only.
    case storedLocally = 0
    /// Storage has been requested.
    case storageRequest = 1
    /// Published and downloadable.
    case published = 2
    /// Outdated.
    case outdated = 3
}
