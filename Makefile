# boardwatch: the two commands a new machine needs are `make demo` and `make test`.
# Both install what is missing first (Debian packages with apt-get, crates with cargo).

SHARED ?= ../shared
CARGO ?= cargo
APT_PACKAGES = pkg-config clang libclang-dev libopencv-dev ffmpeg chromium mosquitto openssl
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BIN = target/release/boardwatch

.PHONY: all deps build demo test corpus bench clean

all: build

# Install the Debian packages that are not there yet (nothing to do on a prepared machine).
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust from https://rustup.rs"; exit 1; }

build: deps
	$(CARGO) build --release --locked

# The main job on the bundled sample: replay a recorded game (video) into a PDN record and an
# event log, printing the moves as they are found.
demo: build
	mkdir -p out
	$(BIN) replay samples/recordings/acf7_four_colour.mp4 --variant english --palette four-colour \
	  --event "boardwatch demo" --pdn out/demo.pdn --log out/demo.jsonl --overwrite
	@echo "record: out/demo.pdn  events: out/demo.jsonl"

test: deps
	$(CARGO) test --locked

# Corpus-wide checks over ../shared/data (not in a user's clone): every archive replayed,
# the PDN 3.0 parser test suite, the deep perft tables, and the vision checks over the 25
# real photos and the ray-traced recording.
corpus: build
	@[ -d $(SHARED)/data ] || { echo "no $(SHARED)/data: corpus checks skipped"; exit 0; }
	BOARDWATCH_SHARED=$(SHARED) $(CARGO) test --locked -- --ignored --test-threads=1

bench: build
	$(CARGO) bench --locked --bench perft
	$(CARGO) bench --locked --bench vision
	$(CARGO) bench --locked --bench tracker

clean:
	$(CARGO) clean
