#ifndef NAVD_CLIBCURL_SHIM_H
#define NAVD_CLIBCURL_SHIM_H

#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
   wrapper per kind of argument. */

static inline CURLcode navd_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode navd_curl_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode navd_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*navd_curl_write_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode navd_curl_setopt_write_function(CURL *handle, navd_curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

typedef int (*navd_curl_xferinfo_callback)(void *context, curl_off_t downloadTotal, curl_off_t downloaded,
                                          curl_off_t uploadTotal, curl_off_t uploaded);

static inline CURLcode navd_curl_setopt_xferinfo_function(CURL *handle, navd_curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

static inline CURLcode navd_curl_response_code(CURL *handle, long *code) {
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

#endif
