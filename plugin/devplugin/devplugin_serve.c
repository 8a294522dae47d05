/* corecarve: the device plugin daemon (devplugin.h, cc_dp_serve): a
 * socket per resource in the plugin directory, registered with the
 * kubelet, and again whenever the kubelet's socket is made anew (a
 * restarted kubelet also empties the directory: the sockets are made again
 * first).
 *
 * Two threads, each owning its part.  The serving thread owns the gRPC
 * server (its listeners, connections and streams) and never waits on a
 * call of its own.  The outbound thread makes the calls the plugin
 * sends: Registration.Register, which the kubelet answers only after it
 * has called the plugin back (GetDevicePluginOptions, inside its Register
 * handler: pkg/kubelet/cm/devicemanager/plugin/v1beta1/handler.go
 * connectClient -> client.go Connect -> manager.go PluginConnected), and
 * PodResources List with the grant gc.  They share only the read-only
 * plugin description, the stop flags and the log (stdio locks it). */
#define _GNU_SOURCE
#include "devplugin_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cleanup.h"
#include "deviceplugin_v1beta1.pb-c.h"

/* How often a stream looks at the ledger, and so the longest a change
 * takes to show in ListAndWatch (the issue asks for a second). */
#define DP_TICK_MS 200
#define DP_REGISTER_TIMEOUT_MS 5000
/* How often PodResources is asked which grants are still held. */
#define DP_GC_S 2

static int register_one(const char *kubelet, const struct cc_dp_resource *r, struct cc_err *err)
{
	V1beta1__RegisterRequest q = V1BETA1__REGISTER_REQUEST__INIT;
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
	_cleanup_free_ uint8_t *msg = NULL;
	struct cc_grpc_reply rep;
	size_t len;

	o.get_preferred_allocation_available = 1;
	q.version = (char *)CC_DP_VERSION;
	q.endpoint = (char *)r->endpoint;
	q.resource_name = (char *)r->name;
	q.options = &o;
	if (dp_pack(&q.base, &msg, &len, err) < 0 ||
	    cc_grpc_call(kubelet, "/v1beta1.Registration/Register", msg, len, DP_REGISTER_TIMEOUT_MS, &rep, err) < 0)
		return cc_err_prefix(err, "register %s", r->name);
	cc_grpc_reply_fini(&rep);
	if (rep.code != CC_GRPC_OK)
		return cc_err_set(err, ECONNREFUSED, "register %s: the kubelet refused (grpc-status %d): %s", r->name,
				  (int)rep.code, rep.message);
	return 0;
}

/* The kubelet's socket's identity: its inode and when it was made (a
 * socket made anew may get the inode number of the one removed), all 0
 * when there is none. */
struct sock_id {
	ino_t ino;
	struct timespec ctime;
};

static struct sock_id kubelet_id(const char *path)
{
	struct stat sb;
	struct sock_id id = { 0 };

	if (stat(path, &sb) == 0 && S_ISSOCK(sb.st_mode)) {
		id.ino = sb.st_ino;
		id.ctime = sb.st_ctim;
	}
	return id;
}

static bool same_id(struct sock_id a, struct sock_id b)
{
	return a.ino == b.ino && a.ctime.tv_sec == b.ctime.tv_sec && a.ctime.tv_nsec == b.ctime.tv_nsec;
}

static long long now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* What the outbound thread works with. */
struct outbound {
	struct cc_devplugin *dp;
	const char *dir;
	const char *kubelet;
	volatile sig_atomic_t *stop; /* the daemon's: a signal */
	atomic_bool quit;            /* the serving thread ended */
	FILE *log;
};

static bool stopping(struct outbound *o)
{
	return *o->stop || atomic_load(&o->quit);
}

/* Whether every resource's socket is there to be called back on (the
 * serving thread makes missing ones again within a tick). */
static bool endpoints_ready(const struct outbound *o)
{
	for (int i = 0; i < o->dp->nres; i++) {
		char path[4096];
		struct stat sb;

		snprintf(path, sizeof(path), "%s/%s", o->dir, o->dp->res[i].endpoint);
		if (stat(path, &sb) < 0 || !S_ISSOCK(sb.st_mode))
			return false;
	}
	return true;
}

/* Register every resource with the kubelet.  0 when all are registered. */
static int register_all(struct outbound *o, struct cc_err *err)
{
	if (!endpoints_ready(o))
		return cc_err_set(err, EAGAIN, "the plugin's sockets are being made again");
	for (int i = 0; i < o->dp->nres && !stopping(o); i++) {
		if (register_one(o->kubelet, &o->dp->res[i], err) < 0)
			return -1;
		if (o->log)
			fprintf(o->log, "corecarve device-plugin: registered %s on %s\n", o->dp->res[i].name, o->kubelet);
	}
	return 0;
}

/* Free the grants of pods that are gone, when the kubelet's PodResources
 * socket is there.  A failure is said once until it changes (`last`). */
static void free_gone(struct cc_devplugin *dp, FILE *log, char *last, size_t len)
{
	struct cc_err e = CC_ERR_INIT;
	struct cc_dp_inuse *u = NULL;
	struct stat sb;
	int n = 0, freed = 0;

	if (!dp->podres || stat(dp->podres, &sb) < 0)
		return;
	if (cc_dp_podresources(dp->podres, &u, &n, &e) == 0)
		cc_dp_release_unused(dp, u, n, (long long)time(NULL), dp->grace, &freed, &e);
	cc_dp_inuse_free(u, n);
	if (e.code && log && strcmp(last, e.msg))
		fprintf(log, "corecarve device-plugin: freeing the grants of deleted pods: %s\n", e.msg);
	snprintf(last, len, "%s", e.code ? e.msg : "");
	if (freed && log)
		fprintf(log, "corecarve device-plugin: freed %d grant%s no pod holds (%s)\n", freed, freed == 1 ? "" : "s",
			dp->podres);
}

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The outbound thread: register when the kubelet's socket is new (a
 * failed try again each second), free the grants of deleted pods every
 * DP_GC_S.  Its calls block, each under its deadline, and never the
 * serving thread. */
static void *outbound_main(void *arg)
{
	struct outbound *o = arg;
	struct sock_id registered = { 0 };
	long long last_try = -10, last_gc = -10;
	char gc_err[CC_ERR_MSG_MAX] = "", reg_err[CC_ERR_MSG_MAX] = "";

	while (!stopping(o)) {
		struct sock_id ino = kubelet_id(o->kubelet);

		if (ino.ino && !same_id(ino, registered) && now_s() - last_try >= 1) {
			struct cc_err e = CC_ERR_INIT;

			last_try = now_s();
			if (register_all(o, &e) == 0) {
				registered = ino;
				reg_err[0] = 0;
			} else if (o->log && !stopping(o) && strcmp(reg_err, e.msg)) {
				/* Said once until it changes: a kubelet that is
				 * down is tried each second. */
				fprintf(o->log, "corecarve device-plugin: %s (trying again each second)\n", e.msg);
				snprintf(reg_err, sizeof(reg_err), "%s", e.msg);
			}
		}
		if (now_s() - last_gc >= DP_GC_S) {
			last_gc = now_s();
			free_gone(o->dp, o->log, gc_err, sizeof(gc_err));
		}
		nap_ms(DP_TICK_MS);
	}
	return NULL;
}

/* The serving thread: the sockets made again when removed, and served. */
static int serve_loop(struct cc_grpc_server *s, struct cc_devplugin *dp, volatile sig_atomic_t *stop,
		      struct cc_err *err)
{
	while (!*stop) {
		for (int i = 0; i < dp->nres; i++)
			if (!cc_grpc_server_listening(s, i) && cc_grpc_server_relisten(s, i, err) < 0)
				return -1;
		if (cc_grpc_server_run(s, DP_TICK_MS, err) < 0)
			return -1;
	}
	return 0;
}

int cc_dp_serve(struct cc_devplugin *dp, const char *dir, volatile sig_atomic_t *stop, FILE *log,
		struct cc_err *err)
{
	struct cc_grpc_server *s = cc_grpc_server_new(err);
	_cleanup_free_ struct dp_endpoint *ep = calloc((size_t)dp->nres + 1, sizeof(*ep));
	char kubelet[4096];
	int rc = -1;

	if (!s || !ep) {
		cc_grpc_server_free(s);
		return cc_err_sys(err, ENOMEM, "device plugin");
	}
	if (!dp->nres) {
		cc_grpc_server_free(s);
		return cc_err_set(err, ENOENT, "the policy (%s) has no exclusive class with cores on this node: nothing to offer",
				  dp->p->source);
	}
	snprintf(kubelet, sizeof(kubelet), "%s/%s", dir, CC_DP_KUBELET_SOCK);
	for (int i = 0; i < dp->nres; i++) {
		char path[4096];

		ep[i] = (struct dp_endpoint){ dp, &dp->res[i], log };
		snprintf(path, sizeof(path), "%s/%s", dir, dp->res[i].endpoint);
		if (cc_grpc_server_listen(s, path, dp_methods, DP_NMETHODS, &ep[i], err) < 0)
			goto out;
	}
	{
		struct outbound o = { .dp = dp, .dir = dir, .kubelet = kubelet, .stop = stop, .log = log };
		pthread_t th;
		int e = pthread_create(&th, NULL, outbound_main, &o);

		if (e) {
			cc_err_sys(err, e, "device plugin: its outbound thread");
			goto out;
		}
		rc = serve_loop(s, dp, stop, err);
		atomic_store(&o.quit, true);
		pthread_join(th, NULL);
	}
out:
	cc_grpc_server_free(s);
	for (int i = 0; i < dp->nres; i++)
		free(ep[i].answer);
	return rc;
}
