/*
 * watchers.c: many server-sent-event watchers on one navd, and (optionally) paced
 * navigations that measure how long a change takes to reach its watcher.
 * Used by bench/live.sh (BENCHMARKS.md, "Live sessions").
 *
 *   watchers PORT SESSIONS_FILE COUNT [--seconds S] [--pace RATE] [--drivers K]
 *            [--connect-batch B] [--nav-sessions M] [--first F]
 *
 * SESSIONS_FILE holds "id token" lines (bench/sessions.py). COUNT sessions from line F + 1 on
 * (the first COUNT by default) each get
 * one watcher: a connection to 127.0.0.1:PORT sending
 *   GET /v1/sessions/ID/events  Accept: text/event-stream  Authorization: Bearer TOKEN
 * whose chunked answer is decoded and read as server-sent events (`event: view`,
 * `event: lifecycle`, `event: end`, `: ping` comments). Connections are opened B (512) at a
 * time. Once every watcher has its opening `view`, "READY …" is printed on stdout.
 *
 * Without --pace the watchers then sit idle (reading whatever comes: heartbeats, or the views
 * of navigations someone else sends) for S seconds, or until SIGINT/SIGTERM when S is 0.
 *
 * With --pace RATE, K (16) keep-alive connections send RATE navigations per second for S
 * seconds, spread round-robin over the first M (all) watched sessions, alternating per session
 * between `^/top/list_news(category=1)/show_news(id=2)` and `^/top` (the sessions must start
 * at /top), never two at once to one session. Each answer's arrival is timestamped with its
 * session and version (the ETag), and so is each `view` message's arrival on the session's
 * watcher; the delivery latency is the view's time minus the answer's (a view that arrives
 * before its answer counts as 0, and is counted as "early").
 *
 * Prints on stdout, at the end:
 *   RESULT cpu_user_s=… cpu_sys_s=… watchers=… open=… failed=… closed=… ends=… views=… pings=… pings_min=… pings_max=…
 *          connect_s=… navigations=… nav_rps=… nav_non2xx=… matched=… early=… unmatched=…
 *          lat_p50_us=… lat_p90_us=… lat_p99_us=… lat_p999_us=… lat_max_us=… owed=…
 * where cpu_* is the client's own CPU time (it shares the machine with navd), pings_min/max are
 * over the watchers still open, owed is the most navigations the pacing fell behind, and
 * unmatched counts navigations answered 2xx whose view never arrived (it must be 0).
 *
 * Single-threaded, epoll, non-blocking sockets; raises its own open-file limit to the hard one.
 * Built by bench/live.sh:  cc -O2 -o watchers bench/watchers.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

enum { WATCHER = 1, DRIVER = 2 };
enum { CONNECTING, HEAD, BODY, GONE };
enum { CHUNK_SIZE, CHUNK_DATA, CHUNK_END, CHUNK_DONE };
enum { EV_NONE, EV_VIEW, EV_LIFECYCLE, EV_END };

/* The last few (version, time) pairs of one session, answers or views, to match them up. */
#define RING 4
struct ring {
    long version[RING];
    int64_t at[RING];
    int next;
};

struct conn {
    int fd;
    int kind;
    int state;
    int session;          /* watcher: its session; driver: the session of the request in flight */
    char *out;            /* bytes still to send */
    size_t out_len, out_off;
    char head[8192];      /* the response head, until its blank line */
    size_t head_len;
    /* watcher: the chunked body, decoded, as server-sent-event lines */
    int chunk_state;
    int chunk_extension;
    size_t chunk_left;
    char *line;
    size_t line_len, line_cap;
    int event;
    long view_version;
    long pings, views;
    int opened;
    /* driver */
    size_t body_left;
    int status;
    long etag;
    int busy;
};

static const char *host = "127.0.0.1";
static int port;
static int epfd;
static struct conn *conns;
static int watcher_count, driver_count;
static char (*ids)[64], (*tokens)[128];
static int session_count;

static volatile sig_atomic_t stopping;
static long opened, failed, closed_count, ends, views_total, pings_total;
static long navigations, nav_non2xx, matched, early, owed_max;
static struct ring *answers, *views;
static int *turn, *in_flight;
static int64_t *latencies;
static size_t latency_count, latency_cap;

static int64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void on_signal(int signal_number)
{
    (void)signal_number;
    stopping = 1;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void record_latency(int64_t us)
{
    if (latency_count == latency_cap) {
        latency_cap = latency_cap ? latency_cap * 2 : 65536;
        latencies = realloc(latencies, latency_cap * sizeof *latencies);
        if (!latencies) die("realloc");
    }
    if (us <= 0) {
        early++;
        us = 0;
    }
    latencies[latency_count++] = us;
    matched++;
}

/* Finds `version` in a ring (and forgets it); returns its time, or -1. */
static int64_t ring_take(struct ring *r, long version)
{
    for (int i = 0; i < RING; i++) {
        if (r->at[i] > 0 && r->version[i] == version) {
            int64_t at = r->at[i];
            r->at[i] = 0;
            return at;
        }
    }
    return -1;
}

static void ring_put(struct ring *r, long version, int64_t at)
{
    r->version[r->next] = version;
    r->at[r->next] = at;
    r->next = (r->next + 1) % RING;
}

static void view_arrived(int session, long version, int64_t at)
{
    if (!answers) return;
    int64_t answered = ring_take(&answers[session], version);
    if (answered >= 0) record_latency(at - answered);
    else ring_put(&views[session], version, at);
}

static void answer_arrived(int session, long version, int64_t at)
{
    int64_t seen = ring_take(&views[session], version);
    if (seen >= 0) record_latency(seen - at);
    else ring_put(&answers[session], version, at);
}

static void watch_out(struct conn *c, int out)
{
    struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0) die("epoll_ctl");
}

static void close_conn(struct conn *c, int failure)
{
    if (c->state == GONE) return;
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->state = GONE;
    if (c->kind == WATCHER) {
        if (failure && !c->opened) failed++;
        else closed_count++;
    }
}

/* Sends what is left of c->out; 0 when all is sent, 1 when the socket is full, -1 on error. */
static int flush_out(struct conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 1;
            if (errno == EINTR) continue;
            return -1;
        }
        c->out_off += (size_t)n;
    }
    return 0;
}

static int start_connect(struct conn *c)
{
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) die("socket");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, host, &address.sin_addr);
    c->state = CONNECTING;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) die("epoll_ctl add");
    if (connect(c->fd, (struct sockaddr *)&address, sizeof address) != 0 && errno != EINPROGRESS) {
        close_conn(c, 1);
        return -1;
    }
    return 0;
}

/* --- watchers: server-sent events --------------------------------------------------------- */

static long parse_version(const char *data, size_t len)
{
    /* The session view's own "version" is its last member (keys are sorted; the graph's
     * "version" comes earlier). */
    static const char key[] = "\"version\":";
    const char *found = NULL;
    for (const char *p = data; (p = memmem(p, len - (size_t)(p - data), key, sizeof key - 1)); p++) found = p;
    return found ? strtol(found + sizeof key - 1, NULL, 10) : -1;
}

static void sse_line(struct conn *c, int64_t at)
{
    const char *l = c->line;
    size_t n = c->line_len;
    if (n > 0 && l[n - 1] == '\r') n--;
    if (n == 0) {
        if (c->event == EV_VIEW) {
            c->views++;
            views_total++;
            if (!c->opened) {
                c->opened = 1;
                opened++;
            } else if (c->view_version >= 0) {
                view_arrived(c->session, c->view_version, at);
            }
        } else if (c->event == EV_END) {
            ends++;
        }
        c->event = EV_NONE;
        c->view_version = -1;
    } else if (l[0] == ':') {
        if (n >= 6 && memcmp(l, ": ping", 6) == 0) {
            c->pings++;
            pings_total++;
        }
    } else if (n > 7 && memcmp(l, "event: ", 7) == 0) {
        if (n == 11 && memcmp(l + 7, "view", 4) == 0) c->event = EV_VIEW;
        else if (n == 10 && memcmp(l + 7, "end", 3) == 0) c->event = EV_END;
        else c->event = EV_LIFECYCLE;
    } else if (n > 6 && memcmp(l, "data: ", 6) == 0 && c->event == EV_VIEW) {
        c->view_version = parse_version(l + 6, n - 6);
    }
    c->line_len = 0;
}

/* Keeps up to `len` more bytes of the current line: only the starts of lines matter (for their
 * kind), except a view's data line, kept whole for its version. The client shares the machine
 * with navd and wrk, so it copies as little as it can. */
static void keep_line(struct conn *c, const char *data, size_t len)
{
    int whole = c->event == EV_VIEW;
    if (!whole) {
        size_t room = c->line_len < 16 ? 16 - c->line_len : 0;
        if (len > room) len = room;
    }
    if (c->line_len + len > c->line_cap) {
        while (c->line_len + len > c->line_cap) c->line_cap = c->line_cap ? c->line_cap * 2 : 256;
        c->line = realloc(c->line, c->line_cap);
        if (!c->line) die("realloc");
    }
    memcpy(c->line + c->line_len, data, len);
    c->line_len += len;
}

static void sse_bytes(struct conn *c, const char *data, size_t len, int64_t at)
{
    while (len > 0) {
        const char *end = memchr(data, '\n', len);
        size_t piece = end ? (size_t)(end - data) : len;
        keep_line(c, data, piece);
        if (!end) return;
        sse_line(c, at);
        data += piece + 1;
        len -= piece + 1;
    }
}

/* Decodes chunked transfer coding; returns 0 when the body has ended. */
static int chunked_bytes(struct conn *c, const char *data, size_t len, int64_t at)
{
    size_t i = 0;
    while (i < len) {
        switch (c->chunk_state) {
        case CHUNK_SIZE: {
            char byte = data[i++];
            if (byte == '\n') {
                if (c->chunk_left == 0) {
                    c->chunk_state = CHUNK_DONE;
                    return 0;
                }
                c->chunk_state = CHUNK_DATA;
                c->chunk_extension = 0;
            } else if (!c->chunk_extension) {
                int digit = (byte >= '0' && byte <= '9') ? byte - '0'
                    : (byte >= 'a' && byte <= 'f') ? byte - 'a' + 10
                    : (byte >= 'A' && byte <= 'F') ? byte - 'A' + 10 : -1;
                if (digit >= 0) c->chunk_left = c->chunk_left * 16 + (size_t)digit;
                else c->chunk_extension = 1; /* CR, or an extension: the size has ended */
            }
            break;
        }
        case CHUNK_DATA: {
            size_t take = len - i < c->chunk_left ? len - i : c->chunk_left;
            sse_bytes(c, data + i, take, at);
            i += take;
            c->chunk_left -= take;
            if (c->chunk_left == 0) c->chunk_state = CHUNK_END;
            break;
        }
        case CHUNK_END:
            if (data[i++] == '\n') {
                c->chunk_state = CHUNK_SIZE;
                c->chunk_left = 0;
                c->chunk_extension = 0;
            }
            break;
        default:
            return 0;
        }
    }
    return 1;
}

/* The end of the response head in c->head, or 0 while it is incomplete. Copies bytes from
 * data into the head; *used says how many. */
static size_t take_head(struct conn *c, const char *data, size_t len, size_t *used)
{
    size_t i = 0;
    while (i < len && c->head_len < sizeof c->head - 1) {
        c->head[c->head_len++] = data[i++];
        if (c->head_len >= 4 && memcmp(c->head + c->head_len - 4, "\r\n\r\n", 4) == 0) {
            c->head[c->head_len] = 0;
            *used = i;
            return c->head_len;
        }
    }
    *used = i;
    return 0;
}

static int header_value(const char *head, const char *name, char *value, size_t size)
{
    size_t name_len = strlen(name);
    for (const char *line = strstr(head, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
        const char *start = line + 2;
        if (strncasecmp(start, name, name_len) == 0 && start[name_len] == ':') {
            const char *v = start + name_len + 1;
            while (*v == ' ') v++;
            size_t n = strcspn(v, "\r\n");
            if (n >= size) n = size - 1;
            memcpy(value, v, n);
            value[n] = 0;
            return 1;
        }
    }
    return 0;
}

static void watcher_readable(struct conn *c, const char *data, size_t len, int64_t at)
{
    if (c->state == HEAD) {
        size_t used;
        if (!take_head(c, data, len, &used)) {
            if (c->head_len >= sizeof c->head - 1) close_conn(c, 1);
            return;
        }
        char encoding[64] = "";
        if (strncmp(c->head, "HTTP/1.1 200", 12) != 0 || !header_value(c->head, "Transfer-Encoding", encoding, sizeof encoding)
            || strcasecmp(encoding, "chunked") != 0) {
            if (failed < 3) fprintf(stderr, "watchers: unexpected answer: %.200s\n", c->head);
            close_conn(c, 1);
            return;
        }
        c->state = BODY;
        data += used;
        len -= used;
    }
    if (c->state == BODY && !chunked_bytes(c, data, len, at)) close_conn(c, 0);
}

/* --- drivers: paced navigations ----------------------------------------------------------- */

static int nav_sessions, nav_cursor;

static int send_navigation(struct conn *c)
{
    for (int tries = 0; tries < nav_sessions; tries++) {
        nav_cursor = (nav_cursor + 1) % nav_sessions;
        if (in_flight[nav_cursor]) continue;
        int s = nav_cursor;
        const char *body = turn[s] == 0 ? "{\"path\":\"^/top/list_news(category=1)/show_news(id=2)\"}" : "{\"path\":\"^/top\"}";
        free(c->out);
        int n = asprintf(&c->out,
            "POST /v1/sessions/%s/navigate HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n"
            "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
            ids[s], host, port, tokens[s], strlen(body), body);
        if (n < 0) die("asprintf");
        c->out_len = (size_t)n;
        c->out_off = 0;
        c->session = s;
        c->busy = 1;
        c->head_len = 0;
        c->state = HEAD;
        in_flight[s] = 1;
        int r = flush_out(c);
        if (r < 0) {
            close_conn(c, 1);
            return -1;
        }
        if (r > 0) watch_out(c, 1);
        return 0;
    }
    return -1; /* every session has a navigation in flight */
}

static void driver_answered(struct conn *c, int64_t at)
{
    int s = c->session;
    navigations++;
    in_flight[s] = 0;
    c->busy = 0;
    if (c->status >= 200 && c->status < 300) {
        turn[s] = 1 - turn[s];
        if (c->etag >= 0) answer_arrived(s, c->etag, at);
    } else {
        nav_non2xx++;
    }
}

static void driver_readable(struct conn *c, const char *data, size_t len, int64_t at)
{
    while (len > 0) {
        if (!c->busy) return; /* nothing asked: ignore */
        if (c->state == HEAD) {
            size_t used;
            size_t got = take_head(c, data, len, &used);
            data += used;
            len -= used;
            if (!got) {
                if (c->head_len >= sizeof c->head - 1) close_conn(c, 1);
                return;
            }
            c->status = atoi(c->head + 9);
            char value[64];
            c->body_left = header_value(c->head, "Content-Length", value, sizeof value) ? strtoul(value, NULL, 10) : 0;
            c->etag = header_value(c->head, "ETag", value, sizeof value) ? strtol(value + (value[0] == '"'), NULL, 10) : -1;
            c->state = BODY;
        }
        size_t take = len < c->body_left ? len : c->body_left;
        c->body_left -= take;
        data += take;
        len -= take;
        if (c->body_left == 0) {
            c->state = HEAD;
            c->head_len = 0;
            driver_answered(c, at);
        }
    }
}

/* --- the loop ----------------------------------------------------------------------------- */

static char buffer[1 << 18];

static void readable(struct conn *c)
{
    for (;;) {
        ssize_t n = recv(c->fd, buffer, sizeof buffer, 0);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            if (errno == EINTR) continue;
            close_conn(c, 1);
            return;
        }
        if (n == 0) {
            close_conn(c, c->kind == WATCHER ? !c->opened : 1);
            return;
        }
        int64_t at = now_us();
        if (c->kind == WATCHER) watcher_readable(c, buffer, (size_t)n, at);
        else driver_readable(c, buffer, (size_t)n, at);
        if (c->state == GONE || (size_t)n < sizeof buffer) return;
    }
}

static int connecting;

static void writable(struct conn *c)
{
    if (c->state == CONNECTING) {
        int error = 0;
        socklen_t size = sizeof error;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &size);
        if (c->kind == WATCHER) connecting--;
        if (error != 0) {
            errno = error;
            if (failed < 3) perror("watchers: connect");
            close_conn(c, 1);
            return;
        }
        c->state = HEAD;
        if (c->kind == DRIVER) {
            watch_out(c, 0);
            return;
        }
    }
    int r = flush_out(c);
    if (r < 0) close_conn(c, 1);
    else watch_out(c, r > 0);
}

static int compare(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t percentile(double p)
{
    if (latency_count == 0) return -1;
    size_t index = (size_t)(p / 100.0 * (double)(latency_count - 1) + 0.5);
    return latencies[index];
}

static void load_sessions(const char *path, int first, int need)
{
    FILE *file = fopen(path, "r");
    if (!file) die(path);
    ids = calloc((size_t)need, sizeof *ids);
    tokens = calloc((size_t)need, sizeof *tokens);
    char id[64], token[128];
    for (int skipped = 0; skipped < first && fscanf(file, "%63s %127s", id, token) == 2; skipped++) {}
    while (session_count < need && fscanf(file, "%63s %127s", ids[session_count], tokens[session_count]) == 2) session_count++;
    fclose(file);
    if (session_count < need) {
        fprintf(stderr, "watchers: %s has %d sessions, %d needed\n", path, session_count, need);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s PORT SESSIONS_FILE COUNT [--seconds S] [--pace RATE] [--drivers K] "
                        "[--connect-batch B] [--nav-sessions M] [--first F]\n", argv[0]);
        return 2;
    }
    port = atoi(argv[1]);
    watcher_count = atoi(argv[3]);
    double seconds = 0, rate = 0;
    int batch = 512, first = 0;
    driver_count = 16;
    nav_sessions = watcher_count;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--pace")) rate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--drivers")) driver_count = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--connect-batch")) batch = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--nav-sessions")) nav_sessions = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--first")) first = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "watchers: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (rate <= 0) driver_count = 0;
    if (nav_sessions < 1 || nav_sessions > watcher_count) nav_sessions = watcher_count;
    load_sessions(argv[2], first, watcher_count);

    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
    struct sigaction action = {.sa_handler = on_signal};
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    signal(SIGPIPE, SIG_IGN);

    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) die("epoll_create1");
    conns = calloc((size_t)(watcher_count + driver_count), sizeof *conns);
    if (!conns) die("calloc");
    if (rate > 0) {
        answers = calloc((size_t)watcher_count, sizeof *answers);
        views = calloc((size_t)watcher_count, sizeof *views);
        turn = calloc((size_t)watcher_count, sizeof *turn);
        in_flight = calloc((size_t)watcher_count, sizeof *in_flight);
    }

    int64_t began = now_us(), ready_at = 0, pace_start = 0, paced_until = 0, last_status = began;
    int next_watcher = 0;
    long sent = 0;
    struct epoll_event events[1024];
    int timer = -1;

    while (!stopping) {
        /* Open watchers, `batch` connects in flight at a time. */
        while (next_watcher < watcher_count && connecting < batch) {
            struct conn *c = &conns[next_watcher];
            c->kind = WATCHER;
            c->session = next_watcher;
            c->view_version = -1;
            if (asprintf(&c->out, "GET /v1/sessions/%s/events HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n"
                                  "Authorization: Bearer %s\r\n\r\n", ids[next_watcher], host, port, tokens[next_watcher]) < 0)
                die("asprintf");
            c->out_len = strlen(c->out);
            next_watcher++;
            if (start_connect(c) == 0) connecting++;
        }
        int64_t now = now_us();
        if (!ready_at && opened + failed + closed_count >= watcher_count) {
            ready_at = now;
            printf("READY watchers=%d open=%ld failed=%ld seconds=%.2f\n", watcher_count, opened, failed, (now - began) / 1e6);
            fflush(stdout);
            if (rate > 0) {
                for (int i = 0; i < driver_count; i++) {
                    struct conn *c = &conns[watcher_count + i];
                    c->kind = DRIVER;
                    start_connect(c);
                }
                timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
                struct itimerspec spec = {.it_interval = {0, 1000000}, .it_value = {0, 1000000}};
                timerfd_settime(timer, 0, &spec, NULL);
                struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
                epoll_ctl(epfd, EPOLL_CTL_ADD, timer, &ev);
                pace_start = now_us();
            }
        }
        if (ready_at && seconds > 0 && now - ready_at >= (int64_t)(seconds * 1e6)) {
            /* Paced: stop sending, and give the last views a second to arrive. */
            if (timer < 0 || now - ready_at >= (int64_t)((seconds + 1) * 1e6)) break;
            if (!paced_until) paced_until = now;
        }
        if (now - last_status >= 5000000) {
            last_status = now;
            fprintf(stderr, "watchers: %.0fs open %ld failed %ld closed %ld views %ld pings %ld navigations %ld\n",
                    (now - began) / 1e6, opened - closed_count, failed, closed_count, views_total, pings_total, navigations);
        }

        int n = epoll_wait(epfd, events, 1024, 100);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;
            if (c == NULL) {
                uint64_t ticks;
                if (read(timer, &ticks, sizeof ticks) < 0) { /* nothing */ }
                if (paced_until) continue;
                /* The navigations owed by now, each on an idle driver. */
                long due = (long)((now_us() - pace_start) / 1e6 * rate);
                long owed = due - sent;
                if (owed > owed_max) owed_max = owed;
                for (int d = 0; d < driver_count && sent < due; d++) {
                    struct conn *driver = &conns[watcher_count + d];
                    if (driver->state == GONE || driver->state == CONNECTING || driver->busy) continue;
                    if (send_navigation(driver) == 0) sent++;
                }
                continue;
            }
            if (c->state == GONE) continue;
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                if (c->state == CONNECTING) writable(c);
                if (c->state != GONE) readable(c);
            }
            if (c->state != GONE && (events[i].events & EPOLLOUT)) writable(c);
        }
    }

    int64_t ended = now_us();
    long pings_min = -1, pings_max = 0, open = 0;
    for (int i = 0; i < watcher_count; i++) {
        struct conn *c = &conns[i];
        if (c->state == GONE || !c->opened) continue;
        open++;
        if (pings_min < 0 || c->pings < pings_min) pings_min = c->pings;
        if (c->pings > pings_max) pings_max = c->pings;
    }
    long unmatched = 0;
    if (answers) {
        for (int s = 0; s < watcher_count; s++)
            for (int k = 0; k < RING; k++)
                if (answers[s].at[k] > 0) unmatched++;
    }
    qsort(latencies, latency_count, sizeof *latencies, compare);
    double nav_seconds = pace_start ? ((paced_until ? paced_until : ended) - pace_start) / 1e6 : 0;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("RESULT cpu_user_s=%.2f cpu_sys_s=%.2f watchers=%d open=%ld failed=%ld closed=%ld ends=%ld views=%ld pings=%ld pings_min=%ld pings_max=%ld "
           "connect_s=%.2f navigations=%ld nav_rps=%.1f nav_non2xx=%ld matched=%ld early=%ld unmatched=%ld "
           "lat_p50_us=%lld lat_p90_us=%lld lat_p99_us=%lld lat_p999_us=%lld lat_max_us=%lld owed=%ld\n",
           usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6, usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6,
           watcher_count, open, failed, closed_count, ends, views_total, pings_total, pings_min, pings_max,
           ready_at ? (ready_at - began) / 1e6 : -1.0, navigations, nav_seconds > 0 ? navigations / nav_seconds : 0.0,
           nav_non2xx, matched, early, unmatched, (long long)percentile(50), (long long)percentile(90),
           (long long)percentile(99), (long long)percentile(99.9), (long long)(latency_count ? latencies[latency_count - 1] : -1),
           owed_max);
    fflush(stdout);
    return 0;
}
