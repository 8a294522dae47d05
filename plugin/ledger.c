#define _GNU_SOURCE
#include "ledger.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "fault.h"

#define LOCK_FILE "lock"
#define TMP_PREFIX CC_LEDGER_FILE ".tmp."
#define FILE_PATH_MAX (PATH_MAX + 32)

static const char *const carve_kinds[] = { "container", "vm", "exec", NULL };
static const char *const carve_modes[] = { "remote-partition", "local-partition",
					   "cpuset-only", "affinity", NULL };
static const char *const carve_fields[] = { "id", "kind", "cgroup", "class", "core_class",
					    "mode", "cpus", "parked", "mems", "exclusive",
					    "steer_irqs", "created", "changes", NULL };
static const char *const top_fields[] = { "version", "carves", "sections", NULL };

static bool in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

static const char *json_type_name(const json_t *j)
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

static void file_path(const struct cc_ledger *l, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", l->dir, name);
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
static int check_text(const char *s, size_t cap, bool parsed, const char *what, const char *field,
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
static int check_cgroup(const char *cg, const char *what, struct cc_err *err)
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
static int validate_carve(const struct cc_carve *c, bool parsed, const char *what, struct cc_err *err)
{
	if (check_text(c->id, sizeof(c->id), parsed, what, "id", err) < 0 ||
	    check_text(c->kind, sizeof(c->kind), parsed, what, "kind", err) < 0 ||
	    check_text(c->cgroup, sizeof(c->cgroup), parsed, what, "cgroup", err) < 0 ||
	    check_text(c->class_name, sizeof(c->class_name), parsed, what, "class", err) < 0 ||
	    check_text(c->core_class, sizeof(c->core_class), parsed, what, "core_class", err) < 0 ||
	    check_text(c->mode, sizeof(c->mode), parsed, what, "mode", err) < 0)
		return -1;
	if (!c->id[0])
		return cc_err_set(err, EINVAL, "%s.id: empty", what);
	if (!in_list(carve_kinds, c->kind))
		return cc_err_set(err, EINVAL, "%s.kind: expected container, vm or exec, got \"%s\"", what, c->kind);
	if (!in_list(carve_modes, c->mode))
		return cc_err_set(err, EINVAL,
				  "%s.mode: expected remote-partition, local-partition, cpuset-only or affinity, got \"%s\"",
				  what, c->mode);
	if (check_cgroup(c->cgroup, what, err) < 0)
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
					  json_type_name(c->changes));
		json_array_foreach(c->changes, i, v)
			if (!json_is_object(v))
				return cc_err_set(err, EINVAL, "%s.changes[%zu]: expected an object, got %s", what,
						  i, json_type_name(v));
	}
	return 0;
}

/* Both sets of a carve together: what it takes from the node. */
static int carve_union(const struct cc_carve *c, hwloc_bitmap_t out)
{
	hwloc_bitmap_zero(out);
	if (c->cpus && hwloc_bitmap_or(out, out, c->cpus) < 0)
		return -1;
	if (c->parked && hwloc_bitmap_or(out, out, c->parked) < 0)
		return -1;
	return 0;
}

/* Refuse `c` if its CPUs meet those of carves[0..n).  Linear in n; the
 * loader, which would call it once per carve, keeps a running union
 * instead and comes here only to name the carve an overlap is with. */
static int check_disjoint(const struct cc_carve *carves, int n, const struct cc_carve *c,
			  const char *what, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t mine = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t theirs = NULL;
	_cleanup_free_ char *s = NULL;
	int i;

	if (!mine || carve_union(c, mine) < 0)
		return cc_err_sys(err, ENOMEM, "%s", what);
	/* Set against set: no union is built per carve. */
	for (i = 0; i < n; i++)
		if ((carves[i].cpus && hwloc_bitmap_intersects(mine, carves[i].cpus)) ||
		    (carves[i].parked && hwloc_bitmap_intersects(mine, carves[i].parked)))
			break;
	if (i == n)
		return 0;
	theirs = hwloc_bitmap_alloc();
	if (!theirs || carve_union(&carves[i], theirs) < 0)
		return cc_err_sys(err, ENOMEM, "%s", what);
	hwloc_bitmap_and(theirs, theirs, mine);
	s = cc_cpulist_format(theirs);
	return cc_err_set(err, EBUSY, "%s: CPUs %s already belong to carve \"%s\"", what, s ? s : "?",
			  carves[i].id);
}

/* The loader's duplicate check keeps the ids seen in a jansson object
 * (its hash table): comparing every pair was ~7 M instructions per load
 * of a 683-carve ledger.  Values are carve indexes, for the message. */
static int id_seen(json_t *ids, const struct cc_carve *carves, int i, struct cc_err *err)
{
	json_t *k = json_object_get(ids, carves[i].id);

	if (k)
		return (int)json_integer_value(k);
	if (json_object_set_new(ids, carves[i].id, json_integer(i)) < 0)
		return cc_err_sys(err, ENOMEM, "carves"), -2;
	return -1;
}

/* What is checked between carves[i] and the carves before it, in the order
 * the loader reports it: a duplicate id, then an overlap.  `taken` is the
 * union of the carves before it and grows by this one. */
static int admit_carve(struct cc_ledger *l, int i, json_t *ids, hwloc_bitmap_t taken,
		       const char *what, struct cc_err *err)
{
	const struct cc_carve *c = &l->carves[i];
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
		if (check_disjoint(l->carves, i, c, what, err) == 0)
			cc_err_set(err, EBUSY, "%s: CPUs already belong to another carve", what);
		return -1;
	}
	if (hwloc_bitmap_or(taken, taken, c->cpus) < 0 || hwloc_bitmap_or(taken, taken, c->parked) < 0)
		return cc_err_sys(err, ENOMEM, "%s", what);
	return 0;
}

/* ---- JSON <-> ledger ------------------------------------------------- */

static int get_field(json_t *obj, const char *what, const char *key, json_t **out,
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

	if (get_field(obj, what, key, &v, err) < 0)
		return -1;
	if (!json_is_string(v))
		return cc_err_set(err, EINVAL, "%s.%s: expected a string, got %s", what, key, json_type_name(v));
	if (json_string_length(v) >= len)
		return cc_err_set(err, ENAMETOOLONG, "%s.%s: longer than %zu bytes", what, key, len - 1);
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int get_cpulist(json_t *obj, const char *what, const char *key, hwloc_bitmap_t out,
		       struct cc_err *err)
{
	char field[96];
	json_t *v;

	if (get_field(obj, what, key, &v, err) < 0)
		return -1;
	if (!json_is_string(v))
		return cc_err_set(err, EINVAL, "%s.%s: expected a cpu-list string, got %s", what, key,
				  json_type_name(v));
	snprintf(field, sizeof(field), "%s.%s", what, key);
	return cc_cpulist_parse(json_string_value(v), out, field, err);
}

static int get_bool(json_t *obj, const char *what, const char *key, bool *out, struct cc_err *err)
{
	json_t *v;

	if (get_field(obj, what, key, &v, err) < 0)
		return -1;
	if (!json_is_boolean(v))
		return cc_err_set(err, EINVAL, "%s.%s: expected a boolean, got %s", what, key, json_type_name(v));
	*out = json_is_true(v);
	return 0;
}

static int check_keys(json_t *obj, const char *const *known, const char *what, struct cc_err *err)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v)
		if (!in_list(known, key))
			return cc_err_set(err, EINVAL, "%s: unknown field \"%.64s\"", what, key);
	return 0;
}

static int parse_carve(json_t *obj, const char *what, struct cc_carve *c, struct cc_err *err)
{
	json_t *v;

	if (!json_is_object(obj))
		return cc_err_set(err, EINVAL, "%s: expected an object, got %s", what, json_type_name(obj));
	if (check_keys(obj, carve_fields, what, err) < 0)
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
	if (get_field(obj, what, "created", &v, err) < 0)
		return -1;
	if (!json_is_integer(v))
		return cc_err_set(err, EINVAL, "%s.created: expected an integer, got %s", what, json_type_name(v));
	c->created = json_integer_value(v);
	if (get_field(obj, what, "changes", &v, err) < 0)
		return -1;
	json_decref(c->changes);
	c->changes = json_incref(v);
	return validate_carve(c, true, what, err);
}

/* Fill `l` (empty) from the parsed document.  Errors name the field. */
static int parse_ledger(struct cc_ledger *l, json_t *doc, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_alloc();
	_cleanup_json_ json_t *ids = json_object();
	json_t *version, *carves, *sections, *v;
	const char *key;
	size_t i;

	if (!json_is_object(doc))
		return cc_err_set(err, EINVAL, "expected an object at the top level, got %s", json_type_name(doc));
	/* The version first: a newer ledger may carry fields this one does not know. */
	version = json_object_get(doc, "version");
	if (!version)
		return cc_err_set(err, EINVAL, "missing field \"version\"");
	if (!json_is_integer(version))
		return cc_err_set(err, EINVAL, "version: expected an integer, got %s", json_type_name(version));
	if (json_integer_value(version) != CC_LEDGER_VERSION)
		return cc_err_set(err, EPROTO, "version: unsupported ledger version %" JSON_INTEGER_FORMAT
				  " (this corecarve reads version %d)", json_integer_value(version), CC_LEDGER_VERSION);
	if (check_keys(doc, top_fields, "ledger", err) < 0)
		return -1;
	if (get_field(doc, "ledger", "carves", &carves, err) < 0 ||
	    get_field(doc, "ledger", "sections", &sections, err) < 0)
		return -1;
	if (!json_is_array(carves))
		return cc_err_set(err, EINVAL, "carves: expected an array, got %s", json_type_name(carves));
	if (!json_is_object(sections))
		return cc_err_set(err, EINVAL, "sections: expected an object, got %s", json_type_name(sections));
	json_object_foreach(sections, key, v)
		if (!json_is_object(v))
			return cc_err_set(err, EINVAL, "sections.%.64s: expected an object, got %s", key, json_type_name(v));

	l->carves = calloc(json_array_size(carves) ? json_array_size(carves) : 1, sizeof(*l->carves));
	if (!l->carves || !taken || !ids)
		return cc_err_sys(err, ENOMEM, "carves");
	json_array_foreach(carves, i, v) {
		struct cc_carve *c = &l->carves[i];
		char what[48];

		snprintf(what, sizeof(what), "carves[%zu]", i);
		cc_carve_init(c);
		l->ncarves = (int)i + 1;
		if (parse_carve(v, what, c, err) < 0 || admit_carve(l, (int)i, ids, taken, what, err) < 0)
			return -1;
	}
	/* The document is freed on return; its sections object lives on in
	 * the ledger, no copy needed. */
	json_decref(l->sections);
	l->sections = json_incref(sections);
	if (!l->sections)
		return cc_err_sys(err, ENOMEM, "sections");
	return 0;
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

static json_t *carve_to_json(const struct cc_carve *c)
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
	    set_new(o, "created", json_integer(c->created)) < 0 ||
	    set_new(o, "changes", c->changes ? json_incref(c->changes) : json_array()) < 0)
		return NULL;
	return cc_steal_ptr(o);
}

/* The file's bytes for the ledger's current state. */
static char *serialize(const struct cc_ledger *l, struct cc_err *err)
{
	_cleanup_json_ json_t *doc = json_object();
	_cleanup_free_ char *text = NULL;
	json_t *carves = json_array();
	char *out;

	if (!doc || set_new(doc, "version", json_integer(CC_LEDGER_VERSION)) < 0 ||
	    set_new(doc, "carves", carves) < 0 || set_new(doc, "sections", json_incref(l->sections)) < 0)
		return cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": serialise", l->dir), NULL;
	for (int i = 0; i < l->ncarves; i++)
		if (json_array_append_new(carves, carve_to_json(&l->carves[i])) < 0)
			return cc_err_set(err, EINVAL, "%s/" CC_LEDGER_FILE ": carve \"%s\" cannot be serialised",
					  l->dir, l->carves[i].id), NULL;
	text = json_dumps(doc, JSON_INDENT(2));
	if (!text)
		return cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": serialise", l->dir), NULL;
	if (asprintf(&out, "%s\n", text) < 0)
		return cc_err_sys(err, ENOMEM, "%s/" CC_LEDGER_FILE ": serialise", l->dir), NULL;
	return out;
}

/* ---- files ------------------------------------------------------------ */

/* Open the state directory without following a symlink in its last
 * component, and refuse one another user could write into: whoever can
 * write there can hand out CPUs.  `missing` (read only) reports ENOENT. */
static int open_state_dir(const char *dir, bool create, bool *missing, struct cc_err *err)
{
	bool created = false;
	struct stat st;
	int fd;

	if (create) {
		if (mkdir(dir, 0700) == 0)
			created = true;
		else if (errno != EEXIST)
			return cc_err_sys(err, errno, "state directory %s: cannot create it", dir);
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT && missing) {
			*missing = true;
			return -1;
		}
		if ((e == ELOOP || e == ENOTDIR) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
			return cc_err_set(err, ELOOP, "state directory %s is a symbolic link; refusing it", dir);
		if (e == ENOTDIR)
			return cc_err_set(err, ENOTDIR, "state directory %s is not a directory", dir);
		return cc_err_sys(err, e, "state directory %s", dir);
	}
	/* mkdir's mode went through the umask. */
	if (created && fchmod(fd, 0700) < 0) {
		cc_err_sys(err, errno, "state directory %s: chmod 0700", dir);
		close(fd);
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		cc_err_sys(err, errno, "state directory %s: stat", dir);
		close(fd);
		return -1;
	}
	/* A reader trusts root's directory too: `corecarve status` as another
	 * user still refuses one anybody else could have written. */
	if (st.st_uid != geteuid() && (create || st.st_uid != 0)) {
		cc_err_set(err, EPERM, "state directory %s is owned by uid %u, not %u; refusing it", dir,
			   (unsigned)st.st_uid, (unsigned)geteuid());
		close(fd);
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		cc_err_set(err, EPERM, "state directory %s is group- or world-writable (mode %04o); refusing it",
			   dir, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	/* A writer keeps it root-only even when someone made it 0755 first:
	 * the ledger is the node's map of who owns which CPU. */
	if (create && (st.st_mode & 077) && fchmod(fd, 0700) < 0) {
		cc_err_sys(err, errno, "state directory %s: chmod 0700", dir);
		close(fd);
		return -1;
	}
	return fd;
}

static int lock_file(struct cc_ledger *l, bool exclusive, struct cc_err *err)
{
	char path[FILE_PATH_MAX];
	struct stat st;
	int flags = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;

	file_path(l, LOCK_FILE, path, sizeof(path));
	/* A reader creates nothing; with no lock file no writer has run yet,
	 * and a later one can only replace ledger.json atomically. */
	flags |= exclusive ? O_RDWR | O_CREAT : O_RDONLY;
	l->lockfd = openat(l->dirfd, LOCK_FILE, flags, 0600);
	if (l->lockfd < 0) {
		if (!exclusive && errno == ENOENT)
			return 0;
		return cc_err_sys(err, errno, "%s", path);
	}
	if (fstat(l->lockfd, &st) < 0)
		return cc_err_sys(err, errno, "%s: stat", path);
	if (!S_ISREG(st.st_mode))
		return cc_err_set(err, EINVAL, "%s: not a regular file", path);
	/* O_CREAT's mode went through the umask. */
	if (exclusive && (st.st_mode & 07777) != 0600 && fchmod(l->lockfd, 0600) < 0)
		return cc_err_sys(err, errno, "%s: chmod 0600", path);
	while (flock(l->lockfd, exclusive ? LOCK_EX : LOCK_SH) < 0)
		if (errno != EINTR)
			return cc_err_sys(err, errno, "%s: flock", path);
	return 0;
}

static void unlock_file(struct cc_ledger *l)
{
	if (l->lockfd < 0)
		return;
	/* Explicitly: a fork that did not exec would otherwise keep it. */
	flock(l->lockfd, LOCK_UN);
	close(l->lockfd);
	l->lockfd = -1;
}

/* Under the exclusive lock no writer is running: any temp file is what a
 * killed process left between create and rename. */
static int remove_stale_temps(struct cc_ledger *l, struct cc_err *err)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int fd = openat(l->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return cc_err_sys(err, errno, "state directory %s", l->dir);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return cc_err_sys(err, errno, "state directory %s", l->dir);
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) != 0)
			continue;
		if (unlinkat(l->dirfd, de->d_name, 0) < 0 && errno != ENOENT)
			return cc_err_sys(err, errno, "%s/%s: remove stale temp file", l->dir, de->d_name);
	}
	if (errno)
		return cc_err_sys(err, errno, "state directory %s: readdir", l->dir);
	return 0;
}

static int load(struct cc_ledger *l, struct cc_err *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *doc = NULL;
	char path[FILE_PATH_MAX];
	json_error_t je;
	struct stat st;
	size_t len = 0, cap;

	file_path(l, CC_LEDGER_FILE, path, sizeof(path));
	fd = openat(l->dirfd, CC_LEDGER_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ELOOP)
			return cc_err_set(err, ELOOP, "%s: is a symbolic link; refusing it", path);
		return cc_err_sys(err, errno, "%s", path);
	}
	if (fstat(fd, &st) < 0)
		return cc_err_sys(err, errno, "%s: stat", path);
	if (!S_ISREG(st.st_mode))
		return cc_err_set(err, EINVAL, "%s: not a regular file", path);
	if (st.st_size > (off_t)CC_LEDGER_MAX)
		return cc_err_set(err, EFBIG, "%s: %lld bytes, larger than the %u-byte limit", path,
				  (long long)st.st_size, CC_LEDGER_MAX);
	cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf)
		return cc_err_sys(err, ENOMEM, "%s", path);
	for (;;) {
		ssize_t n;

		/* Read past the size stat saw, in case the file grew. */
		if (len == cap) {
			char *nb;

			if (cap > CC_LEDGER_MAX)
				return cc_err_set(err, EFBIG, "%s: larger than the %u-byte limit", path, CC_LEDGER_MAX);
			nb = realloc(buf, cap * 2);
			if (!nb)
				return cc_err_sys(err, ENOMEM, "%s", path);
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return cc_err_sys(err, errno, "%s: read", path);
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > CC_LEDGER_MAX)
		return cc_err_set(err, EFBIG, "%s: larger than the %u-byte limit", path, CC_LEDGER_MAX);
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!doc)
		return cc_err_set(err, EINVAL, "%s:%d:%d: %s", path, je.line, je.column, je.text);
	if (parse_ledger(l, doc, err) < 0)
		return cc_err_prefix(err, "%s", path);
	/* What is on disk is these bytes: commit compares its serialisation
	 * with them, rather than with a serialisation made here (a third of
	 * the ledger's cost per decision at 683 carves).  A file another
	 * build formatted differently compares unequal and is rewritten once.
	 * jansson refuses a NUL byte in strings and outside them, so the
	 * bytes are one C string. */
	buf[len] = '\0';
	l->snapshot = cc_steal_ptr(buf);
	return 0;
}

static int write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Write temp, fsync, rename over the ledger, fsync the directory: at every
 * instant ledger.json is the old file or the new one, complete.  Returns 0,
 * -1 when the old file is still in place, 1 when the new one is in place
 * but the directory fsync failed (err set either way). */
static int replace_file(struct cc_ledger *l, const char *text, struct cc_err *err)
{
	char tmp[64], path[FILE_PATH_MAX];
	int fd;

	file_path(l, CC_LEDGER_FILE, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%ld", (long)getpid());
	fd = openat(l->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* Left by an earlier process with our pid; we hold the lock. */
		unlinkat(l->dirfd, tmp, 0);
		fd = openat(l->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return cc_err_sys(err, errno, "%s/%s", l->dir, tmp);
	if (fchmod(fd, 0600) < 0 || write_all(fd, text, strlen(text)) < 0 || fsync(fd) < 0) {
		cc_err_sys(err, errno, "%s/%s: write", l->dir, tmp);
		close(fd);
		unlinkat(l->dirfd, tmp, 0);
		return -1;
	}
	if (close(fd) < 0) {
		cc_err_sys(err, errno, "%s/%s: close", l->dir, tmp);
		unlinkat(l->dirfd, tmp, 0);
		return -1;
	}
	cc_fault(l->fault, "before-ledger-rename");
	if (renameat(l->dirfd, tmp, l->dirfd, CC_LEDGER_FILE) < 0) {
		cc_err_sys(err, errno, "%s: rename from %s", path, tmp);
		unlinkat(l->dirfd, tmp, 0);
		return -1;
	}
	if (fsync(l->dirfd) < 0) {
		cc_err_sys(err, errno, "%s: written, but fsync of %s failed", path, l->dir);
		return 1;
	}
	return 0;
}

/* ---- the ledger -------------------------------------------------------- */

static struct cc_ledger *ledger_new(const char *dir, struct cc_err *err)
{
	struct cc_ledger *l;
	size_t n;

	if (!dir)
		dir = CC_LEDGER_DIR;
	n = strlen(dir);
	/* "dir/" would follow a symlink despite O_NOFOLLOW. */
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 0)
		return cc_err_set(err, EINVAL, "state directory: empty path"), NULL;
	if (n >= sizeof(l->dir))
		return cc_err_set(err, ENAMETOOLONG, "state directory %.64s...: path too long", dir), NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return cc_err_sys(err, ENOMEM, "ledger"), NULL;
	memcpy(l->dir, dir, n);
	l->dir[n] = '\0';
	l->lockfd = -1;
	l->dirfd = -1;
	l->sections = json_object();
	if (!l->sections) {
		free(l);
		return cc_err_sys(err, ENOMEM, "ledger"), NULL;
	}
	return l;
}

struct cc_ledger *cc_ledger_open(const char *dir, struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *l = ledger_new(dir, err);

	if (!l)
		return NULL;
	l->dirfd = open_state_dir(l->dir, true, NULL, err);
	if (l->dirfd < 0)
		return NULL;
	if (lock_file(l, true, err) < 0 || remove_stale_temps(l, err) < 0 || load(l, err) < 0)
		return NULL;
	return cc_steal_ptr(l);
}

struct cc_ledger *cc_ledger_read(const char *dir, struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *l = ledger_new(dir, err);
	bool missing = false;

	if (!l)
		return NULL;
	l->readonly = true;
	l->dirfd = open_state_dir(l->dir, false, &missing, err);
	if (missing)
		return cc_steal_ptr(l);
	if (l->dirfd < 0)
		return NULL;
	if (lock_file(l, false, err) < 0 || load(l, err) < 0)
		return NULL;
	unlock_file(l);
	close(l->dirfd);
	l->dirfd = -1;
	return cc_steal_ptr(l);
}

int cc_ledger_commit(struct cc_ledger *l, struct cc_err *err)
{
	_cleanup_free_ char *text = NULL;
	int r;

	if (l->readonly || l->dirfd < 0 || l->lockfd < 0)
		return cc_err_set(err, EPERM, "%s/" CC_LEDGER_FILE ": opened read-only, cannot commit", l->dir);
	/* Modules edit sections and changes in place: compare with the disk
	 * rather than trust `dirty` alone. */
	if (!l->dirty && !l->snapshot && l->ncarves == 0 && json_object_size(l->sections) == 0)
		return 0;
	text = serialize(l, err);
	if (!text)
		return -1;
	if (!l->dirty && l->snapshot && strcmp(text, l->snapshot) == 0)
		return 0;
	r = replace_file(l, text, err);
	if (r < 0)
		return -1;
	/* Renamed: the file is the new one even when the directory fsync failed. */
	free(l->snapshot);
	l->snapshot = cc_steal_ptr(text);
	l->dirty = false;
	return r > 0 ? -1 : 0;
}

void cc_ledger_close(struct cc_ledger *l)
{
	if (!l)
		return;
	unlock_file(l);
	if (l->dirfd >= 0)
		close(l->dirfd);
	for (int i = 0; i < l->ncarves; i++)
		cc_carve_fini(&l->carves[i]);
	free(l->carves);
	if (l->sections)
		json_decref(l->sections);
	free(l->snapshot);
	free(l);
}

void cc_ledger_closep(struct cc_ledger **l)
{
	cc_ledger_close(*l);
}

hwloc_bitmap_t cc_ledger_taken(const struct cc_ledger *l)
{
	hwloc_bitmap_t all = hwloc_bitmap_alloc();

	if (!all)
		return NULL;
	for (int i = 0; i < l->ncarves; i++)
		if ((l->carves[i].cpus && hwloc_bitmap_or(all, all, l->carves[i].cpus) < 0) ||
		    (l->carves[i].parked && hwloc_bitmap_or(all, all, l->carves[i].parked) < 0)) {
			hwloc_bitmap_free(all);
			return NULL;
		}
	return all;
}

struct cc_carve *cc_ledger_find(struct cc_ledger *l, const char *id)
{
	for (int i = 0; i < l->ncarves; i++)
		if (strcmp(l->carves[i].id, id) == 0)
			return &l->carves[i];
	return NULL;
}

static hwloc_bitmap_t dup_set(hwloc_const_bitmap_t b)
{
	return b ? hwloc_bitmap_dup(b) : hwloc_bitmap_alloc();
}

int cc_ledger_add(struct cc_ledger *l, const struct cc_carve *c, struct cc_err *err)
{
	char what[300];
	struct cc_carve n, *grown;

	/* Checked before it is quoted in messages. */
	if (check_text(c->id, sizeof(c->id), false, "carve", "id", err) < 0)
		return -1;
	snprintf(what, sizeof(what), "carve \"%.256s\"", c->id);
	if (l->readonly)
		return cc_err_set(err, EPERM, "%s: ledger opened read-only", what);
	if (validate_carve(c, false, what, err) < 0)
		return -1;
	if (cc_ledger_find(l, c->id))
		return cc_err_set(err, EEXIST, "%s: already in the ledger", what);
	if (check_disjoint(l->carves, l->ncarves, c, what, err) < 0)
		return -1;
	grown = realloc(l->carves, (size_t)(l->ncarves + 1) * sizeof(*grown));
	if (!grown)
		return cc_err_sys(err, ENOMEM, "%s", what);
	l->carves = grown;
	n = *c;
	n.cpus = dup_set(c->cpus);
	n.parked = dup_set(c->parked);
	n.mems = dup_set(c->mems);
	n.changes = c->changes ? json_incref(c->changes) : json_array();
	if (!n.cpus || !n.parked || !n.mems || !n.changes) {
		cc_carve_fini(&n);
		return cc_err_sys(err, ENOMEM, "%s", what);
	}
	if (!n.created)
		n.created = (long long)time(NULL);
	l->carves[l->ncarves++] = n;
	l->dirty = true;
	return 0;
}

int cc_ledger_remove(struct cc_ledger *l, const char *id)
{
	struct cc_carve *c = cc_ledger_find(l, id);
	int i;

	if (!c)
		return 0;
	i = (int)(c - l->carves);
	cc_carve_fini(c);
	memmove(&l->carves[i], &l->carves[i + 1], (size_t)(l->ncarves - i - 1) * sizeof(*c));
	l->ncarves--;
	l->dirty = true;
	return 1;
}

json_t *cc_ledger_section(struct cc_ledger *l, const char *name, bool create)
{
	json_t *s = json_object_get(l->sections, name);

	if (s || !create)
		return s;
	s = json_object();
	if (!s || json_object_set_new(l->sections, name, s) < 0)
		return NULL;
	l->dirty = true;
	return s;
}

/* An exec carve's cgroup that no process uses any more: its `corecarve
 * exec` was killed before it could release.  Unreadable counts as in use:
 * CPUs are never handed out on a guess. */
static bool exec_cgroup_unused(const struct cc_root *root, const char *dir)
{
	struct cc_err e = CC_ERR_INIT;
	char path[2 * PATH_MAX + 16];
	_cleanup_free_ char *ev = NULL;

	if (cc_path(path, sizeof(path), &e, "%s/cgroup.events", dir) < 0)
		return false;
	ev = cc_root_read(root, path, 4096, &e);
	return ev && (!strncmp(ev, "populated 0", 11) || strstr(ev, "\npopulated 0"));
}

int cc_ledger_gc(struct cc_ledger *l, const struct cc_root *root, const char *cgroup_mount,
		 int (*release)(struct cc_carve *c, void *arg), void *arg, struct cc_err *err)
{
	int removed = 0;

	if (!cgroup_mount)
		cgroup_mount = "/sys/fs/cgroup";
	for (int i = 0; i < l->ncarves;) {
		struct cc_carve *c = &l->carves[i];
		char path[2 * PATH_MAX];
		const char *cg = c->cgroup;
		struct cc_err e = CC_ERR_INIT;
		bool exec = !strcmp(c->kind, "exec");
		int fd;

		if ((strcmp(c->kind, "container") != 0 && !exec) || !cg[0]) {
			i++;
			continue;
		}
		while (*cg == '/')
			cg++;
		if (cc_path(path, sizeof(path), err, "%s/%s", cgroup_mount, cg) < 0)
			return -1;
		fd = cc_root_openat(root, path, O_PATH | O_DIRECTORY, 0, &e);
		if (fd >= 0) {
			close(fd);
			if (!exec || !exec_cgroup_unused(root, path)) {
				i++;
				continue;
			}
		} else if (e.code != ENOENT && e.code != ENOTDIR) {
			/* Only "it is not there" ends a carve: EACCES or EIO on a
			 * live container's cgroup must not hand its CPUs to
			 * someone else. */
			cc_err_set(err, e.code, "%s", e.msg);
			return cc_err_prefix(err, "gc of carve \"%s\"", c->id);
		}
		if (release && release(c, arg) < 0)
			return cc_err_set(err, ECANCELED, "gc of carve \"%s\": releasing it failed; kept in the ledger",
					  c->id);
		cc_ledger_remove(l, c->id);
		removed++;
	}
	return removed;
}
