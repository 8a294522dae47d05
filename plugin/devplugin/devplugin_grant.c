/* corecarve: Allocate's grants (devplugin.h) — checked against the
 * resource's devices and recorded in the ledger under the hooks' lock,
 * all of a request's containers or none. */
#define _GNU_SOURCE
#include "devplugin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cleanup.h"
#include "cpulist.h"

/* The cores the IDs name, each a device of `r`: -1 (EINVAL) for an ID
 * that is not one, or named twice; EBUSY for one `dev` says is Unhealthy
 * (the kubelet asks from the list it was last sent: a core taken or kept
 * shared since is refused, not granted). */
static int grant_cpus(const struct cc_devplugin *dp, const struct cc_dp_resource *r, const struct cc_dp_device *dev,
		      int ndev, char *const *ids, int n, hwloc_bitmap_t cpus, hwloc_const_bitmap_t reserved,
		      struct cc_err *err)
{
	if (!n)
		return cc_err_set(err, EINVAL, "a container request with no device");
	for (int i = 0; i < n; i++) {
		int core = cc_dp_parse_id(dp->t, ids[i], err), j;

		if (core < 0)
			return -1;
		if (hwloc_bitmap_intersects(dp->t->cores[core].pus, reserved))
			return cc_err_set(err, EINVAL, "device %s: reserved by the policy (%s)", ids[i], dp->p->source);
		for (j = 0; j < ndev && dev[j].core != core; j++)
			;
		if (j == ndev)
			return cc_err_set(err, EINVAL, "device %s: not a core of %s (its cores are %s)", ids[i], r->name,
					  r->core_class);
		if (hwloc_bitmap_intersects(cpus, dp->t->cores[core].pus))
			return cc_err_set(err, EINVAL, "device %s: named twice", ids[i]);
		if (!dev[j].healthy)
			return cc_err_set(err, EBUSY, "device %s: Unhealthy, %s (the kubelet asked from an older list; "
					  "it grants again from the next)", ids[i], dev[j].holder);
		hwloc_bitmap_or(cpus, cpus, dp->t->cores[core].pus);
	}
	return 0;
}

/* A grant's token: CC_GRANT_TOKEN_LEN hex digits of the kernel's
 * random pool. */
static int draw_token(char out[CC_GRANT_TOKEN_MAX], struct cc_err *err)
{
	unsigned char raw[CC_GRANT_TOKEN_LEN / 2];
	size_t got = 0;

	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cc_err_sys(err, errno, "grant: getrandom");
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

/* One container's grant, added to `l` (not committed); `id` receives
 * its annotation. */
static int grant_one(const struct cc_dp_resource *r, struct cc_ledger *l,
		     hwloc_const_bitmap_t cpus, char *id, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t held = cc_ledger_taken(l);
	_cleanup_free_ char *list = cc_cpulist_format(cpus);
	struct cc_carve c;
	int rc;

	if (!held || !list)
		return cc_err_sys(err, ENOMEM, "grant");
	if (hwloc_bitmap_intersects(held, cpus)) {
		const struct cc_carve *o;

		cc_ledger_foreach_carve(l, i, o)
			if (hwloc_bitmap_intersects(o->cpus, cpus) || hwloc_bitmap_intersects(o->parked, cpus))
				return cc_err_set(err, EBUSY, "CPUs %s: held by %s %s", list, o->kind, o->id);
		return cc_err_set(err, EBUSY, "CPUs %s: already held", list);
	}
	/* The id names the class and the cores (no two grants can share
	 * one); the token proves the annotation came from this answer. */
	cc_carve_init(&c);
	if ((size_t)snprintf(c.id, sizeof(c.grant), "grant:%s:%s", r->class_name, list) >= sizeof(c.grant)) {
		cc_carve_fini(&c);
		return cc_err_set(err, E2BIG, "grant of CPUs %s: its id is over %zu bytes", list, sizeof(c.grant) - 1);
	}
	if (draw_token(c.token, err) < 0) {
		cc_carve_fini(&c);
		return -1;
	}
	snprintf(id, CC_DP_ID_MAX, "%.*s:%s", CC_GRANT_ID_MAX - 1, c.id, c.token);
	snprintf(c.kind, sizeof(c.kind), "grant");
	snprintf(c.mode, sizeof(c.mode), "grant");
	snprintf(c.class_name, sizeof(c.class_name), "%s", r->class_name);
	snprintf(c.core_class, sizeof(c.core_class), "%s", r->core_class);
	hwloc_bitmap_copy(c.cpus, cpus);
	c.exclusive = true;
	rc = cc_ledger_add(l, &c, err);
	cc_carve_fini(&c);
	return rc;
}

int cc_dp_allocate(const struct cc_devplugin *dp, const struct cc_dp_resource *r, char *const *const *req,
		   const int *nids, int nreq, char (*grant_ids)[CC_DP_ID_MAX], struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(dp->p, dp->t);
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	_cleanup_free_ struct cc_dp_device *dev = NULL;
	int ndev = 0;

	if (!reserved)
		return cc_err_sys(err, ENOMEM, "grant");
	if (!nreq)
		return cc_err_set(err, EINVAL, "no container request");
	if (cc_dp_devices(dp->t, dp->p, r, NULL, &dev, &ndev, err) < 0)
		return -1;
	/* Every ID is checked before the lock is taken: a bad request waits
	 * for no hook. */
	for (int i = 0; i < nreq; i++) {
		_cleanup_bitmap_ hwloc_bitmap_t cpus = hwloc_bitmap_alloc();

		if (!cpus)
			return cc_err_sys(err, ENOMEM, "grant");
		if (grant_cpus(dp, r, dev, ndev, req[i], nids[i], cpus, reserved, err) < 0)
			return cc_err_prefix(err, "container request %d", i);
	}
	l = cc_ledger_open_as(dp->state, CC_LEDGER_WRITE, dp->lock, err);
	if (!l)
		return -1;
	/* Under the lock, the devices as ListAndWatch would send them now:
	 * every requested one must be Healthy there.  Nothing is committed
	 * before the last container's grant is added. */
	free(dev);
	dev = NULL;
	if (cc_dp_devices(dp->t, dp->p, r, l, &dev, &ndev, err) < 0)
		return -1;
	for (int i = 0; i < nreq; i++) {
		_cleanup_bitmap_ hwloc_bitmap_t cpus = hwloc_bitmap_alloc();

		if (!cpus || grant_cpus(dp, r, dev, ndev, req[i], nids[i], cpus, reserved, err) < 0 ||
		    grant_one(r, l, cpus, grant_ids[i], err) < 0)
			return cc_err_prefix(err, "container request %d", i);
	}
	return cc_ledger_commit(l, err);
}
