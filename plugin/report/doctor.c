/* corecarve doctor: the check table, the report, and the pure parsers the
 * checks share.  The checks themselves live in doctor_kernel.c (what the
 * kernel exposes) and doctor_host.c (daemons and configuration). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "doctor.h"
#include "doctor_baseline.h"

const struct cc_doctor_check cc_doctor_checks[] = {
	{ "cgroup", cc_doctor_check_cgroup },
	{ "partition", cc_doctor_check_partition },
	{ "smt", cc_doctor_check_smt },
	{ "hybrid-pmu", cc_doctor_check_hybrid },
	{ "topology", cc_doctor_check_topology },
	{ "policy", cc_doctor_check_policy },
	{ "capacity", cc_doctor_check_capacity },
	{ "irqbalance", cc_doctor_check_irqbalance },
	{ "governor", cc_doctor_check_governor },
	{ "power", cc_doctor_check_power },
	{ "thp", cc_doctor_check_thp },
	{ "numa-balancing", cc_doctor_check_numa_balancing },
	{ "cmdline", cc_doctor_check_cmdline },
	{ "kubelet", cc_doctor_check_kubelet },
	{ "hooks", cc_doctor_check_hooks },
	{ "ledger", cc_doctor_check_ledger },
	{ NULL, NULL },
};

void cc_doctor_set(struct cc_doctor_item *it, enum cc_doctor_status st, const char *why,
		   const char *fix, const char *found_fmt, ...)
{
	va_list ap;

	it->status = st;
	snprintf(it->why, sizeof(it->why), "%s", why ? why : "");
	snprintf(it->fix, sizeof(it->fix), "%s", fix ? fix : "");
	va_start(ap, found_fmt);
	vsnprintf(it->found, sizeof(it->found), found_fmt, ap);
	va_end(ap);
}

static void run_check(const struct cc_doctor_ctx *ctx, const struct cc_doctor_check *c,
		      struct cc_doctor_item *it)
{
	memset(it, 0, sizeof(*it));
	it->id = c->id;
	c->run(ctx, it);
}

void cc_doctor_run(const struct cc_doctor_ctx *ctx, struct cc_doctor_report *out)
{
	out->n = 0;
	for (const struct cc_doctor_check *c = cc_doctor_checks; c->id && out->n < CC_DOCTOR_MAX; c++)
		run_check(ctx, c, &out->items[out->n++]);
	cc_doctor_baseline(ctx, out);
}

int cc_doctor_run_one(const struct cc_doctor_ctx *ctx, const char *id, struct cc_doctor_item *it,
		      struct cc_err *err)
{
	for (const struct cc_doctor_check *c = cc_doctor_checks; c->id; c++)
		if (!strcmp(c->id, id)) {
			run_check(ctx, c, it);
			return 0;
		}
	return cc_err_set(err, EINVAL, "doctor: no check \"%s\"", id);
}

bool cc_doctor_captured(const struct cc_doctor_ctx *ctx)
{
	return ctx->root && !ctx->root->is_host;
}

int cc_doctor_exit_code(const struct cc_doctor_report *r)
{
	int worst = CC_DOCTOR_OK;

	for (int i = 0; i < r->n; i++)
		if (r->items[i].status != CC_DOCTOR_UNKNOWN && (int)r->items[i].status > worst)
			worst = (int)r->items[i].status;
	return worst; /* ok, warn, fail are ordered as the exit codes */
}

const char *cc_doctor_status_name(enum cc_doctor_status s)
{
	switch (s) {
	case CC_DOCTOR_OK:
		return "ok";
	case CC_DOCTOR_WARN:
		return "warn";
	case CC_DOCTOR_FAIL:
		return "fail";
	case CC_DOCTOR_UNKNOWN:
		return "unknown";
	}
	return "?";
}

void cc_doctor_counts(const struct cc_doctor_report *r, int counts[CC_DOCTOR_NSTATUS])
{
	for (int k = 0; k < CC_DOCTOR_NSTATUS; k++)
		counts[k] = 0;
	for (int i = 0; i < r->n; i++)
		counts[r->items[i].status]++;
}

void cc_doctor_verdict(const struct cc_doctor_report *r, char *buf, size_t len)
{
	static const char *const verdict[] = { "ready", "ready, with warnings", "not usable" };
	int n[CC_DOCTOR_NSTATUS];

	cc_doctor_counts(r, n);
	snprintf(buf, len, "%s: %d fail, %d warn, %d ok, %d unknown", verdict[cc_doctor_exit_code(r)],
		 n[CC_DOCTOR_FAIL], n[CC_DOCTOR_WARN], n[CC_DOCTOR_OK], n[CC_DOCTOR_UNKNOWN]);
}

json_t *cc_doctor_json(const struct cc_doctor_report *r)
{
	_cleanup_json_ json_t *doc = json_object();
	json_t *checks = json_array(), *counts = json_object();
	static const char *const verdict[] = { "ready", "warnings", "not usable" };
	int n[CC_DOCTOR_NSTATUS];

	cc_doctor_counts(r, n);
	if (!doc || json_object_set_new(doc, "schema_version", json_integer(1)) < 0 ||
	    json_object_set_new(doc, "checks", checks) < 0 || json_object_set_new(doc, "counts", counts) < 0 ||
	    json_object_set_new(doc, "verdict", json_string(verdict[cc_doctor_exit_code(r)])) < 0 ||
	    json_object_set_new(doc, "exit", json_integer(cc_doctor_exit_code(r))) < 0)
		return NULL;
	for (int k = 0; k < CC_DOCTOR_NSTATUS; k++)
		if (json_object_set_new(counts, cc_doctor_status_name((enum cc_doctor_status)k), json_integer(n[k])) < 0)
			return NULL;
	for (int i = 0; i < r->n; i++) {
		const struct cc_doctor_item *it = &r->items[i];
		json_t *o = json_object();

		if (!o || json_array_append_new(checks, o) < 0 || json_object_set_new(o, "id", json_string(it->id)) < 0 ||
		    json_object_set_new(o, "status", json_string(cc_doctor_status_name(it->status))) < 0 ||
		    json_object_set_new(o, "found", json_string(it->found)) < 0 ||
		    json_object_set_new(o, "why", json_string(it->why)) < 0 ||
		    json_object_set_new(o, "fix", it->fix[0] ? json_string(it->fix) : json_null()) < 0)
			return NULL;
	}
	return cc_steal_ptr(doc);
}

/* ---- pure parsers --------------------------------------------------------- */

char *cc_doctor_thp_mode(const char *text)
{
	const char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;

	if (!open || !close || close == open + 1)
		return NULL;
	return strndup(open + 1, (size_t)(close - open - 1));
}

/* isolcpus' flags (Documentation/admin-guide/kernel-parameters.txt); a CPU
 * list never starts with a letter, so the first token that does not is the
 * list. */
static bool is_flag(const char *tok, size_t len)
{
	return len > 0 && isalpha((unsigned char)tok[0]);
}

int cc_doctor_cmdline_cpus(const char *cmdline, const char *param, hwloc_bitmap_t out, char **flags,
			   struct cc_err *err)
{
	size_t plen = strlen(param);
	const char *p = cmdline, *val = NULL;
	_cleanup_free_ char *list = NULL;
	char *f = NULL;

	hwloc_bitmap_zero(out);
	if (flags)
		*flags = NULL;
	/* The kernel takes the last occurrence of a parameter. */
	while ((p = strstr(p, param))) {
		if ((p == cmdline || isspace((unsigned char)p[-1])) && p[plen] == '=')
			val = p + plen + 1;
		p += plen;
	}
	if (!val)
		return 0;
	list = strndup(val, strcspn(val, " \t\n"));
	if (!list)
		return cc_err_sys(err, ENOMEM, "%s", param);
	for (char *tok = list; tok && is_flag(tok, strcspn(tok, ","));) {
		char *comma = strchr(tok, ',');
		size_t n = comma ? (size_t)(comma - tok) : strlen(tok);

		if (flags) {
			size_t old = f ? strlen(f) : 0;
			char *nf = realloc(f, old + n + 2);

			if (!nf) {
				free(f);
				return cc_err_sys(err, ENOMEM, "%s", param);
			}
			f = nf;
			snprintf(f + old, n + 2, "%s%.*s", old ? "," : "", (int)n, tok);
		}
		if (!comma) {
			tok[0] = '\0';
			break;
		}
		memmove(list, comma + 1, strlen(comma + 1) + 1);
		tok = list;
	}
	if (!list[0]) {
		free(f);
		return cc_err_set(err, EINVAL, "%s=: no CPU list", param);
	}
	if (cc_cpulist_parse(list, out, param, err) < 0) {
		free(f);
		return -1;
	}
	if (flags)
		*flags = f;
	return 1;
}

int cc_doctor_version(const char *s)
{
	char *end;
	long major, minor;

	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	major = strtol(s, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return -1;
	minor = strtol(end + 1, &end, 10);
	if (errno || major > 1000 || minor > 999)
		return -1;
	return (int)(major * 1000 + minor);
}

const char *cc_kubelet_evidence(const struct cc_root *root)
{
	static const char *const paths[] = { "/sys/fs/cgroup/kubepods.slice", "/sys/fs/cgroup/kubepods",
					     "/var/lib/kubelet", NULL };

	for (int i = 0; paths[i]; i++)
		if (cc_root_exists(root, paths[i]))
			return paths[i];
	return NULL;
}
