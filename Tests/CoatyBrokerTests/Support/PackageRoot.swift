import FoundationEssentials

/// The package root, found by walking up from this file to the directory holding Package.swift.
func packageRoot(file: String = #filePath) -> String? {
    var url = URL(filePath: file).deletingLastPathComponent()
    while url.path != "/" {
        if FileManager.default.fileExists(atPath: url.appending(path: "Package.swift").path) { return url.path }
        url = url.deletingLastPathComponent()
    }
    return nil
}

/// `Tests/Fixtures/<relative>` in the package, where the test data lives.
func fixturePath(_ relative: String) -> String? {
    guard let root = packageRoot() else { return nil }
    return URL(filePath: root).appending(path: "Tests/Fixtures").appending(path: relative).path
}
