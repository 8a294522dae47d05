# Checks of the sources that need no build, run first by `make check`.
#   make lint-includes   the #include graph of plugin/*/ cgroup/ hooks/ cli/:
#                        no cycle between module families, and a family's
#                        private header (<family>_int.h) included by that
#                        family alone; every plugin file in a role folder
#                        (plugin/<folder>/, none loose in plugin/) and
#                        every family in one folder (scripts/include-graph.sh);
#                        no .c over 800 lines and no function over 80, but
#                        the known debts that may only shrink
#                        (scripts/size-lint.sh, scripts/size-lint.known)
.PHONY: lint-includes
lint-includes:
	@sh scripts/include-graph.sh
	@sh scripts/size-lint.sh
