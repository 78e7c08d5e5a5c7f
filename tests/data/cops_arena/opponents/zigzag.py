#!/usr/bin/env python3
"""Thief (held apart): a straight runner. It picks the gate square it leads the police to by the
most (straight-line distances) and walks towards it without path finding, alternating rows and
columns, side-stepping at random when a wall is in the way."""
from arena_common import run


def manhattan(a, b):
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def plan(role, board, rng, memory):
    assert role == "thief", "zigzag.py plays the thief"
    at, moves = board.thief, []
    if not board.gates:
        return [["S"] * board.k]
    goal = max(board.gates, key=lambda g: min(manhattan(p, g) for p in board.police) - manhattan(board.thief, g))
    for i in range(board.k):
        vertical = "D" if goal[0] > at[0] else "U" if goal[0] < at[0] else None
        horizontal = "R" if goal[1] > at[1] else "L" if goal[1] < at[1] else None
        wanted = [m for m in ((vertical, horizontal) if i % 2 == 0 else (horizontal, vertical)) if m]
        move = next((m for m in wanted if board.step(at, m) != at), None)
        if move is None:
            move = rng.choice(["U", "D", "L", "R"]) if wanted else "S"
        moves.append(move)
        at = board.step(at, move)
    return [moves]


if __name__ == "__main__":
    run(plan)
