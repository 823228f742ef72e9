#if canImport(Glibc)
    import Glibc
#endif

/// How many cores this process may really use: the CPUs it may run on (its affinity mask, e.g.
/// `taskset` or a cpuset), bounded by its cgroup's CPU quota when one is set (Docker's `--cpus`,
/// a Kubernetes CPU limit), rounded up. The default of `--threads`: on a 64-core host, a
/// container limited to 2 CPUs gets 2 threads, not 64 that time-share 2 cores.
package enum CPUQuota {
    /// The cores this process may use.
    package static var usableCores: Int {
        let online = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        // `sched_getaffinity` is not visible to Swift without _GNU_SOURCE; /proc says the same.
        let allowed = read("/proc/self/status").flatMap { Self.allowedCPUs(status: $0) } ?? online
        let cores = max(1, min(online, allowed))
        guard let quota = Self.quotaCores(cgroup: read("/proc/self/cgroup") ?? "", read: read) else { return cores }
        return max(1, min(cores, quota))
    }

    /// The CPU quota of the cgroup a process is in, in whole cores rounded up, or nil when none is
    /// set: cgroup v2's `cpu.max` (`QUOTA PERIOD`, or `max PERIOD`) of its group and of every group
    /// above it, the smallest; or cgroup v1's `cpu.cfs_quota_us` / `cpu.cfs_period_us` (`-1`: none).
    ///
    /// - Parameters:
    ///   - cgroup: the text of `/proc/self/cgroup` (`0::/path` for v2, `N:cpu,cpuacct:/path` for v1).
    ///   - read: reads a file's text, nil when it is missing.
    static func quotaCores(cgroup: String, read: (String) -> String?) -> Int? {
        var smallest: Int?
        func consider(_ cores: Int?) {
            guard let cores else { return }
            smallest = min(smallest ?? cores, cores)
        }
        for line in cgroup.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = fields[2] == "/" ? "" : String(fields[2])
            if fields[0] == "0", fields[1].isEmpty {
                // v2: the group and every group above it; in a container, the group's own path is
                // usually not visible and the namespace's root (`/`) is the container's group.
                var candidates = [path]
                var parent = path
                while let slash = parent.lastIndex(of: "/") {
                    parent = String(parent[..<slash])
                    candidates.append(parent)
                }
                for candidate in Set(candidates) {
                    consider(read("/sys/fs/cgroup\(candidate)/cpu.max").flatMap(Self.v2Cores))
                }
            } else if fields[1].split(separator: ",").contains("cpu") {
                for base in ["/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"] {
                    for candidate in Set([path, ""]) {
                        guard let quota = read("\(base)\(candidate)/cpu.cfs_quota_us"),
                            let period = read("\(base)\(candidate)/cpu.cfs_period_us")
                        else { continue }
                        consider(Self.v1Cores(quota: quota, period: period))
                    }
                }
            }
        }
        return smallest
    }

    /// `200000 100000` → 2, `150000 100000` → 2, `max 100000` → nil.
    static func v2Cores(_ text: String) -> Int? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, let quota = Int(fields[0]), let period = Int(fields[1]) else { return nil }
        return cores(quota: quota, period: period)
    }

    /// `200000` and `100000` → 2; `-1` → nil.
    static func v1Cores(quota: String, period: String) -> Int? {
        guard let quota = Int(quota.filter { $0 != "\n" && $0 != " " }), let period = Int(period.filter { $0 != "\n" && $0 != " " }) else {
            return nil
        }
        return cores(quota: quota, period: period)
    }

    private static func cores(quota: Int, period: Int) -> Int? {
        guard quota > 0, period > 0 else { return nil }
        return max(1, (quota + period - 1) / period)
    }

    /// The CPUs of `/proc/self/status`'s `Cpus_allowed:` mask (`ff` or `00000000,0000000f`).
    static func allowedCPUs(status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else { return nil }
        var count = 0
        for character in line.dropFirst("Cpus_allowed:".count) where character != "," && character != " " && character != "\t" {
            guard let nibble = character.hexDigitValue else { return nil }
            count += nibble.nonzeroBitCount
        }
        return count > 0 ? count : nil
    }

    /// A small file's text (cgroup files are a line or two), or nil.
    static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
