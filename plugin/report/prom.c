/* corecarve audit: the node_exporter textfile.
 *
 * node_exporter's textfile collector reads every *.prom file of its
 * directory at each scrape; a file it catches half-written is a parse
 * error for the whole collector.  So the text goes to a temporary file in
 * the same directory (a name not ending in .prom, which the collector
 * skips), is fsynced, and renamed over the target. */
#define _GNU_SOURCE
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capacity.h"
#include "cleanup.h"
#include "fileio.h"

static int put(char **buf, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int put(char **buf, size_t *len, const char *fmt, ...)
{
	va_list ap;
	char *more = NULL, *grown;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&more, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	grown = realloc(*buf, *len + (size_t)n + 1);
	if (!grown) {
		free(more);
		return -1;
	}
	memcpy(grown + *len, more, (size_t)n + 1);
	free(more);
	*buf = grown;
	*len += (size_t)n;
	return 0;
}

#define PUT(...)                                                               \
	do {                                                                   \
		if (put(&buf, &len, __VA_ARGS__) < 0)                          \
			goto nomem;                                            \
	} while (0)

char *cc_prom_render(const struct cc_audit_report *r, const struct cc_audit_stats *st, bool ok)
{
	char *buf = NULL;
	size_t len = 0;
	int critical = 0;

	PUT("# HELP corecarve_audit_success 1 when the last corecarve audit could read the node, 0 when it could not.\n"
	    "# TYPE corecarve_audit_success gauge\ncorecarve_audit_success %d\n", ok ? 1 : 0);
	PUT("# HELP corecarve_audit_last_run_timestamp_seconds When the last corecarve audit finished.\n"
	    "# TYPE corecarve_audit_last_run_timestamp_seconds gauge\n"
	    "corecarve_audit_last_run_timestamp_seconds %lld\n", st->finished);
	if (!ok)
		return buf;
	/* Every code, zeros included: an alert on a code needs the series to
	 * exist before the first finding. */
	PUT("# HELP corecarve_audit_findings Findings of the last corecarve audit, by code (docs/audit.md).\n"
	    "# TYPE corecarve_audit_findings gauge\n");
	for (int c = 0; c < CC_AUDIT_NCODES; c++)
		PUT("corecarve_audit_findings{code=\"%s\"} %d\n", cc_audit_code_name((enum cc_audit_code)c),
		    cc_audit_count(r, (enum cc_audit_code)c));
	for (int i = 0; i < r->n; i++)
		critical += r->f[i].severity == CC_AUDIT_CRITICAL;
	PUT("# HELP corecarve_audit_critical_findings Findings of the last audit that mean a promise is broken now.\n"
	    "# TYPE corecarve_audit_critical_findings gauge\ncorecarve_audit_critical_findings %d\n", critical);
	PUT("# HELP corecarve_carves Carves recorded in the ledger.\n"
	    "# TYPE corecarve_carves gauge\ncorecarve_carves %d\n", st->carves);
	PUT("# HELP corecarve_carved_cpus CPUs owned by carves, running and parked.\n"
	    "# TYPE corecarve_carved_cpus gauge\ncorecarve_carved_cpus %d\n", st->carved_cpus);
	/* What `kubectl describe node` shows as allocatable and allocated:
	 * every class, every state, zeros included. */
	if (st->capacity) {
		PUT("# HELP corecarve_class_cpus CPUs of the core class a placement class draws from, by state "
		    "(total = reserved + carved + parked + free).\n"
		    "# TYPE corecarve_class_cpus gauge\n");
		for (int i = 0; i < st->ncapacity; i++)
			for (int k = 0; k < CC_CAPACITY_NSTATES; k++)
				PUT("corecarve_class_cpus{class=\"%s\",core_class=\"%s\",state=\"%s\"} %d\n",
				    st->capacity[i].name, st->capacity[i].core_class, cc_capacity_states[k],
				    cc_capacity_state(&st->capacity[i], k));
		PUT("# HELP corecarve_class_largest_request_cpus The largest cpus request of a placement class "
		    "that fits now (0: none; shared classes: their pool).\n"
		    "# TYPE corecarve_class_largest_request_cpus gauge\n");
		for (int i = 0; i < st->ncapacity; i++)
			PUT("corecarve_class_largest_request_cpus{class=\"%s\"} %d\n", st->capacity[i].name,
			    st->capacity[i].largest);
	}
	PUT("# HELP corecarve_audit_cgroups Cgroups the last audit read.\n"
	    "# TYPE corecarve_audit_cgroups gauge\ncorecarve_audit_cgroups %d\n", st->cgroups);
	PUT("# HELP corecarve_audit_duration_seconds Wall time of the last audit, IRQ sample window included.\n"
	    "# TYPE corecarve_audit_duration_seconds gauge\ncorecarve_audit_duration_seconds %.6f\n",
	    (st->read_ms + st->check_ms) / 1e3);
	PUT("# HELP corecarve_audit_lock_held_seconds How long the last audit held the hooks' ledger lock "
	    "(--fix repairing; 0: it never took it).\n"
	    "# TYPE corecarve_audit_lock_held_seconds gauge\ncorecarve_audit_lock_held_seconds %.6f\n",
	    st->lock_ms / 1e3);
	return buf;
nomem:
	free(buf);
	return NULL;
}

int cc_prom_write(const char *path, const struct cc_audit_report *r, const struct cc_audit_stats *st, bool ok,
		  struct cc_err *err)
{
	_cleanup_free_ char *text = cc_prom_render(r, st, ok);
	/* Its temp file's name does not end in .prom (see above). */
	const struct cc_replace o = { .mode = 0644, .sync = CC_SYNC_DIR_TRY, .hidden = true };

	if (!text)
		return cc_err_sys(err, ENOMEM, "%s", path);
	return cc_replace_path(path, text, strlen(text), &o, err) < 0 ? -1 : 0;
}
