/* corecarve: one carve of the ledger: the rules it must satisfy on its
 * own and against the carves before it, and its JSON object (one line of
 * ledger.json). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "ledger_int.h"

/* A grant (corecarve device-plugin's Allocate) holds whole cores for a pod
 * the kubelet admitted before its container exists: CPUs and nothing else
 * (no cgroup, nothing parked, mode "grant"), so that no other carve takes
 * them, and kept by gc, which knows no owner of it. */
const char *const ledger_carve_kinds[] = { "container", "vm", "exec", "grant", NULL };
static const char *const carve_modes[] = { "remote-partition", "local-partition",
					   "cpuset-only", "affinity", "grant", NULL };
static const char *const carve_fields[] = { "id", "kind", "cgroup", "class", "core_class",
					    "mode", "cpus", "parked", "mems", "exclusive",
					    "steer_irqs", "state", "created", "changes", "grant", "token", NULL };

bool ledger_in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

const char *ledger_json_type(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "an unknown value";
}

/* ---- carves ---------------------------------------------------------- */

void cc_carve_init(struct cc_carve *c)
{
	memset(c, 0, sizeof(*c));
	c->cpus = hwloc_bitmap_alloc();
	c->parked = hwloc_bitmap_alloc();
	c->mems = hwloc_bitmap_alloc();
	/* Modules append their changes to it while applying a carve. */
	c->changes = json_array();
}

void cc_carve_fini(struct cc_carve *c)
{
	if (!c)
		return;
	if (c->cpus)
		hwloc_bitmap_free(c->cpus);
	if (c->parked)
		hwloc_bitmap_free(c->parked);
	if (c->mems)
		hwloc_bitmap_free(c->mems);
	if (c->changes)
		json_decref(c->changes);
	c->cpus = c->parked = c->mems = NULL;
	c->changes = NULL;
}

/* `parsed`: the text came out of a JSON string jansson parsed, which is
 * valid UTF-8 without NUL already; probing it again costs an allocation
 * per field, six per carve on every load. */
int ledger_check_text(const char *s, size_t cap, bool parsed, const char *what, const char *field,
		      struct cc_err *err)
{
	size_t n = strnlen(s, cap);
	json_t *probe;

	if (n == cap)
		return cc_err_set(err, ENAMETOOLONG, "%s.%s: longer than %zu bytes", what, field, cap - 1);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return cc_err_set(err, EINVAL, "%s.%s: contains a control character", what, field);
	if (parsed)
		return 0;
	/* Only valid UTF-8 can be written as JSON and read back. */
	probe = json_string(s);
	if (!probe)
		return cc_err_set(err, EILSEQ, "%s.%s: not valid UTF-8", what, field);
	json_decref(probe);
	return 0;
}

static int check_set(hwloc_const_bitmap_t b, const char *what, const char *field,
		     struct cc_err *err)
{
	if (!b)
		return 0;
	if (hwloc_bitmap_weight(b) < 0 || hwloc_bitmap_last(b) >= CC_CPU_LIMIT)
		return cc_err_set(err, ERANGE, "%s.%s: set reaches beyond %d", what, field, CC_CPU_LIMIT - 1);
	return 0;
}

/* The cgroup is joined to the cgroup2 mount by gc; "." and ".." components
 * would name some other cgroup (the mount itself always exists). */
int ledger_check_cgroup(const char *cg, const char *what, struct cc_err *err)
{
	const char *p = cg;

	while (*p) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return cc_err_set(err, EINVAL, "%s.cgroup: \"%.200s\" has a \".\" or \"..\" component", what, cg);
		p += n;
	}
	return 0;
}

/* Everything a carve must satisfy on its own; `what` names it in errors.
 * `parsed`: its strings came from the ledger file (check_text). */
/* A grant is mode "grant" and nothing but CPUs; mode "grant" is a grant's. */
static int check_grant(const struct cc_carve *c, const char *what, struct cc_err *err)
{
	bool kind = !strcmp(c->kind, "grant"), mode = !strcmp(c->mode, "grant");

	if (kind != mode)
		return cc_err_set(err, EINVAL, "%s: kind \"%s\" with mode \"%s\": a grant, and only a grant, has mode grant",
				  what, c->kind, c->mode);
	if (kind && (c->cgroup[0] || (c->parked && !hwloc_bitmap_iszero(c->parked))))
		return cc_err_set(err, EINVAL, "%s: a grant has no cgroup and parks nothing", what);
	if (c->token[0] && strspn(c->token, "0123456789abcdef") != CC_GRANT_TOKEN_LEN)
		return cc_err_set(err, EINVAL, "%s.token: expected %d lowercase hex digits", what, CC_GRANT_TOKEN_LEN);
	if (kind && c->grant[0])
		return cc_err_set(err, EINVAL, "%s.grant: a grant is not carved from another", what);
	if (!c->grant[0])
		return 0;
	if (strcmp(c->kind, "container"))
		return cc_err_set(err, EINVAL, "%s.grant: only a container is carved from a grant, not a %s", what,
				  c->kind);
	if (strncmp(c->grant, "grant:", 6) || !c->token[0])
		return cc_err_set(err, EINVAL, "%s.grant: expected \"grant:<class>:<cpus>\" with its token", what);
	return 0;
}

int ledger_grant_of(const struct cc_carve *c, struct cc_carve *g)
{
	if (!c->grant[0])
		return 0;
	cc_carve_init(g);
	if (!g->cpus || !g->parked || !g->mems || !g->changes || ledger_carve_union(c, g->cpus) < 0) {
		cc_carve_fini(g);
		return -1;
	}
	snprintf(g->id, sizeof(g->id), "%s", c->grant);
	snprintf(g->token, sizeof(g->token), "%s", c->token);
	snprintf(g->kind, sizeof(g->kind), "grant");
	snprintf(g->mode, sizeof(g->mode), "grant");
	snprintf(g->class_name, sizeof(g->class_name), "%s", c->class_name);
	snprintf(g->core_class, sizeof(g->core_class), "%s", c->core_class);
	g->exclusive = true;
	return 1;
}

int ledger_validate_carve(const struct cc_carve *c, bool parsed, const char *what, struct cc_err *err)
{
	if (ledger_check_text(c->id, sizeof(c->id), parsed, what, "id", err) < 0 ||
	    ledger_check_text(c->kind, sizeof(c->kind), parsed, what, "kind", err) < 0 ||
	    ledger_check_text(c->cgroup, sizeof(c->cgroup), parsed, what, "cgroup", err) < 0 ||
	    ledger_check_text(c->class_name, sizeof(c->class_name), parsed, what, "class", err) < 0 ||
	    ledger_check_text(c->core_class, sizeof(c->core_class), parsed, what, "core_class", err) < 0 ||
	    ledger_check_text(c->mode, sizeof(c->mode), parsed, what, "mode", err) < 0 ||
	    ledger_check_text(c->grant, sizeof(c->grant), parsed, what, "grant", err) < 0 ||
	    ledger_check_text(c->token, sizeof(c->token), parsed, what, "token", err) < 0)
		return -1;
	if (!c->id[0])
		return cc_err_set(err, EINVAL, "%s.id: empty", what);
	if (!ledger_in_list(ledger_carve_kinds, c->kind))
		return cc_err_set(err, EINVAL, "%s.kind: expected container, vm, exec or grant, got \"%s\"", what,
				  c->kind);
	if (!ledger_in_list(carve_modes, c->mode))
		return cc_err_set(err, EINVAL,
				  "%s.mode: expected remote-partition, local-partition, cpuset-only, affinity or grant, got \"%s\"",
				  what, c->mode);
	if (check_grant(c, what, err) < 0)
		return -1;
	if (ledger_check_cgroup(c->cgroup, what, err) < 0)
		return -1;
	if (check_set(c->cpus, what, "cpus", err) < 0 || check_set(c->parked, what, "parked", err) < 0 ||
	    check_set(c->mems, what, "mems", err) < 0)
		return -1;
	if (c->created < 0)
		return cc_err_set(err, EINVAL, "%s.created: negative", what);
	if (c->cpus && c->parked && hwloc_bitmap_intersects(c->cpus, c->parked)) {
		_cleanup_bitmap_ hwloc_bitmap_t both = hwloc_bitmap_alloc();
		_cleanup_free_ char *s = NULL;

		if (both)
			hwloc_bitmap_and(both, c->cpus, c->parked);
		s = both ? cc_cpulist_format(both) : NULL;
		return cc_err_set(err, EINVAL, "%s: parked CPUs %s are also in its cpus", what, s ? s : "?");
	}
	if (c->changes) {
		size_t i;
		json_t *v;

		if (!json_is_array(c->changes))
			return cc_err_set(err, EINVAL, "%s.changes: expected an array, got %s", what,
					  ledger_json_type(c->changes));
		json_array_foreach(c->changes, i, v)
			if (!json_is_object(v))
				return cc_err_set(err, EINVAL, "%s.changes[%zu]: expected an object, got %s", what,
						  i, ledger_json_type(v));
	}
	return 0;
}

/* Both sets of a carve together: what it takes from the node. */
int ledger_carve_union(const struct cc_carve *c, hwloc_bitmap_t out)
{
	hwloc_bitmap_zero(out);
	if (c->cpus && hwloc_bitmap_or(out, out, c->cpus) < 0)
		return -1;
	if (c->parked && hwloc_bitmap_or(out, out, c->parked) < 0)
		return -1;
	return 0;
}

struct cc_carve *ledger_carve_new(void)
{
	struct cc_carve *c = calloc(1, sizeof(*c));

	if (c)
		cc_carve_init(c);
	return c;
}

void ledger_carve_free(struct cc_carve *c)
{
	if (!c)
		return;
	cc_carve_fini(c);
	free(c);
}

/* Refuse `c` if its CPUs meet those of carves[0..n).  Linear in n; the
 * loader, which would call it once per carve, keeps a running union
 * instead and comes here only to name the carve an overlap is with. */
int ledger_check_disjoint(struct cc_carve *const *carves, int n, const struct cc_carve *c,
			  const char *what, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t mine = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t theirs = NULL;
	_cleanup_free_ char *s = NULL;
	int i;

	if (!mine || ledger_carve_union(c, mine) < 0)
		return cc_err_sys(err, ENOMEM, "%s", what);
	/* Set against set: no union is built per carve. */
	for (i = 0; i < n; i++)
		if ((carves[i]->cpus && hwloc_bitmap_intersects(mine, carves[i]->cpus)) ||
		    (carves[i]->parked && hwloc_bitmap_intersects(mine, carves[i]->parked)))
			break;
	if (i == n)
		return 0;
	theirs = hwloc_bitmap_alloc();
	if (!theirs || ledger_carve_union(carves[i], theirs) < 0)
		return cc_err_sys(err, ENOMEM, "%s", what);
	hwloc_bitmap_and(theirs, theirs, mine);
	s = cc_cpulist_format(theirs);
	return cc_err_set(err, EBUSY, "%s: CPUs %s already belong to carve \"%s\"", what, s ? s : "?",
			  carves[i]->id);
}

/* The loader's duplicate check keeps the ids seen in a jansson object
 * (its hash table): comparing every pair was ~7 M instructions per load
 * of a 683-carve ledger.  Values are carve indexes, for the message. */
static int id_seen(json_t *ids, struct cc_carve *const *carves, int i, struct cc_err *err)
{
	json_t *k = json_object_get(ids, carves[i]->id);

	if (k)
		return (int)json_integer_value(k);
	if (json_object_set_new(ids, carves[i]->id, json_integer(i)) < 0)
		return cc_err_sys(err, ENOMEM, "carves"), -2;
	return -1;
}

/* What is checked between carves[i] and the carves before it, in the order
 * the loader reports it: a duplicate id, then an overlap.  `taken` is the
 * union of the carves before it and grows by this one. */
int ledger_admit_carve(struct cc_ledger *l, int i, json_t *ids, hwloc_bitmap_t taken,
		       const char *what, struct cc_err *err)
{
	const struct cc_carve *c = l->carves[i];
	int k = id_seen(ids, l->carves, i, err);

	if (k == -2)
		return -1;
	if (k >= 0)
		return cc_err_set(err, EINVAL, "%s.id: duplicate id \"%s\" (also carves[%d])", what, c->id, k);
	/* One test against the union of the carves before it: checking every
	 * pair made the load quadratic (115 M of 279 M instructions per
	 * decision at 683 carves).  On an overlap the pairwise search names
	 * the carve, as cc_ledger_add does. */
	if (hwloc_bitmap_intersects(c->cpus, taken) || hwloc_bitmap_intersects(c->parked, taken)) {
		if (ledger_check_disjoint(l->carves, i, c, what, err) == 0)
			cc_err_set(err, EBUSY, "%s: CPUs already belong to another carve", what);
		return -1;
	}
	if (hwloc_bitmap_or(taken, taken, c->cpus) < 0 || hwloc_bitmap_or(taken, taken, c->parked) < 0)
		return cc_err_sys(err, ENOMEM, "%s", what);
	return 0;
}

/* ---- JSON <-> ledger ------------------------------------------------- */

int ledger_get_field(json_t *obj, const char *what, const char *key, json_t **out,
		     struct cc_err *err)
{
	*out = json_object_get(obj, key);
	if (!*out)
		return cc_err_set(err, EINVAL, "%s: missing field \"%s\"", what, key);
	return 0;
}

static int get_string(json_t *obj, const char *what, const char *key, char *buf, size_t len,
		      struct cc_err *err)
{
	json_t *v;

	if (ledger_get_field(obj, what, key, &v, err) < 0)
		return -1;
	if (!json_is_string(v))
		return cc_err_set(err, EINVAL, "%s.%s: expected a string, got %s", what, key, ledger_json_type(v));
	if (json_string_length(v) >= len)
		return cc_err_set(err, ENAMETOOLONG, "%s.%s: longer than %zu bytes", what, key, len - 1);
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int get_optional(json_t *obj, const char *what, const char *key, char *buf, size_t len,
			struct cc_err *err)
{
	buf[0] = '\0';
	return json_object_get(obj, key) ? get_string(obj, what, key, buf, len, err) : 0;
}

static int get_cpulist(json_t *obj, const char *what, const char *key, hwloc_bitmap_t out,
		       struct cc_err *err)
{
	char field[96];
	json_t *v;

	if (ledger_get_field(obj, what, key, &v, err) < 0)
		return -1;
	if (!json_is_string(v))
		return cc_err_set(err, EINVAL, "%s.%s: expected a cpu-list string, got %s", what, key,
				  ledger_json_type(v));
	snprintf(field, sizeof(field), "%s.%s", what, key);
	return cc_cpulist_parse(json_string_value(v), out, field, err);
}

static int get_bool(json_t *obj, const char *what, const char *key, bool *out, struct cc_err *err)
{
	json_t *v;

	if (ledger_get_field(obj, what, key, &v, err) < 0)
		return -1;
	if (!json_is_boolean(v))
		return cc_err_set(err, EINVAL, "%s.%s: expected a boolean, got %s", what, key, ledger_json_type(v));
	*out = json_is_true(v);
	return 0;
}

int ledger_check_keys(json_t *obj, const char *const *known, const char *what, struct cc_err *err)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v)
		if (!ledger_in_list(known, key))
			return cc_err_set(err, EINVAL, "%s: unknown field \"%.64s\"", what, key);
	return 0;
}

int ledger_parse_carve(json_t *obj, const char *what, struct cc_carve *c, struct cc_err *err)
{
	json_t *v;

	if (!json_is_object(obj))
		return cc_err_set(err, EINVAL, "%s: expected an object, got %s", what, ledger_json_type(obj));
	if (ledger_check_keys(obj, carve_fields, what, err) < 0)
		return -1;
	if (!c->cpus || !c->parked || !c->mems || !c->changes)
		return cc_err_sys(err, ENOMEM, "%s", what);
	if (get_string(obj, what, "id", c->id, sizeof(c->id), err) < 0 ||
	    get_string(obj, what, "kind", c->kind, sizeof(c->kind), err) < 0 ||
	    get_string(obj, what, "cgroup", c->cgroup, sizeof(c->cgroup), err) < 0 ||
	    get_string(obj, what, "class", c->class_name, sizeof(c->class_name), err) < 0 ||
	    get_string(obj, what, "core_class", c->core_class, sizeof(c->core_class), err) < 0 ||
	    get_string(obj, what, "mode", c->mode, sizeof(c->mode), err) < 0 ||
	    get_cpulist(obj, what, "cpus", c->cpus, err) < 0 ||
	    get_cpulist(obj, what, "parked", c->parked, err) < 0 ||
	    get_cpulist(obj, what, "mems", c->mems, err) < 0 ||
	    get_bool(obj, what, "exclusive", &c->exclusive, err) < 0 ||
	    get_bool(obj, what, "steer_irqs", &c->steer_irqs, err) < 0)
		return -1;
	/* Absent for a live carve: the usual line stays as it was. */
	if ((v = json_object_get(obj, "state"))) {
		if (!json_is_string(v) || strcmp(json_string_value(v), "releasing"))
			return cc_err_set(err, EINVAL, "%s.state: expected \"releasing\", got %s", what,
					  json_is_string(v) ? json_string_value(v) : ledger_json_type(v));
		c->releasing = true;
	}
	/* Only a grant and a carve made from one have them. */
	if (get_optional(obj, what, "grant", c->grant, sizeof(c->grant), err) < 0 ||
	    get_optional(obj, what, "token", c->token, sizeof(c->token), err) < 0)
		return -1;
	if (ledger_get_field(obj, what, "created", &v, err) < 0)
		return -1;
	if (!json_is_integer(v))
		return cc_err_set(err, EINVAL, "%s.created: expected an integer, got %s", what, ledger_json_type(v));
	c->created = json_integer_value(v);
	if (ledger_get_field(obj, what, "changes", &v, err) < 0)
		return -1;
	json_decref(c->changes);
	c->changes = json_incref(v);
	return ledger_validate_carve(c, true, what, err);
}

static int set_new(json_t *obj, const char *key, json_t *v)
{
	return v ? json_object_set_new(obj, key, v) : -1;
}

static json_t *set_json(hwloc_const_bitmap_t b)
{
	_cleanup_free_ char *s = b ? cc_cpulist_format(b) : strdup("");

	return s ? json_string(s) : NULL;
}

json_t *ledger_carve_to_json(const struct cc_carve *c)
{
	_cleanup_json_ json_t *o = json_object();

	if (!o || set_new(o, "id", json_string(c->id)) < 0 || set_new(o, "kind", json_string(c->kind)) < 0 ||
	    set_new(o, "cgroup", json_string(c->cgroup)) < 0 ||
	    set_new(o, "class", json_string(c->class_name)) < 0 ||
	    set_new(o, "core_class", json_string(c->core_class)) < 0 ||
	    set_new(o, "mode", json_string(c->mode)) < 0 || set_new(o, "cpus", set_json(c->cpus)) < 0 ||
	    set_new(o, "parked", set_json(c->parked)) < 0 || set_new(o, "mems", set_json(c->mems)) < 0 ||
	    set_new(o, "exclusive", json_boolean(c->exclusive)) < 0 ||
	    set_new(o, "steer_irqs", json_boolean(c->steer_irqs)) < 0 ||
	    (c->releasing && set_new(o, "state", json_string("releasing")) < 0) ||
	    set_new(o, "created", json_integer(c->created)) < 0 ||
	    set_new(o, "changes", c->changes ? json_incref(c->changes) : json_array()) < 0 ||
	    (c->grant[0] && set_new(o, "grant", json_string(c->grant)) < 0) ||
	    (c->token[0] && set_new(o, "token", json_string(c->token)) < 0))
		return NULL;
	return cc_steal_ptr(o);
}

/* The file's bytes for the ledger's current state. */
