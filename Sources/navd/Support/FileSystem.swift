#if canImport(Glibc)
import Glibc
#endif

enum FileSystem {
    /// `mkdir -p` of the folder holding `path`.
    static func createParentDirectory(of path: String) throws(StoreError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let folder = String(path[..<slash])
        var current = folder.hasPrefix("/") ? "" : "."
        for part in folder.split(separator: "/") where part != "." {
            current += "/" + part
            if mkdir(current, 0o755) != 0, errno != EEXIST {
                throw StoreError(message: "cannot create folder \(current): \(String(cString: strerror(errno)))")
            }
        }
    }
}
