# Shortcuts for the scripts in scripts/ (they work without make too), and install/uninstall.
#   make install PREFIX=/usr DESTDIR=/tmp/pkg    stages a package; PREFIX defaults to /usr/local
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSTEMDUSERUNITDIR ?= $(PREFIX)/lib/systemd/user
BASHCOMPLETIONDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPLETIONDIR = $(PREFIX)/share/zsh/site-functions
FISHCOMPLETIONDIR = $(PREFIX)/share/fish/vendor_completions.d
DOCDIR = $(PREFIX)/share/doc/playerd
RELEASE = .build/release

.PHONY: run test setup release install uninstall bench bench-library bench-library-million bench-formats bench-web bench-radio bench-micro bench-audio bench-engine fixtures format clean

run:
	scripts/run.sh

test:
	scripts/test.sh

setup:
	scripts/setup.sh test

release:
	scripts/setup.sh build
	swift build -c release --static-swift-stdlib --product playerd
	swift build -c release --static-swift-stdlib --product playerctl
	swift build -c release --static-swift-stdlib --product playerd-mpris

# The binaries are installed stripped (install -s): without symbols and debug information they are a
# third smaller (playerd 103 MB to 65 MB).
install: release
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSTEMDUSERUNITDIR) \
		$(DESTDIR)$(BASHCOMPLETIONDIR) $(DESTDIR)$(ZSHCOMPLETIONDIR) $(DESTDIR)$(FISHCOMPLETIONDIR) $(DESTDIR)$(DOCDIR)
	install -s -m 0755 $(RELEASE)/playerd $(RELEASE)/playerctl $(RELEASE)/playerd-mpris $(DESTDIR)$(BINDIR)/
	for unit in playerd.service playerd.socket; do \
		sed -e 's#/usr/local/bin/#$(BINDIR)/#g' -e 's#/usr/local/share/#$(PREFIX)/share/#g' systemd/$$unit \
			> $(DESTDIR)$(SYSTEMDUNITDIR)/$$unit; \
		sed -e 's#/usr/local/bin/#$(BINDIR)/#g' -e 's#/usr/local/share/#$(PREFIX)/share/#g' systemd/user/$$unit \
			> $(DESTDIR)$(SYSTEMDUSERUNITDIR)/$$unit; \
		chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$unit $(DESTDIR)$(SYSTEMDUSERUNITDIR)/$$unit; \
	done
	sed -e 's#/usr/local/bin/#$(BINDIR)/#g' -e 's#/usr/local/share/#$(PREFIX)/share/#g' systemd/user/playerd-mpris.service \
		> $(DESTDIR)$(SYSTEMDUSERUNITDIR)/playerd-mpris.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUSERUNITDIR)/playerd-mpris.service
	install -m 0644 completions/playerctl.bash $(DESTDIR)$(BASHCOMPLETIONDIR)/playerctl
	install -m 0644 completions/_playerctl $(DESTDIR)$(ZSHCOMPLETIONDIR)/_playerctl
	install -m 0644 completions/playerctl.fish $(DESTDIR)$(FISHCOMPLETIONDIR)/playerctl.fish
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/playerd $(DESTDIR)$(BINDIR)/playerctl $(DESTDIR)$(BINDIR)/playerd-mpris
	rm -f $(DESTDIR)$(SYSTEMDUSERUNITDIR)/playerd-mpris.service
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/playerd.service $(DESTDIR)$(SYSTEMDUNITDIR)/playerd.socket
	rm -f $(DESTDIR)$(SYSTEMDUSERUNITDIR)/playerd.service $(DESTDIR)$(SYSTEMDUSERUNITDIR)/playerd.socket
	rm -f $(DESTDIR)$(BASHCOMPLETIONDIR)/playerctl $(DESTDIR)$(ZSHCOMPLETIONDIR)/_playerctl
	rm -f $(DESTDIR)$(FISHCOMPLETIONDIR)/playerctl.fish
	rm -rf $(DESTDIR)$(DOCDIR)

bench:
	scripts/bench.sh

# The library against mpd at 20,000 and 200,000 songs (section G; the trees are made once, in .bench/).
bench-library:
	scripts/bench-library.sh

# The same and 1,000,000 songs: the tree takes about 5 GB of disk and some minutes to make (once), and
# the run an hour or more (each daemon scans a million songs, ~4 GB is read into the page cache).
bench-library-million:
	BENCH_LIBRARY_HUGE=1000000 scripts/bench-library.sh

bench-formats:
	scripts/bench-formats.sh

bench-web:
	scripts/bench-web.sh

bench-radio:
	scripts/bench-radio.sh

bench-micro:
	scripts/bench-micro.sh

bench-audio:
	scripts/bench-audio.sh

bench-engine:
	scripts/bench-engine.sh

fixtures:
	Fixtures/make-fixtures.sh

format:
	swift format format --in-place --recursive Package.swift Sources Tests

clean:
	rm -rf .build .bench
