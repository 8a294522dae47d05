/* corecarve: the ledger's state directory and the operations on it
 * (ledger_int.h says which file does what). */
#define _GNU_SOURCE
#include "ledger_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "fileio.h"

#define TMP_PREFIX CC_LEDGER_FILE ".tmp."
#define FILE_PATH_MAX (PATH_MAX + 32)

static void file_path(const struct cc_ledger *l, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", l->dir, name);
}
/* ---- files ------------------------------------------------------------ */

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

static int load(struct cc_ledger *l, bool index_only, struct cc_err *err)
{
	_cleanup_free_ char *buf = NULL;
	char path[FILE_PATH_MAX];
	size_t len = 0;

	file_path(l, CC_LEDGER_FILE, path, sizeof(path));
	if (cc_state_ledger_read(l->dirfd, l->dir, &buf, &len, err) < 0)
		return -1;
	if (!buf)
		return 0;
	if (ledger_parse(l, path, buf, len, index_only, err) < 0)
		return -1;
	/* What is on disk is these bytes: commit compares its serialisation
	 * with them, rather than with a serialisation made here (a third of
	 * the ledger's cost per decision at 683 carves).  A file another
	 * build formatted differently compares unequal and is rewritten once.
	 * An index-only ledger writes the lines it keeps back from them. */
	l->snapshot = cc_steal_ptr(buf);
	return 0;
}

/* Write temp, fsync, rename over the ledger, fsync the directory: at every
 * instant ledger.json is the old file or the new one, complete.  Returns 0,
 * -1 when the old file is still in place, 1 when the new one is in place
 * but the directory fsync failed (err set either way).  The temp file's
 * name starts with TMP_PREFIX: remove_stale_temps finds what a killed
 * writer left. */
static int replace_file(struct cc_ledger *l, const char *text, struct cc_err *err)
{
	const struct cc_replace o = {
		.mode = 0600,
		.sync = CC_SYNC_DIR,
		.shown_dir = l->dir,
		.fault = l->fault,
		.fault_step = "before-ledger-rename",
		.fail_point = "ledger",
		.fail_nth = ++l->commits,
	};

	return cc_replace_at(l->dirfd, CC_LEDGER_FILE, text, strlen(text), &o, err);
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

static struct cc_ledger *open_locked(const char *dir, bool index_only, const struct cc_ledger_lock *lock,
				     struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *l = ledger_new(dir, err);

	if (!l)
		return NULL;
	l->dirfd = cc_state_dir_open(l->dir, true, NULL, err);
	if (l->dirfd < 0)
		return NULL;
	if (ledger_lock(l, true, lock, err) < 0 || remove_stale_temps(l, err) < 0 || load(l, index_only, err) < 0)
		return NULL;
	return cc_steal_ptr(l);
}

int cc_ledger_set_aside(const char *dir, const struct cc_ledger_lock *lock, char *saved, size_t len, struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *l = ledger_new(dir, err);
	struct cc_err why = CC_ERR_INIT;
	char name[64];

	if (!l)
		return -1;
	if ((l->dirfd = cc_state_dir_open(l->dir, false, NULL, err)) < 0 || ledger_lock(l, true, lock, err) < 0)
		return -1;
	/* Under the lock no hook is between its read and its commit. */
	if (load(l, false, &why) == 0)
		return cc_err_set(err, EEXIST, "%s/" CC_LEDGER_FILE ": the ledger reads fine (%d carve%s); nothing to set aside",
				  l->dir, l->ncarves, l->ncarves == 1 ? "" : "s");
	snprintf(name, sizeof(name), CC_LEDGER_FILE ".damaged.%lld", (long long)time(NULL));
	if (renameat(l->dirfd, CC_LEDGER_FILE, l->dirfd, name) < 0)
		return cc_err_sys(err, errno, "%s/" CC_LEDGER_FILE ": rename to %s", l->dir, name);
	if (fsync(l->dirfd) < 0)
		return cc_err_sys(err, errno, "state directory %s: fsync", l->dir);
	snprintf(saved, len, "%s/%s", l->dir, name);
	return 0;
}

/* A failure sticks: whatever the caller does with its error, the ledger
 * refuses to commit afterwards (a load fails only on a damaged file). */
int cc_ledger_load_all(struct cc_ledger *l, struct cc_err *err)
{
	if (ledger_parse_lines(l, &l->lazy_err) == 0)
		return 0;
	if (err)
		*err = l->lazy_err;
	return -1;
}

static struct cc_ledger *read_locked(const char *dir, const struct cc_ledger_lock *lock, struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *l = ledger_new(dir, err);
	bool missing = false;

	if (!l)
		return NULL;
	l->readonly = true;
	l->dirfd = cc_state_dir_open(l->dir, false, &missing, err);
	if (missing)
		return cc_steal_ptr(l);
	if (l->dirfd < 0)
		return NULL;
	if (ledger_lock(l, false, lock, err) < 0 || load(l, false, err) < 0)
		return NULL;
	ledger_unlock(l);
	close(l->dirfd);
	l->dirfd = -1;
	return cc_steal_ptr(l);
}

struct cc_ledger *cc_ledger_open_as(const char *dir, enum cc_ledger_mode mode, const struct cc_ledger_lock *lock,
				    struct cc_err *err)
{
	switch (mode) {
	case CC_LEDGER_WRITE:
		return open_locked(dir, false, lock, err);
	case CC_LEDGER_WRITE_INDEX:
		return open_locked(dir, true, lock, err);
	case CC_LEDGER_READ:
		return read_locked(dir, lock, err);
	}
	return cc_err_set(err, EINVAL, "ledger: unknown open mode %d", (int)mode), NULL;
}

struct cc_ledger *cc_ledger_open(const char *dir, struct cc_err *err)
{
	return open_locked(dir, false, NULL, err);
}

struct cc_ledger *cc_ledger_open_index(const char *dir, struct cc_err *err)
{
	return open_locked(dir, true, NULL, err);
}

struct cc_ledger *cc_ledger_read(const char *dir, struct cc_err *err)
{
	return read_locked(dir, NULL, err);
}

int cc_ledger_export_redacted(const char *dir, char **text, size_t *len, struct cc_err *err)
{
	_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(dir, err);
	struct ledger_layout at = { 0 };

	*text = NULL;
	*len = 0;
	if (!l)
		return -1;
	if (!l->snapshot)
		return 0;
	for (int i = 0; i < l->ncarves; i++)
		if (l->carves[i]->token[0])
			memset(l->carves[i]->token, '0', strlen(l->carves[i]->token));
	*text = ledger_serialize(l, &at, err);
	free(at.recs);
	if (!*text)
		return -1;
	*len = strlen(*text);
	return 0;
}

int cc_ledger_commit(struct cc_ledger *l, struct cc_err *err)
{
	_cleanup_free_ char *text = NULL;
	struct ledger_layout at = { 0 };
	int r;

	if (l->readonly || l->dirfd < 0 || l->lockfd < 0)
		return cc_err_set(err, EPERM, "%s/" CC_LEDGER_FILE ": opened read-only, cannot commit", l->dir);
	if (l->lazy_err.code) {
		if (err)
			*err = l->lazy_err;
		return -1;
	}
	/* Modules edit sections and changes in place: compare with the disk
	 * rather than trust `dirty` alone. */
	if (!l->dirty && !l->snapshot && l->ncarves == 0 && json_object_size(l->sections) == 0 &&
	    !ledger_recs_count(l))
		return 0;
	text = ledger_serialize(l, &at, err);
	if (!text)
		return -1;
	if (!l->dirty && l->snapshot && strcmp(text, l->snapshot) == 0) {
		free(at.recs);
		return 0;
	}
	r = replace_file(l, text, err);
	if (r < 0) {
		free(at.recs);
		return -1;
	}
	/* Renamed: the file is the new one even when the directory fsync
	 * failed.  An index-only ledger's unparsed lines are in it too, after
	 * the new header and before the lines it added. */
	free(l->snapshot);
	l->snapshot = cc_steal_ptr(text);
	ledger_index_written(l, &at);
	ledger_recs_written(l, at.recs, at.recs_lineno);
	free(at.recs);
	l->dirty = false;
	return r > 0 ? -1 : 0;
}

void cc_ledger_close(struct cc_ledger *l)
{
	if (!l)
		return;
	ledger_unlock(l);
	if (l->dirfd >= 0)
		close(l->dirfd);
	for (int i = 0; i < l->ncarves; i++)
		ledger_carve_free(l->carves[i]);
	free(l->carves);
	if (l->sections)
		json_decref(l->sections);
	ledger_index_free(l->index);
	ledger_recs_free(l);
	free(l->snapshot);
	free(l);
}

void cc_ledger_closep(struct cc_ledger **l)
{
	cc_ledger_close(*l);
}

/* Index-only: the position of `id` among the carves left unparsed, -1. */
static int unparsed_at(const struct cc_ledger *l, const char *id)
{
	size_t i;
	json_t *e;

	if (!l->index || !id)
		return -1;
	json_array_foreach(l->index->entries, i, e)
		if (!strcmp(json_string_value(json_array_get(e, 0)), id) && !(l->index->gone && l->index->gone[i]))
			return (int)i;
	return -1;
}

/* Index-only: the carve of the file at position i when it was read alone. */
static struct cc_carve *loaded_at(const struct cc_ledger *l, int i)
{
	return i >= 0 && l->index->loaded ? l->index->loaded[i] : NULL;
}

bool ledger_gone_at(const struct cc_ledger *l, size_t i)
{
	return l->index && l->index->gone && l->index->gone[i];
}

hwloc_bitmap_t cc_ledger_held(const struct cc_ledger *l, const char *except, bool steered_only)
{
	const struct cc_carve *out = NULL;
	hwloc_bitmap_t all;
	int at = unparsed_at(l, except);

	/* The index has unions only: it leaves out a carve it has read alone
	 * (carves are disjoint), none it has not. */
	if (at >= 0 && !(out = loaded_at(l, at))) {
		errno = EINVAL;
		return NULL;
	}
	all = !l->index ? hwloc_bitmap_alloc() : hwloc_bitmap_dup(steered_only ? l->index->steered : l->index->taken);
	if (!all)
		return NULL;
	if (out) {
		hwloc_bitmap_andnot(all, all, out->cpus);
		hwloc_bitmap_andnot(all, all, out->parked);
	}
	for (int i = 0; i < l->ncarves; i++) {
		const struct cc_carve *c = l->carves[i];

		if ((steered_only && !c->steer_irqs) || (except && !strcmp(c->id, except)))
			continue;
		if ((c->cpus && hwloc_bitmap_or(all, all, c->cpus) < 0) ||
		    (c->parked && hwloc_bitmap_or(all, all, c->parked) < 0)) {
			hwloc_bitmap_free(all);
			return NULL;
		}
	}
	return all;
}

hwloc_bitmap_t cc_ledger_taken(const struct cc_ledger *l)
{
	return cc_ledger_held(l, NULL, false);
}

int cc_ledger_refs(const struct cc_ledger *l, const char *except, const char ***ids, const char ***cgroups,
		   int *n)
{
	size_t max = (size_t)l->ncarves + (l->index ? json_array_size(l->index->entries) : 0) + 1, i;
	_cleanup_free_ const char **id = calloc(max, sizeof(*id));
	_cleanup_free_ const char **cg = calloc(max, sizeof(*cg));
	json_t *e;
	int k = 0, at = unparsed_at(l, except);

	if (at >= 0 && !loaded_at(l, at)) {
		errno = EINVAL;
		return -1;
	}
	if (!id || !cg) {
		errno = ENOMEM;
		return -1;
	}
	if (l->index)
		json_array_foreach(l->index->entries, i, e) {
			if (ledger_gone_at(l, i) || (at >= 0 && (int)i == at))
				continue;
			id[k] = json_string_value(json_array_get(e, 0));
			cg[k++] = json_string_value(json_array_get(e, 2));
		}
	for (int j = 0; j < l->ncarves; j++)
		if (!except || strcmp(l->carves[j]->id, except) != 0) {
			id[k] = l->carves[j]->id;
			cg[k++] = l->carves[j]->cgroup;
		}
	if (ids)
		*ids = cc_steal_ptr(id);
	if (cgroups)
		*cgroups = cc_steal_ptr(cg);
	*n = k;
	return 0;
}

struct cc_carve *cc_ledger_find(struct cc_ledger *l, const char *id)
{
	int at = unparsed_at(l, id);

	if (loaded_at(l, at))
		return loaded_at(l, at);
	/* One that was in the file: every carve is needed now. */
	if (at >= 0 && cc_ledger_load_all(l, NULL) < 0)
		return NULL;
	for (int i = 0; i < l->ncarves; i++)
		if (strcmp(l->carves[i]->id, id) == 0)
			return l->carves[i];
	return NULL;
}

int cc_ledger_lookup(struct cc_ledger *l, const char *id, struct cc_carve **out, struct cc_err *err)
{
	int at = unparsed_at(l, id);

	*out = NULL;
	if (at >= 0 && !loaded_at(l, at) && cc_ledger_load_all(l, err) < 0)
		return -1;
	*out = cc_ledger_find(l, id);
	return *out != NULL;
}

int cc_ledger_get(struct cc_ledger *l, const char *id, struct cc_carve **out, struct cc_err *err)
{
	int at = unparsed_at(l, id);

	*out = NULL;
	if (l->lazy_err.code) {
		if (err)
			*err = l->lazy_err;
		return -1;
	}
	if (at < 0) {
		*out = cc_ledger_find(l, id);
		return *out != NULL;
	}
	if (ledger_index_get(l, (size_t)at, &l->lazy_err) < 0) {
		if (err)
			*err = l->lazy_err;
		return -1;
	}
	*out = loaded_at(l, at);
	return 1;
}

/* A carve made from a grant is gone (`had` is ledger_grant_of's answer
 * for it, `g` the grant): the grant holds its cores again, whichever path
 * took the carve out.  Out of memory, the commit refuses, and the ledger
 * on disk keeps the carve. */
static int give_back(struct cc_ledger *l, int had, struct cc_carve *g, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	int rc = 0;

	if (had == 0)
		return 0;
	if (had < 0)
		cc_err_sys(&e, ENOMEM, "giving the cores back to their grant");
	else if (cc_ledger_add(l, g, &e) < 0)
		cc_err_prefix(&e, "giving the cores back to grant %s", g->id);
	/* Held by another already (no path makes that: the cores were this
	 * carve's): the grant stays gone, the cores with their holder. */
	if (e.code == EEXIST || e.code == EBUSY)
		e = (struct cc_err)CC_ERR_INIT;
	if (e.code) {
		if (!l->lazy_err.code)
			l->lazy_err = e;
		if (err)
			*err = e;
		rc = -1;
	}
	if (had > 0)
		cc_carve_fini(g);
	return rc;
}

int cc_ledger_drop(struct cc_ledger *l, const char *id, struct cc_err *err)
{
	struct cc_carve *c, g;
	int at = unparsed_at(l, id), r, had;

	if (at < 0)
		return cc_ledger_remove(l, id);
	r = cc_ledger_get(l, id, &c, err);
	if (r <= 0)
		return r;
	had = ledger_grant_of(c, &g);
	/* Carves are disjoint: what it held is no other's. */
	hwloc_bitmap_andnot(l->index->taken, l->index->taken, c->cpus);
	hwloc_bitmap_andnot(l->index->taken, l->index->taken, c->parked);
	hwloc_bitmap_andnot(l->index->steered, l->index->steered, c->cpus);
	hwloc_bitmap_andnot(l->index->steered, l->index->steered, c->parked);
	l->index->gone[at] = true;
	l->dirty = true;
	return give_back(l, had, &g, err) < 0 ? -1 : 1;
}

static hwloc_bitmap_t dup_set(hwloc_const_bitmap_t b)
{
	return b ? hwloc_bitmap_dup(b) : hwloc_bitmap_alloc();
}

int cc_ledger_add(struct cc_ledger *l, const struct cc_carve *c, struct cc_err *err)
{
	char what[300];
	struct cc_carve *n, **grown, *dup;

	/* Checked before it is quoted in messages. */
	if (ledger_check_text(c->id, sizeof(c->id), false, "carve", "id", err) < 0)
		return -1;
	snprintf(what, sizeof(what), "carve \"%.256s\"", c->id);
	if (l->readonly)
		return cc_err_set(err, EPERM, "%s: ledger opened read-only", what);
	if (ledger_validate_carve(c, false, what, err) < 0)
		return -1;
	if (l->lazy_err.code) {
		*err = l->lazy_err;
		return -1;
	}
	if (cc_ledger_lookup(l, c->id, &dup, err) != 0)
		return dup ? cc_err_set(err, EEXIST, "%s: already in the ledger", what) : -1;
	if (l->index && ((c->cpus && hwloc_bitmap_intersects(l->index->taken, c->cpus)) ||
			 (c->parked && hwloc_bitmap_intersects(l->index->taken, c->parked)))) {
		/* Refused either way; the carves name the one it meets. */
		if (cc_ledger_load_all(l, err) < 0)
			return -1;
	}
	if (ledger_check_disjoint(l->carves, l->ncarves, c, what, err) < 0)
		return -1;
	grown = realloc(l->carves, (size_t)(l->ncarves + 1) * sizeof(*grown));
	if (!grown)
		return cc_err_sys(err, ENOMEM, "%s", what);
	l->carves = grown;
	if (!(n = malloc(sizeof(*n))))
		return cc_err_sys(err, ENOMEM, "%s", what);
	*n = *c;
	n->cpus = dup_set(c->cpus);
	n->parked = dup_set(c->parked);
	n->mems = dup_set(c->mems);
	n->changes = c->changes ? json_incref(c->changes) : json_array();
	if (!n->cpus || !n->parked || !n->mems || !n->changes) {
		ledger_carve_free(n);
		return cc_err_sys(err, ENOMEM, "%s", what);
	}
	if (!n->created)
		n->created = (long long)time(NULL);
	l->carves[l->ncarves++] = n;
	l->dirty = true;
	return 0;
}

int cc_ledger_remove(struct cc_ledger *l, const char *id)
{
	struct cc_carve *c, g;
	int i, had;

	/* One of the file read alone: cut out of the index. */
	if (loaded_at(l, unparsed_at(l, id)))
		return cc_ledger_drop(l, id, NULL) == 1;
	c = cc_ledger_find(l, id);

	if (!c)
		return 0;
	for (i = 0; i < l->ncarves && l->carves[i] != c; i++)
		;
	if (i == l->ncarves)
		return 0;
	had = ledger_grant_of(c, &g);
	ledger_carve_free(c);
	memmove(&l->carves[i], &l->carves[i + 1], (size_t)(l->ncarves - i - 1) * sizeof(*l->carves));
	l->ncarves--;
	l->dirty = true;
	give_back(l, had, &g, NULL);
	return 1;
}

json_t *cc_ledger_section(struct cc_ledger *l, const char *name, bool create)
{
	json_t *s;

	/* Kept as lines: a view of them. */
	if (ledger_is_rec_section(name))
		return ledger_recs_view(l, name);
	s = json_object_get(l->sections, name);

	if (s || !create)
		return s;
	s = json_object();
	if (!s || json_object_set_new(l->sections, name, s) < 0)
		return NULL;
	l->dirty = true;
	return s;
}

int cc_ledger_set_section(struct cc_ledger *l, const char *name, json_t *value, struct cc_err *err)
{
	if (ledger_is_rec_section(name)) {
		int r = ledger_recs_from_section(l, name, value, err);

		if (value)
			json_decref(value);
		return r;
	}
	if (!value) {
		if (json_object_get(l->sections, name)) {
			json_object_del(l->sections, name);
			l->dirty = true;
		}
		return 0;
	}
	if (json_object_set_new(l->sections, name, value) < 0)
		return cc_err_sys(err, ENOMEM, "ledger: sections.%s", name);
	l->dirty = true;
	return 0;
}

json_t *cc_ledger_section_get(const struct cc_ledger *l, const char *name)
{
	return ledger_is_rec_section(name) ? NULL : json_object_get(l->sections, name);
}

int cc_ledger_section_put(struct cc_ledger *l, const char *name, json_t *value, struct cc_err *err)
{
	if (ledger_is_rec_section(name)) {
		if (value)
			json_decref(value);
		return cc_err_set(err, EINVAL, "ledger: sections.%s: a record section, put one record at a time", name);
	}
	if (!value) {
		if (json_object_get(l->sections, name))
			json_object_del(l->sections, name);
		return 0;
	}
	if (json_object_set_new(l->sections, name, value) < 0)
		return cc_err_sys(err, ENOMEM, "ledger: sections.%s", name);
	return 0;
}

/* ---- what other modules read of it ---- */

struct cc_ledger *cc_ledger_empty(struct cc_err *err)
{
	struct cc_ledger *l = calloc(1, sizeof(*l));

	if (!l || !(l->sections = json_object())) {
		free(l);
		return cc_err_sys(err, ENOMEM, "ledger"), NULL;
	}
	l->lockfd = l->dirfd = -1;
	l->readonly = true;
	return l;
}

const char *cc_ledger_dir(const struct cc_ledger *l)
{
	return l->dir;
}

bool cc_ledger_readonly(const struct cc_ledger *l)
{
	return l->readonly;
}

const char *cc_ledger_fault(const struct cc_ledger *l)
{
	return l->fault;
}

void cc_ledger_set_fault(struct cc_ledger *l, const char *step)
{
	l->fault = step;
}

int cc_ledger_failed(const struct cc_ledger *l, struct cc_err *err)
{
	if (!l->lazy_err.code)
		return 0;
	if (err)
		*err = l->lazy_err;
	return -1;
}

int cc_ledger_ncarves(const struct cc_ledger *l)
{
	return l->ncarves;
}

const struct cc_carve *const *cc_ledger_carves(const struct cc_ledger *l)
{
	return (const struct cc_carve *const *)l->carves;
}

const struct cc_carve *cc_ledger_carve_at(const struct cc_ledger *l, int i)
{
	return i >= 0 && i < l->ncarves ? l->carves[i] : NULL;
}

int cc_ledger_mark_releasing(struct cc_ledger *l, const char *id)
{
	struct cc_carve *c = cc_ledger_find(l, id);

	if (!c)
		return 0;
	if (!c->releasing) {
		c->releasing = true;
		l->dirty = true;
	}
	return 1;
}
