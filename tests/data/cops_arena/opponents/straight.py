#!/usr/bin/env python3
"""Police (held apart): straight-line chasers. Each policeman steps along the axis on which the
thief is farther away, else along the other; blocked both ways, he side-steps at random. No path
finding: walls hold them up."""
from arena_common import run


def plan(role, board, rng, memory):
    assert role == "police", "straight.py plays the police"
    goal = board.thief
    plans = []
    for at in board.police:
        moves = []
        for _ in range(board.k):
            dr, dc = goal[0] - at[0], goal[1] - at[1]
            vertical = "D" if dr > 0 else "U" if dr < 0 else None
            horizontal = "R" if dc > 0 else "L" if dc < 0 else None
            wanted = [m for m in ((vertical, horizontal) if abs(dr) >= abs(dc) else (horizontal, vertical)) if m]
            move = next((m for m in wanted if board.step(at, m, police=True) != at), None)
            if move is None:
                move = rng.choice(["U", "D", "L", "R"]) if wanted else "S"
            moves.append(move)
            at = board.step(at, move, police=True)
        plans.append(moves)
    return plans


if __name__ == "__main__":
    run(plan)
