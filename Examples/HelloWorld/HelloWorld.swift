@main struct HelloWorld { static func main() {} }
