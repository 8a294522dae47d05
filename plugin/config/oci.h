/* corecarve: what the OCI runtime hands a hook — the state on stdin, the
 * bundle's config.json — and the container's cgroup from /proc/<pid>/cgroup. */
#ifndef CC_OCI_H
#define CC_OCI_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "root.h"

#define CC_OCI_STATE_MAX (1u << 20)   /* bytes of state JSON on stdin */
#define CC_OCI_CONFIG_MAX (4u << 20)  /* bytes of config.json */
/* The longest container id taken: a file name (runc keeps /run/runc/<id>). */
#define CC_OCI_ID_MAX 255

struct cc_oci_state {
	char id[256];
	char status[32];
	pid_t pid;               /* 0 when absent (poststop) */
	char bundle[PATH_MAX];
	json_t *annotations;     /* object, never NULL after parse (may be empty) */
};

struct cc_oci_config {
	json_t *annotations;     /* object, never NULL */
	char cgroups_path[PATH_MAX]; /* linux.cgroupsPath, "" if absent */
	long long cpu_quota;     /* linux.resources.cpu.quota, -1 if absent */
	long long cpu_period;    /* linux.resources.cpu.period, 0 if absent */
	long long cpu_shares;    /* linux.resources.cpu.shares, -1 if absent */
};

/* Parse the OCI state JSON (strict: id required, in the runtimes' alphabet
 * [A-Za-z0-9][A-Za-z0-9_+.-]* and at most CC_OCI_ID_MAX bytes; pid a
 * non-negative integer; annotations an object of strings). */
int cc_oci_state_parse(const char *text, size_t len, struct cc_oci_state *out,
		       struct cc_err *err);
void cc_oci_state_fini(struct cc_oci_state *s);

/* Parse a config.json text; load it from a bundle directory. */
int cc_oci_config_parse(const char *text, size_t len, struct cc_oci_config *out,
			struct cc_err *err);
int cc_oci_config_load(const char *bundle, struct cc_oci_config *out,
		       struct cc_err *err);
void cc_oci_config_fini(struct cc_oci_config *c);

/* Parse /proc/<pid>/cgroup text and return the cgroup-v2 ("0::") path,
 * e.g. "/kubepods/pod1/ctr1".  Pure: used by the hook and the fuzzers. */
int cc_proc_cgroup_parse(const char *text, char *out, size_t outlen,
			 struct cc_err *err);

/* The cgroup to carve for a container whose init is `pid`: the v2 path of
 * /proc/<pid>/cgroup, one level up when the runtime nested the process in a
 * "container" leaf (crun with a systemd subgroup).  `hint` is
 * linux.cgroupsPath, used only as a cross-check (a mismatch is tolerated:
 * systemd drivers spell it "slice:prefix:name"). */
int cc_container_cgroup(const struct cc_root *root, pid_t pid, const char *hint,
			char *out, size_t outlen, struct cc_err *err);

#endif
