/* `corecarve device-plugin --root F03` against the kubelet as it really
 * registers and against hostile peers (issue #37), natively: the plugin
 * is the real binary, its peak RSS (VmHWM) read from /proc.
 *
 * The kubelet here is corecarve's own gRPC server playing what the kubelet
 * does in its Register handler: it dials the plugin's endpoint and calls
 * GetDevicePluginOptions before it answers
 * (pkg/kubelet/cm/devicemanager/plugin/v1beta1/server.go Register ->
 * handler.go connectClient -> client.go Connect -> manager.go
 * PluginConnected).  Its PodResources socket accepts and never answers.
 *
 * Then, one at a time, with the plugin's RSS before and after: a PING
 * flood from a peer that never reads; calls that send part of a message
 * that never ends, 8 on each of 4 connections; 70 connections that send
 * the preface and nothing.  After each, a well-behaved call still
 * answers, and Allocate too: the figures are printed ("hostile: ...").
 * Last, a hook holding the ledger's lock: Allocate waits for it on the
 * plugin's worker thread while every other call is answered. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "deviceplugin_v1beta1.pb-c.h"
#include "grpc.h"
#include "testlib.h"

static const char policy_text[] = "classes:\n"
				  "  latency: {coreType: performance, smt: isolate, exclusive: true}\n"
				  "  fast: {coreType: performance, smt: full, exclusive: true}\n"
				  "  throughput: {coreType: efficient, smt: full, exclusive: true, align: l2}\n";

/* The bound the tests hold the plugin to: what the DaemonSet's container
 * may use (64 MiB) less what the plugin needs at rest.  Under `make unit
 * SANITIZE=1` the plugin is ASan's build too (redzones, shadow memory):
 * its figures are not the release binary's, and the bound is looser. */
#ifdef __SANITIZE_ADDRESS__
#define RSS_GROWTH_MAX_KIB (96 * 1024)
#else
#define RSS_GROWTH_MAX_KIB (32 * 1024)
#endif
/* A hung plugin would take its 5 s deadlines; a served call takes ms. */
#define CALL_MAX_MS 1000

static char work[64];

struct kubelet {
	struct cc_grpc_server *s;
	pthread_t th;
	volatile int stop;
	pthread_mutex_t mu;
	int registered;
	char last_err[CC_ERR_MSG_MAX];
};

static struct kubelet kub = { .mu = PTHREAD_MUTEX_INITIALIZER };

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Registration.Register as the kubelet answers it: the plugin's
 * GetDevicePluginOptions first, on the endpoint it named. */
static int reg_register(void *arg, const uint8_t *req, size_t len, uint8_t **out, size_t *outlen,
			struct cc_err *err)
{
	V1beta1__RegisterRequest *r = v1beta1__register_request__unpack(NULL, len, req);
	struct cc_grpc_reply rep;
	char path[256];
	int rc;

	(void)arg;
	*out = NULL;
	*outlen = 0;
	if (!r)
		return cc_err_set(err, EINVAL, "not a RegisterRequest");
	snprintf(path, sizeof(path), "%s/%s", work, r->endpoint);
	v1beta1__register_request__free_unpacked(r, NULL);
	rc = cc_grpc_call(path, "/v1beta1.DevicePlugin/GetDevicePluginOptions", NULL, 0, 10000, &rep, err);
	if (rc == 0 && rep.code != CC_GRPC_OK)
		rc = cc_err_set(err, EPROTO, "GetDevicePluginOptions: grpc-status %d", (int)rep.code);
	cc_grpc_reply_fini(&rep);
	pthread_mutex_lock(&kub.mu);
	if (rc == 0)
		kub.registered++;
	else
		snprintf(kub.last_err, sizeof(kub.last_err), "%s", err->msg);
	pthread_mutex_unlock(&kub.mu);
	return rc < 0 ? cc_err_prefix(err, "failed to get device plugin options") : 0;
}

static const struct cc_grpc_method reg_methods[] = { { "/v1beta1.Registration/Register", false, reg_register } };

static void *kubelet_main(void *arg)
{
	struct cc_err err = CC_ERR_INIT;

	(void)arg;
	while (!kub.stop)
		cc_grpc_server_run(kub.s, 50, &err);
	return NULL;
}

static int registered(void)
{
	int n;

	pthread_mutex_lock(&kub.mu);
	n = kub.registered;
	pthread_mutex_unlock(&kub.mu);
	return n;
}

/* The plugin's peak resident memory so far (VmHWM), in KiB. */
static long rss_kib(pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0)
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	free(line);
	fclose(f);
	return kib;
}

static int dial(const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", work, name);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "%s: %s", a.sun_path, strerror(errno));
	return fd;
}

/* A well-behaved call's time in ms (the call must succeed). */
static long long good_call_ms(const char *method, const uint8_t *req, size_t len)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_grpc_reply rep;
	char path[256];
	long long t0 = now_ms();

	snprintf(path, sizeof(path), "%s/corecarve-latency.sock", work);
	ck_assert_msg(cc_grpc_call(path, method, req, len, 5000, &rep, &err) == 0, "%s: %s", method, err.msg);
	ck_assert_msg(rep.code == CC_GRPC_OK, "%s: grpc-status %d %s", method, (int)rep.code, rep.message);
	cc_grpc_reply_fini(&rep);
	return now_ms() - t0;
}

static long long options_ms(void)
{
	return good_call_ms("/v1beta1.DevicePlugin/GetDevicePluginOptions", NULL, 0);
}

/* Allocate of core `cpu` on latency. */
static long long allocate_ms(const char *id)
{
	V1beta1__AllocateRequest q = V1BETA1__ALLOCATE_REQUEST__INIT;
	V1beta1__ContainerAllocateRequest c = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
	V1beta1__ContainerAllocateRequest *cs[] = { &c };
	char *ids[] = { (char *)id };
	uint8_t buf[256];
	size_t len;

	c.n_devices_ids = 1;
	c.devices_ids = ids;
	q.n_container_requests = 1;
	q.container_requests = cs;
	len = v1beta1__allocate_request__pack(&q, buf);
	return good_call_ms("/v1beta1.DevicePlugin/Allocate", buf, len);
}

static void *allocate_thread(void *arg)
{
	long long *ms = arg;

	*ms = allocate_ms("cpu4");
	return NULL;
}

static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/* A raw frame header and payload into `out`; its length. */
static size_t frame(uint8_t *out, uint8_t type, uint8_t flags, uint32_t stream, const void *payload, size_t len)
{
	out[0] = (uint8_t)(len >> 16);
	out[1] = (uint8_t)(len >> 8);
	out[2] = (uint8_t)len;
	out[3] = type;
	out[4] = flags;
	out[5] = (uint8_t)(stream >> 24);
	out[6] = (uint8_t)(stream >> 16);
	out[7] = (uint8_t)(stream >> 8);
	out[8] = (uint8_t)stream;
	if (len)
		memcpy(out + 9, payload, len);
	return 9 + len;
}

/* The preface and an empty SETTINGS: a connection that then says nothing. */
static int hello(const char *name)
{
	uint8_t b[64];
	int fd = dial(name);
	size_t n = sizeof(preface) - 1;

	memcpy(b, preface, n);
	n += frame(b + n, 4, 0, 0, NULL, 0);
	ck_assert_int_eq(write(fd, b, n), (ssize_t)n);
	return fd;
}

/* A PING flood that never reads: the plugin must cut it off (nghttp2's
 * flood limit, which its bounded output leaves in force) with its RSS
 * bounded.  Returns 1 when the plugin closed the connection. */
static int ping_flood(long long ms, long *sent_kib)
{
	int fd = hello("corecarve-latency.sock");
	uint8_t pings[64 * 17];
	size_t n = 0;
	long long end = now_ms() + ms, sent = 0;
	int closed = 0;

	for (int i = 0; i < 64; i++)
		n += frame(pings + n, 6, 0, 0, "corecarv", 8);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (now_ms() < end && !closed) {
		ssize_t w = send(fd, pings, n, MSG_NOSIGNAL);

		if (w > 0)
			sent += w;
		else if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
			closed = 1;
		else
			usleep(1000);
	}
	*sent_kib = (long)(sent / 1024);
	close(fd);
	return closed;
}

/* Calls whose message never ends: each declares 4,000,000 bytes and then
 * sends what flow control lets it, forever. */
struct partial {
	long long sent;
};

static ssize_t partial_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
			    nghttp2_data_source *src, void *user)
{
	struct partial *p = src->ptr;

	(void)s;
	(void)id;
	(void)flags;
	(void)user;
	memset(buf, 0, length);
	if (p->sent == 0 && length >= 5) {
		uint32_t n = 4000000;

		buf[1] = (uint8_t)(n >> 24);
		buf[2] = (uint8_t)(n >> 16);
		buf[3] = (uint8_t)(n >> 8);
		buf[4] = (uint8_t)n;
	}
	p->sent += (long long)length;
	return (ssize_t)length;
}

static ssize_t sess_send(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *user)
{
	int fd = *(int *)user;
	ssize_t w;

	(void)s;
	(void)flags;
	w = send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return NGHTTP2_ERR_WOULDBLOCK;
	return w < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : w;
}

static ssize_t sess_recv(nghttp2_session *s, uint8_t *buf, size_t len, int flags, void *user)
{
	int fd = *(int *)user;
	ssize_t r;

	(void)s;
	(void)flags;
	r = recv(fd, buf, len, MSG_DONTWAIT);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return NGHTTP2_ERR_WOULDBLOCK;
	if (r == 0)
		return NGHTTP2_ERR_EOF;
	return r < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : r;
}

/* `nconn` connections of `nstreams` never-ending calls, driven for `ms`.
 * How many of the connections the plugin cut off; *mib: what was sent. */
static int partial_messages(int nconn, int nstreams, long long ms, long *mib)
{
	int fds[8], alive[8];
	nghttp2_session *ss[8];
	struct partial parts[8][16];
	nghttp2_session_callbacks *cb;
	nghttp2_nv nv[] = {
		{ (uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0 },
		{ (uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0 },
		{ (uint8_t *)":path", (uint8_t *)"/v1beta1.DevicePlugin/Allocate", 5, 30, 0 },
		{ (uint8_t *)":authority", (uint8_t *)"localhost", 10, 9, 0 },
		{ (uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, 0 },
	};
	long long end = now_ms() + ms, total = 0;
	int cut = 0;

	ck_assert_int_le(nconn, 8);
	ck_assert_int_le(nstreams, 16);
	memset(parts, 0, sizeof(parts));
	ck_assert_int_eq(nghttp2_session_callbacks_new(&cb), 0);
	nghttp2_session_callbacks_set_send_callback(cb, sess_send);
	nghttp2_session_callbacks_set_recv_callback(cb, sess_recv);
	for (int i = 0; i < nconn; i++) {
		fds[i] = dial("corecarve-latency.sock");
		alive[i] = 1;
		ck_assert_int_eq(nghttp2_session_client_new(&ss[i], cb, &fds[i]), 0);
		nghttp2_submit_settings(ss[i], NGHTTP2_FLAG_NONE, NULL, 0);
		for (int k = 0; k < nstreams; k++) {
			nghttp2_data_provider prd = { .source.ptr = &parts[i][k], .read_callback = partial_read };

			ck_assert_int_ge(nghttp2_submit_request(ss[i], NULL, nv, 5, &prd, NULL), 0);
		}
	}
	while (now_ms() < end) {
		struct pollfd p[8];

		for (int i = 0; i < nconn; i++)
			p[i] = (struct pollfd){ .fd = alive[i] ? fds[i] : -1, .events = POLLIN | POLLOUT };
		poll(p, (nfds_t)nconn, 20);
		for (int i = 0; i < nconn; i++) {
			if (!alive[i])
				continue;
			if (nghttp2_session_recv(ss[i]) != 0 || nghttp2_session_send(ss[i]) != 0 ||
			    (!nghttp2_session_want_read(ss[i]) && !nghttp2_session_want_write(ss[i]))) {
				alive[i] = 0;
				cut++;
			}
		}
	}
	for (int i = 0; i < nconn; i++) {
		for (int k = 0; k < nstreams; k++)
			total += parts[i][k].sent;
		nghttp2_session_del(ss[i]);
		close(fds[i]);
	}
	nghttp2_session_callbacks_del(cb);
	*mib = (long)(total >> 20);
	return cut;
}

START_TEST(test_hostile_f03)
{
	const char *tree = cc_test_fixture_tree("F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz");
	const char *bin = cc_test_bin("device-plugin hostile peers");
	struct cc_err err = CC_ERR_INIT;
	char path[256], root[4096], log[256];
	int hang = -1, idle[70];
	long base, after, sent;
	long long ms, t0;
	pid_t pid;

	if (!tree || !bin)
		return;
	snprintf(root, sizeof(root), "%s/sample1", tree);
	snprintf(work, sizeof(work), "/tmp/cc-dph-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(work));
	snprintf(path, sizeof(path), "%s/policy.yaml", work);
	ck_assert_int_eq(cc_test_sh(NULL, "printf '%%s' '%s' >'%s'", policy_text, path), 0);
	/* The kubelet's Registration, and a PodResources that never answers. */
	kub.s = cc_grpc_server_new(&err);
	ck_assert_ptr_nonnull(kub.s);
	snprintf(path, sizeof(path), "%s/kubelet.sock", work);
	ck_assert_msg(cc_grpc_server_listen(kub.s, path, reg_methods, 1, NULL, &err) == 0, "%s", err.msg);
	{
		struct sockaddr_un a = { .sun_family = AF_UNIX };

		hang = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		snprintf(a.sun_path, sizeof(a.sun_path), "%s/podres.sock", work);
		ck_assert_int_eq(bind(hang, (struct sockaddr *)&a, sizeof(a)), 0);
		ck_assert_int_eq(listen(hang, 64), 0);
	}
	ck_assert_int_eq(pthread_create(&kub.th, NULL, kubelet_main, NULL), 0);
	snprintf(log, sizeof(log), "%s/plugin.log", work);
	pid = cc_test_fork();
	if (pid == 0) {
		char dir[128], state[128], pol[128], podres[128];
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		dup2(fd, 1);
		dup2(fd, 2);
		snprintf(dir, sizeof(dir), "%s", work);
		snprintf(state, sizeof(state), "%s/state", work);
		snprintf(pol, sizeof(pol), "%s/policy.yaml", work);
		snprintf(podres, sizeof(podres), "%s/podres.sock", work);
		mkdir(state, 0700);
		setenv("CORECARVE_LOCK_TIMEOUT", "20", 1);
		/* Under `make unit SANITIZE=1` the binary is ASan's: keep its
		 * quarantine of freed memory from counting as the plugin's. */
		{
			const char *a = getenv("ASAN_OPTIONS");
			char opts[512];

			snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=1", a ? a : "", a && *a ? ":" : "");
			setenv("ASAN_OPTIONS", opts, 1);
		}
		execl(bin, bin, "device-plugin", "--dir", dir, "--root", root, "--state", state, "--policy", pol,
		      "--pod-resources", podres, "--grace", "1", (char *)NULL);
		_exit(127);
	}
	/* Registered, all three, though PodResources hangs and the kubelet
	 * calls back inside Register. */
	t0 = now_ms();
	while (registered() < 3 && now_ms() - t0 < 20000)
		usleep(20000);
	ms = now_ms() - t0;
	{
		_cleanup_free_ char *out = NULL;

		cc_test_sh(&out, "cat '%s'", log);
		ck_assert_msg(registered() == 3, "registered %d after %lld ms: %s; plugin log: %s", registered(), ms,
			      kub.last_err, out);
	}
	printf("hostile: registered 3 resources in %lld ms (PodResources never answering)\n", ms);
	/* Confined before it served: the syscall filter is on (its outbound
	 * thread, started after it, registered). */
	{
		_cleanup_free_ char *st = NULL;

		ck_assert_int_eq(cc_test_sh(&st, "grep -E '^(Seccomp|NoNewPrivs):' /proc/%d/status", (int)pid), 0);
		ck_assert_msg(strstr(st, "Seccomp:\t2") && strstr(st, "NoNewPrivs:\t1"), "%s", st);
	}
	usleep(300000);
	base = rss_kib(pid);
	ck_assert_int_gt(base, 0);

	/* 1. A PING flood that never reads. */
	ck_assert_msg(ping_flood(5000, &sent), "the PING flood was not cut off within 5 s");
	after = rss_kib(pid);
	ms = options_ms();
	printf("hostile: ping flood (%ld KiB sent, never read) cut off; peak RSS %ld -> %ld KiB; a call after: %lld ms\n",
	       sent, base, after, ms);
	ck_assert_int_lt(after - base, RSS_GROWTH_MAX_KIB);
	ck_assert_int_lt(ms, CALL_MAX_MS);

	/* 2. Messages that never end: 8 calls on each of 4 connections. */
	{
		long mib = 0;
		int cut = partial_messages(4, 8, 4000, &mib);

		after = rss_kib(pid);
		ms = options_ms();
		printf("hostile: 4 connections x 8 never-ending calls (%ld MiB sent), %d cut off; peak RSS %ld -> %ld KiB; "
		       "a call after: %lld ms\n",
		       mib, cut, base, after, ms);
		ck_assert_int_ge(cut, 1);
		ck_assert_int_lt(after - base, RSS_GROWTH_MAX_KIB);
		ck_assert_int_lt(ms, CALL_MAX_MS);
	}

	/* 3. 70 connections that send the preface and nothing: the longest
	 * idle makes room, a well-behaved call still answers, and Allocate. */
	for (int i = 0; i < 70; i++)
		idle[i] = hello("corecarve-latency.sock");
	usleep(300000);
	ms = options_ms();
	after = rss_kib(pid);
	{
		long long a = allocate_ms("cpu0");

		printf("hostile: 70 idle connections; peak RSS %ld -> %ld KiB; a call beside them: %lld ms; Allocate: %lld "
		       "ms\n",
		       base, after, ms, a);
		ck_assert_int_lt(a, CALL_MAX_MS);
	}
	ck_assert_int_lt(ms, CALL_MAX_MS);
	ck_assert_int_lt(after - base, RSS_GROWTH_MAX_KIB);
	for (int i = 0; i < 70; i++)
		close(idle[i]);

	/* 4. A hook holds the ledger's lock: Allocate waits for it on the
	 * worker thread, and the plugin answers everything else meanwhile. */
	{
		char lockf[128];
		int fd;
		pthread_t th;
		long long alloc = -1, during, held_ms = 1500;

		snprintf(lockf, sizeof(lockf), "%s/state/lock", work);
		fd = open(lockf, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(flock(fd, LOCK_EX), 0);
		ck_assert_int_eq(pthread_create(&th, NULL, allocate_thread, &alloc), 0);
		usleep(300000);
		during = options_ms();
		usleep((useconds_t)(held_ms - 300) * 1000);
		flock(fd, LOCK_UN);
		close(fd);
		pthread_join(th, NULL);
		printf("hostile: the hooks' lock held %lld ms: a call meanwhile %lld ms; Allocate answered after %lld ms\n",
		       held_ms, during, alloc);
		ck_assert_int_lt(during, CALL_MAX_MS);
		ck_assert_int_ge(alloc, held_ms - 300);
	}

	kill(pid, SIGTERM);
	{
		int st = 0;

		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "plugin exit status %d", st);
	}
	kub.stop = 1;
	pthread_join(kub.th, NULL);
	cc_grpc_server_free(kub.s);
	close(hang);
	cc_test_sh(NULL, "rm -rf '%s'", work);
}
END_TEST

static Suite *dp_hostile_suite(void)
{
	Suite *s = suite_create("dp_hostile");
	TCase *t = tcase_create("f03");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, test_hostile_f03);
	suite_add_tcase(s, t);
	return s;
}

CC_TEST_MAIN(dp_hostile_suite)
