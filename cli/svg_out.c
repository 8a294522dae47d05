/* corecarve CLI: --svg FILE for the commands that draw the host. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "commands.h"
#include "interrupts.h"
#include "svg.h"

int cc_cli_svg_irqs(const struct cc_cli_common *c, const struct cc_root *root,
		    struct cc_interrupts *irqs, char *note, size_t notelen)
{
	struct cc_err e = CC_ERR_INIT;

	note[0] = '\0';
	if (c->xml || c->synthetic) {
		snprintf(note, notelen, "interrupt load not shown: %s describes another machine",
			 c->xml ? "--hwloc-xml" : "--synthetic");
		return 0;
	}
	/* A captured tree rarely has /proc/interrupts: the picture is still
	 * worth drawing, and the legend says why the bars are missing. */
	if (cc_interrupts_read(root, irqs, &e) < 0) {
		snprintf(note, notelen, "interrupt load not shown: %s", e.msg);
		return 0;
	}
	return 1;
}

int cc_cli_write_svg(const char *path, const struct cc_topo *t, const struct cc_svg_view *view,
		     struct cc_err *err)
{
	_cleanup_free_ char *tmp = NULL;
	FILE *f;
	int r;

	if (!strcmp(path, "-")) {
		if (cc_svg_write(stdout, t, view, err) < 0)
			return -1;
		if (fflush(stdout) != 0)
			return cc_err_sys(err, errno, "--svg: stdout");
		return 0;
	}
	/* Written beside the target and renamed: a failure never leaves half
	 * a picture under the name the user asked for. */
	if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0) {
		tmp = NULL;
		return cc_err_sys(err, ENOMEM, "--svg");
	}
	f = fopen(tmp, "w");
	if (!f)
		return cc_err_sys(err, errno, "--svg: %s", path);
	r = cc_svg_write(f, t, view, err);
	if (fclose(f) != 0 && r == 0)
		r = cc_err_sys(err, errno, "--svg: %s", path);
	if (r == 0 && rename(tmp, path) < 0)
		r = cc_err_sys(err, errno, "--svg: %s", path);
	if (r < 0)
		unlink(tmp);
	return r;
}
