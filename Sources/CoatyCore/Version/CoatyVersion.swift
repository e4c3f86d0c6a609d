/// The version of this package, following semantic versioning (see CONTRIBUTING.md).
///
/// Before 1.0 a minor version may break source compatibility; a patch version never does. The
/// value names the release the current sources belong to: between releases it carries a `-dev`
/// suffix.
public enum CoatyVersion {
    /// The version as `major.minor.patch`, with an optional pre-release suffix.
    public static let string = "0.2.0-dev"
}
