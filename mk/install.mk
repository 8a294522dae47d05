# make install / make uninstall: corecarve as a node component.
#
#   make install                    into /usr/local (PREFIX), the real host
#   make install PREFIX=/usr        a distribution layout
#   make install DESTDIR=/tmp/pkg   staged (packaging); uninstall takes the same
#
# What goes where (every path below DESTDIR):
#   $(BINDIR)/corecarve
#   $(HOOKSDIR)/corecarve-{createRuntime,poststop}.json  podman / CRI-O hooks.d;
#       their "path" is rewritten to $(BINDIR)/corecarve
#   $(SYSCONFDIR)/corecarve/policy.yaml   the default policy, only when absent
#   $(MANDIR)/man{8,5,7}/                 corecarve(8), corecarve-policy(5),
#                                         corecarve-annotations(7)
#   $(UNITDIR)/corecarve-{prepare,audit,irqbalance}.service, corecarve-audit.timer,
#       corecarve-irqbalance.path, corecarve.slice
#   $(COMPLETIONDIR)/corecarve            bash completion
#   $(DOCDIR)/*.md                        docs/ (what --help and the man pages point at)
#
# HOOKSDIR and SYSCONFDIR do not follow PREFIX: podman and CRI-O read hooks
# from /usr/share/containers/oci/hooks.d (and /etc/containers/oci/hooks.d),
# and the binary looks for /etc/corecarve/policy.yaml, wherever corecarve
# itself lives.  Units are installed, not enabled.  uninstall removes the
# policy only when it is still the default (an edited one is the operator's).
#
# uninstall refuses while carves are recorded: a running carved container
# keeps a poststop hook naming the binary, and with the binary gone its
# CPUs, IRQs and power settings would stay taken until a reboot.  Stop
# those containers first, or
#   make uninstall RELEASE=1   release every recorded carve first (the
#                              containers keep running, no longer exclusive)
#   make uninstall FORCE=1     uninstall anyway; reboot to free what is held
# On the live host (DESTDIR empty) the units it installed are disabled and
# stopped first.  STATE is the ledger it looks at (/run/corecarve).

BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
HOOKSDIR ?= /usr/share/containers/oci/hooks.d
UNITDIR ?= $(PREFIX)/lib/systemd/system
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
DOCDIR ?= $(PREFIX)/share/doc/corecarve
# node_exporter's textfile collector directory (Debian's prometheus-node-exporter).
PROMDIR ?= /var/lib/prometheus/node-exporter
# The partition parent corecarve-prepare makes on kernels before 6.7.
PARTITION_PARENT ?= /corecarve.slice
INSTALL ?= install

INSTALL_HOOKS := $(notdir $(wildcard manifests/hooks.d/*.json))
INSTALL_MAN := man/corecarve.8 man/corecarve-policy.5 man/corecarve-annotations.7
INSTALL_UNITS_IN := $(wildcard systemd/*.in)
INSTALL_UNITS_PLAIN := $(filter-out %.in,$(wildcard systemd/corecarve*))
INSTALL_UNITS := $(notdir $(INSTALL_UNITS_IN:.in=)) $(notdir $(INSTALL_UNITS_PLAIN))
INSTALL_POLICY := $(DESTDIR)$(SYSCONFDIR)/corecarve/policy.yaml
INSTALL_DOCS := $(notdir $(wildcard docs/*.md))

# Every file install writes (the policy aside), for uninstall and the test.
INSTALL_FILES := $(DESTDIR)$(BINDIR)/corecarve $(DESTDIR)$(BINDIR)/corecarve-hook \
	$(INSTALL_HOOKS:%=$(DESTDIR)$(HOOKSDIR)/%) \
	$(foreach m,$(INSTALL_MAN),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m))) \
	$(INSTALL_UNITS:%=$(DESTDIR)$(UNITDIR)/%) \
	$(DESTDIR)$(COMPLETIONDIR)/corecarve \
	$(INSTALL_DOCS:%=$(DESTDIR)$(DOCDIR)/%)

SUBST_PATHS = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@PROMDIR@|$(PROMDIR)|g' -e 's|@PARENT@|$(PARTITION_PARENT)|g'

.PHONY: install uninstall install-list

install: $(BIN) $(FIRST_STAGE_BIN)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(HOOKSDIR) $(DESTDIR)$(SYSCONFDIR)/corecarve \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(COMPLETIONDIR) $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/corecarve
	$(INSTALL) -m 0755 $(FIRST_STAGE_BIN) $(DESTDIR)$(BINDIR)/corecarve-hook
	@for h in $(INSTALL_HOOKS); do \
		echo "hooks.d: $(DESTDIR)$(HOOKSDIR)/$$h -> $(BINDIR)/corecarve"; \
		sed 's|"/usr/local/bin/corecarve"|"$(BINDIR)/corecarve"|' manifests/hooks.d/$$h > $(DESTDIR)$(HOOKSDIR)/$$h.tmp && \
		chmod 0644 $(DESTDIR)$(HOOKSDIR)/$$h.tmp && mv $(DESTDIR)$(HOOKSDIR)/$$h.tmp $(DESTDIR)$(HOOKSDIR)/$$h || exit 1; \
	done
	@if [ -e $(INSTALL_POLICY) ]; then \
		echo "policy: keeping the existing $(INSTALL_POLICY)"; \
	else \
		$(INSTALL) -m 0644 examples/policy-default.yaml $(INSTALL_POLICY) && echo "policy: $(INSTALL_POLICY) (the default)"; \
	fi
	$(INSTALL) -m 0644 man/corecarve.8 $(DESTDIR)$(MANDIR)/man8/corecarve.8
	$(INSTALL) -m 0644 man/corecarve-policy.5 $(DESTDIR)$(MANDIR)/man5/corecarve-policy.5
	$(INSTALL) -m 0644 man/corecarve-annotations.7 $(DESTDIR)$(MANDIR)/man7/corecarve-annotations.7
	@for u in $(INSTALL_UNITS_IN); do \
		n=$$(basename $$u .in); \
		$(SUBST_PATHS) $$u > $(DESTDIR)$(UNITDIR)/$$n.tmp && chmod 0644 $(DESTDIR)$(UNITDIR)/$$n.tmp && \
		mv $(DESTDIR)$(UNITDIR)/$$n.tmp $(DESTDIR)$(UNITDIR)/$$n && echo "unit: $(DESTDIR)$(UNITDIR)/$$n" || exit 1; \
	done
	@for u in $(INSTALL_UNITS_PLAIN); do \
		$(INSTALL) -m 0644 $$u $(DESTDIR)$(UNITDIR)/$$(basename $$u) && echo "unit: $(DESTDIR)$(UNITDIR)/$$(basename $$u)" || exit 1; \
	done
	$(INSTALL) -m 0644 completion/corecarve.bash $(DESTDIR)$(COMPLETIONDIR)/corecarve
	$(INSTALL) -m 0644 $(INSTALL_DOCS:%=docs/%) $(DESTDIR)$(DOCDIR)/

STATE ?= /run/corecarve
# The installed binary reads the ledger (the one being removed may be the
# only one that understands it); the tree's own when nothing is installed.
UNINSTALL_BIN = $(firstword $(wildcard $(DESTDIR)$(BINDIR)/corecarve) $(BIN))

# The live host (DESTDIR empty), or a STATE named on purpose (the tests):
# a staged uninstall on a build machine does not look at its carves.
UNINSTALL_CHECK := $(if $(DESTDIR),$(filter command line environment,$(origin STATE)),live)

uninstall:
	@if [ -n "$(UNINSTALL_CHECK)" ] && [ "$(FORCE)" != 1 ] && [ -d "$(STATE)" ] && [ -x "$(UNINSTALL_BIN)" ]; then \
		carves=$$(CORECARVE_STATE_DIR= "$(UNINSTALL_BIN)" status --state "$(STATE)" --table carves \
			--no-headers --raw -o ID,KIND,CLASS,CGROUP --synthetic 'pack:1 pu:1') || exit 1; \
		if [ -n "$$carves" ] && [ "$(RELEASE)" = 1 ]; then \
			printf '%s\n' "$$carves" | while read -r id kind rest; do \
				printf '{"ociVersion":"1.0.2","id":"%s","status":"stopped","pid":0,"bundle":"/"}' "$$id" | \
					CORECARVE_STATE_DIR= "$(UNINSTALL_BIN)" hook poststop --state "$(STATE)" || exit 1; \
				echo "uninstall: released $$kind carve $$id"; \
			done || exit 1; \
		elif [ -n "$$carves" ]; then \
			echo "uninstall: refused: $(STATE) records live carves (id kind class cgroup):" >&2; \
			printf '  %s\n' "$$carves" >&2; \
			echo "their poststop hooks name $(BINDIR)/corecarve: stop those containers first (that releases" >&2; \
			echo "their CPUs, IRQs and power settings), or make uninstall RELEASE=1 to release them now," >&2; \
			echo "or make uninstall FORCE=1 to leave them held until a reboot" >&2; \
			exit 1; \
		fi; \
	fi
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then \
		for u in $(INSTALL_UNITS); do \
			case $$u in *.slice) continue ;; esac; \
			[ -e $(UNITDIR)/$$u ] && systemctl disable --now $$u >/dev/null 2>&1 && echo "unit: disabled $$u"; \
		done; true; \
	fi
	rm -f $(INSTALL_FILES)
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then \
		systemctl daemon-reload; \
	fi
	@if [ -e $(INSTALL_POLICY) ] && cmp -s examples/policy-default.yaml $(INSTALL_POLICY); then \
		rm -f $(INSTALL_POLICY) && echo "policy: removed $(INSTALL_POLICY) (unchanged default)"; \
	elif [ -e $(INSTALL_POLICY) ]; then \
		echo "policy: keeping $(INSTALL_POLICY) (edited)"; \
	fi
	-@rmdir $(DESTDIR)$(SYSCONFDIR)/corecarve $(DESTDIR)$(DOCDIR) 2>/dev/null || true

# The files install writes, one per line (tests/unit/test_install.c).
install-list:
	@printf '%s\n' $(INSTALL_FILES)
