/* corecarve-hook: the registered hook's first stage.
 *
 * Where a runtime runs the hook for every container (containerd's base
 * spec, a bundle's config.json), almost every call is for a container
 * corecarve has nothing to do with: a pod's sandbox, a container without
 * the corecarve.io/placement annotation, the poststop of one that was
 * never carved.  `corecarve hook` answers those correctly, but it is a
 * 3 MB binary with shared libraries to map and relocate, and that start
 * is most of what it costs (docs/performance.md, "The hook's start").
 * This program is small and static.  It reads the state the runtime
 * passes, decides only whether there can be anything to do, and if there
 * can it executes `corecarve hook STAGE ...` (the `corecarve` beside it)
 * with the same arguments and the same state on stdin, so the decision,
 * its errors and its exit status are the full hook's.
 *
 * It exits 0 by itself only where the full hook would do nothing and
 * exit 0:
 *   createRuntime, prestart: the state parses as `corecarve hook` parses
 *     it, no annotation key (the state's, else config.json's, where the
 *     full hook looks) starts with corecarve.io/placement, none is
 *     corecarve.io/grant, and the ledger holds no live cpuset-only carve
 *     (whose CPUs the full hook takes from a newcomer);
 *   poststop: the state parses, and the ledger does not exist or does not
 *     hold the container's id as a JSON string anywhere (a carve, a
 *     releasing carve or a record's owner: all of them need the full
 *     hook).
 * Anything it does not understand (an option the hook's table,
 * hook_opts.c, does not mark as one it reads: all but --state, --policy
 * and --verbose, a state it cannot parse, a config.json or a ledger it
 * cannot read, an id that JSON would escape) goes to the full hook, which
 * reports it.  It writes nothing and logs nothing: the full hook's debug
 * line for a container without the annotation is not written when the
 * first stage answers.  It parses in a forked child under its own seccomp
 * filter (needs_full_confined says why a child), opens the state directory
 * and the ledger with the full hook's own code (ledger_dir.c), and
 * executes the full hook only once it and its directory are root's. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "grant.h"
#include "hook_opts.h"
#include "ledger.h"
#include "oci.h"
#include "paths.h"
#include "policy.h"
#include "sandbox.h"

struct first_args {
	const char *stage;
	const char *state_dir;
	bool simple; /* only options the first stage knows not to change the answer */
};

/* Simple: the stage first, then only options of the hook's table that
 * the first stage reads itself (hook_opts.c, CC_OPT_FIRST_STAGE). */
static void parse_args(int argc, char **argv, struct first_args *a)
{
	struct cc_err err = CC_ERR_INIT;

	a->simple = argc >= 2;
	if (a->simple) {
		a->stage = argv[1];
		a->simple = !strcmp(a->stage, "createRuntime") || !strcmp(a->stage, "prestart") ||
			    !strcmp(a->stage, "poststop");
	}
	for (int i = 2; i < argc && a->simple; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_hook, NULL, argc, argv, &i, &v, &err);
		const struct cc_opt *o = id > 0 ? cc_opts_find(cc_opts_hook, id) : NULL;

		if (!o || !(o->flags & CC_OPT_FIRST_STAGE))
			a->simple = false;
		else if (id == CC_HOOK_OPT_STATE)
			a->state_dir = v;
	}
}

/* Does any key start with the annotation's name (the plain key and every
 * "corecarve.io/placement.<container>"), or name a grant (grant.h)? */
static bool asks_placement(const json_t *annotations)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)annotations, k, v) {
		(void)v;
		if (!strncmp(k, CC_ANNOTATION_KEY, strlen(CC_ANNOTATION_KEY)) || !strcmp(k, CC_GRANT_KEY))
			return true;
	}
	return false;
}

/* createRuntime, prestart: where the full hook reads the request (the
 * state's annotations, else config.json's), is there one?  Unsure is yes. */
static bool create_needs_full(const struct cc_oci_state *st)
{
	struct cc_oci_config cfg = { 0 };
	struct cc_err err = CC_ERR_INIT;
	bool r;

	if (json_object_size(st->annotations) || !st->bundle[0])
		return asks_placement(st->annotations);
	if (cc_oci_config_load(st->bundle, &cfg, &err) < 0)
		return true;
	r = asks_placement(cfg.annotations);
	cc_oci_config_fini(&cfg);
	return r;
}

/* An id every JSON writer writes as it is: printable ASCII without a
 * quote or a backslash (a writer may escape any other byte). */
static bool id_plain(const char *id)
{
	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		if (*p == '"' || *p == '\\' || *p < 0x20 || *p >= 0x7f)
			return false;
	return true;
}

/* Walk a ledger the full hook's parser could read: a version-2 header
 * object on its own line, then JSON values (its lines), each shown to
 * `line` (NULL: none) until it says true.  -1: not such a ledger (finer
 * damage, an index that disagrees with its lines, is for the full hook to
 * find; a ledger that fails here goes to it whole); 1: `line` said true;
 * 0: neither. */
static int ledger_walk(const char *text, size_t len, bool (*line)(json_t *v))
{
	_cleanup_json_ json_t *h = NULL;
	json_error_t je;
	size_t off;

	h = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, &je);
	if (!json_is_object(h) || json_integer_value(json_object_get(h, "version")) != CC_LEDGER_VERSION)
		return -1;
	off = (size_t)je.position;
	if (off >= len || text[off] != '\n')
		return -1;
	for (off++; off < len; off += (size_t)je.position) {
		_cleanup_json_ json_t *v = NULL;

		off += strspn(text + off, " \t\r\n");
		if (off >= len)
			break;
		v = json_loadb(text + off, len - off, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, &je);
		if (!v)
			return -1;
		if (line && line(v))
			return 1;
	}
	return 0;
}

/* The ledger's text as the full hook opens it (ledger.h): 0 with *text
 * NULL when there is none (no state directory, no file), -1 when it
 * cannot be read: one it would refuse (a link, writable by others,
 * another owner's, oversized, with a NUL) is its to report.  The ledger is
 * replaced by rename, so this unlocked read sees one whole version. */
static int read_ledger(const char *state_dir, char **text, size_t *len)
{
	_cleanup_close_ int dfd = -1;
	struct cc_err err = CC_ERR_INIT;
	bool missing = false;

	*text = NULL;
	dfd = cc_state_dir_open(state_dir, false, &missing, &err);
	if (dfd < 0)
		return missing ? 0 : -1;
	return cc_state_ledger_read(dfd, state_dir, text, len, &err);
}

/* poststop: does the ledger name this container at all?  Its own
 * createRuntime finished before its poststop began; a damaged ledger is
 * the full hook's to report. */
static bool release_needs_full(const char *state_dir, const char *id)
{
	_cleanup_free_ char *text = NULL, *quoted = NULL;
	size_t len = 0;

	if (!id_plain(id) || asprintf(&quoted, "\"%s\"", id) < 0)
		return true;
	if (read_ledger(state_dir, &text, &len) < 0)
		return true;
	/* No state directory or no ledger: no carve anywhere. */
	if (!text)
		return false;
	return memmem(text, len, quoted, strlen(quoted)) != NULL || ledger_walk(text, len, NULL) < 0;
}

/* A carve line of a live exclusive carve in cpuset-only mode. */
static bool cpuset_only_carve(json_t *v)
{
	const char *mode = json_string_value(json_object_get(v, "mode"));

	return mode && !strcmp(mode, "cpuset-only") && json_is_true(json_object_get(v, "exclusive"));
}

/* createRuntime, prestart of a container that asks for nothing: while a
 * cpuset-only carve lives, no partition keeps the newcomer off its CPUs
 * and the full hook narrows it as the carve's peer (container.c,
 * beside_carves).  Does the ledger hold one?  Read as release_needs_full
 * reads it; unsure is yes. */
static bool peers_need_full(const char *state_dir)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;

	if (read_ledger(state_dir, &text, &len) < 0)
		return true;
	if (!text)
		return false;
	/* Unreadable (-1) or holding one (1). */
	return ledger_walk(text, len, cpuset_only_carve) != 0;
}

/* PATH (a file or a directory) is one only root (or we, when run by
 * another user for a test) can have changed: owned by root or us, writable
 * by nobody else.  0, or -1 with the reason on stderr. */
static int trusted(const char *path, bool dir, const struct stat *st)
{
	const char *what = dir ? "directory" : "full hook";

	if (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		return fprintf(stderr, "corecarve-hook: %s: the %s is not a %s; refusing to run it\n", path, what,
			       dir ? "directory" : "regular file (a link?)"), -1;
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return fprintf(stderr, "corecarve-hook: %s: the %s is owned by uid %u, not root; refusing to run it\n",
			       path, what, (unsigned)st->st_uid), -1;
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return fprintf(stderr,
			       "corecarve-hook: %s: the %s is group- or world-writable (mode %04o); refusing to run it "
			       "(chmod go-w)\n",
			       path, what, (unsigned)(st->st_mode & 07777)), -1;
	return 0;
}

/* The full binary runs as root with the container's state: before it is
 * executed, it and its directory (this program's, the only place looked
 * in) must be root's alone.  A directory nobody else may write keeps the
 * file checked here the file executed. */
static int check_full(const char *dir, const char *full)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return fprintf(stderr, "corecarve-hook: %s: %s\n", dir, strerror(errno)), -1;
	if (trusted(dir, true, &st) < 0)
		return -1;
	if (lstat(full, &st) < 0)
		return fprintf(stderr, "corecarve-hook: cannot run %s: %s (install corecarve beside corecarve-hook)\n",
			       full, strerror(errno)), -1;
	return trusted(full, false, &st);
}

/* The full hook: `corecarve` in this program's directory, with the state
 * it would have read on stdin (in a memfd: any size, and read like a file). */
static int exec_full(int argc, char **argv, const char *text, size_t len)
{
	char self[PATH_MAX], full[PATH_MAX + 16];
	char **args;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;
	int fd;

	if (n <= 0)
		return fprintf(stderr, "corecarve-hook: /proc/self/exe: %s\n", n < 0 ? strerror(errno) : "empty"), 2;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return fprintf(stderr, "corecarve-hook: /proc/self/exe: \"%s\" is not a path\n", self), 2;
	*slash = '\0';
	snprintf(full, sizeof(full), "%s/corecarve", self);
	if (check_full(self, full) < 0)
		return 2;

	if (text) {
		fd = memfd_create("oci-state", 0);
		if (fd < 0 || cc_write_all(fd, text, len) < 0 || lseek(fd, 0, SEEK_SET) < 0 ||
		    (fd != STDIN_FILENO && dup2(fd, STDIN_FILENO) < 0))
			return fprintf(stderr, "corecarve-hook: the state for %s: %s\n", full, strerror(errno)), 2;
		if (fd != STDIN_FILENO)
			close(fd);
	}
	/* `corecarve hook` followed by this program's own arguments. */
	args = calloc((size_t)argc + 2, sizeof(*args));
	if (!args)
		return fprintf(stderr, "corecarve-hook: %s\n", strerror(ENOMEM)), 2;
	args[0] = (char *)"corecarve";
	args[1] = (char *)"hook";
	for (int i = 1; i < argc; i++)
		args[i + 1] = argv[i];
	execv(full, args);
	fprintf(stderr, "corecarve-hook: cannot run %s: %s (install corecarve beside corecarve-hook)\n", full,
		strerror(errno));
	free(args);
	return 2;
}

/* The decision, in this process: does the full hook have to run? */
static bool needs_full(const struct first_args *a, const char *state_dir, const char *text, size_t len)
{
	struct cc_oci_state st = { 0 };
	struct cc_err err = CC_ERR_INIT;
	bool full;

	/* A state the full hook would refuse goes to it whole, for its own
	 * error. */
	if (cc_oci_state_parse(text, len, &st, &err) < 0)
		return true;
	if (strcmp(a->stage, "poststop"))
		full = create_needs_full(&st) || peers_need_full(state_dir);
	else
		full = release_needs_full(state_dir, st.id);
	cc_oci_state_fini(&st);
	return full;
}

#define ANSWER_ALONE 0
#define ANSWER_FULL 1

/* The decision in a confined child (cc_sandbox_first_stage: read files,
 * allocate, exit): what it parses, the state and every container's
 * config.json, is whoever writes pods'.  Its only way out is its exit
 * status, and a child that cannot confine itself, crashes or answers
 * anything else sends the container to the full hook, which decides for
 * itself.  The parent, unconfined because a seccomp filter would be
 * inherited by the full hook it executes, parses nothing. */
static bool needs_full_confined(const struct first_args *a, const char *state_dir, const char *text, size_t len)
{
	int status = 0;
	pid_t pid;

	/* A SIGCHLD ignored by whoever started us would reap the child
	 * before waitpid could read its answer. */
	signal(SIGCHLD, SIG_DFL);
	pid = fork();
	if (pid < 0)
		return true;
	if (pid == 0) {
		struct cc_err err = CC_ERR_INIT;

		/* jansson seeds its hash from /dev/urandom on first use: done
		 * now, so the filter needs no exception for it. */
		json_object_seed(0);
		if (cc_sandbox_first_stage(&err) < 0)
			_exit(ANSWER_FULL);
		_exit(needs_full(a, state_dir, text, len) ? ANSWER_FULL : ANSWER_ALONE);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return true;
	return !(WIFEXITED(status) && WEXITSTATUS(status) == ANSWER_ALONE);
}

int main(int argc, char **argv)
{
	_cleanup_free_ char *text = NULL;
	struct cc_err err = CC_ERR_INIT;
	struct first_args a = { 0 };
	const char *state_dir;
	size_t len = 0;

	parse_args(argc, argv, &a);
	if (!a.simple)
		return exec_full(argc, argv, NULL, 0);
	/* Read as the full hook reads it (reading is not parsing: this
	 * process stays unconfined to execute the full hook). */
	if (cc_read_fd(STDIN_FILENO, "OCI state on stdin", CC_OCI_STATE_MAX, 0, &text, &len, &err) < 0)
		return fprintf(stderr, "corecarve-hook: %s\n", err.msg), 2;
	state_dir = a.state_dir ? a.state_dir : getenv("CORECARVE_STATE_DIR");
	if (!state_dir || !*state_dir)
		state_dir = CC_LEDGER_DIR;
	return needs_full_confined(&a, state_dir, text, len) ? exec_full(argc, argv, text, len) : 0;
}
