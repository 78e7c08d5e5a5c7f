#!/usr/bin/env python3
"""Police (held apart): patrols. Policeman i sweeps his own band of rows back and forth along its
middle row; whoever is within 6 steps of the thief leaves his beat and chases him."""
from arena_common import run


def plan(role, board, rng, memory):
    assert role == "police", "patrol.py plays the police"
    count = len(board.police)
    plans = []
    for i, at in enumerate(board.police):
        from_me = board.distances([at], board.police_can_enter)
        if from_me.get(board.thief, 99) <= 6:
            plans.append(board.path_moves(at, {board.thief}, board.police_can_enter, board.k))
            continue
        row = min(board.n - 2, max(1, (2 * i + 1) * board.n // (2 * count)))
        # The beat: columns 1..n-2 there and back, a full round every 2(n-3) ticks.
        span = board.n - 3
        phase = (board.t + 7 * i) % (2 * span) if span > 0 else 0
        column = 1 + (phase if phase <= span else 2 * span - phase)
        goal = (row, column)
        if not board.police_can_enter(goal):
            goal = min(from_me, key=lambda s: abs(s[0] - row) + abs(s[1] - column))
        plans.append(board.path_moves(at, {goal}, board.police_can_enter, board.k))
    return plans


if __name__ == "__main__":
    run(plan)
