/* corecarve: the gRPC server (grpc.h) — nghttp2 server sessions on unix
 * sockets, one poll loop, no thread: the plugin answers the kubelet one
 * call at a time, and its calls take milliseconds.
 *
 * Every peer is bounded, so that none can take the memory or the
 * connections the kubelet needs (docs/device-plugin.md states the
 * figures): MAX_CONNS connections, MAX_STREAMS calls open on each, request
 * bytes held per connection (CONN_IN_MAX) and in all (SERVER_IN_MAX),
 * GRPC_OUT_MAX bytes waiting for a socket (then nghttp2's own flood limit
 * applies); a connection is closed when it has no call open and sent
 * nothing for IDLE_MS, when it begins no request within PREFACE_MS of
 * being accepted, or when it takes none of our bytes for IDLE_MS; and
 * when all are taken, the longest idle one makes room for a newcomer. */
#define _GNU_SOURCE
#include "grpc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

#define MAX_LISTENERS 16
#define MAX_CONNS 64
/* A kubelet keeps one ListAndWatch open per plugin and makes a unary call
 * at a time beside it. */
#define MAX_STREAMS 8
#define CONN_IN_MAX (CC_GRPC_MSG_MAX + (64u << 10))
#define SERVER_IN_MAX (4 * CONN_IN_MAX)
#define IDLE_MS 30000
#define PREFACE_MS 5000

struct listener {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int fd;
	dev_t dev;
	ino_t ino;
	const struct cc_grpc_method *methods;
	int n;
	void *arg;
};

struct conn;

struct gstream {
	int32_t id;
	struct conn *c;
	char path[256];
	bool grpc;      /* content-type application/grpc */
	bool answered;  /* headers submitted: nothing more to decide */
	bool pending;   /* a slow call at the worker: its answer will come */
	bool done;      /* once out is sent: the trailers */
	const struct cc_grpc_method *m;
	struct cc_grpc_reader in;
	uint8_t *out;   /* framed messages not yet given to nghttp2 */
	size_t outlen, outoff;
	uint8_t *req;   /* a streaming call's request, asked again at each tick */
	size_t reqlen;
	uint8_t *last;  /* a streaming call's last message sent */
	size_t lastlen;
	bool has_last;
	enum cc_grpc_code code;
	char msg[1536]; /* grpc-message as sent: percent-encoded */
	struct gstream *next;
};

struct conn {
	uint64_t serial;   /* never reused: a slow call's answer finds its connection by it */
	int fd;
	int listener;
	nghttp2_session *s;
	struct grpc_out o;
	struct gstream *streams;
	struct cc_grpc_server *srv;
	long long born;    /* accepted (monotonic ms) */
	long long last_rx; /* bytes last received */
	long long last_tx; /* bytes last taken by the socket, or nothing waited */
	bool requested;    /* a request begun */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A slow call (cc_grpc_method.slow): what the worker needs, then what it
 * answered. */
struct job {
	uint64_t serial;
	int32_t stream;
	const struct cc_grpc_method *m;
	void *arg;
	uint8_t *req;
	size_t reqlen;
	int rc;
	uint8_t *out;
	size_t outlen;
	struct cc_err err;
	struct job *next;
};

/* The worker thread and its two queues, under `mu`: jobs to run, answers
 * for the poll loop, which a byte on `wake` tells of. */
struct worker {
	pthread_t th;
	bool started, quit;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *todo, *done;
	int wake[2];
};

struct cc_grpc_server {
	struct listener l[MAX_LISTENERS];
	int nl;
	struct conn *c[MAX_CONNS];
	int nc;
	size_t limit; /* a request message's limit */
	uint64_t serials;
	struct worker w;
};

static void job_free(struct job *j)
{
	if (!j)
		return;
	free(j->req);
	free(j->out);
	free(j);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&w->mu);
	while (!w->quit) {
		struct job *j = w->todo, **tail;

		if (!j) {
			pthread_cond_wait(&w->cv, &w->mu);
			continue;
		}
		w->todo = j->next;
		pthread_mutex_unlock(&w->mu);
		j->rc = j->m->call(j->arg, j->req, j->reqlen, &j->out, &j->outlen, &j->err);
		pthread_mutex_lock(&w->mu);
		j->next = NULL;
		for (tail = &w->done; *tail; tail = &(*tail)->next)
			;
		*tail = j;
		if (write(w->wake[1], "", 1) < 0) {
			/* Full: the poll loop has a byte to read already. */
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static int worker_start(struct worker *w, struct cc_err *err)
{
	int e;

	if (w->started)
		return 0;
	if (pipe2(w->wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return cc_err_sys(err, errno, "grpc: worker pipe");
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	e = pthread_create(&w->th, NULL, worker_main, w);
	if (e) {
		close(w->wake[0]);
		close(w->wake[1]);
		return cc_err_sys(err, e, "grpc: worker thread");
	}
	w->started = true;
	return 0;
}

static void worker_stop(struct worker *w)
{
	if (!w->started)
		return;
	pthread_mutex_lock(&w->mu);
	w->quit = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	for (struct job *j = w->todo, *n; j; j = n) {
		n = j->next;
		job_free(j);
	}
	for (struct job *j = w->done, *n; j; j = n) {
		n = j->next;
		job_free(j);
	}
	close(w->wake[0]);
	close(w->wake[1]);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	w->started = false;
}

static void stream_free(struct gstream *st)
{
	cc_grpc_reader_fini(&st->in);
	free(st->out);
	free(st->req);
	free(st->last);
	free(st);
}

/* The trailers, or for a call that sent nothing the only headers. */
static int send_status(struct gstream *st, bool trailers_only)
{
	char code[16];
	nghttp2_nv nv[4] = { GRPC_NV(":status", "200"), GRPC_NV("content-type", "application/grpc"),
			     GRPC_NV("grpc-status", ""), GRPC_NV("grpc-message", "") };

	snprintf(code, sizeof(code), "%d", (int)st->code);
	nv[2].value = (uint8_t *)code;
	nv[2].valuelen = strlen(code);
	nv[3].value = (uint8_t *)st->msg;
	nv[3].valuelen = strlen(st->msg);
	if (trailers_only)
		return nghttp2_submit_response(st->c->s, st->id, nv, st->msg[0] ? 4 : 3, NULL);
	return nghttp2_submit_trailer(st->c->s, st->id, nv + 2, st->msg[0] ? 2 : 1);
}

/* Fail the call now (before any message went out). */
static void refuse(struct gstream *st, enum cc_grpc_code code, const char *msg)
{
	if (st->answered)
		return;
	st->answered = true;
	st->code = code;
	grpc_message_encode(st->msg, sizeof(st->msg), msg);
	send_status(st, true);
}

static ssize_t read_out(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
			nghttp2_data_source *src, void *user)
{
	struct gstream *st = src->ptr;
	size_t n = st->outlen - st->outoff;

	(void)s;
	(void)id;
	(void)user;
	if (n > length)
		n = length;
	memcpy(buf, st->out + st->outoff, n);
	st->outoff += n;
	if (st->outoff < st->outlen)
		return (ssize_t)n;
	st->outoff = st->outlen = 0;
	if (!st->done)
		return n ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
	*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
	if (send_status(st, false) != 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return (ssize_t)n;
}

static int queue(struct gstream *st, const uint8_t *msg, size_t len, struct cc_err *err)
{
	_cleanup_free_ uint8_t *f = NULL;
	size_t flen;
	uint8_t *b;

	if (cc_grpc_frame(msg, len, &f, &flen, err) < 0)
		return -1;
	b = realloc(st->out, st->outlen + flen);
	if (!b)
		return cc_err_sys(err, ENOMEM, "grpc");
	memcpy(b + st->outlen, f, flen);
	st->out = b;
	st->outlen += flen;
	return 0;
}

/* Send what the method answered (rc, out, err); for a stream, only a
 * message that changed.  Takes `out`. */
static int answer_with(struct gstream *st, bool first, int rc, uint8_t *out_given, size_t outlen, struct cc_err err)
{
	_cleanup_free_ uint8_t *out = out_given;

	if (rc < 0) {
		if (first) {
			refuse(st, cc_grpc_code_of(err.code), err.msg);
			return 0;
		}
		st->code = cc_grpc_code_of(err.code);
		grpc_message_encode(st->msg, sizeof(st->msg), err.msg);
		st->done = true;
		return nghttp2_session_resume_data(st->c->s, st->id);
	}
	if (st->m->streaming && st->has_last && outlen == st->lastlen && (!outlen || !memcmp(out, st->last, outlen)))
		return 0;
	if (queue(st, out, outlen, &err) < 0) {
		refuse(st, cc_grpc_code_of(err.code), err.msg);
		return 0;
	}
	if (st->m->streaming) {
		free(st->last);
		st->last = out;
		st->lastlen = outlen;
		st->has_last = true;
		out = NULL;
	} else {
		st->done = true;
	}
	if (first) {
		nghttp2_nv nv[2] = { GRPC_NV(":status", "200"), GRPC_NV("content-type", "application/grpc") };
		nghttp2_data_provider prd = { .source.ptr = st, .read_callback = read_out };

		st->answered = true;
		return nghttp2_submit_response(st->c->s, st->id, nv, 2, &prd);
	}
	return nghttp2_session_resume_data(st->c->s, st->id);
}

/* Ask the method now (on the poll loop) and send what it answers. */
static int answer(struct gstream *st, bool first)
{
	struct cc_err err = CC_ERR_INIT;
	uint8_t *out = NULL;
	size_t outlen = 0;
	int rc = st->m->call(st->c->srv->l[st->c->listener].arg, st->req, st->reqlen, &out, &outlen, &err);

	return answer_with(st, first, rc, out, outlen, err);
}

/* A slow call to the worker: its answer comes back through `done`. */
static int defer_call(struct gstream *st)
{
	struct cc_grpc_server *srv = st->c->srv;
	struct cc_err err = CC_ERR_INIT;
	struct job *j = calloc(1, sizeof(*j)), **tail;

	if (!j || worker_start(&srv->w, &err) < 0) {
		free(j);
		refuse(st, CC_GRPC_INTERNAL, err.code ? err.msg : "out of memory");
		return 0;
	}
	j->serial = st->c->serial;
	j->stream = st->id;
	j->m = st->m;
	j->arg = srv->l[st->c->listener].arg;
	j->req = st->req;
	j->reqlen = st->reqlen;
	st->req = NULL;
	st->reqlen = 0;
	j->err = (struct cc_err)CC_ERR_INIT;
	st->pending = true;
	pthread_mutex_lock(&srv->w.mu);
	for (tail = &srv->w.todo; *tail; tail = &(*tail)->next)
		;
	*tail = j;
	pthread_cond_signal(&srv->w.cv);
	pthread_mutex_unlock(&srv->w.mu);
	return 0;
}

/* The request is whole (END_STREAM): find the method and call it. */
static int dispatch(struct gstream *st)
{
	const struct listener *l = &st->c->srv->l[st->c->listener];
	struct cc_err err = CC_ERR_INIT;
	const uint8_t *msg;
	size_t len;
	int got;

	if (st->answered)
		return 0;
	for (int i = 0; i < l->n && !st->m; i++)
		if (!strcmp(l->methods[i].path, st->path))
			st->m = &l->methods[i];
	if (!st->grpc) {
		refuse(st, CC_GRPC_INTERNAL, "content-type: expected application/grpc");
		return 0;
	}
	if (!st->m) {
		char m[400];

		snprintf(m, sizeof(m), "unknown method %.300s", st->path);
		refuse(st, CC_GRPC_UNIMPLEMENTED, m);
		return 0;
	}
	got = cc_grpc_reader_next(&st->in, &msg, &len, &err);
	if (got == 1) {
		st->req = malloc(len ? len : 1);
		if (!st->req)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		memcpy(st->req, msg, len);
		st->reqlen = len;
		got = cc_grpc_reader_next(&st->in, &msg, &len, &err) == 0 ? 1 : -2;
	}
	if (got == 1 && cc_grpc_reader_end(&st->in, &err) < 0)
		got = -1;
	if (got == 0)
		cc_err_set(&err, EINVAL, "no request message");
	else if (got == -2)
		cc_err_set(&err, EINVAL, "more than one request message for a unary request");
	if (got != 1) {
		refuse(st, err.code == E2BIG ? CC_GRPC_RESOURCE_EXHAUSTED : CC_GRPC_INTERNAL, err.msg);
		return 0;
	}
	if (st->m->slow && !st->m->streaming)
		return defer_call(st);
	return answer(st, true);
}

static struct gstream *stream_of(nghttp2_session *s, int32_t id)
{
	return nghttp2_session_get_stream_user_data(s, id);
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct conn *c = user;
	struct gstream *st;

	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	c->requested = true;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	st->id = f->hd.stream_id;
	st->c = c;
	cc_grpc_reader_init(&st->in, c->srv->limit);
	st->next = c->streams;
	c->streams = st;
	nghttp2_session_set_stream_user_data(s, st->id, st);
	return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		     const uint8_t *value, size_t vlen, uint8_t flags, void *user)
{
	struct gstream *st = stream_of(s, f->hd.stream_id);

	(void)flags;
	(void)user;
	if (!st || f->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (nlen == 5 && !memcmp(name, ":path", 5))
		snprintf(st->path, sizeof(st->path), "%.*s", (int)(vlen < 255 ? vlen : 255), value);
	else if (nlen == 12 && !memcmp(name, "content-type", 12))
		st->grpc = grpc_is_content_type(value, vlen);
	return 0;
}

/* Request bytes held by connection `c`'s calls, and by all of the
 * server's (what the readers allocated). */
static size_t held_by(const struct conn *c)
{
	size_t n = 0;

	for (const struct gstream *st = c->streams; st; st = st->next)
		n += st->in.cap;
	return n;
}

static size_t held_all(const struct cc_grpc_server *srv)
{
	size_t n = 0;

	for (int i = 0; i < srv->nc; i++)
		n += held_by(srv->c[i]);
	return n;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *user)
{
	struct gstream *st = stream_of(s, id);
	struct conn *c = user;
	struct cc_err err = CC_ERR_INIT;

	(void)flags;
	if (!st || st->answered)
		return 0;
	/* Partial messages on many calls, or many connections: the
	 * connection that would hold more than its share, or push the
	 * server past its whole, is cut off (ENHANCE_YOUR_CALM). */
	if (held_by(c) + len > CONN_IN_MAX || held_all(c->srv) + len > SERVER_IN_MAX)
		return nghttp2_session_terminate_session(s, NGHTTP2_ENHANCE_YOUR_CALM) == 0 ? 0
											   : NGHTTP2_ERR_CALLBACK_FAILURE;
	if (cc_grpc_reader_feed(&st->in, data, len, &err) < 0) {
		refuse(st, cc_grpc_code_of(err.code), err.msg);
		/* What it sent of that call is dropped, not kept. */
		cc_grpc_reader_fini(&st->in);
		cc_grpc_reader_init(&st->in, c->srv->limit);
	}
	return 0;
}

static int on_frame(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct gstream *st;

	(void)user;
	if ((f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS) || !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	st = stream_of(s, f->hd.stream_id);
	return st ? dispatch(st) : 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t code, void *user)
{
	struct conn *c = user;

	(void)code;
	for (struct gstream **p = &c->streams; *p; p = &(*p)->next) {
		if ((*p)->id == id) {
			struct gstream *st = *p;

			*p = st->next;
			nghttp2_session_set_stream_user_data(s, id, NULL);
			stream_free(st);
			break;
		}
	}
	return 0;
}

static void conn_free(struct conn *c)
{
	if (!c)
		return;
	nghttp2_session_del(c->s);
	while (c->streams) {
		struct gstream *st = c->streams;

		c->streams = st->next;
		stream_free(st);
	}
	free(c->o.buf);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

int cc_grpc_server_adopt(struct cc_grpc_server *srv, int fd, int listener, struct cc_err *err)
{
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_settings_entry iv[] = { { NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, MAX_STREAMS } };
	struct conn *c;
	int rc;

	if (srv->nc == MAX_CONNS) {
		close(fd);
		return cc_err_set(err, EMFILE, "grpc: %d connections already", MAX_CONNS);
	}
	c = calloc(1, sizeof(*c));
	if (!c || nghttp2_session_callbacks_new(&cb) != 0) {
		free(c);
		close(fd);
		return cc_err_sys(err, ENOMEM, "grpc");
	}
	c->fd = fd;
	c->listener = listener;
	c->srv = srv;
	c->serial = ++srv->serials;
	c->born = c->last_rx = c->last_tx = now_ms();
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	rc = nghttp2_session_server_new(&c->s, cb, c);
	nghttp2_session_callbacks_del(cb);
	if (rc != 0 || nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, iv, 1) != 0) {
		conn_free(c);
		return cc_err_set(err, ENOMEM, "grpc: http2 session: %s", nghttp2_strerror(rc));
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	srv->c[srv->nc++] = c;
	return 0;
}

struct cc_grpc_server *cc_grpc_server_new(struct cc_err *err)
{
	struct cc_grpc_server *s = calloc(1, sizeof(*s));

	if (!s)
		cc_err_sys(err, ENOMEM, "grpc server");
	return s;
}

static int make_socket(struct listener *l, struct cc_err *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat sb;
	int fd;

	memcpy(a.sun_path, l->path, sizeof(l->path));
	/* A socket left by an earlier run (or one the kubelet's cleanup
	 * missed) is replaced; anything else at the path is not ours. */
	if (lstat(l->path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode))
			return cc_err_set(err, EEXIST, "%s: exists and is not a socket; remove it", l->path);
		unlink(l->path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return cc_err_sys(err, errno, "socket");
	{
		/* Made 0600 by bind itself: a chmod by path afterwards would
		 * follow whatever was put there meanwhile. */
		mode_t old = umask(0177);
		int r = bind(fd, (struct sockaddr *)&a, sizeof(a));
		int e = errno;

		umask(old);
		errno = e;
		if (r < 0 || listen(fd, 16) < 0 || lstat(l->path, &sb) < 0) {
			e = errno;
			close(fd);
			return cc_err_sys(err, e, "%s", l->path);
		}
		if (!S_ISSOCK(sb.st_mode)) {
			close(fd);
			return cc_err_set(err, EEXIST, "%s: replaced by something that is not our socket", l->path);
		}
	}
	l->fd = fd;
	l->dev = sb.st_dev;
	l->ino = sb.st_ino;
	return 0;
}

int cc_grpc_server_listen(struct cc_grpc_server *s, const char *path, const struct cc_grpc_method *methods, int n,
			  void *arg, struct cc_err *err)
{
	struct listener *l;

	if (s->nl == MAX_LISTENERS)
		return cc_err_set(err, ENOSPC, "%s: %d sockets already", path, MAX_LISTENERS);
	l = &s->l[s->nl];
	if (strlen(path) >= sizeof(l->path))
		return cc_err_set(err, ENAMETOOLONG, "%s: a unix socket path is at most %zu bytes", path,
				  sizeof(l->path) - 1);
	memset(l, 0, sizeof(*l));
	snprintf(l->path, sizeof(l->path), "%s", path);
	l->methods = methods;
	l->n = n;
	l->arg = arg;
	if (make_socket(l, err) < 0)
		return -1;
	return s->nl++;
}

void cc_grpc_server_set_limit(struct cc_grpc_server *s, size_t bytes)
{
	s->limit = bytes;
}

bool cc_grpc_server_listening(const struct cc_grpc_server *s, int i)
{
	struct stat sb;

	return lstat(s->l[i].path, &sb) == 0 && sb.st_dev == s->l[i].dev && sb.st_ino == s->l[i].ino;
}

int cc_grpc_server_relisten(struct cc_grpc_server *s, int i, struct cc_err *err)
{
	if (s->l[i].fd >= 0)
		close(s->l[i].fd);
	s->l[i].fd = -1;
	return make_socket(&s->l[i], err);
}

int cc_grpc_server_nconns(const struct cc_grpc_server *s)
{
	return s->nc;
}

/* Send what connection c has for its socket; false when the socket
 * failed.  Its last_tx moves while the socket takes bytes. */
static bool flush_conn(struct conn *c)
{
	struct cc_err err = CC_ERR_INIT;
	size_t before = c->o.len;

	if (grpc_flush(c->s, c->fd, &c->o, &err) < 0)
		return false;
	if (!c->o.len || c->o.len < before)
		c->last_tx = now_ms();
	return true;
}

/* Read and answer what connection c has; false when it is to be closed. */
static bool serve_conn(struct conn *c, short revents)
{
	struct cc_err err = CC_ERR_INIT;

	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		int r = grpc_pull(c->s, c->fd, &err);

		c->last_rx = now_ms();
		if (r < 0 && err.code == EPROTO)
			nghttp2_session_terminate_session(c->s, NGHTTP2_PROTOCOL_ERROR);
		else if (r <= 0)
			return false; /* closed, failed, or flooding (it reads nothing) */
	}
	if (!flush_conn(c))
		return false;
	return c->o.len || nghttp2_session_want_read(c->s) || nghttp2_session_want_write(c->s);
}

/* Whether connection c is to be closed for its silence at `now`: idle
 * (no call open, nothing received for IDLE_MS), no request begun within
 * PREFACE_MS, or none of our bytes taken for IDLE_MS. */
static bool silent(const struct conn *c, long long now)
{
	return (!c->streams && now - c->last_rx > IDLE_MS) || (!c->requested && now - c->born > PREFACE_MS) ||
	       (c->o.len && now - c->last_tx > IDLE_MS);
}

/* All connections taken: the one without a call open that sent nothing
 * for the longest makes room (-1: none is idle). */
static int longest_idle(const struct cc_grpc_server *s)
{
	int k = -1;

	for (int i = 0; i < s->nc; i++)
		if (!s->c[i]->streams && (k < 0 || s->c[i]->last_rx < s->c[k]->last_rx))
			k = i;
	return k;
}

static void tick_streams(struct cc_grpc_server *s)
{
	for (int i = 0; i < s->nc; i++)
		for (struct gstream *st = s->c[i]->streams; st; st = st->next)
			if (st->m && st->m->streaming && st->answered && !st->done)
				answer(st, false);
}

static void accept_on(struct cc_grpc_server *s, int li)
{
	struct cc_err err = CC_ERR_INIT;
	int fd = accept4(s->l[li].fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	if (s->nc == MAX_CONNS) {
		int k = longest_idle(s);

		if (k >= 0) {
			conn_free(s->c[k]);
			s->c[k] = s->c[--s->nc];
		}
	}
	cc_grpc_server_adopt(s, fd, li, &err);
}

/* The worker's answers, each to its call if its connection and stream
 * are still there (a peer that left gets nothing; the answer goes). */
static void deliver(struct cc_grpc_server *s)
{
	struct job *list;
	char buf[64];

	while (read(s->w.wake[0], buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&s->w.mu);
	list = s->w.done;
	s->w.done = NULL;
	pthread_mutex_unlock(&s->w.mu);
	while (list) {
		struct job *j = list;
		struct gstream *st = NULL;

		list = j->next;
		for (int i = 0; i < s->nc && !st; i++)
			if (s->c[i]->serial == j->serial)
				for (st = s->c[i]->streams; st && st->id != j->stream; st = st->next)
					;
		if (st && st->pending) {
			st->pending = false;
			answer_with(st, true, j->rc, j->out, j->outlen, j->err);
			j->out = NULL;
		}
		job_free(j);
	}
}

int cc_grpc_server_run(struct cc_grpc_server *s, int ms, struct cc_err *err)
{
	struct pollfd p[MAX_LISTENERS + MAX_CONNS + 1];
	int n = 0, nl = 0, r;

	for (int i = 0; i < s->nl; i++, nl++)
		p[n++] = (struct pollfd){ .fd = s->l[i].fd, .events = POLLIN };
	for (int i = 0; i < s->nc; i++)
		p[n++] = (struct pollfd){ .fd = s->c[i]->fd, .events = POLLIN | (s->c[i]->o.len ? POLLOUT : 0) };
	p[n++] = (struct pollfd){ .fd = s->w.started ? s->w.wake[0] : -1, .events = POLLIN };
	r = poll(p, (nfds_t)n, ms);
	if (r < 0 && errno != EINTR)
		return cc_err_sys(err, errno, "poll");
	if (s->w.started)
		deliver(s);
	{
		bool dead[MAX_CONNS] = { false };
		int nc = s->nc, k = 0;
		long long now = now_ms();

		for (int i = 0; i < nc; i++)
			dead[i] = !serve_conn(s->c[i], r > 0 ? p[nl + i].revents : 0) || silent(s->c[i], now);
		for (int i = 0; i < nc; i++) {
			if (dead[i])
				conn_free(s->c[i]);
			else
				s->c[k++] = s->c[i];
		}
		s->nc = k;
	}
	for (int i = 0; r > 0 && i < nl; i++)
		if (p[i].revents & POLLIN)
			accept_on(s, i);
	tick_streams(s);
	for (int i = 0; i < s->nc; i++)
		flush_conn(s->c[i]);
	return 0;
}

void cc_grpc_server_free(struct cc_grpc_server *s)
{
	if (!s)
		return;
	worker_stop(&s->w);
	for (int i = 0; i < s->nc; i++)
		conn_free(s->c[i]);
	for (int i = 0; i < s->nl; i++) {
		if (s->l[i].fd >= 0)
			close(s->l[i].fd);
		/* Only the socket this server made: a new one at the path is
		 * another process's. */
		if (cc_grpc_server_listening(s, i))
			unlink(s->l[i].path);
	}
	free(s);
}
