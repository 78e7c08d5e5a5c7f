#!/usr/bin/env python3
"""Perft with py-draughts (PyPI `py-draughts`) on the English/American board, for BENCHMARKS.md.

Counts leaves the same way as `boardwatch perft` (bulk counting at the last ply: the number of
legal moves of each position one ply above the leaves), so the two speeds compare like for like.
Usage: python3 benches/pydraughts_perft.py DEPTH
"""
import sys
import time

import draughts


def perft(board, depth):
    moves = list(board.legal_moves)
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        board.push(move)
        total += perft(board, depth - 1)
        board.pop()
    return total


def main():
    depth = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    board = draughts.AmericanBoard()
    for d in range(1, depth + 1):
        start = time.perf_counter()
        nodes = perft(board, d)
        seconds = time.perf_counter() - start
        print(f"py-draughts {draughts.__version__} american d{d} {nodes} {seconds:.3f}s {nodes / max(seconds, 1e-9) / 1e6:.3f} M/s", flush=True)


if __name__ == "__main__":
    main()
