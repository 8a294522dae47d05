/* corecarve: freeing the grants of pods that are gone (devplugin.h).  The
 * kubelet never tells a device plugin that a pod ended; its PodResources
 * API lists the devices each of its pods holds, and a grant none of whose
 * devices is listed under its resource belongs to no pod. */
#define _GNU_SOURCE
#include "devplugin_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "podresources_v1.pb-c.h"

#define DP_PODRES_TIMEOUT_MS 5000

void cc_dp_inuse_free(struct cc_dp_inuse *u, int n)
{
	for (int i = 0; u && i < n; i++) {
		free(u[i].resource);
		free(u[i].id);
	}
	free(u);
}

static int add_inuse(struct cc_dp_inuse **u, int *n, int *cap, const char *res, const char *id, struct cc_err *err)
{
	if (*n == *cap) {
		int c = *cap ? *cap * 2 : 16;
		struct cc_dp_inuse *b = realloc(*u, (size_t)c * sizeof(**u));

		if (!b)
			return cc_err_sys(err, ENOMEM, "pod resources");
		*u = b;
		*cap = c;
	}
	(*u)[*n].resource = strdup(res);
	(*u)[*n].id = strdup(id);
	if (!(*u)[*n].resource || !(*u)[*n].id) {
		free((*u)[*n].resource);
		free((*u)[*n].id);
		return cc_err_sys(err, ENOMEM, "pod resources");
	}
	(*n)++;
	return 0;
}

int cc_dp_podresources(const char *sock, struct cc_dp_inuse **out, int *n, struct cc_err *err)
{
	V1__ListPodResourcesRequest q = V1__LIST_POD_RESOURCES_REQUEST__INIT;
	V1__ListPodResourcesResponse *r = NULL;
	_cleanup_free_ uint8_t *msg = NULL;
	struct cc_grpc_reply rep;
	struct cc_dp_inuse *u = NULL;
	size_t len;
	int k = 0, cap = 0;

	if (dp_pack(&q.base, &msg, &len, err) < 0 ||
	    cc_grpc_call(sock, "/v1.PodResourcesLister/List", msg, len, DP_PODRES_TIMEOUT_MS, &rep, err) < 0)
		return -1;
	if (rep.code != CC_GRPC_OK) {
		cc_grpc_reply_fini(&rep);
		return cc_err_set(err, EPROTO, "%s: List: grpc-status %d: %s", sock, (int)rep.code, rep.message);
	}
	r = v1__list_pod_resources_response__unpack(NULL, rep.len, rep.msg ? rep.msg : (const uint8_t *)"");
	cc_grpc_reply_fini(&rep);
	if (!r)
		return cc_err_set(err, EPROTO, "%s: List: not a ListPodResourcesResponse", sock);
	for (size_t p = 0; p < r->n_pod_resources; p++)
		for (size_t c = 0; c < r->pod_resources[p]->n_containers; c++) {
			const V1__ContainerResources *cr = r->pod_resources[p]->containers[c];

			for (size_t d = 0; d < cr->n_devices; d++)
				for (size_t i = 0; i < cr->devices[d]->n_device_ids; i++)
					if (add_inuse(&u, &k, &cap, cr->devices[d]->resource_name,
						      cr->devices[d]->device_ids[i], err) < 0) {
						v1__list_pod_resources_response__free_unpacked(r, NULL);
						cc_dp_inuse_free(u, k);
						return -1;
					}
		}
	v1__list_pod_resources_response__free_unpacked(r, NULL);
	*out = u;
	*n = k;
	return 0;
}

/* The CPUs of the cores pods hold under each of the plugin's resources
 * (held[k] for dp->res[k]), from PodResources' list: built once a round,
 * so that a round costs O(grants + devices), not their product. */
static hwloc_bitmap_t *held_by_pods(const struct cc_devplugin *dp, const struct cc_dp_inuse *u, int n,
				    struct cc_err *err)
{
	hwloc_bitmap_t *held = calloc((size_t)dp->nres + 1, sizeof(*held));

	if (!held) {
		cc_err_sys(err, ENOMEM, "grants");
		return NULL;
	}
	for (int k = 0; k < dp->nres; k++)
		if (!(held[k] = hwloc_bitmap_alloc())) {
			for (int j = 0; j < k; j++)
				hwloc_bitmap_free(held[j]);
			free(held);
			cc_err_sys(err, ENOMEM, "grants");
			return NULL;
		}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < dp->nres; k++) {
			struct cc_err e = CC_ERR_INIT;
			int core;

			if (strcmp(u[i].resource, dp->res[k].name))
				continue;
			core = cc_dp_parse_id(dp->t, u[i].id, &e);
			if (core >= 0)
				hwloc_bitmap_or(held[k], held[k], dp->t->cores[core].pus);
		}
	return held;
}

static void held_free(hwloc_bitmap_t *held, int n)
{
	if (!held)
		return;
	for (int k = 0; k < n; k++)
		hwloc_bitmap_free(held[k]);
	free(held);
}

/* The grant carves of the plugin's resources that no pod holds and that
 * are older than `grace` seconds at `now`. */
static int unused(const struct cc_devplugin *dp, struct cc_ledger *l, const struct cc_dp_inuse *u, int n,
		  long long now, long long grace, char ***ids, int *nids, struct cc_err *err)
{
	hwloc_bitmap_t *held = held_by_pods(dp, u, n, err);
	const struct cc_carve *c;

	*nids = 0;
	*ids = NULL;
	if (!held)
		return -1;
	*ids = calloc((size_t)cc_ledger_ncarves(l) + 1, sizeof(**ids));
	if (!*ids) {
		held_free(held, dp->nres);
		return cc_err_sys(err, ENOMEM, "grants");
	}
	cc_ledger_foreach_carve(l, i, c) {
		int r = -1;

		if (strcmp(c->kind, "grant") || now - c->created < grace)
			continue;
		for (int k = 0; k < dp->nres && r < 0; k++)
			if (!strcmp(dp->res[k].class_name, c->class_name))
				r = k;
		/* A grant of a class this policy no longer offers is left to
		 * the admin: the plugin cannot say whose it is. */
		if (r >= 0 && !hwloc_bitmap_intersects(held[r], c->cpus))
			(*ids)[(*nids)++] = strdup(c->id);
	}
	held_free(held, dp->nres);
	return 0;
}

static void free_ids(char **ids, int n)
{
	for (int i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

int cc_dp_release_unused(const struct cc_devplugin *dp, const struct cc_dp_inuse *u, int n, long long now,
			 long long grace, int *freed, struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	char **ids = NULL;
	int nids = 0, rc = 0;

	*freed = 0;
	/* A look first, as a reader (the shared lock only while the file is
	 * read): most rounds find nothing to free and never make a hook wait. */
	l = cc_ledger_read(dp->state, err);
	if (!l || unused(dp, l, u, n, now, grace, &ids, &nids, err) < 0) {
		free_ids(ids, nids);
		return -1;
	}
	free_ids(ids, nids);
	cc_ledger_close(l);
	l = NULL;
	if (!nids)
		return 0;
	/* Something to free: under the hooks' lock, found again there (a
	 * hook may have carved the grant meanwhile). */
	ids = NULL;
	nids = 0;
	l = cc_ledger_open_as(dp->state, CC_LEDGER_WRITE, dp->lock, err);
	if (!l || unused(dp, l, u, n, now, grace, &ids, &nids, err) < 0) {
		free_ids(ids, nids);
		return -1;
	}
	for (int i = 0; i < nids; i++) {
		if (!ids[i]) {
			rc = cc_err_sys(err, ENOMEM, "grants");
			break;
		}
		*freed += cc_ledger_remove(l, ids[i]);
	}
	free_ids(ids, nids);
	if (rc < 0)
		return -1;
	return *freed ? cc_ledger_commit(l, err) : 0;
}
