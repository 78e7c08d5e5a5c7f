#!/usr/bin/env python3
"""Police (held apart, written 2026-11-30 before it was ever played): flankers. The policeman
nearest the thief chases him along shortest paths; each other one heads for the square of the
thief's shortest way to its nearest gate that he reaches first, farthest along that way (cutting
him off), or else for the last square of that way the police may enter."""
from arena_common import run


def plan(role, board, rng, memory):
    assert role == "police", "flanker.py plays the police"
    from_each = [board.distances([p], board.police_can_enter) for p in board.police]
    # The thief's way out: the squares of his shortest path to the nearest gate, way[i] i steps
    # from him.
    way = [board.thief]
    for move in board.path_moves(board.thief, board.gates, board.thief_can_enter, board.n * board.n):
        way.append(board.step(way[-1], move))
    chaser = min(range(len(board.police)), key=lambda i: from_each[i].get(board.thief, 999))
    plans = []
    for i, at in enumerate(board.police):
        goal = board.thief
        if i != chaser:
            enterable = [(j, sq) for j, sq in enumerate(way) if sq in from_each[i]]
            first = [(j, sq) for j, sq in enterable if from_each[i][sq] <= j]
            if first:
                goal = max(first)[1]
            elif enterable:
                goal = enterable[-1][1]
        plans.append(board.path_moves(at, {goal}, board.police_can_enter, board.k))
    return plans


if __name__ == "__main__":
    run(plan)
