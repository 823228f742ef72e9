import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The open-file limit (`RLIMIT_NOFILE`) and the connections it leaves room for.
enum FileDescriptorLimit {
    /// Descriptors kept for everything but connections: the store and its change log, the
    /// listening socket, MHD's inter-thread channels, standard streams.
    static let reserve = 256

    /// `RLIM_INFINITY` (all bits set), which Swift imports as a literal that does not fit `rlim_t`.
    private static let infinity = rlim_t.max

    /// Raises the soft open-file limit (up to the hard one) so that `connections` connections
    /// fit beside ``reserve`` other descriptors (a soft limit of 1,024 is common and would
    /// refuse connections long before `--max-connections`).
    ///
    /// - Returns: the connections that fit: `connections`, or fewer (with a warning) when the
    ///   hard limit is lower.
    static func fit(connections: Int, logger: Logger) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return connections }
        let needed = rlim_t(connections + reserve)
        if limit.rlim_cur != Self.infinity, limit.rlim_cur < needed {
            var raised = limit
            raised.rlim_cur = limit.rlim_max == Self.infinity ? needed : min(needed, limit.rlim_max)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        guard limit.rlim_cur != Self.infinity, limit.rlim_cur < needed else { return connections }
        let fitting = max(1, Int(limit.rlim_cur) - reserve)
        logger.warning(
            "the open-file limit leaves room for fewer connections than --max-connections",
            metadata: [
                "max_connections": "\(connections)", "connections": "\(fitting)", "open_file_limit": "\(limit.rlim_cur)"
            ])
        return fitting
    }
}
