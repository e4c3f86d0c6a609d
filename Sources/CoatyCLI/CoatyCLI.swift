@main struct CoatyCLI { static func main() {} }
