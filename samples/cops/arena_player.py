#!/usr/bin/env python3
"""A tiny player for `boardwatch cops arena` (the moving-walls arena), in either role.

    boardwatch cops arena --thief "ext:python3 samples/cops/arena_player.py" --police astar

It speaks the arena's protocol: one JSON object per line on stdin and stdout.
  in:  {"type": "start", "role": "thief" | "police", "params": {...}, "seed": S}
  in:  {"type": "plan", "t": T, "states": [state, ...]}   (the last k states, oldest first)
  out: {"t": T, "moves": [[m, ...], ...]}   one list of k moves per piece, m in U D L R S
The thief walks a shortest path to the nearest gate square; each policeman walks a shortest
path to the thief (policemen may not enter gate squares). Walls are taken where they are now.
"""
import json
import sys
from collections import deque

STEPS = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}


def path_moves(n, start, goals, blocked, k):
    """k moves along a shortest path from start to the nearest goal (staying at the end)."""
    start = tuple(start)
    came = {start: None}
    queue = deque([start])
    end = None
    while queue:
        at = queue.popleft()
        if at in goals:
            end = at
            break
        for move, (dr, dc) in STEPS.items():
            nxt = (at[0] + dr, at[1] + dc)
            if 0 <= nxt[0] < n and 0 <= nxt[1] < n and nxt not in blocked and nxt not in came:
                came[nxt] = (at, move)
                queue.append(nxt)
    moves = []
    while end is not None and came[end] is not None:
        end, move = came[end]
        moves.append(move)
    moves.reverse()
    return (moves + ["S"] * k)[:k]


def main():
    role, params = None, None
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "start":
            role, params = message["role"], message["params"]
            continue
        state = message["states"][-1]
        n, k = params["n"], params["k"]
        walls = {tuple(s) for w in state["walls"] for s in w["squares"]}
        gates = {tuple(s) for g in state["gates"] for s in g["squares"]}
        if role == "thief":
            moves = [path_moves(n, state["thief"], gates, walls, k)]
        else:
            moves = [path_moves(n, p, {tuple(state["thief"])}, walls | gates, k) for p in state["police"]]
        print(json.dumps({"t": message["t"], "moves": moves}), flush=True)


if __name__ == "__main__":
    main()
