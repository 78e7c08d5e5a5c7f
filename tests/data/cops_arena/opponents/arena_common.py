"""What the opponent programs here share: the arena's JSON-lines protocol and breadth-first
distances. Each program plans its k moves from the newest state it is shown.

  in:  {"type": "start", "role": "thief" | "police", "params": {...}, "seed": S}
  in:  {"type": "plan", "t": T, "states": [state, ...]}   (the last k states, oldest first)
  out: {"t": T, "moves": [[m, ...], ...]}   one list of k moves per piece, m in U D L R S
"""
import json
import random
import sys
from collections import deque

STEPS = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
MOVES = {**STEPS, "S": (0, 0)}


class Board:
    """The newest state, as sets of squares."""

    def __init__(self, params, state):
        self.n = params["n"]
        self.k = params["k"]
        self.t = state["t"]
        self.thief = tuple(state["thief"])
        self.police = [tuple(p) for p in state["police"]]
        self.walls = {tuple(s) for w in state["walls"] for s in w["squares"]}
        self.gate_squares = [[tuple(s) for s in g["squares"]] for g in state["gates"]]
        self.gates = {s for g in self.gate_squares for s in g}

    def on_board(self, sq):
        return 0 <= sq[0] < self.n and 0 <= sq[1] < self.n

    def thief_can_enter(self, sq):
        return self.on_board(sq) and sq not in self.walls

    def police_can_enter(self, sq):
        return self.thief_can_enter(sq) and sq not in self.gates

    def step(self, sq, move, police=False):
        """Where a move leads (a blocked move is staying, as in the arena)."""
        dr, dc = MOVES[move]
        to = (sq[0] + dr, sq[1] + dc)
        allowed = self.police_can_enter(to) if police else self.thief_can_enter(to)
        return to if allowed or to == sq else sq

    def neighbours(self, sq):
        for move, (dr, dc) in STEPS.items():
            yield move, (sq[0] + dr, sq[1] + dc)

    def distances(self, sources, can_enter):
        dist = {s: 0 for s in sources}
        queue = deque(sources)
        while queue:
            at = queue.popleft()
            for _, nxt in self.neighbours(at):
                if nxt not in dist and can_enter(nxt):
                    dist[nxt] = dist[at] + 1
                    queue.append(nxt)
        return dist

    def path_moves(self, start, goals, can_enter, limit):
        """Up to `limit` moves along a shortest path from start to the nearest goal."""
        came = {start: None}
        queue = deque([start])
        end = None
        while queue:
            at = queue.popleft()
            if at in goals:
                end = at
                break
            for move, nxt in self.neighbours(at):
                if nxt not in came and can_enter(nxt):
                    came[nxt] = (at, move)
                    queue.append(nxt)
        moves = []
        while end is not None and came[end] is not None:
            end, move = came[end]
            moves.append(move)
        moves.reverse()
        return moves[:limit]


def pad(moves, k):
    return (list(moves) + ["S"] * k)[:k]


def run(plan):
    """Serves the protocol: `plan(role, board, rng, memory)` returns one move list per piece."""
    role, params, rng, memory = None, None, random.Random(0), {}
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if message["type"] == "start":
            role, params = message["role"], message["params"]
            rng = random.Random(message.get("seed", 0))
            continue
        board = Board(params, message["states"][-1])
        moves = [pad(m, board.k) for m in plan(role, board, rng, memory)]
        print(json.dumps({"t": message["t"], "moves": moves}), flush=True)
