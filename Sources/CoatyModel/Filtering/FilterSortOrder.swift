/// The direction in which ``ObjectFilter`` results are ordered by one property, sent as `"Asc"` or
/// `"Desc"`.
///
/// Named `FilterSortOrder` rather than `SortOrder` so that it does not collide with Foundation's
/// `SortOrder` in files that import both.
public enum FilterSortOrder: String, Sendable, Hashable, Codable, CaseIterable {
    /// Ascending: missing values first, then `false` before `true`, smaller numbers first, strings
    /// by ``FilterCollation``.
    case ascending = "Asc"
    /// The reverse of ``ascending``.
    case descending = "Desc"
}
