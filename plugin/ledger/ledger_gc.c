/* corecarve: the ledger's gc — which journaled carves are dead (their
 * cgroup gone, an exec carve's cgroup emptied, one kept as releasing) and
 * taking them out, one commit each (ledger.h, cc_ledger_gc).  Kept apart
 * from the ledger's files and operations (ledger.c).  What became of a
 * cgroup is the caller's to say (struct cc_ledger_probe: the cgroup layer
 * reads it): the ledger names no cgroup path and reads no cgroup file. */
#define _GNU_SOURCE
#include "ledger_int.h"

#include <stdio.h>
#include <string.h>

#include "cleanup.h"

/* Whether the carve's cgroup is gone (1) or still in use (0); -1 when
 * that cannot be told: only "it is not there" (or, for an exec carve and
 * when `empty_ends`, "no process in it") ends a carve, EACCES or EIO on a
 * live container's cgroup must not hand its CPUs to someone else. */
static int carve_gone(const struct cc_ledger_probe *probe, const char *id, const char *kind, const char *cg,
		      bool empty_ends, struct cc_err *err)
{
	bool exec = !strcmp(kind, "exec");
	int r;

	if ((strcmp(kind, "container") != 0 && !exec) || !cg[0])
		return 0;
	r = probe->cgroup(cg, probe->arg, err);
	if (r < 0)
		return cc_err_prefix(err, "gc of carve \"%s\"", id);
	return r == CC_LEDGER_CGROUP_GONE || ((exec || empty_ends) && r == CC_LEDGER_CGROUP_EMPTY);
}

/* A carve gc must take up: stale, or kept as releasing and stale on the
 * host too.  "Releasing" is the ledger's word, and the ledger can be
 * wrong (a release that failed for a container that came back under the
 * same id, a file someone edited, a tree's gc written onto the node's
 * state): the cgroup is asked again, under the mount and root this gc
 * runs with, and a container's that is still there with processes in it
 * keeps its CPUs.  A carve without a cgroup to ask (a VM's) is retried
 * as before. */
static int gc_due(const struct cc_ledger_probe *probe, const char *id, const char *kind, const char *cg,
		  bool releasing, struct cc_err *err)
{
	if (releasing && ((strcmp(kind, "container") && strcmp(kind, "exec")) || !cg[0]))
		return 1;
	return carve_gone(probe, id, kind, cg, releasing, err);
}

int cc_ledger_gc_due(struct cc_ledger *l, const struct cc_ledger_probe *probe,
		     void (*due)(const struct cc_carve *c, void *arg), void *arg, struct cc_err *err)
{
	int n = 0;

	if (cc_ledger_load_all(l, err) < 0)
		return -1;
	for (int i = 0; i < l->ncarves; i++) {
		const struct cc_carve *c = l->carves[i];
		int r = gc_due(probe, c->id, c->kind, c->cgroup, c->releasing, err);

		if (r < 0)
			return -1;
		if (r > 0) {
			n++;
			if (due)
				due(c, arg);
		}
	}
	return n;
}

int cc_ledger_gc(struct cc_ledger *l, const struct cc_ledger_probe *probe,
		 int (*release)(struct cc_carve *c, void *arg), void *arg, struct cc_err *err)
{
	int removed = 0, first = 0, r;

	if (l->index) {
		size_t i;
		json_t *e;

		/* From the index while every carve is live (the common case);
		 * a stale one is released from its full record.  Loaded, the
		 * carves keep the file's order: those before it were just
		 * found live and are not looked up again. */
		r = 0;
		json_array_foreach(l->index->entries, i, e) {
			if (ledger_gone_at(l, i))
				continue;
			r = gc_due(probe, json_string_value(json_array_get(e, 0)),
				   json_string_value(json_array_get(e, 1)), json_string_value(json_array_get(e, 2)),
				   json_array_size(e) == 4, err);
			if (r != 0)
				break;
		}
		if (r < 0)
			return -1;
		if (r > 0) {
			if (cc_ledger_load_all(l, err) < 0)
				return -1;
			first = (int)i;
		}
	}
	for (int i = first; i < l->ncarves;) {
		struct cc_carve *c = l->carves[i];
		char id[sizeof(c->id)];

		r = gc_due(probe, c->id, c->kind, c->cgroup, c->releasing, err);
		if (r < 0)
			return -1;
		if (r == 0) {
			i++;
			continue;
		}
		snprintf(id, sizeof(id), "%s", c->id);
		if (release && release(c, arg) < 0) {
			/* Kept, its CPUs still taken: the next gc tries again. */
			cc_ledger_mark_releasing(l, id);
			i++;
		} else {
			cc_ledger_remove(l, id);
			removed++;
		}
		if (cc_ledger_commit(l, err) < 0)
			return cc_err_prefix(err, "gc of carve \"%s\"", id);
	}
	return removed;
}
