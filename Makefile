# boardwatch: the two commands a new machine needs are `make demo` and `make test`.
# Both install what is missing first (Debian packages with apt-get, crates with cargo).

SHARED ?= ../shared
CARGO ?= cargo
APT_PACKAGES = pkg-config clang libclang-dev libopencv-dev ffmpeg chromium mosquitto openssl rtsp-server-perl
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BIN = target/release/boardwatch

.PHONY: all deps build demo test corpus bench model model-stone povray-eval clean

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

# The learnt square model: `make model` its network (models/square-cnn.onnx, .json);
# `make model-stone` a candidate trained on boards that also include veined stone and tall men
# (models/square-cnn-stone.*, not built in: BENCHMARKS.md says why). Each:
# render the training boards, cut the labelled photos of game 1, train with Debian's PyTorch;
# about 45 minutes on 2 cores. The held-apart sets are in models/square-model/README.md.
MODEL_WORK ?= target/square-model
PHOTOS = $(SHARED)/data/photos/b3nny01-checkersvision/v2
GAME1 = Image_001,Image_002,Image_003,Image_004,Image_005,Image_006,Image_007,Image_008,Image_009,Image_010,Image_011
GAME2 = Image_013,Image_014,Image_015,Image_016,Image_018,Image_019,Image_020,Image_021,Image_022,Image_023,Image_024,Image_025,Image_026,Image_027
DATASET = $(CARGO) run --release --locked --example square_dataset --
MODEL_RENDER ?=
MODEL_NAME ?= square-cnn

model: deps
	@dpkg-query -W -f='$${Status}' python3-torch 2>/dev/null | grep -q "install ok installed" || \
	  { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q python3-torch python3-numpy; }
	$(DATASET) render --out $(MODEL_WORK)/train --first 1000000 --scenes 3000 --frames 3 $(MODEL_RENDER)
	$(DATASET) render --out $(MODEL_WORK)/validation --first 620000 --scenes 100 --frames 3 $(MODEL_RENDER)
	$(DATASET) render --out $(MODEL_WORK)/heldapart-render --first 610000 --scenes 200 --frames 3 $(MODEL_RENDER)
	$(DATASET) photos --out $(MODEL_WORK)/photos-game1 --labels tests/data/checkersvision_labels.json --images $(PHOTOS) --photos $(GAME1)
	$(DATASET) photos --out $(MODEL_WORK)/heldapart-photos-game2 --labels tests/data/checkersvision_labels.json --images $(PHOTOS) --photos $(GAME2)
	/usr/bin/python3 models/square-model/train.py --train $(MODEL_WORK)/train --photos $(MODEL_WORK)/photos-game1 \
	  --eval $(MODEL_WORK)/validation --report $(MODEL_WORK)/heldapart-render $(MODEL_WORK)/heldapart-photos-game2 \
	  --out models --name $(MODEL_NAME)

model-stone:
	$(MAKE) model MODEL_RENDER=--stone MODEL_WORK=target/square-model-stone MODEL_NAME=square-cnn-stone

# Sessions ray-traced by POV-Ray (Debian's povray, installed when missing) on boards and sets of
# kinds the project's renderer never drew, read by the colours and by the learnt square model.
# Scenes 1000-1039 are held apart (BENCHMARKS.md, "Ray-traced boards of new kinds"); about 20
# minutes on one core.
povray-eval: deps
	@command -v povray >/dev/null || { $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q povray; }
	$(CARGO) run --release --locked --example povray_sessions -- --first 1000 --scenes 40 --frames 6

bench: build
	$(CARGO) bench --locked --bench perft
	$(CARGO) bench --locked --bench vision
	$(CARGO) bench --locked --bench tracker

clean:
	$(CARGO) clean
