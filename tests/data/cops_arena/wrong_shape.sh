#!/bin/sh
# A player that answers well-formed JSON with the wrong number of moves (one move, k expected).
while read -r line; do
  # Requests begin {"type":"plan","t":T,...
  t=$(printf "%s" "$line" | sed -n 's/^{"type":"plan","t":\([0-9]*\),.*/\1/p')
  [ -n "$t" ] && echo "{\"t\":$t,\"moves\":[[\"U\"]]}"
done
