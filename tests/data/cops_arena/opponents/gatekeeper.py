#!/usr/bin/env python3
"""Police (held apart): gate keepers. For each gate the nearest free policeman stands at its
mouth (the open square beside the gate's square nearest the board's centre), following it as it
slides; the others chase the thief along shortest paths."""
from arena_common import run


def plan(role, board, rng, memory):
    assert role == "police", "gatekeeper.py plays the police"
    centre = ((board.n - 1) / 2, (board.n - 1) / 2)
    goals = [None] * len(board.police)
    from_each = [board.distances([p], board.police_can_enter) for p in board.police]
    for squares in board.gate_squares:
        if sum(g is None for g in goals) <= 1:
            break  # somebody always chases
        inner = min(squares, key=lambda s: (s[0] - centre[0]) ** 2 + (s[1] - centre[1]) ** 2)
        mouths = [nb for _, nb in board.neighbours(inner) if board.police_can_enter(nb)]
        if not mouths:
            continue
        mouth = min(mouths, key=lambda s: (s[0] - centre[0]) ** 2 + (s[1] - centre[1]) ** 2)
        free = [i for i, g in enumerate(goals) if g is None and mouth in from_each[i]]
        if free:
            goals[min(free, key=lambda i: from_each[i][mouth])] = mouth
    plans = []
    for at, goal in zip(board.police, goals):
        plans.append(board.path_moves(at, {goal or board.thief}, board.police_can_enter, board.k))
    return plans


if __name__ == "__main__":
    run(plan)
