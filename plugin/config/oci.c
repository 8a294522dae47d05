#define _GNU_SOURCE
#include "oci.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"

static int copy_str(char *dst, size_t len, const char *src, const char *what,
		    struct cc_err *err)
{
	size_t n = strlen(src);

	if (n >= len)
		return cc_err_set(err, ENAMETOOLONG, "%s: longer than %zu bytes", what, len - 1);
	memcpy(dst, src, n + 1);
	return 0;
}

/* A string that holds a NUL byte (JSON's \u0000, which the parser lets
 * through) would be read as its first part: refused where it is read. */
static bool has_nul(const json_t *v)
{
	return strlen(json_string_value(v)) != json_string_length(v);
}

/* The annotation keys corecarve reads a value of: its own, and the
 * runtimes' io.kubernetes.* keys (container name, type, pod).  A NUL in
 * any other value is the container's business, not a refusal. */
static bool key_read(const char *k)
{
	return !strncmp(k, "corecarve.io/", 13) || !strncmp(k, "io.kubernetes.", 14);
}

/* Annotations must be an object whose values are all strings (OCI spec);
 * absent or null is none (runc and crun write null for a spec without). */
static json_t *check_annotations(json_t *a, const char *what, struct cc_err *err)
{
	const char *k;
	json_t *v;

	if (!a || json_is_null(a))
		return json_object();
	if (!json_is_object(a))
		return cc_err_set(err, EINVAL, "%s: expected an object", what), NULL;
	json_object_foreach(a, k, v) {
		if (!json_is_string(v))
			return cc_err_set(err, EINVAL, "%s.%s: expected a string", what, k), NULL;
		if (key_read(k) && has_nul(v))
			return cc_err_set(err, EINVAL, "%s.%s: holds a NUL byte (\\u0000); remove it", what, k), NULL;
	}
	return json_incref(a);
}

/* A string field that is read: a string without a NUL byte. */
static int check_str(const json_t *v, const char *what, struct cc_err *err)
{
	if (!json_is_string(v))
		return cc_err_set(err, EINVAL, "%s: expected a string", what);
	if (has_nul(v))
		return cc_err_set(err, EINVAL, "%s: holds a NUL byte (\\u0000)", what);
	return 0;
}

/* The runtimes' own alphabet for a container id: runc's validateID
 * (libcontainer) takes letters, digits and "_+-." and nothing that is
 * not its own clean path; containerd's identifiers and moby's names start
 * with a letter or digit.  Ours is the intersection: a letter or digit,
 * then those five, at most CC_OCI_ID_MAX bytes.  Anything else (":" of the
 * ledger's "exec:<pid>" and "vm:<name>" ids, a space, a bidi control) is
 * not a container's id and must not alias a carve or spoof a log line. */
static bool id_safe(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > CC_OCI_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)id[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || !strchr("_+-.", c)))
			return false;
	}
	return true;
}

static json_t *load_json(const char *text, size_t len, const char *what,
			 struct cc_err *err)
{
	json_error_t je;
	/* JSON_ALLOW_NUL: a \u0000 in a value corecarve never reads (another
	 * tool's annotation) is no reason to refuse the container; the fields
	 * read are checked one by one (check_str, check_annotations). */
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);

	if (!j)
		return cc_err_set(err, EINVAL, "%s: invalid JSON at line %d column %d: %s",
				  what, je.line, je.column, je.text), NULL;
	if (!json_is_object(j)) {
		json_decref(j);
		return cc_err_set(err, EINVAL, "%s: expected a JSON object", what), NULL;
	}
	return j;
}

int cc_oci_state_parse(const char *text, size_t len, struct cc_oci_state *out,
		       struct cc_err *err)
{
	_cleanup_json_ json_t *j = NULL;
	json_t *v;

	memset(out, 0, sizeof(*out));
	if (len > CC_OCI_STATE_MAX)
		return cc_err_set(err, EFBIG, "OCI state: larger than %u bytes", CC_OCI_STATE_MAX);
	j = load_json(text, len, "OCI state", err);
	if (!j)
		return -1;
	v = json_object_get(j, "id");
	if (!v)
		return cc_err_set(err, EINVAL, "OCI state: id: missing");
	if (check_str(v, "OCI state: id", err) < 0)
		return -1;
	/* Checked before it is copied or quoted: the error names only its
	 * length, never the hostile text itself. */
	if (!id_safe(json_string_value(v)))
		return cc_err_set(err, EINVAL,
				  "OCI state: id: a %zu-byte id is not a valid container id (want 1-%d of A-Z a-z 0-9 _ + - ., "
				  "starting with a letter or digit, as runc and containerd name containers)",
				  strlen(json_string_value(v)), CC_OCI_ID_MAX);
	if (copy_str(out->id, sizeof(out->id), json_string_value(v), "OCI state: id", err) < 0)
		return -1;
	v = json_object_get(j, "status");
	if (v && check_str(v, "OCI state: status", err) < 0)
		return -1;
	if (v && copy_str(out->status, sizeof(out->status), json_string_value(v), "OCI state: status", err) < 0)
		return -1;
	v = json_object_get(j, "pid");
	if (v) {
		json_int_t pid;

		if (!json_is_integer(v))
			return cc_err_set(err, EINVAL, "OCI state: pid: expected an integer");
		pid = json_integer_value(v);
		if (pid < 0 || pid > 4194304)
			return cc_err_set(err, ERANGE, "OCI state: pid: %lld is out of range", (long long)pid);
		out->pid = (pid_t)pid;
	}
	v = json_object_get(j, "bundle");
	if (v && check_str(v, "OCI state: bundle", err) < 0)
		return -1;
	if (v && copy_str(out->bundle, sizeof(out->bundle), json_string_value(v), "OCI state: bundle", err) < 0)
		return -1;
	out->annotations = check_annotations(json_object_get(j, "annotations"), "OCI state: annotations", err);
	if (!out->annotations)
		return -1;
	return 0;
}

void cc_oci_state_fini(struct cc_oci_state *s)
{
	if (s->annotations)
		json_decref(s->annotations);
	s->annotations = NULL;
}

/* linux.resources.cpu.KEY into *out when present: an integer, and not
 * negative where `nonneg`. */
static int cpu_field(const json_t *cpu, const char *key, bool nonneg, long long *out, struct cc_err *err)
{
	const json_t *v = json_object_get(cpu, key);

	if (!v)
		return 0;
	if (!json_is_integer(v))
		return cc_err_set(err, EINVAL, "config.json: linux.resources.cpu.%s: expected an integer", key);
	if (nonneg && json_integer_value(v) < 0)
		return cc_err_set(err, ERANGE, "config.json: linux.resources.cpu.%s: must not be negative", key);
	*out = json_integer_value(v);
	return 0;
}

static int parse_config(const char *text, size_t len, struct cc_oci_config *out,
			struct cc_err *err);

/* On failure nothing is left to free (annotations are read first). */
int cc_oci_config_parse(const char *text, size_t len, struct cc_oci_config *out,
			struct cc_err *err)
{
	if (parse_config(text, len, out, err) < 0) {
		cc_oci_config_fini(out);
		return -1;
	}
	return 0;
}

static int parse_config(const char *text, size_t len, struct cc_oci_config *out,
			struct cc_err *err)
{
	_cleanup_json_ json_t *j = NULL;
	json_t *linux_, *v, *cpu;

	memset(out, 0, sizeof(*out));
	out->cpu_quota = -1;
	out->cpu_shares = -1;
	if (len > CC_OCI_CONFIG_MAX)
		return cc_err_set(err, EFBIG, "config.json: larger than %u bytes", CC_OCI_CONFIG_MAX);
	j = load_json(text, len, "config.json", err);
	if (!j)
		return -1;
	out->annotations = check_annotations(json_object_get(j, "annotations"), "config.json: annotations", err);
	if (!out->annotations)
		return -1;
	linux_ = json_object_get(j, "linux");
	if (!linux_)
		return 0;
	if (!json_is_object(linux_))
		return cc_err_set(err, EINVAL, "config.json: linux: expected an object");
	v = json_object_get(linux_, "cgroupsPath");
	if (v && check_str(v, "config.json: linux.cgroupsPath", err) < 0)
		return -1;
	if (v && copy_str(out->cgroups_path, sizeof(out->cgroups_path), json_string_value(v),
			  "config.json: linux.cgroupsPath", err) < 0)
		return -1;
	v = json_object_get(linux_, "resources");
	if (v && !json_is_object(v))
		return cc_err_set(err, EINVAL, "config.json: linux.resources: expected an object");
	cpu = v ? json_object_get(v, "cpu") : NULL;
	if (cpu && !json_is_object(cpu))
		return cc_err_set(err, EINVAL, "config.json: linux.resources.cpu: expected an object");
	if (cpu) {
		/* quota may be negative (none, as runc writes -1); shares is
		 * the kubelet's request (milliCPU * 1024 / 1000): what the
		 * scheduler charged the pod for. */
		if (cpu_field(cpu, "quota", false, &out->cpu_quota, err) < 0 ||
		    cpu_field(cpu, "period", true, &out->cpu_period, err) < 0 ||
		    cpu_field(cpu, "shares", true, &out->cpu_shares, err) < 0)
			return -1;
	}
	return 0;
}

int cc_oci_config_load(const char *bundle, struct cc_oci_config *out,
		       struct cc_err *err)
{
	_cleanup_free_ char *buf = NULL, *name = NULL;
	_cleanup_close_ int dfd = -1;
	size_t len = 0;

	memset(out, 0, sizeof(*out));
	out->cpu_quota = -1;
	out->cpu_shares = -1;
	if (!bundle || !*bundle)
		return cc_err_set(err, EINVAL, "OCI state: bundle: missing");
	dfd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return cc_err_sys(err, errno, "bundle %s", bundle);
	if (asprintf(&name, "%s/config.json", bundle) < 0) {
		name = NULL;
		return cc_err_sys(err, ENOMEM, "config.json");
	}
	/* The bundle is the runtime's; config.json inside it must be a plain
	 * file, not a link to somewhere else, nor a FIFO planted there (the
	 * open does not block on one; it is refused as not regular). */
	if (cc_read_at(dfd, "config.json", name, CC_OCI_CONFIG_MAX, CC_READ_REGULAR | CC_READ_NOFOLLOW, &buf, &len,
		       err) < 0)
		return -1;
	if (cc_oci_config_parse(buf, len, out, err) < 0)
		return cc_err_prefix(err, "%s", bundle);
	return 0;
}

void cc_oci_config_fini(struct cc_oci_config *c)
{
	if (c->annotations)
		json_decref(c->annotations);
	c->annotations = NULL;
}

int cc_proc_cgroup_parse(const char *text, char *out, size_t outlen,
			 struct cc_err *err)
{
	const char *line = text;

	/* Each line is "hierarchy-ID:controller-list:cgroup-path"; cgroup v2
	 * is the single line with ID 0 and an empty controller list. */
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (len >= 3 && strncmp(line, "0::", 3) == 0) {
			size_t plen = len - 3;

			if (plen == 0 || plen >= outlen)
				return cc_err_set(err, EINVAL, "/proc/<pid>/cgroup: cgroup v2 path %s", plen ? "too long" : "empty");
			memcpy(out, line + 3, plen);
			out[plen] = '\0';
			/* A "(deleted)" suffix means the cgroup is gone. */
			if (strstr(out, " (deleted)"))
				return cc_err_set(err, ENOENT, "/proc/<pid>/cgroup: cgroup %s was deleted", out);
			if (!cc_cgroup_path_safe(out))
				return cc_err_set(err, EINVAL, "/proc/<pid>/cgroup: unsafe cgroup path \"%.64s\"", out);
			return 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	return cc_err_set(err, ENOENT, "/proc/<pid>/cgroup: no cgroup v2 (0::) entry");
}

int cc_container_cgroup(const struct cc_root *root, pid_t pid, const char *hint,
			char *out, size_t outlen, struct cc_err *err)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	char *leaf;

	if (pid <= 0)
		return cc_err_set(err, EINVAL, "OCI state: pid: missing (needed to find the container's cgroup)");
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	text = cc_root_read(root, path, 65536, err);
	if (!text)
		return -1;
	if (cc_proc_cgroup_parse(text, out, outlen, err) < 0)
		return cc_err_prefix(err, "pid %d", (int)pid);
	if (!strcmp(out, "/"))
		return cc_err_set(err, EINVAL, "pid %d runs in the root cgroup: refusing to carve it", (int)pid);
	/* crun with a systemd subgroup (and runc with some drivers) puts the
	 * process in "<container cgroup>/container": carve the container's own
	 * cgroup, the subgroup inherits it. */
	leaf = strrchr(out, '/');
	if (leaf && leaf != out && !strcmp(leaf, "/container")) {
		size_t parent_len = (size_t)(leaf - out);
		bool hint_is_leaf = hint && *hint && !strcmp(hint, out);

		if (!hint_is_leaf)
			out[parent_len] = '\0';
	}
	return 0;
}
