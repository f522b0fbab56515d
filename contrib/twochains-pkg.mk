# Automake rules that build Two-Chains packages with twochains-pkg.
#
# In a Makefile.am:
#
#     include $(top_srcdir)/contrib/twochains-pkg.mk
#     TWOCHAINS_PACKAGES = tcbench:packages/tcbench
#
# The second line is the one line per project: a space-separated list of
# NAME:DIR, DIR relative to $(srcdir) (or absolute). `make` then builds and
# installs every package into $(TWOCHAINS_PKG_PREFIX) through all-local;
# `make clean` removes the default prefix. twochains-pkg skips a package whose
# sources, flags and compiler have not changed (same build id), so the rule
# always runs and is cheap when nothing changed.
#
# Optional, set in the Makefile.am when the defaults do not fit:
#   TWOCHAINS_PKG        the tool           (default: twochains-pkg from PATH)
#   TWOCHAINS_PKG_PREFIX install prefix     (default: $(abs_builddir)/twochains-pkgs)
#   TWOCHAINS_PKG_FLAGS  extra build flags, e.g. --target aarch64 --cflags "-DX=1"
#
# Portable make only (no GNU make functions), so Automake's -Wportability
# stays quiet.

twochains-packages:
	@set -e; \
	tool='$(TWOCHAINS_PKG)'; test -n "$$tool" || tool=twochains-pkg; \
	prefix='$(TWOCHAINS_PKG_PREFIX)'; test -n "$$prefix" || prefix='$(abs_builddir)/twochains-pkgs'; \
	for spec in $(TWOCHAINS_PACKAGES); do \
	    name=`echo "$$spec" | sed 's/:.*//'`; \
	    dir=`echo "$$spec" | sed 's/^[^:]*://'`; \
	    case "$$dir" in /*) ;; *) dir='$(srcdir)'/"$$dir" ;; esac; \
	    echo "  TCPKG    $$name"; \
	    $$tool build --name "$$name" --src "$$dir" --prefix "$$prefix" \
	        $(TWOCHAINS_PKG_FLAGS) >twochains-pkg-$$name.log 2>&1 || \
	        { cat twochains-pkg-$$name.log; exit 1; }; \
	done

# only the default prefix is removed: a chosen one may hold other things
twochains-packages-clean:
	-test -n '$(TWOCHAINS_PKG_PREFIX)' || rm -rf '$(abs_builddir)/twochains-pkgs'
	-rm -f twochains-pkg-*.log

all-local: twochains-packages
clean-local: twochains-packages-clean

.PHONY: twochains-packages twochains-packages-clean
