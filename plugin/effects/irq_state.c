/* The ledger section "irq": what IRQ steering must remember to undo.
 *
 *   "irq": {
 *     "fallback": { "reserved": "0-1,8-9", "nodes": { "0": "0-7", "1": "8-15" } },
 *     "irqs": {
 *       "default": { "orig": "0-15", "set": "0-1,6-15" },
 *       "24": { "name": "virtio0-config", "orig": "0-15", "set": "0-1,6-15" },
 *       "30": { "name": "virtio1-req.2", "unmovable": "EPERM", "affinity": "0-3" }
 *     },
 *     "irqbalance": { "file": "/etc/default/irqbalance", "cpulist": null,
 *                     "cpus": null, "banned": "2-5,10-13" }
 *   }
 *
 * The section is absent when nothing is recorded.  It is parsed strictly:
 * a restore from a record corecarve cannot read would put a wrong mask on
 * a device. */
#define _GNU_SOURCE
#include "irq.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

#define W "sections." CC_IRQ_SECTION

void cc_irq_state_init(struct cc_irq_state *st)
{
	memset(st, 0, sizeof(*st));
	cc_irqbalance_rec_init(&st->irqbalance);
}

static void rec_fini(struct cc_irq_rec *r)
{
	if (r->orig)
		hwloc_bitmap_free(r->orig);
	if (r->set)
		hwloc_bitmap_free(r->set);
	if (r->pending)
		hwloc_bitmap_free(r->pending);
	r->orig = r->set = r->pending = NULL;
}

void cc_irq_state_fini(struct cc_irq_state *st)
{
	for (int i = 0; i < st->n; i++)
		rec_fini(&st->recs[i]);
	free(st->recs);
	cc_irq_fallback_fini(&st->fb);
	cc_irqbalance_rec_fini(&st->irqbalance);
	memset(st, 0, sizeof(*st));
}

bool cc_irq_state_empty(const struct cc_irq_state *st)
{
	return st->n == 0 && !st->irqbalance.active;
}

const struct cc_irq_rec *cc_irq_state_find(const struct cc_irq_state *st, int irq)
{
	for (int i = 0; i < st->n; i++)
		if (st->recs[i].irq == irq)
			return &st->recs[i];
	return NULL;
}

int cc_irq_state_put(struct cc_irq_state *st, const struct cc_irq_rec *r)
{
	struct cc_irq_rec n = *r, *grown;
	int at = 0;

	n.orig = r->orig ? hwloc_bitmap_dup(r->orig) : hwloc_bitmap_alloc();
	n.set = r->set ? hwloc_bitmap_dup(r->set) : NULL;
	n.pending = r->pending ? hwloc_bitmap_dup(r->pending) : NULL;
	if (!n.orig || (r->set && !n.set) || (r->pending && !n.pending)) {
		rec_fini(&n);
		return -1;
	}
	for (at = 0; at < st->n && st->recs[at].irq < r->irq; at++)
		;
	if (at < st->n && st->recs[at].irq == r->irq) {
		rec_fini(&st->recs[at]);
		st->recs[at] = n;
		return 0;
	}
	grown = realloc(st->recs, (size_t)(st->n + 1) * sizeof(*grown));
	if (!grown) {
		rec_fini(&n);
		return -1;
	}
	st->recs = grown;
	memmove(&st->recs[at + 1], &st->recs[at], (size_t)(st->n - at) * sizeof(*grown));
	st->recs[at] = n;
	st->n++;
	return 0;
}

void cc_irq_state_del(struct cc_irq_state *st, int irq)
{
	for (int i = 0; i < st->n; i++) {
		if (st->recs[i].irq != irq)
			continue;
		rec_fini(&st->recs[i]);
		memmove(&st->recs[i], &st->recs[i + 1], (size_t)(st->n - i - 1) * sizeof(*st->recs));
		st->n--;
		return;
	}
}

int cc_irq_state_copy(struct cc_irq_state *dst, const struct cc_irq_state *src)
{
	cc_irq_state_fini(dst);
	cc_irq_state_init(dst);
	for (int i = 0; i < src->n; i++)
		if (cc_irq_state_put(dst, &src->recs[i]) < 0)
			return -1;
	if (cc_irq_fallback_copy(&dst->fb, &src->fb) < 0 || cc_irqbalance_rec_copy(&dst->irqbalance, &src->irqbalance) < 0)
		return -1;
	return 0;
}

/* ---- parse ---------------------------------------------------------------- */

static int check_keys(const json_t *o, const char *const *known, const char *what, struct cc_err *err)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)o, k, v) {
		const char *const *p;

		for (p = known; *p && strcmp(*p, k); p++)
			;
		if (!*p)
			return cc_err_set(err, EINVAL, "%s: unknown field \"%.64s\"", what, k);
	}
	return 0;
}

static int get_list(const json_t *o, const char *what, const char *key, hwloc_bitmap_t out, struct cc_err *err)
{
	json_t *v = json_object_get(o, key);
	char field[160];

	snprintf(field, sizeof(field), "%s.%s", what, key);
	if (!v)
		return cc_err_set(err, EINVAL, "%s: missing", field);
	if (!json_is_string(v))
		return cc_err_set(err, EINVAL, "%s: expected a cpu-list string", field);
	return cc_cpulist_parse(json_string_value(v), out, field, err);
}

static int get_text(const json_t *o, const char *what, const char *key, bool nullable, char *buf,
		    size_t len, char **dup, struct cc_err *err)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return cc_err_set(err, EINVAL, "%s.%s: missing", what, key);
	if (nullable && json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return cc_err_set(err, EINVAL, "%s.%s: expected a string%s", what, key, nullable ? " or null" : "");
	if (dup) {
		*dup = strdup(json_string_value(v));
		return *dup ? 0 : cc_err_sys(err, ENOMEM, "%s.%s", what, key);
	}
	if (json_string_length(v) >= len)
		return cc_err_set(err, ENAMETOOLONG, "%s.%s: longer than %zu bytes", what, key, len - 1);
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

/* "default" or a decimal IRQ number without sign or leading zeros. */
static int parse_key(const char *k, int *irq, struct cc_err *err)
{
	long v = 0;

	if (!strcmp(k, "default")) {
		*irq = CC_IRQ_DEFAULT;
		return 0;
	}
	if (!*k || (k[0] == '0' && k[1]) || strlen(k) > 8)
		return cc_err_set(err, EINVAL, W ".irqs: \"%.32s\" is not an IRQ number", k);
	for (const char *p = k; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return cc_err_set(err, EINVAL, W ".irqs: \"%.32s\" is not an IRQ number", k);
		v = v * 10 + (*p - '0');
	}
	if (v >= CC_IRQ_NUMBER_MAX)
		return cc_err_set(err, ERANGE, W ".irqs: IRQ %ld is out of range", v);
	*irq = (int)v;
	return 0;
}

static int parse_rec(const char *key, const json_t *o, struct cc_irq_state *st, struct cc_err *err)
{
	static const char *const steered[] = { "name", "orig", "set", "pending", NULL };
	static const char *const unmovable[] = { "name", "unmovable", "affinity", NULL };
	_cleanup_bitmap_ hwloc_bitmap_t orig = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t set = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t pending = hwloc_bitmap_alloc();
	struct cc_irq_rec r = { 0 };
	char what[96];

	snprintf(what, sizeof(what), W ".irqs.%.32s", key);
	if (parse_key(key, &r.irq, err) < 0)
		return -1;
	if (!json_is_object(o))
		return cc_err_set(err, EINVAL, "%s: expected an object", what);
	if (!orig || !set || !pending)
		return cc_err_sys(err, ENOMEM, "%s", what);
	r.unmovable = json_object_get(o, "unmovable") != NULL;
	if (check_keys(o, r.unmovable ? unmovable : steered, what, err) < 0)
		return -1;
	if (r.irq != CC_IRQ_DEFAULT && get_text(o, what, "name", false, r.name, sizeof(r.name), NULL, err) < 0)
		return -1;
	if (r.irq == CC_IRQ_DEFAULT && json_object_get(o, "name"))
		return cc_err_set(err, EINVAL, "%s: unknown field \"name\"", what);
	if (r.unmovable) {
		if (get_text(o, what, "unmovable", false, r.refused, sizeof(r.refused), NULL, err) < 0 ||
		    get_list(o, what, "affinity", orig, err) < 0)
			return -1;
		r.orig = orig;
	} else {
		if (get_list(o, what, "orig", orig, err) < 0 || get_list(o, what, "set", set, err) < 0)
			return -1;
		if (json_object_get(o, "pending") && get_list(o, what, "pending", pending, err) < 0)
			return -1;
		r.orig = orig;
		r.set = set;
		r.pending = json_object_get(o, "pending") ? pending : NULL;
	}
	if (cc_irq_state_put(st, &r) < 0)
		return cc_err_sys(err, ENOMEM, "%s", what);
	return 0;
}

static int parse_fallback(const json_t *o, struct cc_irq_fallback *fb, struct cc_err *err)
{
	static const char *const keys[] = { "reserved", "nodes", NULL };
	const char *k;
	json_t *nodes, *v;

	if (!json_is_object(o))
		return cc_err_set(err, EINVAL, W ".fallback: expected an object");
	if (check_keys(o, keys, W ".fallback", err) < 0)
		return -1;
	fb->reserved = hwloc_bitmap_alloc();
	if (!fb->reserved)
		return cc_err_sys(err, ENOMEM, W ".fallback");
	if (get_list(o, W ".fallback", "reserved", fb->reserved, err) < 0)
		return -1;
	nodes = json_object_get(o, "nodes");
	if (!json_is_object(nodes))
		return cc_err_set(err, EINVAL, W ".fallback.nodes: expected an object");
	fb->nodes = calloc(json_object_size(nodes) + 1, sizeof(*fb->nodes));
	if (!fb->nodes)
		return cc_err_sys(err, ENOMEM, W ".fallback");
	json_object_foreach(nodes, k, v) {
		struct cc_irq_node *n = &fb->nodes[fb->nnodes];
		char field[96];
		char *end;
		long id;

		snprintf(field, sizeof(field), W ".fallback.nodes.%.16s", k);
		errno = 0;
		id = strtol(k, &end, 10);
		if (!isdigit((unsigned char)*k) || *end || errno || id >= CC_CPU_LIMIT)
			return cc_err_set(err, EINVAL, "%s: not a NUMA node number", field);
		n->node = (int)id;
		n->cpus = hwloc_bitmap_alloc();
		fb->nnodes++;
		if (!n->cpus)
			return cc_err_sys(err, ENOMEM, "%s", field);
		if (!json_is_string(v))
			return cc_err_set(err, EINVAL, "%s: expected a cpu-list string", field);
		if (cc_cpulist_parse(json_string_value(v), n->cpus, field, err) < 0)
			return -1;
	}
	return 0;
}

static int parse_irqbalance(const json_t *o, struct cc_irqbalance_rec *r, struct cc_err *err)
{
	static const char *const keys[] = { "file", "cpulist", "cpus", "banned", "pending", NULL };
	const char *what = W ".irqbalance";

	if (!json_is_object(o))
		return cc_err_set(err, EINVAL, "%s: expected an object", what);
	if (check_keys(o, keys, what, err) < 0 ||
	    get_text(o, what, "file", false, r->file, sizeof(r->file), NULL, err) < 0 ||
	    get_text(o, what, "cpulist", true, NULL, 0, &r->cpulist, err) < 0 ||
	    get_text(o, what, "cpus", true, NULL, 0, &r->cpus, err) < 0 ||
	    get_list(o, what, "banned", r->banned, err) < 0)
		return -1;
	if (json_object_get(o, "pending")) {
		r->pending = hwloc_bitmap_alloc();
		if (!r->pending)
			return cc_err_sys(err, ENOMEM, "%s", what);
		if (get_list(o, what, "pending", r->pending, err) < 0)
			return -1;
	}
	for (int i = 0; cc_irqbalance_files[i]; i++)
		if (!strcmp(r->file, cc_irqbalance_files[i])) {
			r->active = true;
			return 0;
		}
	return cc_err_set(err, EINVAL, "%s.file: \"%.64s\" is not an irqbalance environment file corecarve manages",
			  what, r->file);
}

int cc_irq_state_parse(const json_t *section, struct cc_irq_state *st, struct cc_err *err)
{
	static const char *const keys[] = { "fallback", "irqs", "irqbalance", NULL };
	const char *k;
	json_t *v, *irqs;

	cc_irq_state_init(st);
	if (!section)
		return 0;
	if (!json_is_object(section)) {
		cc_err_set(err, EINVAL, W ": expected an object");
		goto fail;
	}
	if (!st->irqbalance.banned) {
		cc_err_sys(err, ENOMEM, W);
		goto fail;
	}
	if (check_keys(section, keys, W, err) < 0)
		goto fail;
	v = json_object_get(section, "fallback");
	if (v && parse_fallback(v, &st->fb, err) < 0)
		goto fail;
	irqs = json_object_get(section, "irqs");
	if (irqs && !json_is_object(irqs)) {
		cc_err_set(err, EINVAL, W ".irqs: expected an object");
		goto fail;
	}
	json_object_foreach(irqs, k, v)
		if (parse_rec(k, v, st, err) < 0)
			goto fail;
	v = json_object_get(section, "irqbalance");
	if (v && parse_irqbalance(v, &st->irqbalance, err) < 0)
		goto fail;
	return 0;
fail:
	cc_irq_state_fini(st);
	return -1;
}

/* ---- serialise ------------------------------------------------------------- */

static json_t *list_json(hwloc_const_bitmap_t b)
{
	_cleanup_free_ char *s = cc_cpulist_format(b);

	return s ? json_string(s) : NULL;
}

static int set_new(json_t *o, const char *k, json_t *v)
{
	return v ? json_object_set_new(o, k, v) : -1;
}

static json_t *rec_json(const struct cc_irq_rec *r)
{
	_cleanup_json_ json_t *o = json_object();

	if (!o || (r->irq != CC_IRQ_DEFAULT && set_new(o, "name", json_string(r->name)) < 0))
		return NULL;
	if (r->unmovable) {
		if (set_new(o, "unmovable", json_string(r->refused)) < 0 ||
		    set_new(o, "affinity", list_json(r->orig)) < 0)
			return NULL;
	} else if (!r->set || set_new(o, "orig", list_json(r->orig)) < 0 || set_new(o, "set", list_json(r->set)) < 0 ||
		   (r->pending && set_new(o, "pending", list_json(r->pending)) < 0)) {
		return NULL;
	}
	return cc_steal_ptr(o);
}

static json_t *raw_json(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *cc_irq_state_json(const struct cc_irq_state *st, struct cc_err *err)
{
	_cleanup_json_ json_t *o = json_object();
	json_t *irqs, *fb, *nodes, *ib;

	if (!o)
		goto nomem;
	if (cc_irq_state_empty(st))
		return cc_steal_ptr(o);
	if (st->fb.reserved) {
		if (set_new(o, "fallback", fb = json_object()) < 0 || set_new(fb, "reserved", list_json(st->fb.reserved)) < 0 ||
		    set_new(fb, "nodes", nodes = json_object()) < 0)
			goto nomem;
		for (int i = 0; i < st->fb.nnodes; i++) {
			char k[16];

			snprintf(k, sizeof(k), "%d", st->fb.nodes[i].node);
			if (set_new(nodes, k, list_json(st->fb.nodes[i].cpus)) < 0)
				goto nomem;
		}
	}
	if (set_new(o, "irqs", irqs = json_object()) < 0)
		goto nomem;
	for (int i = 0; i < st->n; i++) {
		char k[16];

		if (st->recs[i].irq == CC_IRQ_DEFAULT)
			snprintf(k, sizeof(k), "default");
		else
			snprintf(k, sizeof(k), "%d", st->recs[i].irq);
		if (set_new(irqs, k, rec_json(&st->recs[i])) < 0)
			return cc_err_set(err, EINVAL, W ".irqs.%s: cannot be serialised (name not UTF-8?)", k), NULL;
	}
	if (st->irqbalance.active) {
		const struct cc_irqbalance_rec *r = &st->irqbalance;

		if (set_new(o, "irqbalance", ib = json_object()) < 0 || set_new(ib, "file", json_string(r->file)) < 0 ||
		    set_new(ib, "cpulist", raw_json(r->cpulist)) < 0 || set_new(ib, "cpus", raw_json(r->cpus)) < 0 ||
		    set_new(ib, "banned", list_json(r->banned)) < 0 ||
		    (r->pending && set_new(ib, "pending", list_json(r->pending)) < 0))
			return cc_err_set(err, EINVAL, W ".irqbalance: cannot be serialised (value not UTF-8?)"), NULL;
	}
	return cc_steal_ptr(o);
nomem:
	return cc_err_sys(err, ENOMEM, W), NULL;
}

int cc_irq_state_store(struct cc_ledger *l, const struct cc_irq_state *st, struct cc_err *err)
{
	json_t *o;

	if (cc_irq_state_empty(st)) {
		/* Nothing recorded: no section, so an idle node's ledger is empty. */
		return cc_ledger_section_put(l, CC_IRQ_SECTION, NULL, err);
	}
	o = cc_irq_state_json(st, err);
	if (!o)
		return -1;
	return cc_ledger_section_put(l, CC_IRQ_SECTION, o, err);
}
