#!/usr/bin/env python3
"""Train boardwatch's learnt square model (`make model` runs this; see README.md beside it).

Reads the boards written by `cargo run --release --example square_dataset` (areas.npy,
labels.npy, boards.json per folder), trains a small convolutional network on the playing
squares, and writes `models/square-cnn.onnx` (the network up to the embedding) and
`models/square-cnn.json` (the model card: patch geometry, the linear head, how it was trained).
The input of each square is cut and normalised exactly as `src/vision/square_model.rs` does:
the board area at 20 px a square with a 6 px margin, minus the playing area's per-channel
mean, divided by its spread; each square's patch is 32x32 pixels.

Deterministic: fixed seeds, deterministic algorithms, a fixed number of threads.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

PX, MARGIN = 20, 6
PATCH = PX + 2 * MARGIN
AREA = 8 * PX + 2 * MARGIN
CLASSES = ["empty", "dark man", "light man", "dark king", "light king", "other"]


def load(folder):
    areas = np.load(os.path.join(folder, "areas.npy"))
    labels = np.load(os.path.join(folder, "labels.npy"))
    with open(os.path.join(folder, "boards.json")) as f:
        boards = json.load(f)
    if areas.shape[1:] != (AREA, AREA, 3) or labels.shape[1:] != (8, 8) or len(boards) != len(areas):
        sys.exit(f"{folder}: boards of the wrong shape {areas.shape} {labels.shape}")
    # A stacked king (the wooden set's, and the renderer's sets of any colours) is two men of
    # the same wood: from above it looks like a man, and boardwatch reads it as one (the
    # tracker knows it is a king). Only kings of their own colour are taught as kings.
    stacked = np.array([b.get("family") not in ("four-colour",) for b in boards])
    labels = labels.copy()
    for king, man in ((3, 1), (4, 2)):
        labels[stacked[:, None, None] & (labels == king)] = man
    return areas, labels, boards


def normalise(area):
    """area: (B, 3, AREA, AREA) float 0..255 -> normalised as square_model::area_statistics."""
    inner = area[:, :, MARGIN:AREA - MARGIN, MARGIN:AREA - MARGIN]
    mean = inner.mean(dim=(2, 3), keepdim=True)
    overall = inner.mean(dim=(1, 2, 3), keepdim=True)
    var = (inner * inner).mean(dim=(1, 2, 3), keepdim=True) - overall * overall
    spread = var.clamp(min=0).sqrt().clamp(min=4.0)
    return (area - mean) / spread


def cut(area):
    """(B, 3, AREA, AREA) -> (B, 8, 8, 3, PATCH, PATCH)."""
    p = area.unfold(2, PATCH, PX).unfold(3, PATCH, PX)  # B, 3, 8, 8, PATCH, PATCH
    return p.permute(0, 2, 3, 1, 4, 5)


def augment(area, gen, hot_spot=False):
    """Board-level photometric changes the renderer and the photos may not cover (area 0..255)."""
    b = area.shape[0]
    gain = torch.empty(b, 3, 1, 1).uniform_(0.75, 1.25, generator=gen)
    gamma = torch.empty(b, 1, 1, 1).uniform_(0.7, 1.45, generator=gen)
    x = 255.0 * (area / 255.0).clamp(min=1e-4) ** gamma * gain
    # Uneven light across the board: a linear ramp of up to 25%.
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, AREA), torch.linspace(-1, 1, AREA), indexing="ij")
    angle = torch.empty(b, 1, 1).uniform_(0, 2 * math.pi, generator=gen)
    strength = torch.empty(b, 1, 1).uniform_(0, 0.25, generator=gen)
    ramp = 1 + strength * (torch.cos(angle) * xx + torch.sin(angle) * yy)
    x = x * ramp.unsqueeze(1)
    if hot_spot:
        # A lamp's hot spot: a round patch of the board up to 80% brighter, light men in it
        # washed out (the light men under a lamp that the first model read as hands).
        spot = (torch.rand(b, 1, 1, generator=gen) < 0.3).float()
        cx, cy = (torch.empty(b, 1, 1).uniform_(-1, 1, generator=gen) for _ in range(2))
        radius = torch.empty(b, 1, 1).uniform_(0.15, 0.5, generator=gen)
        gain_spot = torch.empty(b, 1, 1).uniform_(0.2, 0.8, generator=gen)
        x = x * (1 + spot * gain_spot * torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * radius ** 2))).unsqueeze(1)
    noise = torch.empty(b, 1, 1, 1).uniform_(0, 8, generator=gen)
    x = x + noise * torch.randn(x.shape, generator=gen)
    blur = torch.rand(b, generator=gen) < 0.3
    if blur.any():
        k = torch.tensor([1.0, 2.0, 1.0]) / 4
        kernel = (k[:, None] * k[None, :]).expand(3, 1, 3, 3)
        x[blur] = F.conv2d(F.pad(x[blur], (1, 1, 1, 1), mode="replicate"), kernel, groups=3)
    return x.clamp(0, 255)


def turn(patches, gen):
    """Each patch turned by a random multiple of 90 degrees and maybe mirrored."""
    k = torch.randint(0, 4, (patches.shape[0],), generator=gen)
    flip = torch.rand(patches.shape[0], generator=gen) < 0.5
    out = patches.clone()
    for q in range(1, 4):
        sel = k == q
        if sel.any():
            out[sel] = torch.rot90(patches[sel], q, dims=(2, 3))
    out[flip] = torch.flip(out[flip], dims=(3,))
    return out


class SquareNet(nn.Module):
    """Four 3x3 convolutions to a 64-value embedding, then the linear head.

    `pooled` (the model shipped, 2026-11-28): each convolution at full resolution, then a 2x2
    max-pool. `strided` (tried 2026-11-29, with --hot-spot): the first three convolutions step
    by two instead of pooling; 2.5 times faster through OpenCV's dnn on one core (1.7 against
    4.3 ms for 32 squares), but it read more dark wooden men on dark squares as empty
    (BENCHMARKS.md, "Learnt square model: second training"), so it is not the default.
    """

    def __init__(self, arch="pooled", embedding=64):
        super().__init__()
        def block(a, b, pool=False, stride=1):
            layers = [nn.Conv2d(a, b, 3, padding=1, stride=stride, bias=False), nn.BatchNorm2d(b), nn.ReLU()]
            return layers + ([nn.MaxPool2d(2)] if pool else [])
        if arch == "pooled":
            layers = [*block(3, 12, pool=True), *block(12, 24, pool=True), *block(24, 48, pool=True), *block(48, embedding)]
        elif arch == "strided":
            layers = [*block(3, 16, stride=2), *block(16, 32, stride=2), *block(32, 48, stride=2), *block(48, embedding)]
        else:
            sys.exit(f"unknown --arch {arch!r} (pooled or strided)")
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(embedding, len(CLASSES))

    def forward(self, x):
        return self.head(self.features(x))


def batches(areas, labels, order, size):
    for i in range(0, len(order), size):
        idx = order[i:i + size]
        yield torch.from_numpy(areas[idx]).permute(0, 3, 1, 2).float(), torch.from_numpy(labels[idx]).long()


def squares(area, labels):
    """Normalised patches and labels of the labelled squares of a batch of boards."""
    patches = cut(normalise(area)).reshape(-1, 3, PATCH, PATCH)
    y = labels.reshape(-1)
    keep = y >= 0
    return patches[keep], y[keep]


def evaluate(net, areas, labels, boards=None):
    net.eval()
    wrong, total, confusion = 0, 0, np.zeros((6, 6), dtype=int)
    with torch.no_grad():
        for area, lab in batches(areas, labels, np.arange(len(areas)), 64):
            x, y = squares(area, lab)
            pred = net(x).argmax(1)
            for t, p in zip(y.tolist(), pred.tolist()):
                confusion[t, p] += 1
    total = confusion.sum()
    wrong = total - np.trace(confusion)
    return int(wrong), int(total), confusion


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", nargs="+", required=True, help="folders of rendered boards")
    ap.add_argument("--photos", nargs="*", default=[], help="folders of labelled photo boards")
    ap.add_argument("--photo-copies", type=int, default=40, help="times each photo board is shown per epoch")
    ap.add_argument("--eval", nargs="*", default=[], help="validation folders, reported after every epoch (never trained on)")
    ap.add_argument("--report", nargs="*", default=[], help="held-apart folders, reported once at the end (never trained on)")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--batch-boards", type=int, default=24)
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--arch", default="pooled", help="network shape: pooled (default, the model shipped) or strided (faster, tried)")
    ap.add_argument("--hot-spot", action="store_true", help="add a lamp's hot spot to the photometric changes")
    ap.add_argument("--out", default="models")
    ap.add_argument("--name", default="square-cnn", help="file name of the network and its card, without .onnx and .json")
    ap.add_argument("--untrained", action="store_true", help="write the untrained network (to bootstrap a build)")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)

    net = SquareNet(args.arch)
    log = {"seed": args.seed, "arch": args.arch, "hot_spot": args.hot_spot, "epochs": args.epochs, "train": [], "photos": [], "eval": {}}
    if not args.untrained:
        parts = [load(f) for f in args.train]
        areas = np.concatenate([p[0] for p in parts])
        labels = np.concatenate([p[1] for p in parts])
        log["train"] = [{"folder": os.path.basename(os.path.normpath(f)), "boards": len(p[0])} for f, p in zip(args.train, parts)]
        n_render = len(areas)
        if args.photos:
            photo_parts = [load(f) for f in args.photos]
            pa = np.concatenate([p[0] for p in photo_parts])
            pl = np.concatenate([p[1] for p in photo_parts])
            log["photos"] = [b["photo"] for p in photo_parts for b in p[2]]
            areas = np.concatenate([areas] + [pa] * args.photo_copies)
            labels = np.concatenate([labels] + [pl] * args.photo_copies)
        counts = np.bincount(labels[labels >= 0].ravel(), minlength=6)
        print(f"train: {n_render} rendered boards, {len(areas) - n_render} photo boards (copies); squares per class {counts.tolist()}", flush=True)
        weights = torch.tensor((counts.sum() / np.maximum(counts, 1) / 6) ** 0.5, dtype=torch.float32)
        opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
        steps = args.epochs * math.ceil(len(areas) / args.batch_boards)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps, pct_start=0.15)
        started = time.time()
        for epoch in range(args.epochs):
            net.train()
            order = rng.permutation(len(areas))
            seen, loss_sum, right = 0, 0.0, 0
            for step, (area, lab) in enumerate(batches(areas, labels, order, args.batch_boards)):
                if step % 100 == 0 and step:
                    print(f"  epoch {epoch + 1}, batch {step}: loss {loss_sum / seen:.4f}, {time.time() - started:.0f} s", flush=True)
                x, y = squares(augment(area, gen, args.hot_spot), lab)
                x = turn(x, gen)
                out = net(x)
                loss = F.cross_entropy(out, y, weight=weights)
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                seen += len(y)
                loss_sum += loss.item() * len(y)
                right += (out.argmax(1) == y).sum().item()
            line = f"epoch {epoch + 1}/{args.epochs}: loss {loss_sum / seen:.4f}, train squares wrong {seen - right} of {seen}, {time.time() - started:.0f} s"
            for f in args.eval:
                ea, el, _ = load(f)
                wrong, total, _ = evaluate(net, ea, el)
                line += f"; {os.path.basename(os.path.normpath(f))} {wrong}/{total}"
            print(line, flush=True)
        log["seconds"] = round(time.time() - started)
        for f in args.eval + args.report:
            ea, el, _ = load(f)
            wrong, total, confusion = evaluate(net, ea, el)
            log["eval"][os.path.basename(os.path.normpath(f))] = {"wrong": wrong, "squares": total, "confusion": confusion.tolist()}
            print(f"{f}: {wrong} of {total} squares wrong\n{confusion}", flush=True)

    net.eval()
    os.makedirs(args.out, exist_ok=True)
    onnx_path = os.path.join(args.out, args.name + ".onnx")
    dummy = torch.zeros(32, 3, PATCH, PATCH)
    torch.onnx.export(net.features, dummy, onnx_path, input_names=["patches"], output_names=["embedding"],
                      dynamic_axes={"patches": {0: "squares"}, "embedding": {0: "squares"}}, opset_version=11,
                      do_constant_folding=True)
    card = {
        "format": "boardwatch-square-model/1",
        "px_per_square": PX,
        "margin_px": MARGIN,
        "embedding": net.head.in_features,
        "classes": CLASSES,
        "head": {"weights": net.head.weight.detach().tolist(), "bias": net.head.bias.detach().tolist()},
        "training": log,
    }
    with open(os.path.join(args.out, args.name + ".json"), "w") as f:
        json.dump(card, f, indent=1)
        f.write("\n")
    print(f"wrote {onnx_path} ({os.path.getsize(onnx_path)} bytes) and {args.name}.json", flush=True)


if __name__ == "__main__":
    main()
