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
#   $(UNITDIR)/corecarve-{prepare,audit}.service, corecarve-audit.timer
#   $(COMPLETIONDIR)/corecarve            bash completion
#
# HOOKSDIR and SYSCONFDIR do not follow PREFIX: podman and CRI-O read hooks
# from /usr/share/containers/oci/hooks.d (and /etc/containers/oci/hooks.d),
# and the binary looks for /etc/corecarve/policy.yaml, wherever corecarve
# itself lives.  Units are installed, not enabled.  uninstall removes the
# policy only when it is still the default (an edited one is the operator's).

BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
HOOKSDIR ?= /usr/share/containers/oci/hooks.d
UNITDIR ?= $(PREFIX)/lib/systemd/system
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
# node_exporter's textfile collector directory (Debian's prometheus-node-exporter).
PROMDIR ?= /var/lib/prometheus/node-exporter
# The partition parent corecarve-prepare makes on kernels before 6.7.
PARTITION_PARENT ?= /corecarve.slice
INSTALL ?= install

INSTALL_HOOKS := $(notdir $(wildcard manifests/hooks.d/*.json))
INSTALL_MAN := man/corecarve.8 man/corecarve-policy.5 man/corecarve-annotations.7
INSTALL_UNITS_IN := $(wildcard systemd/*.in)
INSTALL_UNITS := $(notdir $(INSTALL_UNITS_IN:.in=)) $(notdir $(filter-out %.in,$(wildcard systemd/corecarve-*)))
INSTALL_POLICY := $(DESTDIR)$(SYSCONFDIR)/corecarve/policy.yaml

# Every file install writes (the policy aside), for uninstall and the test.
INSTALL_FILES := $(DESTDIR)$(BINDIR)/corecarve \
	$(INSTALL_HOOKS:%=$(DESTDIR)$(HOOKSDIR)/%) \
	$(foreach m,$(INSTALL_MAN),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m))) \
	$(INSTALL_UNITS:%=$(DESTDIR)$(UNITDIR)/%) \
	$(DESTDIR)$(COMPLETIONDIR)/corecarve

SUBST_PATHS = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@PROMDIR@|$(PROMDIR)|g' -e 's|@PARENT@|$(PARTITION_PARENT)|g'

.PHONY: install uninstall install-list

install: $(BIN)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(HOOKSDIR) $(DESTDIR)$(SYSCONFDIR)/corecarve \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(COMPLETIONDIR)
	$(INSTALL) -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/corecarve
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
	@for u in $(filter-out %.in,$(wildcard systemd/corecarve-*)); do \
		$(INSTALL) -m 0644 $$u $(DESTDIR)$(UNITDIR)/$$(basename $$u) && echo "unit: $(DESTDIR)$(UNITDIR)/$$(basename $$u)" || exit 1; \
	done
	$(INSTALL) -m 0644 completion/corecarve.bash $(DESTDIR)$(COMPLETIONDIR)/corecarve

uninstall:
	rm -f $(INSTALL_FILES)
	@if [ -e $(INSTALL_POLICY) ] && cmp -s examples/policy-default.yaml $(INSTALL_POLICY); then \
		rm -f $(INSTALL_POLICY) && echo "policy: removed $(INSTALL_POLICY) (unchanged default)"; \
	elif [ -e $(INSTALL_POLICY) ]; then \
		echo "policy: keeping $(INSTALL_POLICY) (edited)"; \
	fi
	-@rmdir $(DESTDIR)$(SYSCONFDIR)/corecarve 2>/dev/null || true

# The files install writes, one per line (tests/unit/test_install.c).
install-list:
	@printf '%s\n' $(INSTALL_FILES)
