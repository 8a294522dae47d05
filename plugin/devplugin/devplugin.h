/* corecarve: the kubelet device plugin (docs/device-plugin.md).  One
 * extended resource per exclusive class of the policy,
 * corecarve.io/<class>-cores; one device per whole core the class may carve
 * (of its core type, not reserved), ID "cpu<N>" with N the lowest CPU of the
 * core, on the core's NUMA node.  A core is Unhealthy while anything but a
 * grant of the same resource (or the container carved from it) holds one
 * of its CPUs.  Allocate records a
 * grant (a ledger carve of kind "grant", ledger.h) and answers the
 * container annotation CC_DP_GRANT_KEY naming it.
 *
 * The decisions (cc_dp_resources, cc_dp_devices, cc_dp_preferred,
 * cc_dp_allocate) are functions of the topology, the policy and the
 * ledger; cc_dp_serve is the daemon around them. */
#ifndef CC_DEVPLUGIN_H
#define CC_DEVPLUGIN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "grant.h"
#include "ledger.h"
#include "policy.h"
#include "topo.h"

#define CC_DP_DIR "/var/lib/kubelet/device-plugins"
#define CC_DP_KUBELET_SOCK "kubelet.sock"
#define CC_DP_VERSION "v1beta1"
#define CC_DP_GRANT_KEY CC_GRANT_KEY
#define CC_DP_HEALTHY "Healthy"
#define CC_DP_UNHEALTHY "Unhealthy"

struct cc_dp_resource {
	char class_name[64];          /* the placement class */
	char name[128];               /* corecarve.io/<class>-cores */
	char endpoint[96];            /* its socket's name in the plugin directory */
	char core_class[CC_NAME_MAX]; /* the core class it draws from */
	int cls;                      /* that class's index in the topology, -1 for "any" */
};

struct cc_dp_device {
	int cpu;   /* the core's lowest CPU: the ID is cpu<cpu> */
	int core;  /* index into topo->cores */
	int numa;  /* NUMA node number, -1 when unknown */
	bool healthy;
	char holder[256]; /* what holds it when unhealthy */
};

/* What the plugin works on: borrowed from the entry point. */
struct cc_devplugin {
	const struct cc_topo *t;
	const struct cc_policy *p;
	const char *state;  /* the ledger's directory, NULL: CC_LEDGER_DIR */
	const struct cc_ledger_lock *lock;
	struct cc_dp_resource *res;
	int nres;
	/* The kubelet's PodResources socket (NULL: none is read, no grant is
	 * freed) and the grace a new grant gets. */
	const char *podres;
	long long grace;
};

/* The resources of every exclusive class that can draw cores on `t`
 * (a class whose core type the host lacks, with no fallback, has none).
 * *out: caller frees. */
int cc_dp_resources(const struct cc_topo *t, const struct cc_policy *p, struct cc_dp_resource **out, int *n,
		    struct cc_err *err);

/* The devices of resource `r`, their health from `l` (NULL: none held).
 * *out: caller frees; in CPU order. */
int cc_dp_devices(const struct cc_topo *t, const struct cc_policy *p, const struct cc_dp_resource *r,
		  const struct cc_ledger *l, struct cc_dp_device **out, int *n, struct cc_err *err);

/* "cpu<N>" to the core whose lowest CPU is N: its index, or -1 with err
 * (EINVAL) naming the ID and why. */
int cc_dp_parse_id(const struct cc_topo *t, const char *id, struct cc_err *err);

/* The `size` devices the allocator would carve among `avail` (IDs), those
 * of `must` first: *out (size IDs, each and the array the caller's).
 * Where the allocator refuses, the first of `avail` (the kubelet decides
 * anyway; this is a preference). */
int cc_dp_preferred(const struct cc_devplugin *dp, const struct cc_dp_resource *r, char *const *avail, int navail,
		    char *const *must, int nmust, int size, char ***out, struct cc_err *err);

/* Grant each of `nreq` containers its devices (req[i], nids[i] IDs) under
 * the ledger's lock, all or none: an unknown or reserved ID (EINVAL), a
 * core held by any carve or grant (EBUSY) refuses the lot and records
 * nothing.  grant_ids[i] (CC_DP_ID_MAX bytes each) receives the value of
 * CC_DP_GRANT_KEY for each: "<grant id>:<token>", the token a secret drawn
 * for the grant (the hook carves no grant without it: a pod that copies
 * another's annotation names a grant it cannot prove). */
#define CC_DP_ID_MAX (CC_GRANT_ID_MAX + CC_GRANT_TOKEN_MAX + 1)
int cc_dp_allocate(const struct cc_devplugin *dp, const struct cc_dp_resource *r, char *const *const *req,
		   const int *nids, int nreq, char (*grant_ids)[CC_DP_ID_MAX], struct cc_err *err);

/* The ListAndWatch answer for `r` now (the ledger read, every device and
 * its health), packed: what each stream sends when it changed. *out the
 * caller frees. */
int cc_dp_list(const struct cc_devplugin *dp, const struct cc_dp_resource *r, uint8_t **out, size_t *outlen,
	       struct cc_err *err);

/* What the kubelet's pods hold: a device ID under a resource name, as its
 * PodResources API (v1 List) says. */
struct cc_dp_inuse {
	char *resource;
	char *id;
};
#define CC_DP_PODRES_SOCK "/var/lib/kubelet/pod-resources/kubelet.sock"
/* How long a grant is kept though no pod is listed with it: the kubelet
 * lists a pod's devices once it has admitted the pod, after Allocate. */
#define CC_DP_GRACE_S 60

/* Ask the PodResources socket `sock`: *out (n of them; cc_dp_inuse_free). */
int cc_dp_podresources(const char *sock, struct cc_dp_inuse **out, int *n, struct cc_err *err);
void cc_dp_inuse_free(struct cc_dp_inuse *u, int n);

/* Under the ledger's lock, remove the grants of the plugin's resources
 * that no pod in `u` holds a device of, created more than `grace` seconds
 * before `now` (unix seconds).  *freed: how many. */
int cc_dp_release_unused(const struct cc_devplugin *dp, const struct cc_dp_inuse *u, int n, long long now,
			 long long grace, int *freed, struct cc_err *err);

/* Serve every resource on sockets in `dir`, register them with the
 * kubelet's socket there (and again each time it is made anew), free the
 * grants of pods that are gone (dp->podres, every few seconds), until
 * *stop; then remove the sockets.  `log` gets a line per registration and
 * per refused call (NULL: none). */
int cc_dp_serve(struct cc_devplugin *dp, const char *dir, volatile sig_atomic_t *stop, FILE *log,
		struct cc_err *err);

#endif
