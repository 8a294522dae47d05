/* corecarve topology: show the host model (or a captured / exported one). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "commands.h"
#include "svg.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: corecarve topology [--root DIR | --hwloc-xml FILE | --synthetic DESC]\n"
		"                          [--policy FILE] [--json] [--svg FILE]\n\n"
		"Show packages, NUMA nodes, last-level and L2 caches, cores, CPUs and core\n"
		"classes, as a map (default) or as one JSON object (--json).\n\n"
		"  --root DIR        read /sys and /proc under DIR (a captured tree)\n"
		"  --hwloc-xml FILE  read an hwloc XML v2 export (lstopo --of xml)\n"
		"  --synthetic DESC  an hwloc synthetic topology, e.g. \"pack:2 numa:2 core:6 pu:2\";\n"
		"                    \"DESC | performance=0-7 efficient=8-23\" also names classes\n"
		"  --policy FILE     node policy (coreClasses overrides the detected classes);\n"
		"                    default $CORECARVE_POLICY, then " CC_POLICY_PATH "\n"
		"  --json            print JSON (see docs/topology.md)\n"
		"  --svg FILE        also draw the host as an SVG picture in FILE (\"-\": only the\n"
		"                    picture, on stdout): classes, caches, L2 clusters, IRQ load\n\n"
		"exit status: 0 success, 2 bad input (one line on stderr, nothing on stdout)\n");
}

enum { OPT_SVG = 1 };

const struct cc_opt cc_opts_topology[] = {
	{ "--svg", NULL, "FILE", OPT_SVG, CC_OPT_FILE_NAME, NULL },
	CC_CLI_OPTS_JSON(0, NULL),
	CC_CLI_OPTS_SOURCE(0, NULL),
	CC_CLI_OPTS_HELP,
	{ NULL, NULL, NULL, 0, 0, NULL },
};

int cc_cmd_topology(int argc, char **argv)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_cli_common c = { .caller_view = true };
	_cleanup_root_ struct cc_root *root = NULL;
	_cleanup_policy_ struct cc_policy *policy = NULL;
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_free_ char *text = NULL;
	const char *svg = NULL;
	size_t len = 0;

	for (int i = 1; i < argc; i++) {
		const char *v;
		int id = cc_opts_next(cc_opts_topology, NULL, argc, argv, &i, &v, &err);

		switch (id) {
		case -1:
			return cc_cli_fail(&err);
		case CC_CLI_OPT_HELP:
			usage(stdout);
			return CC_EXIT_OK;
		case OPT_SVG:
			svg = v;
			break;
		default:
			if (!cc_cli_common_set(&c, id, v)) {
				cc_err_set(&err, EINVAL, "topology: unknown option \"%s\" (see corecarve topology --help)", v);
				return cc_cli_fail(&err);
			}
		}
	}
	/* Both want stdout; silently dropping one of them is worse than asking. */
	if (svg && !strcmp(svg, "-") && c.json) {
		cc_err_set(&err, EINVAL, "topology: --svg - and --json both write stdout; write the picture to a file");
		return cc_cli_fail(&err);
	}
	if (cc_cli_load(&c, &root, &policy, &topo, &err) < 0)
		return cc_cli_fail(&err);
	if (svg) {
		struct cc_interrupts irqs = { 0 };
		char note[CC_ERR_MSG_MAX + 64];
		struct cc_svg_view view = { .note = note };
		int r;

		if (cc_cli_svg_irqs(&c, root, &irqs, note, sizeof(note)) > 0)
			view.irqs = &irqs;
		view.note = note[0] ? note : NULL;
		r = cc_cli_write_svg(svg, topo, &view, &err);
		cc_interrupts_fini(&irqs);
		if (r < 0)
			return cc_cli_fail(&err);
		if (!strcmp(svg, "-"))
			return CC_EXIT_OK;
	}

	/* The whole output is built in memory and printed only when it is
	 * complete: a failure leaves stdout empty. */
	if (c.json) {
		_cleanup_json_ json_t *j = cc_topo_json(topo, NULL, &err);

		if (!j)
			return cc_cli_fail(&err);
		text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (!text) {
			cc_err_sys(&err, ENOMEM, "topology JSON");
			return cc_cli_fail(&err);
		}
		len = strlen(text);
	} else {
		FILE *f = open_memstream(&text, &len);
		int r;

		if (!f) {
			cc_err_sys(&err, errno, "topology map");
			return cc_cli_fail(&err);
		}
		r = cc_topo_map(f, topo, NULL, &err);
		if (fclose(f) != 0 && r == 0)
			r = cc_err_sys(&err, errno, "topology map");
		if (r < 0)
			return cc_cli_fail(&err);
	}
	if (fwrite(text, 1, len, stdout) != len || (c.json && fputc('\n', stdout) == EOF) || fflush(stdout) != 0) {
		cc_err_sys(&err, errno ? errno : EIO, "stdout");
		return cc_cli_fail(&err);
	}
	return CC_EXIT_OK;
}
