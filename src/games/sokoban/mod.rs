//! Sokoban: levels, rules, editor and solver.
