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

/// `../shared/<relative>` beside the package root, where CI places the shared reference data.
func sharedPath(_ relative: String) -> String? {
    guard let root = packageRoot() else { return nil }
    return URL(filePath: root).deletingLastPathComponent().appending(path: "shared").appending(path: relative).path
}
