/* corecarve: the DevicePlugin service's methods (devplugin_int.h), each a
 * protobuf-c message in and out around the decisions of devplugin.c. */
#define _GNU_SOURCE
#include "devplugin_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "deviceplugin_v1beta1.pb-c.h"

int dp_pack(const ProtobufCMessage *m, uint8_t **out, size_t *len, struct cc_err *err)
{
	size_t n = protobuf_c_message_get_packed_size(m);

	*out = malloc(n ? n : 1);
	if (!*out)
		return cc_err_sys(err, ENOMEM, "device plugin");
	*len = protobuf_c_message_pack(m, *out);
	return 0;
}

static int bad_request(const char *what, struct cc_err *err)
{
	return cc_err_set(err, EINVAL, "not a valid %s message", what);
}

static int options(void *arg, const uint8_t *req, size_t len, uint8_t **out, size_t *outlen, struct cc_err *err)
{
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;

	(void)arg;
	(void)req;
	(void)len;
	o.get_preferred_allocation_available = 1;
	return dp_pack(&o.base, out, outlen, err);
}

int cc_dp_list(const struct cc_devplugin *dp, const struct cc_dp_resource *r, uint8_t **out, size_t *outlen,
	       struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(dp->state, err);
	_cleanup_free_ struct cc_dp_device *dev = NULL;
	_cleanup_free_ V1beta1__Device *d = NULL;
	_cleanup_free_ V1beta1__Device **dv = NULL;
	_cleanup_free_ V1beta1__TopologyInfo *topo = NULL;
	_cleanup_free_ V1beta1__NUMANode *node = NULL;
	_cleanup_free_ V1beta1__NUMANode **nodep = NULL;
	_cleanup_free_ char *ids = NULL;
	V1beta1__ListAndWatchResponse resp = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
	int n = 0;

	if (!l || cc_dp_devices(dp->t, dp->p, r, l, &dev, &n, err) < 0)
		return -1;
	d = calloc((size_t)n + 1, sizeof(*d));
	dv = calloc((size_t)n + 1, sizeof(*dv));
	topo = calloc((size_t)n + 1, sizeof(*topo));
	node = calloc((size_t)n + 1, sizeof(*node));
	nodep = calloc((size_t)n + 1, sizeof(*nodep));
	ids = calloc((size_t)n + 1, 16);
	if (!d || !dv || !topo || !node || !nodep || !ids)
		return cc_err_sys(err, ENOMEM, "device plugin");
	for (int i = 0; i < n; i++) {
		v1beta1__device__init(&d[i]);
		snprintf(ids + 16 * i, 16, "cpu%d", dev[i].cpu);
		d[i].id = ids + 16 * i;
		d[i].health = dev[i].healthy ? CC_DP_HEALTHY : CC_DP_UNHEALTHY;
		if (dev[i].numa >= 0) {
			v1beta1__topology_info__init(&topo[i]);
			v1beta1__numanode__init(&node[i]);
			node[i].id = dev[i].numa;
			nodep[i] = &node[i];
			topo[i].n_nodes = 1;
			topo[i].nodes = &nodep[i];
			d[i].topology = &topo[i];
		}
		dv[i] = &d[i];
	}
	resp.n_devices = (size_t)n;
	resp.devices = dv;
	return dp_pack(&resp.base, out, outlen, err);
}

/* Whether two stats name the same file as it was: a commit renames a
 * new file in, so its inode, change time or size differ. */
static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* How many ticks may reuse an answer before it is made anew regardless
 * (25: every 5 s), should a change ever keep a file's identity. */
#define DP_REUSE_MAX 25

/* The devices now, as the ledger says: asked again at every tick of the
 * stream, sent when it changed.  The answer is made again only when the
 * ledger file changed: at 4096 PUs making it is 6 ms of CPU a tick
 * (docs/performance.md), a stat is microseconds. */
static int list_and_watch(void *arg, const uint8_t *req, size_t len, uint8_t **out, size_t *outlen,
			  struct cc_err *err)
{
	struct dp_endpoint *ep = arg;
	char path[PATH_MAX];
	struct stat now;
	bool known;

	(void)req;
	(void)len;
	snprintf(path, sizeof(path), "%s/%s", ep->dp->state ? ep->dp->state : CC_LEDGER_DIR, CC_LEDGER_FILE);
	known = stat(path, &now) == 0;
	if (known && ep->answer && ep->reuses < DP_REUSE_MAX && same_file(&now, &ep->seen)) {
		*out = malloc(ep->answer_len ? ep->answer_len : 1);
		if (!*out)
			return cc_err_sys(err, ENOMEM, "device plugin");
		memcpy(*out, ep->answer, ep->answer_len);
		*outlen = ep->answer_len;
		ep->reuses++;
		return 0;
	}
	if (cc_dp_list(ep->dp, ep->r, out, outlen, err) < 0)
		return -1;
	free(ep->answer);
	ep->answer = NULL;
	ep->reuses = 0;
	/* Kept only for a ledger that is there (none yet: made each tick, at
	 * no cost). */
	if (known && (ep->answer = malloc(*outlen ? *outlen : 1))) {
		memcpy(ep->answer, *out, *outlen);
		ep->answer_len = *outlen;
		ep->seen = now;
	}
	return 0;
}

static void free_ids(char **ids)
{
	for (int i = 0; ids && ids[i]; i++)
		free(ids[i]);
	free(ids);
}

static int preferred(void *arg, const uint8_t *req, size_t len, uint8_t **out, size_t *outlen, struct cc_err *err)
{
	struct dp_endpoint *ep = arg;
	V1beta1__PreferredAllocationRequest *q = v1beta1__preferred_allocation_request__unpack(NULL, len, req);
	V1beta1__PreferredAllocationResponse r = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
	V1beta1__ContainerPreferredAllocationResponse *c = NULL, **cp = NULL;
	char ***ids = NULL;
	size_t n = 0;
	int rc = -1;

	if (!q)
		return bad_request("PreferredAllocationRequest", err);
	n = q->n_container_requests;
	c = calloc(n + 1, sizeof(*c));
	cp = calloc(n + 1, sizeof(*cp));
	ids = calloc(n + 1, sizeof(*ids));
	if (!c || !cp || !ids) {
		cc_err_sys(err, ENOMEM, "device plugin");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const V1beta1__ContainerPreferredAllocationRequest *cr = q->container_requests[i];

		if (cc_dp_preferred(ep->dp, ep->r, cr->available_deviceids, (int)cr->n_available_deviceids,
				    cr->must_include_deviceids, (int)cr->n_must_include_deviceids, cr->allocation_size,
				    &ids[i], err) < 0) {
			cc_err_prefix(err, "container request %zu", i);
			goto out;
		}
		v1beta1__container_preferred_allocation_response__init(&c[i]);
		while (ids[i][c[i].n_deviceids])
			c[i].n_deviceids++;
		c[i].deviceids = ids[i];
		cp[i] = &c[i];
	}
	r.n_container_responses = n;
	r.container_responses = cp;
	rc = dp_pack(&r.base, out, outlen, err);
out:
	for (size_t i = 0; ids && i < n; i++)
		free_ids(ids[i]);
	free(ids);
	free(c);
	free(cp);
	v1beta1__preferred_allocation_request__free_unpacked(q, NULL);
	return rc;
}

/* The response: each container gets the annotation naming its grant. */
static int allocate_reply(char (*grant)[CC_DP_ID_MAX], size_t n, uint8_t **out, size_t *outlen, struct cc_err *err)
{
	V1beta1__AllocateResponse r = V1BETA1__ALLOCATE_RESPONSE__INIT;
	_cleanup_free_ V1beta1__ContainerAllocateResponse *c = calloc(n + 1, sizeof(*c));
	_cleanup_free_ V1beta1__ContainerAllocateResponse **cp = calloc(n + 1, sizeof(*cp));
	_cleanup_free_ V1beta1__ContainerAllocateResponse__AnnotationsEntry *a = calloc(n + 1, sizeof(*a));
	_cleanup_free_ V1beta1__ContainerAllocateResponse__AnnotationsEntry **ap = calloc(n + 1, sizeof(*ap));

	if (!c || !cp || !a || !ap)
		return cc_err_sys(err, ENOMEM, "device plugin");
	for (size_t i = 0; i < n; i++) {
		v1beta1__container_allocate_response__init(&c[i]);
		v1beta1__container_allocate_response__annotations_entry__init(&a[i]);
		a[i].key = (char *)CC_DP_GRANT_KEY;
		a[i].value = grant[i];
		ap[i] = &a[i];
		c[i].n_annotations = 1;
		c[i].annotations = &ap[i];
		cp[i] = &c[i];
	}
	r.n_container_responses = n;
	r.container_responses = cp;
	return dp_pack(&r.base, out, outlen, err);
}

static int allocate(void *arg, const uint8_t *req, size_t len, uint8_t **out, size_t *outlen, struct cc_err *err)
{
	struct dp_endpoint *ep = arg;
	V1beta1__AllocateRequest *q = v1beta1__allocate_request__unpack(NULL, len, req);
	char *const **ids = NULL;
	int *nids = NULL;
	char (*grant)[CC_DP_ID_MAX] = NULL;
	size_t n;
	int rc = -1;

	if (!q)
		return bad_request("AllocateRequest", err);
	n = q->n_container_requests;
	ids = calloc(n + 1, sizeof(*ids));
	nids = calloc(n + 1, sizeof(*nids));
	grant = calloc(n + 1, sizeof(*grant));
	if (!ids || !nids || !grant) {
		cc_err_sys(err, ENOMEM, "device plugin");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		ids[i] = q->container_requests[i]->devices_ids;
		nids[i] = (int)q->container_requests[i]->n_devices_ids;
	}
	if (cc_dp_allocate(ep->dp, ep->r, ids, nids, (int)n, grant, err) == 0)
		rc = allocate_reply(grant, n, out, outlen, err);
	/* The grant's id without its token: the log is no place for a
	 * secret. */
	if (ep->log)
		fprintf(ep->log, "corecarve device-plugin: %s: Allocate: %s%.*s%s\n", ep->r->name,
			rc == 0 ? "granted " : "refused: ",
			rc == 0 ? (int)(strrchr(grant[0], ':') - grant[0]) : (int)strlen(err->msg),
			rc == 0 ? grant[0] : err->msg, rc == 0 && n > 1 ? " and more" : "");
out:
	free(ids);
	free(nids);
	free(grant);
	v1beta1__allocate_request__free_unpacked(q, NULL);
	return rc;
}

static int pre_start(void *arg, const uint8_t *req, size_t len, uint8_t **out, size_t *outlen, struct cc_err *err)
{
	V1beta1__PreStartContainerResponse r = V1BETA1__PRE_START_CONTAINER_RESPONSE__INIT;

	(void)arg;
	(void)req;
	(void)len;
	return dp_pack(&r.base, out, outlen, err);
}

const struct cc_grpc_method dp_methods[DP_NMETHODS] = {
	{ "/v1beta1.DevicePlugin/GetDevicePluginOptions", false, options },
	{ "/v1beta1.DevicePlugin/ListAndWatch", true, list_and_watch },
	{ "/v1beta1.DevicePlugin/GetPreferredAllocation", false, preferred },
	/* Allocate waits for the hooks' lock: on the worker thread. */
	{ "/v1beta1.DevicePlugin/Allocate", false, allocate, true },
	{ "/v1beta1.DevicePlugin/PreStartContainer", false, pre_start },
};
