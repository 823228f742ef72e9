#ifndef NAVD_CMICROHTTPD_SHIM_H
#define NAVD_CMICROHTTPD_SHIM_H

// Swift cannot call C variadic functions or use function-like macros, so the
// few libmicrohttpd entry points navd needs that are variadic get
// `static inline` wrappers here. Everything else is imported as declared in
// <microhttpd.h>.

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/// `MHD_SIZE_UNKNOWN` is a macro cast Swift does not import.
static const uint64_t navd_mhd_size_unknown = MHD_SIZE_UNKNOWN;

/// `MHD_INVALID_SOCKET` as a constant Swift can compare against.
static const MHD_socket navd_mhd_invalid_socket = MHD_INVALID_SOCKET;

/// Header fields and query arguments in one `MHD_get_connection_values` pass
/// (the kinds are bits; Swift cannot or the imported enum's cases).
static const enum MHD_ValueKind navd_mhd_headers_and_arguments =
    (enum MHD_ValueKind)(MHD_HEADER_KIND | MHD_GET_ARGUMENT_KIND);

/// Starts a daemon (`MHD_start_daemon`) with the options in `options`
/// (an `MHD_OPTION_END`-terminated array) plus a request-completed callback.
///
/// The access handler is registered for every request (no accept policy).
/// Returns NULL when MHD_start_daemon fails (port in use, bad options, ...).
static inline struct MHD_Daemon *
navd_mhd_start(unsigned int flags, uint16_t port,
               MHD_AccessHandlerCallback cb, void *cls,
               MHD_RequestCompletedCallback done, void *done_cls,
               const struct MHD_OptionItem *options)
{
    return MHD_start_daemon(flags, port,
                            NULL, NULL,
                            cb, cls,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_NOTIFY_COMPLETED, done, done_cls,
                            MHD_OPTION_END);
}

/// The port the daemon's listening socket is bound to, or 0 when unknown.
///
/// Asks `MHD_get_daemon_info(MHD_DAEMON_INFO_BIND_PORT)` and falls back to
/// `getsockname` on `MHD_DAEMON_INFO_LISTEN_FD`.
static inline uint16_t
navd_mhd_bind_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    if (info != NULL && info->port != 0) {
        return info->port;
    }
    info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
    if (info == NULL || info->listen_fd == MHD_INVALID_SOCKET) {
        return 0;
    }
    struct sockaddr_storage address;
    socklen_t length = sizeof(address);
    if (getsockname(info->listen_fd, (struct sockaddr *)&address, &length) != 0) {
        return 0;
    }
    if (address.ss_family == AF_INET) {
        return ntohs(((struct sockaddr_in *)&address)->sin_port);
    }
    if (address.ss_family == AF_INET6) {
        return ntohs(((struct sockaddr_in6 *)&address)->sin6_port);
    }
    return 0;
}

/// The number of connections the daemon currently holds
/// (`MHD_get_daemon_info(MHD_DAEMON_INFO_CURRENT_CONNECTIONS)`).
static inline unsigned int
navd_mhd_current_connections(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info == NULL ? 0 : info->num_connections;
}

/// Frees a response body handed over by `navd_mhd_response_copy`.
static inline void
navd_mhd_free_body(void *body)
{
    free(body);
}

/// Creates a response whose body is a malloc'ed copy of `size` bytes at
/// `data` (`MHD_create_response_from_buffer_with_free_callback`); MHD frees
/// the copy when it destroys the response. Returns NULL when out of memory.
static inline struct MHD_Response *
navd_mhd_response_copy(size_t size, const void *data)
{
    if (size == 0 || data == NULL) {
        return MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    }
    void *copy = malloc(size);
    if (copy == NULL) {
        return NULL;
    }
    memcpy(copy, data, size);
    struct MHD_Response *response =
        MHD_create_response_from_buffer_with_free_callback(size, copy,
                                                           navd_mhd_free_body);
    if (response == NULL) {
        free(copy);
    }
    return response;
}

/// An `MHD_OPTION_EXTERNAL_LOGGER` entry for an `MHD_OPTION_ARRAY`: MHD's
/// error messages go to `logger(cls, format, args)` instead of stderr.
static inline struct MHD_OptionItem
navd_mhd_option_logger(MHD_LogCallback logger, void *cls)
{
    struct MHD_OptionItem item = {
        MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)logger, cls
    };
    return item;
}

/// An unescape callback that leaves `%XX` sequences as they were sent; it
/// only reports the length. MHD has already turned `+` into a space in query
/// arguments before calling it.
static inline size_t
navd_mhd_keep_escapes(void *cls, struct MHD_Connection *connection, char *s)
{
    (void)cls;
    (void)connection;
    return strlen(s);
}

/// An `MHD_OPTION_UNESCAPE_CALLBACK` entry for an `MHD_OPTION_ARRAY` that
/// keeps percent-encoding in the URL path and the query arguments, so that
/// the path reaches the application as sent (an encoded `/` stays `%2F`) and
/// query bytes (even `%00`) can be decoded without C-string truncation.
static inline struct MHD_OptionItem
navd_mhd_option_keep_escapes(void)
{
    struct MHD_OptionItem item = {
        MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)&navd_mhd_keep_escapes, NULL
    };
    return item;
}

/// The two connection notifications, as constants Swift can compare against.
static const enum MHD_ConnectionNotificationCode navd_mhd_connection_started = MHD_CONNECTION_NOTIFY_STARTED;
static const enum MHD_ConnectionNotificationCode navd_mhd_connection_closed = MHD_CONNECTION_NOTIFY_CLOSED;

/// `MHD_OPTION_URI_LOG_CALLBACK`'s callback (microhttpd.h declares no type for it): called
/// once the request line is parsed, before MHD splits the query off the URI; its result
/// becomes the request's `*con_cls`.
typedef void *(*navd_mhd_uri_log_callback)(void *cls, const char *uri,
                                           struct MHD_Connection *connection);

/// An `MHD_OPTION_URI_LOG_CALLBACK` entry for an `MHD_OPTION_ARRAY`.
static inline struct MHD_OptionItem
navd_mhd_option_uri_log(navd_mhd_uri_log_callback callback, void *cls)
{
    struct MHD_OptionItem item = {
        MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)callback, cls
    };
    return item;
}

/// An `MHD_OPTION_NOTIFY_CONNECTION` entry for an `MHD_OPTION_ARRAY`.
static inline struct MHD_OptionItem
navd_mhd_option_notify_connection(MHD_NotifyConnectionCallback callback, void *cls)
{
    struct MHD_OptionItem item = {
        MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)callback, cls
    };
    return item;
}

/// The size in bytes of the request's head, request line to blank line included
/// (`MHD_get_connection_info(MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE)`), or 0 when MHD
/// cannot tell (before the headers are in).
static inline size_t
navd_mhd_request_header_size(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}

/// The connection's socket (`MHD_get_connection_info(MHD_CONNECTION_INFO_CONNECTION_FD)`),
/// or `MHD_INVALID_SOCKET`.
static inline MHD_socket
navd_mhd_connection_socket(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? MHD_INVALID_SOCKET : info->connect_fd;
}

/// The pointer an `MHD_OPTION_NOTIFY_CONNECTION` callback kept in the connection's
/// `socket_context` (`MHD_get_connection_info(MHD_CONNECTION_INFO_SOCKET_CONTEXT)`), or NULL.
static inline void *
navd_mhd_socket_context(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

#ifdef __linux__
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/// Watches `fd` for its peer hanging up (`EPOLLRDHUP`; `EPOLLHUP` and `EPOLLERR` always come),
/// edge-triggered, with `token` as the event's data; a socket already in the set gets the new
/// token. Only a hang-up is asked for, not readability: a client that pipelined its next
/// request is no event. Returns 0, or the errno of `epoll_ctl`.
static inline int
navd_hangup_watch(int epfd, int fd, uint64_t token)
{
    struct epoll_event event;
    memset(&event, 0, sizeof(event));
    event.events = EPOLLRDHUP | EPOLLET;
    event.data.u64 = token;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event) == 0) {
        return 0;
    }
    if (errno == EEXIST && epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &event) == 0) {
        return 0;
    }
    return errno;
}

/// Waits up to `timeout` ms (-1: for good) for hang-ups; writes up to `max` tokens to `tokens`.
/// Returns how many, or -1 (errno set) when the wait failed.
static inline int
navd_hangup_wait(int epfd, uint64_t *tokens, int max, int timeout)
{
    struct epoll_event events[64];
    if (max > 64) {
        max = 64;
    }
    int count = epoll_wait(epfd, events, max, timeout);
    for (int index = 0; index < count; index++) {
        tokens[index] = events[index].data.u64;
    }
    return count;
}

/// Opens the epoll set of a hang-up watch with its wake-up descriptor (an eventfd, readable
/// once woken, with token 0) in it. Returns the set, or -1; `*wakeup` gets the eventfd.
static inline int
navd_hangup_open(int *wakeup)
{
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) {
        return -1;
    }
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) {
        close(epfd);
        return -1;
    }
    struct epoll_event event;
    memset(&event, 0, sizeof(event));
    event.events = EPOLLIN;
    event.data.u64 = 0;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event) != 0) {
        close(fd);
        close(epfd);
        return -1;
    }
    *wakeup = fd;
    return epfd;
}

/// Wakes the watch's thread (its eventfd becomes readable).
static inline void
navd_hangup_wake(int wakeup)
{
    eventfd_write(wakeup, 1);
}
#endif

#endif
