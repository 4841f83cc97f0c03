// Reading files and folders: the one place the MRTD module touches the file system (trust
// stores and offline dumps), through FoundationEssentials.
import FoundationEssentials

/// A file or folder that could not be read.
struct FileInputError: Error {
    var message: String
}

enum FileInput {
    static func isDirectory(_ path: String) throws(FileInputError) -> Bool {
        var directory: Bool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &directory) else {
            throw FileInputError(message: "no such file or folder")
        }
        return directory
    }

    /// The names of the regular files in a folder, sorted.
    static func list(_ path: String) throws(FileInputError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: path).filter { name in
                var directory: Bool = false
                return FileManager.default.fileExists(atPath: join(path, name), isDirectory: &directory) && !directory
            }.sorted()
        } catch {
            throw FileInputError(message: "the folder cannot be read")
        }
    }

    static func read(_ path: String) throws(FileInputError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FileInputError(message: "the file cannot be read")
        }
        return [UInt8](data)
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }
}
