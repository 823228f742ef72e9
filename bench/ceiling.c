/*
 * ceiling.c: the fastest a libmicrohttpd server can answer on this machine,
 * configured the way navd configures MHD (Sources/NavHTTP/HTTPServer.swift):
 *
 *   MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG
 *   MHD_OPTION_THREAD_POOL_SIZE      2 (or argv[2])
 *   MHD_OPTION_CONNECTION_LIMIT      1024
 *   MHD_OPTION_CONNECTION_TIMEOUT    30
 *   MHD_OPTION_CONNECTION_MEMORY_LIMIT 16384
 *
 * Every request gets the same 304-byte JSON body. As in navd, the response
 * is queued on the second (last) call of the access handler, never on the
 * first: a response queued on the first call makes MHD 0.9.75 answer
 * `Connection: close` (docs/design.md, "Building on libmicrohttpd").
 *
 * Usage: ceiling PORT [THREADS [POLLING [DELAY_US]]]   (PORT 0 picks a free port)
 * Prints "listening PORT" on stdout once it serves; stops on SIGINT/SIGTERM.
 *
 * For the stall experiment of bench/live.sh (docs/design.md, "Building on libmicrohttpd": MHD_USE_EPOLL hung
 * connections under load with a slow handler), POLLING is `poll` (the default, as above) or
 * `epoll` (MHD_USE_EPOLL instead of MHD_USE_POLL), and DELAY_US makes every answer wait that
 * many microseconds in the access handler first (usleep, holding the pool thread, as a slow
 * handler does).
 *
 * Built by bench/run.sh:
 *   cc -O2 -o ceiling bench/ceiling.c $(pkg-config --cflags --libs libmicrohttpd)
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char BODY[] =
    "{\"id\":\"3f2a9c1e5b7d4e6f8a0b1c2d3e4f5a6b\",\"graph\":\"news\",\"version\":7,"
    "\"path\":\"/top/list_news(category=1)/show_news(id=2)\",\"screens\":["
    "{\"id\":\"e1\",\"scene\":\"top\",\"segue\":\"root\",\"params\":{}},"
    "{\"id\":\"e2\",\"scene\":\"list_news\",\"params\":{\"category\":1}},"
    "{\"id\":\"e3\",\"scene\":\"show_news\",\"params\":{\"id\":2}}],"
    "\"context\":{}}";

static struct MHD_Response *response;
static unsigned int delay_us;

/* A non-NULL marker stored in *con_cls on the first call of each request. */
static int request_marker;

static enum MHD_Result
access_handler(void *cls, struct MHD_Connection *connection, const char *url,
               const char *method, const char *version, const char *upload_data,
               size_t *upload_data_size, void **con_cls)
{
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
    if (*con_cls == NULL) {
        /* First call: headers are in. Queue nothing yet (keep-alive). */
        *con_cls = &request_marker;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        /* A body chunk: consume and ignore it. */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (delay_us > 0) usleep(delay_us);
    return MHD_queue_response(connection, MHD_HTTP_OK, response);
}

static void
request_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                  enum MHD_RequestTerminationCode code)
{
    (void)cls; (void)connection; (void)code;
    *con_cls = NULL;
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PORT [THREADS]\n", argv[0]);
        return 2;
    }
    unsigned int port = (unsigned int)strtoul(argv[1], NULL, 10);
    unsigned int threads = argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 10) : 2;
    unsigned int polling = MHD_USE_POLL;
    if (argc > 3 && strcmp(argv[3], "epoll") == 0) polling = MHD_USE_EPOLL;
    else if (argc > 3 && strcmp(argv[3], "poll") != 0) {
        fprintf(stderr, "ceiling: POLLING is poll or epoll, not %s\n", argv[3]);
        return 2;
    }
    delay_us = argc > 4 ? (unsigned int)strtoul(argv[4], NULL, 10) : 0;

    response = MHD_create_response_from_buffer(sizeof(BODY) - 1, (void *)BODY,
                                               MHD_RESPMEM_PERSISTENT);
    if (response == NULL) {
        return 1;
    }
    MHD_add_response_header(response, "Content-Type", "application/json");

    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    /* Block before MHD starts its threads, so that only sigwait sees them. */
    pthread_sigmask(SIG_BLOCK, &signals, NULL);

    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | polling | MHD_USE_ITC | MHD_USE_ERROR_LOG,
        (uint16_t)port, NULL, NULL, access_handler, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)1024,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
        MHD_OPTION_NOTIFY_COMPLETED, request_completed, NULL,
        MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "ceiling: MHD_start_daemon failed on port %u\n", port);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    printf("listening %u\n", info != NULL ? (unsigned int)info->port : port);
    fflush(stdout);

    int received = 0;
    sigwait(&signals, &received);
    MHD_stop_daemon(daemon);
    MHD_destroy_response(response);
    return 0;
}
