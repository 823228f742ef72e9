#if canImport(Glibc)
    import Glibc
#endif

/// The standard `process_*` metrics (as Prometheus's own client libraries name them), read from
/// `/proc/self` at each scrape: CPU time, memory, file descriptors, start time.
struct ProcessStatistics: Sendable {
    var cpuSeconds: Double?
    var residentBytes: Int?
    var virtualBytes: Int?
    var openDescriptors: Int?
    var maxDescriptors: Int?
    var startTimeSeconds: Double?
    var threads: Int?

    /// This process, now.
    static func current() -> ProcessStatistics {
        var statistics = ProcessStatistics()
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        if let stat = CPUQuota.read("/proc/self/stat"), let fields = Self.statFields(stat), ticks > 0 {
            // Fields after the command (see proc(5)): utime 14, stime 15, num_threads 20,
            // starttime 22, vsize 23, rss 24 (1-based over the whole line).
            func field(_ number: Int) -> Int? { number - 3 < fields.count ? Int(fields[number - 3]) : nil }
            if let user = field(14), let system = field(15) { statistics.cpuSeconds = Double(user + system) / ticks }
            statistics.threads = field(20)
            statistics.virtualBytes = field(23)
            if let pages = field(24) { statistics.residentBytes = pages * Int(sysconf(Int32(_SC_PAGESIZE))) }
            if let start = field(22), let boot = Self.bootTime() { statistics.startTimeSeconds = Double(boot) + Double(start) / ticks }
        }
        statistics.openDescriptors = Self.openDescriptors()
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max {
            statistics.maxDescriptors = Int(clamping: limit.rlim_cur)
        }
        return statistics
    }

    /// The fields of `/proc/self/stat` after `(comm)` (which may hold spaces and parentheses).
    static func statFields(_ stat: String) -> [Substring]? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    private static func bootTime() -> Int? {
        guard let stat = CPUQuota.read("/proc/stat"), let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }) else {
            return nil
        }
        return Int(line.dropFirst("btime ".count))
    }

    private static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { $0.first }
            if name != UInt8(ascii: ".") { count += 1 }
        }
        // Less the one opendir holds.
        return max(0, count - 1)
    }

    var exposition: String {
        var text = ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: String?) {
            guard let value else { return }
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        metric("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", cpuSeconds.map { "\($0)" })
        metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", residentBytes.map { "\($0)" })
        metric("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", virtualBytes.map { "\($0)" })
        metric("process_open_fds", "gauge", "Number of open file descriptors.", openDescriptors.map { "\($0)" })
        metric("process_max_fds", "gauge", "Maximum number of open file descriptors.", maxDescriptors.map { "\($0)" })
        metric(
            "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
            startTimeSeconds.map { "\($0)" })
        metric("process_threads", "gauge", "Number of OS threads in the process.", threads.map { "\($0)" })
        return text
    }
}
