import CLibCurl
import Synchronization

/// What a POST came to: the receiver's status, or why there was none.
package enum PostOutcome: Sendable, Equatable {
    case status(Int)
    /// No answer: a refused or dropped connection, a TLS failure, the time-out, in libcurl's words.
    case failure(String)
}

/// Posts a body to a URL; one per deliverer, used by its thread only.
package protocol WebhookPosting: AnyObject, Sendable {
    /// POSTs `body` with `headers` to `url`; the answer's status, or the reason there was none.
    func post(_ url: String, headers: [(String, String)], body: [UInt8]) -> PostOutcome
    /// Makes a post in progress, and every later one, fail at once: the deliverer is stopping.
    func cancel()
}

/// The one boundary with libcurl: an easy handle (whose connection is kept between posts), a
/// POST with headers and a total time-out, the status back. http and https only; redirects are not
/// followed (a receiver that moved answers 3xx, which is not an acknowledgement); TLS is
/// libcurl's (OpenSSL), with the system's CA bundle.
///
/// `@unchecked Sendable`: the handle is used by one thread at a time (its deliverer's), and
/// `cancelled` is atomic.
package final class CurlPoster: WebhookPosting, @unchecked Sendable {
    private let handle: UnsafeMutableRawPointer?
    private let cancelled = Atomic<Bool>(false)
    /// The total time a post may take, connecting included.
    package let timeoutMilliseconds: Int

    /// libcurl's process-wide set-up, once, before any handle (it is not thread-safe itself).
    private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    package init(timeoutMilliseconds: Int = 10_000) {
        _ = Self.initialized
        handle = curl_easy_init()
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    deinit {
        if let handle { curl_easy_cleanup(handle) }
    }

    package func cancel() {
        cancelled.store(true, ordering: .relaxed)
    }

    package func post(_ url: String, headers: [(String, String)], body: [UInt8]) -> PostOutcome {
        guard let handle else { return .failure("libcurl could not make a handle") }
        guard !cancelled.load(ordering: .relaxed) else { return .failure("stopped") }
        var list: UnsafeMutablePointer<curl_slist>?
        // No `Expect: 100-continue`: its wait would count against the time-out for nothing.
        for line in headers.map({ "\($0.0): \($0.1)" }) + ["Expect:"] {
            list = curl_slist_append(list, line)
        }
        defer { curl_slist_free_all(list) }
        var errorText = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let code: CURLcode = body.withUnsafeBytes { body in
            errorText.withUnsafeMutableBufferPointer { errorBuffer in
                curl_easy_reset(handle)
                _ = navd_curl_setopt_string(handle, CURLOPT_URL, url)
                _ = navd_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
                _ = navd_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
                _ = navd_curl_setopt_long(handle, CURLOPT_POST, 1)
                _ = navd_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, body.baseAddress ?? UnsafeRawPointer(bitPattern: 1))
                _ = navd_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count)
                _ = navd_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeRawPointer(list))
                _ = navd_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
                _ = navd_curl_setopt_string(handle, CURLOPT_USERAGENT, "navd-webhooks")
                _ = navd_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, UnsafeRawPointer(errorBuffer.baseAddress))
                // The answer's body is not read: only its status counts.
                _ = navd_curl_setopt_write_function(handle) { _, size, count, _ in size * count }
                // Checked while a post runs, so that stopping does not wait for a slow receiver.
                _ = navd_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
                _ = navd_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, Unmanaged.passUnretained(self).toOpaque())
                _ = navd_curl_setopt_xferinfo_function(handle) { context, _, _, _, _ in
                    guard let context else { return 0 }
                    let poster = Unmanaged<CurlPoster>.fromOpaque(context).takeUnretainedValue()
                    return poster.cancelled.load(ordering: .relaxed) ? 1 : 0
                }
                return curl_easy_perform(handle)
            }
        }
        guard code == CURLE_OK else {
            let detail = String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
        }
        var status = 0
        _ = navd_curl_response_code(handle, &status)
        return .status(status)
    }
}
