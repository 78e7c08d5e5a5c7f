#!/usr/bin/env python3
"""Thief (held apart): a wall-hugger. It hides on squares with cover (the board's edge or a wall
beside them) far from the police, walking there around the policemen's reach, and runs for a
gate only when it is clearly ahead: two steps ahead of every policeman."""
from arena_common import run


def cover(board, sq):
    return sum(1 for _, nb in board.neighbours(sq) if not board.thief_can_enter(nb))


def plan(role, board, rng, memory):
    assert role == "thief", "hugger.py plays the thief"
    from_police = board.distances(board.police, board.police_can_enter)
    far = 99
    near_police = {sq for sq, d in from_police.items() if d <= 1}
    walkable = lambda sq: board.thief_can_enter(sq) and sq not in near_police
    from_thief = board.distances([board.thief], walkable)
    guard = {g: min([from_police.get(nb, far) for _, nb in board.neighbours(g)]) + 1 for g in board.gates}
    clear = [g for g in board.gates if g in from_thief and from_thief[g] + 2 <= guard[g]]
    if clear:
        goal = min(clear, key=lambda g: from_thief[g])
    else:
        goal = max(
            (sq for sq in from_thief if sq not in board.gates),
            key=lambda sq: 2 * min(from_police.get(sq, far), 12) + 3 * cover(board, sq) - from_thief[sq],
        )
    moves = board.path_moves(board.thief, {goal}, walkable, board.k)
    return [moves]


if __name__ == "__main__":
    run(plan)
