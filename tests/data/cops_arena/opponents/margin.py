#!/usr/bin/env python3
"""Thief (held apart, written 2026-11-30 before it was ever played): the safest gate. It heads
for the gate square whose margin (the police's shortest distance to it less its own) is largest,
along its shortest path; with a policeman two steps away or nearer it first steps to the
neighbouring square farthest from the police by path."""
from arena_common import run


def plan(role, board, rng, memory):
    assert role == "thief", "margin.py plays the thief"
    police_dist = board.distances(board.police, board.thief_can_enter)
    if police_dist.get(board.thief, 99) <= 2:
        options = [(m, sq) for m, sq in board.neighbours(board.thief) if board.thief_can_enter(sq)]
        if options:
            best = max(police_dist.get(sq, 99) for _, sq in options)
            move = rng.choice([m for m, sq in options if police_dist.get(sq, 99) == best])
            rest = plan_to_gate(board, board.step(board.thief, move), police_dist)
            return [[move] + rest]
    return [plan_to_gate(board, board.thief, police_dist)]


def plan_to_gate(board, start, police_dist):
    mine = board.distances([start], board.thief_can_enter)
    gates = [g for g in board.gates if g in mine]
    if not gates:
        return []
    goal = max(gates, key=lambda g: (police_dist.get(g, 99) - mine[g], -mine[g]))
    return board.path_moves(start, {goal}, board.thief_can_enter, board.k)


if __name__ == "__main__":
    run(plan)
