/* corecarve: the CLI entry point.  Dispatches to one subcommand. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

#ifndef CC_VERSION
#define CC_VERSION "0.1.0"
#endif

static void usage(FILE *out)
{
	fprintf(out, "usage: corecarve <command> [options]\n"
		     "       corecarve <command> --help\n\n"
		     "Carve exclusive, class-aware cpuset partitions for containers and VMs.\n\n"
		     "commands:\n");
	for (int i = 0; i < cc_cli_ncommands; i++)
		fprintf(out, "  %-12s %s\n", cc_cli_commands[i].name, cc_cli_commands[i].summary);
	fprintf(out, "\nexit status: 0 success, 1 refused or findings, 2 error\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CC_EXIT_ERROR;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CC_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("corecarve %s\n", CC_VERSION);
		return CC_EXIT_OK;
	}
	for (int i = 0; i < cc_cli_ncommands; i++)
		if (strcmp(argv[1], cc_cli_commands[i].name) == 0)
			return cc_cli_commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "corecarve: unknown command \"%s\" (see corecarve --help)\n", argv[1]);
	return CC_EXIT_ERROR;
}
