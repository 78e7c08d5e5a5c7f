#!/usr/bin/env python3
"""Thief (held apart): random-ish. A gate square next to it is taken at once; otherwise a third
of its steps are random and the rest move away from the nearest policeman by straight-line
distance (no path finding)."""
from arena_common import run


def plan(role, board, rng, memory):
    assert role == "thief", "jitter.py plays the thief"
    at, moves = board.thief, []
    for _ in range(board.k):
        options = [(m, sq) for m, sq in board.neighbours(at) if board.thief_can_enter(sq)]
        gates = [m for m, sq in options if sq in board.gates]
        if gates:
            move = gates[0]
        elif not options or rng.random() < 0.35:
            move = rng.choice(["U", "D", "L", "R", "S"])
        else:
            def room(sq):
                return min(abs(sq[0] - p[0]) + abs(sq[1] - p[1]) for p in board.police)
            best = max(room(sq) for _, sq in options)
            move = rng.choice([m for m, sq in options if room(sq) == best])
        moves.append(move)
        at = board.step(at, move)
    return [moves]


if __name__ == "__main__":
    run(plan)
