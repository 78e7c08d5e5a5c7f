#!/usr/bin/env python3
"""Thief (tuning set): a greedy distance-keeper. Each step it runs for a gate square it reaches
before any policeman can stand next to it; otherwise it steps to the neighbouring square farthest
(in steps) from the nearest policeman. The police are taken to stand where they are."""
from arena_common import run


def plan(role, board, rng, memory):
    assert role == "thief", "keeper.py plays the thief"
    from_police = board.distances(board.police, board.police_can_enter)
    far = 10**6
    # A policeman stops a thief next to a gate, not on it.
    guard = {g: min([from_police.get(nb, far) for _, nb in board.neighbours(g)]) + 1 for g in board.gates}
    at, moves = board.thief, []
    for _ in range(board.k):
        from_thief = board.distances([at], board.thief_can_enter)
        safe = [g for g in board.gates if g in from_thief and from_thief[g] < guard[g]]
        if safe:
            goal = min(safe, key=lambda g: from_thief[g])
            step = board.path_moves(at, {goal}, board.thief_can_enter, 1)
            move = step[0] if step else "S"
        else:
            options = [("S", at)] + [(m, sq) for m, sq in board.neighbours(at) if board.thief_can_enter(sq)]
            move, _ = max(options, key=lambda o: from_police.get(o[1], far))
        moves.append(move)
        at = board.step(at, move)
    return [moves]


if __name__ == "__main__":
    run(plan)
