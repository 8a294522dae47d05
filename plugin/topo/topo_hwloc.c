/* corecarve: topology discovery through hwloc (topo_int.h).  hwloc reads
 * the machine (the host, a captured tree under a root, an XML export or a
 * synthetic description); the model of topo.h is built from it in
 * topo_build.c. */
#define _GNU_SOURCE
#include "topo_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

/* hwloc 2.9 quirk: the Linux backend takes its filesystem root only from
 * the HWLOC_FSROOT environment variable (there is no API setter since
 * hwloc 2.0), and unless HWLOC_COMPONENTS=linux,stop the x86 backend would
 * mix the running machine's CPUID into a captured tree.  HWLOC_HIDE_ERRORS=2
 * keeps hwloc from printing its own diagnostics (we report one line), and
 * HWLOC_XMLFILE / HWLOC_SYNTHETIC from the caller's environment must not
 * replace what the caller asked for.  The variables are set only around
 * hwloc_topology_load() and restored after it; this is the only place
 * corecarve touches the environment below the entry points (single-threaded
 * CLI and hook processes). */
static int hwloc_load_with_env(hwloc_topology_t t, const struct cc_root *fsroot)
{
	struct {
		const char *name;
		const char *value; /* NULL: unset during the load */
		char *saved;
		bool had;
	} env[] = {
		{ "HWLOC_FSROOT", fsroot ? fsroot->path : NULL, NULL, false },
		{ "HWLOC_COMPONENTS", fsroot ? "linux,stop" : NULL, NULL, false },
		{ "HWLOC_HIDE_ERRORS", "2", NULL, false },
		{ "HWLOC_XMLFILE", NULL, NULL, false },
		{ "HWLOC_SYNTHETIC", NULL, NULL, false },
	};
	size_t n = sizeof(env) / sizeof(env[0]);
	int r, saved_errno;

	for (size_t i = 0; i < n; i++) {
		const char *old = getenv(env[i].name);

		/* HWLOC_COMPONENTS is an administrator's knob on the host
		 * (e.g. to disable a buggy backend): keep it there. */
		if (!fsroot && strcmp(env[i].name, "HWLOC_COMPONENTS") == 0)
			continue;
		env[i].had = old != NULL;
		env[i].saved = old ? strdup(old) : NULL;
		if (env[i].value)
			setenv(env[i].name, env[i].value, 1);
		else
			unsetenv(env[i].name);
	}
	r = hwloc_topology_load(t);
	saved_errno = errno;
	for (size_t i = 0; i < n; i++) {
		if (!fsroot && strcmp(env[i].name, "HWLOC_COMPONENTS") == 0)
			continue;
		if (env[i].had && env[i].saved)
			setenv(env[i].name, env[i].saved, 1);
		else
			unsetenv(env[i].name);
		free(env[i].saved);
	}
	errno = saved_errno;
	return r;
}

/* Split "DESC | name=list name=list" (synthetic classes). */
int topo_parse_synthetic(const char *arg, char **desc, struct cc_class_override **ov, int *nov,
			 struct cc_err *err)
{
	const char *bar = strchr(arg, '|');
	_cleanup_free_ char *classes = NULL;
	char *save = NULL, *tok;

	*ov = NULL;
	*nov = 0;
	*desc = bar ? strndup(arg, (size_t)(bar - arg)) : strdup(arg);
	if (!*desc)
		return cc_err_sys(err, ENOMEM, "synthetic topology");
	for (size_t n = strlen(*desc); n && ((*desc)[n - 1] == ' ' || (*desc)[n - 1] == '\t');)
		(*desc)[--n] = '\0';
	if (!bar)
		return 0;
	classes = strdup(bar + 1);
	if (!classes)
		return cc_err_sys(err, ENOMEM, "synthetic topology");
	for (tok = strtok_r(classes, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		struct cc_class_override *o;

		if (!eq || eq == tok || (size_t)(eq - tok) >= CC_NAME_MAX)
			return cc_err_set(err, EINVAL, "synthetic classes: expected name=cpulist, got \"%.40s\"", tok);
		if (*nov >= CC_CLASSES_MAX)
			return cc_err_set(err, E2BIG, "synthetic classes: more than %d classes", CC_CLASSES_MAX);
		o = realloc(*ov, (size_t)(*nov + 1) * sizeof(**ov));
		if (!o)
			return cc_err_sys(err, ENOMEM, "synthetic classes");
		*ov = o;
		o = &o[(*nov)++];
		memset(o, 0, sizeof(*o));
		memcpy(o->name, tok, (size_t)(eq - tok));
		o->cpus = hwloc_bitmap_alloc();
		if (!o->cpus)
			return cc_err_sys(err, ENOMEM, "synthetic classes");
		if (cc_cpulist_parse(eq + 1, o->cpus, o->name, err) < 0)
			return cc_err_prefix(err, "synthetic classes");
	}
	if (*nov == 0)
		return cc_err_set(err, EINVAL, "synthetic classes: nothing after '|'");
	return 0;
}

void topo_free_overrides(struct cc_class_override *ov, int nov)
{
	for (int i = 0; i < nov; i++)
		hwloc_bitmap_free(ov[i].cpus);
	free(ov);
}

/* The caller's allowed CPUs on the real host: the cgroup cpuset hwloc
 * found (it is kept apart thanks to INCLUDE_DISALLOWED) and the process
 * affinity. */
void topo_host_allowed(hwloc_topology_t t, hwloc_bitmap_t allowed)
{
	_cleanup_bitmap_ hwloc_bitmap_t bind = hwloc_bitmap_alloc();

	hwloc_bitmap_and(allowed, allowed, hwloc_topology_get_allowed_cpuset(t));
	if (bind && hwloc_get_cpubind(t, bind, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(bind))
		hwloc_bitmap_and(allowed, allowed, bind);
}

int topo_load_hwloc(hwloc_topology_t t, const struct cc_topo_source *src, const char *desc,
		    struct cc_err *err)
{
	_cleanup_close_ int fd = -1;

	if (hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) < 0 ||
	    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE) < 0 ||
	    hwloc_topology_set_cache_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) < 0)
		return cc_err_sys(err, errno, "hwloc");
	switch (src->kind) {
	case CC_TOPO_HOST:
		if (hwloc_load_with_env(t, src->root->is_host ? NULL : src->root) < 0)
			return cc_err_sys(err, errno, "%s: hwloc could not read the topology", src->root->path);
		return 0;
	case CC_TOPO_XML:
		/* hwloc reports any XML problem as EINVAL: name the usual
		 * ones (missing, unreadable) first. */
		fd = open(src->arg, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return cc_err_sys(err, errno, "hwloc XML %s", src->arg);
		if (hwloc_topology_set_xml(t, src->arg) < 0)
			return cc_err_sys(err, errno, "hwloc XML %s", src->arg);
		if (hwloc_load_with_env(t, NULL) < 0)
			return cc_err_set(err, EINVAL, "hwloc XML %s: not a valid hwloc XML v2 topology", src->arg);
		return 0;
	case CC_TOPO_SYNTHETIC:
		if (hwloc_topology_set_synthetic(t, desc) < 0)
			return cc_err_set(err, EINVAL, "synthetic topology \"%.100s\": not a valid hwloc synthetic description", desc);
		if (hwloc_load_with_env(t, NULL) < 0)
			return cc_err_sys(err, errno, "synthetic topology \"%.100s\"", desc);
		return 0;
	}
	return cc_err_set(err, EINVAL, "unknown topology source");
}
